"""Benchmark of the foundation on SQLite (not part of the test run).

    .venv/bin/python tests/bench/bench_foundation.py [--width 26400]

Prints, for a synthetic layered graph (21 layers, fan-out 10; 5 million edges
at the default width of 26,400): the build (generate + check + load) rate, the load rate
alone, the solve rate and the propagation rate in edges per second, the peak
memory, and the ratio of each SQL rate to the reference the issue names: a
plain ``INSERT ... SELECT ... GROUP BY`` per layer over the same edges,
measured here in the same run. Then a cold ``dicegraph report jackpot`` in a new
process on an empty database.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from graphs import synthetic  # noqa: E402
from store.db import open_database  # noqa: E402
from store.load import build_graph  # noqa: E402
from store.schema import edge, layer_ranges  # noqa: E402
from store.solve import solve  # noqa: E402


class Pregenerated:
    """The synthetic game with its rows made beforehand, to time the loader alone."""

    name, title, summary, version, objective, outcome, params = "synthetic", "", "", 1, "max", "", ()

    def __init__(self, rows: list) -> None:
        self.rows = rows

    def agents(self, params: dict) -> tuple[str, ...]:
        return synthetic.agents(params)

    def build(self, params: dict):  # noqa: ANN201
        return iter(self.rows)


def reference_rate(engine: sa.Engine, graph_id: int, edges: int) -> float:
    """Edges/s of a plain INSERT ... SELECT ... GROUP BY per layer (no join, no value lookups)."""
    scratch = sa.Table("bench_ref", sa.MetaData(), sa.Column("src", sa.Integer), sa.Column("total", sa.Double),
                       prefixes=["TEMPORARY"])
    with engine.begin() as connection:
        scratch.create(connection)
        started = time.perf_counter()
        for span in layer_ranges(connection, graph_id):
            rows = (sa.select(edge.c.src, sa.func.sum(edge.c.weight * edge.c.reward))
                    .where(edge.c.id.between(span.first_edge, span.last_edge)).group_by(edge.c.src))
            connection.execute(sa.insert(scratch).from_select(["src", "total"], rows))
        seconds = time.perf_counter() - started
        connection.rollback()
    return edges / seconds


def timed(label: str, edges: int, action) -> float:  # noqa: ANN001
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    print(f"{label:<34} {seconds:8.2f} s {edges / seconds:14,.0f} edges/s")
    return edges / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=26_400, help="nodes per layer (26400: 5.0 million edges)")
    args = parser.parse_args()
    params = {"layers": 21, "width": args.width, "fanout": 10, "seed": 1}
    with tempfile.TemporaryDirectory() as folder:
        engine = open_database(f"sqlite:///{folder}/bench.db", create=True)
        started = time.perf_counter()
        rows = list(synthetic.build(params))
        generate = time.perf_counter() - started
        edges = sum(1 for row in rows if type(row).__name__ == "Edge")
        print(f"synthetic graph: {edges:,} edges, {len(rows) - edges:,} nodes, 21 layers "
              f"(generated in {generate:.2f} s, not counted below)")
        results = {}
        results["load"] = timed("load (check + insert, 1 txn)", edges,
                                lambda: results.setdefault("graph", build_graph(engine, Pregenerated(rows), params)))
        graph_id = results["graph"].graph_id
        del rows
        spent = {"propagate": 0.0, "solve": 0.0}

        @sa.event.listens_for(engine, "before_cursor_execute")
        def _start(conn, cursor, statement, *rest):  # noqa: ANN001, ANN202
            conn.info["started"] = time.perf_counter()

        @sa.event.listens_for(engine, "after_cursor_execute")
        def _stop(conn, cursor, statement, *rest):  # noqa: ANN001, ANN202
            part = "propagate" if "work_reach" in statement else "solve"
            spent[part] += time.perf_counter() - conn.info["started"]

        with engine.begin() as connection:
            results["solve"] = timed("solve + propagate (max), in all", edges, lambda: solve(connection, graph_id, "max"))
        for part, seconds in spent.items():
            print(f"  {part + ' statements':<32} {seconds:8.2f} s {edges / seconds:14,.0f} edges/s")
        reference = reference_rate(engine, graph_id, edges)
        print(f"{'reference INSERT..SELECT..GROUP BY':<34} {'':8}   {reference:14,.0f} edges/s")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"solve+propagate / reference: {results['solve'] / reference:.2f}   peak memory {peak:,.0f} MiB")
    with tempfile.TemporaryDirectory() as folder:
        command = [str(ROOT / ".venv/bin/dicegraph"), "--db", f"sqlite:///{folder}/cold.db", "report", "jackpot"]
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        print(f"cold `dicegraph report jackpot` (new process, empty database): {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
