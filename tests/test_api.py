"""The Python API (``import dicegraph``): the same answers as the commands' ``--json``, the same one-line errors
as exceptions of one class, and nothing half-written after an interruption."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main


def printed_json(url: str, *args: str) -> Any:
    """Return what ``dicegraph --db URL ARGS --json`` prints, read back (the command must exit 0)."""
    result = CliRunner().invoke(main, ["--db", url, *args, "--json"])
    assert result.exit_code == 0, (args, result.stderr)
    return json.loads(result.stdout)


def refused(url: str, *args: str) -> str:
    """Return the one line ``dicegraph --db URL ARGS`` prints on stderr as it exits 1."""
    result = CliRunner().invoke(main, ["--db", url, *args])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1, result.output
    return result.stderr.strip().removeprefix("Error: ")


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a database holding Jackpot with 5 cells built and solved through the API."""
    url = f"sqlite:///{tmp_path_factory.mktemp('api') / 'api.db'}"
    db = dicegraph.open(url)
    assert db.build("jackpot", {"cells": 5})["action"] == "built"
    db.solve("jackpot")
    return url


def test_each_method_returns_what_its_command_prints_as_json(solved: str) -> None:
    db = dicegraph.open(solved)
    assert db.graphs() == printed_json(solved, "graphs")
    assert db.policies("jackpot") == printed_json(solved, "policies", "jackpot")
    assert db.position("jackpot", "0") == printed_json(solved, "show", "jackpot", "0")
    assert db.position(1, "1/1-2") == printed_json(solved, "show", "1", "1/1-2")
    sql = "SELECT key, value FROM positions WHERE policy = 'optimal' ORDER BY key LIMIT 5"
    assert db.query(sql) == printed_json(solved, "query", sql)
    compared = db.compare("jackpot", "first", top=3)
    assert len(compared["deviations"]) == 3 and compared == printed_json(solved, "compare", "jackpot", "first", "--top", "3")
    assert db.propagate("jackpot", "hilo") == printed_json(solved, "propagate", "jackpot", "--policy", "hilo")
    assert db.simulate("jackpot", {"cells": 5}, "hilo", games=2_000, seed=4) == printed_json(
        solved, "simulate", "jackpot", "-p", "cells=5", "--policy", "hilo", "-n", "2000", "--seed", "4")
    drawn = db.export("jackpot", Path(solved.removeprefix("sqlite:///")).with_name("api.dot"), policy="hilo")
    printed = printed_json(solved, "export", "jackpot", "--policy", "hilo", "-o", drawn["file"])
    assert {**drawn, "seconds": None} == {**printed, "seconds": None}
    assert db.upgrade() == printed_json(solved, "upgrade")
    assert db.build("jackpot", {"cells": "5"})["action"] == "reused"  # values and -p's text name one graph
    again = db.solve("jackpot", name="again")
    assert again["value"] == next(row["value"] for row in db.policies("jackpot") if row["name"] == "optimal")


def test_report_takes_parameters_as_values_or_as_text(tmp_path: Path) -> None:
    db = dicegraph.open(f"sqlite:///{tmp_path / 'r.db'}")
    by_value = db.report("shut-the-box", {"tiles": 4, "one_die": False})
    assert db.report("shut-the-box", {"tiles": "4", "one_die": "off"}) == by_value
    assert by_value == printed_json(db.url, "report", "shut-the-box", "-p", "tiles=4", "-p", "one_die=off", "-n", "0")


@pytest.mark.parametrize("call, args", [
    (lambda db: db.build("nonesuch"), ["build", "nonesuch"]),
    (lambda db: db.build("jackpot", {"cells": 99}), ["build", "jackpot", "-p", "cells=99"]),
    (lambda db: db.build("jackpot", {"colour": "red"}), ["build", "jackpot", "-p", "colour=red"]),
    (lambda db: db.solve("shut-the-box"), ["solve", "shut-the-box"]),
    (lambda db: db.position("jackpot", "no such key"), ["show", "jackpot", "no such key"]),
    (lambda db: db.query("SELEC nonsense"), ["query", "SELEC nonsense"]),
    (lambda db: db.query("DELETE FROM graph"), ["query", "DELETE FROM graph"]),
    (lambda db: db.query("ATTACH DATABASE '/etc/passwd' AS x"), ["query", "ATTACH DATABASE '/etc/passwd' AS x"]),
    (lambda db: db.propagate("jackpot", "nonesuch"), ["propagate", "jackpot", "--policy", "nonesuch"]),
    (lambda db: db.compare("jackpot", "nonesuch"), ["compare", "jackpot", "nonesuch"]),
    (lambda db: db.export("jackpot", "picture.gif"), ["export", "jackpot", "-o", "picture.gif"]),
    (lambda db: db.simulate("jackpot", policy="nonesuch", games=100), ["simulate", "jackpot", "--policy", "nonesuch",
                                                                      "-n", "100"]),
])
def test_errors_are_the_commands_one_line_as_dicegraph_error(solved: str, call: Any, args: list[str]) -> None:
    with pytest.raises(dicegraph.Error) as raised:
        call(dicegraph.open(solved))
    assert str(raised.value) == refused(solved, *args)
    assert dicegraph.open(solved).graphs() == printed_json(solved, "graphs")  # nothing changed


def test_reading_a_missing_database_says_so_and_creates_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing.db'}"
    with pytest.raises(dicegraph.Error) as raised:
        dicegraph.open(url).graphs()
    assert str(raised.value) == refused(url, "graphs")
    assert not (tmp_path / "missing.db").exists()


def test_an_interrupted_build_leaves_nothing_half_written(tmp_path: Path) -> None:
    """A KeyboardInterrupt in the middle of a build (here: from its progress meter) rolls the build back."""

    @contextmanager
    def interrupting(label: str, length: int | None) -> Iterator[Any]:
        def advance(steps: int) -> None:
            raise KeyboardInterrupt

        yield advance if label.startswith("building") else None

    url = f"sqlite:///{tmp_path / 'i.db'}"
    with pytest.raises(KeyboardInterrupt):
        dicegraph.open(url, meter=interrupting).build("jackpot", {"cells": 6})
    assert dicegraph.open(url).graphs() == []
    assert dicegraph.open(url).build("jackpot", {"cells": 6})["action"] == "built"


def test_a_session_kept_open_read_only_reads_refuses_writes_and_lets_go_when_closed(solved: str) -> None:
    """``Database.kept_open(url, read_only=True)`` (the explorer's session): one engine for every call, which reads
    as any session does, refuses a write in one line, and lets go of the file when closed."""
    kept = dicegraph.Database.kept_open(solved, read_only=True)
    assert kept.policies("jackpot") == dicegraph.open(solved).policies("jackpot")
    engine = kept._kept
    with pytest.raises(dicegraph.Error) as refused_write:
        kept.solve("jackpot", name="again")
    assert "\n" not in str(refused_write.value)
    kept.close()
    assert engine is not None and engine.pool.checkedout() == 0


def test_the_games_are_the_registry() -> None:
    games = dicegraph.games()
    assert "jackpot" in games and games["jackpot"].title == "Jackpot"
    assert printed_json("sqlite://", "games")[0]["name"] in games


def test_the_manuals_python_page_runs_as_written() -> None:
    """docs/python.md, every example run as a doctest."""
    import doctest

    page = Path(__file__).resolve().parents[1] / "docs" / "python.md"
    failed, tried = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert tried > 10 and failed == 0
