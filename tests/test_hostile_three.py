"""The third hostile run (issue 61): each family of failure it found, kept fixed by tests of several members.

Files that are not dicegraph's (devices, FIFOs, links, other files named as output), records and request bodies
of every wrong shape, the explorer's door (hosts, origins, body sizes and types), databases that would lose the
work or leak, size guards and plugins, and the generic tools on game shapes nobody here wrote.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from dicegraph.record import MAX_BYTES
from tests.commands import assert_one_line_error, run

JACKPOT = ["-p", "cells=4"]


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a SQLite file holding Jackpot with 4 cells, solved with every agent evaluated (graph 1)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile3') / 'jackpot.db'}"
    assert run(url, "report", "jackpot", *JACKPOT, "-n", "0").exit_code == 0
    return url


def a_record(url: str, tmp_path: Path, name: str = "game.json") -> Path:
    """Return a file holding the record of a whole game of Jackpot played by HiLo (written by play --record)."""
    path = tmp_path / name
    played = run(url, "play", "jackpot", *JACKPOT, "--auto", "hilo", "--seed", "5", "--record", str(path), "--json")
    assert played.exit_code == 0, played.output
    return path


# --- files that are not yours ----------------------------------------------------------------------------------

def not_regular_files(tmp_path: Path) -> dict[str, Path]:
    """Return paths of things that are not regular files: a FIFO, a folder, a character device, a socket."""
    import socket

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    sock_path = tmp_path / "sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock_path))
    listener.close()
    return {"a FIFO": fifo, "a folder": folder, "a character device": Path(os.devnull), "a socket": sock_path}


def test_a_record_never_replaces_what_is_not_a_regular_file(solved: str, tmp_path: Path) -> None:
    """--record onto a FIFO, a folder, /dev/null (as root it was replaced by a 0600 file), a socket, or a link to
    one: refused in one line, each left as it was."""
    places = not_regular_files(tmp_path)
    link = tmp_path / "link-to-null"
    link.symlink_to(os.devnull)
    places["a character device"] = Path(os.devnull)
    for kind, path in [*places.items(), ("a character device", link)]:
        before = os.lstat(path)
        result = run(solved, "play", "jackpot", *JACKPOT, "--auto", "hilo", "--seed", "1", "--record", str(path))
        assert_one_line_error(result, str(path), "directory" if kind == "a folder" else kind)
        after = os.lstat(path)
        assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino), kind
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_record_is_new_and_goes_on_only_by_resuming(solved: str, tmp_path: Path) -> None:
    """An existing record of this game, another game's record and an unrelated JSON file are each refused as a
    new --record, their bytes unchanged; the message says what the file is and what to do."""
    ours = a_record(solved, tmp_path)
    other_game = tmp_path / "pig.json"
    other_game.write_text(json.dumps({"game": "pig", "params": {"target": 10}, "steps": []}))
    unrelated = tmp_path / "settings.json"
    unrelated.write_text('{"theme": "dark"}\n')
    for path, phrase in ((ours, "holds a record of jackpot already: go on with it (--resume"),
                         (other_game, "is not a record of jackpot"), (unrelated, "is not a record of jackpot")):
        before = path.read_bytes()
        result = run(solved, "play", "jackpot", *JACKPOT, "--auto", "hilo", "--seed", "2", "--record", str(path))
        assert_one_line_error(result, str(path), phrase)
        assert path.read_bytes() == before
    person = run(solved, "play", "jackpot", "--record", str(unrelated))  # a person's game: refused before it starts
    assert_one_line_error(person, "is not a record of jackpot")


def test_a_record_is_written_through_its_link(solved: str, tmp_path: Path) -> None:
    """A link named as the record (dangling, to a new file in another folder): the record lands at the target,
    the link stays a link and the target is current, readable as a new file is (not 0600)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link.json"
    link.symlink_to(elsewhere / "kept.json")
    played = run(solved, "play", "jackpot", *JACKPOT, "--auto", "hilo", "--seed", "3", "--record", str(link), "--json")
    assert played.exit_code == 0, played.output
    assert link.is_symlink() and json.loads((elsewhere / "kept.json").read_text()) == json.loads(played.stdout)["record"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((elsewhere / "kept.json").stat().st_mode) == 0o666 & ~umask


@pytest.mark.parametrize("command", ["export", "analyse --chart", "report --diagrams", "school export-decisions"])
def test_no_output_replaces_what_is_not_a_regular_file(solved: str, tmp_path: Path, command: str) -> None:
    """The same rule for every file dicegraph writes: a diagram, a chart, a report's diagrams in a folder whose
    file names are links to a FIFO or a device, School's decision archive."""
    fifo = not_regular_files(tmp_path)["a FIFO"]
    if command == "export":
        target = tmp_path / "out.svg"
        target.symlink_to(fifo)
        result = run(solved, "export", "1", "-o", str(target))
    elif command == "analyse --chart":
        target = tmp_path / "chart.svg"
        target.symlink_to(os.devnull)
        result = run(solved, "analyse", str(a_record(solved, tmp_path)), "--chart", str(target))
    elif command == "report --diagrams":
        folder = tmp_path / "diagrams"
        folder.mkdir()
        target = folder / "jackpot-hilo-layers.png"
        target.symlink_to(fifo)
        result = run(solved, "report", "jackpot", *JACKPOT, "-n", "0", "--diagrams", str(folder))
    else:
        target = tmp_path / "decisions.zip"
        target.symlink_to(os.devnull)
        result = run(solved, "school", "export-decisions", "-o", str(target))
    assert_one_line_error(result, "not a regular file")
    assert target.is_symlink() and stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.parametrize("name", ["../escape", "Jackpot", "two words", "a/b", "", "-lead", "trail-", "x--y", "é"])
def test_a_name_that_becomes_a_path_is_checked_at_registration(name: str) -> None:
    """A game's name and its diagrams' names are lower-case letters, digits and single hyphens: a game named
    ``../escape`` (whose report --diagrams wrote outside the folder) is refused when it registers."""
    from dicegraph.graphs.hookspecs import hookimpl
    from dicegraph.graphs.spec import GameSpec, InvalidGame
    from tests.test_spec import declaring

    with pytest.raises(InvalidGame, match="lower-case letters, digits and single hyphens|not empty"):
        GameSpec.declared_by(declaring(name=name))
    with pytest.raises(InvalidGame, match="lower-case letters, digits and single hyphens"):
        GameSpec.declared_by(declaring(diagrams=hookimpl(lambda: {name: {}})))


@pytest.mark.parametrize("default", [None, "x", 99, -1])
def test_a_parameter_whose_default_is_not_a_value_is_refused_at_registration(default: Any) -> None:
    """A default its own parsing refuses (None, a text for a number, one outside its check) is refused when the
    game registers, not at its first build."""
    from dicegraph.graphs.protocol import Param
    from dicegraph.graphs.spec import GameSpec, InvalidGame
    from tests.test_spec import declaring

    param = Param("size", default, int, "a size", lambda value: 1 <= value <= 9, "1..9")
    with pytest.raises(InvalidGame, match="parameter 'size': its default"):
        GameSpec.declared_by(declaring(params=[param], small_params={"size": 3}))


# --- records and request bodies --------------------------------------------------------------------------------

BAD_RECORDS = {
    "nested": b"[" * 200_000 + b"]" * 200_000,
    "nested in params": json.dumps({"game": "jackpot", "params": {"cells": [[[[[[[[[[4]]]]]]]]]]}}).encode(),
    "long number": b'{"game": "jackpot", "seed": 1' + b"0" * 10_000 + b"}",
    "huge float": b'{"game": "jackpot", "params": {"cells": 1e400}}',
    "NaN": b'{"game": "jackpot", "seed": NaN}',
    "not UTF-8": b'{"game": "jackpot\xff\xfe"}',
    "Latin-1": '{"game": "jackpot", "seats": {"solo": "d\u00e9j\u00e0"}}'.encode("latin-1"),
    "too large": b'{"game": "jackpot", "steps": [' + b'{"roll": "1-1"},' * (MAX_BYTES // 16) + b"]}",
}


@pytest.mark.parametrize("kind", BAD_RECORDS)
def test_every_wrong_record_is_one_line(solved: str, tmp_path: Path, kind: str) -> None:
    """analyse and play --resume of records deeply nested, holding numbers of thousands of digits or past a
    float, NaN, not UTF-8, or past the size limit: one line each, no traceback."""
    path = tmp_path / "bad.json"
    path.write_bytes(BAD_RECORDS[kind])
    assert_one_line_error(run(solved, "analyse", str(path)), "not a dicegraph record")
    assert_one_line_error(run(solved, "play", "jackpot", "--resume", str(path)), "not a dicegraph record")


def test_an_endless_file_is_read_no_further_than_a_record_can_be(solved: str) -> None:
    """/dev/zero (endless): read up to the limit, then refused in one line (not a MemoryError)."""
    assert_one_line_error(run(solved, "analyse", "/dev/zero"), "larger than 8 MiB")
    assert "8 MiB" in (Path(__file__).parents[1] / "docs" / "play.md").read_text()


@pytest.fixture(scope="module")
def explorer(solved: str):  # noqa: ANN201
    """A test client of the explorer on the solved database, answering to loopback names only."""
    from dicegraph.database import Database
    from dicegraph.store.db import open_database
    from dicegraph.web.app import create_app
    from dicegraph.web.guard import loopback_names

    engine = open_database(solved, read_only=True)
    yield create_app(Database.over(engine), hosts=loopback_names("127.0.0.1", [])).test_client()
    engine.dispose()


@pytest.mark.parametrize("kind", BAD_RECORDS)
def test_the_explorer_answers_a_wrong_record_with_400(explorer: Any, kind: str) -> None:
    """The same records uploaded to /analyse, posted as JSON to /analyse.json and (the steps) in a play page's
    address: 400 or 413 with a line, never 500."""
    from io import BytesIO

    body = BAD_RECORDS[kind]
    uploaded = explorer.post("/analyse.json", data={"file": (BytesIO(body), "r.json")})
    posted = explorer.post("/analyse.json", data=body, content_type="application/json")
    for answer in (uploaded, posted):
        assert answer.status_code in (400, 413), (kind, answer.status_code)
        assert answer.get_json()["error"]
    if len(body) < 100_000:
        steps = explorer.get("/graphs/1/play.json", query_string={"seed": "1", "steps": body.decode("latin-1")})
        assert steps.status_code == 400 and steps.get_json()["error"], steps.status_code


def test_a_json_body_is_read_and_other_bodies_refused(explorer: Any, solved: str, tmp_path: Path) -> None:
    """A record posted as JSON to /analyse.json is analysed (it was answered 200 with nothing in it), as the same
    record uploaded; a body of another type is 415; a body past the limit 413, not read."""
    record = a_record(solved, tmp_path).read_bytes()
    as_json = explorer.post("/analyse.json", data=record, content_type="application/json")
    from io import BytesIO
    uploaded = explorer.post("/analyse.json", data={"file": (BytesIO(record), "game.json")})
    assert as_json.status_code == 200 and as_json.get_json()["analysis"] == uploaded.get_json()["analysis"]
    assert as_json.get_json()["analysis"]["steps"]
    for kind in ("text/plain", "application/xml", "application/octet-stream"):
        assert explorer.post("/analyse.json", data=record, content_type=kind).status_code == 415
    huge = explorer.post("/analyse.json", data=b"{" * (MAX_BYTES + 2**17), content_type="application/json")
    assert huge.status_code == 413 and "error" in huge.get_json()
    form = explorer.post("/analyse.json", data={"record": "x" * (MAX_BYTES + 2**17)})
    assert form.status_code == 413


def test_a_post_from_another_site_is_refused(explorer: Any, solved: str, tmp_path: Path) -> None:
    """A cross-origin form (Origin of another site, or Sec-Fetch-Site: cross-site) is refused with 403; the
    explorer's own page (its Origin, or none) is served."""
    record = a_record(solved, tmp_path).read_text()
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:9999"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
        answer = explorer.post("/analyse.json", data={"record": record}, headers=headers)
        assert answer.status_code == 403, headers
    for headers in ({"Origin": "http://localhost"}, {}, {"Sec-Fetch-Site": "same-origin"}):
        assert explorer.post("/analyse.json", data={"record": record}, headers=headers).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "10.0.0.1", ""])
