"""dicegraph on Apache Spark SQL, on a real local cluster: a standalone master, two workers and the Spark Thrift
server, started here by ``dicegraph spark start`` and stopped however the tests end.

It needs Java (Debian's openjdk-17-jre-headless) and pyspark (the test extra brings it). Where either is missing
the tests are skipped and say why; in CI (``$CI`` set) they must run. Each test works in a database of its own on
the cluster. A Spark statement costs about half a second, so the games are the small ones.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from cli import main
from graphs import get_game
from store.db import open_database
from store.report import game_report
from store.schema import graph
from store.spark.cluster import Cluster, answers, free_port, java_found, running
from tests.test_backends import headline

if not java_found() or __import__("importlib").util.find_spec("pyspark") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must test Spark: install openjdk-17-jre-headless, and the test extra brings pyspark")
    pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless) and pyspark (the test extra)",
                allow_module_level=True)

GAMES = {"jackpot": {"cells": 4}}  # 735 edges: Shut The Box takes the same statements (DuckDB and PostgreSQL test it)


def _ended_pid() -> int:
    """Return the id of a process that has ended."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A running local cluster, started with the CLI and stopped after the module's tests."""
    started = Cluster(tmp_path_factory.mktemp("spark"), free_port())
    result = CliRunner().invoke(main, ["spark", "start", "--folder", str(started.folder), "--port", str(started.port)])
    try:
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == started.url
        yield started
    finally:
        CliRunner().invoke(main, ["spark", "stop", "--folder", str(started.folder)])


@pytest.fixture
def spark_url(cluster: Cluster) -> Iterator[str]:
    """The URL of a database of its own on the cluster (created by dicegraph as it builds; dropped after)."""
    name = f"dicegraph_test_{uuid.uuid4().hex[:10]}"
    yield sa.make_url(cluster.url).set(database=name).render_as_string()
    engine = sa.create_engine(cluster.url)
    with engine.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")
    engine.dispose()


def run(url: str, *args: str) -> Any:
    result = CliRunner().invoke(main, ["--db", url, *args])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_report_on_spark_equals_sqlites(name: str, spark_url: str, tmp_path: Path) -> None:
    """Build, solve, evaluate every agent and propagate: each policy's value and the optimal outcome distribution
    as on SQLite, to 1e-12."""
    game, params = get_game(name), GAMES[name]
    reference = game_report(open_database(f"sqlite:///{tmp_path / 'reference.db'}", create=True), game, params)
    engine = open_database(spark_url, create=True)
    report = game_report(engine, game, params)
    engine.dispose()
    expected, got = headline(reference), headline(report)
    assert got.keys() == expected.keys() and len(expected) > 3
    for key, value in expected.items():
        assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-15), key


CYCLIC = {"pig": ["-p", "target=4"], "5000-race": ["-p", "target=100"]}  # a graph of rows, and a turn stored once


def solved(url: str, name: str) -> dict[str, Any]:
    """Return ``dicegraph solve NAME --json`` on ``url``, where the game is built with its :data:`CYCLIC` parameters."""
    run(url, "build", name, *CYCLIC[name])
    return json.loads(run(url, "solve", name, "--json").stdout)


def test_the_race_solves_on_spark_as_on_sqlite(spark_url: str, tmp_path: Path) -> None:
    """The race to 100 (the turn stored once, Newton's method per state layer, the next layer played along with
    each pass): the optimum's chance to win at the start and how it converged, as on SQLite to 1e-12. (Pig, a
    graph of rows with cycles, is solved in the test of a killed solve below.)"""
    expected, got = solved(f"sqlite:///{tmp_path / 'reference.db'}", "5000-race"), solved(spark_url, "5000-race")
    assert 0.5 < expected["value"] < 1 and expected["convergence"]["cyclic_components"] > 1
    assert math.isclose(got["value"], expected["value"], rel_tol=1e-12)
    assert got["convergence"]["cyclic_components"] == expected["convergence"]["cyclic_components"]


