"""How a policy compares with a reference policy: in the same unit, by the matches of a two-player game, and
position by position where the graph can say (:meth:`dicegraph.store.view.GraphView.departures`).

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
from dicegraph.store.catalog import evaluated_policy, list_policies, stored_policy, value_unit
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


def policy_comparison(view: GraphView, policy_name: str, reference_name: str, *, opponent: str | None = None,
                      seat: str = SEATS[0], top: int = 10) -> dict[str, Any]:
    """Return how policy ``policy_name`` compares with ``reference_name`` on the graph ``view`` reads: ``unit``
    (what the values are, :func:`value_unit`), ``expected_loss``, and, position by position (a graph that stores
    its positions, or a race: :meth:`dicegraph.store.view.GraphView.departures`), ``decisions``, ``worse``,
    ``tied`` and the ``deviations`` (None and [] for a game for one whose turn is stored once, or a race compared
    with an agent, which values no move).

    In a two-player game (as the game declares) the expected loss is the reference's probability of winning in
    ``seat`` against ``opponent`` (default: the reference) minus the policy's, played as matches
    (:meth:`dicegraph.store.view.GraphView.played`), and ``seats`` gives both seats (:func:`seat_values`). Raises
    Incomparable for values of other units, or a seat or an opponent named in a one-player game; NotFound for a
    policy not stored or not evaluated.
    """
    connection, game = view.connection, view.spec
    graph_row = view.row
    matches = view.played if game.players == 2 else None
    if seat not in SEATS:
        raise Incomparable(f"no seat {seat!r}: the seats are {' and '.join(SEATS)}")
    if matches is None and (opponent is not None or seat != SEATS[0]):
        raise Incomparable(f"graph {graph_row.id} ({graph_row.game}) is a one-player game: it has no opponent or "
                           "seat to name (leave out --against and --seat)")
    rows = [stored_policy(connection, graph_row, name) for name in (policy_name, reference_name)]
    unit = check_comparable(*rows, game.outcome)
    result: dict[str, Any] = {"policy": policy_name, "reference": reference_name, "unit": unit,
                              "decisions": None, "worse": None, "tied": None, "deviations": []}
    found = view.departures(policy_name, reference_name, top)
    if found is not None:
        result |= found
    if matches is not None:
        opponent = opponent or reference_name
        stored_policy(connection, graph_row, opponent)
        seats = seat_values(matches, policy_name, reference_name, opponent)
        return {**result, "opponent": opponent, "seat": seat, "seats": seats, "expected_loss": seats[seat]["loss"]}
    if found is None:  # one player, a turn stored once: the root values, as the policies list them
        values = {row["name"]: row["value"] for row in list_policies(connection, graph_row.id)}
        for name in (policy_name, reference_name):
            evaluated_policy(connection, graph_row, name)
        gap = values[reference_name] - values[policy_name]
        result["expected_loss"] = gap if rows[1].objective == "max" else -gap
    return result
