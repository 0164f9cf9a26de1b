"""A head-to-head match of two stored policies on a graph of rows (Pig's), played both ways in one run.

Each seat is one player to move, following its policy, and an edge of sign -1 (the turn handed over) leads to
the other's (:mod:`dicegraph.store.seats`). Where the graph is folded in one row (Spark, up to
:data:`dicegraph.store.backends.spark.graph_fold.EDGE_LIMIT` edges), the match is one statement (:func:`dicegraph.store.backends.spark.cycle_fold.root_values`);
elsewhere Newton's passes over the layers (:func:`dicegraph.store.solve.cycles.root_values`). A race whose turn is stored once
plays its matches in :mod:`dicegraph.store.solve.race_matches`.
"""

from __future__ import annotations

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.catalog import find_policy
from dicegraph.store.solve import cycles
from dicegraph.store.seats import FOLLOW, Seat
from dicegraph.store.backends.spark import cycle_fold, graph_fold


def head_to_head(connection: sa.Connection, graph_id: int, first: str, second: str,
                 progress: Progress | None = None) -> tuple[float, float]:
    """Return the exact probabilities that a player following stored policy ``first``, moving first, beats one
    following ``second``, and that ``second``, moving first, beats ``first`` (in a two-player zero-sum graph
    seen from the mover; one run, nothing stored). ``progress`` counts the layers done."""
    seats = [Seat(FOLLOW, find_policy(connection, graph_id, first).id, after_pass=1),
             Seat(FOLLOW, find_policy(connection, graph_id, second).id, after_pass=0)]
    if graph_fold.folds(connection, graph_id):
        first_moves, second_moves = cycle_fold.root_values(connection, graph_id, seats)
        if progress is not None:
            progress(sum(len(part.spans) for part in cycles.components(connection, graph_id)) * len(seats))
    else:
        first_moves, second_moves = cycles.root_values(connection, graph_id, seats, progress)
    return first_moves, second_moves
