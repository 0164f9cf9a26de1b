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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs.spec import GameSpec
from dicegraph.graphs import synthetic  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.solve.layers import solve  # noqa: E402
from tests.bench.phases import PHASES, peak_mib, reference_rate, timed_solve  # noqa: E402


class Pregenerated:
    """The synthetic game with its rows made beforehand, to time the loader alone."""

    name, title, summary, version, objective, outcome, params = "synthetic", "synthetic", "pregenerated", 1, "max", \
        "expected payoff", ()

    def __init__(self, rows: list) -> None:
        self.rows = rows

    def agents(self, params: dict) -> tuple[str, ...]:
        return synthetic.agents(params)

    def build(self, params: dict):  # noqa: ANN201
        return iter(self.rows)


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
                                lambda: results.setdefault("graph", build_graph(engine, GameSpec.declared_by(Pregenerated(rows)), params)))
        graph_id = results["graph"].graph_id
        rows.clear()  # the rows are loaded: free their memory before the solve
        started = time.perf_counter()
        spent = timed_solve(engine, lambda connection: solve(connection, graph_id, "max"))
        seconds = time.perf_counter() - started
        results["solve"] = edges / seconds
        print(f"{'solve + propagate (max), in all':<34} {seconds:8.2f} s {results['solve']:14,.0f} edges/s")
        for part in PHASES:
            if spent[part]:
                print(f"  {part:<32} {spent[part]:8.2f} s {edges / spent[part]:14,.0f} edges/s")
        reference = reference_rate(engine, graph_id, edges)
        print(f"{'reference INSERT..SELECT..GROUP BY':<34} {'':8}   {reference:14,.0f} edges/s")
        print(f"solve+propagate / reference: {results['solve'] / reference:.2f}   peak memory {peak_mib():,.0f} MiB")
    with tempfile.TemporaryDirectory() as folder:
        command = [str(ROOT / ".venv/bin/dicegraph"), "--db", f"sqlite:///{folder}/cold.db", "report", "jackpot"]
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        print(f"cold `dicegraph report jackpot` (new process, empty database): {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