def test_a_loopback_explorer_answers_only_to_loopback_names(explorer: Any, host: str) -> None:
    """DNS rebinding: a request naming another host reaches no page (/sql included); loopback names do."""
    for path in ("/.json", "/sql.json?sql=SELECT+1"):
        answer = explorer.get(path, headers={"Host": host})
        assert answer.status_code == 400 and "answers to" in answer.get_json()["error"], (host, path)
    for name in ("localhost:8000", "127.0.0.1", "[::1]:80", "LOCALHOST"):
        assert explorer.get("/.json", headers={"Host": name}).status_code == 200, name


def test_serve_takes_the_hosts_it_is_told_of(solved: str) -> None:
    """A real server on 127.0.0.1: refuses another Host, answers one given with --allow-host."""
    import http.client
    from urllib.parse import urlsplit

    from tests.processes import served

    with served(solved, options=("--allow-host", "games.local")) as address:
        where = urlsplit(address)
        statuses = {}
        for host in ("evil.example", "games.local", "localhost"):
            connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
            connection.request("GET", "/.json", headers={"Host": host})
            statuses[host] = connection.getresponse().status
            connection.close()
    assert statuses == {"evil.example": 400, "games.local": 200, "localhost": 200}


# --- databases that lose the work or leak ----------------------------------------------------------------------

