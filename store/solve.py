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

A solve may have a :class:`Goal` other than the payoff: a terminal is then
worth 1 where its payoff passes a test and 0 elsewhere, so the solve maximises
(or minimises) the probability of, say, shutting the box (``payoff = 0``) or
scoring under a rival (``payoff < 11``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
TESTS = ("<", "<=", "=", ">=", ">")


@dataclass(frozen=True)
class Goal:
    """A terminal is worth 1 when ``payoff <test> threshold`` holds, else 0.

    >>> Goal("<", 11).text, Goal.parse("payoff <= 3.5")
    ('payoff < 11', Goal(test='<=', threshold=3.5))
    """

    test: str
    threshold: float

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ValueError(f"goal test must be one of {TESTS}, not {self.test!r}")

    @property
    def text(self) -> str:
        """Return the goal as stored in ``policy.goal``, e.g. ``'payoff = 0'``."""
        return f"payoff {self.test} {self.threshold:g}"

    @classmethod
    def parse(cls, text: str) -> Goal:
        """Return the goal that :attr:`text` wrote."""
        _, test, threshold = text.split()
        return cls(test, float(threshold))

    def worth(self, payoff: sa.ColumnElement) -> sa.ColumnElement:
        """Return the SQL expression of a terminal's worth: 1.0 when the test holds, else 0.0."""
        holds = {"<": payoff < self.threshold, "<=": payoff <= self.threshold, "=": payoff == self.threshold,
                 ">=": payoff >= self.threshold, ">": payoff > self.threshold}[self.test]
        return sa.case((holds, 1.0), else_=0.0)


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


def _induce(
    connection: sa.Connection,
    graph_id: int,
    objective: str | None,
    goal: Goal | None,
    chosen: sa.Table,
    progress: LayerProgress | None,
) -> tuple[sa.Table, list[sa.Row]]:
    """Backward induction into a temporary table of node values; return it with the graph's layer spans.

    With ``objective`` None the moves are those in ``chosen``; otherwise the
    best moves are put there.
    """
    work = values_table(connection)
    worth = node.c.payoff if goal is None else goal.worth(node.c.payoff)
    terminals = sa.select(node.c.id, worth).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
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
    return work, spans


def _run(
    connection: sa.Connection,
    policy_row: sa.Row,
    solving: bool,
    progress: LayerProgress | None,
) -> None:
    """Compute and store values, reach and (when solving) choices of one policy."""
    policy_id, graph_id = policy_row.id, policy_row.graph_id
    goal = None if policy_row.goal is None else Goal.parse(policy_row.goal)
    chosen = chosen_table(connection)
    connection.execute(sa.delete(value).where(value.c.policy_id == policy_id))
    if solving:
        connection.execute(sa.delete(choice).where(choice.c.policy_id == policy_id))
    else:
        stored = sa.select(choice.c.node_id, choice.c.edge_id).where(choice.c.policy_id == policy_id)
        connection.execute(sa.insert(chosen).from_select(["node_id", "edge_id"], stored))
    work, spans = _induce(connection, graph_id, policy_row.objective if solving else None, goal, chosen, progress)
    if solving:
        picked = sa.select(sa.literal(policy_id), chosen.c.node_id, chosen.c.edge_id)
        connection.execute(sa.insert(choice).from_select(["policy_id", "node_id", "edge_id"], picked))
    reach = propagate(connection, graph_id, spans, chosen)
    rows = sa.select(sa.literal(policy_id), work.c.node_id, work.c.value, sa.func.coalesce(reach.c.reach, 0.0)).select_from(
        work.outerjoin(reach, reach.c.node_id == work.c.node_id)
    )
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value", "reach"], rows))
    for table in (work, chosen, reach):
        table.drop(connection)


def solved_outcomes(connection: sa.Connection, graph_id: int, objective: str, goal: Goal | None = None) -> dict[float, float]:
    """Solve without storing anything; return the optimal policy's terminal payoff -> probability.

    For the many throw-away solves of an analysis (one per rival score, say):
    the policy, its values and its reach stay in temporary tables.
    """
    chosen = chosen_table(connection)
    work, spans = _induce(connection, graph_id, objective, goal, chosen, None)
    reach = propagate(connection, graph_id, spans, chosen)
    query = (
        sa.select(node.c.payoff, sa.func.sum(reach.c.reach))
        .select_from(reach.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == reach.c.node_id)))
        .where(node.c.kind == "terminal")
        .group_by(node.c.payoff)
        .order_by(node.c.payoff)
    )
    outcomes = {payoff: probability for payoff, probability in connection.execute(query)}
    for table in (work, chosen, reach):
        table.drop(connection)
    return outcomes


def solve(
    connection: sa.Connection,
    graph_id: int,
    objective: str = "max",
    name: str = "optimal",
    progress: LayerProgress | None = None,
    goal: Goal | None = None,
) -> int:
    """Solve the graph for ``objective``; store policy ``name``, its choices, values and reach; return its id.

    With a ``goal``, terminals are worth 1 where it holds (values are then
    probabilities). A policy of that name made by an earlier solve is
    replaced; an agent's name is refused. ``progress`` is called with 1 after
    each layer.
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
                id=policy_id, graph_id=graph_id, name=name, objective=objective, method="solve", created_at=now(),
                goal=None if goal is None else goal.text,
            )
        )
    else:
        policy_id = old.id
        connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(
            objective=objective, created_at=now(), goal=None if goal is None else goal.text))
    _run(connection, _policy_row(connection, policy_id), True, progress)
    return policy_id


def _policy_row(connection: sa.Connection, policy_id: int) -> sa.Row:
    return connection.execute(sa.select(policy).where(policy.c.id == policy_id)).one()


def evaluate(connection: sa.Connection, policy_id: int, progress: LayerProgress | None = None) -> None:
    """Store every node's value (under the policy's goal, if any) and reach under its stored choices."""
    _run(connection, _policy_row(connection, policy_id), False, progress)


def is_evaluated(connection: sa.Connection, policy_id: int) -> bool:
    """Return whether the policy's values (and reach) are stored."""
    return root_value(connection, policy_id) is not None
