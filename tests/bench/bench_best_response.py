"""Benchmark of the best response to Pig's hold-at-N agent, solved through SQL (not part of the test run).

    .venv/bin/python tests/bench/bench_best_response.py [--target 100] [--hold 20] [BACKEND ...]

For each backend named (default: sqlite duckdb): build Pig into an empty database and solve the optimum (the
game's value, untimed here: ``bench_pig.py`` times it), then time the best response to hold-at-N
(``store/solve/graph_matches.py``: one seat maximising against the agent followed in the other, Newton's method
on each score sum's turn starts) and the two matches that give its wins and the optimum's in each seat. Prints
each phase's time, the best response's edges per second, the peak memory of the process, and the responder's
wins beside the in-memory numpy reference of the same equations (``tests/pig_numpy.py``'s ``best_response``:
its time and the ratio). The issue's targets: under 2 minutes on SQLite and DuckDB, within 20 times numpy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.catalog import find_policy  # noqa: E402
from dicegraph.store.solve.layers import evaluate, solve  # noqa: E402
from dicegraph.store.solve.graph_matches import solve_response  # noqa: E402
from dicegraph.store.solve.objectives import response_name  # noqa: E402
from dicegraph.store.view import GraphView  # noqa: E402
from tests import pig_numpy  # noqa: E402
from tests.bench.phases import bench_database, peak_mib  # noqa: E402


def bench(backend: str, target: int, hold: int, reference: tuple[float, float], reference_seconds: float) -> None:
    """Build, solve the optimum, then time the best response and its matches on ``backend``; print the figures."""
    params = {"target": target, "holds": (hold,)}
    agent = f"hold-at-{hold}"
    game = get_game("pig")
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        built = build_graph(engine, game, params)
        with engine.begin() as connection:
            started = time.perf_counter()
            solve(connection, built.graph_id, first_guess=game.guess_for(params))  # the game's value
            evaluate(connection, find_policy(connection, built.graph_id, agent).id)
            untimed = time.perf_counter() - started
            started = time.perf_counter()
            _, response = solve_response(connection, built.graph_id, agent, first_guess=game.guess_for(params))
            solving = time.perf_counter() - started
            started = time.perf_counter()
            figures = GraphView(connection, built.graph_id, game).response(agent)
            matching = time.perf_counter() - started
    print(f"{backend}: {built.nodes:,} nodes, {built.edges:,} edges, {built.layers:,} layers; "
          f"optimum and {agent} first in {untimed:.1f} s (untimed)")
    print(f"  {'best response':>22}: {solving:8.1f} s, {built.edges / solving:,.0f} edges/s, "
          f"{solving / reference_seconds:.1f} times numpy")
    print(f"  {'both matches (2 runs)':>22}: {matching:8.1f} s; peak memory {peak_mib():,.0f} MiB")
    for seat, exact, found in zip(("first", "second"), reference, (response.first, response.second)):
        print(f"  {response_name(agent)} moving {seat}: {found:.12f}; numpy {exact:.12f} "
              f"(difference {found - exact:.1e})")
    print(f"  optimum against {agent}: {figures['optimum_wins']['mean']:.10f} on average over the seats; "
          f"exploitability of {agent}: {figures['exploitability']['mean']:.10f}")


def main() -> None:
    """Parse the arguments and run the benchmark on each backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=["sqlite", "duckdb"])
    parser.add_argument("--target", type=int, default=100)
    parser.add_argument("--hold", type=int, default=20)
    args = parser.parse_args()
    started = time.perf_counter()
    response, agent, most = pig_numpy.best_response(args.target, args.hold)
    reference_seconds = time.perf_counter() - started
    reference = (float(response[0, 0, 0]), 1.0 - float(agent[0, 0, 0]))
    print(f"numpy reference: the best response to hold-at-{args.hold} wins {reference[0]:.12f} moving first, "
          f"{reference[1]:.12f} second, in {reference_seconds:.2f} s (at most {most} Newton passes a sum)")
    for backend in args.backends:
        bench(backend, args.target, args.hold, reference, reference_seconds)


if __name__ == "__main__":
    main()
