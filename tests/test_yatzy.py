"""Scandinavian Yatzy (``yahtzee -p rules=yatzy``) against ``yatzy-solver``, a solver nobody here wrote: every box's
points as its scorer gives them, and every turn state of the last boxes, solved through SQL on each backend, equal to
its table's value of the same state (``Solver.state_values``: boxes filled, upper total), position by position.

The whole game (1,430,528 turn states) is solved in tests/bench/bench_yahtzee.py ``--rules yatzy``, against
``yatzy-solver``'s 248.4399893778553.
"""

from __future__ import annotations

import functools
import json
import math
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from dicegraph.graphs.exact import exact_value
from dicegraph.graphs.yahtzee import boxes
from dicegraph.graphs.yahtzee.rules import rules as yatzy_rules
from tests.postgres import database_on
from tests.test_yahtzee import upper_totals_a_set

YATZY = boxes.Sheet("yatzy")
LAST_BOXES = "Fours,Fives,Sixes,Two pairs,Full house,Yatzy"  # the upper bonus reachable from three upper boxes
RELATIVE = 1e-12


@functools.cache
def peer() -> Any:
    """Return ``yatzy-solver``'s solver of ``yatzy-scandinavian`` (a few seconds); skip (outside CI) without it."""
    try:
        import yatzy_solver
    except ImportError:
        if os.environ.get("CI"):
            raise RuntimeError("CI must compare Yatzy with yatzy-solver: pip install 'dicegraph[test]'") from None
        pytest.skip("yatzy-solver is not installed: pip install yatzy-solver")
    return yatzy_solver.Solver.build(yatzy_solver.Variant("yatzy-scandinavian"))


def test_every_box_scores_every_roll_as_yatzy_solver_scores_it() -> None:
    variant = peer().variant
    assert [name.replace("_", " ") for name in variant.categories] == [box.lower() for box in YATZY.boxes]
    for dice in boxes.OUTCOMES:
        for box, category in enumerate(variant.categories):
            assert YATZY.points(box, dice) == variant.score(category, list(dice)), (category, dice)


def test_the_turn_states_are_the_whole_games_with_the_boxes_out_of_play_filled() -> None:
    """A game of some boxes starts where the whole game has the others filled, upper total 0; its states are
    those the whole game reaches from there."""
    sheet = boxes.sheet_of({"rules": "yatzy", "bonuses": "on", "boxes": LAST_BOXES})
    assert sheet.turns == 6 and bin(sheet.first_filled).count("1") == 9
    upper_sets = {state.filled & 0b111111 for state in boxes.states(sheet)}
    assert upper_sets == {sheet.first_filled & 0b111111 | played << 3 for played in range(8)}
    for state in boxes.states(sheet):
        assert state.filled & sheet.first_filled == sheet.first_filled
        assert state.upper in boxes.upper_totals(state.filled & ~sheet.first_filled & 0b111111)


def test_the_whole_game_has_a_state_for_each_upper_total_the_filled_upper_boxes_allow() -> None:
    """1,430,528 turn states: for each set of upper boxes filled, the totals (capped at 63) they can hold, times
    the 2**9 sets of lower boxes (no Yatzy bonus, so no flag)."""
    assert len(boxes.states(YATZY)) == sum(upper_totals_a_set()) * 2**9 == 1_430_528
    assert len(boxes.end_labels(YATZY)) == 6 * 6 + 9 and len(boxes.end_labels(boxes.Sheet("yatzy", "off"))) == 15


