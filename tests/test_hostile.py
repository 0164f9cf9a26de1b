"""The second hostile run (issue 36): each family of failure it found, kept fixed by a test.

Each test stands for a family, not one input: concurrent diagrams on both
drawing routes, the SQL console beside the pages, files read through SQL on
every backend, comparisons that mean nothing, two races in one database,
tracebacks, pages that fail or mislead, waits with no end in sight, and
DuckDB's memory.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from dicegraph.store.render import available_renderers
from tests.commands import ENDLESS, assert_close, assert_one_line_error, run
from tests.processes import served


@pytest.fixture(scope="module")
def small_jackpot(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a SQLite file holding Jackpot with 4 cells, solved with every agent evaluated (graph 1)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'jackpot.db'}"
    assert run(url, "report", "jackpot", "-p", "cells=4", "-n", "0").exit_code == 0
    return url


def fetch(address: str) -> tuple[int, bytes]:
    """Return the status and body of a GET of ``address`` (an error status too)."""
    try:
        with urllib.request.urlopen(address, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.parametrize("route", ["python", "dot"])
def test_simultaneous_diagrams_never_take_the_server_down(small_jackpot: str, route: str, tmp_path: Path) -> None:
    """Sixteen position diagrams asked for by eight threads at once, two each, on each drawing route: every one is
    drawn, alike, and the server lives on. The pure-Python route is forced by a PATH without Graphviz."""
    if route not in available_renderers():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must test the {route!r} drawing route")
        pytest.skip(f"the {route!r} drawing route is not installed here")
    env = dict(os.environ, PATH=str(tmp_path)) if route == "python" else None  # no dot on that PATH
    answers: list[tuple[int, bytes]] = []
    with served(small_jackpot, env=env) as address:
        def ask() -> None:
            for key in ("0", "0/1-2"):
                answers.append(fetch(f"{address}/graphs/1/positions/{key}.svg"))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert fetch(f"{address}/.json")[0] == 200
    assert len(answers) == 16 and {status for status, _ in answers} == {200}
    assert len({body for _, body in answers}) == 2  # one drawing per position, the same every time
    assert all(body.lstrip().startswith(b"<?xml") or b"<svg" in body[:400] for _, body in answers)


# statements that would read the server's files, by family, on each backend: none may answer with a file's content
READING_FILES = {
    "sqlite": ["SELECT load_extension('/usr/lib/x86_64-linux-gnu/libc.so.6')", "SELECT readfile('/etc/passwd')",
               "ATTACH '/etc/passwd' AS p", "SELECT * FROM pragma_table_list('sqlite_master', 'p')"],
    "duckdb": ["SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM glob('/root/**')",
               "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM '/etc/passwd'",
               "SELECT * FROM read_blob('/etc/passwd')", "ATTACH '/tmp/other.duckdb' AS o",
               "COPY node FROM '/etc/passwd'"],
    "postgresql": ["SELECT pg_read_file('/etc/passwd')", "SELECT pg_read_binary_file('/etc/passwd')",
                   "SELECT * FROM pg_ls_dir('/')", "SELECT lo_import('/etc/passwd')",
                   "COPY node FROM '/etc/passwd'", "SELECT pg_stat_file('/etc/passwd')"],
}
SECRET = "root:"  # what /etc/passwd's first line starts with


@pytest.fixture(scope="module", params=["sqlite", "duckdb", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """(backend, URL to build with, URL to read with) of a database holding Jackpot with 3 cells; on PostgreSQL
    the reading URL is a role without access to the server's files (the build's is a superuser)."""
    from contextlib import ExitStack

    from dicegraph.store.db import scratch_database, scratch_reader
    from tests.postgres import postgres_server

    with ExitStack() as stack:
        if request.param == "postgresql":
            url = stack.enter_context(scratch_database(postgres_server(), "dicegraph_hostile"))
        else:
            url = f"{request.param}:///{tmp_path_factory.mktemp(request.param) / 'files.db'}"
        assert run(url, "build", "jackpot", "-p", "cells=3").exit_code == 0
        reading = stack.enter_context(scratch_reader(url)) if request.param == "postgresql" else url
        yield request.param, url, reading


def test_query_reads_no_file_but_the_database(backend) -> None:  # noqa: ANN001
    """Every family of file-reading statement fails in one line through ``query``, never printing a file."""
    name, _, reading = backend
    for statement in READING_FILES[name]:
        result = run(reading, "query", statement)
        assert_one_line_error(result)
        assert SECRET not in result.output and "/root/" not in result.stdout, (statement, result.output)


def test_the_sql_console_reads_no_file_but_the_database(backend) -> None:  # noqa: ANN001
    from dicegraph.store.db import open_database
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    name, _, reading = backend
    engine = open_database(reading, read_only=True)
    try:
        client = create_app(Database.over(engine)).test_client()
        for statement in READING_FILES[name]:
            for address in ("/sql", "/sql.json"):
                answer = client.get(address, query_string={"sql": statement})
                assert answer.status_code in (400, 403), (statement, answer.status_code)
                assert SECRET not in answer.get_data(as_text=True), statement
        assert client.get("/sql.json", query_string={"sql": "SELECT COUNT(*) AS n FROM node"}).get_json()["rows"]
    finally:
        engine.dispose()


def test_query_refuses_a_postgresql_role_that_may_read_the_servers_files() -> None:
    """A superuser's read-only transaction still reads files (pg_read_file): query refuses to run as one, and says
    how to connect instead; --write (the user's own choice) runs."""
    from dicegraph.store.db import scratch_database
    from tests.postgres import postgres_server

    with scratch_database(postgres_server(), "dicegraph_superuser") as url:
        assert run(url, "build", "jackpot", "-p", "cells=2").exit_code == 0
        assert_one_line_error(run(url, "query", "SELECT 1"), "may read the server's files", "pg_read_all_data")
        assert run(url, "query", "--write", "SELECT 1 AS one").exit_code == 0


def strict_json(text: str):  # noqa: ANN201
    """Return ``text`` parsed as JSON that holds no NaN or infinity (which JSON itself has no word for)."""
    def refuse(word: str) -> None:
        raise ValueError(f"not JSON: {word}")

    return json.loads(text, parse_constant=refuse)


def test_the_sql_console_never_holds_the_pages(small_jackpot: str) -> None:
    """Eight endless statements at once: two run until their time limit, six are told at once that the console is
    busy, and a position page answers while they run (the console's slots are apart from the pages' threads)."""
    events: list[tuple[str, int]] = []
    with served(small_jackpot, options=("--sql-timeout", "5", "--sql-slots", "2")) as address:
        def console() -> None:
            status, _ = fetch(f"{address}/sql.json?sql={urllib.request.quote(ENDLESS)}")
            events.append(("sql", status))

        threads = [threading.Thread(target=console) for _ in range(8)]
        for thread in threads:
            thread.start()
        while len(events) < 6:  # the busy answers come first
            threading.Event().wait(0.05)
        events.append(("page", fetch(f"{address}/graphs/1/positions/0.json")[0]))
        for thread in threads:
            thread.join()
    assert sorted(status for kind, status in events if kind == "sql") == [400, 400] + [503] * 6
    assert events[6] == ("page", 200) and [kind for kind, _ in events[7:]] == ["sql", "sql"]


def test_the_sql_console_cuts_what_is_too_large_and_says_so(small_jackpot: str) -> None:
    from dicegraph.store.db import open_database
    from dicegraph.database import Database
    from dicegraph.web.app import create_app
    from dicegraph.web.limits import MAX_CELL_CHARS, MAX_RESULT_CHARS, MAX_ROWS

    engine = open_database(small_jackpot, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    huge = client.get("/sql.json", query_string={"sql": "SELECT randomblob(30000000) AS b, 1e999 AS inf"})
    data = strict_json(huge.get_data(as_text=True))
    assert huge.status_code == 200 and len(data["rows"][0][0]) == MAX_CELL_CHARS + 3 and data["rows"][0][1] is None
    assert "cut" in data["truncated"]
    many = strict_json(client.get("/sql.json", query_string={
        "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT x FROM c"}).data)
    assert len(many["rows"]) == MAX_ROWS and f"first {MAX_ROWS:,} rows" in many["truncated"]
    wide = client.get("/sql", query_string={
        "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 900) SELECT randomblob(4000) FROM c"})
    text = wide.get_data(as_text=True)
    assert wide.status_code == 200 and len(text) < 2 * MAX_RESULT_CHARS and "a page holds at most" in text
    small = strict_json(client.get("/sql.json", query_string={"sql": "SELECT x'00ff' AS b"}).data)
    assert small["rows"] == [["\\x00ff"]] and small["truncated"] is None
    engine.dispose()


def test_query_json_stays_json_with_blobs_and_non_finite_floats(small_jackpot: str) -> None:
    result = run(small_jackpot, "query", "--json", "SELECT x'00ff' AS b, 1e999 AS inf, -1e999 AS minus, 0.5 AS half")
    assert result.exit_code == 0, result.output
    assert strict_json(result.stdout) == [{"b": "\\x00ff", "inf": None, "minus": None, "half": 0.5}]
    text = run(small_jackpot, "query", "SELECT x'00ff' AS b")
    assert text.exit_code == 0 and "\\x00ff" in text.stdout


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_two_races_in_one_database_report_as_each_alone(backend: str, tmp_path: Path) -> None:
    """The races to 100 and to 150 in one file: the report of each equals the report of that race alone in a file
    of its own (a statement that joined every graph's edges broke the second report, and every one after it)."""
    def report(url: str, target: int) -> dict:
        result = run(url, "report", "5000-race", "-p", f"target={target}", "-n", "0", "--json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        data.pop("graph")
        return data

    shared = f"{backend}:///{tmp_path / 'both.db'}"
    alone = {target: report(f"{backend}:///{tmp_path / f'{target}.db'}", target) for target in (100, 150)}
    for target in (150, 100):
        assert_close(report(shared, target), alone[target])


# the smallest parameters each game accepts (dicegraph games lists the ranges)
SMALLEST = {
    "jackpot": ["cells=2"], "shut-the-box": ["tiles=2"], "shut-the-box one die": ["tiles=2", "one_die=on"],
    "shut-the-box forced": ["tiles=2", "one_die=forced"], "cant-stop": ["columns=2", "worth=one"],
    "pig": ["target=2", "holds=1"], "5000-race": ["target=100"],
    "synthetic": ["layers=2", "width=1", "fanout=1"],
    "cant-stop-board": ["board=2:x,3:x,4:x,5:x,6:x,7:x,8:x,9:x,10:x,11:x,12:x"],
}


@pytest.mark.parametrize("case", sorted(SMALLEST))
def test_a_report_on_the_smallest_parameters_runs(case: str, tmp_path: Path) -> None:
    """Every report, with its charts and diagrams, on the smallest board or target its game allows."""
    params = [option for value in SMALLEST[case] for option in ("-p", value)]
    url = f"sqlite:///{tmp_path / 'small.db'}"
    result = run(url, "report", case.split()[0], *params, "-n", "50", "--diagrams", str(tmp_path / "drawn"))
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "Traceback" not in result.output


HUGE_IDS = [str(2**63), str(10**30), "²"]


def test_graph_ids_past_64_bits_are_not_found_in_one_line(small_jackpot: str) -> None:
    from dicegraph.store.db import open_database
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    for ref in HUGE_IDS:
        for args in (["show", ref, "0"], ["policies", ref], ["compare", ref, "hilo"], ["propagate", ref],
                     ["export", ref, "-o", "x.dot"]):
            assert_one_line_error(run(small_jackpot, *args), "no graph")
    engine = open_database(small_jackpot, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    for ref in HUGE_IDS[:2]:
        for address in (f"/graphs/{ref}", f"/graphs/{ref}.json", f"/graphs/{ref}/positions/0",
                        f"/graphs/{ref}/positions/0.json", f"/graphs/{ref}/search.json?q=1", f"/graphs/{ref}/values.svg"):
            assert client.get(address).status_code == 404, address
    engine.dispose()


@pytest.mark.parametrize("host", ["no such host!", "999.1.1.1", ""])
def test_serve_refuses_a_host_it_cannot_listen_on_in_one_line(small_jackpot: str, host: str) -> None:
    assert_one_line_error(run(small_jackpot, "serve", "--host", host, "--port", "0"), "--host")


def test_a_damaged_file_says_so_in_one_line_on_every_command(small_jackpot: str, tmp_path: Path) -> None:
    """Pages of the node and edge tables overwritten: each command that reads them says the file is damaged and
    what still works, in one line; the explorer's page says the same."""
    import random
    import sqlite3

    from dicegraph.store.db import open_database
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    damaged = tmp_path / "damaged.db"
    shutil.copy(small_jackpot.removeprefix("sqlite:///"), damaged)
    with sqlite3.connect(damaged) as connection:  # every page but the schema's and the graph table's
        pages = connection.execute("SELECT pageno FROM dbstat WHERE name IN ('node', 'edge', 'value')").fetchall()
    generator = random.Random(1)
    with open(damaged, "r+b") as handle:
        for (number,) in pages:
            handle.seek((number - 1) * 4096)
            handle.write(bytes(generator.randrange(256) for _ in range(4096)))
    url = f"sqlite:///{damaged}"
    for args in (["show", "1", "0"], ["export", "1", "--full", "-o", str(tmp_path / "x.dot")],
                 ["query", "SELECT SUM(weight) FROM edge"], ["propagate", "1"]):
        assert_one_line_error(run(url, *args), "damaged", "sqlite3 FILE .recover")
    assert run(url, "graphs").exit_code == 0  # what reads only the undamaged parts still works
    engine = open_database(url, read_only=True)
    answer = create_app(Database.over(engine)).test_client().get("/graphs/1/positions/0.json")
    assert answer.status_code == 500 and "damaged" in answer.get_json()["error"]
    engine.dispose()


def test_report_refuses_one_game_of_monte_carlo_before_any_work(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}"
    assert_one_line_error(run(url, "report", "jackpot", "-n", "1"), "-n", "at least 2")
    assert not (tmp_path / "none.db").exists()


def test_duckdb_uses_at_most_the_memory_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--memory (or $DICEGRAPH_MEMORY) bounds DuckDB, for writers and viewers alike, and a report runs under a
    small bound; a size that is none is refused in one line."""
    pytest.importorskip("duckdb_engine")
    url = f"duckdb:///{tmp_path / 'bounded.duckdb'}"
    built = run(url, "--memory", "256MiB", "report", "shut-the-box", "-n", "0", "--json")
    assert built.exit_code == 0, built.output
    setting = "SELECT current_setting('memory_limit') AS m"
    assert json.loads(run(url, "--memory", "256MiB", "query", "--json", setting).stdout) == [{"m": "256.0 MiB"}]
    monkeypatch.setenv("DICEGRAPH_MEMORY", "300MiB")
    assert json.loads(run(url, "query", "--json", setting).stdout) == [{"m": "300.0 MiB"}]
    for wrong in ("lots", "0%", "1KB"):
        assert_one_line_error(run(url, "--memory", wrong, "graphs"), "--memory")


def test_compare_in_a_two_player_game_is_a_match_in_a_stated_seat(tmp_path: Path) -> None:
    """Pig to 10: hold-at-4 against the optimum, each playing a stated opponent in a stated seat; every
    probability equals the exact one (tests/pig_exact.py, rationals from the rules) to 1e-12, and no loss is
    negative where the reference is the optimum."""
    from dicegraph.graphs import pig
    from tests import pig_exact

    target = 10
    url = f"sqlite:///{tmp_path / 'pig.db'}"
    assert run(url, "report", "pig", "-p", f"target={target}", "-p", "holds=4", "-n", "0").exit_code == 0
    _, best = pig_exact.optimum(target)
    plays = {"optimal": best.__getitem__, "hold-at-4": pig.hold_at(4)}

    def wins(first: str, second: str) -> float:
        return float(pig_exact.evaluate(target, plays[first], plays[second])[0, (0, 0, 0)])

    for opponent in ("optimal", "hold-at-4"):
        for seat in ("first", "second"):
            result = run(url, "compare", "pig", "hold-at-4", "--against", opponent, "--seat", seat, "--json")
            assert result.exit_code == 0, result.output
            data = strict_json(result.stdout)
            assert data["unit"] == "probability that the player to move wins" and data["opponent"] == opponent
            for name, role in (("hold-at-4", "policy"), ("optimal", "reference")):
                assert data["seats"]["first"][role] == pytest.approx(wins(name, opponent), rel=1e-12)
                assert data["seats"]["second"][role] == pytest.approx(1 - wins(opponent, name), rel=1e-12)
            assert data["expected_loss"] == data["seats"][seat]["loss"] > 0
    text = run(url, "compare", "pig", "hold-at-4", "--top", "3")
    assert text.exit_code == 0 and "moving second, against optimal" in text.stdout
    assert "largest deviations (loss at the node; a game with cycles has no reach)" in text.stdout


def test_compare_refuses_values_of_other_units_and_seats_of_one_player_games(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'box.db'}"
    assert run(url, "report", "shut-the-box", "-p", "tiles=4", "-n", "0").exit_code == 0
    assert_one_line_error(run(url, "compare", "shut-the-box", "optimal-shut"), "different units",
                          "probability that payoff = 0", "expected score")
    assert_one_line_error(run(url, "compare", "shut-the-box", "greedy", "--seat", "second"), "one-player game")
    listed = strict_json(run(url, "policies", "shut-the-box", "--json").stdout)
    assert {row["name"]: row["unit"] for row in listed} == {
        "greedy": "expected score", "optimal": "expected score", "optimal-shut": "probability that payoff = 0"}


def test_compare_plays_a_races_fixed_strategies_against_the_optimum(tmp_path: Path) -> None:
    """The race to 150: a fixed strategy compared without any solve of its own (it is a match), equal to the
    exact match (tests/race_exact.py), and position by position against the optimum's values (its departures,
    each a move other than the optimum's, with what it loses there)."""
    from tests import race_exact

    url = f"sqlite:///{tmp_path / 'race.db'}"
    assert run(url, "report", "5000-race", "-p", "target=150", "-n", "0").exit_code == 0
    data = strict_json(run(url, "compare", "5000-race", "threshold-2", "--json").stdout)
    first, second = race_exact.match(150, "threshold-2", "optimal")
    assert data["seats"]["first"]["policy"] == pytest.approx(float(first), rel=1e-12)
    assert data["seats"]["second"]["policy"] == pytest.approx(1 - float(second), rel=1e-12)
    assert data["expected_loss"] > 0 and data["decisions"] > data["worse"] > 0
    assert len(data["deviations"]) == min(10, data["worse"])
    assert all(row["move"] != row["best_move"] and row["loss"] > 0 and row["reach"] is None
               for row in data["deviations"])


def test_the_explorers_graph_page_compares_two_player_policies_and_keeps_units_apart(tmp_path: Path) -> None:
    """Pig to 10 (its compare form answered 500), the race to 150 (its strategies were listed without values) and
    Shut The Box (a goal's probability beside expected scores): each page answers, a two-player comparison is a
    match in a seat, equal to compare's, and Pig's layers are shown a cyclic component a row."""
    from dicegraph.store.db import open_database
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url = f"sqlite:///{tmp_path / 'three.db'}"
    for game, param in (("pig", "target=10"), ("5000-race", "target=150"), ("shut-the-box", "tiles=4")):
        assert run(url, "report", game, "-p", param, "-n", "0").exit_code == 0
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    for graph, policy in ((1, "hold-at-20"), (2, "threshold-2")):
        address = f"/graphs/{graph}?policy={policy}&reference=optimal&against=optimal&seat=second"
        html, data = client.get(address), client.get(address.replace("?", ".json?")).get_json()
        assert html.status_code == 200 and data["two_player"], address
        expected = strict_json(run(url, "compare", str(graph), policy, "--seat", "second", "--json").stdout)
        assert data["comparison"]["seats"] == expected["seats"] and data["comparison"]["seat"] == "second"
        assert "gives up" in html.get_data(as_text=True) and 'id="values-chart"' not in html.get_data(as_text=True)
    pig = client.get("/graphs/1.json").get_json()
    assert len(pig["layer_rows"]) < len(pig["layers"]) == pig["graph"]["layers"]
    assert sum(row["nodes"] for row in pig["layer_rows"]) == pig["graph"]["nodes"]
    box = client.get("/graphs/3.json?policy=optimal-shut&reference=optimal").get_json()
    assert "different units" in box["comparison_error"]
    assert {p["name"]: p["unit"] for p in box["policies"]}["optimal-shut"] == "probability that payoff = 0"
    assert b"optimal-shut" not in client.get("/graphs/3/values.svg").data
    home = {p["name"]: p["unit"] for p in client.get("/.json").get_json()["graphs"][2]["policies"]}
    assert home == {"greedy": "expected score", "optimal": "expected score",
                    "optimal-shut": "probability that payoff = 0"}
    assert client.get("/graphs/3/distribution.svg").status_code == 200
    engine.dispose()


def test_the_explorer_shows_a_two_player_reports_head_to_head_matches(tmp_path: Path) -> None:
    """The race to 150's report plays every pair of its policies; the graph page with ?matches=all shows the
    same numbers (to 1e-12: the same passes)."""
    from dicegraph.store.db import open_database
    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url = f"sqlite:///{tmp_path / 'race.db'}"
    reported = run(url, "report", "5000-race", "-p", "target=150", "-n", "0", "--json")
    assert reported.exit_code == 0
    expected = {(m["first"], m["second"]): m["p_first_wins"] for m in strict_json(reported.stdout)["matches"]}
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    assert b'id="play-matches"' in client.get("/graphs/1").data
    shown = client.get("/graphs/1.json?matches=all").get_json()["matches"]
    found = {(m["first"], m["second"]): m["p_first_wins"] for m in shown}
    assert expected and all(found[pair] == pytest.approx(value, rel=1e-12) for pair, value in expected.items())
    assert client.get("/graphs/1?matches=all").status_code == 200
    engine.dispose()


def test_a_duckdb_writer_says_which_serve_holds_its_file(tmp_path: Path) -> None:
    """A build waiting for a DuckDB file that ``dicegraph serve`` holds names the server's PID and how to end the
    wait, instead of waiting with no word of why."""
    import subprocess
    import time

    from tests.processes import ROOT, dicegraph

    pytest.importorskip("duckdb_engine")
    url = f"duckdb:///{tmp_path / 'served.duckdb'}"
    assert run(url, "build", "jackpot", "-p", "cells=3").exit_code == 0
    with served(url):
        writer = subprocess.Popen(dicegraph("--db", url, "build", "jackpot", "-p", "cells=4"), stderr=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, text=True, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            line = ""
            while not line and time.monotonic() < deadline:
                line = writer.stderr.readline()
        finally:
            writer.kill()
            writer.wait()
    assert "dicegraph serve (PID" in line and "kill" in line and "waiting" in line, line


def test_a_terminal_progress_bar_is_drawn_from_its_first_step(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A bar opened before its work starts (a report's solve, while the build prints its lines) draws nothing
    until its first step, so no line printed meanwhile is drawn over."""
    from dicegraph import cli
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with cli._progress("solving", 10) as advance:
        print("built graph 1", file=sys.stderr)
        assert capsys.readouterr().err == "built graph 1\n"
        advance(5)
        advance(5)
    drawn = capsys.readouterr().err
    assert "solving" in drawn and "built graph" not in drawn
