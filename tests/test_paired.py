"""A game paired with a target (:mod:`dicegraph.graphs.paired`): its optimum is the best chance that the outcome
reaches T, equal in fractions to a recursion over (position, points scored so far) written here apart from the
pairing, for points paid on moves, over a turn stored once, and points that fall; stored by every backend; the
game's agents play it as they play the game (their chance is the game's distribution above T); where the
terminals pay the whole outcome it agrees with the goal solved on the game's own graph; and a name that cannot
be paired is refused in one line."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.graphs.errors import InvalidGraph, UnknownGame
from dicegraph.graphs.exact import exact_value, highest_reachable, lowest_reachable
from dicegraph.graphs.paired import derived_name, paired, paired_name
from dicegraph.graphs.protocol import resolve_params
from dicegraph.graphs.rules import DiceRules, Ending, Move
from dicegraph.graphs.school.game import ALL_USED
from dicegraph.graphs.yahtzee import boxes
from dicegraph.graphs.yahtzee.boxes import end_key, end_labels
from tests import shapes
from tests.postgres import database_on


def best_chance(rules: Any, test: str, target: float, agent: str | None = None) -> Fraction:
    """Return the best chance (or ``agent``'s) that the outcome of ``rules`` passes ``test`` against ``target``:
    a recursion over the game's positions and the points scored so far, in fractions."""
    passes: Callable[[Fraction], bool] = (lambda total: total >= target) if test == ">=" else (
        lambda total: total <= target)
    memo: dict[tuple[str, Fraction], Fraction] = {}

    def value(at: Any, points: Fraction) -> Fraction:
        if isinstance(at, Ending):
            return Fraction(passes(points + Fraction(at.payoff)))
        key = (rules.key(at), points)
        if key not in memo:
            payoff = rules.payoff(at)
            if payoff is not None:
                memo[key] = Fraction(passes(points + Fraction(payoff)))
            elif (rolls := rules.rolls(at)) is None:
                memo[key] = after(at, None, points)
            else:
                outcomes = list(rolls)
                total = sum(weight for _, weight in outcomes)
                memo[key] = sum((Fraction(weight, total) * after(at, roll, points) for roll, weight in outcomes),
                                Fraction(0))
        return memo[key]

    def after(at: Any, roll: Any, points: Fraction) -> Fraction:
        moves = rules.moves(at, roll)
        if not moves:
            ending = rules.ending(at, roll)
            if isinstance(ending, Ending):
                return Fraction(passes(points + Fraction(ending.payoff)))
            return value(ending.next, points + Fraction(ending.reward))
        if agent is not None:
            move = rules.agents[agent](at, roll, moves)
            return value(move.next, points + Fraction(move.reward))
        return max(value(move.next, points + Fraction(move.reward)) for move in moves)

    return value(rules.starts()[0], Fraction(0))


class Dip(DiceRules):
    """Three throws of a die; after each, bank its face, or bank 4 and pay 2 points back on the next throw
    (points that fall: a move pays -2)."""

    def __init__(self, falls: bool) -> None:
        self.points_fall = falls

    def starts(self) -> list:
        return [(3, False)]

    def key(self, position: tuple) -> str:
        return f"{position[0]} to throw{', owing 2' if position[1] else ''}"

    def label(self, position: tuple) -> str:
        return self.key(position)

    def payoff(self, position: tuple) -> float | None:
        return (-2.0 if position[1] else 0.0) if position[0] == 0 else None

    def rolls(self, position: tuple) -> list:
        return [(face, 1) for face in range(1, 7)]

    def moves(self, position: tuple, face: int) -> list[Move]:
        throws, owing = position
        owed = -2.0 if owing else 0.0
        return [Move((throws - 1, False), "bank", face + owed), Move((throws - 1, True), "bank 4", 4 + owed)]


def _rules(name: str, params: dict[str, Any]) -> Any:
    spec = get_game(name)
    return spec.rules(resolve_params(spec, params))


@pytest.mark.parametrize(("name", "params", "test", "target"), [
    ("yachtlet", {}, ">=", 3), ("yachtlet", {}, ">=", 6), ("yachtlet", {}, ">=", 9),
    ("tally", {"rounds": 3}, ">=", 12), ("tally", {"rounds": 2}, ">=", 9), ("lowball", {"rounds": 2}, "<=", 4)])
def test_a_paired_games_optimum_is_the_best_chance_of_reaching_the_target_in_fractions(
        name: str, params: dict, test: str, target: int) -> None:
    with shapes.registered():
        rules = _rules(name, params)
        spec = get_game(name)
    exact = exact_value(paired(rules, test, target), "max", loops=spec.loops)
    assert exact == best_chance(rules, test, target)
    assert 0 < exact < 1  # a target that some plays reach and some miss


def test_points_that_fall_are_followed_when_the_rules_say_so_and_refused_in_one_line_when_not() -> None:
    for target in (5, 9, 12):
        assert exact_value(paired(Dip(True), ">=", target), "max") == best_chance(Dip(True), ">=", target)
    with pytest.raises(InvalidGraph, match="declare points_fall = True"):
        exact_value(paired(Dip(False), ">=", 9), "max")


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
@pytest.mark.parametrize(("name", "params", "target"), [("yachtlet", {}, 6), ("tally", {"rounds": 3}, 12)])
def test_every_backend_stores_the_paired_optimum_and_the_agents_play_it_as_they_play_the_game(
        tmp_path: Path, backend: str, name: str, params: dict, target: int) -> None:
    paired_game = f"{name}-at-least-{target}"
    with shapes.registered(), database_on(backend, tmp_path) as url:
        database = dicegraph.open(url)
        report = database.report(paired_game, params, games=0)
        values = {row["name"]: row["value"] for row in report["policies"]}
        rules = _rules(name, params)
        assert values["optimal"] == pytest.approx(float(best_chance(rules, ">=", target)), rel=1e-12)
        game = database.report(name, params, games=0, distributions=True)
        for row in game["policies"]:
            policy = row["name"]
            reached = sum(share["probability"] for share in row["distribution"] if share["payoff"] >= target)
            if policy != "optimal":  # an agent plays the paired game as the game: its chance is the game's
                assert values[policy] == pytest.approx(reached, rel=1e-12)
            else:  # the optimum of the average reaches the target no more often than the policy best for it
                assert reached <= values["optimal"] + 1e-12
                average = report["average_optimum"]  # and the paired report sets them side by side
                assert average["game"] == name and average["value"] == pytest.approx(row["value"], rel=1e-12)
                assert (average["chance"], average["best"]) == pytest.approx((reached, values["optimal"]), rel=1e-12)


@pytest.mark.parametrize(("name", "params", "objective"), [
    ("shut-the-box", {"tiles": "5"}, "at-most:3"), ("jackpot", {"cells": "4"}, "at-least:1")])
def test_where_the_terminals_pay_the_whole_outcome_the_paired_game_agrees_with_the_goal_on_them(
        tmp_path: Path, name: str, params: dict, objective: str) -> None:
    database = dicegraph.open(f"sqlite:///{tmp_path / 'game.db'}")
    database.build(name, params)
    on_terminals = database.solve(name, params, objective=objective)["value"]
    form, target = objective.split(":")
    report = database.report(f"{name}-{form}-{target}", params, games=0)
    optimal = next(row["value"] for row in report["policies"] if row["name"] == "optimal")
    assert optimal == pytest.approx(on_terminals, rel=1e-12)
    swept = next(row for row in database.report(name, params, games=0, targets=True)["targets"]
                 if row["target"] == float(target))  # the sweep over every target, on the game's own graph
    assert report["average_optimum"]["chance"] == pytest.approx(swept["policy"], rel=1e-12)
    assert report["average_optimum"]["best"] == pytest.approx(swept["best"], rel=1e-12)


@pytest.mark.parametrize(("name", "said"), [
    ("pig-at-least-8", "pig is a game for two"), ("shut-the-box-at-least-3", "its target is at-most, not at-least"),
    ("nosuch-at-least-3", "unknown game 'nosuch-at-least-3'")])
def test_a_name_that_cannot_be_paired_is_refused_in_one_line(tmp_path: Path, name: str, said: str) -> None:
    with pytest.raises(UnknownGame, match=said):
        get_game(name)
    result = CliRunner().invoke(main, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "build", name])
    assert result.exit_code != 0 and said in result.output and len(result.output.strip().splitlines()) == 1
    assert derived_name("yahtzee-at-least-200") == ("yahtzee", ">=", 200.0)


