"""Benchmark of Yahtzee's optimal solve in SQL against the published optima (not part of the test run).

    .venv/bin/python tests/bench/bench_yahtzee.py [--rules yahtzee|yatzy] [--bonuses on|upper|off] [--boxes NAMES]
                                                  [--down-to LAYER] [--no-numpy] [--distribution] [BACKEND ...]

For each backend named (default: duckdb): build Yahtzee into an empty
database, solve the optimal policy with the store's turn-joined solve
(``store/solve/turns.py``) from the last state layer down to ``--down-to`` (0, the
whole game, by default; a higher layer times part of it, and the whole
solve's time is extrapolated from the joined edges per second), and print
the time, the joined edges (turn states x turn edges, what the solve reads)
per second and the peak memory of the process. A whole solve's expected
score is compared with the published optimum (Verhoeff 1999 and Glenn 2006
with every bonus: 254.5896; Glenn 2006 with the upper bonus alone: 245.87),
to 7 decimals with ``yatzy-solver`` (PyPI) when it is installed, and with the
in-memory numpy solver of ``tests/yahtzee_numpy.py`` (the reference; its time
and the ratio are printed). With ``--rules yatzy`` the game is Scandinavian
Yatzy, compared with ``yatzy-solver``'s ``yatzy-scandinavian`` (its own solve
timed beside ours; no numpy reference). With ``--distribution`` the whole solve is followed by the optimum's
score distribution (``store/solve/turn_outcomes.py``, whole games played forward a state layer at a time): its
time, the peak memory, its mean and sd beside the solve's, and the shares at or above 200, 250 and 300; without
bonuses, beside ``tests/yahtzee_numpy.py``'s ``optimum_distribution`` (the same forward pass in arrays).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.yahtzee import boxes  # noqa: E402
from dicegraph.graphs.yahtzee.report import PUBLISHED  # noqa: E402
from dicegraph.store.solve import readers, turns  # noqa: E402
from dicegraph.store.solve.turn_outcomes import turn_outcomes  # noqa: E402
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from tests.bench.phases import bench_database, peak_memory  # noqa: E402

TARGET_SECONDS = {"duckdb": 30 * 60}  # the target for Yahtzee's whole game with every bonus
YATZY_SOLVER_VARIANT = {("yahtzee", "on"): "american", ("yahtzee", "upper"): "american+no-bonus",
                        ("yatzy", "on"): "yatzy-scandinavian"}


def bench(backend: str, params: dict[str, str], down_to: int,
          distribution: bool = False) -> tuple[float, float | None, tuple[float, dict[float, float]] | None]:
    """Build and solve on ``backend``; print the figures; return (solve seconds, expected score or None, the
    distribution's seconds and the distribution or None)."""
    game = get_game("yahtzee")
    sheet = boxes.sheet_of(params)
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        started = time.perf_counter()
        built = build_graph(engine, game, params)
        build_seconds = time.perf_counter() - started
        print(f"{backend}: built {built.nodes:,} nodes, {built.edges:,} edges in {build_seconds:.1f} s "
              f"({built.edges / build_seconds:,.0f} edges/s)", flush=True)
        done = [0]

        def progress(states: int) -> None:
            done[0] += states
            print(f"  {done[0]:,} states, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

        with engine.connect() as connection:
            graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
            started = time.perf_counter()
            policy_id = turns.solve_policy(connection, graph, "optimal", down_to=down_to, progress=progress,
                                           commit_layers=True)
            seconds = time.perf_counter() - started
            solved = connection.execute(
                sa.select(sa.func.count()).select_from(turns.turn_policy).where(turns.turn_policy.c.policy_id == policy_id)
            ).scalar_one()
            expected, spread = None, None
            if down_to == 0:
                start = boxes.state_key(boxes.states(sheet)[0], sheet)
                expected, sd = readers.game_score(connection, built.graph_id, policy_id, start)
                if distribution:
                    spread = _distribution(connection, graph, expected, sd, progress)
    turn_edges = sum(span.rolls + span.moves for span in graph.turn_spans)
    joined = solved * turn_edges
    every = sum(1 for state in boxes.states(sheet) if state.filled != sheet.all_filled)
    whole = seconds * every / solved
    target = TARGET_SECONDS.get(backend) if params == {"rules": "yahtzee", "bonuses": "on", "boxes": "all"} else None
    print(f"{backend}: optimal solve of {solved:,} of {every:,} turn states in {seconds:.1f} s, "
          f"{joined / seconds / 1e6:.2f} M joined edges/s ({joined:,} = states x {turn_edges:,} turn edges); "
          f"peak memory of the process so far {peak_memory()}", flush=True)
    if down_to:
        print(f"  the whole solve at this rate: {whole / 60:.1f} min", flush=True)
    if target:
        print(f"  {whole / target:.2f} of the {target // 60} min target", flush=True)
    if expected is not None:
        print(f"  expected score {expected:.10f}, sd {sd:.6f}", flush=True)
    return seconds, expected, spread


def _distribution(connection: sa.Connection, graph: TurnGraph, expected: float, sd: float,
                  progress: Callable[[int], None]) -> tuple[float, dict[float, float]]:
    """Time the optimum's score distribution over whole games; print it beside the solve's mean and sd; return its
    seconds and the distribution."""
    started = time.perf_counter()
    spread = turn_outcomes(connection, graph, "optimal", progress)
    seconds = time.perf_counter() - started
    mean = sum(score * p for score, p in spread.items())
    deviation = sum((score - mean) ** 2 * p for score, p in spread.items()) ** 0.5
    shares = ", ".join(f"{sum(p for score, p in spread.items() if score >= at):.4%} at {at}+" for at in (200, 250, 300))
    print(f"  the optimum's score distribution: {seconds:.1f} s, {len(spread):,} scores; mean {mean:.10f} "
          f"(|difference| {abs(mean - expected):.1e}), sd {deviation:.6f} (|difference| {abs(deviation - sd):.1e}); "
          f"{shares}; total {sum(spread.values()):.12f}; peak memory of the process {peak_memory()}", flush=True)
    return seconds, spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backends", nargs="*", default=["duckdb"])
    parser.add_argument("--rules", default="yahtzee", choices=boxes.RULES)
    parser.add_argument("--bonuses", default="on", choices=boxes.BONUSES)
    parser.add_argument("--boxes", default="all", help="the boxes in play, comma-separated (default: all)")
    parser.add_argument("--down-to", type=int, default=0, help="the lowest state layer solved (0: the whole game)")
    parser.add_argument("--no-numpy", action="store_true", help="skip the numpy reference (about 4 min with bonuses)")
    parser.add_argument("--distribution", action="store_true",
                        help="after the whole solve, time the optimum's score distribution")
    options = parser.parse_args()
    params = {"rules": options.rules, "bonuses": options.bonuses, "boxes": options.boxes}
    sheet = boxes.sheet_of(params)
    results = {backend: bench(backend, params, options.down_to, options.distribution) for backend in options.backends}
    published = PUBLISHED.get((options.rules, options.bonuses)) if options.boxes == "all" else None
    if published:
        print(f"published optimum: {published['value']} ({published['source']})")
    try:
        import yatzy_solver
    except ImportError:
        yatzy_solver = None
    variant = YATZY_SOLVER_VARIANT.get((options.rules, options.bonuses))
    if yatzy_solver is not None and variant:
        started = time.perf_counter()
        solver = yatzy_solver.Solver.build(yatzy_solver.Variant(variant))
        peer_seconds = time.perf_counter() - started
        peer = solver.state_values(np.array([sheet.first_filled], dtype=np.uint32), np.zeros(1, dtype=np.uint16),
                                   np.zeros(1, dtype=bool))[0]
        print(f"yatzy-solver {variant}: {peer:.10f} (its solve {peer_seconds:.1f} s)")
        for backend, (sql_seconds, expected, _) in results.items():
            if expected is not None:
                print(f"  {backend}: equal to 7 decimals: {round(expected, 7) == round(peer, 7)} "
                      f"(|difference| {abs(expected - peer):.2e}); {sql_seconds / peer_seconds:.1f}x its time")
    if not options.no_numpy and options.rules == "yahtzee" and options.boxes == "all":
        from tests.yahtzee_numpy import optimal_values, optimum_distribution

        started = time.perf_counter()
        values = optimal_values(options.bonuses)
        seconds = time.perf_counter() - started
        reference = float(values[0, 0, 0])
        print(f"numpy in memory (the reference): {seconds:.1f} s, expected score {reference:.10f}")
        for backend, (sql_seconds, expected, _) in results.items():
            if expected is not None:
                print(f"  {backend} / numpy: {sql_seconds / seconds:.1f}x the time; "
                      f"|difference| {abs(expected - reference):.2e}")
        if options.distribution and options.bonuses == "off":
            started = time.perf_counter()
            spread = optimum_distribution(values)
            seconds = time.perf_counter() - started
            print(f"numpy's distribution of the optimum's score (the reference, from the values above): "
                  f"{seconds:.1f} s")
            for backend, (_, _, found) in results.items():
                if found is not None:
                    differs = max(abs(found[1].get(score, 0.0) - spread.get(score, 0.0))
                                  for score in {*found[1], *spread})
                    print(f"  {backend} / numpy: {found[0] / seconds:.1f}x the time; largest |difference| of a "
                          f"score's probability {differs:.2e}")


if __name__ == "__main__":
    main()