def test_school_endgame_on_spark_equals_sqlites(spark_url: str, tmp_path: Path) -> None:
    """School (the turn stored once): the optimum's values and decisions at the states with one combination left,
    as on SQLite to 1e-12 (the whole game, both policies, with its reference numbers, is measured by
    tests/bench/bench_spark.py: about half an hour on this cluster)."""
    from graphs import school as rules
    from graphs.protocol import resolve_params
    from store.load import build_graph
    from tests import school_store as school

    params, stored = resolve_params(get_game("school"), {}), []
    for url in (f"sqlite:///{tmp_path / 'school.db'}", spark_url):
        engine = open_database(url, create=True)
        built = build_graph(engine, get_game("school"), params)
        with engine.connect() as connection:
            optimal = school.solve_policy(connection, built.graph_id, "optimal", down_to=14)
            stored.append({used: school.state_result(connection, built.graph_id, optimal, rules.state_key(used))
                           for used in rules.STATES if bin(used).count("1") == 14})
        engine.dispose()
    expected, got = stored
    assert len(expected) == 15
    for key, row in expected.items():
        assert math.isclose(got[key].value, row.value, rel_tol=1e-12), key
        assert got[key].decisions == row.decisions, key


def test_a_solve_killed_on_spark_is_not_listed_and_the_next_one_starts_again(spark_url: str, tmp_path: Path) -> None:
    """No transaction takes a killed solve back on Spark: its policy is listed only once its last statement
    marks it finished, so the kill leaves none listed, and the next solve starts again and equals SQLite's
    (Pig to 4: Newton's method over cyclic components of a graph of rows, and its agent evaluated)."""
    from tests.processes import dicegraph

    run(spark_url, "build", *["pig", *CYCLIC["pig"]])
    process = subprocess.Popen(dicegraph("--db", spark_url, "solve", "pig"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    engine = sa.create_engine(spark_url)
    with engine.connect() as connection:
        started = "SELECT count(*) FROM policy WHERE name = 'optimal'"
        while process.poll() is None and not connection.exec_driver_sql(started).scalar_one():
            time.sleep(1)
    engine.dispose()
    process.kill()
    assert process.wait() == -9, "the solve ended before it could be killed"
    listed = json.loads(run(spark_url, "policies", "pig", "--json").stdout)
    assert [row["name"] for row in listed] == ["hold-at-20"]
    expected = solved(f"sqlite:///{tmp_path / 'reference.db'}", "pig")
    again = json.loads(run(spark_url, "solve", "pig", "--json").stdout)
    assert math.isclose(again["value"], expected["value"], rel_tol=1e-12) and 0.5 < expected["value"] < 1
    assert again["convergence"]["cyclic_components"] == expected["convergence"]["cyclic_components"] > 1
    agent = json.loads(run(spark_url, "policies", "pig", "--json").stdout)[0]
    assert agent["name"] == "hold-at-20" and agent["value"] is not None


def test_query_on_spark_reads_and_refuses_writes_files_and_java(spark_url: str) -> None:
    run(spark_url, "build", "jackpot", "-p", "cells=4")
    listed = json.loads(run(spark_url, "query", "--json", "SELECT kind, count(*) AS n FROM node GROUP BY kind "
                                                          "ORDER BY kind").output)
    counts = {row["kind"]: row["n"] for row in listed}
    assert counts.keys() == {"chance", "decision", "terminal"}
    assert sum(counts.values()) == json.loads(run(spark_url, "graphs", "--json").output)[0]["nodes"]
    for statement in ("DROP TABLE edge", "INSERT INTO graph SELECT * FROM graph", "CREATE TABLE x AS SELECT 1",
                      "WITH x AS (SELECT 1) INSERT INTO graph SELECT * FROM graph", "SELECT * FROM csv.`/etc/passwd`",
                      "SELECT reflect('java.lang.System', 'getenv', 'HOME')", "SELECT 1; DROP TABLE edge"):
        result = CliRunner().invoke(main, ["--db", spark_url, "query", statement])
        assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1, (statement, result.output)
    assert json.loads(run(spark_url, "query", "--json", "SELECT count(*) AS n FROM edge").output)[0]["n"] > 0
    bad = CliRunner().invoke(main, ["--db", spark_url, "query", "SELECT * FROM nothere"])
    assert bad.exit_code == 1 and "nothere" in bad.output and len(bad.output.strip().splitlines()) == 1


def test_work_tables_a_killed_process_left_are_dropped_by_the_next_writer(spark_url: str) -> None:
    """No transaction takes a killed solve's work tables back on Spark: the next process that opens the database
    to write drops those of this machine's processes that no longer run, and no other. A rewrite's copy (an
    UPDATE or DELETE that was under way) is first written over its table: the statement is finished."""
    from store.spark.dialect import work_mark

    open_database(spark_url, create=True).dispose()
    dead = _ended_pid()
    left, running = f"work_value__{work_mark(dead)}", f"work_value__{work_mark(os.getpid())}"
    rewrite = f"graph__rewrite_{work_mark(dead)}"  # a DELETE of graph 2 of two, killed as it overwrote the table
    engine = sa.create_engine(spark_url)
    with engine.connect() as connection:
        for name in (left, running):
            connection.exec_driver_sql(f"CREATE TABLE {name} (node_id INT) USING parquet")
        rows = [dict(id=number, game="jackpot", params=f'{{"cells": {number + 2}}}', builder_version=1, created_at=dt.datetime.now(dt.UTC),
                     nodes=1, edges=0, layers=1) for number in (1, 2)]
        connection.execute(sa.insert(graph), rows)
        connection.exec_driver_sql(f"CREATE TABLE {rewrite} USING parquet AS SELECT * FROM graph WHERE id = 1")
        connection.exec_driver_sql("TRUNCATE TABLE graph")  # the overwrite had begun
    open_database(spark_url).dispose()
    with engine.connect() as connection:
        names = {row[1] for row in connection.exec_driver_sql("SHOW TABLES").all()}
        ids = [row[0] for row in connection.exec_driver_sql("SELECT id FROM graph")]
        connection.exec_driver_sql(f"DROP TABLE {running}")
    engine.dispose()
    assert left.lower() not in names and rewrite.lower() not in names and running.lower() in names
    assert ids == [1]


def test_start_again_reuses_the_running_cluster_and_status_says_so(cluster: Cluster) -> None:
    again = run(cluster.url, "spark", "start", "--folder", str(cluster.folder), "--port", str(cluster.port))
    assert again.stdout.strip() == cluster.url and "running already" in again.stderr
    status = json.loads(run(cluster.url, "spark", "status", "--folder", str(cluster.folder), "--port",
                            str(cluster.port), "--json").output)
    assert status["answers"] and set(status["processes"]) == {"master", "worker1", "worker2", "thrift"}
    assert status["processes"] == running(cluster) and answers(cluster.port)


def test_no_server_and_no_database_are_one_line_errors(cluster: Cluster) -> None:
    for url, words in ((f"spark://127.0.0.1:{free_port()}/default", "dicegraph spark start"),
                       (sa.make_url(cluster.url).set(database="not_there").render_as_string(), "no database")):
        result = CliRunner().invoke(main, ["--db", url, "graphs"])
        assert result.exit_code == 1 and words in result.output and len(result.output.strip().splitlines()) == 1


def test_a_server_that_keeps_table_file_lists_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Thrift server with Spark's default relation cache would let a connection miss what others write: it is
    refused before anything runs, saying which setting to start it with (no cluster needed: a stand-in server)."""
    from store.errors import DatabaseError
    from store.spark import dialect

    class Server:
        def cursor(self) -> "Server":
            return self

        def execute(self, statement: str) -> None:
            self.said = statement

        def fetchall(self) -> list[tuple[str, str]]:
            return [(dialect.RELATION_CACHE, "1000")] if self.said.startswith("SET") else [("default",)]

        def close(self) -> None:
            pass

    monkeypatch.setattr(dialect.hive, "connect", lambda **options: Server())
    with pytest.raises(DatabaseError) as refused:
        dialect.reachable(sa.make_url("spark://127.0.0.1:10000/default"), create=False)
    assert "spark.sql.filesourceTableRelationCacheSize=0" in str(refused.value) and "\n" not in str(refused.value)
