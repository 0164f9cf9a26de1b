"""A head-to-head match of two stored policies on a graph of rows (Pig's), played both ways in one run.

Each seat is one player to move, following its policy, and an edge of sign -1 (the turn handed over) leads to
the other's (:mod:`dicegraph.store.seats`), and the match is Newton's passes over the layers
(:func:`dicegraph.store.solve.cycles.root_values`, the operation ``match``, which Spark folds in one statement).
A race whose turn is stored once plays its matches in :mod:`dicegraph.store.solve.race_matches`.
"""

from __future__ import annotations

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.catalog import find_policy
from dicegraph.store.solve import cycles
from dicegraph.store.seats import FOLLOW, Seat


def head_to_head(connection: sa.Connection, graph_id: int, first: str, second: str,
                 progress: Progress | None = None) -> tuple[float, float]:
    """Return the exact probabilities that a player following stored policy ``first``, moving first, beats one
    following ``second``, and that ``second``, moving first, beats ``first`` (in a two-player zero-sum graph
    seen from the mover; one run, nothing stored). ``progress`` counts the layers done."""
    seats = [Seat(FOLLOW, find_policy(connection, graph_id, first).id, after_pass=1),
             Seat(FOLLOW, find_policy(connection, graph_id, second).id, after_pass=0)]
    first_moves, second_moves = cycles.root_values(connection, graph_id, seats, progress)
    return first_moves, second_moves
