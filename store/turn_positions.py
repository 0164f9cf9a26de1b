"""A game whose turn is stored once, seen one position at a time: a turn state and a node of its turn.

The graph holds each turn state once and the turn once (:class:`dicegraph.graphs.protocol.TurnStructure`); a game in
progress is at a node of the turn played from a state. Its key joins the two keys with :data:`SEPARATOR`
(``"used:101 @ r1:11256"``); a state's key alone is its turn's start, and a state that ends the game is its key
alone. A move (or roll) into one of the turn's ends is shown as it is played: it leads on to the next state's
turn (the state's move labelled like the end folded into it, its reward and sign added). Values are worked out
per state as the position is looked at (:func:`dicegraph.store.solve.turns.turns_played`, or for a race whose states loop
:func:`dicegraph.store.solve.turn_cycles.turn_node_values`), from the stored solve; nothing is written.

:meth:`TurnPositions.look` returns what :func:`dicegraph.store.positions.describe_position` returns one level deep, so a
game in progress (:class:`dicegraph.play.Table`) walks either alike.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from dicegraph.graphs.protocol import OPTIMAL, TIE, TurnStructure
from dicegraph.store.catalog import find_node, find_policy, has_cycles
from dicegraph.store.errors import NotFound
from dicegraph.store.schema import choice, edge, layer, node
from dicegraph.store.solve import turn_cycles, turns
from dicegraph.store.turn_graph import TurnGraph

SEPARATOR = " @ "
STATES_KEPT = 256  # turn states whose turn values a session keeps (School: about 0.2 MB a state)


def position_key(state: str, turn_node: str) -> str:
    """Return the key of the position at ``turn_node`` of the turn played from ``state``.

    >>> position_key("used:101", "r1:11256")
    'used:101 @ r1:11256'
    """
    return f"{state}{SEPARATOR}{turn_node}"


def state_of(key: str) -> str:
    """Return the key of the turn state a position's key names (the key itself for a state).

    >>> state_of("used:101 @ r1:11256"), state_of("used:101")
    ('used:101', 'used:101')
    """
    return key.partition(SEPARATOR)[0]


class TurnNode(NamedTuple):
    """A node of the turn, as a session keeps it (a plain tuple: read far faster than a result row)."""

    id: int
    key: str
    label: str
    kind: str
    layer: int
    denom: int


class TurnEdge(NamedTuple):
    """An edge of the turn, as a session keeps it."""

    src: int
    id: int
    kind: str
    label: str
    weight: int
    reward: float
    sign: int
    dst: int


class TurnPositions:
    """The positions of a stored turn game on one connection, their values worked out state by state (kept).

    They name the optimum's moves (``chosen_by``); :meth:`bound` names other stored policies' too.
    """

    def __init__(self, connection: sa.Connection, graph_id: int, structure: TurnStructure):
        self.connection, self.graph_id = connection, graph_id
        self.turn = TurnGraph.load(connection, graph_id, structure)
        self.cyclic = has_cycles(connection, graph_id)
        root_layer = self.turn.turn_spans[0].layer
        rows = connection.execute(sa.select(*(node.c[name] for name in TurnNode._fields)).where(
            node.c.graph_id == graph_id, node.c.layer >= root_layer))
        self.nodes = {row[0]: TurnNode._make(row) for row in rows}
        self.ids = {turn_node.key: turn_node.id for turn_node in self.nodes.values()}
        self.root = self.nodes[self.turn.root].key
        self.ends = {node_id: self.turn.end_labels[key] for key, node_id in self.turn.ends.items()}
        self.spans = {span.layer: span for span in self.turn.turn_spans}
        self.turn_policies = {declared.name for declared in structure.policies}
        self.policies = [OPTIMAL]
        top = sa.select(sa.func.max(node.c.payoff)).where(node.c.graph_id == graph_id, node.c.kind == "terminal",
                                                          node.c.layer < root_layer)
        self.top = connection.execute(top).scalar()
        self._worths: dict[tuple[str, int], dict[int, tuple[float, float]]] = {}
        self._edges: dict[int, list[TurnEdge]] = {}
        self._layers_read: set[int] = set()
        self._states: dict[str, sa.Row] = {}
        self._moves: dict[int, dict[str, sa.Row]] = {}
        self._players = {name: turns.TurnPlayer(self.turn, name) for name in self.turn_policies}
        self._by_values: dict[str, bool] = {}

    def bound(self, connection: sa.Connection, policies: Sequence[str] = ()) -> TurnPositions:
        """Return these positions read through ``connection``, naming the moves of ``policies`` (and the optimum's),
        sharing what is known so far (a session keeps one a graph: values are worked out once)."""
        view = copy.copy(self)
        view.connection, view.policies = connection, list(dict.fromkeys([OPTIMAL, *policies]))
        return view

    def prefetch(self, states: list[int]) -> None:
        """Work out the values of the turns of ``states`` (node ids) at once, for every policy named that the turn
        solve plays (a race's stored agents need none)."""
        for name in (name for name in self.policies if self._valued(name)):
            missing = [state for state in dict.fromkeys(states) if (name, state) not in self._worths]
            if missing:
                for state, found in self._played(name, missing).items():
                    self._keep(name, state, found)

    def _played(self, name: str, states: list[int]) -> dict[int, dict[int, tuple[float, float]]]:
        """Return state -> turn node -> (profit, value) under policy ``name`` for ``states``."""
        if not self.cyclic:
            return self._players[name].played(self.connection, states, solved=True)  # a listed policy's
        if not self._valued(name):
            raise NotFound(f"policy {name!r} of a race is played by its stored moves, not by values")
        found = turn_cycles.turn_node_values(self.connection, self.turn, states, ("chance", "decision", "terminal"),
                                             self._policy_id(name))
        return {state: {node_id: (v, v) for node_id, v in values.items()} for state, values in found.items()}

    def worths(self, name: str, state: int) -> dict[int, tuple[float, float]]:
        """Return turn node -> (profit, value) of the turn played from ``state`` under policy ``name``."""
        found = self._worths.get((name, state))
        if found is None:
            found = self._played(name, [state])[state]
            self._keep(name, state, found)
        return found

    def _keep(self, name: str, state: int, found: dict[int, tuple[float, float]]) -> None:
        """Keep the values of a state's turn, forgetting the oldest past :data:`STATES_KEPT` states."""
        self._worths[name, state] = found
        while len(self._worths) > STATES_KEPT:
            self._worths.pop(next(iter(self._worths), None), None)

    def state(self, key: str) -> sa.Row:
        """Return the turn state ``key``'s node row (NotFound for none)."""
        if key not in self._states:
            found = find_node(self.connection, self.graph_id, key)
            if found.layer >= self.turn.turn_spans[0].layer:
                raise NotFound(f"{key!r} is a node of the turn, not a turn state: a position of a game in progress "
                               f"is STATE{SEPARATOR}TURN-NODE")
            self._states[key] = found
        return self._states[key]

    def node_of(self, key: str) -> dict[str, Any]:
        """Return what a diagram shows of the position ``key`` (a turn state, or ``STATE @ TURN-NODE``): its
        ``label``, ``layer``, ``kind``, ``denom`` and ``payoff``."""
        state_key, _, turn_key = key.partition(SEPARATOR)
        state = self.state(state_key)
        if not turn_key:
            return {"label": state.label, "layer": state.layer, "kind": state.kind, "denom": state.denom,
                    "payoff": state.payoff}
        here = self.nodes[self.ids[turn_key]]
        return {"label": f"{state.label}; {here.label}", "layer": here.layer, "kind": here.kind, "denom": here.denom,
                "payoff": None}

    def _turn_edges(self, node_id: int) -> list[TurnEdge]:
        """Return the edges leaving turn node ``node_id``, in order (its layer's read at once, the first time)."""
        layer_number = self.nodes[node_id].layer
        if layer_number not in self._layers_read:
            span = self.spans[layer_number]
            rows = self.connection.execute(sa.select(*(edge.c[name] for name in TurnEdge._fields)).where(
                edge.c.id.between(span.first_edge, span.last_edge)).order_by(edge.c.id))
            grouped: dict[int, list[TurnEdge]] = {}
            for row in rows:
                grouped.setdefault(row[0], []).append(TurnEdge._make(row))
            self._edges.update(grouped)  # whole lists: two pages reading a layer at once leave it once
            self._layers_read.add(layer_number)
        return self._edges.get(node_id, [])

    def _state_moves(self, state: sa.Row) -> dict[str, sa.Row]:
        """Return a state's moves by label: where each leads (its row), its reward and sign."""
        if state.id not in self._moves:
            self._moves[state.id] = self._read_moves(state)
        return self._moves[state.id]

    def _read_moves(self, state: sa.Row) -> dict[str, sa.Row]:
        span = self.connection.execute(sa.select(layer.c.first_edge, layer.c.last_edge).where(
            layer.c.graph_id == self.graph_id, layer.c.layer == state.layer)).one()
        to = node.alias("to")
        rows = self.connection.execute(
            sa.select(edge.c.label, edge.c.reward, edge.c.sign, to.c.key, to.c.kind, to.c.payoff)
            .select_from(edge.join(to, sa.and_(to.c.graph_id == self.graph_id, to.c.id == edge.c.dst)))
            .where(edge.c.id.between(span.first_edge, span.last_edge), edge.c.src == state.id)).all()
        return {row.label: row for row in rows}

    def look(self, key: str) -> dict[str, Any]:
        """Return the position ``key`` as :func:`dicegraph.store.positions.describe_position` does one level deep: ``key``,
        ``label``, ``kind``, ``payoff``, ``denom``, ``policies`` (the optimum's ``value``) and ``edges`` (each
        ``label``, ``to``, ``weight``, ``reward``, ``sign``, ``probability``, ``chosen_by`` and the optimum's
        value in ``values``); only the moves the state allows, into what the solve values."""
        state_key, _, turn_key = key.partition(SEPARATOR)
        state = self.state(state_key)
        if state.kind == "terminal":
            return {"key": state.key, "label": state.label, "kind": "terminal", "layer": state.layer,
                    "denom": state.denom, "payoff": state.payoff, "policies": {}, "edges": []}
        if (turn_key or self.root) not in self.ids:
            raise NotFound(f"no node {turn_key!r} in the turn of graph {self.graph_id}")
        here = self.nodes[self.ids[turn_key or self.root]]
        if here.id in self.ends:
            raise NotFound(f"{turn_key!r} is an end of the turn: a game goes on from there to the next state's turn")
        values = self.worths(OPTIMAL, state.id)
        if here.id not in values:
            raise NotFound(f"{key!r} is not reached from its state in play (no value there)")
        moves = self._state_moves(state) if any(out.dst in self.ends for out in self._turn_edges(here.id)) else {}
        edges = []
        for out in self._turn_edges(here.id):
            if out.dst not in values:
                continue  # an end the state has no move through, or a node past its horizon
            item = {"kind": out.kind, "label": out.label, "weight": out.weight, "id": out.id, "dst": out.dst,
                    "own_reward": out.reward,
                    "probability": out.weight / here.denom if out.kind == "roll" else None,
                    "values": {OPTIMAL: out.reward + out.sign * values[out.dst][1]}}
            if out.dst in self.ends:
                through = moves.get(self.ends[out.dst])
                if through is None:
                    continue
                item.update(to=through.key if through.kind == "terminal" else position_key(through.key, self.root),
                            to_label=through.key, reward=out.reward + through.reward, sign=out.sign * through.sign,
                            wins=through.kind == "terminal" and through.payoff == self.top)
            else:
                item.update(to=position_key(state.key, self.nodes[out.dst].key), to_label=self.nodes[out.dst].label,
                            reward=out.reward, sign=out.sign, wins=False)
            edges.append(item)
        if here.kind == "decision":
            for name in self.policies:
                chosen = self._chosen(name, state.id, here.id, edges)
                for item in edges:
                    item.setdefault("chosen_by", []).extend([name] if item["id"] == chosen else [])
        for item in edges:
            item.setdefault("chosen_by", [])
            del item["id"], item["dst"], item["wins"], item["own_reward"]
        return {"key": position_key(state.key, here.key), "label": f"{state.label}; {here.label}", "kind": here.kind,
                "layer": here.layer, "denom": here.denom, "payoff": None,
                "policies": {OPTIMAL: {"value": values[here.id][1], "reach": None}}, "edges": edges}

    def _chosen(self, name: str, state: int, decision: int, edges: Sequence[dict[str, Any]]) -> int | None:
        """Return the edge id the policy ``name`` takes at ``decision`` of ``state``'s turn: the lowest id within
        the tie tolerance of the best profit for a policy the turn solve plays; for a stored agent (a race's), a
        move that wins at once if there is one, else its own stored move."""
        if self._valued(name):
            profits = self.worths(name, state)
            scored = [(item["own_reward"] + profits[item["dst"]][0], item["id"]) for item in edges
                      if item["dst"] in profits]
            if not scored:
                return None
            best = max(q for q, _ in scored)
            return min(edge_id for q, edge_id in scored if q >= best - TIE * (1 + abs(best)))
        wins = [item["id"] for item in edges if item["wins"]]
        if wins:
            return min(wins)
        own = sa.select(choice.c.edge_id).where(choice.c.policy_id == self._policy_id(name), choice.c.node_id == decision)
        return self.connection.execute(own).scalar()

    def _policy_id(self, name: str) -> int:
        """Return the id of the stored policy ``name``."""
        return find_policy(self.connection, self.graph_id, name).id

    def _valued(self, name: str) -> bool:
        """Return whether policy ``name`` plays by the values its turn is worked out with: a policy the turn solve
        plays, or a race's stored best response (the others, a race's agents, by their stored moves)."""
        if name not in self._by_values:
            self._by_values[name] = name in self.turn_policies or (
                self.cyclic and find_policy(self.connection, self.graph_id, name).responds_to is not None)
        return self._by_values[name]

    def states_along(self, root: str, steps: list[dict[str, str]]) -> list[int]:
        """Return the turn states (node ids) a record's ``steps`` pass through from ``root``, by their labels alone,
        as far as they name edges exactly (:meth:`look` says what does not fit), so that their turns are worked
        out at once (:meth:`prefetch`)."""
        state = self.state(state_of(root))
        here, found = self.turn.root, [state.id]
        for step in steps:
            if state.kind == "terminal":
                break
            label = next(iter(step.values()))
            out = next((o for o in self._turn_edges(here) if o.label == label), None)
            if out is None:  # not a label of the game (look says so), or one roll of several a label lists
                break
            if out.dst in self.ends:
                through = self._state_moves(state).get(self.ends[out.dst])
                if through is None:
                    break
                state, here = self.state(through.key), self.turn.root
                if state.kind != "terminal":
                    found.append(state.id)
            else:
                here = out.dst
        return found