@pytest.mark.parametrize(("name", "options", "said"), [
    ("shut-the-box-at-most-minus-1", [], "at most -1 cannot be reached"), ("jackpot-at-least-0", [], "at least 0 is certain"),
    ("yahtzee-at-least-1576", [], "no outcome is above 1575, so at least 1576 cannot be reached"),
    ("yahtzee-at-least-341", ["-p", "bonuses=off"], "no outcome is above 340"),
    ("shut-the-box-at-most-15", ["-p", "tiles=5"], "no outcome is above 15, so at most 15 is certain"),
    ("school-at-least-85", ["-p", "combinations=Pair,Poker"], "no outcome is above 84"),
    ("jackpot-at-least-2", [], "at least 2 cannot be reached")])
def test_a_target_outside_the_outcomes_range_is_refused_in_one_line_before_any_work(
        tmp_path: Path, name: str, options: list[str], said: str) -> None:
    """A target that says nothing is refused as its parameters are read, before the database is opened: where the
    game's points cannot fall, every outcome is 0 or more; no outcome is above the rules' ``highest_outcome``."""
    result = CliRunner().invoke(main, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "report", name, *options])
    assert result.exit_code != 0 and said in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(("name", "params"), [
    ("yahtzee", {"boxes": "Fives,Yahtzee"}), ("yahtzee", {"boxes": "Full house,Yahtzee"}),
    ("yahtzee", {"rules": "yatzy", "boxes": "Sixes,Yatzy"}), ("yahtzee", {"bonuses": "off", "boxes": "Chance,Yahtzee"}),
    ("school", {"combinations": "Pair,Poker"}), ("school", {"combinations": "Grade 6,Little straight"}),
    ("jackpot", {"cells": 4})])
