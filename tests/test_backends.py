"""The same statements on DuckDB and PostgreSQL: every game's headline numbers equal SQLite's.

DuckDB runs wherever the test extra is installed. PostgreSQL needs a server:
``$DICEGRAPH_TEST_POSTGRES`` is the URL of a database on it whose user may
create databases (``.ci/run`` starts a throw-away cluster and sets it); each
test works in a database of its own, dropped afterwards. Without the URL the
PostgreSQL tests are skipped and say why; in CI they must run.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import default

from dicegraph.graphs import GAMES as ALL_GAMES
from dicegraph.graphs import get_game
from dicegraph.graphs import school as school_rules
from dicegraph.graphs.protocol import resolve_params
from tests import school_store as school
from tests.postgres import postgres_server
from dicegraph.store.db import open_database, scratch_database, scratch_reader, side_connections
from dicegraph.store.load import build_graph
from dicegraph.store.report import game_report
from dicegraph.store.schema import graph, node

# every game's report, the race's (its turn stored once) too; School and Yahtzee, whole games of minutes, are
# compared on the backends by their own tests (below, and tests/test_conformance.py's turn solves on each
# backend), the bear-off race, whose report of a minute plays best responses, by tests/test_bear_off.py against
# gnubg on each backend; the synthetic graph is the benchmarks'
GAMES = sorted(name for name in ALL_GAMES if name not in {"school", "yahtzee", "bear-off-race", "synthetic"})

if importlib.util.find_spec("duckdb_engine") is None:  # CI installs the extra: there, a missing one fails
    if os.environ.get("CI"):
        raise RuntimeError("CI must test DuckDB: the test extra brings duckdb-engine")
    pytest.skip("DuckDB needs the duckdb extra: pip install -e '.[duckdb]'", allow_module_level=True)


@contextmanager
def reader(url: str) -> Iterator[str]:
    """Yield the URL ``query`` reads ``url``'s database by: the same on DuckDB, a role without access to the
    server's files on PostgreSQL (:func:`dicegraph.store.db.scratch_reader`: query refuses a superuser)."""
    if url.startswith("postgresql"):
        with scratch_reader(url) as reading_url:
            yield reading_url
    else:
        yield url


