"""One graph solved for many goals at once: the solver's statements with a goal number in every key.

An analysis that needs a solve per threshold (a second player
who solves for beating each score the first player can make) would otherwise
run the whole backward induction and propagation once per threshold. Here
each layer runs the solver's own statements (:func:`store.solve.chance_values`
and :func:`store.solve.best_moves`, with the goal as a further key) for all
the thresholds together, and nothing is stored: the result is each goal's
optimal outcome distribution. Ties between moves go, as in the solver, to the
move streamed first among those within :data:`graphs.protocol.TIE`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from store.propagate import insert_adding, summed
from store.schema import EdgeId, edge, edges_of, layer_ranges, node
from store.scratch import has_upsert, sweep_table
from store.solve.layers import Goal, best_moves, chance_values


def sweep_outcomes(
    connection: sa.Connection, graph_id: int, objective: str, goals: Sequence[Goal]
) -> list[dict[float, float]]:
    """Return, for each goal, the terminal payoff -> probability under the policy optimal for that goal.

    Equal to calling :func:`store.solve.solved_outcomes` once per goal.
    """
    if not goals:
        return []
    targets = sweep_table(connection, "sweep_goal", sa.Column("threshold", sa.Double, nullable=False))
    connection.execute(sa.insert(targets), [{"goal": i, "node_id": 0, "threshold": g.threshold} for i, g in enumerate(goals)])
    tests = {g.test for g in goals}
    if len(tests) != 1:
        raise ValueError("one sweep takes goals with one test and different thresholds")
    work = sweep_table(connection, "sweep_value", sa.Column("value", sa.Double, nullable=False), sa.Column("edge_id", EdgeId))
    test = Goal(tests.pop(), 0.0)
    holds = {"<": node.c.payoff < targets.c.threshold, "<=": node.c.payoff <= targets.c.threshold,
             "=": node.c.payoff == targets.c.threshold, ">=": node.c.payoff >= targets.c.threshold,
             ">": node.c.payoff > targets.c.threshold}[test.test]
    terminals = sa.select(targets.c.goal, node.c.id, sa.case((holds, 1.0), else_=0.0)).select_from(
        node.join(targets, sa.true())
    ).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
    connection.execute(sa.insert(work).from_select(["goal", "node_id", "value"], terminals))
    spans = layer_ranges(connection, graph_id)
    for span in reversed(spans):
        if span.rolls:
            chance_values(connection, work, span, keys=("goal",))
        if span.moves:
            best_moves(connection, work, span, objective, keys=("goal",))
    outcomes = _propagate(connection, graph_id, spans, work, len(goals))
    for table in (targets, work):
        table.drop(connection)
    return outcomes


def _propagate(
    connection: sa.Connection, graph_id: int, spans: Sequence[sa.Row], chosen: sa.Table, goals: int
) -> list[dict[float, float]]:
    table = sweep_table(connection, "sweep_reach", sa.Column("reach", sa.Double, nullable=False),
                        sa.Column("denom", sa.Integer, nullable=False))
    reach = summed(table, has_upsert(connection), ("goal", "node_id"))
    root = connection.execute(sa.select(node.c.denom).where(node.c.graph_id == graph_id, node.c.id == 0)).scalar_one()
    connection.execute(sa.insert(table), [{"goal": i, "node_id": 0, "reach": 1.0, "denom": root or 1} for i in range(goals)])
    for span in spans:
        rolls = (
            sa.select(reach.c.goal, edge.c.dst, (reach.c.reach * edge.c.weight / reach.c.denom).label("flow"))
            .select_from(edge.join(reach, reach.c.node_id == edge.c.src))
            .where(edges_of(span, "roll"))
        )
        moves = (
            sa.select(reach.c.goal, edge.c.dst, reach.c.reach.label("flow"))
            .select_from(
                edge.join(chosen, sa.and_(chosen.c.node_id == edge.c.src, chosen.c.edge_id == edge.c.id))
                .join(reach, sa.and_(reach.c.node_id == edge.c.src, reach.c.goal == chosen.c.goal))
            )
            .where(edges_of(span, "move"))
        )
        parts = [part for part, count in ((rolls, span.rolls), (moves, span.moves)) if count]
        flows = (sa.union_all(*parts) if len(parts) > 1 else parts[0]).subquery()
        totals = (
            sa.select(flows.c.goal, flows.c.dst, sa.func.sum(flows.c.flow).label("reach"))
            .where(sa.true())
            .group_by(flows.c.goal, flows.c.dst)
            .subquery()
        )
        rows = sa.select(totals.c.dst, totals.c.goal, totals.c.reach, sa.func.coalesce(node.c.denom, 1)).select_from(
            totals.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == totals.c.dst))
        ).where(sa.true())
        insert_adding(connection, table, rows, "reach", ("goal", "node_id"))
    query = (
        sa.select(reach.c.goal, node.c.payoff, sa.func.sum(reach.c.reach))
        .select_from(reach.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == reach.c.node_id)))
        .where(node.c.kind == "terminal")
        .group_by(reach.c.goal, node.c.payoff)
        .order_by(reach.c.goal, node.c.payoff)
    )
    outcomes: list[dict[float, float]] = [{} for _ in range(goals)]
    for goal, payoff, probability in connection.execute(query):
        outcomes[goal][payoff] = probability
    table.drop(connection)
    return outcomes
