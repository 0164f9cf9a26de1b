"""Bad input, concurrent use and interruption: a clear one-line message, a non-zero exit, and nothing lost.

The battery runs every command with bad input through click's runner (no
traceback, one line on stderr, exit status 1, the database file unchanged),
then real processes: a writer beside a long reader, two writers, kill -9
during a build and a solve, Ctrl-C and a time limit during a query.
"""

from __future__ import annotations

import json
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

import dicegraph as api  # tests.processes' dicegraph is the command line
from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from tests.commands import ENDLESS, assert_one_line_error, run
from tests.processes import dicegraph, spawn, stopped_query, wait_for_driver

def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def content(url: str) -> list[str]:
    """Everything the SQLite database holds, as SQL text (a checkpoint of the WAL may change the file's bytes, not this)."""
    with sqlite3.connect(sqlite_path(url)) as connection:
        return list(connection.iterdump())


@pytest.fixture(scope="module")
def two_jackpots(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database holding Jackpot with 4 cells (solved: optimal and the agents) and with 5 cells (built only)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('robust') / 'two.db'}"
    assert run(url, "build", "jackpot", "-p", "cells=4").exit_code == 0
    assert run(url, "solve", "1").exit_code == 0
    assert run(url, "build", "jackpot", "-p", "cells=5").exit_code == 0
    return url


BATTERY = [
    # (arguments, words the one-line error must contain)
    (["build"], ["Missing argument 'GAME'", "dicegraph build --help"]),
    (["nonsense"], ["No such command 'nonsense'"]),
    (["show", "1"], ["Missing argument 'KEY'"]),
    (["build", "chess"], ["unknown game 'chess'"]),
    (["build", "jackpot", "-p", "cells=4", "-p", "cells=5"], ["cells is given twice"]),
    (["build", "synthetic", "-p", "width=3", "-p", "fanout=5"], ["fanout 5 is above width 3"]),
    (["build", "synthetic", "-p", "layers=1000", "-p", "width=10000000", "-p", "fanout=1000"],
     ["9,980,000,001,000 edges", "--force"]),
    (["solve", "jackpot"], ["2 graphs of 'jackpot'", "graph 1: cells=4", "graph 2: cells=5", "-p"]),
    (["solve", "jackpot", "-p", "cells=6"], ["no graph of 'jackpot' with cells=6", "dicegraph build jackpot -p cells=6"]),
    (["solve", "1", "--name", ""], ["is not a policy name"]),
    (["solve", "1", "--name", " "], ["is not a policy name"]),
    (["policies", "1", "-p", "cells=4"], ["a graph id needs none"]),
    (["compare", "1", "hilo", "--top", "-1"], ["--top"]),
    (["query", "SELECT 1", "--limit", "0"], ["--limit"]),
    (["query", "SELECT 1", "--limit", "-1"], ["--limit"]),
    (["query", "SELEC nonsense"], ["SQL error"]),
    (["query", "  "], ["no SQL statement given"]),
    (["query", "SELECT 1; DELETE FROM node"], ["one statement at a time"]),
    (["build", "jackpot", "-p", "cells="], ["invalid value '' for parameter 'cells'"]),
    (["show", "1", ""], ["no position with key ''"]),
    (["query", "DELETE FROM node"], ["query is read-only"]),
    (["query", "ATTACH DATABASE 'attached.db' AS x"], ["query is read-only", "--write"]),
    (["query", "VACUUM INTO 'copy.db'"], []),
    (["query", "--timeout", "-1", "SELECT 1"], ["--timeout"]),
    (["simulate", "jackpot", "--seed", "-1"], ["--seed"]),
    (["report", "jackpot", "--seed", "-1"], ["--seed"]),
    (["simulate", "jackpot", "-n", "10000000000"], ["1000000000"]),
    (["export", "2", "-o", "never.dot"], ["no policy 'optimal' on graph 2", "dicegraph solve 2"]),
    (["propagate", "2", "--policy", "hilo"], ["policy 'hilo' of graph 2 is not evaluated yet"]),
    (["compare", "2", "hilo"], ["dicegraph solve 2"]),
    (["export", "1", "-o", "x.gif"], ["cannot tell the format"]),
    (["school", "advise", "--used", "Pair,pair", "--roll", "1,2,3,4,5", "--rolls-left", "0"], ["named twice"]),
    (["school", "advise", "--roll", "1,2,3,4,5", "--rolls-left", "3"], ["--rolls-left"]),
    (["cant-stop", "advise", "--board", "7:99"], []),
]


