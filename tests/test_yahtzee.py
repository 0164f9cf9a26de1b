"""Yahtzee: scoring and bonuses against a scorer written here, the SQL solve against exact fractions and an
independent numpy solver, the whole game without bonuses through the CLI (report, Monte Carlo).

The game with bonuses (536,448 turn states) is solved in tests/bench/bench_yahtzee.py, against the
published optimum (Verhoeff 1999; Glenn 2006) and the ``yatzy-solver`` package.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
from collections import Counter
from fractions import Fraction

import pytest
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.graphs.expand import expand
from dicegraph.graphs.protocol import TERMINAL, Node, one_by_one
from dicegraph.graphs.yahtzee import boxes
from dicegraph.graphs.yahtzee.rules import last_state
from dicegraph.store.solve import readers, turns
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from tests.commands import engine_on
from tests.yahtzee_numpy import optimal_score

OFF = {"bonuses": "off"}
YAHTZEE, OFF_SHEET = boxes.Sheet(), boxes.Sheet("yahtzee", "off")  # every bonus; none
RULES_GAMES = 2_000  # whole games played one at a time from the rules (graphs/playout.py)
RELATIVE = 1e-12


# --- a scorer written from RULES.md, apart from graphs/yahtzee ------------------------------------------------


def printed_points(box: str, dice: tuple[int, ...]) -> int:
    """What the dice score in a box by the printed rules (no joker)."""
    counts = sorted(Counter(dice).values())
    faces = set(dice)
    upper = ["Aces", "Twos", "Threes", "Fours", "Fives", "Sixes"]
    if box in upper:
        face = upper.index(box) + 1
        return face * dice.count(face)
    runs4 = [set(range(start, start + 4)) for start in (1, 2, 3)]
    return {
        "Three of a kind": sum(dice) if counts[-1] >= 3 else 0,
        "Four of a kind": sum(dice) if counts[-1] >= 4 else 0,
        "Full house": 25 if counts == [2, 3] else 0,
        "Small straight": 30 if any(run <= faces for run in runs4) else 0,
        "Large straight": 40 if faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0,
        "Yahtzee": 50 if counts == [5] else 0,
        "Chance": sum(dice),
    }[box]


def score_turn(state: boxes.State, box: int, dice: tuple[int, ...], bonuses: str) -> tuple[int, boxes.State]:
    """The points of scoring ``dice`` in ``box`` from ``state`` (bonuses and joker included) and the next state."""
    name = boxes.YAHTZEE_BOXES[box]
    points = printed_points(name, dice)
    yahtzee = len(set(dice)) == 1
    filled = state.filled | 1 << box
    upper, fifty = state.upper, state.yahtzee_50
    if bonuses == "on" and yahtzee:
        yahtzee_box_filled = state.filled >> 11 & 1
        own_upper_filled = state.filled >> (dice[0] - 1) & 1
        if yahtzee_box_filled and own_upper_filled and name in ("Full house", "Small straight", "Large straight"):
            points = {"Full house": 25, "Small straight": 30, "Large straight": 40}[name]
        if state.yahtzee_50:
            points += 100
        if name == "Yahtzee":
            fifty = True
    if bonuses != "off" and box < 6:
        total = state.upper + printed_points(name, dice)
        points += 35 if state.upper < 63 <= total else 0
        upper = min(total, 63)
    return points, boxes.State(filled, upper, fifty)


def test_scoring_by_the_rules() -> None:
    for dice in boxes.OUTCOMES:
        for box, name in enumerate(boxes.YAHTZEE_BOXES):
            assert YAHTZEE.points(box, dice) == printed_points(name, dice), (name, dice)
    assert printed_points("Small straight", (1, 2, 3, 4, 4)) == 30 and printed_points("Full house", (2, 2, 2, 2, 2)) == 0


@pytest.mark.parametrize("bonuses", boxes.BONUSES)
def test_the_turns_points_and_state_moves_score_by_the_rules(bonuses: str) -> None:
    """Every end a turn reaches, joined with the state's move through it, scores what the rules say."""
    sheet = boxes.Sheet("yahtzee", bonuses)
    every = boxes.states(sheet)
    sample = random.Random(5).sample(every, 300) + [s for s in every if s.yahtzee_50][:50]
    for state in sample:
        if state.filled == YAHTZEE.all_filled:
            continue
        moves = {move.label: move for move in boxes.state_moves(state, sheet)}
        for box in boxes.open_boxes(sheet, state.filled):
            for dice in boxes.OUTCOMES:
                move = moves[boxes.end_label(box, dice, sheet)]  # the end exists for every open box
                expected = score_turn(state, box, dice, bonuses)
                assert (YAHTZEE.points(box, dice) + move.reward, move.next) == expected, (state, box, dice)


