"""Two seats on a graph of rows (Pig's): a head-to-head match of two stored policies, played both ways in one run,
and the best response to a stored policy, stored as a policy of its own.

Each seat is one player to move and an edge of sign -1 (the turn handed over) leads to the other's
(:mod:`dicegraph.store.seats`); the passes are Newton's over the layers
(:func:`dicegraph.store.solve.cycles.solve_components`). A match follows both policies (the operation ``match``,
which Spark folds in one statement); a best response maximises in one seat against a policy followed in the
other. A race whose turn is stored once plays its matches in :mod:`dicegraph.store.solve.race_matches`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.catalog import find_policy, policy_ids
from dicegraph.store.convergence import Convergence
from dicegraph.store.schema import choice, value
from dicegraph.store.seats import FOLLOW, SEATS, Matches, Response, Seat, seat_values
from dicegraph.store.solve import cycles
from dicegraph.store.solve.dispatch import dispatchable
from dicegraph.store.solve.layers import finish_solve, forget, record_solve
from dicegraph.store.solve.objectives import response_name


def head_to_head(connection: sa.Connection, graph_id: int, first: str, second: str,
                 progress: Progress | None = None) -> tuple[float, float]:
    """Return the exact probabilities that a player following stored policy ``first``, moving first, beats one
    following ``second``, and that ``second``, moving first, beats ``first`` (in a two-player zero-sum graph
    seen from the mover; one run, nothing stored). ``progress`` counts the layers done."""
    return head_to_heads(connection, graph_id, [(first, second)], progress)[0]


def head_to_heads(connection: sa.Connection, graph_id: int, pairs: Sequence[tuple[str, str]],
                  progress: Progress | None = None) -> list[tuple[float, float]]:
    """Return :func:`head_to_head` of each pair of stored policies ``(first, second)``, played together (the
    operation ``match``: a run a pair by the reference, one fold for every pair on Spark)."""
    if not pairs:
        return []
    ids = policy_ids(connection, graph_id)
    for name in dict.fromkeys(name for pair in pairs for name in pair):
        if name not in ids:
            find_policy(connection, graph_id, name)  # raises NotFound, in one line
    seatings = [[Seat(FOLLOW, ids[first], after_pass=1), Seat(FOLLOW, ids[second], after_pass=0)]
                for first, second in pairs]
    return [(first_moves, second_moves)
            for first_moves, second_moves in cycles.root_values(connection, graph_id, seatings, progress)]


@dispatchable("best response")
def store_response(connection: sa.Connection, graph_id: int, policy_id: int, answered_id: int,
                   progress: Progress | None = None, first_guess: cycles.Guess | None = None
                   ) -> tuple[Response, Convergence]:
    """Store, as policy ``policy_id`` (its rows forgotten), the best response to the stored policy
    ``answered_id``: at every position, the move that gives the player to move the best chance of winning when
    the opponent follows ``answered_id`` (seat 0 maximises, seat 1 follows, each the other's after a pass),
    and each position's value so played (reach unknown). Return its wins against it in each seat, and how its
    components converged. ``first_guess`` (the game's hook, as the optimum's solve takes it) saves passes."""
    seats = [Seat.maximising(after_pass=1), Seat(FOLLOW, answered_id, after_pass=0)]
    tables, convergence = cycles.solve_components(connection, graph_id, seats, progress, first_guess)
    values = cycles.values_of(tables).subquery()
    connection.execute(sa.insert(value).from_select(
        ["policy_id", "node_id", "value", "reach"],
        sa.select(sa.literal(policy_id), values.c.node_id, values.c.coeff, sa.null())))
    moves = cycles.moves_of(tables).subquery()
    connection.execute(sa.insert(choice).from_select(
        ["policy_id", "node_id", "edge_id"], sa.select(sa.literal(policy_id), moves.c.node_id, moves.c.edge_id)))
    roots = cycles.root_of(connection, tables)
    tables.drop(connection)
    return Response(roots[0], 1.0 - roots[1]), convergence


def solve_response(connection: sa.Connection, graph_id: int, answered: str, name: str | None = None,
                   progress: Progress | None = None, first_guess: cycles.Guess | None = None) -> tuple[int, Response]:
    """Solve and store the best response to the stored policy ``answered`` of a two-player graph of rows as
    ``name`` (default :func:`response_name`); return its id and its wins against ``answered`` in each seat.
    ``progress`` counts the layers done; ``first_guess`` saves passes (:func:`store_response`). Raises NotFound,
    in one line, where ``answered`` is not stored."""
    answered_id = find_policy(connection, graph_id, answered).id
    policy_id = record_solve(connection, graph_id, name or response_name(answered), "max", responds_to=answered_id)
    forget(connection, [policy_id], (value, choice))
    response, convergence = store_response(connection, graph_id, policy_id, answered_id, progress, first_guess)
    finish_solve(connection, policy_id, convergence.record())
    return policy_id, response


def response_figures(matches: Matches, game_value: float, answered: str, response: str, optimum: str) -> dict[str, Any]:
    """Return how the best ``response`` to ``answered`` does against it beside the self-play ``optimum``, whose
    value (moving first, in self-play) is ``game_value``: in each seat and on average over the two (two matches),
    ``optimum_wins`` (what the optimum wins against ``answered``), ``response_wins``, ``gain`` (the second less
    the first) and ``exploitability`` (what the best response wins beyond the game's value: ``game_value`` in the
    first seat, one minus it in the second).

    >>> table = {("r", "a"): (0.75, 0.25), ("o", "a"): (0.625, 0.375)}
    >>> figures = response_figures(lambda pairs: [table[pair] for pair in pairs], 0.5, "a", "r", "o")
    >>> figures["response_wins"], figures["exploitability"]["mean"]
    ({'first': 0.75, 'second': 0.75, 'mean': 0.75}, 0.25)
    """
    seats = seat_values(matches, response, optimum, answered)
    game = {SEATS[0]: game_value, SEATS[1]: 1.0 - game_value}

    def with_mean(figures: dict[str, float]) -> dict[str, float]:
        return {**figures, "mean": sum(figures[seat] for seat in SEATS) / len(SEATS)}

    return {"policy": answered, "response": response,
            "optimum_wins": with_mean({seat: seats[seat]["reference"] for seat in SEATS}),
            "response_wins": with_mean({seat: seats[seat]["policy"] for seat in SEATS}),
            "gain": with_mean({seat: -seats[seat]["loss"] for seat in SEATS}),
            "exploitability": with_mean({seat: seats[seat]["policy"] - game[seat] for seat in SEATS})}
