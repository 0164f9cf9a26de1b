"""The best response to a stored policy of a game for two: exact in fractions position by position, never below
what the optimum wins against the same policy, equal to the game's value against the optimum itself, and its
win rate played from the rules within 4 standard errors; stored as a policy that compare, the report, play and
the explorer read; bad requests refused in one line before any work."""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.graphs.exact import exact_values
from dicegraph.graphs.playout import play_one
from dicegraph.store.catalog import find_policy, stored_choices
from dicegraph.graphs.protocol import resolve_params
from dicegraph.store.db import open_database, scratch_database
from dicegraph.store.schema import node, value
from tests import shapes
from tests.postgres import postgres_server

PIG = {"target": "8", "holds": "3,5"}  # small enough for fractions, large enough for each agent to lose something
SLIDE = {"goal": "3"}  # a race whose start recurs and whose banked score can fall back to 0
DEPARTS = {"target": "20", "holds": "5"}  # where the best response to hold-at-5 departs from the optimum
GAMES = 20_000  # Monte Carlo games a seat


@pytest.fixture(params=["sqlite", "duckdb", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database on each backend a solve runs the reference on (Spark's test solves its own)."""
    if request.param == "postgresql":
        with scratch_database(postgres_server(), "dicegraph_response") as found:
            yield found
        return
    suffix = "duckdb" if request.param == "duckdb" else "db"
    yield f"{request.param}:///{tmp_path / f'test.{suffix}'}"


@pytest.fixture
def slide() -> Iterator[None]:
    with shapes.registered():
        yield


def _values(url: str, graph: int, name: str) -> dict[str, float]:
    """Return node key -> the stored value of policy ``name`` on graph ``graph``."""
    with open_database(url).connect() as connection:
        policy_id = find_policy(connection, graph, name).id
        return dict(connection.execute(sa.select(node.c.key, value.c.value).select_from(
            value.join(node, sa.and_(node.c.id == value.c.node_id, node.c.graph_id == graph)))
            .where(value.c.policy_id == policy_id)).all())


def _close(found: float, exact: Fraction) -> bool:
    return abs(found - float(exact)) <= 1e-12 * max(1.0, abs(float(exact)))


@pytest.mark.parametrize(("game", "params", "agent"), [("pig", PIG, "hold-at-3"), ("pig", PIG, "hold-at-5"),
                                                       ("slide", SLIDE, "hold-at-1")])
def test_a_best_response_is_exact_at_every_position_and_beats_the_optimum_against_its_policy(
        url: str, slide: None, game: str, params: dict, agent: str) -> None:
    database = dicegraph.open(url)
    built = database.build(game, params)
    solved = database.solve(game, params, objective=f"best-response:{agent}")
    assert solved["policy"] == f"best-response:{agent}"
    spec = get_game(game)
    rules = spec.rules(resolve_params(spec, params))
    exact = exact_values(rules, "max", against=agent)  # the responder to move, the agent playing the other seat
    stored = _values(url, built["graph_id"], solved["policy"])
    wrong = {key: (stored[key], float(x)) for key, x in exact.items() if key in stored and not _close(stored[key], x)}
    assert not wrong and len(set(exact) & set(stored)) == len(exact)
    response = solved["response"]
    root = rules.key(rules.starts()[0])
    assert _close(response["response_wins"]["first"], exact[root])
    for seat in ("first", "second", "mean"):  # never below what the optimum wins against the same policy
        assert response["response_wins"][seat] >= response["optimum_wins"][seat] - 1e-12
        assert response["gain"][seat] == pytest.approx(
            response["response_wins"][seat] - response["optimum_wins"][seat], abs=1e-15)
    assert response["exploitability"]["mean"] > 0  # every agent here gives something away


def test_the_best_response_to_the_optimum_wins_the_games_value(tmp_path: Path) -> None:
    database = dicegraph.open(f"sqlite:///{tmp_path / 'pig.db'}")
    database.build("pig", PIG)
    response = database.solve("pig", PIG, objective="best-response:optimal")["response"]
    game_value = next(p["value"] for p in database.policies("pig", PIG) if p["name"] == "optimal")
    assert response["response_wins"]["first"] == pytest.approx(game_value, rel=1e-12)
    assert response["response_wins"]["second"] == pytest.approx(1 - game_value, rel=1e-12)
    assert abs(response["exploitability"]["mean"]) < 1e-12


@pytest.mark.parametrize(("game", "params", "agent"), [("pig", PIG, "hold-at-5"), ("slide", SLIDE, "hold-at-1")])
def test_a_best_response_played_from_the_rules_wins_as_often_as_its_exact_value(
        tmp_path: Path, slide: None, game: str, params: dict, agent: str) -> None:
    """Each seat: the stored best response's moves against the agent's own, played from the rules."""
    url = f"sqlite:///{tmp_path / 'game.db'}"
    database = dicegraph.open(url)
    built = database.build(game, params)
    response = database.solve(game, params, objective=f"best-response:{agent}")["response"]
    rules = get_game(game).rules(resolve_params(get_game(game), params))
    with open_database(url).connect() as connection:
        moves = stored_choices(connection, find_policy(connection, built["graph_id"], f"best-response:{agent}").id)
    rng = np.random.default_rng(7)
    for seat, players in (("first", (moves, agent)), ("second", (agent, moves))):
        wins = np.array([play_one(rules, players, rng.random) for _ in range(GAMES)])
        if seat == "second":
            wins = rules.constant_sum - wins  # the responder's share, moving second
        z = (wins.mean() - response["response_wins"][seat]) / (wins.std(ddof=1) / np.sqrt(GAMES))
        assert abs(z) < 4, (seat, wins.mean(), response["response_wins"][seat])


def test_the_report_compare_play_and_the_cli_read_a_best_response(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'pig.db'}"
    runner = CliRunner()
    args = ["--db", db, "report", "pig", "-p", "target=8", "-p", "holds=3,5", "--json"]
    report = json.loads(runner.invoke(main, args, catch_exceptions=False).output)
    assert [row["policy"] for row in report["responses"]] == ["hold-at-3", "hold-at-5"]
    assert all(row["answers"] is None for row in report["policies"])  # the responses have their own table
    text = runner.invoke(main, args[:-1], catch_exceptions=False).output
    assert "best response wins" in text and "exploitability" in text
    solved = runner.invoke(main, ["--db", db, "solve", "pig", "-p", "target=8", "-p", "holds=3,5",
                                  "--objective", "best-response:hold-at-5"], catch_exceptions=False)
    assert solved.exit_code == 0 and "exploitability" in solved.output
    compared = json.loads(runner.invoke(main, [
        "--db", db, "compare", "pig", "best-response:hold-at-5", "-p", "target=8", "-p", "holds=3,5",
        "--against", "hold-at-5", "--seat", "second", "--json"], catch_exceptions=False).output)
    reported = next(row for row in report["responses"] if row["policy"] == "hold-at-5")
    assert compared["seats"]["second"]["policy"] == pytest.approx(reported["response_wins"]["second"], rel=1e-12)
    assert compared["expected_loss"] == pytest.approx(-reported["gain"]["second"], rel=1e-12, abs=1e-15)
    listed = {p["name"]: p for p in dicegraph.open(db).policies("pig", PIG)}
    assert listed["best-response:hold-at-5"]["answers"] == "hold-at-5"
    played = dicegraph.open(db).play("pig", PIG, policies=["best-response:hold-at-5", "hold-at-5"], seed=3)
    assert played["finished"] and played["players"]["first"]["policy"] == "best-response:hold-at-5"
    simulated = json.loads(runner.invoke(main, ["--db", db, "simulate", "pig", "-p", "target=8", "-p", "holds=3,5",
                                                "--policy", "best-response:hold-at-5", "-n", "20000", "--json"],
                                         catch_exceptions=False).output)  # against hold-at-5, moving first
    assert simulated["exact"] == pytest.approx(reported["response_wins"]["first"], rel=1e-12) and abs(simulated["z"]) < 4
    assert simulated["against"] == "hold-at-5"


@pytest.mark.parametrize(("args", "said"), [
    (["solve", "jackpot", "-p", "cells=3", "--objective", "best-response:min"], "is a one-player game"),
    (["solve", "pig", "-p", "target=8", "--objective", "best-response:hold-at-99"], "no policy 'hold-at-99'"),
    (["solve", "pig", "-p", "target=8", "--objective", "most"], "no objective 'most'"),
    (["solve", "5000-race", "-p", "target=100", "--objective", "best-response:threshold-9"], "no policy 'threshold-9'"),
])
def test_a_best_response_that_cannot_be_solved_is_refused_in_one_line_before_any_work(
        tmp_path: Path, args: list[str], said: str) -> None:
    db = f"sqlite:///{tmp_path / 'game.db'}"
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "build", *args[1:4]]).exit_code == 0
    result = runner.invoke(main, ["--db", db, *args])
    assert result.exit_code == 1 and said in result.output and len(result.output.strip().splitlines()) == 1
    params = dict([args[3].split("=")])
    assert [p for p in dicegraph.open(db).policies(args[1], params) if p["method"] == "solve"] == []  # no work


def test_the_explorer_gives_a_two_player_graphs_best_responses_and_where_they_depart_from_the_optimum(
        tmp_path: Path) -> None:
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url = f"sqlite:///{tmp_path / 'pig.db'}"
    report = dicegraph.open(url).report("pig", DEPARTS)
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    assert b'id="play-responses"' in client.get("/graphs/1").data
    shown = client.get("/graphs/1.json?responses=all").get_json()["responses"]
    for found, reported in zip(shown, report["responses"], strict=True):
        assert found["policy"] == reported["policy"]
        for figures in ("optimum_wins", "response_wins", "exploitability"):
            assert found[figures]["mean"] == pytest.approx(reported[figures]["mean"], rel=1e-12)
    page = client.get("/graphs/1?responses=all").get_data(as_text=True)
    assert 'id="responses"' in page and "best-response%3Ahold-at-5" in page
    departing = client.get("/graphs/1.json?policy=best-response:hold-at-5&reference=optimal&against=hold-at-5")
    deviations = departing.get_json()["comparison"]["deviations"]
    assert deviations and all(row["move"] != row["best_move"] for row in deviations)
    engine.dispose()


def test_the_explorer_lists_where_a_races_best_response_departs_from_the_optimum(tmp_path: Path) -> None:
    """A race keeps no values a position (its turn is stored once), yet its graph page lists, position by position,
    where the stored best response to threshold-4 departs from the optimum (the race to 300, where it does), each
    linked to its position, whose page shows both moves: the best response's and the optimum's (and names no agent as
    not evaluated yet: a race's agents are played in its matches alone), and whose diagram draws it and the positions
    one step on."""
    from urllib.parse import quote

    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url, params = f"sqlite:///{tmp_path / 'race.db'}", {"target": 300}
    db = dicegraph.open(url)
    db.build("5000-race", params)
    db.solve("5000-race", params, objective="best-response:threshold-4")
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    asked = "policy=best-response:threshold-4&reference=optimal&against=threshold-4"
    compared = client.get(f"/graphs/1.json?{asked}").get_json()["comparison"]
    assert compared["worse"] > 0 and compared["deviations"]
    html = client.get(f"/graphs/1?{asked}").get_data(as_text=True)
    assert 'id="deviations"' in html and "a game with cycles has no reach probabilities" in html
    for row in compared["deviations"][:3]:
        assert f'/graphs/1/positions/{quote(row["key"], safe="/")}"' in html
        shown = client.get(f"/graphs/1/positions/{quote(row['key'], safe='/')}.json").get_json()
        chosen = {name: move["label"] for move in shown["edges"] for name in move["chosen_by"]}
        assert chosen["best-response:threshold-4"] == row["move"] and chosen["optimal"] == row["best_move"]
        assert shown["not_evaluated"] == []  # the race's agents are played in its matches, never evaluated alone
        drawn = client.get(f"/graphs/1/positions/{quote(row['key'], safe='/')}.svg")  # it and one step on
        assert drawn.status_code == 200 and drawn.get_data(as_text=True).count('class="node"') == 1 + len(shown["edges"])
    engine.dispose()


def test_the_manuals_page_shows_what_the_report_and_the_query_print(tmp_path: Path) -> None:
    """docs/best-response.md: Pig to 30's table of best responses and its count of departures from the optimum."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "best-response.md").read_text()
    db = f"sqlite:///{tmp_path / 'pig.db'}"
    runner = CliRunner()
    reported = runner.invoke(main, ["--db", db, "report", "pig", "-p", "target=30", "-n", "0"], catch_exceptions=False)
    table = reported.stdout.split("on average:\n", 1)[1].strip()
    assert table in page
    sql = page.split('$ dicegraph query "', 1)[1].split('"\n', 1)[0]
    printed = runner.invoke(main, ["--db", db, "query", sql], catch_exceptions=False).stdout.strip()
    assert f'{sql}"\n{printed}\n```' in page