def test_the_declared_highest_outcome_is_the_highest_some_play_reaches(name: str, params: dict[str, Any]) -> None:
    """Where every box can score its most (as a joker, with every Yahtzee bonus), the bound a game declares is the
    highest outcome the rules reach, played for it move by move and roll by roll (in fractions)."""
    rules = get_game(name).rules(resolve_params(get_game(name), params))
    assert highest_reachable(rules) == rules.highest_outcome


def _turn_states(name: str, game: Any) -> list[Any]:
    """Return the turn states of a small sheet of Yahtzee or School from which a turn is played."""
    if name == "yahtzee":
        return [state for state in boxes.states(game.sheet) if state.filled != game.sheet.all_filled]
    return [used for used in range(ALL_USED) if used & game.first == game.first]


@pytest.mark.parametrize(("name", "params"), [
    ("yahtzee", {"boxes": "Fives,Yahtzee"}), ("yahtzee", {"boxes": "Full house,Yahtzee"}),
    ("yahtzee", {"rules": "yatzy", "boxes": "Sixes,Yatzy"}), ("yahtzee", {"bonuses": "off", "boxes": "Chance,Yahtzee"}),
    ("school", {"combinations": "Pair,Poker", "grades": "positive"}), ("school", {"combinations": "Grade 6,Little straight"}),
    ("school", {"combinations": "Pair,Trash", "grades": "positive"})])
def test_the_declared_bounds_are_the_highest_and_lowest_some_play_reaches_from_every_state(
        name: str, params: dict[str, Any]) -> None:
    """The bounds on the points still to come that a repeating game declares (``highest_still``, ``lowest_still``)
    are, from every turn state of these sheets, the highest and the lowest outcome some play reaches from there (in
    fractions): Chance's and Trash's 5 at least while they are open, nothing else sure."""
    rules = _rules(name, params)
    playing = _turn_states(name, rules.game)
    assert [highest_reachable(rules, (state, rules.root)) for state in playing] == [
        rules.game.highest_still(state) for state in playing]
    lowest = [lowest_reachable(rules, (state, rules.root)) for state in playing]
    assert lowest == [rules.game.lowest_still(state) for state in playing]
    assert any(points > 0 for points in lowest) == (
        "Chance" in params["boxes"] if name == "yahtzee" else "Trash" in params["combinations"])


