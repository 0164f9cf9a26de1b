"""The explorer (``dicegraph serve``): every page through Flask's test client, HTML and JSON, on SQLite, DuckDB and
PostgreSQL (a database of its own on the test server, tests/postgres.py).

The numbers a page shows are checked against what the store computed (policy
values, probabilities as exact fractions, what each move gives up); bad input
gets a helpful page and never a traceback; browsing writes nothing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from fractions import Fraction
from pathlib import Path
from urllib.parse import quote, urlencode

import numpy as np
import pytest
import sqlalchemy as sa

from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.graphs import school as school_rules
from dicegraph.graphs.five_dice import describe_decision, keep_byte, sub_multisets
from dicegraph.graphs.yahtzee.boxes import YAHTZEE_BOXES
from dicegraph.store.db import open_database, scratch_database, scratch_reader
from dicegraph.store.report import game_report
from dicegraph.store.schema import graph as graph_table, node
from tests import school_store as school
from tests.commands import engine_on
from tests.postgres import postgres_server

if importlib.util.find_spec("flask") is None:  # CI installs the web extra with the test extra: there, a missing one fails
    if os.environ.get("CI"):
        raise RuntimeError("CI must test the explorer: the test extra brings the web extra")
    pytest.skip("the explorer needs the web extra: pip install -e '.[web]'", allow_module_level=True)

from flask.testing import FlaskClient  # noqa: E402

from tests.processes import served  # noqa: E402
from dicegraph.database import Database
from dicegraph.web.app import create_app  # noqa: E402

BOARD = "6:4>8,7:9>10,8:>8,12:x"  # three runners placed, column 12 claimed: a small turn graph (272 nodes)
GAMES = {"jackpot": {"cells": 4}, "pig": {"target": 6, "holds": (3,)}, "5000-race": {"target": 150},
         "cant-stop-board": {"board": BOARD, "objective": "progress", "prune": True}}


@pytest.fixture(scope="module", params=["sqlite", "duckdb", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path | None, dict]]:
    """URL and file (None on a server) of a database holding Jackpot to 4 cells (graph 1), Pig to 6 (graph 2), the
    5000 race to 150 (graph 3, its turn stored once) and a turn of Can't Stop on a board (graph 4), every policy
    evaluated; and the race's report. PostgreSQL: a database of its own on ``$DICEGRAPH_TEST_POSTGRES``'s server."""
    with ExitStack() as stack:
        if request.param == "postgresql":
            path, url = None, stack.enter_context(scratch_database(postgres_server(), "dicegraph_web"))
        else:
            path = tmp_path_factory.mktemp(request.param) / f"explore.{request.param}"
            url = f"{request.param}:///{path}"
        engine = open_database(url, create=True)
        reports = {name: game_report(engine, get_game(name), params) for name, params in GAMES.items()}
        engine.dispose()
        yield url, path, reports["5000-race"]


@pytest.fixture(scope="module")
def client(database: tuple[str, Path, dict]) -> Iterator[FlaskClient]:
    """The explorer on the database, as ``serve`` opens it (read-only; on PostgreSQL as a role that cannot read
    the server's files, which the SQL console asks for)."""
    with ExitStack() as stack:
        url = database[0]
        if url.startswith("postgresql"):
            url = stack.enter_context(scratch_reader(url))
        engine = open_database(url, read_only=True)
        yield create_app(Database.over(engine)).test_client()
        engine.dispose()


def page(client: FlaskClient, url: str, status: int = 200) -> tuple[str, dict]:
    """Return the HTML at ``url`` and the JSON at ``url`` plus ``.json`` (before its query string), both ``status``."""
    path, _, query = url.partition("?")
    html = client.get(url)
    data = client.get(f"{path}.json" + (f"?{query}" if query else ""))
    assert html.status_code == data.status_code == status, (url, html.status_code, data.status_code)
    text = html.get_data(as_text=True)
    assert "Traceback" not in text and html.mimetype == "text/html" and data.mimetype == "application/json"
    return text, data.get_json()


def position_url(graph_id: int, key: str) -> str:
    """Return the address of a position, its key percent-encoded (slashes kept, as the pages write them)."""
    return f"/graphs/{graph_id}/positions/{quote(key, safe='/')}"


def test_home_lists_the_games_and_the_graphs_with_their_values(client) -> None:
    html, data = page(client, "/")
    assert {game["name"] for game in data["games"]} >= set(GAMES)
    assert [graph["game"] for graph in data["graphs"]] == list(GAMES)
    for graph in data["graphs"]:
        assert f'href="/graphs/{graph["id"]}"' in html
        optimal = next(p for p in graph["policies"] if p["name"] == "optimal")
        assert f"{optimal['value']:.6g}" in html
    assert "hold-at-20" in html  # Pig's default agents, among the games to build


def test_graph_page_gives_layers_policies_and_a_comparison(client) -> None:
    html, data = page(client, "/graphs/1?policy=first&reference=optimal")
    assert data["graph"]["game"] == "jackpot" and len(data["layers"]) == data["graph"]["layers"]
    assert sum(layer["nodes"] for layer in data["layers"]) == data["graph"]["nodes"]
    values = {p["name"]: p["value"] for p in data["policies"]}
    compared = data["comparison"]
    assert compared["expected_loss"] == pytest.approx(values["optimal"] - values["first"], rel=1e-12, abs=1e-15)
    assert compared["deviations"]
    for deviation in compared["deviations"]:
        assert f'href="{position_url(1, deviation["key"])}"' in html
    _, refused = page(client, "/graphs/1?policy=nobody&reference=optimal")
    assert "nobody" in refused["comparison_error"] and "comparison" not in refused


def test_a_graph_page_looks_its_graph_up_once(client) -> None:
    """A graph's page (no comparison asked) reads the graph's row once (:meth:`dicegraph.Database.overview`), its
    policies once (on Spark each lookup is a statement of its own)."""
    sent: list[str] = []

    def count(connection: sa.Connection, cursor: object, statement: str, *args: object) -> None:
        sent.append(" ".join(statement.split()))

    sa.event.listen(sa.Engine, "before_cursor_execute", count)
    try:
        answer = client.get("/graphs/1.json")
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", count)
    graph_rows = [text for text in sent if text.startswith("SELECT graph.id, graph.game") or
                  text.startswith('SELECT "graph".id') or "FROM graph WHERE graph.id" in text]
    assert len(graph_rows) == 1, graph_rows
    assert len([text for text in sent if "policy.objective" in text and "FROM policy" in text]) == 1
    data = answer.get_json()
    assert answer.status_code == 200 and data["layers"] and data["policies"]
    assert data["distributed"] == "payoff at the end" and data["distributions"]


def test_the_home_page_reads_its_graphs_in_as_many_statements_however_many(tmp_path: Path) -> None:
    """The catalog the home page lists (:meth:`dicegraph.Database.catalog`) reads every graph's policies and first
    position in the same statements for one graph as for three (no statement a graph: on Spark each is a round
    trip), and lists for each what the graph's own page and ``policies`` give."""
    import dicegraph

    db = dicegraph.open(f"sqlite:///{tmp_path / 'home.db'}")
    sent: list[str] = []

    def count(connection: sa.Connection, cursor: object, statement: str, *args: object) -> None:
        sent.append(statement)

    def catalog() -> tuple[dict, int]:
        sent.clear()
        sa.event.listen(sa.Engine, "before_cursor_execute", count)
        try:
            return db.catalog(), len(sent)
        finally:
            sa.event.remove(sa.Engine, "before_cursor_execute", count)

    db.report("jackpot", {"cells": 3})
    one, alone = catalog()
    db.report("jackpot", {"cells": 2})
    db.build("pig", {"target": 4, "holds": "4"})
    listed, together = catalog()
    assert len(one["graphs"]) == 1 and len(listed["graphs"]) == 3 and together == alone
    for row in listed["graphs"]:
        assert row["root"] == db.graph(row["id"])["root"] is not None
        assert [policy | {"unit": None} for policy in row["policies"]] == [
            policy | {"unit": None} for policy in db.policies(row["id"])]
    assert [len(row["policies"]) for row in listed["graphs"]][:2] == [7, 7]


def test_graph_page_charts_each_policys_value_and_outcome_distribution(client) -> None:
    """Jackpot pays 1 for a win: each policy's distribution adds up to 1 and its mean is the policy's value.
    Pig's graph has cycles: no distribution, and its chart's address says why."""
    html, data = page(client, "/graphs/1")
    values = {p["name"]: p["value"] for p in data["policies"]}
    assert set(data["distributions"]) == set(values)
    for name, rows in data["distributions"].items():
        assert sum(row["probability"] for row in rows) == pytest.approx(1, rel=1e-12)
        assert sum(row["payoff"] * row["probability"] for row in rows) == pytest.approx(values[name], rel=1e-12)
    for chart in ("values", "distribution"):
        assert f'src="/graphs/1/{chart}.svg"' in html
        answer = client.get(f"/graphs/1/{chart}.svg")
        assert answer.status_code == 200 and answer.mimetype == "image/svg+xml"
        assert all(name in answer.get_data(as_text=True) for name in values)
    _, pig = page(client, "/graphs/2")
    assert pig["distributions"] == {}
    assert client.get("/graphs/2/values.svg").status_code == 200
    assert client.get("/graphs/2/distribution.svg").status_code == 404


def test_the_reports_pictures_are_drawn_on_demand(client) -> None:
    """Pig's hold boundary comes from its charts hook, as a PNG; Jackpot draws none; the race's need work tables,
    which the read-only database allows (temporary ones, never its file)."""
    html, data = page(client, "/graphs/2/charts")
    assert [picture["file"] for picture in data["pictures"]] == ["pig-hold-boundary.png"] and data["error"] is None
    assert 'src="/graphs/2/charts/pig-hold-boundary.png"' in html
    image = client.get("/graphs/2/charts/pig-hold-boundary.png")
    assert image.status_code == 200 and image.get_data()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'id="charts"' in page(client, "/graphs/2")[0] and 'id="charts"' not in page(client, "/graphs/1")[0]
    assert "draws no charts" in page(client, "/graphs/1/charts")[1]["error"]
    _, race = page(client, "/graphs/3/charts")
    assert [picture["file"] for picture in race["pictures"]] == ["5000-race-bank-boundary.png"] and race["error"] is None
    assert client.get("/graphs/2/charts/nothing.png").status_code == 404


def test_a_decision_shows_each_moves_value_the_best_and_what_the_others_give_up(client) -> None:
    html, data = page(client, position_url(1, "0/1-2"))  # roll 1-2 with nothing up: flip 1, 2 or 3
    worth = {edge["label"]: edge["values"]["optimal"] for edge in data["edges"]}
    best = max(worth.values())
    assert data["policies"]["optimal"]["value"] == pytest.approx(best, rel=1e-12)
    assert worth[data["best"]] == best and 'class="best"' in html
    for edge in data["edges"]:
        assert edge["gives_up"] == pytest.approx(best - edge["values"]["optimal"], abs=1e-15)
        assert page(client, position_url(1, edge["to"]))[1]["key"] == edge["to"]  # every move is a working link


def test_the_local_diagram_links_each_position_it_draws(client) -> None:
    """``.svg`` after a position's address: the position and those one step on, each a link to its page."""
    html, data = page(client, position_url(1, "0/1-2"))
    assert f'data="{position_url(1, "0/1-2")}.svg"' in html
    answer = client.get(position_url(1, "0/1-2") + ".svg")
    assert answer.status_code == 200 and answer.mimetype == "image/svg+xml"
    svg = answer.get_data(as_text=True)
    for key in [data["key"], *(edge["to"] for edge in data["edges"])]:
        assert f'xlink:href="{position_url(1, key)}"' in svg
    assert client.get(position_url(1, "no such key") + ".svg").status_code == 404


def test_a_roll_gives_exact_probabilities_that_add_up(client) -> None:
    html, data = page(client, "/graphs/1/positions/0")
    assert data["kind"] == "chance"
    assert sum(Fraction(edge["weight"], data["denom"]) for edge in data["edges"]) == 1
    assert f"{data['edges'][0]['weight']}/{data['denom']}" in html
    chance = sum(Fraction(e["weight"], data["denom"]) * Fraction(e["values"]["optimal"]) for e in data["edges"])
    assert float(chance) == pytest.approx(data["policies"]["optimal"]["value"], rel=1e-12)
    assert data["likely"] == max(data["edges"], key=lambda edge: edge["weight"])["to"]


def test_keys_with_spaces_and_plus_signs_are_addressable(client) -> None:
    """Pig's keys ('2-0 +3') percent-encoded; a bust hands the turn over, so its value is the complement."""
    html, data = page(client, position_url(2, "2-0 +3"))
    assert data["label"] == "me 2, opponent 0, turn total 3"
    hold = next(edge for edge in data["edges"] if edge["label"] == "hold")
    _, after = page(client, position_url(2, hold["to"]))
    assert hold["values"]["optimal"] == pytest.approx(1 - after["policies"]["optimal"]["value"], rel=1e-12)


def test_a_turn_state_of_a_race_shows_its_value_and_what_each_turn_end_is_worth(client, database) -> None:
    """The race's turn states keep their values per state (the turn stored once): the start is worth the report's
    p_first_wins; a bust hands the same scores to the opponent, so it is worth the complement."""
    html, data = page(client, position_url(3, "0-0"))
    report = database[2]
    assert data["policies"]["optimal"]["value"] == pytest.approx(report["p_first_wins"], rel=1e-12)
    bust = next(edge for edge in data["edges"] if edge["label"] == "bust")
    assert bust["values"]["optimal"] == pytest.approx(1 - report["p_first_wins"], rel=1e-12)
    _, home = page(client, "/")
    race = next(graph for graph in home["graphs"] if graph["id"] == 3)
    assert next(p["value"] for p in race["policies"] if p["name"] == "optimal") == pytest.approx(report["p_first_wins"])


def test_a_race_is_played_in_the_browser_each_position_linking_its_turn_state(client) -> None:
    """A game whose turn is stored once is playable from its graph's page like any other: a position in play is
    a turn state and a node of its turn, and its link (and each analysed step's) goes to the turn state's page."""
    html, data = page(client, "/graphs/3")
    assert data["playable"] and 'id="play" href="/graphs/3/play"' in html
    _, played = page(client, "/graphs/3/play?seed=5")  # a first roll that busts; the optimum then wins its turn
    steps = played["analysis"]["steps"]
    assert steps[0]["position"] == "0-0 @ 5d/0" and steps[0]["stored"] == "0-0"
    for step in steps:
        assert step["stored"] == step["position"].partition(" @ ")[0]
        assert step["href"] == position_url(3, step["stored"]) and page(client, step["href"])
    assert played["position"]["href"] == position_url(3, played["position"]["stored"])


def test_the_advisor_plays_a_roll_on_the_graphs_board_as_the_graph_values_it(client) -> None:
    """Can't Stop's advisor (its game's hook): a first visit shows the form; a roll gets every way to play it,
    each valued as the graph's decision node values it, best first with what the others give up; the board is drawn."""
    html, first = page(client, "/graphs/4/advise")
    assert first["advice"] is None and first["error"] is None and [q["name"] for q in first["questions"]] == ["roll"]
    assert 'id="ask"' in html and 'id="advisor"' in page(client, "/graphs/4")[0]
    html, data = page(client, "/graphs/4/advise?roll=3,3,4,5")
    advice = data["advice"]
    _, node = page(client, position_url(4, advice["position"]))
    assert node["kind"] == "decision"
    graph_values = {edge["label"]: edge["values"]["optimal"] for edge in node["edges"]}
    assert {a["move"]: a["value"] for a in advice["alternatives"]} == graph_values
    best = max(graph_values.values())
    assert advice["decision"] == advice["alternatives"][0]["move"] and advice["alternatives"][0]["value"] == best
    for alternative in advice["alternatives"]:
        assert alternative["gives_up"] == pytest.approx(best - alternative["value"], abs=1e-15)
    assert "3-3-4-5" in advice["situation"] and 'class="best"' in html and 'class="claimed"' in advice["picture"]
    assert '<svg' in html and f'href="{position_url(4, advice["position"])}"' in html
    _, before = page(client, "/graphs/4/advise?roll=")  # no roll: stop now, or roll and play on?
    start = page(client, position_url(4, before["advice"]["position"]))[1]["policies"]["optimal"]["value"]
    assert {a["move"] for a in before["advice"]["alternatives"]} == {"stop", "roll"}
    assert next(a["value"] for a in before["advice"]["alternatives"] if a["move"] == "roll") == start


def test_the_advisor_says_what_to_type_and_is_there_only_for_games_with_one(client) -> None:
    html, bad = page(client, "/graphs/4/advise?roll=1,2,3", status=400)
    assert "four dice" in bad["error"] and bad["advice"] is None and 'id="ask"' in html and 'value="1,2,3"' in html
    _, none = page(client, "/graphs/1/advise", status=404)
    assert "jackpot has no advisor" in none["error"] and "school" in none["error"]
    assert 'id="advisor"' not in page(client, "/graphs/1")[0]


def test_schools_advisor_names_each_policys_move_and_values_every_alternative(whole_game: str) -> None:
    """School's advisor on the whole solved game (its turn stored once, solved for the one state asked about):
    where Bob and the optimum disagree, found in their stored decision bytes, the page names both moves; with
    one combination left and no reroll, scoring it is worth its points under the rules."""
    with engine_on(whole_game) as writer, writer.connect() as connection:
        graph_id = connection.execute(sa.select(graph_table.c.id).where(graph_table.c.game == "school")).scalar_one()
        optimal, bob = (school.decision_array(connection, graph_id, school.ensure_policy(connection, graph_id, name))
                        for name in ("optimal", "bob"))
    with engine_on(whole_game, read_only=True) as engine:
        client = create_app(Database.over(engine)).test_client()
        unused, outcome, left = (int(i[0]) for i in np.nonzero((optimal != bob) & (optimal > 0)))
        dice = school_rules.OUTCOMES[outcome]
        used = ",".join(c for i, c in enumerate(school_rules.COMBINATIONS) if not unused >> i & 1)
        asked = urlencode({"roll": ",".join(map(str, dice)), "rolls_left": left, "used": used, "policy": "bob"})
        html, data = page(client, f"/graphs/{graph_id}/advise?{asked}")
        advice = data["advice"]
        assert advice["decision"] == school_rules.describe_decision(int(bob[unused, outcome, left]), dice)
        assert advice["others"] == {"optimal": school_rules.describe_decision(int(optimal[unused, outcome, left]), dice)}
        assert "bob's profit" in advice["alternatives"][0] and "bob&#39;s profit" in html
        poker = school_rules.COMBINATIONS.index("Poker")
        used = ",".join(c for i, c in enumerate(school_rules.COMBINATIONS) if i != poker)
        _, last = page(client, f"/graphs/{graph_id}/advise?{urlencode({'roll': '6,6,6,6,6', 'rolls_left': 0, 'used': used})}")
        assert last["advice"]["decision"] == "score Poker"
        assert last["advice"]["alternatives"][0]["value"] == school_rules.points(poker, (6, 6, 6, 6, 6))
        _, bad = page(client, f"/graphs/{graph_id}/advise?roll=1,2,3&rolls_left=2", status=400)
        assert "five dice" in bad["error"]


def chance_alone(dice: tuple[int, ...], rerolls_left: int) -> Fraction:
    """Return the exact expected score of Yahtzee's Chance box alone, from ``dice`` with ``rerolls_left``, played
    best: score the sum now, or keep some dice and roll the rest (a recursion over the rules, in fractions)."""
    if rerolls_left == 0:
        return Fraction(sum(dice))
    return max([Fraction(sum(dice))] + [chance_keep(kept, rerolls_left) for kept in set(sub_multisets(dice))
                                        if len(kept) < len(dice)])


@functools.cache
def chance_keep(kept: tuple[int, ...], rerolls_left: int) -> Fraction:
    """Return the exact worth of keeping ``kept`` and rolling the other dice (Chance alone open)."""
    rolled = list(itertools.product(range(1, 7), repeat=5 - len(kept)))
    return sum((chance_alone(tuple(sorted(kept + more)), rerolls_left - 1) for more in rolled), Fraction(0)) / len(rolled)


def test_yahtzees_advisor_uses_the_same_hook_and_values_each_move_as_the_rules_do(yahtzee_game: str) -> None:
    """Yahtzee (without bonuses), a game added after School, advises through the same hook and five-dice advice:
    with Chance alone open, every alternative's value equals an exact recursion over the rules."""
    with engine_on(yahtzee_game, read_only=True) as engine:
        client = create_app(Database.over(engine)).test_client()
        graph_id = next(g["id"] for g in page(client, "/")[1]["graphs"] if g["game"] == "yahtzee")
        asked = [q["name"] for q in page(client, f"/graphs/{graph_id}/advise")[1]["questions"]]
        assert asked == ["roll", "rolls_left", "filled", "policy"]  # no upper total, no Yahtzee bonus: bonuses are off
        dice = (1, 2, 2, 4, 5)
        filled = ",".join(box for box in YAHTZEE_BOXES if box != "Chance")
        for left in (2, 1, 0):
            asked = urlencode({"roll": ",".join(map(str, dice)), "rolls_left": left, "filled": filled})
            html, data = page(client, f"/graphs/{graph_id}/advise?{asked}")
            advice = data["advice"]
            keeps = {describe_decision(keep_byte(dice, kept), dice, ()): kept for kept in sub_multisets(dice) if len(kept) < 5}
            exact = {"score Chance": Fraction(sum(dice))} | {move: chance_keep(kept, left) for move, kept in keeps.items()
                                                             if left}
            assert {a["move"] for a in advice["alternatives"]} == set(exact)
            for alternative in advice["alternatives"]:
                assert alternative["value"] == pytest.approx(float(exact[alternative["move"]]), rel=1e-12)
            assert advice["alternatives"][0]["value"] == pytest.approx(float(chance_alone(dice, left)), rel=1e-12)
            assert set(advice["others"]) == {"greedy", "above-average"} and 'class="best"' in html
        _, twice = page(client, f"/graphs/{graph_id}/advise?roll=1,2,2,4,5&filled=Aces,aces", status=400)
        assert "named twice" in twice["error"]


def test_search_finds_positions_by_key_or_label(client) -> None:
    html, data = page(client, "/graphs/2/search?q=opponent 0, turn total 3")
    assert "2-0 +3" in [found["key"] for found in data["positions"]]
    assert f'href="{position_url(2, "2-0 +3")}"' in html


def test_sql_console_shows_rows_and_links_keys(client) -> None:
    sql = "SELECT graph, key, policy, value FROM positions WHERE graph = 1 AND policy = 'optimal' ORDER BY node LIMIT 3"
    html, data = page(client, f"/sql?sql={quote(sql)}")
    assert data["columns"] == ["graph", "key", "policy", "value"] and len(data["rows"]) == 3
    assert data["links"][0] == {"key": [1, data["rows"][0][1]]}
    assert 'href="/graphs/1/positions/0"' in html


def test_bad_input_gets_a_page_that_helps_and_no_traceback(client, database) -> None:
    _, missing_graph = page(client, "/graphs/99", status=404)
    assert missing_graph["error"] == "no graph 99 in the database"
    html, missing_key = page(client, position_url(1, "no such key"), status=404)
    assert "no position with key 'no such key'" in missing_key["error"]
    assert 'action="/graphs/1/search"' in html  # a search of the graph instead
    page(client, "/nowhere", status=404)
    html, malformed = page(client, f"/sql?sql={quote('SELEC 1')}", status=400)
    assert malformed["error"].startswith("SQL error") and "SQL error" in html
    with open_database(database[0], read_only=True).connect() as connection:
        nodes = connection.execute(sa.select(sa.func.count()).select_from(node)).scalar()
    html, refused = page(client, f"/sql?sql={quote('DELETE FROM node')}", status=403)
    assert refused["refused"] and "only reads" in html
    with open_database(database[0], read_only=True).connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(node)).scalar() == nodes


