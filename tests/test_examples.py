"""``dicegraph check`` and the example plugin: a game in a package of its own (``examples/dicegraph-hog``),
installed by pip and checked whole; the test games of new shapes (``tests/shapes.py``) checked so too; and a
game whose simulator lies, caught by name in one line."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.conformance import Finding, check_game
from dicegraph.graphs import GAMES, register, unregister
from dicegraph.graphs.protocol import resolve_params
from dicegraph.graphs.spec import GameSpec
from tests.commands import assert_one_line_error
from tests.postgres import database_on
from tests.processes import dicegraph
from tests.shapes import registered

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dicegraph-hog"


def hog_optimum(dice: int) -> Fraction:
    """Return Hog's best expected score with up to ``dice`` dice, in closed form apart from the plugin's code:
    rolling k dice scores 1 with probability 1 - (5/6)^k, else k dice of 2..6, 4 on average each."""
    return max(1 - Fraction(5, 6) ** k + Fraction(5, 6) ** k * 4 * k for k in range(1, dice + 1))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Return the environment of a process that finds the example plugin installed by pip (into a folder of its
    own, on the path; built from a copy, so that the build writes nothing into the repository)."""
    copy = tmp_path_factory.mktemp("example") / EXAMPLE.name
    shutil.copytree(EXAMPLE, copy)
    site = tmp_path_factory.mktemp("site")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                          "--target", str(site), str(copy)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    return dict(os.environ, PYTHONPATH=str(site))


