"""What a solve of a turn stored once leaves in ``turn_policy``, read back: a state's value, spread and
decisions, every state's values or decisions, and the sizes of the stored parts.

>>> from dicegraph.store.db import open_database
>>> from dicegraph.store.load import build_graph
>>> from dicegraph.store.solve.entry import solve_graph
>>> from dicegraph.store.solve.turns import TurnGraph, ensure_policy
>>> from dicegraph.graphs import get_game
>>> race = get_game("5000-race")
>>> engine = open_database("sqlite://", create=True)
>>> graph_id = build_graph(engine, race, {"target": 100}).graph_id
>>> with engine.connect() as connection:
...     _ = solve_graph(connection, graph_id, race)
...     turn = TurnGraph.load(connection, graph_id, race.turn({"target": 100}))
...     first_wins = state_result(connection, graph_id, ensure_policy(connection, turn, "optimal"), "0-0").value
...     sizes = turn_sizes(connection, graph_id, turn.turn_spans[0].layer)
>>> round(first_wins, 6), sizes["turn_states"], sizes["turn_edges"]
(0.910906, 5, 1254)
"""

from __future__ import annotations

import sqlalchemy as sa

from dicegraph.graphs.protocol import spread
from dicegraph.store.errors import NotFound
from dicegraph.store.schema import layer, node, ranked_values, turn_policy


def state_result(connection: sa.Connection, graph_id: int, policy_id: int, key: str) -> sa.Row:
    """Return the ``turn_policy`` row (value, moment2, decisions) of the turn state ``key``; raise NotFound if unsolved."""
    query = (sa.select(turn_policy.c.value, turn_policy.c.moment2, turn_policy.c.decisions)
             .select_from(turn_policy.join(node, sa.and_(node.c.id == turn_policy.c.node_id, node.c.graph_id == graph_id)))
             .where(turn_policy.c.policy_id == policy_id, node.c.key == key))
    row = connection.execute(query).first()
    if row is None:
        raise NotFound(f"no stored value for {key} (solve the game first: dicegraph report GAME)")
    return row


def stored_decisions(connection: sa.Connection, graph_id: int, policy_id: int) -> dict[str, bytes]:
    """Return the policy's decisions: turn state key -> its bytes."""
    query = (sa.select(node.c.key, turn_policy.c.decisions)
             .select_from(turn_policy.join(node, sa.and_(node.c.id == turn_policy.c.node_id, node.c.graph_id == graph_id)))
             .where(turn_policy.c.policy_id == policy_id))
    return dict(connection.execute(query).all())


def stored_values(connection: sa.Connection, graph_id: int, policy_id: int, ranked: bool = False) -> dict[str, float]:
    """Return the policy's values: turn state key -> its value (``ranked``: the value of the player facing it there,
    which its moves are ranked by, :func:`dicegraph.store.schema.ranked_values`)."""
    kept = (ranked_values(policy_id) if ranked else sa.select(turn_policy.c.node_id, turn_policy.c.value.label("rank"))
            .where(turn_policy.c.policy_id == policy_id)).subquery("kept")
    query = sa.select(node.c.key, kept.c.rank).select_from(
        kept.join(node, sa.and_(node.c.id == kept.c.node_id, node.c.graph_id == graph_id)))
    return dict(connection.execute(query).all())


def turn_sizes(connection: sa.Connection, graph_id: int, root_layer: int) -> dict[str, int]:
    """Return the sizes of the stored parts of a turn game whose turn starts at layer ``root_layer``: turn states
    and their edges, the turn, and the copy it saves."""
    def count(condition: sa.ColumnElement[bool]) -> int:
        return connection.execute(sa.select(sa.func.count()).select_from(node).where(condition)).scalar_one()

    states = count(sa.and_(node.c.graph_id == graph_id, node.c.layer < root_layer))
    turn_nodes = count(sa.and_(node.c.graph_id == graph_id, node.c.layer >= root_layer))
    spans = sa.select(layer.c.layer, layer.c.rolls + layer.c.moves).where(layer.c.graph_id == graph_id)
    by_layer = dict(connection.execute(spans).all())
    turn_edges = sum(n for number, n in by_layer.items() if number >= root_layer)
    state_edges = sum(n for number, n in by_layer.items() if number < root_layer)
    return {"turn_states": states, "state_edges": state_edges, "turn_nodes": turn_nodes, "turn_edges": turn_edges,
            "copied_edges": (states - 1) * turn_edges}


def game_score(connection: sa.Connection, graph_id: int, policy_id: int, key: str) -> tuple[float, float]:
    """Return the policy's expected score from turn state ``key`` and its standard deviation."""
    row = state_result(connection, graph_id, policy_id, key)
    return row.value, spread(row.value, row.moment2)