def test_an_unexpected_failure_is_a_page_without_its_traceback(database, monkeypatch) -> None:
    from dicegraph.web import pages

    def broken(connection):  # noqa: ANN001, ANN202
        raise ZeroDivisionError("deep inside")

    monkeypatch.setattr(pages, "home_page", broken)
    engine = open_database(database[0], read_only=True)
    client = create_app(Database.over(engine)).test_client()
    response = client.get("/")
    assert response.status_code == 500 and "deep inside" not in response.get_data(as_text=True)
    assert "Traceback" not in response.get_data(as_text=True)
    assert client.get("/.json").get_json()["status"] == 500
    engine.dispose()


def stored_state(url: str, path: Path | None) -> str:
    """Return a fingerprint of what the database holds: its file's hash, or on a server each table's rows."""
    if path is not None:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    engine = open_database(url, read_only=True)
    with engine.connect() as connection:
        tables = sorted(sa.inspect(connection).get_table_names())
        counted = {name: connection.execute(sa.text(f'SELECT count(*) FROM "{name}"')).scalar() for name in tables}
    engine.dispose()
    return json.dumps(counted)


def test_browsing_writes_nothing(client, database) -> None:
    before = stored_state(database[0], database[1])
    for url in ["/", "/graphs/1", "/graphs/2", "/graphs/1/positions/0", position_url(2, "0-0 +0"), "/graphs/1/search?q=up",
                "/graphs/3/charts", "/graphs/4/advise?roll=3,3,4,5"]:  # the last two work in temporary tables
        page(client, url)
    assert stored_state(database[0], database[1]) == before