def test_the_example_plugin_is_listed_and_every_check_holds(installed: dict[str, str], tmp_path: Path) -> None:
    listed = subprocess.run(dicegraph("games", "--json"), capture_output=True, text=True, env=installed, cwd=tmp_path)
    hog = next(game for game in json.loads(listed.stdout) if game["name"] == "hog")
    assert hog["origin"] == "plugin dicegraph-hog 1.0, entry point hog = dicegraph_hog"
    checked = subprocess.run(dicegraph("check", "hog", "--json"), capture_output=True, text=True, env=installed,
                             cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    data = json.loads(checked.stdout)
    assert data["game"] == "hog" and data["broken"] == [] and data["database"] == "a scratch SQLite database"
    findings = {row["check"]: row for row in data["findings"]}
    assert all(row["holds"] for row in findings.values()), findings
    assert checked.stderr.splitlines() == ["checking hog in a scratch SQLite database", *(  # progress, as made
        Finding(**row).line() for row in data["findings"])]
    assert {"build", "report", "solve", "exact", "distribution", "monte-carlo", "export", "positions", "compare",
            "play", "explorer"} <= set(findings)
    url = f"sqlite:///{tmp_path / 'hog.db'}"
    reported = subprocess.run(dicegraph("--db", url, "report", "hog", "-p", "dice=6", "-n", "0", "--json"),
                              capture_output=True, text=True, env=installed, cwd=tmp_path)
    optimal = next(row["value"] for row in json.loads(reported.stdout)["policies"] if row["name"] == "optimal")
    assert optimal == pytest.approx(float(hog_optimum(6)), rel=1e-12)


@pytest.mark.parametrize("backend", ["sqlite", "duckdb", "postgresql"])
def test_every_check_holds_on_every_test_shape_on_every_backend(backend: str, tmp_path: Path) -> None:
    """A minimising solitaire game, a two-player race that comes back to its start, a game paying points on its
    moves, a solitaire game that loops and minimises, a repeating turn stored once: every check holds in a database of each backend
    (``check --here``)."""
    with registered() as specs:
        for name, spec in specs.items():
            assert spec.hooks.offered() == [], name  # a model alone: every tool all the same
            with database_on(backend, tmp_path / name) as url:
                findings = check_game(spec, url=url)
            assert findings and all(found.holds for found in findings), (name, [f.line() for f in findings])
            checks = {found.check for found in findings}
            assert {"exact", "export", "play", "positions", "explorer"} <= checks
            assert ("distribution" in checks) == (not spec.loops), name  # a turn stored once too (tally)
            assert ("best-response" in checks) == (spec.players == 2), name


CHECKED_HERE = sorted(game.name for game in GAMES.built_in())


def checks_expected(game: GameSpec) -> set[str]:
    """Return the checks ``check`` makes of a built-in game on any backend: every tool, the exact recursion wherever
    the game has rules, Monte Carlo for every solitaire game with a simulator (turn games too), best responses in a
    game for two."""
    return {"build", "report", "solve", "export", "positions", "play", "explorer",
            *(["exact"] if game.rules is not None else []),
            *(["monte-carlo"] if game.players == 1 and game.simulator is not None else []),
            *(["best-response"] if game.players == 2 else [])}


@pytest.mark.parametrize("backend", ["duckdb", "postgresql"])
@pytest.mark.parametrize("name", CHECKED_HERE)
def test_check_holds_on_built_in_games_on_every_backend(name: str, backend: str, tmp_path: Path) -> None:
    """Every tool on every built-in game on its small parameters (``check --here``), in a database of each server
    or file backend beside SQLite: the exact recursion wherever the game has rules, Monte Carlo for every solitaire
    game (turn games too). On SQLite, the default, each tool is a test of its own on every registered game
    (``tests/test_conformance.py``), and ``check`` itself runs on SQLite on the example plugin and on every test
    shape (above)."""
    game = GAMES[name]
    with database_on(backend, tmp_path / name) as url:
        findings = check_game(game, url=url)
    assert findings and all(found.holds for found in findings), [found.line() for found in findings]
    assert checks_expected(game) <= {found.check for found in findings}


def test_check_stores_the_game_beside_another_graph_and_adds_none_to_a_database_holding_one(tmp_path: Path) -> None:
    """In a database that holds no graph, ``check`` builds the synthetic game's first (its node ids, from 0, are
    every game's), so that a statement that forgets which graph it reads reads another's rows: on Spark two did
    (the turn's root, a race's loops), and School broke there beside another game. A database that holds a graph
    gets none added."""
    import dicegraph

    url = f"sqlite:///{tmp_path / 'check.db'}"
    for name in ("jackpot", "pig"):
        findings = check_game(GAMES[name], url=url)
        assert findings and all(found.holds for found in findings), [found.line() for found in findings]
        said = next(found.detail for found in findings if found.check == "build")
        assert said.endswith("; stored beside graph 1 (synthetic)") == (name == "jackpot"), said
    assert [row["game"] for row in dicegraph.open(url).graphs()] == ["synthetic", "jackpot", "pig"]


def test_a_game_checked_on_a_second_backend_is_expanded_twice_less(tmp_path: Path) -> None:
    """Whether two builds stream the same rows is the rules' answer: a process checking a game on two backends
    expands it three times for the first (twice compared, once stored) and once for the second (stored)."""
    from tests.shapes import games

    lowball = next(game for game in games() if game.name == "lowball")
    lowball.name = "lowball-counted"
    spec = register(lowball, origin="tests/test_examples.py")
    expansions: list[dict[str, Any]] = []
    counted_spec = dataclasses.replace(spec, build=lambda params: (expansions.append(params), spec.build(params))[1])
    counted = []
    try:
        for backend in ("sqlite", "duckdb"):
            with database_on(backend, tmp_path / backend) as url:
                findings = check_game(counted_spec, url=url)
            assert all(found.holds for found in findings), [found.line() for found in findings]
            assert "two builds identical" in next(found.detail for found in findings if found.check == "build")
            counted.append(len(expansions))
    finally:
        unregister("lowball-counted")
    assert counted == [3, 4]


def test_check_says_which_tool_breaks_and_exits_1(tmp_path: Path) -> None:
    """A game whose own simulator plays a different game than its rules (it always scores 6): the Monte Carlo
    check breaks, named with what it found, every other check holds, and ``check`` exits 1 in one line."""
    import numpy as np

    from tests.shapes import games

    lowball = next(game for game in games() if game.name == "lowball")
    lowball.name, lowball.simulator = "lying", lambda params, policy: lambda count, rng: np.full(count, 6.0)
    register(lowball, origin="tests/test_examples.py")
    try:
        result = CliRunner().invoke(main, ["check", "lying"])
    finally:
        unregister("lying")
    assert_one_line_error(result, "lying breaks 1 of", "checks: monte-carlo")
    head, *lines = result.stdout.strip().splitlines()
    assert head == "checking lying in a scratch SQLite database"
    broken = [line for line in lines if line.startswith("BREAKS")]
    assert len(broken) == 1 and "monte-carlo" in broken[0] and "20,000 games average 6.0" in broken[0], lines
    assert len(lines) > 5 and all(line.startswith(("holds", "BREAKS")) for line in lines)


def test_check_breaks_on_a_bound_that_a_play_passes(tmp_path: Path) -> None:
    """Yahtzee (Fives and Chance) whose rules claim a point more is sure to come than is (``lowest_still``, which a
    target settles states by): the exact check finds a play that scores less from the first state, and says so in
    one line; every other check holds."""
    import dataclasses

    from dicegraph.graphs.repeating import TurnsInFull
    from dicegraph.graphs.yahtzee.rules import YahtzeeRules

    class Overbound(YahtzeeRules):
        def lowest_still(self, state: Any) -> float:
            return super().lowest_still(state) + 1

    yahtzee = GAMES["yahtzee"]
    overbound = dataclasses.replace(yahtzee, rules=lambda params: TurnsInFull(Overbound(yahtzee.rules(params).game.sheet)))
    findings = {found.check: found for found in check_game(overbound, {"boxes": "Fives,Chance"},
                                                           url=f"sqlite:///{tmp_path / 'x.db'}")}
    assert not findings["exact"].holds and "declares lowest_still 6.0 at its first state, but a play reaches 5" in (
        findings["exact"].detail)
    assert all(found.holds for name, found in findings.items() if name != "exact")


def test_check_refuses_an_unknown_game_or_parameter_before_any_work() -> None:
    assert_one_line_error(CliRunner().invoke(main, ["check", "no-such-game"]), "unknown game 'no-such-game'")
    assert_one_line_error(CliRunner().invoke(main, ["check", "jackpot", "-p", "cells=99"]), "cells")
    assert resolve_params(GAMES["jackpot"], {"cells": "3"})["cells"] == 3


def test_check_takes_parameters_as_values_or_as_their_text() -> None:
    """The Python API's ``check_game`` reads a parameter's value (School's straights, a pair) as its text on the
    command line: a value out of range is refused before any work, in the command line's words, not with a
    traceback of the parser."""
    from dicegraph.graphs.errors import BadParameter

    for given in ((-1, 20), "-1,20"):
        with pytest.raises(BadParameter, match=r"invalid value '-1,20' for parameter 'straights'"):
            check_game(GAMES["school"], {"straights": given})