@pytest.mark.parametrize("bonuses", boxes.BONUSES)
def test_the_turn_structure_names_every_end_once(bonuses: str) -> None:
    game, params = get_game("yahtzee"), {"bonuses": bonuses}
    structure = game.turn(params)
    turn = game.rules(params).game.stored_turn
    ends = [row.key for row in one_by_one(expand(turn)) if isinstance(row, Node) and row.kind == TERMINAL]
    assert sorted(structure.end_label(key) for key in ends) == sorted(boxes.end_labels(boxes.Sheet("yahtzee", bonuses)))
    assert structure.states == len(boxes.states(boxes.Sheet("yahtzee", bonuses)))
    above_average = next(p for p in structure.policies if p.name == "above-average")
    profits = above_average.end_profits({key: float(i) for i, key in enumerate(above_average.needs)})
    assert set(profits) == set(ends)
    assert profits[boxes.end_key("Chance")] == -float(len(boxes.YAHTZEE_BOXES) - 1)  # minus the average of Chance alone


def upper_totals_a_set() -> list[int]:
    """Return, for each set of upper boxes filled (a 6-bit mask), how many totals capped at 63 they can hold: counted
    here from the faces, apart from :func:`dicegraph.graphs.yahtzee.boxes.upper_totals`."""
    per_upper_set = []
    for upper_filled in range(64):
        totals = {0}
        for face in range(1, 7):
            if upper_filled >> (face - 1) & 1:
                totals = {min(63, total + face * count) for total in totals for count in range(6)}
        per_upper_set.append(len(totals))
    return per_upper_set


def test_the_number_of_states() -> None:
    """536,448 turn states with every bonus (the issue's count), from the upper totals each set of upper boxes allows."""
    per_upper_set = upper_totals_a_set()
    lower = 2**6  # the six lower boxes besides Yahtzee, filled or not
    assert len(boxes.states(YAHTZEE)) == sum(per_upper_set) * lower * 3 == 536_448  # Yahtzee box: open, 0, 50
    assert len(boxes.states(boxes.Sheet("yahtzee", "upper"))) == sum(per_upper_set) * lower * 2
    assert len(boxes.states(OFF_SHEET)) == 2**13
    assert len(set(boxes.states(YAHTZEE))) == len(boxes.states(YAHTZEE))


def test_bad_bonuses_say_what_is_accepted(runner: CliRunner) -> None:
    result = runner.invoke(main, ["--db", "sqlite://", "build", "yahtzee", "-p", "bonuses=maybe"])
    assert result.exit_code != 0 and "on, upper or off" in result.output


# --- the SQL solve in exact fractions: the last boxes ---------------------------------------------------------


def exact_turn(value_after: dict[int, Fraction], bonuses: str = "off") -> Fraction:
    """The optimal value of a turn in fractions: ``value_after[box]`` is the game's value once ``box`` is filled.

    Every keep is a sub-multiset of the dice, every roll an ordered roll.
    """
    @functools.cache
    def decide(dice: tuple[int, ...], rolls_left: int) -> Fraction:
        best = max(printed_points(boxes.YAHTZEE_BOXES[box], dice) + rest for box, rest in value_after.items())
        if rolls_left:
            keeps = {tuple(sorted(sub)) for size in range(5) for sub in itertools.combinations(dice, size)}
            best = max(best, *(chance(keep, rolls_left - 1) for keep in keeps))
        return best

    @functools.cache
    def chance(kept: tuple[int, ...], rolls_left: int) -> Fraction:
        rolled = Counter(tuple(sorted(kept + roll)) for roll in itertools.product(range(1, 7), repeat=5 - len(kept)))
        return sum((count * decide(dice, rolls_left) for dice, count in rolled.items()), Fraction(0)) / 6 ** (5 - len(kept))

    return chance((), 2)


@pytest.fixture(scope="module")
def endgame(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """SQLite: the optimum without bonuses, solved for the states with one and two boxes open."""
    engine = open_database(f"sqlite:///{tmp_path_factory.mktemp('yahtzee') / 'endgame.db'}", create=True)
    game = get_game("yahtzee")
    built = build_graph(engine, game, OFF)
    with engine.begin() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(OFF))
        policy_id = turns.solve_policy(connection, graph, "optimal", down_to=11)
        keys = [boxes.state_key(s, OFF_SHEET) for s in boxes.states(OFF_SHEET) if bin(s.filled).count("1") >= 11]
        return {key: readers.state_result(connection, built.graph_id, policy_id, key).value
                for key in keys if not key.endswith(f":{YAHTZEE.all_filled}")}


