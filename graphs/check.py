"""Checks a builder's stream against the graph model while it is being loaded.

It keeps a few numbers per node (never per edge), so it costs little next to
the insert, and it gathers the per-layer counts the store records.

>>> from dicegraph.graphs.protocol import Node, Edge
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dicegraph.graphs.errors import InvalidGraph
from dicegraph.graphs.protocol import CHANCE, DECISION, MOVE, NODE_KINDS, ROLL, TERMINAL, CyclicLayers, Edge, EdgeColumns, Node, Row


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


KIND_CODES = {kind: code for code, kind in enumerate(NODE_KINDS, 1)}  # 0: a node not streamed yet
CHANCE_CODE, DECISION_CODE = KIND_CODES[CHANCE], KIND_CODES[DECISION]
CHECKED_AT_ONCE = 20_000  # edges streamed one by one, checked as one block
UNSEEN = -1  # the layer of a node not streamed yet, and the deepest layer into a node nothing enters yet


class StreamChecker:
    """Validates nodes and edges as they stream by; :meth:`finish` checks what needs the whole graph.

    It works on batches (:meth:`nodes`, :meth:`edge_columns`) with numpy arrays over the node ids, so that
    checking costs no Python per edge.
    """

    def __init__(self, agents: Iterable[str], turn_root: str | None = None):
        self.agents = tuple(agents)
        # a game whose turn is stored once: its agents choose in the turn (from the layer of the node
        # ``turn_root`` on), never at the turn states, whose moves the turn's ends take
        self.turn_root = turn_root
        self.turn_layer: int | None = None
        self.layer_of = np.full(0, UNSEEN, dtype=np.int64)
        self.kind_of = np.zeros(0, dtype=np.int8)  # KIND_CODES
        self.denom_of = np.zeros(0, dtype=np.int64)
        self.weight_out = np.zeros(0, dtype=np.int64)
        self.moves_out = np.zeros(0, dtype=np.int64)
        self.deepest_source_into = np.full(0, UNSEEN, dtype=np.int64)  # per node: the highest layer an edge into it leaves
        self.layers: dict[int, LayerStats] = {}
        self.edge_layer = -1
        self.choices: Counter[str] = Counter()
        self.cycle_end: dict[int, int] = {}  # first layer of a cyclic component -> its last

    def check(self, rows: Iterable[Row]) -> tuple[list[LayerStats], dict[str, Any]]:
        """Check a whole stream of rows without a database (edges numbered from 0); return :meth:`finish`'s."""
        edge_id = 0
        nodes: list[Node] = []
        edges: list[Edge] = []

        def check_queued(block: EdgeColumns | None = None) -> None:
            nonlocal edge_id, nodes, edges
            self.nodes(nodes)
            for queued in (EdgeColumns.of(edges), block):
                if queued is not None:
                    self.edge_columns(queued, edge_id)
                    edge_id += len(queued.src)
            nodes, edges = [], []

        for row in rows:
            if isinstance(row, Node):
                nodes.append(row)
            elif isinstance(row, Edge):
                edges.append(row)
                if len(edges) >= CHECKED_AT_ONCE:
                    check_queued()
            elif isinstance(row, EdgeColumns):
                check_queued(row)
            else:
                check_queued()
                self.cyclic(row)
        check_queued()
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

    def _grow(self, size: int) -> None:
        """Make room for node ids below ``size`` (doubling, so that growing costs little per node)."""
        known = len(self.layer_of)
        if size <= known:
            return
        grown = max(size, 2 * known)
        for name, fill in (("layer_of", UNSEEN), ("kind_of", 0), ("denom_of", 0), ("weight_out", 0),
                           ("moves_out", 0), ("deepest_source_into", UNSEEN)):
            old = getattr(self, name)
            new = np.full(grown, fill, dtype=old.dtype)
            new[:known] = old
            setattr(self, name, new)

    def node(self, node: Node) -> None:
        """Record one node; raise InvalidGraph if it is malformed or its id is taken."""
        self.nodes([node])

    def nodes(self, nodes: Sequence[Node]) -> None:
        """Record nodes; raise InvalidGraph at the first that is malformed or whose id is taken."""
        if not nodes:
            return
        ids_, keys, layers_, kinds, _labels, denoms, payoffs = zip(*nodes)
        ids, layers = np.array(ids_, dtype=np.int64), np.array(layers_, dtype=np.int64)
        codes = np.array([KIND_CODES.get(kind, 0) for kind in kinds], dtype=np.int8)
        has_denom = np.array([denom is not None for denom in denoms])
        has_payoff = np.array([payoff is not None for payoff in payoffs])
        self._grow(int(ids.max()) + 1)
        first_use = np.zeros(len(ids), dtype=bool)
        first_use[np.unique(ids, return_index=True)[1]] = True
        problems = [
            (ids < 0, lambda i: f"node {keys[i]!r} has a negative id {ids_[i]}"),
            ((self.layer_of[np.maximum(ids, 0)] != UNSEEN) | ~first_use,
             lambda i: f"node id {ids_[i]} is used twice (second time by {keys[i]!r})"),
            (codes == 0, lambda i: f"node {keys[i]!r} has kind {kinds[i]!r}, not one of {', '.join(NODE_KINDS)}"),
            (((codes == CHANCE_CODE) != has_denom) | ((codes == KIND_CODES[TERMINAL]) != has_payoff),
             lambda i: f"node {keys[i]!r}: chance nodes and only they have a denom, terminals a payoff"),
        ]
        _refuse_first(problems)
        if self.turn_root is not None and self.turn_root in keys:
            self.turn_layer = layers_[keys.index(self.turn_root)]
        self.layer_of[ids] = layers
        self.kind_of[ids] = codes
        self.denom_of[ids] = [denom or 0 for denom in denoms]
        for layer, count in zip(*np.unique(layers, return_counts=True)):
            self.layers.setdefault(int(layer), LayerStats(int(layer))).nodes += int(count)

    def edge(self, edge: Edge, edge_id: int) -> int:
        """Record one edge with the id the loader gives it; return the layer it leaves."""
        return int(self.edge_columns(EdgeColumns.of([edge]), edge_id)[0])

    def edge_columns(self, block: EdgeColumns, first_id: int) -> np.ndarray:
        """Record a block of edges with consecutive ids from ``first_id``; return the layers they leave."""
        count = len(block.src)
        if not count:
            return np.zeros(0, dtype=np.int64)
        src, dst = np.asarray(block.src, dtype=np.int64), np.asarray(block.dst, dtype=np.int64)
        kind, weight = np.asarray(block.kind), np.asarray(block.weight, dtype=np.int64)
        sign = np.asarray(block.sign, dtype=np.int64)
        known = (src >= 0) & (src < len(self.layer_of))
        layer = np.where(known, self.layer_of[np.where(known, src, 0)], UNSEEN)
        _refuse_first([(layer == UNSEEN, lambda i: f"edge {first_id + i} leaves node {src[i]} before that node was streamed")])
        source_kind = self.kind_of[src]
        rolls = (kind == ROLL) & (source_kind == CHANCE_CODE) & (weight > 0)
        moves = (kind == MOVE) & (source_kind == DECISION_CODE)
        kind_names = ("unknown",) + NODE_KINDS

        def wrong_kind(i: int) -> str:
            return (f"edge {first_id + i} from {kind_names[source_kind[i]]} node {src[i]} is a {kind[i]} of weight "
                    f"{weight[i]}: rolls of positive weight leave chance nodes, moves leave decision nodes")

        before = np.concatenate(([self.edge_layer], layer[:-1]))
        passes = sign != 1
        outside = [found for found in np.unique(layer[passes]).tolist()
                   if self.layers.get(found) is None or self.layers[found].cycle_start is None]
        _refuse_first([
            (passes & (sign != -1),
             lambda i: f"edge {first_id + i} has sign {sign[i]}: an edge's sign is 1, or -1 where the turn passes"),
            (passes & np.isin(layer, outside),
             lambda i: f"edge {first_id + i} passes the turn (sign -1) from layer {layer[i]}, which is in no cyclic "
                       "component: declare the layers with CyclicLayers"),
            (~(rolls | moves), wrong_kind),
            (layer < before, lambda i: f"edge {first_id + i} leaves layer {layer[i]} after edges of layer {before[i]}: "
                                       "stream edges layer by layer"),
        ])
        self._grow(int(dst.max()) + 1)
        lowest = int(src.min())  # a block's sources are a few neighbouring ids: count over them only
        rolled = np.bincount(src[rolls] - lowest, weights=weight[rolls]).astype(np.int64)
        self.weight_out[lowest:lowest + len(rolled)] += rolled
        moved = np.bincount(src[moves] - lowest)
        self.moves_out[lowest:lowest + len(moved)] += moved
        np.maximum.at(self.deepest_source_into, dst, layer)
        chosen = [i for i, agents in enumerate(block.chosen_by) if agents and moves[i]]
        if chosen:
            self._count_choices([(block.chosen_by[i], first_id + i, int(layer[i])) for i in chosen])
        starts = np.flatnonzero(layer != before)
        bounds = sorted({0, *starts.tolist(), count})
        for start, end in zip(bounds[:-1], bounds[1:]):
            if start == 0 and layer[0] == self.edge_layer:
                stats = self.layers[self.edge_layer]
            else:
                stats = self._start_layer(int(layer[start]), first_id + start)
            move_count = int(np.count_nonzero(moves[start:end]))
            stats.moves += move_count
            stats.rolls += end - start - move_count
        self.layers[self.edge_layer].last_edge = first_id + count - 1
        return layer

    def _count_choices(self, chosen: list[tuple[tuple[str, ...], int, int]]) -> None:
        """Count the agents' choices: each ``(agents, edge id, layer it leaves)`` a move the agents choose."""
        for chosen_by, edge_id, layer in chosen:
            if self.turn_root is not None and (self.turn_layer is None or layer < self.turn_layer):
                raise InvalidGraph(f"edge {edge_id} leaves a turn state and is chosen by {', '.join(chosen_by)}: agents "
                                   f"choose in the turn (from {self.turn_root!r} on), the turn's ends take the states' moves")
            for agent in chosen_by:
                if agent not in self.agents:
                    raise InvalidGraph(f"edge {edge_id} is chosen by {agent!r}, not one of the agents {self.agents}")
            self.choices.update(chosen_by)

    def _start_layer(self, layer: int, edge_id: int) -> LayerStats:
        """Return the stats of ``layer``, whose edges start at ``edge_id``, closing the layer before."""
        if self.edge_layer in self.layers:
            self.layers[self.edge_layer].last_edge = edge_id - 1
        self.edge_layer = layer
        stats = self.layers.setdefault(layer, LayerStats(layer))
        stats.first_edge = edge_id
        return stats

    def finish(self) -> tuple[list[LayerStats], dict[str, Any]]:
        """Check the whole graph; return the per-layer stats and the totals (nodes, edges, layers)."""
        if not len(self.layer_of) or self.layer_of[0] == UNSEEN:
            raise InvalidGraph("the graph has no root: node 0 was never streamed")
        mentioned = np.flatnonzero((self.layer_of != UNSEEN) | (self.deepest_source_into != UNSEEN))
        used = int(mentioned[-1]) + 1
        layer, kind = self.layer_of[:used], self.kind_of[:used]
        entered_from, weight_out, denom = self.deepest_source_into[:used], self.weight_out[:used], self.denom_of[:used]
        cycle_end = np.full(int(layer.max()) + 1, UNSEEN, dtype=np.int64)
        for first, last in self.cycle_end.items():
            if first < len(cycle_end):
                cycle_end[first] = last
        _refuse_first([
            (layer == UNSEEN,
             lambda n: f"node id {n} is used by an edge but was never streamed (ids must be 0..n-1)"),
            ((layer <= entered_from) & ~(entered_from <= cycle_end[np.maximum(layer, 0)]),
             lambda n: f"node {n} in layer {layer[n]} is entered from layer {entered_from[n]}: edges must go to higher "
                       "layers (or back to the first layer of their cyclic component)"),
            ((kind == CHANCE_CODE) & (weight_out != denom),
             lambda n: f"chance node {n}: roll weights add up to {weight_out[n]}, not its denom {denom[n]}"),
            ((kind == DECISION_CODE) & (self.moves_out[:used] == 0), lambda n: f"decision node {n} has no move"),
        ])
        lowest = min(self.layers)
        if self.layer_of[0] != lowest or (self.layers[lowest].nodes != 1 and lowest not in self.cycle_end):
            raise InvalidGraph("the graph needs exactly one root: node 0, alone in the lowest layer (or, where the "
                               "game comes back to it, among the anchors of the cyclic component that starts there)")
        if self.turn_root is None:
            decisions = int(np.count_nonzero(kind == DECISION_CODE))
        elif self.turn_layer is None:
            raise InvalidGraph(f"the turn's root {self.turn_root!r} was never streamed")
        else:
            decisions = int(np.count_nonzero((kind == DECISION_CODE) & (layer >= self.turn_layer)))
        for agent in self.agents:
            if self.choices[agent] != decisions:
                raise InvalidGraph(f"agent {agent!r} chooses {self.choices[agent]} moves at {decisions} decision nodes: "
                                   "it must choose exactly one at each")
        stats = [self.layers[layer] for layer in sorted(self.layers)]
        edges = sum(layer.rolls + layer.moves for layer in stats)
        return stats, {"nodes": used, "edges": edges, "layers": max(self.layers) + 1}


def _refuse_first(problems: list[tuple[np.ndarray, Callable[[int], str]]]) -> None:
    """Raise InvalidGraph for the first position any mask of ``problems`` marks, with the message of the first
    mask marking it."""
    firsts = [(int(np.argmax(mask)), order, message) for order, (mask, message) in enumerate(problems) if mask.any()]
    if firsts:
        position, _, message = min(firsts, key=lambda found: found[:2])
        raise InvalidGraph(message(position))


def checker_for(game: Any, params: Mapping[str, Any]) -> StreamChecker:
    """Return the checker of ``game``'s build for ``params``: its agents, and its turn's root if the turn is stored once."""
    turn = game.turn
    return StreamChecker(game.agents(params), turn_root=turn(params).root if callable(turn) else None)
