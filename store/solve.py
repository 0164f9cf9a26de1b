"""Backward induction and policy evaluation as set-based SQL, one layer at a time.

Terminals take their payoff. Then, from the deepest layer up, a chance node
takes ``SUM(weight * (reward + value(dst))) / denom`` over its roll edges and a
decision node takes ``reward + value(dst)`` of the move its policy chooses.
Solving chooses that move too: the best ``reward + value(dst)`` for the
objective (``max`` or ``min``); moves within :data:`TIE_TOLERANCE` (relative)
of the best are ties, and a tie goes to the move streamed first by the builder
(lowest edge id). Each layer is three INSERT ... SELECT statements.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from store.catalog import graph_layers
from store.errors import NotFound
from store.load import next_id, now
from store.propagate import propagate
from store.schema import choice, edge, node, policy, value

TIE_TOLERANCE = 1e-12
OBJECTIVES = ("max", "min")
LayerProgress = Callable[[int], None]


def move_values(policy_id: int, graph_id: int, layer: int) -> sa.Select:
    """Return SELECT (id, src, q) of the move edges leaving ``layer``: q = reward + value(dst)."""
    return (
        sa.select(edge.c.id, edge.c.src, (edge.c.reward + value.c.value).label("q"))
        .select_from(edge.join(value, sa.and_(value.c.policy_id == policy_id, value.c.node_id == edge.c.dst)))
        .where(edge.c.graph_id == graph_id, edge.c.src_layer == layer, edge.c.kind == "move")
    )


def _insert_terminal_values(connection: sa.Connection, policy_id: int, graph_id: int) -> None:
    terminals = sa.select(sa.literal(policy_id), node.c.id, node.c.payoff).where(
        node.c.graph_id == graph_id, node.c.kind == "terminal"
    )
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value"], terminals))


def _insert_chance_values(connection: sa.Connection, policy_id: int, graph_id: int, layer: int) -> None:
    totals = (
        sa.select(edge.c.src, sa.func.sum(edge.c.weight * (edge.c.reward + value.c.value)).label("total"))
        .select_from(edge.join(value, sa.and_(value.c.policy_id == policy_id, value.c.node_id == edge.c.dst)))
        .where(edge.c.graph_id == graph_id, edge.c.src_layer == layer, edge.c.kind == "roll")
        .group_by(edge.c.src)
        .subquery()
    )
    rows = sa.select(sa.literal(policy_id), totals.c.src, totals.c.total / node.c.denom).select_from(
        totals.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == totals.c.src))
    )
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value"], rows))


def _insert_best_choices(
    connection: sa.Connection, policy_id: int, graph_id: int, layer: int, objective: str
) -> None:
    moves = move_values(policy_id, graph_id, layer).subquery()
    best_of = sa.func.max if objective == "max" else sa.func.min
    ranked = sa.select(
        moves.c.id, moves.c.src, moves.c.q, best_of(moves.c.q).over(partition_by=moves.c.src).label("best")
    ).subquery()
    slack = TIE_TOLERANCE * (1 + sa.func.abs(ranked.c.best))
    near_best = ranked.c.q >= ranked.c.best - slack if objective == "max" else ranked.c.q <= ranked.c.best + slack
    rows = (
        sa.select(sa.literal(policy_id), ranked.c.src, sa.func.min(ranked.c.id))
        .where(near_best)
        .group_by(ranked.c.src)
    )
    connection.execute(sa.insert(choice).from_select(["policy_id", "node_id", "edge_id"], rows))


def _insert_decision_values(connection: sa.Connection, policy_id: int, graph_id: int, layer: int) -> None:
    rows = (
        sa.select(sa.literal(policy_id), edge.c.src, edge.c.reward + value.c.value)
        .select_from(
            edge.join(
                choice,
                sa.and_(choice.c.policy_id == policy_id, choice.c.node_id == edge.c.src, choice.c.edge_id == edge.c.id),
            ).join(value, sa.and_(value.c.policy_id == policy_id, value.c.node_id == edge.c.dst))
        )
        .where(edge.c.graph_id == graph_id, edge.c.src_layer == layer, edge.c.kind == "move")
    )
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value"], rows))


def _backward(
    connection: sa.Connection,
    policy_id: int,
    graph_id: int,
    objective: str | None,
    progress: LayerProgress | None,
) -> None:
    connection.execute(sa.delete(value).where(value.c.policy_id == policy_id))
    if objective is not None:
        connection.execute(sa.delete(choice).where(choice.c.policy_id == policy_id))
    _insert_terminal_values(connection, policy_id, graph_id)
    layers = graph_layers(connection, graph_id)
    for layer in range(layers - 2, -1, -1):
        _insert_chance_values(connection, policy_id, graph_id, layer)
        if objective is not None:
            _insert_best_choices(connection, policy_id, graph_id, layer, objective)
        _insert_decision_values(connection, policy_id, graph_id, layer)
        if progress is not None:
            progress(1)


def solve(
    connection: sa.Connection,
    graph_id: int,
    objective: str = "max",
    name: str = "optimal",
    progress: LayerProgress | None = None,
) -> int:
    """Solve the graph for ``objective``, store the policy ``name`` with values and reach; return its id.

    A policy of that name made by an earlier solve is replaced; an agent's name is refused.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, not {objective!r}")
    old = connection.execute(sa.select(policy).where(policy.c.graph_id == graph_id, policy.c.name == name)).first()
    if old is not None and old.method != "solve":
        raise NotFound(f"policy {name!r} is the builder's agent; give the solved policy another name")
    if old is None:
        policy_id = next_id(connection, policy)
        connection.execute(
            sa.insert(policy).values(
                id=policy_id, graph_id=graph_id, name=name, objective=objective, method="solve", created_at=now()
            )
        )
    else:
        policy_id = old.id
        connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(objective=objective, created_at=now()))
    _backward(connection, policy_id, graph_id, objective, progress)
    propagate(connection, policy_id, graph_id)
    return policy_id


def evaluate(connection: sa.Connection, policy_id: int, progress: LayerProgress | None = None) -> None:
    """Store every node's value and reach under the stored policy's choices."""
    graph_id = connection.execute(sa.select(policy.c.graph_id).where(policy.c.id == policy_id)).scalar_one()
    _backward(connection, policy_id, graph_id, None, progress)
    propagate(connection, policy_id, graph_id)


def is_evaluated(connection: sa.Connection, policy_id: int) -> bool:
    """Return whether the policy's values (and reach) are stored."""
    query = sa.select(value.c.value).where(value.c.policy_id == policy_id, value.c.node_id == 0)
    return connection.execute(query).first() is not None
