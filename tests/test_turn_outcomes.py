"""The whole outcome distribution of a game whose turn is stored once: the same, outcome by outcome, as the same
game stored as rows propagates; its mean and standard deviation those the solve stores (School and Yahtzee); its
tail within 4 standard errors of games played from the rules; a race refused in one line."""

from __future__ import annotations

import json
import math
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from dicegraph.graphs import get_game, register, unregister
from dicegraph.graphs.protocol import Param, resolve_params
from dicegraph.graphs.repeating import TurnsInFull
from dicegraph.store.db import open_database
from dicegraph.store.view import GraphView
from tests import shapes

GAMES = 4_000  # Monte Carlo games of Yahtzee played from the rules


@pytest.fixture
def tally_both_ways() -> Iterator[None]:
    """``tally`` (its turn stored once) and ``tally-rows``, the same rules stored as rows."""
    with shapes.registered():
        rows = types.SimpleNamespace(
            name="tally-rows", title="Tally as rows", summary="tally, every turn stored in full", version=1,
            rules=lambda params: TurnsInFull(shapes.Tally(params["rounds"])), objective="max",
            outcome="expected total kept", small_params={"rounds": 3},
            params=(Param("rounds", 3, int, "turns played", lambda rounds: 1 <= rounds <= 9, "1..9"),))
        register(rows, origin="tests/test_turn_outcomes.py")
        try:
            yield
        finally:
            unregister("tally-rows")


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_a_turn_stored_once_propagates_the_distribution_the_same_game_stored_as_rows_does(
        tally_both_ways: None, tmp_path: Path, backend: str) -> None:
    database = dicegraph.open(f"{backend}:///{tmp_path / f'tally.{backend}'}")
    params = {"rounds": "3"}
    found = {}
    for game in ("tally", "tally-rows"):
        database.report(game, params)
        found[game] = {row["payoff"]: row["probability"] for row in database.propagate(game, params=params)["distribution"]}
    assert set(found["tally"]) == set(found["tally-rows"]) and len(found["tally"]) > 10
    for outcome, probability in found["tally-rows"].items():
        assert found["tally"][outcome] == pytest.approx(probability, rel=1e-12, abs=1e-15), outcome


def _agents_distribution(url: str, game: str, params: dict) -> tuple[dict, dict[float, float]]:
    """Return the report's row of the game's last policy (an agent: its turns the cheaper to play) and its
    propagated outcome distribution, checked to add up to 1 with the mean and spread the solve stores."""
    database = dicegraph.open(url)
    row = database.report(game, params)["policies"][-1]
    propagated = database.propagate(game, row["name"], params)
    distribution = {found["payoff"]: found["probability"] for found in propagated["distribution"]}
    assert sum(distribution.values()) == pytest.approx(1.0, rel=1e-12)
    assert propagated["expected_payoff"] == pytest.approx(row["value"], rel=1e-12)
    assert propagated["sd"] == pytest.approx(row["sd"], rel=1e-9)
    return row, distribution


SCHOOL_EIGHT = {"combinations": "Grade 5,Grade 6,Pair,Two pairs,Full,Little straight,Poker,Trash"}  # the school
# phase and grades that cost points, in 11 s where the whole game's distribution takes a minute or more (its figures
# are tests/bench/bench_school.py --distribution's, run on its smallest size by tests/test_benches.py)


def test_schools_distribution_has_the_mean_and_spread_the_solve_stores(tmp_path: Path) -> None:
    row, distribution = _agents_distribution(f"duckdb:///{tmp_path / 'school.duckdb'}", "school", SCHOOL_EIGHT)
    assert row["name"] == "bob" and min(distribution) < 0 < max(distribution)  # grades can cost points