def test_serve_answers_on_127_0_0_1_and_says_when_the_port_is_taken(database, runner, tmp_path) -> None:
    url, path, _ = database
    if url.startswith("duckdb"):  # DuckDB lets one process hold a file, and this one holds the fixture's: serve a copy
        shutil.copy(path, tmp_path / path.name)
        url = f"duckdb:///{tmp_path / path.name}"
    with served(url) as address:
        with urllib.request.urlopen(f"{address}/.json", timeout=10) as answer:
            listed = json.load(answer)
        assert address.startswith("http://127.0.0.1:")
        assert [graph["game"] for graph in listed["graphs"]] == list(GAMES)
        port = address.rsplit(":", 1)[1]  # a second viewer opens the database beside the first (DuckDB: read-only)
        taken = runner.invoke(main, ["--db", url, "serve", "--port", port])
        assert taken.exit_code != 0 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr


def test_a_stopped_server_leaves_no_temporary_files(tmp_path, runner, monkeypatch) -> None:
    """The explorer makes the folder where it draws the games' charts when a charts page is first viewed, and
    removes it when stopped as a service manager stops it (SIGTERM, what ``served`` sends)."""
    url = f"sqlite:///{tmp_path / 'small.db'}"
    assert runner.invoke(main, ["--db", url, "build", "jackpot", "-p", "cells=3"]).exit_code == 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    with served(url) as address:
        urllib.request.urlopen(f"{address}/graphs/1.json", timeout=10).close()
        assert list(scratch.iterdir()) == []  # made when a charts page is first viewed
        urllib.request.urlopen(f"{address}/graphs/1/charts.json", timeout=10).close()
        assert [path.name.startswith("dicegraph-explorer-") for path in scratch.iterdir()] == [True]
    assert list(scratch.iterdir()) == []