@pytest.mark.parametrize(("args", "phrases"), BATTERY, ids=[" ".join(args)[:60] for args, _ in BATTERY])
def test_bad_input_is_one_line_exit_1_and_changes_nothing(
        two_jackpots: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], phrases: list[str]) -> None:
    monkeypatch.chdir(tmp_path)  # whatever a refused statement might have created would land here
    before = content(two_jackpots)
    assert_one_line_error(run(two_jackpots, *args), *phrases)
    assert content(two_jackpots) == before
    assert list(tmp_path.iterdir()) == []


def test_a_database_path_that_cannot_be_a_database_says_why(tmp_path: Path) -> None:
    assert_one_line_error(run(f"sqlite:///{tmp_path}", "build", "jackpot"), "is a folder, not a database file")
    assert_one_line_error(run(f"sqlite:///{tmp_path / 'no' / 'x.db'}", "build", "jackpot"), "no folder")
    assert not (tmp_path / "no").exists()


def test_a_file_path_given_for_a_url_names_the_url_to_give(tmp_path: Path) -> None:
    path = tmp_path / "games.db"
    assert_one_line_error(run(str(path), "build", "jackpot"), "is not a database URL", f"sqlite:///{path}")
    assert not path.exists()
    with pytest.raises(api.Error, match="is not a database URL"):
        api.open("games.db")


@pytest.mark.parametrize("url", ["mysql://user@host/db", "oracle://user@host/db"])
def test_unsupported_databases_name_the_supported_ones(url: str) -> None:
    assert_one_line_error(run(url, "graphs"), "does not run on", "sqlite:///FILE", "dicegraph[postgres]")


def test_a_missing_driver_says_what_to_install() -> None:
    assert_one_line_error(run("postgresql+pg8000://user@host/db", "graphs"), "pg8000", "is not installed",
                          "dicegraph[postgres]")


