"""Benchmark of the sweep over every target, through SQL (not part of the test run).

    .venv/bin/python tests/bench/bench_targets.py [--game 5000] [BACKEND ...]

For each backend named (default: sqlite duckdb): build the game (default 5000's turn; shut-the-box for the
other seed the issue names) into an empty database, solve the optimum, then time ``report --targets``'s sweep
(``store/sweep.py``'s ``target_chances``: each target's best policy by backward induction, the target a key
column of every statement, then each propagated to its outcome distribution). Prints the time, the targets,
the edges times targets per second, the peak memory of the process, and the best chance of each target beside
an in-memory numpy reference of the same backward induction (every target a column of one array, a layer at a
time, from the stored edges read once; its time and the ratio, which leaves out the SQL's forward pass).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.protocol import resolve_params  # noqa: E402
from dicegraph.store.catalog import find_policy  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.schema import edge, node  # noqa: E402
from dicegraph.store.solve.layers import solve  # noqa: E402
from dicegraph.store.sweep import target_chances  # noqa: E402
from tests.bench.phases import bench_database, peak_mib  # noqa: E402


def numpy_targets(connection: sa.Connection, graph_id: int, objective: str,
                  targets: list[float]) -> tuple[np.ndarray, float]:
    """Return each target's best chance at the root, by backward induction in numpy over the stored graph (every
    target a column), and the seconds it took after reading the graph."""
    nodes = connection.execute(sa.select(node.c.id, node.c.layer, node.c.kind, node.c.payoff, node.c.denom)
                               .where(node.c.graph_id == graph_id)).all()
    edges = np.array(connection.execute(sa.select(edge.c.src, edge.c.dst, edge.c.weight, edge.c.kind == "roll")
                                        .where(edge.c.graph_id == graph_id)).all(), dtype=float)
    started = time.perf_counter()
    count = max(row.id for row in nodes) + 1
    layer = np.zeros(count, dtype=int)
    denom = np.ones(count)
    payoff = np.full(count, np.nan)
    for row in nodes:
        layer[row.id], denom[row.id] = row.layer, row.denom or 1
        if row.kind == "terminal":
            payoff[row.id] = row.payoff
    goal = np.array(targets)[None, :]
    reached = payoff[:, None] >= goal if objective == "max" else payoff[:, None] <= goal
    value = np.where(np.isnan(payoff)[:, None], 0.0, reached.astype(float))
    src, dst, weight, roll = edges[:, 0].astype(int), edges[:, 1].astype(int), edges[:, 2], edges[:, 3] > 0
    for depth in sorted(set(layer[src]), reverse=True):
        here = layer[src] == depth
        rolls, moves = here & roll, here & ~roll
        if rolls.any():
            sums = np.zeros((count, len(targets)))
            np.add.at(sums, src[rolls], weight[rolls, None] * value[dst[rolls]])
            chance = np.unique(src[rolls])
            value[chance] = sums[chance] / denom[chance, None]
        if moves.any():
            best = np.full((count, len(targets)), -np.inf)
            np.maximum.at(best, src[moves], value[dst[moves]])
            decided = np.unique(src[moves])
            value[decided] = best[decided]
    return value[0], time.perf_counter() - started


def bench(backend: str, game_name: str) -> None:
    """Build and solve the game on ``backend``, time the sweep of every target; print the figures."""
    game = get_game(game_name)
    params = resolve_params(game, {})
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        built = build_graph(engine, game, params)
        with engine.begin() as connection:
            solve(connection, built.graph_id, game.objective)
            optimal = find_policy(connection, built.graph_id, "optimal").id
            started = time.perf_counter()
            found = target_chances(connection, built.graph_id, game.objective, optimal)
            seconds = time.perf_counter() - started
            reference, reference_seconds = numpy_targets(connection, built.graph_id, game.objective,
                                                         [row["target"] for row in found])
    gap = max(abs(row["best"] - exact) for row, exact in zip(found, reference))
    print(f"{backend}: {game_name}, {built.edges:,} edges, {len(found)} targets: sweep {seconds:.1f} s, "
          f"{built.edges * len(found) / seconds:,.0f} edge-targets/s, peak memory {peak_mib():,.0f} MiB")
    print(f"  numpy backward induction {reference_seconds:.2f} s: SQL sweep / numpy = "
          f"{seconds / reference_seconds:.1f}; largest difference of a best chance {gap:.1e}")
    for row in found[:: max(1, len(found) // 6)]:
        print(f"  T = {row['target']:g}: optimum {row['policy']:.6f}, best for T {row['best']:.6f}")


def main() -> None:
    """Parse the arguments and run the benchmark on each backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=["sqlite", "duckdb"])
    parser.add_argument("--game", default="5000", choices=["5000", "shut-the-box"])
    args = parser.parse_args()
    for backend in args.backends:
        bench(backend, args.game)


if __name__ == "__main__":
    main()