@pytest.fixture(params=["duckdb", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an empty database on DuckDB or PostgreSQL."""
    if request.param == "duckdb":
        yield f"duckdb:///{tmp_path / 'test.duckdb'}"
        return
    with scratch_database(postgres_server(), "dicegraph_test") as url:
        yield url



REPORTED_EDGES = 1_000_000  # a default graph larger than this (Pig to 100) is compared on its small parameters


def reported_params(name: str) -> dict[str, Any]:
    """Return the parameters a game is compared on: its defaults, or its ``small_params`` when the default
    graph has over :data:`REPORTED_EDGES` edges (its own tests and benchmark cover the default)."""
    game = get_game(name)
    params = resolve_params(game, {})
    estimate = game.estimated_edges
    if estimate is not None and estimate(params) > REPORTED_EDGES:
        params |= dict(game.small_params)  # type: ignore[attr-defined]
    return params


@pytest.fixture(scope="module")
def sqlite_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each game's report on SQLite, the reference."""
    engine = open_database(f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'reference.db'}", create=True)
    return {name: game_report(engine, get_game(name), reported_params(name)) for name in GAMES}


def headline(report: dict[str, Any]) -> dict[str, float]:
    """Return policy -> value, and the optimal outcome distribution, as one flat dict."""
    numbers = {f"policy {row['name']}": row["value"] for row in report["policies"]}
    numbers |= {f"P(payoff {row['payoff']:.15g})": row["probability"] for row in report["optimal_distribution"]}
    numbers |= {f"{row['first']} first against {row['second']}": row["p_first_wins"]
                for row in report.get("matches", [])}  # a two-player game's head-to-head numbers
    return numbers


@pytest.mark.parametrize("name", GAMES)
def test_headline_numbers_equal_sqlites(name: str, backend_url: str, sqlite_reports: dict[str, dict[str, Any]]) -> None:
    report = game_report(open_database(backend_url, create=True), get_game(name), reported_params(name))
    expected, got = headline(sqlite_reports[name]), headline(report)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-15), key


def test_race_solve_and_match_equal_sqlites(backend_url: str, tmp_path: Path) -> None:
    """5000 as a race (the turn stored once, cycles, horizons): the optimum's chance to win at the start and
    threshold-2 against it in both seats, as on SQLite (PostgreSQL decides by the window, DuckDB by arg_max)."""
    from dicegraph.store.solve import race_matches, readers, turn_cycles, turns
    from dicegraph.store.turn_graph import TurnGraph

    game, params = get_game("5000-race"), {"target": 300}
    found = []
    for url in (f"sqlite:///{tmp_path / 'race.db'}", backend_url):
        engine = open_database(url, create=True)
        built = build_graph(engine, game, params)
        with engine.connect() as connection:
            graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
            turn_cycles.ensure_race_solved(connection, graph)
            optimal_id = turns.ensure_policy(connection, graph, "optimal")
            optimal = readers.state_result(connection, built.graph_id, optimal_id, "0-0").value
            found.append((optimal, *race_matches.matches(connection, graph, [("threshold-2", "optimal")])[0]))
        engine.dispose()
    (expected, got) = found
    assert 0.5 < expected[0] < 1
    for value, reference in zip(got, expected):
        assert math.isclose(value, reference, rel_tol=1e-12, abs_tol=1e-15)


def test_school_endgame_equals_sqlites(backend_url: str, tmp_path: Path) -> None:
    """School: the average table and the states with up to two combinations left, both policies.

    (The whole game runs on DuckDB in test_school.py; on SQLite it takes
    minutes, see tests/bench/bench_school.py.)
    """
    params = resolve_params(get_game("school"), {})
    stored = {}
    for url in (f"sqlite:///{tmp_path / 'school.db'}", backend_url):
        engine = open_database(url, create=True)
        built = build_graph(engine, get_game("school"), params)
        with engine.begin() as connection:
            table = school.average_table(connection, built.graph_id)
            school.solve_policy(connection, built.graph_id, "bob", down_to=13)
            school.solve_policy(connection, built.graph_id, "optimal", down_to=13)
            stored[url.split(":")[0]] = table, {
                (name, used): school.state_result(connection, built.graph_id,
                                                  school.ensure_policy(connection, built.graph_id, name),
                                                  school_rules.state_key(used))
                for name in school_rules.POLICIES for used in school_rules.states() if bin(used).count("1") in (13, 14)}
    (table, rows), (other_table, other_rows) = stored["sqlite"], stored[backend_url.split(":")[0]]
    assert all(math.isclose(other_table[k], v, rel_tol=1e-12) for k, v in table.items())
    for key, row in rows.items():
        assert math.isclose(other_rows[key].value, row.value, rel_tol=1e-12), key
        assert other_rows[key].decisions == row.decisions, key


def test_query_export_and_simulate_run_there(backend_url: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from dicegraph.cli import main

    runner = CliRunner()
    assert runner.invoke(main, ["--db", backend_url, "report", "jackpot", "-p", "cells=4", "-n", "0"]).exit_code == 0
    with reader(backend_url) as reading_url:
        query = runner.invoke(main, ["--db", reading_url, "query", "--json",
                                     "SELECT COUNT(*) AS n FROM positions WHERE policy = 'optimal'"])
        assert query.exit_code == 0, query.output
        assert json.loads(query.stdout)[0]["n"] > 0
        refused = runner.invoke(main, ["--db", reading_url, "query", "DELETE FROM node"])
        assert refused.exit_code == 1
    target = tmp_path / "optimal.dot"
    exported = runner.invoke(main, ["--db", backend_url, "export", "jackpot", "--policy", "optimal", "-o", str(target)])
    assert exported.exit_code == 0, exported.output
    assert "digraph" in target.read_text().splitlines()[0]
    simulated = runner.invoke(main, ["--db", backend_url, "simulate", "jackpot", "-p", "cells=4", "-n", "20000", "--json"])
    assert simulated.exit_code == 0, simulated.output
    assert abs(json.loads(simulated.stdout)["z"]) < 4


# a statement that runs for minutes: the cross product of two long series (DuckDB does not stop a
# three-way cross product promptly: its interrupt is checked between the chunks an operator emits)
RUNAWAY = {
    "duckdb": "SELECT SUM(a.range * b.range) FROM range(1000000) a, range(1000000) b",
    "postgresql": "SELECT SUM(a * b) FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b",
}


@pytest.mark.parametrize("how", ["timeout", "ctrl-c"])
def test_a_runaway_query_stops_there(backend_url: str, how: str) -> None:
    """``query --timeout`` and Ctrl-C stop a running statement on DuckDB and PostgreSQL too (a real process)."""
    import subprocess

    from tests.processes import ROOT, dicegraph, stopped_query

    # built by another process: DuckDB lets one process at a time open a file, and this one would keep it
    built = subprocess.run(dicegraph("--db", backend_url, "build", "jackpot", "-p", "cells=3"), capture_output=True, cwd=ROOT)
    assert built.returncode == 0
    with reader(backend_url) as reading_url:
        status, stderr, seconds = stopped_query(reading_url, RUNAWAY[backend_url.split(":", 1)[0].split("+", 1)[0]], how)
    assert seconds < 30 and status == 1 and stderr.count("\n") == 1, stderr
    assert ("Ctrl-C" if how == "ctrl-c" else "longer than 2 s") in stderr


@pytest.mark.parametrize("statement", ["COPY node TO '/tmp/dicegraph-copied.csv'", "ATTACH 'x.db' AS x"])
def test_query_refuses_file_statements_there(backend_url: str, statement: str) -> None:
    from click.testing import CliRunner

    from dicegraph.cli import main

    assert CliRunner().invoke(main, ["--db", backend_url, "build", "jackpot", "-p", "cells=3"]).exit_code == 0
    with reader(backend_url) as reading_url:
        refused = CliRunner().invoke(main, ["--db", reading_url, "query", statement])
    assert refused.exit_code == 1 and "query is read-only" in refused.stderr
    assert not Path("/tmp/dicegraph-copied.csv").exists()


def test_postgresqls_schema_is_the_models_comments_and_all(tmp_path: Path) -> None:
    """PostgreSQL keeps the columns' comments (SQLite keeps none), so there the migrations must give every column
    the comment the models give it: Alembic's comparison of the two finds nothing."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from dicegraph.store.schema import metadata

    with scratch_database(postgres_server(), "dicegraph_test") as url:
        engine = open_database(url, create=True)
        with engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), metadata) == []
        engine.dispose()


def test_postgresqls_planner_counts_the_rows_a_build_and_a_solve_have_just_written() -> None:
    """On PostgreSQL a build and a solve take the statistics of the tables they wrote: after statistics taken
    with one Jackpot stored (as autovacuum may take them at any moment), a report of another leaves the
    planner's row counts (``pg_class.reltuples``) of the nodes, edges, values and choices equal to their rows.
    Planned by the older counts, a graph's ends joined with a policy's values took a nested loop over both."""
    import dicegraph

    with scratch_database(postgres_server(), "dicegraph_test") as url:
        session = dicegraph.open(url)
        session.build("jackpot", {"cells": 3})
        engine = open_database(url)
        with engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE")
        session.report("jackpot", {"cells": 5})
        with engine.connect() as connection:
            counted = {name: (connection.exec_driver_sql(f"SELECT count(*) FROM {name}").scalar(),
                              connection.exec_driver_sql(f"SELECT reltuples FROM pg_class WHERE relname = '{name}'")
                              .scalar()) for name in ("node", "edge", "value", "choice")}
        engine.dispose()
    assert all(rows > 100 and planned == rows for rows, planned in counted.values()), counted


def test_duckdb_compiles_a_statement_once_and_reuses_it(tmp_path: Path) -> None:
    """duckdb-engine turns SQLAlchemy's statement cache off; dicegraph's DuckDB dialect (store/backends/duckdb/dialect.py)
    turns it on."""
    engine = open_database(f"duckdb:///{tmp_path / 'cached.duckdb'}", create=True)
    lookup = sa.select(graph.c.id).where(graph.c.id == sa.bindparam("wanted"))
    with engine.connect() as connection:
        first = connection.execute(lookup, {"wanted": 1})
        again = connection.execute(lookup, {"wanted": 2})
        assert (first.context.cache_hit, again.context.cache_hit) == (default.CACHE_MISS, default.CACHE_HIT)
    engine.dispose()


def test_duckdbs_connections_solving_at_once_share_its_threads(tmp_path: Path) -> None:
    """DuckDB's threads are the database's: while side connections solve beside a connection, each of the
    connections has its share of them (at least one), and the database has them all again after, however the
    work ends."""
    engine = open_database(f"duckdb:///{tmp_path / 'shared.duckdb'}", create=True)
    threads = "SELECT current_setting('threads')"
    with engine.connect() as connection:
        connection.exec_driver_sql("SET threads = 6")
        for more, share in ((1, 3), (2, 2), (6, 1)):
            with side_connections(connection, more) as others:
                assert len(others) == more
                assert {one.exec_driver_sql(threads).scalar() for one in [connection, *others]} == {share}
            assert connection.exec_driver_sql(threads).scalar() == 6
        with pytest.raises(ZeroDivisionError), side_connections(connection, 1):
            1 / 0
        assert connection.exec_driver_sql(threads).scalar() == 6
    engine.dispose()


def test_a_block_of_columns_goes_in_as_its_rows_do(backend_url: str) -> None:
    """A block given column by column (numpy arrays and lists, text, NULLs) is stored as the same
    rows given one by one are, on each backend: DuckDB scans the columns as they are
    (:meth:`dicegraph.store.backends.record.Backend.column_writer`), the others take them as rows."""
    import numpy as np

    from dicegraph.store.load import BulkInserter

    names = ("graph_id", "id", "key", "layer", "kind", "label", "denom", "payoff")
    engine = open_database(backend_url, create=True)
    rows = [(1, 1000 + number, f"k{number}", number % 3, "terminal" if number % 2 else "chance", "é 'q'",
             None if number % 2 else 6, number / 3 if number % 2 else None) for number in range(50)]
    with engine.begin() as connection:
        connection.execute(sa.insert(graph).values(id=1, game="g", params="{}", builder_version=1, nodes=0, edges=0,
                                                   layers=0, created_at=dt.datetime.now(dt.timezone.utc)))
        by_rows = BulkInserter(connection, node, names)
        by_rows.extend(rows[:25])
        by_rows.flush()
        by_columns = BulkInserter(connection, node, names)
        columns = dict(zip(names, map(list, zip(*rows[25:]))))
        by_columns.extend_columns({**columns, "id": np.array(columns["id"], dtype=np.int64),
                                   "layer": np.array(columns["layer"], dtype=np.int32)})
        by_columns.flush()  # where the backend takes rows, the block was queued as rows
        stored = connection.execute(sa.select(*(node.c[name] for name in names)).order_by(node.c.id)).all()
    engine.dispose()
    assert [tuple(row) for row in stored] == rows
    assert (by_rows.count, by_columns.count) == (25, 25)
