"""Benchmark of 5000 as a race solved through SQL (not part of the test run).

    .venv/bin/python tests/bench/bench_race.py [--targets 500,1000] [--solve-only] [BACKEND ...]

For each target and backend named (default: sqlite duckdb): build the race
into an empty database (score pairs as turn states, the turn stored once),
solve the optimum (``store/solve/turn_cycles.py``: Newton's method per score sum),
play threshold-2 against it in both seats (not with ``--solve-only``), and
print the sizes (score pairs, joined edges per pass, the (pair, turn node)
combinations and those a pass values, short of each pair's horizon), each
phase's time, the peak memory of the process so far (run one backend and
target a process for each one's own) and the Newton passes. The answer is
compared with the in-memory numpy solver of ``tests/race_numpy.py`` (the
reference: its time, its passes and the ratio are printed). The issue's
targets: the race to 5000 under 10 minutes on DuckDB and under an hour on
SQLite; numpy under 20 s.
"""

from __future__ import annotations

import argparse
import bisect
import sys
import time
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.five_thousand_race.game import sizes  # noqa: E402
from dicegraph.store.solve import race_matches, readers, turn_cycles, turns  # noqa: E402
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.catalog import policy_convergence  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.schema import node  # noqa: E402
from tests import race_numpy  # noqa: E402
from tests.bench.phases import bench_database, peak_mib  # noqa: E402


def bench(backend: str, target: int, reference: float, reference_seconds: float, match: bool = True) -> None:
    """Build, solve and (with ``match``) match on ``backend``; print the figures."""
    game = get_game("5000-race")
    params = {"target": target}
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        started = time.perf_counter()
        built = build_graph(engine, game, params)
        times = {"build": time.perf_counter() - started}
        with engine.connect() as connection:
            graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
            valued, combinations = short_of_horizons(connection, graph)
            print(f"  {backend}: a pass values {valued:,} of the {combinations:,} (pair, turn node) combinations "
                  f"({valued / combinations:.0%}): those short of the pair's horizon")
            step = time.perf_counter()
            turn_cycles.ensure_race_solved(connection, graph)
            times["solve optimal"] = time.perf_counter() - step
            value = readers.state_result(connection, built.graph_id, turns.ensure_policy(connection, graph, "optimal"),
                                       "0-0").value
            record = policy_convergence(connection, turns.ensure_policy(connection, graph, "optimal"))
            if match:
                step = time.perf_counter()
                forward, backward = race_matches.matches(connection, graph, [("threshold-2", "optimal")])[0]
                times["match threshold-2 / optimal"] = time.perf_counter() - step
        engine.dispose()
    phases = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in times.items())
    print(f"  {backend}: {phases}; peak {peak_mib():.0f} MiB")
    print(f"    P(first wins) {value:.12f} (numpy {reference:.12f}, |diff| {abs(value - reference):.1e}); "
          f"{record['passes']} passes, at most {record['most_passes']} for a score sum; "
          f"solve / numpy = {times['solve optimal'] / reference_seconds:.0f}")
    if match:
        print(f"    threshold-2 first {forward:.10f}, optimal first {backward:.10f}")


def short_of_horizons(connection: sa.Connection, graph: TurnGraph) -> tuple[int, int]:
    """Return how many (turn state, turn node) combinations lie short of the state's horizon (those a pass
    values), and how many there are."""
    structure = graph.structure
    root_layer = graph.turn_spans[0].layer
    keys = connection.execute(sa.select(node.c.layer, node.c.key).where(
        node.c.graph_id == graph.graph_id, node.c.kind != "terminal")).all()
    progress = sorted(structure.progress(key) for layer, key in keys if layer >= root_layer)
    horizons = [structure.horizon(key) for layer, key in keys if layer < root_layer]
    return sum(bisect.bisect_left(progress, horizon) for horizon in horizons), len(progress) * len(horizons)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="500,1000", help="comma-separated targets (multiples of 50)")
    parser.add_argument("--solve-only", action="store_true", help="skip the match (the growth curve needs the solve)")
    parser.add_argument("backends", nargs="*", default=["sqlite", "duckdb"])
    options = parser.parse_args()
    for target in (int(text) for text in options.targets.split(",")):
        started = time.perf_counter()
        win, passes = race_numpy.solve(target)
        seconds = time.perf_counter() - started
        size = sizes(target)
        steps = target // 50
        combos = sum((steps - a) * steps for a in range(steps))  # (pair, turn total) with a + t below the target
        print(f"race to {target}: {size['pairs']:,} score pairs, turn of {size['turn_nodes']:,} nodes and "
              f"{size['turn_edges']:,} edges; a pass joins every pair with the whole turn "
              f"({size['pairs'] * size['turn_edges']:,} joined edges; {combos:,} (pair, turn total) pairs play)")
        print(f"  numpy: P(first wins) {win[0, 0]:.12f} in {seconds:.2f} s, {sum(passes)} passes "
              f"(at most {max(passes)} for a score sum)")
        for backend in options.backends:
            bench(backend, target, float(win[0, 0]), seconds, match=not options.solve_only)


if __name__ == "__main__":
    main()
