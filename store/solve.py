"""Backward induction and policy evaluation as set-based SQL, one layer at a time.

Terminals take their payoff. Then, from the deepest layer up, a chance node
takes ``SUM(weight * (reward + value(dst))) / denom`` over its roll edges, and
a decision node takes ``reward + value(dst)`` of its move: the move its policy
stores (evaluation), or the best move for the objective (solving), whose
value is the ``MAX`` (or ``MIN``) over the moves. The move a solve chooses is
the first one streamed by the builder (lowest edge id) among those within
:data:`TIE_TOLERANCE`, relative, of the best: a stable, documented tie-break
that floating-point noise cannot flip.

Each layer takes one statement per kind of node plus, when solving, one that
picks the moves. The results go to ``value`` (with the reach computed by
:mod:`store.propagate`) and ``choice`` once, at the end.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from store.catalog import root_value
from store.errors import NotFound
from store.load import next_id, now
from store.propagate import propagate
from store.schema import choice, edge, edges_of, layer_ranges, node, policy, value
from store.scratch import chosen_table, values_table

TIE_TOLERANCE = 1e-12
OBJECTIVES = ("max", "min")
LayerProgress = Callable[[int], None]


def _chance_values(connection: sa.Connection, work: sa.Table, graph_id: int, span: sa.Row) -> None:
    totals = (
        sa.select(edge.c.src, sa.func.sum(edge.c.weight * (edge.c.reward + work.c.value)).label("total"))
        .select_from(edge.join(work, work.c.node_id == edge.c.dst))
        .where(edges_of(span, "roll"))
        .group_by(edge.c.src)
        .subquery()
    )
    rows = sa.select(totals.c.src, totals.c.total / node.c.denom).select_from(
        totals.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == totals.c.src))
    )
    connection.execute(sa.insert(work).from_select(["node_id", "value"], rows))


def _best_values(connection: sa.Connection, work: sa.Table, span: sa.Row, objective: str) -> None:
    best = sa.func.max if objective == "max" else sa.func.min
    rows = (
        sa.select(edge.c.src, best(edge.c.reward + work.c.value))
        .select_from(edge.join(work, work.c.node_id == edge.c.dst))
        .where(edges_of(span, "move"))
        .group_by(edge.c.src)
    )
    connection.execute(sa.insert(work).from_select(["node_id", "value"], rows))


def _best_moves(connection: sa.Connection, work: sa.Table, chosen: sa.Table, span: sa.Row, objective: str) -> None:
    after, here = work.alias("after"), work.alias("here")
    q = edge.c.reward + after.c.value
    slack = TIE_TOLERANCE * (1 + sa.func.abs(here.c.value))
    near_best = q >= here.c.value - slack if objective == "max" else q <= here.c.value + slack
    rows = (
        sa.select(edge.c.src, sa.func.min(edge.c.id))
        .select_from(edge.join(after, after.c.node_id == edge.c.dst).join(here, here.c.node_id == edge.c.src))
        .where(edges_of(span, "move"), near_best)
        .group_by(edge.c.src)
    )
    connection.execute(sa.insert(chosen).from_select(["node_id", "edge_id"], rows))


def _chosen_values(connection: sa.Connection, work: sa.Table, chosen: sa.Table, span: sa.Row) -> None:
    rows = (
        sa.select(edge.c.src, edge.c.reward + work.c.value)
        .select_from(
            edge.join(chosen, sa.and_(chosen.c.node_id == edge.c.src, chosen.c.edge_id == edge.c.id)).join(
                work, work.c.node_id == edge.c.dst
            )
        )
        .where(edges_of(span, "move"))
    )
    connection.execute(sa.insert(work).from_select(["node_id", "value"], rows))


def _run(
    connection: sa.Connection,
    policy_id: int,
    graph_id: int,
    objective: str | None,
    progress: LayerProgress | None,
) -> None:
    """Compute and store values, reach and (when solving) choices of one policy."""
    work, chosen = values_table(connection), chosen_table(connection)
    connection.execute(sa.delete(value).where(value.c.policy_id == policy_id))
    if objective is None:
        stored = sa.select(choice.c.node_id, choice.c.edge_id).where(choice.c.policy_id == policy_id)
        connection.execute(sa.insert(chosen).from_select(["node_id", "edge_id"], stored))
    else:
        connection.execute(sa.delete(choice).where(choice.c.policy_id == policy_id))
    terminals = sa.select(node.c.id, node.c.payoff).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
    connection.execute(sa.insert(work).from_select(["node_id", "value"], terminals))
    spans = layer_ranges(connection, graph_id)
    for span in reversed(spans):  # the deepest layer first
        if span.rolls:
            _chance_values(connection, work, graph_id, span)
        if span.moves and objective is None:
            _chosen_values(connection, work, chosen, span)
        elif span.moves:
            _best_values(connection, work, span, objective)
            _best_moves(connection, work, chosen, span, objective)
        if progress is not None:
            progress(1)
    if objective is not None:
        picked = sa.select(sa.literal(policy_id), chosen.c.node_id, chosen.c.edge_id)
        connection.execute(sa.insert(choice).from_select(["policy_id", "node_id", "edge_id"], picked))
    reach = propagate(connection, graph_id, spans, chosen)
    rows = sa.select(sa.literal(policy_id), work.c.node_id, work.c.value, sa.func.coalesce(reach.c.reach, 0.0)).select_from(
        work.outerjoin(reach, reach.c.node_id == work.c.node_id)
    )
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value", "reach"], rows))
    for table in (work, chosen, reach):
        table.drop(connection)


def solve(
    connection: sa.Connection,
    graph_id: int,
    objective: str = "max",
    name: str = "optimal",
    progress: LayerProgress | None = None,
) -> int:
    """Solve the graph for ``objective``; store policy ``name``, its choices, values and reach; return its id.

    A policy of that name made by an earlier solve is replaced; an agent's name is refused.
    ``progress`` is called with 1 after each layer.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, not {objective!r}")
    old = connection.execute(sa.select(policy).where(policy.c.graph_id == graph_id, policy.c.name == name)).first()
    if old is not None and old.method != "solve":
        raise NotFound(f"policy {name!r} is one of the builder's agents; give the solved policy another name")
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
    _run(connection, policy_id, graph_id, objective, progress)
    return policy_id


def evaluate(connection: sa.Connection, policy_id: int, progress: LayerProgress | None = None) -> None:
    """Store every node's value and reach under the policy's stored choices."""
    graph_id = connection.execute(sa.select(policy.c.graph_id).where(policy.c.id == policy_id)).scalar_one()
    _run(connection, policy_id, graph_id, None, progress)


def is_evaluated(connection: sa.Connection, policy_id: int) -> bool:
    """Return whether the policy's values (and reach) are stored."""
    return root_value(connection, policy_id) is not None