def test_a_game_played_page_by_page_is_the_analysis_of_its_record(client: FlaskClient) -> None:
    """Pig to 6 (graph 2) in the second seat against hold-at-3, the first move offered taken at each step: every
    step is a page and its JSON; at the end the record, pasted into /analyse or uploaded as a file, analyses to
    the game's own analysis, its values keeping the identity."""
    import io
    from urllib.parse import quote

    html, data = page(client, "/graphs/2/play?seat=second&against=hold-at-3&seed=4")
    assert 'id="options"' in html or data["finished"]
    while not data["finished"]:
        assert data["options"] and data["expects"] == "move" and data["to_move"] == "second"
        html, data = page(client, data["options"][0]["href"])
    assert data["record"]["seats"] == {"first": "hold-at-3", "second": "you"}
    _, pasted = page(client, f"/analyse?record={quote(data['record_text'])}")
    assert pasted["analysis"]["steps"] == data["analysis"]["steps"] and pasted["error"] is None  # hrefs as well
    assert all(step["href"].startswith("/graphs/2/positions/") for step in pasted["analysis"]["steps"])
    identity = pasted["analysis"]["identity"]
    assert identity["sum_of_steps"] == pytest.approx(identity["change"], abs=1e-12)
    uploaded = client.post("/analyse.json", data={"file": (io.BytesIO(data["record_text"].encode()), "game.json")},
                           content_type="multipart/form-data")
    assert uploaded.status_code == 200 and uploaded.get_json()["analysis"] == pasted["analysis"]
    assert client.get(pasted["chart"]).mimetype == "image/svg+xml"
    assert client.get("/graphs/2/play").status_code == 302  # a new game gets a seed in its address