@pytest.mark.parametrize("where", ["file", "proc"])
def test_outputs_that_cannot_be_written_are_refused_before_any_work(two_jackpots: str, tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    place = blocker if where == "file" else Path("/proc/dicegraph")
    assert_one_line_error(run(two_jackpots, "export", "1", "-o", str(place / "x.dot")), "cannot write")
    assert_one_line_error(run(two_jackpots, "report", "jackpot", "-n", "0", "--diagrams", str(place / "d")),
                          "cannot write")
    assert_one_line_error(run(two_jackpots, "school", "export-decisions", "-o", str(place / "x.zip")), "cannot write")


def test_empty_tables_print_their_headers(tmp_path: Path) -> None:
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    assert run(empty, "build", "cant-stop", "-p", "columns=2,7,10", "-p", "worth=one").exit_code == 0
    for args, shown in [(["graphs"], "cant-stop"), (["policies", "1"], "has no policies yet"),
                        (["query", "SELECT * FROM graph WHERE 0"], "builder_version"),
                        (["query", "PRAGMA shrink_memory"], "")]:  # no columns (optimize writes, on SQLite 3.51)
        result = run(empty, *args)
        assert result.exit_code == 0 and result.exception is None, (args, result.output)
        assert shown in result.stdout
    result = run("sqlite://", "graphs")
    assert result.exit_code == 0 and "no graphs stored yet" in result.stdout


def test_viewing_writes_nothing(two_jackpots: str, tmp_path: Path) -> None:
    before = content(two_jackpots)
    for args in (["graphs"], ["policies", "1"], ["show", "1", "0"], ["show", "1", "1/1-2", "--json"],
                 ["propagate", "1", "--policy", "hilo"], ["compare", "1", "hilo"],
                 ["export", "1", "-o", str(tmp_path / "x.dot")], ["query", "SELECT COUNT(*) FROM positions"]):
        result = run(two_jackpots, *args)
        assert result.exit_code == 0, (args, result.output)
    shown = run(two_jackpots, "show", "2", "0")  # built, not solved: the structure, and how to get the values
    assert shown.exit_code == 0 and "not evaluated yet" in shown.stderr and "dicegraph solve 2" in shown.stderr
    assert content(two_jackpots) == before


def test_games_lists_defaults_as_typed_and_every_policy() -> None:
    listing = {game["name"]: game for game in json.loads(CliRunner().invoke(main, ["games", "--json"]).stdout)}
    assert {p["name"]: p["default"] for p in listing["school"]["params"]}["straights"] == "15,20"
    assert listing["school"]["agents"] == ["bob"] and listing["school"]["policies"] == ["optimal", "bob"]
    assert {p["name"]: p["default"] for p in listing["shut-the-box"]["params"]}["one_die"] == "off"
    for group in ("cant-stop", "school"):
        assert "Examples:" in CliRunner().invoke(main, [group, "--help"]).stdout


# --- real processes ------------------------------------------------------------------------------------------


def hold(opening: str) -> subprocess.Popen:
    """Another process that runs ``opening`` (Python, binding ``release``) and holds what it took until told to let go.

    It prints ``holding`` once it holds; :func:`let_go` (a line on its stdin) makes it call ``release()`` and end.
    """
    code = textwrap.dedent(opening) + "\nprint('holding', flush=True)\nimport sys\nsys.stdin.readline()\nrelease()\n"
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "holding"
    return process


def let_go(holder: subprocess.Popen) -> None:
    holder.communicate("\n", timeout=30)
    assert holder.returncode == 0


def hold_sqlite(path: Path, statement: str) -> subprocess.Popen:
    """Another process holding a transaction on the SQLite file: ``BEGIN`` and a read (a snapshot), or ``BEGIN IMMEDIATE``."""
    return hold(f"""
        import sqlite3
        connection = sqlite3.connect({str(path)!r}, isolation_level=None)
        connection.execute({statement!r})
        connection.execute("SELECT COUNT(*) FROM node").fetchall()
        release = lambda: connection.execute("COMMIT")
    """)


def waits_then_finishes(holder: subprocess.Popen, *args: str) -> subprocess.CompletedProcess:
    """Run ``dicegraph ARGS`` while ``holder`` holds; once it says it waits, let go; return how it ended."""
    process = spawn(*args)
    if not select.select([process.stderr], [], [], 60)[0]:  # silent for a minute: it is not going to say it waits
        process.kill()
        let_go(holder)
        pytest.fail(f"dicegraph {' '.join(args)} said nothing while another process held the database")
    said = process.stderr.readline()
    let_go(holder)
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, said + stderr)