def test_a_state_from_which_the_target_is_out_of_reach_is_settled_and_the_best_chance_is_the_same() -> None:
    """Paired with at least 60 (Full house and Yahtzee, no bonuses: 75 at most), a state that needs more than its
    open boxes can score ends short of the target at once; the best chance is the recursion's, in fractions, and
    the same as pairing without the bound."""
    rules = _rules("yahtzee", {"bonuses": "off", "boxes": "Full house,Yahtzee"})
    bounded = paired(rules, ">=", 60)
    ends = [f"{end_key(label)} +{points}" for label in end_labels(rules.game.sheet) for points in (0, 25, 50)]
    short = {end for end, after in bounded.game.ways_through(bounded.game.first_state(), ends)
             if isinstance(after, Ending) and after.key == "short"}
    assert short == {"end:Full house +0", "end:Yahtzee +0", "end:Yahtzee +25"}  # 60, 60 and 35 to go with 50 or 25 open
    chance = exact_value(bounded, "max")
    assert chance == best_chance(rules, ">=", 60) and 0 < chance < 1

    class Undeclared(type(rules.game)):  # type: ignore[misc]
        def highest_still(self, state: Any) -> None:
            return None

    rules.game.__class__ = Undeclared
    unbounded = paired(rules, ">=", 60)
    assert not any(isinstance(after, Ending) for _, after in unbounded.game.ways_through(unbounded.game.first_state(),
                                                                                          ends))
    assert exact_value(unbounded, "max") == chance


@pytest.mark.parametrize(("test", "target", "settled", "by_the_bound"), [
    (">=", 12, "reached", "end:Fives +10"), ("<=", 7, "over", "end:Fives +5")])
def test_a_state_whose_every_play_reaches_or_passes_the_target_is_settled_and_the_best_chance_is_the_same(
        test: str, target: int, settled: str, by_the_bound: str) -> None:
    """Fives and Chance, no bonuses: with Chance open at least 5 points are still to come whatever is played, so
    after 10 points of Fives, at least 12 is reached at once (2 to go), and after 5, at most 7 is passed (2 allowed);
    pairing without the lowest bound settles only where the points scored decide it already, and gives the same best
    chance in fractions (itself the recursion's, as the tests above hold)."""
    rules = _rules("yahtzee", {"bonuses": "off", "boxes": "Fives,Chance"})
    ends = [f"{end_key('Fives')} +{points}" for points in range(0, 30, 5)] + [
        f"{end_key('Chance')} +{points}" for points in range(5, 31)]

    def settled_ends(game: Any) -> set[str]:
        return {end for end, after in game.ways_through(game.first_state(), ends)
                if isinstance(after, Ending) and after.key == settled}

    bounded = paired(rules, test, target)
    chance = exact_value(bounded, "max")
    assert 0 < chance < 1
    ended = settled_ends(bounded.game)

    class Undeclared(type(rules.game)):  # type: ignore[misc]
        def lowest_still(self, state: Any) -> None:
            return None

    rules.game.__class__ = Undeclared
    unbounded = paired(rules, test, target)
    assert ended - settled_ends(unbounded.game) == {by_the_bound} and settled_ends(unbounded.game) < ended
    assert exact_value(unbounded, "max") == chance


def test_a_paired_games_report_sets_the_best_chance_beside_the_optimum_of_the_average(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'game.db'}"
    shown = CliRunner().invoke(main, ["--db", db, "report", "shut-the-box-at-most-3", "-p", "tiles=5", "-n", "0",
                                      "--json"], catch_exceptions=False)
    average = __import__("json").loads(shown.output)["average_optimum"]
    printed = CliRunner().invoke(main, ["--db", db, "report", "shut-the-box-at-most-3", "-p", "tiles=5", "-n", "0"])
    assert (f"Playing shut-the-box's optimum of the average (its value {average['value']:.6f}) instead: "
            f"{100 * average['chance']:.4f} %") in printed.output
    assert 0 < average["chance"] < average["best"]


def test_a_target_the_game_cannot_take_on_its_own_graph_names_the_paired_game(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'game.db'}"
    with shapes.registered():
        CliRunner().invoke(main, ["--db", db, "build", "yachtlet"], catch_exceptions=False)
        result = CliRunner().invoke(main, ["--db", db, "solve", "yachtlet", "--objective", "at-least:6"])
    assert result.exit_code == 1 and "dicegraph solve yachtlet-at-least-6" in result.output


