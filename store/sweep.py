"""One graph solved for many goals at once: the solver's statements with a goal number in every key.

An analysis that needs a solve per threshold (a second player
who solves for beating each score the first player can make) would otherwise
run the whole backward induction and propagation once per threshold. Here
each layer runs the solver's own statements (:func:`dicegraph.store.solve.layers.chance_values`
and :func:`dicegraph.store.solve.layers.best_moves`, with the goal as a further key) for all
the thresholds together, and nothing is stored: the result is each goal's
optimal outcome distribution. Ties between moves go, as in the solver, to the
move streamed first among those within :data:`dicegraph.graphs.protocol.TIE`. On Spark a graph small enough is folded in
one row a goal instead (:mod:`dicegraph.store.backends.spark.graph_fold`): one statement whatever its depth.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from dicegraph.store.propagate import propagate
from dicegraph.store.schema import EdgeId, layer_ranges, node
from dicegraph.store.scratch import sweep_table
from dicegraph.store.backends.spark import graph_fold
from dicegraph.store.solve.layers import Goal, best_moves, chance_values


def sweep_outcomes(
    connection: sa.Connection, graph_id: int, objective: str, goals: Sequence[Goal]
) -> list[dict[float, float]]:
    """Return, for each goal, the terminal payoff -> probability under the policy optimal for that goal.

    Equal to calling :func:`dicegraph.store.solve.layers.solved_outcomes` once per goal.
    """
    if not goals:
        return []
    targets = sweep_table(connection, "sweep_goal", sa.Column("threshold", sa.Double, nullable=False))
    connection.execute(sa.insert(targets), [{"goal": i, "node_id": 0, "threshold": g.threshold} for i, g in enumerate(goals)])
    tests = {g.test for g in goals}
    if len(tests) != 1:
        raise ValueError("one sweep takes goals with one test and different thresholds")
    if graph_fold.folds(connection, graph_id):
        outcomes = _folded(connection, graph_id, objective, targets, tests.pop(), len(goals))
        targets.drop(connection)
        return outcomes
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


def _folded(connection: sa.Connection, graph_id: int, objective: str, targets: sa.Table, test: str,
            goals: int) -> list[dict[float, float]]:
    """Return :func:`sweep_outcomes`' answer from the graph folded in one row a goal (``targets``' rows), a terminal
    worth 1 where its payoff passes ``test`` against the goal's threshold."""
    keys = sa.select(targets.c.goal, sa.null().label("given"), targets.c.threshold)
    folded = graph_fold.fold(connection, graph_id, node.c.payoff, objective, keys, key="goal",
                             terminal=f"IF(n.p {test} keyed.threshold, 1D, 0D)")
    outcomes = _outcomes(connection, graph_id, folded, goals)
    folded.drop(connection)
    return outcomes


def _outcomes(connection: sa.Connection, graph_id: int, reach: sa.FromClause, goals: int) -> list[dict[float, float]]:
    """Return each goal's terminal payoff -> probability from ``reach`` (``goal, node_id, reach``): the payoffs
    reached, added up."""
    query = (
        sa.select(reach.c.goal, node.c.payoff, sa.func.sum(reach.c.reach))
        .select_from(reach.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == reach.c.node_id)))
        .where(node.c.kind == "terminal", reach.c.reach > 0)
        .group_by(reach.c.goal, node.c.payoff)
        .order_by(reach.c.goal, node.c.payoff)
    )
    outcomes: list[dict[float, float]] = [{} for _ in range(goals)]
    for goal, payoff, probability in connection.execute(query):
        outcomes[goal][payoff] = probability
    return outcomes


def _propagate(
    connection: sa.Connection, graph_id: int, spans: Sequence[sa.Row], chosen: sa.Table, goals: int
) -> list[dict[float, float]]:
    propagated = propagate(connection, graph_id, spans, chosen, key="goal", key_values=range(goals))
    outcomes = _outcomes(connection, graph_id, propagated.by_node, goals)
    propagated.table.drop(connection)
    return outcomes