def test_a_writer_finishes_beside_a_long_reader(tmp_path: Path) -> None:
    """A reader holding a snapshot the whole time costs neither a build nor a solve its work (WAL).

    In rollback-journal mode the build's commit waits for the reader and fails after the busy timeout.
    """
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    assert subprocess.run(dicegraph("--db", url, "build", "jackpot", "-p", "cells=3"), capture_output=True).returncode == 0
    reader = hold_sqlite(tmp_path / "shared.db", "BEGIN")
    try:
        for args in (["build", "jackpot", "-p", "cells=6"], ["solve", "jackpot", "-p", "cells=6"]):
            done = subprocess.run(dicegraph("--db", url, *args), capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
        assert reader.poll() is None  # the reader held its snapshot all along
    finally:
        let_go(reader)
    listing = json.loads(subprocess.run(dicegraph("--db", url, "policies", "2", "--json"), capture_output=True,
                                        text=True).stdout)
    assert [p["name"] for p in listing][-1] == "optimal" and all(p["value"] is not None for p in listing)


def test_a_second_writer_waits_for_the_first_and_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    assert subprocess.run(dicegraph("--db", url, "build", "jackpot", "-p", "cells=3"), capture_output=True).returncode == 0
    writer = hold_sqlite(tmp_path / "busy.db", "BEGIN IMMEDIATE")
    done = waits_then_finishes(writer, "--db", url, "build", "jackpot", "-p", "cells=4")
    assert done.returncode == 0, done.stderr
    assert "another process is writing" in done.stderr and "waiting" in done.stderr


@pytest.fixture(scope="module")
def big_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file holding a synthetic graph large enough that solving it takes seconds (about 600,000 edges)."""
    path = tmp_path_factory.mktemp("big") / "big.db"
    build_graph(open_database(f"sqlite:///{path}", create=True), get_game("synthetic"),
                {"layers": 14, "width": 12_500, "fanout": 4, "seed": 3})
    return path


def killed_after(seconds: float, *args: str) -> subprocess.CompletedProcess:
    """Run ``dicegraph ARGS`` and kill it ``seconds`` after it has loaded its database driver (however loaded the
    machine is, the work has started by then, and nothing of it has been committed yet)."""
    process = spawn(*args)
    wait_for_driver(process, args[args.index("--db") + 1])
    time.sleep(seconds)
    process.send_signal(signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=30)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def intact(path: Path) -> bool:
    with sqlite3.connect(path) as connection:
        return connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_kill_9_during_a_build_leaves_no_graph(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'killed.db'}"
    assert subprocess.run(dicegraph("--db", url, "build", "jackpot", "-p", "cells=3"), capture_output=True).returncode == 0
    killed = killed_after(4, "--db", url, "build", "synthetic", "-p", "layers=40", "-p", "width=20000")
    assert killed.returncode == -signal.SIGKILL
    assert intact(tmp_path / "killed.db")
    graphs = json.loads(subprocess.run(dicegraph("--db", url, "graphs", "--json"), capture_output=True, text=True).stdout)
    assert [graph["game"] for graph in graphs] == ["jackpot"]


def test_kill_9_during_a_solve_leaves_no_policy_and_the_next_solve_works(big_graph: Path, tmp_path: Path) -> None:
    copy = tmp_path / "solve.db"
    copy.write_bytes(big_graph.read_bytes())
    url = f"sqlite:///{copy}"
    killed = killed_after(0.5, "--db", url, "solve", "1")  # the solve takes 1.6 s on an idle machine
    assert killed.returncode == -signal.SIGKILL, "the solve ended before it could be killed: make the graph larger"
    assert intact(copy)
    listing = json.loads(subprocess.run(dicegraph("--db", url, "policies", "1", "--json"), capture_output=True,
                                        text=True).stdout)
    assert [p["name"] for p in listing] == ["first"] and listing[0]["value"] is None
    solved = subprocess.run(dicegraph("--db", url, "solve", "1", "--json"), capture_output=True, text=True, timeout=300)
    assert solved.returncode == 0 and json.loads(solved.stdout)["evaluated"] == ["first"]


def succeeded(url: str, *args: str) -> Result:
    """Return the result of ``dicegraph --db URL ARGS``, which must have succeeded."""
    result = run(url, *args)
    assert result.exit_code == 0, result.output
    return result


def test_a_build_stopped_before_its_totals_is_not_listed_and_is_built_again(tmp_path: Path) -> None:
    """Where there are no transactions (Spark), a build writes its graph's totals last: a graph row without them
    (made here by hand on SQLite) is a build that stopped. Nothing lists it, and the next build starts it again."""
    url = f"sqlite:///{tmp_path / 'stopped.db'}"
    succeeded(url, "build", "jackpot", "-p", "cells=3")
    with sqlite3.connect(sqlite_path(url)) as connection:
        nodes = connection.execute("SELECT nodes FROM graph").fetchone()[0]
        connection.execute("UPDATE graph SET nodes = 0, edges = 0, layers = 0")
    assert json.loads(succeeded(url, "graphs", "--json").output) == []
    assert_one_line_error(CliRunner().invoke(main, ["--db", url, "show", "jackpot", "0"]), "no graph")
    again = succeeded(url, "build", "jackpot", "-p", "cells=3")
    assert again.output.startswith("rebuilt graph 1 ")
    with sqlite3.connect(sqlite_path(url)) as connection:
        assert connection.execute("SELECT nodes, (SELECT count(*) FROM node) FROM graph").fetchone() == (nodes, nodes)


def test_a_solve_stopped_before_it_was_marked_finished_is_not_listed_and_is_solved_again(tmp_path: Path) -> None:
    """A solve is listed once its last statement marks it finished (``unfinished_since`` cleared): one that
    stopped with half its values written (made here by hand) is not listed, and the next solve starts afresh."""
    url = f"sqlite:///{tmp_path / 'stopped.db'}"
    succeeded(url, "build", "jackpot", "-p", "cells=3")
    first = json.loads(succeeded(url, "solve", "jackpot", "--json").output)
    with sqlite3.connect(sqlite_path(url)) as connection:
        connection.execute("UPDATE policy SET unfinished_since = CURRENT_TIMESTAMP WHERE name = 'optimal'")
        connection.execute("DELETE FROM value WHERE node_id % 2 = 0 AND policy_id = "
                           "(SELECT id FROM policy WHERE name = 'optimal')")
    listed = json.loads(succeeded(url, "policies", "jackpot", "--json").output)
    assert "optimal" not in [row["name"] for row in listed] and listed
    again = json.loads(succeeded(url, "solve", "jackpot", "--json").output)
    assert again["value"] == first["value"] and again["policy_id"] == first["policy_id"]
    with sqlite3.connect(sqlite_path(url)) as connection:
        stored = connection.execute("SELECT count(*) FROM value JOIN policy ON policy.id = value.policy_id "
                                    "WHERE policy.name = 'optimal'").fetchone()[0]
        assert stored == connection.execute("SELECT nodes FROM graph").fetchone()[0]


@pytest.mark.parametrize("how", ["ctrl-c", "timeout"])
def test_a_runaway_query_stops(two_jackpots: str, how: str) -> None:
    status, stderr, seconds = stopped_query(two_jackpots, ENDLESS, how)
    assert seconds < 15 and status == 1 and stderr.count("\n") == 1, stderr
    assert ("Ctrl-C" if how == "ctrl-c" else "longer than 2 s") in stderr


def test_long_work_reports_progress_when_stderr_is_not_a_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Away from a terminal (a log, CI) progress is a line every REPORT_EVERY seconds: here every step."""
    from dicegraph import cli
    monkeypatch.setattr(cli, "REPORT_EVERY", 0.0)
    url = f"sqlite:///{tmp_path / 'log.db'}"
    built = run(url, "build", "synthetic", "-p", "layers=6", "-p", "width=10000")
    assert built.exit_code == 0 and "building synthetic, edges: 40,000 of 160,004 (25 %)" in built.stderr  # 20,000 a batch
    simulated = run(url, "simulate", "jackpot", "--policy", "hilo", "-n", "300000")
    assert simulated.exit_code == 0
    assert any(line.startswith("simulating: ") and " of 300,000 (" in line and "left" in line
               for line in simulated.stderr.splitlines()), simulated.stderr
    reported = run(url, "report", "pig", "-p", "target=12", "-n", "0")  # a graph with cycles: solves, evaluations, matches
    assert reported.exit_code == 0, reported.stderr
    lines = reported.stderr.splitlines()
    assert any(line.startswith("solving and evaluating pig, layers: ") and " of " in line and "left" in line
               for line in lines), lines  # the total is known once the graph is built
    assert any(line.startswith("playing the matches, layers: ") for line in lines), lines
    assert run(url, "build", "pig", "-p", "target=10").exit_code == 0
    solved = run(url, "solve", "pig", "-p", "target=10")  # the optimum, then the agents' evaluations
    assert solved.exit_code == 0 and "evaluating the agents, layers: " in solved.stderr, solved.stderr


def test_progress_times_the_work_from_its_first_step(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A report opens its simulation's progress before it builds and solves: the time so far and the time left
    count from the first step (simulate calls it with 0 as play begins), not from when the counter was made."""
    from dicegraph import cli
    now = [0.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: now[0])
    advance = cli._reporter("simulating", 10_000)  # made at 0 s
    now[0] = 100.0
    advance(0)  # play begins at 100 s
    now[0] = 110.0
    advance(2_500)
    assert capsys.readouterr().err == "simulating: 2,500 of 10,000 (25 %), 10 s so far, about 30 s left\n"


def test_duckdb_a_second_process_waits_for_the_first_and_says_so(tmp_path: Path) -> None:
    """DuckDB lets one process open a file: the second waits for it, saying so, instead of failing."""
    path = tmp_path / "busy.duckdb"
    url = f"duckdb:///{path}"
    assert subprocess.run(dicegraph("--db", url, "build", "jackpot", "-p", "cells=3"), capture_output=True).returncode == 0
    holder = hold(f"import duckdb\nconnection = duckdb.connect({str(path)!r})\nrelease = connection.close")
    done = waits_then_finishes(holder, "--db", url, "graphs", "--json")
    assert done.returncode == 0, done.stderr
    assert "has " in done.stderr and "open; waiting" in done.stderr
    assert [graph["game"] for graph in json.loads(done.stdout)] == ["jackpot"]


def test_duckdb_viewers_share_a_file_and_cannot_write_it(tmp_path: Path) -> None:
    """Viewing opens a DuckDB file read-only: a viewer runs beside another process reading it, without waiting,
    and its engine cannot write (DuckDB refuses); the file is as it was. A process that already has the file open for
    writing (DuckDB refuses two configurations of one file in a process) views it through that open database."""
    path = tmp_path / "shared.duckdb"
    url = f"duckdb:///{path}"
    assert subprocess.run(dicegraph("--db", url, "build", "jackpot", "-p", "cells=3"), capture_output=True).returncode == 0
    holder = hold(f"import duckdb\nconnection = duckdb.connect({str(path)!r}, read_only=True)\nrelease = connection.close")
    try:
        viewed = subprocess.run(dicegraph("--db", url, "graphs", "--json"), capture_output=True, text=True, timeout=60)
        assert viewed.returncode == 0 and "waiting" not in viewed.stderr, viewed.stderr
        assert [graph["game"] for graph in json.loads(viewed.stdout)] == ["jackpot"]
    finally:
        let_go(holder)
    engine = open_database(url, read_only=True)
    try:
        with engine.connect() as connection, pytest.raises(sa.exc.DBAPIError, match="read-only|read only"):
            connection.exec_driver_sql("DELETE FROM node")
    finally:
        engine.dispose()
    writer = open_database(url)  # in a process that has the file open for writing, a viewer shares that database
    with writer.connect() as connection:
        nodes = connection.exec_driver_sql("SELECT COUNT(*) FROM node").scalar_one()
    viewer = open_database(url, read_only=True)
    with viewer.connect() as connection:
        assert connection.exec_driver_sql("SELECT COUNT(*) FROM node").scalar_one() == nodes > 0
    viewer.dispose()
    writer.dispose()


def test_a_failed_query_leaves_its_connection_as_it_found_it(tmp_path: Path) -> None:
    """The read-only guard (SQLite's authorizer) comes off the pooled connection after an SQL error too."""
    from dicegraph.store.errors import DatabaseError
    from dicegraph.store.query import run_query

    engine = open_database(f"sqlite:///{tmp_path / 'pool.db'}", create=True)
    with pytest.raises(DatabaseError):
        run_query(engine, "SELEC nonsense")
    run_query(engine, f"ATTACH DATABASE '{tmp_path / 'attached.db'}' AS attached", write=True)
    assert (tmp_path / "attached.db").exists()
