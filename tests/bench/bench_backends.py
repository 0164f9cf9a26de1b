"""Benchmark of the backends side by side (not part of the test run).

    .venv/bin/python tests/bench/bench_backends.py [--width 52800] [--school]

Builds one synthetic layered graph (21 layers, fan-out 10; 10.1 million edges
at the default width) into an empty database on each backend, then solves it
(backward induction with choices, and the reach propagation), and prints the
load and solve rates in edges per second side by side: the solve in all and
split into its phases (induction, propagation, storing ``value`` and
``choice``, commit), beside two references of the same machine and backend:
a plain ``INSERT ... SELECT ... GROUP BY`` per layer without the join to the
values, and one statement joining all the edges with a value per node (a
solve makes at least two such passes: induction and propagation). SQLite and DuckDB run
in a temporary directory; PostgreSQL runs when ``$DICEGRAPH_BENCH_POSTGRES``
names a database whose user may create databases (a fresh one is made and
dropped). With ``--school``, also School's whole-game optimal solve on each.
The issue's target: a DuckDB solve of at least 15 million edges per second.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs import school as school_rules  # noqa: E402
from dicegraph.graphs.protocol import resolve_params  # noqa: E402
from dicegraph.store.solve import turns  # noqa: E402
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.solve.layers import solve  # noqa: E402
from tests.bench.phases import (PHASES, POSTGRES_ENV, bench_database, one_pass_rate, peak_mib, reference_rate,  # noqa: E402
                                timed_solve)

TARGET_DUCKDB_SOLVE = 15e6


def run(backend: str, width: int, with_school: bool) -> dict[str, float]:
    """Return the backend's figures: load and solve seconds and rates (and School's solve)."""
    figures: dict[str, float] = {}
    game = get_game("synthetic")
    params = resolve_params(game, {"layers": "21", "width": str(width), "fanout": "10", "seed": "1"})
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        started = time.perf_counter()
        built = build_graph(engine, game, params)
        figures["load_s"] = time.perf_counter() - started
        figures["edges"] = built.edges
        started = time.perf_counter()
        spent = timed_solve(engine, lambda connection: solve(connection, built.graph_id, "max"))
        figures["solve_s"] = time.perf_counter() - started
        figures |= {f"{phase}_s": seconds for phase, seconds in spent.items()}
        figures["reference"] = reference_rate(engine, built.graph_id, built.edges)
        figures["one_pass"] = one_pass_rate(engine, built.graph_id, built.edges)
        _print_synthetic(backend, figures)
        if with_school:
            school_game = get_game("school")
            school_params = resolve_params(school_game, {})
            built = build_graph(engine, school_game, school_params)
            started = time.perf_counter()
            with engine.connect() as connection:  # committed layer by layer, as a report solves it
                graph = TurnGraph.load(connection, built.graph_id, school_game.turn(school_params))
                turns.solve_policy(connection, graph, "optimal", commit_layers=True)
            figures["school_s"] = time.perf_counter() - started
            print(f"  School optimal {figures['school_s']:.1f} s", flush=True)
        engine.dispose()
    return figures


def _print_synthetic(backend: str, figures: dict[str, float]) -> None:
    print(f"{backend}: {figures['edges']:,.0f} edges; load {figures['load_s']:.1f} s "
          f"({figures['edges'] / figures['load_s']:,.0f} edges/s, generation and checks included); "
          f"solve + propagate {figures['solve_s']:.1f} s ({figures['edges'] / figures['solve_s']:,.0f} edges/s)", flush=True)
    print("  " + "; ".join(f"{phase} {figures[phase + '_s']:.2f} s" for phase in PHASES if figures.get(phase + "_s"))
          + f"; reference {figures['reference']:,.0f} edges/s; one pass over all edges {figures['one_pass']:,.0f} edges/s",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=52_800, help="nodes per layer (52800: 10.1 million edges)")
    parser.add_argument("--school", action="store_true", help="also solve School's whole game on each backend")
    args = parser.parse_args()
    backends = ["sqlite", "duckdb"] + (["postgresql"] if os.environ.get(POSTGRES_ENV) else [])
    if "postgresql" not in backends:
        print("PostgreSQL left out: set $DICEGRAPH_BENCH_POSTGRES to include it")
    results = {}
    for backend in backends:
        results[backend] = run(backend, args.width, args.school)
    print(f"\n{'backend':<12}{'load edges/s':>14}{'solve edges/s':>15}{'induction':>13}{'propagation':>13}"
          f"{'reference':>13}{'School optimal':>16}")
    for backend, figures in results.items():
        school_text = f"{figures['school_s']:.1f} s" if "school_s" in figures else "-"
        edges = figures["edges"]
        print(f"{backend:<12}{edges / figures['load_s']:>14,.0f}{edges / figures['solve_s']:>15,.0f}"
              f"{edges / figures['induction_s']:>13,.0f}{edges / figures['propagation_s']:>13,.0f}"
              f"{figures['reference']:>13,.0f}{school_text:>16}")
    duck = results["duckdb"]["edges"] / results["duckdb"]["solve_s"]
    print(f"DuckDB solve: {duck / TARGET_DUCKDB_SOLVE:.2f} of the 15 million edges/s target "
          f"(induction alone {results['duckdb']['edges'] / results['duckdb']['induction_s'] / TARGET_DUCKDB_SOLVE:.2f}); "
          f"peak memory of the process {peak_mib():,.0f} MiB; "
          f"School has {len(school_rules.states()):,} turn states")


if __name__ == "__main__":
    main()
