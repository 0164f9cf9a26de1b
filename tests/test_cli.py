"""The command line through click's CliRunner: output, JSON, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from dicegraph.cli import main
from tests.test_jackpot import exact_win


def run(runner: CliRunner, db: str, *args: str):  # noqa: ANN201
    return runner.invoke(main, ["--db", db, *args])


def test_report_json_lists_every_policy(runner: CliRunner, db_url: str) -> None:
    result = run(runner, db_url, "report", "jackpot", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["game"] == "jackpot"
    values = {row["name"]: row["value"] for row in data["policies"]}
    assert set(values) == {"min", "max", "first", "last", "hilo", "hilo2", "optimal"}
    assert all(set(row) >= {"name", "objective", "value"} for row in data["policies"])
    assert math.isclose(values["optimal"], float(exact_win(None)), rel_tol=1e-12)


def test_report_text_matches_the_seed_layout(runner: CliRunner, jackpot_db: str) -> None:
    result = run(runner, jackpot_db, "report", "jackpot")
    assert result.exit_code == 0
    assert "CALCULATED" in result.stdout
    assert f"{100 * float(exact_win('hilo')):.4f} %" in result.stdout


def test_compare_json(runner: CliRunner, jackpot_db: str) -> None:
    result = run(runner, jackpot_db, "compare", "jackpot", "hilo", "optimal", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"graph", "game", "policy", "reference", "unit", "decisions", "worse", "tied", "expected_loss",
                         "deviations"}
    assert data["unit"] == "win probability" and (data["policy"], data["reference"]) == ("hilo", "optimal")
    assert data["worse"] > 0 and data["decisions"] > data["worse"]
    costs = [row["cost"] for row in data["deviations"]]  # the costliest, as the table lists them
    assert len(costs) == min(10, data["worse"]) and costs == sorted(costs, reverse=True)
    assert {"key", "label", "move", "best_move", "loss", "reach", "cost"} == set(data["deviations"][0])
    assert math.isclose(data["expected_loss"], float(exact_win(None) - exact_win("hilo")), rel_tol=1e-9)


def test_optimal_compared_with_itself_is_never_worse(runner: CliRunner, jackpot_db: str) -> None:
    data = json.loads(run(runner, jackpot_db, "compare", "jackpot", "optimal", "--json").stdout)
    assert data["worse"] == 0 and data["expected_loss"] == 0


def test_show_position_json(runner: CliRunner, jackpot_db: str) -> None:
    result = run(runner, jackpot_db, "show", "jackpot", "0", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["kind"] == "chance" and len(data["edges"]) == 36
    assert math.isclose(sum(edge["probability"] for edge in data["edges"]), 1.0, rel_tol=1e-12)
    assert all(len([m for m in edge["moves"] if "optimal" in m["chosen_by"]]) == 1 for edge in data["edges"])


def test_propagate_distribution(runner: CliRunner, jackpot_db: str) -> None:
    data = json.loads(run(runner, jackpot_db, "propagate", "jackpot", "--policy", "hilo", "--json").stdout)
    probabilities = {row["payoff"]: row["probability"] for row in data["distribution"]}
    assert math.isclose(probabilities[1.0], float(exact_win("hilo")), rel_tol=1e-12)


def test_query_reads_views(runner: CliRunner, jackpot_db: str) -> None:
    sql = "SELECT policy, value FROM positions WHERE game = 'jackpot' AND key = '0' ORDER BY policy"
    result = run(runner, jackpot_db, "query", sql, "--json")
    assert result.exit_code == 0, result.output
    rows = {row["policy"]: row["value"] for row in json.loads(result.stdout)}
    assert math.isclose(rows["last"], float(exact_win("last")), rel_tol=1e-12)


def test_query_json_streams_each_row_as_print_json_writes_it(runner: CliRunner, db_url: str) -> None:
    """``query --json`` puts a row of plain cells together itself (texts to escape, numbers large, negative, not
    finite, truth values, nulls; a BLOB, of another type, by ``json``): the text is exactly what
    :func:`print_json` prints for the whole result, which the Python API returns."""
    import contextlib
    import io

    import dicegraph
    from dicegraph.graphs.commands import print_json

    sql = ("SELECT 1 AS n, -1234567890123456789 AS big, 0.1 AS tenth, -0.0 AS zero, 1e308 * 10 AS inf, "
           "'quote \" back \\ tab \t é ✓ \U0001F3B2' AS text, NULL AS missing, x'00ff' AS blob, 2 > 1 AS truth "
           "UNION ALL SELECT 2, 3, 2.5e-300, 7, -1e308 * 10, '', NULL, NULL, 0")
    assert run(runner, db_url, "build", "jackpot", "-p", "cells=2").exit_code == 0
    printed = run(runner, db_url, "query", sql, "--json")
    assert printed.exit_code == 0, printed.output
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        print_json(dicegraph.open(db_url).query(sql))
    assert printed.stdout == expected.getvalue()
    rows = json.loads(printed.stdout)
    assert rows[0]["big"] == -1234567890123456789 and rows[0]["inf"] is None and rows[0]["blob"] == "\\x00ff"
    assert rows[0]["text"].endswith("é ✓ \U0001F3B2") and rows[1]["tenth"] == 2.5e-300


def test_build_twice_reuses(runner: CliRunner, db_url: str) -> None:
    first = run(runner, db_url, "build", "jackpot", "-p", "cells=4", "--json")
    second = run(runner, db_url, "build", "jackpot", "-p", "cells=4")
    replaced = run(runner, db_url, "build", "jackpot", "-p", "cells=4", "--replace", "--json")
    assert json.loads(first.stdout)["action"] == "built"
    assert "reused graph 1" in second.stdout
    assert json.loads(replaced.stdout)["action"] == "replaced"
    listing = json.loads(run(runner, db_url, "graphs", "--json").stdout)
    assert len(listing) == 1


def test_a_graph_built_from_some_parameters_is_found_by_all_of_them(runner: CliRunner, db_url: str) -> None:
    """The store completes parameters by the game's defaults: a graph built through the library with one of
    bear-off's two parameters is the one the command line finds, and reuses, with both."""
    from dicegraph.graphs import get_game
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph

    engine = open_database(db_url, create=True)
    built = build_graph(engine, get_game("bear-off"), {"checkers": 2})
    engine.dispose()
    again = json.loads(run(runner, db_url, "build", "bear-off", "-p", "checkers=2", "-p", "points=6", "--json").stdout)
    assert again["action"] == "reused" and again["graph_id"] == built.graph_id, again


