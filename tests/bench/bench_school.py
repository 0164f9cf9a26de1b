"""Benchmark of School's cold report solve in SQL: both policies over whole games (not part of the test run).

    .venv/bin/python tests/bench/bench_school.py [--combinations NAMES] [sqlite|duckdb|postgresql ...]

For each backend named (default: sqlite; postgresql needs
``$DICEGRAPH_BENCH_POSTGRES``, see bench_backends.py): build School into an empty
database and solve what a cold ``report school`` solves, the optimum and Bob
over all 21,526 turn states (:func:`dicegraph.store.solve.turns.ensure_turns_solved`, the policies
together), and print the time against the issue's targets (5 minutes on
SQLite, 1 on DuckDB), the joined edges per second (policies x turn states x
turn edges, what the solve reads), and the peak memory of the process. Then
solve the optimum with the in-memory numpy solver below (the reference) and
print the ratio; both must find the same expected score. ``--combinations`` (School's parameter: the
combinations in play, the others used from the start) solves a smaller game in SQL; the reference still solves
every state and reads the smaller game's start.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs import school as rules  # noqa: E402
from dicegraph.store.solve import readers, turns  # noqa: E402
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from tests.bench.phases import bench_database, peak_memory  # noqa: E402

PARAMS = {"straights": (15, 20), "grades": "negative"}
TARGET_SECONDS = {"sqlite": 300.0, "duckdb": 60.0}


def numpy_solve(start: int = 0) -> float:
    """Return the optimal expected score from the state whose used combinations are ``start`` (0: the whole game),
    every layer of states solved at once with arrays (values only)."""
    outcomes = len(rules.OUTCOMES)
    keep_ids = {keep: i for i, keep in enumerate(rules.KEEPS)}
    roll = np.zeros((len(rules.KEEPS), outcomes))  # P(outcome | keep)
    for keep, k in keep_ids.items():
        for dice, weight in rules.rerolls(keep):
            roll[k, rules.OUTCOME_INDEX[dice]] += weight / 6 ** (rules.DICE - len(keep))
    first = roll[keep_ids[()]]
    options = [[keep_ids[k] for k in rules.sub_multisets(dice) if len(k) < rules.DICE] for dice in rules.OUTCOMES]
    width = max(map(len, options))
    keeps = np.array([row + [row[-1]] * (width - len(row)) for row in options])  # padded with a repeat
    points = rules.points_table(PARAMS["straights"], PARAMS["grades"])  # [outcome, combination, first roll]
    value = {rules.ALL_USED: 0.0}
    by_layer: dict[int, list[int]] = {}
    for used in rules.STATES:
        by_layer.setdefault(bin(used).count("1"), []).append(used)
    for layer in range(len(rules.COMBINATIONS) - 1, -1, -1):
        states = by_layer[layer]
        after = np.full((len(states), len(rules.COMBINATIONS)), -np.inf)
        for row, used in enumerate(states):
            for c in rules.open_combinations(used):
                after[row, c] = value[used | 1 << c]
        score3 = (points[None, :, :, 0] + after[:, None, :]).max(axis=2)
        score1 = (points[None, :, :, 1] + after[:, None, :]).max(axis=2)
        decide2 = np.maximum(score3, (score3 @ roll.T)[:, keeps].max(axis=2))
        decide1 = np.maximum(score1, (decide2 @ roll.T)[:, keeps].max(axis=2))
        for row, worth in enumerate(decide1 @ first):
            value[states[row]] = float(worth)
    return value[start]


def bench(backend: str, params: dict[str, object]) -> tuple[float, float]:
    first = rules.first_used(params)
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        started = time.perf_counter()
        built = build_graph(engine, get_game("school"), params)
        build_seconds = time.perf_counter() - started
        started = time.perf_counter()
        with engine.connect() as connection:
            graph = TurnGraph.load(connection, built.graph_id, get_game("school").turn(params))
            turns.ensure_turns_solved(connection, graph)
            seconds = time.perf_counter() - started
            policy_id = turns.ensure_policy(connection, graph, "optimal")
            expected, sd = readers.game_score(connection, built.graph_id, policy_id, rules.state_key(first))
    turn_edges = sum(span.rolls + span.moves for span in graph.turn_spans)
    states = sum(1 for used in rules.STATES if used & first == first) - 1  # those played: all but the last
    joined = len(graph.structure.policies) * states * turn_edges
    target = TARGET_SECONDS.get(backend)
    against = f" ({seconds / target:.2f} of the {target / 60:.0f} min target)" if target else ""
    print(f"{backend}: build {build_seconds:.1f} s; optimal and Bob solved in {seconds:.1f} s{against}, "
          f"{joined / seconds / 1e6:.2f} M joined edges/s ({joined:,} = policies x states x turn edges); "
          f"expected score {expected:.9f}, sd {sd:.6f}; peak memory of the process so far {peak_memory()}", flush=True)
    return seconds, expected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backends", nargs="*", default=["sqlite"])
    parser.add_argument("--combinations", default="all", help="the combinations in play (default: all)")
    options = parser.parse_args()
    params = {**PARAMS, "combinations": options.combinations}
    results = {backend: bench(backend, params) for backend in options.backends}
    started = time.perf_counter()
    reference = numpy_solve(rules.first_used(params))
    seconds = time.perf_counter() - started
    print(f"numpy in memory (the reference): {seconds:.1f} s, expected score {reference:.9f}")
    for backend, (sql_seconds, expected) in results.items():
        print(f"  {backend} / numpy: {sql_seconds / seconds:.1f}x the time; |difference| {abs(expected - reference):.2e}")


if __name__ == "__main__":
    main()
