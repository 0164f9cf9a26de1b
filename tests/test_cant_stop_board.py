"""Can't Stop on a real board: the notation, the rules of a roll, and the solved turn against a plain recursion."""

from __future__ import annotations

import functools
import json
import math

import pytest
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.graphs import cant_stop_board as rules
from dicegraph.graphs import get_game
from dicegraph.graphs.errors import BadParameter
from dicegraph.store.catalog import find_policy, root_value
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from dicegraph.store.solve.entry import ensure_solved

GAME = get_game("cant-stop-board")


@pytest.mark.parametrize(
    ("text", "message"),
    [("13:1", "columns are 2..12"), ("7:13", "step 0..12"), ("7:3>2", "above your marker"),
     ("2:>1,3:>1,4:>1,5:>1", "only 3"), ("7:1,7:2", "named twice"), ("seven", "write COLUMN:STEP")],
)
def test_impossible_boards_are_refused(text: str, message: str) -> None:
    with pytest.raises(BadParameter, match=message):
        rules.parse_board(text)


def test_the_rules_of_a_roll() -> None:
    board = rules.parse_board("2:>3,7:10>12,9:x")
    state = board.runners
    # 1-1-5-6: pairs (2,11), (6,7), (7,6): 2 is at its top, so (2,11) climbs 11 only; (6,7) needs a new runner for 6
    assert sorted(rules.describe_options(board, state, (1, 1, 5, 6))) == ["11+1", "6+1, 7+1"]
    # 3-4-3-4: (7,7) climbs 7 twice to its top 13; (6,8) takes both new columns only one at a time (one runner left)
    assert sorted(rules.describe_options(board, state, (3, 3, 4, 4))) == ["6+1", "7+1", "8+1"]
    assert rules.options(board, state, (3, 3, 3, 6)) == {((2, 3), (6, 1), (7, 12))}  # (6,9): 9 is claimed, 6 alone
    full = rules.parse_board("2:>3,12:>3,7:>1")  # three runners, two of them on their tops
    assert rules.options(full, full.runners, (1, 1, 1, 1)) == frozenset()  # (2,2) only: bust
    # 7 on its top: (7,7) cannot climb; (6,8) takes two new runners, two being free
    assert rules.options(rules.parse_board("7:>13"), ((7, 13),), (3, 4, 3, 4)) == {((6, 1), (7, 13), (8, 1))}


def recursion_value(board_text: str, objective: str) -> float:
    """The turn's optimal value from the board (rolling first), by plain recursion over states with the rules."""
    board = rules.parse_board(board_text)

    @functools.cache
    def rolling(state: rules.State) -> float:
        total = 0.0
        for dice, weight in rules.ROLLS:
            allowed = rules.options(board, state, dice)
            if allowed:
                total += weight * max(max(rules.payoff(board, after, objective), rolling(after)) for after in allowed)
        return total / 1296

    return rolling(board.runners)


@pytest.mark.parametrize("board", ["2:>2,3:>4,12:>2", "10:5>6,11:3>4,4:x", "6:9>10,7:11>12,8:9>10"])
@pytest.mark.parametrize("objective", ["progress", "claim"])
def test_the_solved_turn_equals_a_plain_recursion(board: str, objective: str) -> None:
    engine = open_database("sqlite://", create=True)
    values = {}
    for prune in (False, True):
        built = build_graph(engine, GAME, {"board": rules.parse_board(board).text, "objective": objective, "prune": prune})
        with engine.begin() as connection:
            ensure_solved(connection, built.graph_id, GAME)
            values[prune] = root_value(connection, find_policy(connection, built.graph_id, "optimal").id)
    expected = recursion_value(board, objective)
    assert math.isclose(values[False], expected, rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(values[True], expected, rel_tol=1e-12, abs_tol=1e-15)  # the bound changes no value


def test_advise_json_and_bad_roll(db_url: str) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--db", db_url, "cant-stop", "advise", "--board", "2:>2,3:>4,12:>2",
                                  "--roll", "1,2,2,6", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    best = max(data["alternatives"], key=lambda row: row["value"])
    assert data["decision"] == best["move"] and data["value"] == best["value"]
    bad = runner.invoke(main, ["--db", db_url, "cant-stop", "advise", "--board", "7:3", "--roll", "1,2,3"])
    assert bad.exit_code != 0 and "four dice" in bad.stderr
