"""Benchmark of Pig solved through SQL, cycles and all (not part of the test run).

    .venv/bin/python tests/bench/bench_pig.py [--target 100] [BACKEND ...]

For each backend named (default: sqlite duckdb): build Pig into an empty
database, solve the optimum (``store/solve/cycles.py``: Newton's method on each
score sum's turn starts), evaluate the hold-at-20 agent, play it against the
optimum in both seats, and print each phase's time, the edges per second of
the build, the peak memory of the process and the Newton passes. The SQL
answer is compared with the in-memory numpy solver of
``tests/pig_numpy.py`` (the reference: its time and the ratio are printed)
and, for the race to 100, with Neller and Presser's published 0.5306
(UMAP Journal 2004). The issue's target: the cold report under 2 minutes on
SQLite.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game, pig  # noqa: E402
from dicegraph.store.catalog import find_policy  # noqa: E402
from dicegraph.store.solve.graph_matches import head_to_head  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.solve.layers import evaluate, solve  # noqa: E402
from dicegraph.store.view import GraphView  # noqa: E402
from tests import pig_numpy  # noqa: E402
from tests.bench.phases import bench_database, peak_mib  # noqa: E402

AGENT = "hold-at-20"


def bench(backend: str, target: int, reference: float, reference_seconds: float) -> None:
    """Build, solve, evaluate and match on ``backend``; print the figures."""
    params = {"target": target, "holds": (20,)}
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        started = time.perf_counter()
        built = build_graph(engine, get_game("pig"), params)
        times = {"build": time.perf_counter() - started}
        with engine.begin() as connection:
            step = time.perf_counter()
            solve(connection, built.graph_id, first_guess=get_game("pig").guess_for(params))
            times["solve optimal"] = time.perf_counter() - step
            step = time.perf_counter()
            evaluate(connection, find_policy(connection, built.graph_id, AGENT).id)
            times[f"evaluate {AGENT}"] = time.perf_counter() - step
            step = time.perf_counter()
            one_way, other_way = head_to_head(connection, built.graph_id, AGENT, "optimal")
            matches = {(AGENT, "optimal"): one_way, ("optimal", AGENT): other_way}
            times["both matches (one run)"] = time.perf_counter() - step
            view = GraphView(connection, built.graph_id, get_game("pig"))
            converged = view.convergence("optimal")
            found = view.position(pig.decision_key(0, 0, 0), depth=0)["policies"]["optimal"]["value"]
        total = time.perf_counter() - started
        print(f"{backend}: {built.nodes:,} nodes, {built.edges:,} edges, {built.layers:,} layers; "
              f"build {built.edges / times['build']:,.0f} edges/s")
        for phase, seconds in times.items():
            print(f"  {phase:>20}: {seconds:8.1f} s")
        print(f"  {'cold report':>20}: {total:8.1f} s, peak memory {peak_mib():,.0f} MiB")
        print(f"  P(first player wins) = {found:.12f}; numpy {reference:.12f} (difference {found - reference:.1e}); "
              f"SQL solve / numpy time = {times['solve optimal'] / reference_seconds:.1f}")
        print(f"  Newton: {converged['passes']} passes over {converged['cyclic_components']} components, "
              f"at most {converged['most_passes']}, residual {converged['residual']:.1e}")
        for (first, second), p in matches.items():
            print(f"  {first} first against {second}: {p:.10f}")


def main() -> None:
    """Parse the arguments and run the benchmark on each backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=["sqlite", "duckdb"])
    parser.add_argument("--target", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    win, most = pig_numpy.solve(args.target)
    reference_seconds = time.perf_counter() - started
    reference = float(win[0, 0, 0])
    published = pig.PUBLISHED_P_FIRST_WINS.get(args.target)
    print(f"numpy reference: {reference:.12f} in {reference_seconds:.1f} s (at most {most} Newton passes a sum)"
          + (f"; Neller and Presser 2004: {published}" if published else ""))
    for backend in args.backends:
        bench(backend, args.target, reference, reference_seconds)


if __name__ == "__main__":
    main()
