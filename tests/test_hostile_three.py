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
    from graphs.spec import GameSpec, InvalidGame
    from tests.test_spec import declaring

    with pytest.raises(InvalidGame, match="lower-case letters, digits and single hyphens|not empty"):
        GameSpec.declared_by(declaring(name=name))
    with pytest.raises(InvalidGame, match="lower-case letters, digits and single hyphens"):
        GameSpec.declared_by(declaring(diagrams={name: {}}))


@pytest.mark.parametrize("default", [None, "x", 99, -1])
def test_a_parameter_whose_default_is_not_a_value_is_refused_at_registration(default: Any) -> None:
    """A default its own parsing refuses (None, a text for a number, one outside its check) is refused when the
    game registers, not at its first build."""
    from graphs.protocol import Param
    from graphs.spec import GameSpec, InvalidGame
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
    from store.db import open_database
    from web.app import create_app
    from web.guard import loopback_names

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