def test_a_race_whose_turn_is_stored_once_is_played_page_by_page(client: FlaskClient) -> None:
    """The race to 150 (graph 3, its turn stored once) in the first seat against threshold-3, the first move offered
    taken at each step: each position is a turn state and a node of its turn (``STATE @ NODE``), a move into the
    turn's end leads on to the next state's turn, and the analysis links each step to its turn state's page."""
    from urllib.parse import quote

    _, data = page(client, "/graphs/3/play?seat=first&against=threshold-3&seed=2")
    assert data["position"]["key"].startswith("0-0 @ ")
    while not data["finished"]:
        assert data["options"] and (data["to_move"] == "first" or data["expects"] == "roll")
        _, data = page(client, data["options"][0]["href"])
    analysis = data["analysis"]
    assert analysis["outcome"] in (0.0, 1.0)
    assert analysis["identity"]["sum_of_steps"] == pytest.approx(analysis["identity"]["change"], abs=1e-12)
    _, pasted = page(client, f"/analyse?record={quote(data['record_text'])}")
    states = {step["position"].split(" @ ")[0] for step in pasted["analysis"]["steps"]}
    assert {step["href"] for step in pasted["analysis"]["steps"]} == {f"/graphs/3/positions/{state}" for state in states}
    assert all(page(client, href)[1]["key"] in states for href in {step["href"] for step in pasted["analysis"]["steps"]})