def test_games_lists_jackpot(runner: CliRunner, db_url: str) -> None:
    data = json.loads(run(runner, db_url, "games", "--json").stdout)
    jackpot = next(game for game in data if game["name"] == "jackpot")
    assert jackpot["agents"] == ["min", "max", "first", "last", "hilo", "hilo2"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "chess"], "unknown game 'chess'"),
        (["build", "jackpot", "-p", "colour=red"], "unknown parameter 'colour'"),
        (["build", "jackpot", "-p", "cells=13"], "invalid value '13' for parameter 'cells'"),
        (["build", "jackpot", "-p", "cells"], "is not NAME=VALUE"),
        (["query", "SELEC nonsense"], "SQL error"),
        (["query", "DELETE FROM node"], "query is read-only"),
        (["query", "DROP VIEW positions"], "query is read-only"),
        (["show", "jackpot", "no-such-key"], "no position with key 'no-such-key'"),
        (["compare", "jackpot", "nobody"], "no policy 'nobody'"),
        (["solve", "42"], "no graph with id 42"),
        (["solve", "jackpot", "--name", "hilo"], "one of the builder's agents"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    runner: CliRunner, jackpot_db: str, args: list[str], message: str
) -> None:
    path = Path(jackpot_db.removeprefix("sqlite:///"))
    before = path.read_bytes()
    result = run(runner, jackpot_db, *args)
    assert result.exit_code != 0
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 or "Usage:" in result.stderr
    assert path.read_bytes() == before


def test_missing_database(runner: CliRunner, tmp_path: Path) -> None:
    result = run(runner, f"sqlite:///{tmp_path / 'none.db'}", "query", "SELECT 1")
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("Error: no database at")
    assert not (tmp_path / "none.db").exists()


def test_corrupt_database(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(b"\x00garbage" * 512)
    result = run(runner, f"sqlite:///{path}", "graphs")
    assert result.exit_code == 1
    assert "cannot read database" in result.stderr
    assert path.read_bytes() == b"\x00garbage" * 512


def test_query_write_when_asked(runner: CliRunner, db_url: str) -> None:
    run(runner, db_url, "build", "jackpot", "-p", "cells=2")
    result = run(runner, db_url, "query", "--write", "UPDATE graph SET game = game")
    assert result.exit_code == 0, result.output


def test_help_shows_examples(runner: CliRunner) -> None:
    for command in ("report", "compare", "query", "show", "build", "solve"):
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Example" in result.stdout


HEAVY = ("sqlalchemy", "alembic", "numpy", "networkx", "pydot", "duckdb")  # what the fast commands leave unloaded


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["games"], ["games", "--json"], ["report", "--help"],
                                  ["spark", "start", "--help"]])
def test_the_commands_that_open_no_database_load_no_driver_sqlalchemy_or_numpy(args: list[str]) -> None:
    """``--help``, ``--version`` and ``games`` import what they print and no more (they took 1.9 s, SQLAlchemy,
    Alembic and numpy loaded before anything was printed; ``tests/bench/bench_start.py`` times them): a process
    of its own runs each and says which of :data:`HEAVY` it loaded."""
    import subprocess
    import sys

    from tests.processes import ROOT

    script = ("import sys\nfrom dicegraph.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
              f"    assert not done.code, done.code\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))")
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", (args, done.stdout[-300:])


@pytest.mark.parametrize("args", [["show", "jackpot", "0"], ["compare", "jackpot", "hilo"], ["policies", "jackpot"],
                                  ["query", "SELECT key, value FROM positions"], ["report", "jackpot", "-n", "0"],
                                  ["games"]])
def test_a_command_whose_reader_has_gone_stops_quietly(jackpot_db: str, args: list[str]) -> None:
    """Output into a pipe whose reader has gone (``| head`` done reading): the command stops with status 1 and no
    error, as other tools do (its progress lines stay); each but ``query`` said ``Error: file error: Broken pipe``."""
    import os
    import subprocess
    import sys

    reading, writing = os.pipe()
    os.close(reading)  # gone before the first line, so that every write fails whatever the timing
    try:
        done = subprocess.run([str(Path(sys.executable).parent / "dicegraph"), "--db", jackpot_db, *args],
                              stdout=writing, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(writing)
    assert done.returncode == 1 and not any(word in done.stderr for word in ("Error", "Traceback", "Broken pipe")), (
        args, done.stderr)