@pytest.mark.parametrize("backend", ["sqlite", "duckdb", "postgresql"])
def test_every_state_of_the_last_boxes_equals_yatzy_solvers(backend: str, tmp_path: Path) -> None:
    """Six boxes in play, three of them upper: every stored state's optimal value, the upper bonus of 50 included,
    is yatzy-solver's value of the same state to 1e-12."""
    solver = peer()
    params = {"rules": "yatzy", "boxes": LAST_BOXES}
    with database_on(backend, tmp_path) as url:
        database = dicegraph.open(url)
        database.build("yahtzee", params)
        database.solve("yahtzee", params=params)
        graph = database.graph("yahtzee", params)["id"]
        rows = database.query(
            "SELECT node.key, turn_policy.value FROM turn_policy "
            "JOIN policy ON policy.id = turn_policy.policy_id "
            "JOIN node ON node.graph_id = policy.graph_id AND node.id = turn_policy.node_id "
            f"WHERE policy.graph_id = {graph} AND policy.name = 'optimal'",
            write=True)  # the tests' PostgreSQL role is a superuser, whom a read-only query refuses
    sheet = boxes.sheet_of({"rules": "yatzy", "bonuses": "on", "boxes": LAST_BOXES})
    expected_keys = {boxes.state_key(state, sheet) for state in boxes.states(sheet) if state.filled != sheet.all_filled}
    assert {row["key"] for row in rows} == expected_keys
    states = [boxes.parse_state_key(row["key"]) for row in rows]
    theirs = solver.state_values(np.array([state.filled for state in states], dtype=np.uint32),
                                 np.array([state.upper for state in states], dtype=np.uint16),
                                 np.zeros(len(states), dtype=bool))
    for row, state, value in zip(rows, states, theirs):
        assert math.isclose(row["value"], value, rel_tol=RELATIVE, abs_tol=1e-12), (row["key"], row["value"], value)
    assert {state.upper for state in states} >= {0, boxes.UPPER_BONUS_AT}  # before and after the bonus is paid


def test_two_boxes_left_equal_the_rules_in_fractions(tmp_path: Path) -> None:
    """One pair and Two pairs, the other boxes filled: the SQL solve equals the rules' exact value in fractions."""
    params = {"rules": "yatzy", "bonuses": "on", "boxes": "One pair,Two pairs"}
    exact = exact_value(yatzy_rules(params), "max")
    database = dicegraph.open(f"sqlite:///{tmp_path / 'yatzy.db'}")
    report = database.report("yahtzee", params)
    optimal = next(row for row in report["policies"] if row["name"] == "optimal")
    assert math.isclose(optimal["value"], exact, rel_tol=RELATIVE)
    assert math.isclose(float(exact), peer().state_value(
        "upper 0 | filled " + ",".join(c for i, c in enumerate(peer().variant.categories) if i not in (6, 7))),
        rel_tol=RELATIVE)
    assert isinstance(exact, Fraction)


def test_the_report_plays_games_from_the_rules_within_four_standard_errors(tmp_path: Path) -> None:
    """The report's Monte Carlo plays each policy's stored decisions from Yatzy's rules (graphs/yahtzee/play.py)."""
    played = "Fours,Fives,Sixes,Chance,Yatzy"
    result = CliRunner().invoke(main, ["--db", f"sqlite:///{tmp_path / 'yatzy.db'}", "report", "yahtzee", "-p",
                                       "rules=yatzy", "-p", f"boxes={played}", "-n", "20000", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rules"] == {"rules": "yatzy", "bonuses": "on", "boxes": played.split(",")}
    for row in data["policies"]:
        assert abs(row["monte_carlo"]["z"]) < 4, row


@pytest.mark.parametrize(("given", "said"), [
    (["rules=yatzy", "bonuses=upper"], "give bonuses=on (or off)"),
    (["rules=yatzy", "boxes=Aces"], "unknown box 'Aces' (known: Ones"),
    (["rules=kniffel"], "accepted: yahtzee or yatzy"),
    (["boxes=Chance,chance"], "'chance' is named twice"),
])
def test_bad_parameters_are_refused_in_one_line(given: list[str], said: str, tmp_path: Path) -> None:
    arguments = [part for pair in given for part in ("-p", pair)]
    result = CliRunner().invoke(main, ["--db", f"sqlite:///{tmp_path / 'yatzy.db'}", "build", "yahtzee", *arguments])
    assert result.exit_code != 0 and said in result.output and len(result.output.strip().splitlines()) == 1, \
        result.output