@pytest.mark.parametrize("url", ["sqlite:///", "duckdb:///", "sqlite:///  "])
def test_a_url_that_names_no_file_is_refused(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sqlite:///$DB`` with $DB unset built into a private database that the next command could not find: the
    URL is refused in one line (CLI, $DICEGRAPH_DB and the Python API), and nothing is built anywhere."""
    import dicegraph

    monkeypatch.chdir(tmp_path)
    assert_one_line_error(run(url, "build", "jackpot", *JACKPOT), "names no file", ":memory:")
    monkeypatch.setenv("DICEGRAPH_DB", url)
    from click.testing import CliRunner

    from dicegraph.cli import main
    assert_one_line_error(CliRunner().invoke(main, ["report", "jackpot", *JACKPOT, "-n", "0"]), "names no file")
    with pytest.raises(dicegraph.Error, match="names no file"):
        dicegraph.open(url).build("jackpot", {"cells": 3})
    assert list(tmp_path.iterdir()) == []


def test_a_database_in_memory_is_said_to_be(tmp_path: Path) -> None:
    """Asked for by name (sqlite://, sqlite:///:memory:), a database in memory works and the CLI says on stderr
    that nothing of it is kept."""
    for url in ("sqlite://", "sqlite:///:memory:", "duckdb:///:memory:"):
        result = run(url, "build", "jackpot", "-p", "cells=3", "--json")
        assert result.exit_code == 0 and json.loads(result.stdout)["action"] == "built", result.output
        assert "is a database in memory: nothing of it is kept" in result.stderr


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_a_file_of_another_kind_is_never_opened_as_a_database(backend: str, tmp_path: Path) -> None:
    """A JSON or CSV file, or the other engine's database, named as the database: DuckDB opened a JSON file as
    an empty database in memory and kept nothing built in it. Each is refused in one line, its bytes unchanged;
    an empty file is a new database."""
    import sqlite3

    import duckdb

    others = {"games.json": b'{"a": 1}\n', "games.csv": b"a,b\n1,2\n", "page.html": b"<html></html>"}
    sqlite_file, duckdb_file = tmp_path / "s.db", tmp_path / "d.duckdb"
    sqlite3.connect(sqlite_file).execute("CREATE TABLE t (a)").connection.commit()
    duckdb.connect(str(duckdb_file)).close()
    paths = [tmp_path / name for name in others]
    for path, content in zip(paths, others.values()):
        path.write_bytes(content)
    paths.append(duckdb_file if backend == "sqlite" else sqlite_file)
    for path in paths:
        before = path.read_bytes()
        name = "SQLite" if backend == "sqlite" else "DuckDB"
        assert_one_line_error(run(f"{backend}:///{path}", "build", "jackpot", "-p", "cells=3"),
                              f"is not a {name} database file")
        assert_one_line_error(run(f"{backend}:///{path}", "graphs"), f"is not a {name} database file")
        assert path.read_bytes() == before
    if backend == "sqlite":
        empty = tmp_path / "empty.db"
        empty.touch()
        assert run(f"sqlite:///{empty}", "build", "jackpot", "-p", "cells=3").exit_code == 0


def test_duckdb_never_installs_nor_loads_an_extension(tmp_path: Path) -> None:
    """Extension auto-install and auto-load are off on every DuckDB engine dicegraph opens (writing, read-only and
    in memory): nothing reaches the network."""
    import sqlalchemy as sa

    from dicegraph.store.db import open_database

    url = f"duckdb:///{tmp_path / 'x.duckdb'}"
    for options in ({"create": True}, {"read_only": True}):
        engine = open_database(url, **options)
        with engine.connect() as connection:
            for setting in ("autoinstall_known_extensions", "autoload_known_extensions"):
                assert connection.execute(sa.text(f"SELECT current_setting('{setting}')")).scalar() is False
        engine.dispose()
    memory = open_database("duckdb:///:memory:", create=True)
    with memory.connect() as connection:
        assert connection.execute(sa.text("SELECT current_setting('autoload_known_extensions')")).scalar() is False


SECRET_URLS = ["postgresql+psycopg://alice:hunter2secret@127.0.0.1:1/games",
               "postgresql+psycopg://alice:hunter2secret@no-such-host.invalid/games",
               "postgresql+nodriver://alice:hunter2secret@h/games",
               "postgresql+psycopg://alice:hunter2secret@x@h/games",
               "mysql://alice:hunter2secret@h/games"]


@pytest.mark.parametrize("url", SECRET_URLS)
def test_a_password_is_never_shown(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors about a database URL (unreachable, unknown driver, malformed, unsupported) from --db, from
    $DICEGRAPH_DB and from the Python API show the password masked."""
    import dicegraph
    from click.testing import CliRunner

    from dicegraph.cli import main

    given = run(url, "graphs")
    monkeypatch.setenv("DICEGRAPH_DB", url)
    from_env = CliRunner().invoke(main, ["graphs"])
    for result in (given, from_env):
        assert_one_line_error(result)
        assert "hunter2" not in result.output and ("alice" not in result.output or "alice:***@" in result.output)
    with pytest.raises(dicegraph.Error) as raised:
        dicegraph.open(url).graphs()
    assert "hunter2" not in str(raised.value) and "hunter2" not in repr(dicegraph.open(SECRET_URLS[0]))


@pytest.fixture()
def read_only_medium(solved: str, tmp_path: Path):  # noqa: ANN201
    """URL of a copy of the solved database (in WAL mode, as a writer leaves it) on a read-only bind mount."""
    import shutil
    import subprocess

    source, mounted = tmp_path / "source", tmp_path / "medium"
    source.mkdir()
    mounted.mkdir()
    shutil.copy(solved.removeprefix("sqlite:///"), source / "games.db")
    made = subprocess.run(f"mount --bind {source} {mounted} && mount -o remount,ro,bind {mounted}", shell=True,
                          capture_output=True, text=True)
    if made.returncode != 0:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must test a read-only medium: {made.stderr.strip()}")
        pytest.skip(f"cannot mount a read-only folder here: {made.stderr.strip()}")
    try:
        yield f"sqlite:///{mounted / 'games.db'}"
    finally:
        subprocess.run(["umount", str(mounted)], check=False)


def test_viewing_works_on_a_read_only_medium(read_only_medium: str) -> None:
    """A SQLite file on a read-only medium (its WAL index cannot be made beside it) is listed, shown, queried,
    compared and served; a build there says it cannot write, in one line."""
    from dicegraph.database import Database
    from dicegraph.store.db import open_database
    from dicegraph.web.app import create_app

    for args in (["graphs"], ["show", "1", "0"], ["policies", "1"], ["query", "SELECT COUNT(*) FROM node"],
                 ["compare", "1", "hilo"], ["propagate", "1", "--policy", "hilo"]):
        result = run(read_only_medium, *args)
        assert result.exit_code == 0, (args, result.output)
    engine = open_database(read_only_medium, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    assert client.get("/graphs/1.json").status_code == 200
    engine.dispose()
    assert run(read_only_medium, "build", "jackpot", "-p", "cells=3").exit_code == 1


@pytest.mark.parametrize("url", ["sqlite://", "duckdb:///:memory:"])
def test_a_session_in_memory_is_shared_by_threads(url: str) -> None:
    """dicegraph.open of a database in memory (the Python API page's first example) used by eight threads at
    once: each sees the one database (it saw an empty one, closed connections, or crashed the interpreter)."""
    import threading

    import dicegraph

    db = dicegraph.open(url)
    db.build("jackpot", {"cells": 3})
    failures: list[str] = []
    seen: list[int] = []

    def work(number: int) -> None:
        try:
            for _ in range(3):
                seen.append(len(db.graphs()))
                db.solve("jackpot", {"cells": 3})
                db.build("jackpot", {"cells": 2 + number % 3})
                assert db.policies("jackpot", {"cells": 3})
        except Exception as error:  # noqa: BLE001 (every failure is the test's finding)
            failures.append(repr(error))

    threads = [threading.Thread(target=work, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and min(seen) >= 1
    assert sorted(json.loads(row["params"])["cells"] for row in db.graphs()) == [2, 3, 4]


def test_query_streams_its_rows_in_bounded_memory(solved: str, tmp_path: Path) -> None:
    """Two million rows, as text and as JSON, into a reader that stops after one line (| head -1) and into a
    file: the process's peak memory stays under 300 MB (a result held whole took 4.2 GB for ten million), and
    what is streamed is what the Python API returns for a small result."""
    import subprocess
    import sys

    import dicegraph

    many = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) "
            "SELECT x, 'a text of some length' AS t FROM c")
    measure = ("import resource, subprocess, sys; "
               "subprocess.run(sys.argv[1], shell=True, check=False); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    dicegraph_command = f"{Path(sys.executable).parent / 'dicegraph'} --db {solved} query \"{many}\" --timeout 0"
    for shape in ("", " --json"):
        for sink in (" | head -1", f" > {tmp_path / 'out'}"):
            peak = subprocess.run([sys.executable, "-c", measure, dicegraph_command + shape + sink], check=True,
                                  capture_output=True, text=True).stdout.split()[-1]
            assert int(peak) < 300_000, (shape, sink, peak)  # kilobytes
    assert (tmp_path / "out").read_text().count('"x"') == 2_000_000
    small = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2500) "
             "SELECT x, x * 0.5 AS half, 'row ' || x AS label FROM c")
    streamed = run(solved, "query", small, "--json")
    assert json.loads(streamed.stdout) == dicegraph.open(solved).query(small)
    text = run(solved, "query", small, "--limit", "1500").stdout.splitlines()
    assert len(text) == 2 + 1500 and text[0].split() == ["x", "half", "label"] and text[-1].split()[0] == "1500"


def test_two_revisions_in_alembic_version_are_one_line_everywhere(solved: str, tmp_path: Path) -> None:
    """A database whose alembic_version holds two rows: every command, upgrade included, says so in one line and
    what to do (it ended in a traceback)."""
    import shutil
    import sqlite3

    path = tmp_path / "two.db"
    shutil.copy(solved.removeprefix("sqlite:///"), path)
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO alembic_version VALUES ('0123abcd')")
    url = f"sqlite:///{path}"
    for args in (["graphs"], ["upgrade"], ["build", "jackpot", "-p", "cells=3"], ["show", "1", "0"],
                 ["query", "SELECT 1"], ["report", "jackpot", *JACKPOT, "-n", "0"]):
        assert_one_line_error(run(url, *args), "alembic_version table holds 2 revisions", "restore a copy")


# --- size guards and plugins -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_plugins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment with six plugin games installed (pip, into a folder on the path): the guide's ``bust`` as it
    is, and five that misbehave: one exits on import, one prints on import (otherwise sound), one whose rules
    raise, one whose parameter's default is None, one that leaves a mark when imported (what a slow import
    would cost: the commands that need no game must not import it). Also ``MARK``: that mark's path."""
    import subprocess
    import sys

    from tests.test_guide import PLUGIN_PYPROJECT, module_code

    folder = tmp_path_factory.mktemp("plugins")
    mark = folder / "imported.mark"
    code = module_code("bust")
    renamed = {name: code.replace('name = "bust"', f'name = "{name}"') for name in
               ("exits", "noisy", "raising", "nodefault", "marking")}
    modules = {
        "bust": code,
        "exits": "raise SystemExit(3)\n" + renamed["exits"],
        "noisy": "print('hello from a plugin')\n" + renamed["noisy"],
        "raising": renamed["raising"] + "\n\ndef rules(params):\n    raise ValueError('my rules are broken')\n",
        "nodefault": renamed["nodefault"].replace('Param("cap", 20,', 'Param("cap", None,'),
        "marking": f"open({str(mark)!r}, 'w').close()\n" + renamed["marking"],
    }
    for name, text in modules.items():
        package = folder / name
        package.mkdir()
        (package / "pyproject.toml").write_text(PLUGIN_PYPROJECT.format(name=f"dicegraph-{name}", entry=name,
                                                                        module=f"dicegraph_{name}"))
        (package / f"dicegraph_{name}.py").write_text(text)
    installed = folder / "site"
    # the setuptools installed already builds them (pip's isolation would set up a fresh one for each of the six)
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                          str(installed), *(str(folder / name) for name in modules)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    return {**os.environ, "PYTHONPATH": str(installed), "MARK": str(mark)}


def test_no_plugin_stops_or_corrupts_the_others(hostile_plugins: dict[str, str], tmp_path: Path) -> None:
    """games --json stays valid JSON with every sound game in it (the noisy one's print goes to stderr); the
    plugin that exits, the one whose rules raise and the one with no default are each named in one line on
    stderr; --version still answers; a report of a sound plugin game prints valid JSON."""
    import subprocess

    from tests.processes import ROOT, dicegraph

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(dicegraph("--db", f"sqlite:///{tmp_path / 'p.db'}", *args), capture_output=True,
                              text=True, cwd=ROOT, env=hostile_plugins)

    listed = call("games", "--json")
    assert listed.returncode == 0, listed.stderr
    names = {game["name"] for game in json.loads(listed.stdout)}
    assert {"bust", "noisy", "marking", "jackpot"} <= names and not {"exits", "raising", "nodefault"} & names
    problems = listed.stderr.strip().splitlines()
    assert "hello from a plugin" in problems
    for plugin, phrase in (("exits", "SystemExit: 3"), ("raising", "my rules are broken"),
                           ("nodefault", "parameter 'cap': its default None")):
        assert sum(plugin in line and phrase in line for line in problems) == 1, (plugin, problems)
    version = call("--version")
    assert version.returncode == 0 and "version" in version.stdout
    reported = call("report", "noisy", "-n", "0", "--json")
    assert reported.returncode == 0, reported.stderr
    assert json.loads(reported.stdout)["game"] == "noisy"
    refused = call("build", "nodefault")
    errors = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
    assert refused.returncode == 1 and len(errors) == 1 and "unknown game 'nodefault'" in errors[0]


def test_commands_that_need_no_game_import_no_plugin(hostile_plugins: dict[str, str], tmp_path: Path) -> None:
    """--help, --version, graphs and query import no plugin (a plugin taking 30 s to import delayed them all);
    a plugin's game is imported when it is asked for."""
    import subprocess

    from tests.processes import ROOT, dicegraph

    url = f"sqlite:///{tmp_path / 'p.db'}"
    assert run(url, "build", "jackpot", "-p", "cells=3").exit_code == 0
    mark = Path(hostile_plugins["MARK"])
    mark.unlink(missing_ok=True)
    for args in (["--help"], ["--version"], ["graphs"], ["query", "SELECT COUNT(*) FROM graph"], ["build", "--help"],
                 ["show", "1", "0"]):
        done = subprocess.run(dicegraph("--db", url, *args), capture_output=True, text=True, cwd=ROOT,
                              env=hostile_plugins)
        assert done.returncode == 0 and not mark.exists(), (args, done.stderr)
    asked = subprocess.run(dicegraph("--db", url, "build", "marking"), capture_output=True, text=True, cwd=ROOT,
                           env=hostile_plugins)
    assert asked.returncode == 0 and mark.exists(), asked.stderr


WRONG_CALLS = {
    "report(None)": (lambda db: db.report(None), "game must be text, or a Game"),
    "params as pairs": (lambda db: db.report("jackpot", [("cells", 4)]), "params must be a mapping"),
    "seed=-1": (lambda db: db.report("jackpot", {"cells": 3}, seed=-1), "seed must be 0 or more"),
    "query(bytes)": (lambda db: db.query(b"SELECT 1"), "sql must be text"),
    "analyse(list)": (lambda db: db.analyse([1, 2]), "record must be a Record"),
    "play(seed='x')": (lambda db: db.play("jackpot", {"cells": 3}, seed="x"), "seed must be a whole number"),
    "policies as text": (lambda db: db.play("jackpot", policies="optimal"), "policies must be a sequence of text"),
    "unknown keyword": (lambda db: db.build("jackpot", cels=3), "unexpected keyword argument 'cels'"),
    "games=-5": (lambda db: db.simulate("jackpot", games=-5), "games must be 0 or more"),
    "export to None": (lambda db: db.export(1, None), "output must be text, or a path"),
    "limit as text": (lambda db: db.search(1, "x", limit="10"), "limit must be a whole number"),
    "True as a seed": (lambda db: db.simulate("jackpot", seed=True), "seed must be a whole number"),
}


@pytest.mark.parametrize("call", WRONG_CALLS)
def test_the_python_api_checks_its_arguments_first(call: str, tmp_path: Path) -> None:
    """Wrong types and negative counts to the session's methods: dicegraph.Error in one line naming the argument,
    before any work (the database file is not even created)."""
    import dicegraph

    path = tmp_path / "api.db"
    db = dicegraph.open(f"sqlite:///{path}")
    method, phrase = WRONG_CALLS[call]
    with pytest.raises(dicegraph.Error) as raised:
        method(db)
    assert phrase in str(raised.value) and "\n" not in str(raised.value)
    assert not path.exists()


def test_every_public_method_of_the_session_has_its_arguments_checked() -> None:
    """Each public method of dicegraph.Database goes through the door (its annotations resolve, so that each
    argument is checked), the ones a game's commands call too."""
    import inspect

    import dicegraph
    from dicegraph.arguments import _described

    for name, method in inspect.getmembers(dicegraph.Database, inspect.isfunction):
        if name.startswith("_"):
            continue
        assert getattr(method, "__wrapped__", None) is not None or name in ("table", "solved", "game", "output_file",
                                                                             "write_file"), name
        _described(inspect.unwrap(method))  # raises if an annotation cannot be resolved


def test_the_size_guard_bounds_nodes_and_watches_builds_without_an_estimate(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A graph of many nodes and few edges (synthetic: one root, a wide last layer) passed the guard, which
    counted estimated edges only; and Jackpot, which gives no estimate, was not guarded at all. With the bounds
    lowered, each is stopped as it streams, in one line, nothing kept; --force builds them; a build with no
    estimate shows its progress in nodes and edges as it grows."""
    from dicegraph.store import load

    monkeypatch.setattr(load, "MAX_NODES", 2_000)
    monkeypatch.setattr(load, "MAX_EDGES", 2_000)
    url = f"sqlite:///{tmp_path / 'guard.db'}"
    wide = ["synthetic", "-p", "layers=2", "-p", "width=50000", "-p", "fanout=1"]
    for args, phrase in ((wide, "passed 20,000 nodes and 0 edges"), (["jackpot", "-p", "cells=6"], "edges as it was")):
        assert_one_line_error(run(url, "build", *args), phrase, "nodes", "--force", "nothing was kept")
    graphs = run(url, "graphs", "--json")
    assert graphs.exit_code == 0 and json.loads(graphs.stdout) == []
    assert run(url, "build", *wide, "--force").exit_code == 0
    monkeypatch.setattr("dicegraph.cli.REPORT_EVERY", 0.0)  # a progress line at every batch, stderr not being a terminal
    watched = run(url, "build", "jackpot", "-p", "cells=6", "--force")
    assert watched.exit_code == 0 and "building jackpot, nodes and edges:" in watched.stderr


# --- the generic tools on games nobody here wrote (tests/shapes.py) -------------------------------------------

@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """The test games of new shapes registered, and a URL per backend (SQLite, DuckDB) where each is reported."""
    from tests.shapes import registered

    folder = tmp_path_factory.mktemp("shapes")
    with registered() as specs:
        urls = {"sqlite": f"sqlite:///{folder / 'shapes.db'}", "duckdb": f"duckdb:///{folder / 'shapes.duckdb'}"}
        for url in urls.values():
            for name in specs:
                assert run(url, "report", name, "-n", "0").exit_code == 0
            assert run(url, "report", "synthetic", "-p", "layers=5", "-p", "width=6", "-p", "fanout=3",
                       "-n", "0").exit_code == 0
        yield specs, urls


def exact_scores(rules: Any, agent: str) -> dict[Any, Any]:
    """Return the distribution of the points won (moves' rewards plus the final payoff) under the rules' agent,
    in fractions, by walking the rules themselves (no graph, no SQL)."""
    from fractions import Fraction

    spread: dict[Any, Any] = {}

    def walk(position: Any, chance: Any, points: Any) -> None:
        payoff = rules.payoff(position)
        if payoff is not None:
            spread[points + Fraction(payoff)] = spread.get(points + Fraction(payoff), 0) + chance
            return
        rolls = list(rules.rolls(position))
        total = sum(weight for _, weight in rolls)
        for roll, weight in rolls:
            move = rules.agents[agent](position, roll, rules.moves(position, roll))
            walk(move.next, chance * Fraction(weight, total), points + Fraction(move.reward))

    walk(rules.starts()[0], Fraction(1), Fraction(0))
    return spread


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_an_outcome_distribution_counts_the_points_paid_on_moves(shapes: Any, backend: str) -> None:
    """A game that pays points on its moves (yachtlet; synthetic's rewards): propagate, the report's distribution
    and the explorer's chart data count them (the mean was 0 where the value is 16/3). Under the rules' agent the
    distribution is the one walked from the rules in fractions; under every policy its mean is the policy's
    value; a minimising solitaire game (lowball, no points on moves) keeps its distribution."""
    import dicegraph

    specs, urls = shapes
    db = dicegraph.open(urls[backend])
    walked = exact_scores(specs["yachtlet"].rules({}), "first-box")
    stored = {row["payoff"]: row["probability"] for row in db.propagate("yachtlet", "first-box")["distribution"]}
    assert stored.keys() == {float(score) for score in walked}
    for score, chance in walked.items():
        assert stored[float(score)] == pytest.approx(float(chance), rel=1e-12)
    synthetic = {"layers": 5, "width": 6, "fanout": 3}
    for game, params in (("yachtlet", None), ("lowball", None), ("synthetic", synthetic)):
        charts = db.distributions(game, params)
        for row in db.policies(game, params):
            spread = db.propagate(game, row["name"], params)
            assert sum(item["probability"] for item in spread["distribution"]) == pytest.approx(1.0, rel=1e-12)
            assert spread["expected_payoff"] == pytest.approx(row["value"], rel=1e-12), (game, row["name"])
            assert sum(item["payoff"] * item["probability"] for item in charts[row["name"]]) == pytest.approx(
                row["value"], rel=1e-12)
    report = json.loads(run(urls[backend], "report", "yachtlet", "-n", "0", "--json").stdout)
    text = json.dumps(report)
    assert "distribution" in text and report["policies"]


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_the_default_picture_of_a_race_with_loops_is_drawn(shapes: Any, backend: str, tmp_path: Path) -> None:
    """export's default view (the policy's positions) of a race whose positions repeat (slide; Pig) drew 0 nodes
    and exited 0: it draws what the policy reaches, found by walking the rolls and its moves, as networkx finds
    it on the stored edges."""
    import networkx as nx
    import sqlalchemy as sa

    from dicegraph.store.db import open_database
    from dicegraph.store.schema import choice, edge, node, policy

    _, urls = shapes
    url = urls[backend]
    assert run(url, "report", "pig", "-p", "target=4", "-p", "holds=2", "-n", "0").exit_code == 0
    for game, params, agent in (("slide", [], "hold-at-1"), ("pig", ["-p", "target=4", "-p", "holds=2"], "hold-at-2")):
        for chosen in ("optimal", agent):
            out = tmp_path / f"{game}-{chosen}.dot"
            done = run(url, "export", game, *params, "--policy", chosen, "-o", str(out), "--busts", "--json")
            assert done.exit_code == 0, done.output
            drawn = json.loads(done.stdout)["nodes"]
            engine = open_database(url, read_only=True)
            with engine.connect() as connection:
                graph_id = json.loads(run(url, "graphs", "--json").stdout)
                graph_id = next(row["id"] for row in graph_id if row["game"] == game)
                policy_id = connection.execute(sa.select(policy.c.id).where(
                    policy.c.graph_id == graph_id, policy.c.name == chosen)).scalar_one()
                moves = set(connection.execute(sa.select(choice.c.edge_id).where(choice.c.policy_id == policy_id)).scalars())
                walkable = nx.DiGraph()
                for edge_id, src, dst, kind, weight in connection.execute(sa.select(
                        edge.c.id, edge.c.src, edge.c.dst, edge.c.kind, edge.c.weight).where(edge.c.graph_id == graph_id)):
                    if (kind == "roll" and weight > 0) or edge_id in moves:
                        walkable.add_edge(src, dst)
                kinds = dict(connection.execute(sa.select(node.c.id, node.c.kind).where(node.c.graph_id == graph_id)).all())
            engine.dispose()
            reachable = {0} | nx.descendants(walkable, 0)
            positions = {found for found in reachable if kinds[found] != "decision"}
            assert drawn == len(positions) > 0, (game, chosen, drawn, len(positions))


def test_a_race_is_compared_on_duckdb_too(shapes: Any) -> None:
    """compare of a two-player race on DuckDB failed ("file system operations are disabled": the rows of the
    comparison went in through a CSV file, which a read-only DuckDB may not read), and so did the explorer's
    comparison and ?matches=all: each works, and says what SQLite says, to 1e-12."""
    from dicegraph.database import Database
    from dicegraph.store.db import open_database
    from dicegraph.web.app import create_app

    _, urls = shapes
    found = {}
    for backend, url in urls.items():
        done = run(url, "compare", "slide", "hold-at-1", "--json")
        assert done.exit_code == 0, done.output
        found[backend] = json.loads(done.stdout)
        engine = open_database(url, read_only=True)
        client = create_app(Database.over(engine)).test_client()
        graph_id = next(row["id"] for row in json.loads(run(url, "graphs", "--json").stdout) if row["game"] == "slide")
        page = client.get(f"/graphs/{graph_id}.json?policy=hold-at-1&matches=all")
        assert page.status_code == 200 and page.get_json()["matches"], page.get_json()
        engine.dispose()
    from tests.commands import assert_close
    assert_close(found["duckdb"], found["sqlite"])


QUOTED_COLONS = "SELECT 'a:word' AS said, ':x :y' AS again, 'x%y' AS percent, '%%' AS doubled"


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_sql_whose_text_holds_colon_words_is_run_as_written(shapes: Any, backend: str) -> None:
    """``:word`` in quoted text (and ``%``) ended in a traceback in query, a raw SQLAlchemy error from db.query
    and a 500 in /sql: the statement goes to the database as written, on every route."""
    import dicegraph
    from dicegraph.database import Database
    from dicegraph.store.db import open_database
    from dicegraph.web.app import create_app

    _, urls = shapes
    expected = {"said": "a:word", "again": ":x :y", "percent": "x%y", "doubled": "%%"}
    done = run(urls[backend], "query", QUOTED_COLONS, "--json")
    assert done.exit_code == 0 and json.loads(done.stdout) == [expected], done.output
    assert dicegraph.open(urls[backend]).query(QUOTED_COLONS) == [expected]
    engine = open_database(urls[backend], read_only=True)
    page = create_app(Database.over(engine)).test_client().get("/sql.json", query_string={"sql": QUOTED_COLONS})
    engine.dispose()
    assert page.status_code == 200 and page.get_json()["rows"] == [list(expected.values())]
    assert_one_line_error(run(urls[backend], "query", "SELECT :unbound"), "SQL error")


def test_rules_without_an_ending_build_or_say_which_roll_needs_one(shapes: Any, tmp_path: Path) -> None:
    """Rules whose every roll allows a move need no ``ending`` (lowball and yachtlet define none, and build);
    a roll that allows no move where the rules give no ending is one line naming the roll and the position
    (it was an AttributeError from inside the expander, before any roll was looked at)."""
    import types

    from dicegraph.graphs import register, unregister
    from tests.shapes import LowballRules

    class Stuck(LowballRules):
        def moves(self, position: tuple, face: int) -> list:
            return [] if face == 6 else super().moves(position, face)

    url = f"sqlite:///{tmp_path / 'ending.db'}"
    assert run(url, "build", "lowball").exit_code == 0 and run(url, "build", "yachtlet").exit_code == 0
    from dicegraph.graphs.protocol import Param
    stuck = types.SimpleNamespace(name="stuck", title="Stuck", summary="a roll of 6 allows no move", version=1,
                                  objective="min", outcome="expected total", rules=lambda params: Stuck(params["rounds"]),
                                  params=(Param("rounds", 1, int, "rounds", lambda rounds: 1 <= rounds <= 2, "1..2"),))
    register(stuck, origin="a test")
    try:
        assert_one_line_error(run(url, "build", "stuck"), "roll '6' allows no move at 'r0 t0'",
                              "define ending(position, roll)")
    finally:
        unregister("stuck")


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
@pytest.mark.parametrize("name", ["chase", "slide"])
def test_a_minimum_on_a_graph_with_loops_is_the_rules_exact_minimum(shapes: Any, backend: str, name: str) -> None:
    """A graph with cycles solved for the least payoff (it was refused): chase, a solitaire game that loops and
    minimises, and slide, a race that comes back to its start, each solved ``--objective min`` beside its maximum;
    every position's value is the rules' policy iteration in fractions (graphs/exact.py), minimising."""
    from dicegraph.graphs.exact import exact_values
    from dicegraph.graphs.protocol import resolve_params

    specs, urls = shapes
    spec = specs[name]
    solved = run(urls[backend], "solve", name, "--objective", "min", "--name", "least", "--json")
    assert solved.exit_code == 0, solved.stderr
    rules = spec.rules(resolve_params(spec, {}))
    exact = exact_values(rules, "min")
    graph = json.loads(solved.stdout)["graph"]
    rows = json.loads(run(urls[backend], "query", f"SELECT key, value FROM positions WHERE graph = {graph} AND "
                                                   "policy = 'least' AND kind = 'decision'", "--json").stdout)
    assert rows and all(row["key"] in exact for row in rows)
    for row in rows:
        assert row["value"] == pytest.approx(float(exact[row["key"]]), rel=1e-12, abs=1e-12), row["key"]
    root = rules.key(rules.starts()[0])  # slide's recurs: both scores back at 0
    assert json.loads(solved.stdout)["value"] == pytest.approx(float(exact[root]), rel=1e-12, abs=1e-12)