def test_yahtzees_distribution_has_the_solves_mean_and_spread_and_the_tail_games_played_from_the_rules_show(
        yahtzee_game: str) -> None:
    params = {"bonuses": "off"}
    row, distribution = _agents_distribution(yahtzee_game, "yahtzee", params)
    median = min(score for score in distribution
                 if sum(p for other, p in distribution.items() if other <= score) >= 0.5)
    exact = sum(p for score, p in distribution.items() if score >= median)
    game = get_game("yahtzee")
    with open_database(yahtzee_game, read_only=True).connect() as connection:
        graph = dicegraph.open(yahtzee_game).graph("yahtzee", params)["id"]
        stored, _ = GraphView(connection, graph, game).policy_to_play(row["name"])  # as the simulator plays it
    play = game.simulator(resolve_params(game, params), stored)
    scores = np.asarray(play(GAMES, np.random.default_rng(5)), dtype=float)
    reached = scores >= median
    z = (reached.mean() - exact) / math.sqrt(exact * (1 - exact) / GAMES)
    assert abs(z) < 4, (median, reached.mean(), exact)


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_a_races_distribution_is_how_many_turns_its_matches_last(tmp_path: Path, backend: str) -> None:
    """A race's outcome is who wins; ``propagate`` gives how many turns the policy against itself plays (both
    players' turns counted), equal turn by turn to tests/race_exact.py's ``match_lengths`` in fractions, to
    1e-12, and adding up to 1; the text says so."""
    from tests import race_exact

    db = f"{backend}:///{tmp_path / 'race.db'}"
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "report", "5000-race", "-p", "target=300", "-n", "0"]).exit_code == 0
    for policy in ("optimal", "threshold-3"):
        result = json.loads(runner.invoke(main, ["--db", db, "propagate", "5000-race", "-p", "target=300",
                                                 "--policy", policy, "--json"], catch_exceptions=False).stdout)
        lengths = {int(row["payoff"]): row["probability"] for row in result["distribution"]}
        assert result["outcome"] == "turns" and abs(sum(lengths.values()) - 1) < 1e-12
        for turns, exact in race_exact.match_lengths(300, policy, policy, 8).items():
            assert math.isclose(lengths[turns], exact, rel_tol=1e-12), (policy, turns)
        if policy == "optimal":  # the report gives the same with --distributions
            reported = json.loads(runner.invoke(main, ["--db", db, "report", "5000-race", "-p", "target=300", "-n",
                                                       "0", "--distributions", "--json"]).stdout)
            assert reported["distributed"] == "turns"
            got = reported["policies"][0]["distribution"]
            assert [row["payoff"] for row in got] == [row["payoff"] for row in result["distribution"]]
            assert all(math.isclose(a["probability"], b["probability"], rel_tol=1e-12)
                       for a, b in zip(got, result["distribution"]))
    printed = runner.invoke(main, ["--db", db, "propagate", "5000-race", "-p", "target=300"]).stdout
    assert printed.splitlines()[0].split() == ["turns", "probability"] and "expected turns:" in printed


def test_the_explorer_draws_a_turn_games_distributions_on_request(tally_both_ways: None, tmp_path: Path) -> None:
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url = f"sqlite:///{tmp_path / 'tally.db'}"
    dicegraph.open(url).report("tally", {"rounds": "3"})
    propagated = dicegraph.open(url).propagate("tally", params={"rounds": "3"})["distribution"]
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    assert b'id="play-distributions"' in client.get("/graphs/1").data
    shown = client.get("/graphs/1.json?distributions=all").get_json()["distributions"]["optimal"]
    assert [row["payoff"] for row in shown] == [row["payoff"] for row in propagated]
    assert all(a["probability"] == pytest.approx(b["probability"], rel=1e-12) for a, b in zip(shown, propagated))
    assert b'id="distribution-chart"' in client.get("/graphs/1?distributions=all").data
    assert client.get("/graphs/1/distribution.svg?distributions=all").status_code == 200
    engine.dispose()


def test_the_report_gives_every_policys_distribution_when_asked(tally_both_ways: None, tmp_path: Path) -> None:
    """``report --distributions``: every policy's outcomes add up to 1 with its value as their mean, on a graph
    of rows (Jackpot) and on a turn stored once (tally); the text prints each one's percentiles."""
    db = f"sqlite:///{tmp_path / 'games.db'}"
    runner = CliRunner()
    for game, params in (("jackpot", ["-p", "cells=4"]), ("tally", ["-p", "rounds=3"])):
        args = ["--db", db, "report", game, *params, "-n", "0", "--distributions"]
        data = json.loads(runner.invoke(main, [*args, "--json"], catch_exceptions=False).stdout)
        for row in data["policies"]:
            total = sum(found["probability"] for found in row["distribution"])
            mean = sum(found["payoff"] * found["probability"] for found in row["distribution"])
            assert total == pytest.approx(1.0, rel=1e-12) and mean == pytest.approx(row["value"], rel=1e-12), row
        printed = runner.invoke(main, args, catch_exceptions=False).stdout
        assert "its percentiles" in printed and all(row["name"] in printed for row in data["policies"])


def test_the_explorer_draws_how_many_turns_a_race_lasts_on_request(tmp_path: Path) -> None:
    """The race's page offers its policies' numbers of turns, as ``propagate`` gives them, and draws them."""
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url = f"sqlite:///{tmp_path / 'race.db'}"
    dicegraph.open(url).report("5000-race", {"target": "200"}, games=0)
    propagated = dicegraph.open(url).propagate("5000-race", "threshold-2", params={"target": "200"})["distribution"]
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    page = client.get("/graphs/1").data
    assert b'id="play-distributions"' in page and b"turns until a win" in page
    shown = client.get("/graphs/1.json?distributions=all").get_json()["distributions"]["threshold-2"]
    assert [row["payoff"] for row in shown] == [row["payoff"] for row in propagated]
    assert all(a["probability"] == pytest.approx(b["probability"], rel=1e-12) for a, b in zip(shown, propagated))
    drawn = client.get("/graphs/1/distribution.svg?distributions=all")
    assert drawn.status_code == 200 and b"turns until a win" in drawn.data
    engine.dispose()
