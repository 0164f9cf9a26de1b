"""One graph solved for many goals at once: the solver's statements with a goal number in every key.

An analysis that needs a solve per threshold (a second player
who solves for beating each score the first player can make) would otherwise
run the whole backward induction and propagation once per threshold. Here
each layer runs the solver's own statements (:func:`dicegraph.store.solve.layers.chance_values`
and :func:`dicegraph.store.solve.layers.best_moves`, with the goal as a further key) for all
the thresholds together, and nothing is stored: the result is each goal's
optimal outcome distribution. Ties between moves go, as in the solver, to the
move streamed first among those within :data:`dicegraph.graphs.protocol.TIE`. A backend may register a faster
``sweep`` (:mod:`dicegraph.store.solve.dispatch`): Spark folds a graph small enough in one row a goal, one statement
whatever its depth.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from dicegraph.store.propagate import outcome_distribution, outcomes_by_goal, propagate
from dicegraph.store.schema import EdgeId, layer_ranges, node
from dicegraph.store.scratch import sweep_table
from dicegraph.store.solve.dispatch import dispatchable
from dicegraph.store.solve.layers import Goal, best_moves, chance_values


def sweep_outcomes(
    connection: sa.Connection, graph_id: int, objective: str, goals: Sequence[Goal]
) -> list[dict[float, float]]:
    """Return, for each goal, the terminal payoff -> probability under the policy optimal for that goal.

    Equal to calling :func:`dicegraph.store.solve.layers.solved_outcomes` once per goal.
    """
    if not goals:
        return []
    tests = {g.test for g in goals}
    if len(tests) != 1:
        raise ValueError("one sweep takes goals with one test and different thresholds")
    targets = sweep_table(connection, "sweep_goal", sa.Column("threshold", sa.Double, nullable=False))
    connection.execute(sa.insert(targets), [{"goal": i, "node_id": 0, "threshold": g.threshold} for i, g in enumerate(goals)])
    outcomes = swept_outcomes(connection, graph_id, objective, targets, tests.pop())
    targets.drop(connection)
    return outcomes


@dispatchable("sweep")
def swept_outcomes(connection: sa.Connection, graph_id: int, objective: str, targets: sa.Table,
                   test: str) -> list[dict[float, float]]:
    """Return, for each goal of ``targets`` (``goal``, numbered from 0, and ``threshold``), the terminal payoff ->
    probability under the policy optimal for a terminal worth 1 where its payoff passes ``test`` against the
    goal's threshold."""
    goals = connection.execute(sa.select(sa.func.count()).select_from(targets)).scalar_one()
    work = sweep_table(connection, "sweep_value", sa.Column("value", sa.Double, nullable=False), sa.Column("edge_id", EdgeId))
    holds = {"<": node.c.payoff < targets.c.threshold, "<=": node.c.payoff <= targets.c.threshold,
             "=": node.c.payoff == targets.c.threshold, ">=": node.c.payoff >= targets.c.threshold,
             ">": node.c.payoff > targets.c.threshold}[test]
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
    propagated = propagate(connection, graph_id, spans, work, key="goal", key_values=range(goals))
    outcomes = outcomes_by_goal(connection, graph_id, propagated.by_node, goals)
    for table in (propagated.table, work):
        table.drop(connection)
    return outcomes


def target_chances(connection: sa.Connection, graph_id: int, objective: str, policy_id: int) -> list[dict[str, float]]:
    """Return, for each target T that the outcome of graph ``graph_id`` may reach (each terminal payoff but the
    one every game reaches: the lowest where ``objective`` is ``max``, the highest where it is ``min``), the chance
    that the outcome reaches it (at least T where the game maximises, at most T where it minimises) under the
    stored, evaluated policy ``policy_id`` and under the policy best for T: ``{"target", "policy", "best"}``, the
    targets in order, one sweep for all (:func:`sweep_outcomes`)."""
    test = ">=" if objective == "max" else "<="
    payoffs = sorted(connection.execute(sa.select(node.c.payoff).distinct().where(
        node.c.graph_id == graph_id, node.c.kind == "terminal")).scalars())
    targets = payoffs[1:] if objective == "max" else payoffs[:-1]
    best = sweep_outcomes(connection, graph_id, "max", [Goal(test, target) for target in targets])
    held = outcome_distribution(connection, policy_id, graph_id)

    def chance(outcomes: dict[float, float], target: float) -> float:
        return sum(p for outcome, p in outcomes.items() if (outcome >= target if test == ">=" else outcome <= target))

    return [{"target": target, "policy": chance(held, target), "best": chance(outcomes, target)}
            for target, outcomes in zip(targets, best)]