@pytest.mark.parametrize(("name", "params", "target"), [
    ("school", {"combinations": "Grade 6", "grades": "negative"}, 0),
    ("school", {"combinations": "Grade 6", "grades": "negative"}, -5),
    ("school", {"combinations": "Pair,Poker", "grades": "positive"}, 40),  # settled short after Poker scores 0
    ("yahtzee", {"boxes": "Chance", "bonuses": "off"}, 25)])
def test_a_five_dice_turn_stored_once_carries_its_points_to_its_ends(tmp_path: Path, name: str, params: dict,
                                                                    target: int) -> None:
    """School's and Yahtzee's turn, stored once one die at a time: the turn pays a combination's points as it ends
    (School's grades below 0), and the paired turn carries them to its ends; one turn's best chance equals the
    recursion over the whole turn in fractions."""
    report = dicegraph.open(f"duckdb:///{tmp_path / 'game.duckdb'}").report(paired_name(name, ">=", target),
                                                                           params, games=0)
    optimal = next(row["value"] for row in report["policies"] if row["name"] == "optimal")
    assert optimal == pytest.approx(float(best_chance(_rules(name, params), ">=", target)), rel=1e-12)


def test_yahtzees_paired_game_gives_the_best_chance_the_numpy_reference_solves(tmp_path: Path) -> None:
    """``yahtzee-at-least-T`` on three boxes without bonuses, on DuckDB: its best chance equals, to 1e-12, that of
    the benchmark's numpy solver of the same equations written apart from the graph
    (:func:`tests.yahtzee_numpy.reach_chances`); for Chance alone, the recursion in fractions above too."""
    from dicegraph.graphs.yahtzee.boxes import sheet_of
    from tests.yahtzee_numpy import reach_chances

    db = dicegraph.open(f"duckdb:///{tmp_path / 'game.duckdb'}")
    for params, target in (({"boxes": "Fives,Sixes,Chance", "bonuses": "off"}, 55),
                           ({"boxes": "Chance", "bonuses": "off"}, 22)):
        report = db.report(paired_name("yahtzee", ">=", target), params, games=0)
        optimal = next(row["value"] for row in report["policies"] if row["name"] == "optimal")
        first = sheet_of(params).first_filled
        assert optimal == pytest.approx(float(reach_chances(target, first)[first, target]), rel=1e-12, abs=1e-15)
        assert 0.01 < optimal < 0.99  # a target the dice may miss
        if params["boxes"] == "Chance":
            assert optimal == pytest.approx(float(best_chance(_rules("yahtzee", params), ">=", target)), rel=1e-12)


def test_schools_paired_game_gives_the_best_chance_the_numpy_reference_solves(tmp_path: Path) -> None:
    """``school-at-least-T`` with positive grades on three combinations, on DuckDB: its best chance equals, to
    1e-12, that of the benchmark's numpy solver of the same equations written apart from the graph
    (:func:`tests.school_numpy.reach_chances`), at two targets the dice may miss."""
    from dicegraph.graphs.school.game import first_used
    from tests.school_numpy import reach_chances

    db = dicegraph.open(f"duckdb:///{tmp_path / 'game.duckdb'}")
    params = {"combinations": "Grade 6,Pair,Trash", "grades": "positive"}
    first = first_used(params)
    for target in (40, 60):
        report = db.report(paired_name("school", ">=", target), params, games=0)
        optimal = next(row["value"] for row in report["policies"] if row["name"] == "optimal")
        assert optimal == pytest.approx(float(reach_chances(target, first_used=first)[first, target]),
                                        rel=1e-12, abs=1e-15)
        assert 0.01 < optimal < 0.9999  # a target the dice may miss


@pytest.mark.parametrize("name", ["yachtlet-at-least-6", "tally-at-least-12", "shut-the-box-at-most-3"])
def test_every_tool_holds_on_a_paired_game(name: str, tmp_path: Path) -> None:
    """``dicegraph check`` of a paired game on its game's small parameters: build, report, solve, the rules'
    recursion, distributions, Monte Carlo from the rules, export, positions, play and the explorer all hold."""
    from dicegraph.conformance import check_game

    with shapes.registered():
        findings = check_game(get_game(name), url=f"sqlite:///{tmp_path / 'check.db'}")
    assert all(found.holds for found in findings), [found.line() for found in findings]
    assert {"build", "report", "exact", "distribution", "monte-carlo", "play", "explorer"} <= {
        found.check for found in findings}
