"""Checks a builder's stream against the graph model while it is being loaded.

It keeps a few numbers per node (never per edge), so it costs little next to
the insert, and it gathers the per-layer counts the store records.

>>> from graphs.protocol import Node, Edge
>>> checker = StreamChecker(agents=())
>>> checker.node(Node(0, "root", 0, "chance", "", denom=2))
>>> checker.edge(Edge(0, 1, "roll", "", weight=2), edge_id=0)
0
>>> checker.node(Node(1, "end", 1, "terminal", "", payoff=1.0))
>>> checker.finish()[1]["layers"]
2
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from graphs.errors import InvalidGraph
from graphs.protocol import CHANCE, DECISION, MOVE, NODE_KINDS, ROLL, TERMINAL, CyclicLayers, Edge, Node


@dataclass
class LayerStats:
    """Counts of one layer: its nodes, the roll and move edges leaving it, their id range, its cyclic component."""

    layer: int
    nodes: int = 0
    rolls: int = 0
    moves: int = 0
    first_edge: int | None = None
    last_edge: int | None = None
    cycle_start: int | None = None  # the first layer of the cyclic component the layer is in


class StreamChecker:
    """Validates nodes and edges as they stream by; :meth:`finish` checks what needs the whole graph."""

    def __init__(self, agents: Iterable[str], turn_root: str | None = None):
        self.agents = tuple(agents)
        # a game whose turn is stored once: its agents choose in the turn (from the layer of the node
        # ``turn_root`` on), never at the turn states, whose moves the turn's ends take
        self.turn_root = turn_root
        self.turn_layer: int | None = None
        self.layer_of: list[int | None] = []
        self.kind_of: list[str | None] = []
        self.denom_of: list[int | None] = []
        self.weight_out: list[int] = []
        self.moves_out: list[int] = []
        self.deepest_source_into: list[int] = []  # per node: the highest layer an edge into it leaves
        self.layers: dict[int, LayerStats] = {}
        self.edge_layer = -1
        self.choices: Counter[str] = Counter()
        self.cycle_end: dict[int, int] = {}  # first layer of a cyclic component -> its last

    def check(self, rows: Iterable[Node | Edge | CyclicLayers]) -> tuple[list[LayerStats], dict[str, Any]]:
        """Check a whole stream of rows without a database (edges numbered from 0); return :meth:`finish`'s."""
        edge_id = 0
        for row in rows:
            if isinstance(row, Node):
                self.node(row)
            elif isinstance(row, CyclicLayers):
                self.cyclic(row)
            else:
                self.edge(row, edge_id)
                edge_id += 1
        return self.finish()

    def cyclic(self, component: CyclicLayers) -> None:
        """Record a cyclic component; raise InvalidGraph if it overlaps another or comes after its nodes."""
        first, last = component
        if not 0 <= first <= last:
            raise InvalidGraph(f"cyclic layers {first}..{last}: need 0 <= first <= last")
        for layer in range(first, last + 1):
            stats = self.layers.setdefault(layer, LayerStats(layer))
            if stats.cycle_start is not None:
                raise InvalidGraph(f"cyclic layers {first}..{last} overlap those from layer {stats.cycle_start}")
            if stats.nodes:
                raise InvalidGraph(f"cyclic layers {first}..{last} declared after nodes of layer {layer}")
            stats.cycle_start = first
        self.cycle_end[first] = last

    def _grow(self, node_id: int) -> None:
        """Make room for ``node_id`` (doubling, so that growing costs little per node)."""
        if node_id < len(self.layer_of):
            return
        missing = max(node_id + 1, 2 * len(self.layer_of)) - len(self.layer_of)
        if missing > 0:
            self.layer_of.extend([None] * missing)
            self.kind_of.extend([None] * missing)
            self.denom_of.extend([None] * missing)
            self.weight_out.extend([0] * missing)
            self.moves_out.extend([0] * missing)
            self.deepest_source_into.extend([-1] * missing)

    def node(self, node: Node) -> None:
        """Record one node; raise InvalidGraph if it is malformed or its id is taken."""
        if node.id < 0:
            raise InvalidGraph(f"node {node.key!r} has a negative id {node.id}")
        self._grow(node.id)
        if self.layer_of[node.id] is not None:
            raise InvalidGraph(f"node id {node.id} is used twice (second time by {node.key!r})")
        if node.kind not in NODE_KINDS:
            raise InvalidGraph(f"node {node.key!r} has kind {node.kind!r}, not one of {', '.join(NODE_KINDS)}")
        if (node.kind == CHANCE) != (node.denom is not None) or (node.kind == TERMINAL) != (node.payoff is not None):
            raise InvalidGraph(f"node {node.key!r}: chance nodes and only they have a denom, terminals a payoff")
        if node.key == self.turn_root:
            self.turn_layer = node.layer
        self.layer_of[node.id] = node.layer
        self.kind_of[node.id] = node.kind
        self.denom_of[node.id] = node.denom
        stats = self.layers.setdefault(node.layer, LayerStats(node.layer))
        stats.nodes += 1

    def edge(self, edge: Edge, edge_id: int) -> int:
        """Record one edge with the id the loader gives it; return the layer it leaves."""
        return self.edges([edge], edge_id)[0]

    def edges(self, edges: list[Edge], first_id: int) -> list[int]:
        """Record edges with consecutive ids from ``first_id``; return the layers they leave.

        One tight loop per batch: this runs once per edge of every build.
        """
        layer_of, kind_of, weight_out, moves_out = self.layer_of, self.kind_of, self.weight_out, self.moves_out
        deepest = self.deepest_source_into
        known = len(layer_of)
        source_layers = []
        moves = []
        for offset, (src, dst, kind, _label, weight, _reward, chosen_by, sign) in enumerate(edges):
            layer = layer_of[src] if 0 <= src < known else None
            if layer is None:
                raise InvalidGraph(f"edge {first_id + offset} leaves node {src} before that node was streamed")
            if sign != 1:
                self._check_pass(first_id + offset, layer, sign)
            source_kind = kind_of[src]
            if kind == ROLL and source_kind == CHANCE and weight > 0:
                weight_out[src] += weight
            elif kind == MOVE and source_kind == DECISION:
                moves_out[src] += 1
                moves.append(layer)
                if chosen_by:
                    self._count_choices(chosen_by, first_id + offset)
            else:
                raise InvalidGraph(f"edge {first_id + offset} from {source_kind} node {src} is a {kind} of weight "
                                   f"{weight}: rolls of positive weight leave chance nodes, moves leave decision nodes")
            if dst >= known:
                self._grow(dst)
                layer_of, kind_of, weight_out, moves_out = self.layer_of, self.kind_of, self.weight_out, self.moves_out
                deepest, known = self.deepest_source_into, len(self.layer_of)
            if layer > deepest[dst]:
                deepest[dst] = layer
            if layer != self.edge_layer:
                self._start_layer(layer, first_id + offset)
            source_layers.append(layer)
        if edges:
            stats = self.layers[self.edge_layer]
            stats.last_edge = first_id + len(edges) - 1
        self._count_edges(source_layers, moves)
        return source_layers

    def _check_pass(self, edge_id: int, layer: int, sign: int) -> None:
        """An edge of sign -1 (the turn passes) must leave a cyclic layer, which the cyclic solver values."""
        if sign != -1:
            raise InvalidGraph(f"edge {edge_id} has sign {sign}: an edge's sign is 1, or -1 where the turn passes")
        stats = self.layers.get(layer)
        if stats is None or stats.cycle_start is None:
            raise InvalidGraph(f"edge {edge_id} passes the turn (sign -1) from layer {layer}, which is in no cyclic "
                               "component: declare the layers with CyclicLayers")

    def _count_choices(self, chosen_by: tuple[str, ...], edge_id: int) -> None:
        if self.turn_root is not None and self.turn_layer is None:
            raise InvalidGraph(f"edge {edge_id} leaves a turn state and is chosen by {', '.join(chosen_by)}: agents "
                               f"choose in the turn (from {self.turn_root!r} on), the turn's ends take the states' moves")
        for agent in chosen_by:
            if agent not in self.agents:
                raise InvalidGraph(f"edge {edge_id} is chosen by {agent!r}, not one of the agents {self.agents}")
            self.choices[agent] += 1

    def _start_layer(self, layer: int, edge_id: int) -> None:
        if layer < self.edge_layer:
            raise InvalidGraph(f"edge {edge_id} leaves layer {layer} after edges of layer {self.edge_layer}: "
                               "stream edges layer by layer")
        if self.edge_layer in self.layers:
            self.layers[self.edge_layer].last_edge = edge_id - 1
        self.edge_layer = layer
        self.layers.setdefault(layer, LayerStats(layer)).first_edge = edge_id

    def _count_edges(self, source_layers: list[int], move_layers: list[int]) -> None:
        moves = Counter(move_layers)
        for layer, count in Counter(source_layers).items():
            self.layers[layer].moves += moves[layer]
            self.layers[layer].rolls += count - moves[layer]

    def finish(self) -> tuple[list[LayerStats], dict[str, Any]]:
        """Check the whole graph; return the per-layer stats and the totals (nodes, edges, layers)."""
        if not self.layer_of or self.layer_of[0] is None:
            raise InvalidGraph("the graph has no root: node 0 was never streamed")
        used = len(self.layer_of)
        while used and self.layer_of[used - 1] is None and self.deepest_source_into[used - 1] < 0:
            used -= 1
        for node_id, layer in enumerate(self.layer_of[:used]):
            if layer is None:
                raise InvalidGraph(f"node id {node_id} is used by an edge but was never streamed (ids must be 0..n-1)")
            kind = self.kind_of[node_id]
            entered_from = self.deepest_source_into[node_id]
            if layer <= entered_from and not entered_from <= self.cycle_end.get(layer, -1):
                raise InvalidGraph(f"node {node_id} in layer {layer} is entered from layer {entered_from}: edges must "
                                   "go to higher layers (or back to the first layer of their cyclic component)")
            if kind == CHANCE and self.weight_out[node_id] != self.denom_of[node_id]:
                raise InvalidGraph(f"chance node {node_id}: roll weights add up to {self.weight_out[node_id]}, "
                                   f"not its denom {self.denom_of[node_id]}")
            if kind == DECISION and not self.moves_out[node_id]:
                raise InvalidGraph(f"decision node {node_id} has no move")
        lowest = min(self.layers)
        if self.layer_of[0] != lowest or self.layers[lowest].nodes != 1:
            raise InvalidGraph("the graph needs exactly one root: node 0, alone in the lowest layer")
        if self.turn_root is None:
            decisions = self.kind_of.count(DECISION)
        elif self.turn_layer is None:
            raise InvalidGraph(f"the turn's root {self.turn_root!r} was never streamed")
        else:
            decisions = sum(1 for kind, layer in zip(self.kind_of, self.layer_of)
                            if kind == DECISION and layer is not None and layer >= self.turn_layer)
        for agent in self.agents:
            if self.choices[agent] != decisions:
                raise InvalidGraph(f"agent {agent!r} chooses {self.choices[agent]} moves at {decisions} decision nodes: "
                                   "it must choose exactly one at each")
        stats = [self.layers[layer] for layer in sorted(self.layers)]
        edges = sum(layer.rolls + layer.moves for layer in stats)
        return stats, {"nodes": used, "edges": edges, "layers": max(self.layers) + 1}


def checker_for(game: Any, params: Mapping[str, Any]) -> StreamChecker:
    """Return the checker of ``game``'s build for ``params``: its agents, and its turn's root if the turn is stored once."""
    turn = game.turn
    return StreamChecker(game.agents(params), turn_root=turn(params).root if callable(turn) else None)
