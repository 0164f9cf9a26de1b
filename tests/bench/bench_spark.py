"""Benchmark of Spark SQL beside SQLite and DuckDB (not part of the test run).

    .venv/bin/python tests/bench/bench_spark.py [--db spark://HOST:PORT/DB] [GAME[:key=value,...] ...]

Starts a local cluster (``dicegraph spark start``, in a folder of its own, stopped at the end) unless ``--db``
names a Spark database to use, then, for each game named (default: Jackpot with 4 cells), runs its report
(``-n 0``: build, solve, every agent evaluated) cold on SQLite, DuckDB and Spark in turn (``--on`` picks
some) and prints, for each: the time, the statements sent (a Spark UPDATE or DELETE is four), the time a
statement, the graph's edges and edges a second, and each policy's value (School's are the reference numbers
132.3396104771 and 127.7336202819); it ends non-zero, naming them, where a backend's values differ from the first
backend's by more than 1e-12 relative. It also prints Spark's cost of one ``SELECT 1`` and of one small
``INSERT ... SELECT`` (medians of ten). ``--unfolded`` has Spark solve a graph of rows a layer (or a component's
pass) at a time, as it did before :mod:`dicegraph.store.backends.spark.graph_fold` and :mod:`dicegraph.store.backends.spark.cycle_fold`, to compare.

    .venv/bin/python tests/bench/bench_spark.py --on Spark pig:target=8
    .venv/bin/python tests/bench/bench_spark.py --on Spark --unfolded pig:target=8

    .venv/bin/python tests/bench/bench_spark.py school yahtzee:bonuses=off jackpot
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.commands import parse_params  # noqa: E402
from dicegraph.graphs.protocol import resolve_params  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.report import game_report  # noqa: E402
from dicegraph.store.schema import graph  # noqa: E402
from dicegraph.store.backends.spark.cluster import Cluster, start, stop  # noqa: E402
from dicegraph.store.backends.spark import graph_fold  # noqa: E402
from dicegraph.store.backends.spark.dialect import NEXT_STATEMENT  # noqa: E402

DEFAULTS = ["jackpot:cells=4"]
BACKENDS = ("SQLite", "DuckDB", "Spark")


def statement_costs(url: str) -> tuple[float, float]:
    """Return the median seconds of ``SELECT 1`` and of a one-row ``INSERT ... SELECT`` on ``url`` (ten each)."""
    engine = sa.create_engine(url)
    name = f"bench_{uuid.uuid4().hex[:8]}"
    selects, inserts = [], []
    with engine.connect() as connection:
        connection.exec_driver_sql(f"CREATE TABLE {name} (id BIGINT, v DOUBLE) USING parquet")
        for _ in range(10):
            started = time.perf_counter()
            connection.exec_driver_sql("SELECT 1").all()
            selects.append(time.perf_counter() - started)
            started = time.perf_counter()
            connection.exec_driver_sql(f"INSERT INTO {name} (id, v) SELECT 1, 0.5D")
            inserts.append(time.perf_counter() - started)
        connection.exec_driver_sql(f"DROP TABLE {name}")
    engine.dispose()
    return statistics.median(selects), statistics.median(inserts)


def report_on(url: str, name: str, params: dict) -> tuple[float, int, int, dict[str, float]]:
    """Return the seconds, statements and edges of the game's cold report (``-n 0``) into ``url``, and each
    policy's value."""
    counted = [0]

    def count(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        counted[0] += statement.count(NEXT_STATEMENT) + 1

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", count)
    try:
        started = time.perf_counter()
        engine = open_database(url, create=True)
        report = game_report(engine, get_game(name), params)
        seconds = time.perf_counter() - started
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", count)
    with engine.connect() as connection:
        edges = connection.execute(sa.select(graph.c.edges).where(graph.c.id == report["graph"])).scalar_one()
    engine.dispose()
    return seconds, counted[0], edges, {row["name"]: row["value"] for row in report["policies"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a Spark database to use (default: a local cluster started for the run)")
    parser.add_argument("--on", action="append", choices=BACKENDS, help="a backend to run on (default: all three)")
    parser.add_argument("--unfolded", action="store_true",
                        help="solve a graph of rows on Spark a layer at a time, not folded in one row")
    parser.add_argument("games_named", nargs="*", default=DEFAULTS, metavar="GAME")
    args = parser.parse_args()
    if args.unfolded:
        graph_fold.EDGE_LIMIT = -1  # no graph is small enough to fold
    disagreements: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    cluster = Cluster(folder / "cluster", 10000 + uuid.uuid4().int % 5000)
    spark = ""
    try:
        spark = "" if "Spark" not in (args.on or BACKENDS) else (
            args.db or start(cluster, told=lambda line: print(line, file=sys.stderr)))
        if spark:
            open_database(spark, create=True).dispose()  # --db may name a database not made yet
            select, insert = statement_costs(spark)
            print(f"Spark: SELECT 1 {1000 * select:.0f} ms, a one-row INSERT ... SELECT {1000 * insert:.0f} ms "
                  "(medians)", flush=True)
        for named in args.games_named:
            name, _, options = named.partition(":")
            params = resolve_params(get_game(name), parse_params(tuple(options.split(","))) if options else {})
            database = f"bench_{uuid.uuid4().hex[:8]}"
            urls = {"SQLite": f"sqlite:///{folder / (database + '.db')}",
                    "DuckDB": f"duckdb:///{folder / (database + '.duckdb')}",
                    "Spark": spark and sa.make_url(spark).set(database=database).render_as_string()}
            first: dict[str, float] = {}
            for backend in args.on or BACKENDS:
                seconds, statements, edges, values = report_on(urls[backend], name, params)
                first = first or values
                disagreements += [f"{named} on {backend}: {policy} {values.get(policy)} against {value}"
                                  for policy, value in first.items() if value is not None and (
                                      values.get(policy) is None or not math.isclose(values[policy], value,
                                                                                      rel_tol=1e-12))]
                print(f"{named} report -n 0 on {backend}: {seconds:.1f} s, {statements} statements "
                      f"({1000 * seconds / statements:.0f} ms a statement), {edges:,} edges "
                      f"({edges / seconds:,.0f} a second); "
                      + ", ".join(f"{policy} {value:.10f}" for policy, value in values.items()), flush=True)
    finally:
        if spark and not args.db:
            stop(cluster)
    if disagreements:
        sys.exit("values differ between backends (1e-12 relative): " + "; ".join(disagreements))


if __name__ == "__main__":
    main()
