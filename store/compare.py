"""How a policy's moves compare with a reference policy's continuation values.

For every decision node with at least two moves, each move is worth
``reward + sign * value(dst)`` under the *reference* policy (usually a solve, so these
are optimal continuation values). A policy's move is *worse* where it is worth
less than the best move beyond the solver's tie tolerance; a node is *tied*
where more than one move is best. The cost of a deviation is what it loses
there times the probability that the policy reaches the node (a graph with
cycles has no reach: its deviations are ranked by their loss alone).

Only values of one unit compare: a policy solved for a goal (the probability
of shutting the box) is not compared with one valued by the game's payoff (an
expected score). In a two-player game a policy's value depends on its
opponent, so the expected loss is a match's: the probability that the
policy, in a stated seat against a stated opponent, wins, against the
reference's in the same seat against the same opponent
(:func:`seat_values`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import TIE
from dicegraph.store.catalog import evaluated_policy, list_policies, stored_policy, value_unit
from dicegraph.store.schema import choice, edge, graph, graph_edge_span, node, value
from dicegraph.store.seats import SEATS, seat_values

if TYPE_CHECKING:
    from dicegraph.store.view import GraphView

class Incomparable(DicegraphError):
    """Two policies whose values cannot be compared: of different units, or named where the game has no such seat."""


def check_comparable(policy: sa.Row, reference: sa.Row, outcome: str) -> str:
    """Return the unit both policies' values are in; raise Incomparable, in one line, when they differ."""
    units = [value_unit(row.goal, outcome) for row in (policy, reference)]
    if units[0] != units[1]:
        raise Incomparable(f"cannot compare {policy.name} ({units[0]}) with {reference.name} ({units[1]}): their "
                           "values are in different units; compare it with a policy of its own unit")
    return units[0]


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


def policy_comparison(view: GraphView, policy_name: str, reference_name: str, *, opponent: str | None = None,
                      seat: str = SEATS[0], top: int = 10) -> dict[str, Any]:
    """Return how policy ``policy_name`` compares with ``reference_name`` on the graph ``view`` reads: ``unit``
    (what the values are, :func:`value_unit`), ``expected_loss``, and, position by position (a graph that stores
    its positions, not a turn stored once), ``decisions``, ``worse``, ``tied`` and the ``deviations``
    (:func:`compare_policies`; None and [] otherwise).

    In a two-player game (as the game declares) the expected loss is the reference's probability of winning in
    ``seat`` against ``opponent`` (default: the reference) minus the policy's, played as matches
    (:meth:`dicegraph.store.view.GraphView.match`), and ``seats`` gives both seats (:func:`seat_values`). Raises
    Incomparable for values of other units, or a seat or an opponent named in a one-player game; NotFound for a
    policy not stored or not evaluated.
    """
    connection, game = view.connection, view.spec
    graph_row = connection.execute(sa.select(graph).where(graph.c.id == view.graph_id)).one()
    match = view.match if game.players == 2 else None
    per_position = view.keeps_positions
    if seat not in SEATS:
        raise Incomparable(f"no seat {seat!r}: the seats are {' and '.join(SEATS)}")
    if match is None and (opponent is not None or seat != SEATS[0]):
        raise Incomparable(f"graph {graph_row.id} ({graph_row.game}) is a one-player game: it has no opponent or "
                           "seat to name (leave out --against and --seat)")
    rows = [stored_policy(connection, graph_row, name) for name in (policy_name, reference_name)]
    unit = check_comparable(*rows, game.outcome)
    result: dict[str, Any] = {"policy": policy_name, "reference": reference_name, "unit": unit,
                              "decisions": None, "worse": None, "tied": None, "deviations": []}
    if per_position:
        rows = [evaluated_policy(connection, graph_row, name) for name in (policy_name, reference_name)]
        result |= compare_policies(connection, graph_row.id, *rows, top)
    if match is not None:
        opponent = opponent or reference_name
        stored_policy(connection, graph_row, opponent)
        seats = seat_values(match, policy_name, reference_name, opponent)
        return {**result, "opponent": opponent, "seat": seat, "seats": seats, "expected_loss": seats[seat]["loss"]}
    if not per_position:  # one player, a turn stored once: the root values, as the policies list them
        values = {row["name"]: row["value"] for row in list_policies(connection, graph_row.id)}
        for name in (policy_name, reference_name):
            evaluated_policy(connection, graph_row, name)
        gap = values[reference_name] - values[policy_name]
        result["expected_loss"] = gap if rows[1].objective == "max" else -gap
    return result
