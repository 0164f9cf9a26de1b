"""Where a policy's moves depart from a reference policy's, position by position, on a graph that keeps its positions.

For every decision node with at least two moves, each move is worth
``reward + sign * value(dst)`` under the *reference* policy (usually a solve, so these
are optimal continuation values). A policy's move is *worse* where it is worth
less than the best move beyond the solver's tie tolerance; a node is *tied*
where more than one move is best. The cost of a deviation is what it loses
there times the probability that the policy reaches the node (a graph with
cycles has no reach: its deviations are ranked by their loss alone). A race, its turn stored once, is compared
so by :mod:`dicegraph.store.solve.race_departures`.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import TIE
from dicegraph.store.schema import choice, edge, graph_edge_span, node, value


def compare_policies(
    connection: sa.Connection, graph_id: int, policy: sa.Row, reference: sa.Row, top: int = 10
) -> dict[str, Any]:
    """Return ``{"decisions", "worse", "tied", "expected_loss", "deviations"}`` of ``policy`` against ``reference``.

    Both policies must be evaluated. ``expected_loss`` is how much worse the
    policy's root value is (positive when the reference does better for its
    objective); ``deviations`` lists the ``top`` costliest worse moves.
    """
    first, last = graph_edge_span(connection, graph_id)
    maximise = reference.objective == "max"
    q = (
        sa.select(edge.c.id, edge.c.src, edge.c.label, (edge.c.reward + edge.c.sign * value.c.value).label("q"))
        .select_from(edge.join(value, sa.and_(value.c.policy_id == reference.id, value.c.node_id == edge.c.dst)))
        .where(edge.c.id.between(first, last), edge.c.kind == "move")
        .cte("q")
    )
    best_of = sa.func.max if maximise else sa.func.min
    best = (
        sa.select(q.c.src, best_of(q.c.q).label("best"))
        .group_by(q.c.src)
        .having(sa.func.count() >= 2)
        .cte("best")
    )
    slack = TIE * (1 + sa.func.abs(best.c.best))
    near_best = q.c.q >= best.c.best - slack if maximise else q.c.q <= best.c.best + slack
    near = (
        sa.select(q.c.src, sa.func.count().label("best_moves"))
        .select_from(q.join(best, best.c.src == q.c.src))
        .where(near_best)
        .group_by(q.c.src)
        .cte("near")
    )
    taken = (
        sa.select(choice.c.node_id.label("src"), q.c.q.label("q"), q.c.label)
        .select_from(choice.join(q, q.c.id == choice.c.edge_id))
        .where(choice.c.policy_id == policy.id)
        .cte("taken")
    )
    loss = (best.c.best - taken.c.q) if maximise else (taken.c.q - best.c.best)
    is_worse = loss > slack
    joined = best.join(near, near.c.src == best.c.src).join(taken, taken.c.src == best.c.src)
    counts = connection.execute(
        sa.select(
            sa.func.count(),
            sa.func.coalesce(sa.func.sum(sa.case((is_worse, 1), else_=0)), 0),
            sa.func.coalesce(sa.func.sum(sa.case((near.c.best_moves >= 2, 1), else_=0)), 0),
        ).select_from(joined)
    ).one()
    reach = value.alias("reach")
    best_move = (
        sa.select(edge.c.label)
        .select_from(choice.join(edge, edge.c.id == choice.c.edge_id))
        .where(choice.c.policy_id == reference.id, choice.c.node_id == best.c.src)
        .scalar_subquery()
    )
    deviations = connection.execute(
        sa.select(
            node.c.key,
            node.c.label,
            taken.c.label.label("move"),
            best_move.label("best_move"),
            loss.label("loss"),
            reach.c.reach,
            (loss * reach.c.reach).label("cost"),
        )
        .select_from(
            joined.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == best.c.src)).join(
                reach, sa.and_(reach.c.policy_id == policy.id, reach.c.node_id == best.c.src)
            )
        )
        .where(is_worse)
        .order_by(sa.desc(sa.func.coalesce(loss * reach.c.reach, loss)), node.c.key)
        .limit(top)
    ).all()
    roots = dict(
        connection.execute(
            sa.select(value.c.policy_id, value.c.value).where(
                value.c.policy_id.in_((policy.id, reference.id)), value.c.node_id == 0
            )
        ).all()
    )
    gap = roots[reference.id] - roots[policy.id]
    return {
        "decisions": counts[0],
        "worse": int(counts[1]),
        "tied": int(counts[2]),
        "expected_loss": gap if maximise else -gap,
        "deviations": [dict(row._mapping) for row in deviations],
    }