@functools.cache
def alone(box: int) -> Fraction:
    """The exact optimal score of ``box`` when it is the last one open."""
    return exact_turn({box: Fraction(0)})


def test_one_box_left_equals_exact_fractions(endgame: dict[str, float]) -> None:
    for box in range(len(boxes.YAHTZEE_BOXES)):
        assert math.isclose(endgame[last_state(box, OFF_SHEET)], alone(box), rel_tol=RELATIVE), boxes.YAHTZEE_BOXES[box]


def test_two_boxes_left_equal_exact_fractions(endgame: dict[str, float]) -> None:
    for first, second in [(0, 12), (8, 11), (5, 9), (6, 7)]:
        exact = exact_turn({first: alone(second), second: alone(first)})
        key = boxes.state_key(boxes.State(YAHTZEE.all_filled ^ 1 << first ^ 1 << second), OFF_SHEET)
        assert math.isclose(endgame[key], exact, rel_tol=RELATIVE), (boxes.YAHTZEE_BOXES[first], boxes.YAHTZEE_BOXES[second])


# --- the whole game without bonuses (DuckDB) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def whole_game(yahtzee_game: str) -> tuple[str, dict]:
    """``report yahtzee -p bonuses=off --json`` with Monte Carlo on the solved game: (database URL, its JSON)."""
    result = CliRunner().invoke(main, ["--db", yahtzee_game, "report", "yahtzee", "-p", "bonuses=off", "-n", "40000",
                                       "--json"])
    assert result.exit_code == 0, result.output
    return yahtzee_game, json.loads(result.stdout)


def test_whole_game_equals_the_numpy_solver(whole_game: tuple[str, dict]) -> None:
    optimal = whole_game[1]["policies"][0]
    assert optimal["name"] == "optimal"
    assert math.isclose(optimal["value"], optimal_score("off"), rel_tol=RELATIVE)


def test_whole_games_played_from_the_rules_with_the_stored_decisions_score_the_stored_value(
        whole_game: tuple[str, dict]) -> None:
    """The generic player (graphs/playout.py) over Yahtzee's rules (graphs/yahtzee/rules.py), each move looked up
    in the stored decision bytes: independent of the numpy player and of the turn graph's rows."""
    import numpy as np

    from dicegraph.graphs.playout import rules_simulator
    from dicegraph.graphs.yahtzee.rules import rules as yahtzee_rules, stored_agent

    url, data = whole_game
    with engine_on(url) as engine, engine.connect() as connection:
        graph = TurnGraph.load(connection, data["graph"], get_game("yahtzee").turn(OFF))
        decisions = readers.stored_decisions(connection, data["graph"], turns.ensure_policy(connection, graph, "optimal"))
    full = yahtzee_rules(OFF)
    scores = np.array(rules_simulator(lambda params: full)(OFF, full.plays(stored_agent(decisions, OFF_SHEET)))(
        RULES_GAMES, np.random.default_rng(5)))
    expected = data["policies"][0]["value"]
    assert abs(scores.mean() - expected) < 4 * scores.std() / math.sqrt(len(scores)), (scores.mean(), expected)


def test_report_json(whole_game: tuple[str, dict]) -> None:
    data = whole_game[1]
    assert [p["name"] for p in data["policies"]] == ["optimal", "greedy", "above-average"]
    optimal = data["policies"][0]
    for row in data["policies"]:
        assert row["sd"] > 0 and abs(row["monte_carlo"]["z"]) < 4, row
        loss = data["losses"][row["name"]]
        assert math.isclose(loss, optimal["value"] - row["value"], rel_tol=RELATIVE, abs_tol=1e-15)
        assert row is optimal or loss > 0
    assert data["published_optimum"] is None  # nothing is published for the game without any bonus
    assert data["graph_size"]["turn_states"] == 2**13 and set(data["average_table"]) == set(boxes.YAHTZEE_BOXES)


def test_report_text(whole_game: tuple[str, dict], runner: CliRunner) -> None:
    result = runner.invoke(main, ["--db", whole_game[0], "report", "yahtzee", "-p", "bonuses=off", "-n", "0"])
    assert result.exit_code == 0, result.output
    assert "no bonuses, no joker" in result.stdout and "above-average" in result.stdout and "loses" in result.stdout
