"""School's solve as the tests call it: the store's generic turn solve (``store/solve/turns.py``) with School's turn.

Thin wrappers naming the graph by id, so that a test reads as one call; each
calls the store's function with School's turn structure (what its rules declare).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from dicegraph.graphs import get_game
from dicegraph.graphs.school import game as rules
from dicegraph.graphs.school.advise import advise as advise_on
from dicegraph.graphs.school.rules import LAST_STATES
from dicegraph.graphs.school.stored import average_table as averages_from, decision_array as array_of
from dicegraph.store.solve import readers, turns
from dicegraph.store import turn_graph
from dicegraph.store.view import GraphView


class TurnGraph:
    """``TurnGraph.load(connection, graph_id)``: the stored School graph's parts."""

    @staticmethod
    def load(connection: sa.Connection, graph_id: int) -> turn_graph.TurnGraph:
        return turn_graph.TurnGraph.load(connection, graph_id, get_game("school").turn({}))


def ensure_policy(connection: sa.Connection, graph_id: int, name: str) -> int:
    return turns.ensure_policy(connection, TurnGraph.load(connection, graph_id), name)


def solve_policy(connection: sa.Connection, graph_id: int, name: str, **options: Any) -> int:
    return turns.solve_policy(connection, TurnGraph.load(connection, graph_id), name, **options)


def state_result(connection: sa.Connection, graph_id: int, policy_id: int, key: str) -> sa.Row:
    return readers.state_result(connection, graph_id, policy_id, key)


def game_score(connection: sa.Connection, graph_id: int, policy_id: int) -> tuple[float, float]:
    return readers.game_score(connection, graph_id, policy_id, rules.state_key(0))


def decision_array(connection: sa.Connection, graph_id: int, policy_id: int) -> Any:
    return array_of(readers.stored_decisions(connection, graph_id, policy_id))


def average_table(connection: sa.Connection, graph_id: int) -> dict[str, float]:
    """Each combination's average (the optimum solved down to the last layer first, when missing)."""
    optimal = ensure_policy(connection, graph_id, "optimal")
    last = len(rules.COMBINATIONS) - 1
    if not turns.is_solved(connection, optimal, last):
        solve_policy(connection, graph_id, "optimal", down_to=last)
    return averages_from({last: state_result(connection, graph_id, optimal, last).value for last in LAST_STATES})


def advise(connection: sa.Connection, graph_id: int, name: str, used: int, dice: tuple[int, ...],
           rerolls_left: int) -> dict[str, Any]:
    return advise_on(GraphView(connection, graph_id, get_game("school")), name, used, dice, rerolls_left)