def test_typed_dice_in_the_browser_are_checked_and_kept_in_the_address(client: FlaskClient) -> None:
    """Pig to 6 with ``dice=manual``: no seed, every roll offered as a link and typed into the page's form (one
    face of a roll, checked as the command line checks it); a roll that cannot be rolled is refused in one line
    and the game's address before it still plays on."""
    html, data = page(client, "/graphs/2/play?dice=manual&against=hold-at-3")
    assert client.get("/graphs/2/play?dice=manual").status_code == 200  # no seed asked for: the dice are typed
    assert data["record"]["seed"] is None and 'id="type-roll"' not in html  # the first step is the first's move
    _, data = page(client, data["options"][0]["href"])  # roll
    assert data["expects"] == "roll" and {option["label"] for option in data["options"]} >= {"2", "1: bust"}
    steps = quote(json.dumps(data["record"]["steps"]))
    html, typed = page(client, f"/graphs/2/play?dice=manual&against=hold-at-3&steps={steps}&roll=4")
    assert 'id="type-roll"' in html or typed["expects"] == "move"
    assert typed["record"]["steps"][-1] == {"roll": "4"} and typed["analysis"]["steps"][-1]["kind"] == "roll"
    refused = client.get(f"/graphs/2/play.json?dice=manual&against=hold-at-3&steps={steps}&roll=7")
    assert refused.status_code == 400 and "'7' is not offered" in refused.get_json()["error"]
    assert client.get(f"/graphs/2/play.json?dice=manual&against=hold-at-3&steps={steps}").status_code == 200
