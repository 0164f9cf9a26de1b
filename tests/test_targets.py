"""Reaching a target: ``solve --objective at-least:T`` (``at-most:T`` where the game minimises) stores the policy with
the best chance that the outcome reaches T, exact in fractions; the report's ``--targets`` sweep gives every T at
once, each equal to its own solve and never below the optimum's chance; the policy's success rate played from the
rules lies within 4 standard errors; and what takes no target is refused in one line before any work."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.graphs.exact import exact_value
from dicegraph.graphs.playout import play_one
from dicegraph.graphs.protocol import resolve_params
from dicegraph.graphs.rules import Ending
from dicegraph.store.catalog import find_policy, stored_choices
from dicegraph.store.db import open_database
from tests import shapes

BOX = {"tiles": "5"}  # Shut The Box on five tiles: small enough for fractions, every score 0..15 a target
GAMES = 20_000


class Reaching:
    """A game's rules whose every ending pays 1 where the outcome passes ``test`` against ``target``, else 0: the
    rules of the chance of reaching a target, for :func:`dicegraph.graphs.exact.exact_value`."""

    def __init__(self, rules: Any, test: str, target: float) -> None:
        self.rules, self.test, self.target = rules, test, target

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rules, name)

    def _reached(self, payoff: float) -> float:
        return float(payoff >= self.target if self.test == ">=" else payoff <= self.target)

    def payoff(self, position: Any) -> float | None:
        payoff = self.rules.payoff(position)
        return None if payoff is None else self._reached(payoff)

    def ending(self, position: Any, roll: Any) -> Any:
        after = self.rules.ending(position, roll)
        return after._replace(payoff=self._reached(after.payoff)) if isinstance(after, Ending) else after


def _close(found: float, exact: Fraction) -> bool:
    return abs(found - float(exact)) <= 1e-12 * max(1.0, abs(float(exact)))


@pytest.mark.parametrize(("game", "params", "objective"), [
    ("shut-the-box", BOX, "at-most:3"), ("shut-the-box", BOX, "at-most:0"), ("lowball", {"rounds": "2"}, "at-most:4"),
    ("jackpot", {"cells": "4"}, "at-least:1")])
def test_a_target_is_solved_exactly(tmp_path: Path, game: str, params: dict, objective: str) -> None:
    with shapes.registered():
        database = dicegraph.open(f"sqlite:///{tmp_path / 'game.db'}")
        database.build(game, params)
        solved = database.solve(game, params, objective=objective)
        spec = get_game(game)
        rules = spec.rules(resolve_params(spec, params))
    form, target = objective.split(":")
    exact = exact_value(Reaching(rules, ">=" if form == "at-least" else "<=", float(target)), "max")
    assert solved["policy"] == objective and _close(solved["value"], exact), (solved["value"], exact)


def test_the_targets_sweep_equals_each_targets_own_solve_and_never_loses_to_the_optimum(tmp_path: Path) -> None:
    database = dicegraph.open(f"sqlite:///{tmp_path / 'box.db'}")
    report = database.report("shut-the-box", BOX, targets=True)
    targets = report["targets"]
    scores = [row["payoff"] for row in database.query(
        "SELECT DISTINCT payoff FROM positions WHERE game = 'shut-the-box' AND kind = 'terminal' ORDER BY payoff")]
    assert [row["target"] for row in targets] == scores[:-1]  # every score but the highest, which every game reaches
    optimal_distribution = {row["payoff"]: row["probability"] for row in report["optimal_distribution"]}
    for row in targets:
        assert row["best"] >= row["policy"] - 1e-12
        assert row["policy"] == pytest.approx(sum(p for score, p in optimal_distribution.items()
                                                  if score <= row["target"]), rel=1e-12)
    for row in targets[::5]:
        alone = database.solve("shut-the-box", BOX, objective=f"at-most:{row['target']:g}")["value"]
        assert alone == pytest.approx(row["best"], rel=1e-12)


def test_a_targets_policy_played_from_the_rules_reaches_it_as_often_as_its_value(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'box.db'}"
    database = dicegraph.open(url)
    built = database.build("shut-the-box", BOX)
    solved = database.solve("shut-the-box", BOX, objective="at-most:3")
    rules = get_game("shut-the-box").rules(resolve_params(get_game("shut-the-box"), BOX))
    with open_database(url).connect() as connection:
        moves = stored_choices(connection, find_policy(connection, built["graph_id"], "at-most:3").id)
    rng = np.random.default_rng(11)
    reached = np.array([play_one(rules, moves, rng.random) <= 3 for _ in range(GAMES)], dtype=float)
    z = (reached.mean() - solved["value"]) / (reached.std(ddof=1) / np.sqrt(GAMES))
    assert abs(z) < 4, (reached.mean(), solved["value"])
    database.solve("shut-the-box", BOX)  # play analyses each move against the optimum
    played = database.play("shut-the-box", BOX, policies=["at-most:3"], seed=5)
    assert played["finished"] and played["players"]["solo"]["policy"] == "at-most:3"


def test_the_reports_targets_table_prints_and_its_json_lists_every_target(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'box.db'}"
    runner = CliRunner()
    args = ["--db", db, "report", "shut-the-box", "-p", "tiles=5", "--targets"]
    printed = runner.invoke(main, args, catch_exceptions=False).stdout
    assert "best for T" in printed and "at-most:T" in printed
    data = json.loads(runner.invoke(main, [*args, "--json"], catch_exceptions=False).stdout)
    assert [row["target"] for row in data["targets"]] == list(range(13))  # scores 0..13 end a game of 5 tiles


@pytest.mark.parametrize(("game", "params", "args", "said"), [
    ("pig", ["-p", "target=8"], ["solve", "--objective", "at-least:3"], "takes no target"),
    ("shut-the-box", ["-p", "tiles=5"], ["solve", "--objective", "at-least:3"], "give its target as at-most:T"),
    ("shut-the-box", ["-p", "tiles=5"], ["solve", "--objective", "at-most:99"], "give a target between them"),
    ("shut-the-box", ["-p", "tiles=5"], ["solve", "--objective", "at-most:few"], "a target is a number"),
    ("yachtlet", [], ["solve", "--objective", "at-least:3"], "points paid on moves"),
    ("chase", [], ["solve", "--objective", "at-most:3"], "recur"),
    ("pig", ["-p", "target=8"], ["report", "--targets"], "takes no target"),
])
def test_what_takes_no_target_is_refused_in_one_line_before_any_work(tmp_path: Path, game: str, params: list[str],
                                                                   args: list[str], said: str) -> None:
    db = f"sqlite:///{tmp_path / 'game.db'}"
    runner = CliRunner()
    with shapes.registered():
        assert runner.invoke(main, ["--db", db, "build", game, *params]).exit_code == 0
        result = runner.invoke(main, ["--db", db, args[0], game, *params, *args[1:]])
        assert result.exit_code == 1 and said in result.output and len(result.output.strip().splitlines()) == 1
        given = dict(part.split("=") for part in params[1::2])
        assert not [p for p in dicegraph.open(db).policies(game, given) if p["method"] == "solve"]  # nothing solved


def test_the_manuals_page_shows_what_the_report_prints(tmp_path: Path) -> None:
    """docs/targets.md: Shut The Box's table of targets, as ``report --targets`` prints it, the line of its
    paired game's report for T = 3 (the table's row, the same two chances), and a target above Yahtzee's highest
    outcome refused."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "targets.md").read_text()
    db = f"sqlite:///{tmp_path / 'box.db'}"
    printed = CliRunner().invoke(main, ["--db", db, "report", "shut-the-box", "--targets", "-n", "0"],
                                 catch_exceptions=False).stdout
    table = printed.split("(solve --objective at-most:T):\n", 1)[1].strip()
    assert table in page
    paired = CliRunner().invoke(main, ["--db", db, "report", "shut-the-box-at-most-3", "-n", "0"],
                                catch_exceptions=False).stdout
    line = next(line for line in paired.splitlines() if line.startswith("Playing shut-the-box's optimum"))
    assert line in page
    refused = CliRunner().invoke(main, ["--db", db, "report", "yahtzee-at-least-2000"])
    assert refused.exit_code == 1 and f"$ dicegraph report yahtzee-at-least-2000\n{refused.output}" in page
