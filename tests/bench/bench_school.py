"""Benchmark of School's cold report solve in SQL: both policies over whole games (not part of the test run).

    .venv/bin/python tests/bench/bench_school.py [--combinations NAMES] [--distribution] [--optimum-only]
        [sqlite|duckdb|postgresql ...]

For each backend named (default: sqlite; postgresql needs
``$DICEGRAPH_BENCH_POSTGRES``, see bench_backends.py): build School into an empty
database and solve what a cold ``report school`` solves, the optimum and Bob
over all 21,526 turn states (:func:`dicegraph.store.solve.turns.solve_policies`, the policies together and
committed layer by layer, as a cold report's :func:`dicegraph.store.solve.turns.ensure_turns_solved` solves
them), and print the time against the issue's targets (5 minutes on SQLite, 1 on DuckDB), the joined edges per second (policies x turn states x
turn edges, what the solve reads), and the peak memory of the process. Then
solve the optimum with the in-memory numpy solver below (the reference) and
print the ratio; both must find the same expected score. ``--combinations`` (School's parameter: the
combinations in play, the others used from the start) solves a smaller game in SQL; the reference still solves
every state and reads the smaller game's start. ``--distribution`` also times the optimum's score distribution
over whole games in SQL (``store/solve/turn_outcomes.py``) beside :func:`numpy_distribution`, the same forward
pass in arrays from the reference's values (its choices made again, as the SQL makes them again from the stored
values), and prints the largest difference of a score's probability. Last, :func:`numpy_both_policies` does in
arrays the work the SQL does (both policies, each with its mean and second moment), a second reference for the
same work, and the ratio against it is printed too. ``--optimum-only`` solves the optimum alone in SQL, the work the
optimum-only reference does (each state's second moment besides), and leaves the second reference out.
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
from dicegraph.graphs.protocol import mean_and_spread, spread  # noqa: E402
from dicegraph.graphs.school.rules import last_states  # noqa: E402
from dicegraph.store.solve import readers, turns  # noqa: E402
from dicegraph.store.solve.turn_outcomes import turn_outcomes  # noqa: E402
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from tests.bench.phases import bench_database, peak_memory  # noqa: E402
from tests.school_numpy import NumpyTurns, states_by_layer  # noqa: E402

PARAMS = {"straights": (15, 20), "grades": "negative"}
TARGET_SECONDS = {"sqlite": 300.0, "duckdb": 60.0}


def numpy_values() -> dict[int, float]:
    """Return the optimal expected score still to come from every state (used combinations -> value), every layer of
    states solved at once with arrays (values only: the solve's reference)."""
    turns = NumpyTurns(PARAMS["straights"], PARAMS["grades"])
    points = turns.points
    value = {rules.ALL_USED: 0.0}
    by_layer = states_by_layer()
    for layer in range(len(rules.COMBINATIONS) - 1, -1, -1):
        states = by_layer[layer]
        after = np.full((len(states), len(rules.COMBINATIONS)), -np.inf)
        for row, used in enumerate(states):
            for c in rules.open_combinations(used):
                after[row, c] = value[used | 1 << c]
        score3 = (points[None, :, :, 0] + after[:, None, :]).max(axis=2)
        score1 = (points[None, :, :, 1] + after[:, None, :]).max(axis=2)
        decide2 = np.maximum(score3, turns.best_keeps(score3))
        decide1 = np.maximum(score1, turns.best_keeps(decide2))
        for row, worth in enumerate(decide1 @ turns.first):
            value[states[row]] = float(worth)
    return value


def numpy_both_policies(first: int = 0) -> dict[str, dict[int, tuple[float, float]]]:
    """Return, for the optimum and Bob, each state's expected score still to come and its second moment (used
    combinations -> (mean, second moment)): the work the SQL solve does (both policies, each choosing by its
    profit, the mean and second moment following its choices), every layer of states at once with arrays.

    Bob ranks ending with a combination by its points minus the optimum's value of the state where it alone is
    left (:func:`dicegraph.graphs.school.rules.bob`). Of equal choices this takes scoring over rolling again and
    the first combination or keep, where the SQL takes the first move within
    :data:`dicegraph.graphs.protocol.TIE` in the graph's order: where choices of equal profit differ in what
    follows, the second moments (and Bob's means) may differ a little; the optimum's means do not."""
    turns = NumpyTurns(PARAMS["straights"], PARAMS["grades"])
    points = turns.points
    solved: dict[str, dict[int, tuple[float, float]]] = {"optimal": {rules.ALL_USED: (0.0, 0.0)},
                                                          "bob": {rules.ALL_USED: (0.0, 0.0)}}
    bob_profit = np.zeros(len(rules.COMBINATIONS))
    by_layer = states_by_layer()

    def chosen(profit: np.ndarray, v1: np.ndarray, v2: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
        at = np.expand_dims(profit.argmax(axis=axis), axis)
        return tuple(np.take_along_axis(array, at, axis).squeeze(axis) for array in (profit, v1, v2))

    def kept(decide: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        return chosen(*((array @ turns.roll.T)[:, turns.keeps] for array in decide), axis=2)

    def better(score: tuple[np.ndarray, ...], keep: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        stop = score[0] >= keep[0]
        return tuple(np.where(stop, a, b) for a, b in zip(score, keep))

    for layer in range(len(rules.COMBINATIONS) - 1, -1, -1):
        states = [used for used in by_layer[layer] if used & first == first]
        for name in ("optimal", "bob"):
            value = solved[name]
            ends = np.zeros((3, len(states), len(rules.COMBINATIONS)))  # each end's profit, v1 and v2
            ends[0] = -np.inf  # an end the state has closed is never chosen
            for row, used in enumerate(states):
                for c in rules.open_combinations(used):
                    v1, v2 = value[used | 1 << c]
                    ends[:, row, c] = (v1 if name == "optimal" else bob_profit[c]), v1, v2
            score = []
            for roll in (0, 1):
                gained = points[None, :, :, roll]
                score.append(chosen(gained + ends[0][:, None, :], gained + ends[1][:, None, :],
                                    gained * gained + 2 * gained * ends[1][:, None, :] + ends[2][:, None, :], axis=2))
            decide2 = better(score[0], kept(score[0]))
            decide1 = better(score[1], kept(decide2))
            means, moments = decide1[1] @ turns.first, decide1[2] @ turns.first
            for row, used in enumerate(states):
                value[used] = float(means[row]), float(moments[row])
            if name == "optimal" and layer == len(rules.COMBINATIONS) - 1:  # Bob's profits: the last states' values
                for c in last_states(first):
                    bob_profit[c] = -value[rules.ALL_USED ^ 1 << c][0]
    return solved


def numpy_distribution(turns: NumpyTurns, value: dict[int, float], start: int = 0) -> dict[float, float]:
    """Return the optimum's final score -> probability from the state ``start``, whole games played forward a layer
    of states at a time: each state's chances over the total so far (a dense row), each turn's chances of ending in
    each (combination, points), its choices made again from the states' values (:func:`numpy_values`, ties to the
    first combination or keep, and to scoring over keeping)."""
    points = turns.points
    low = int(sum(points[:, c, :].min() for c in range(len(rules.COMBINATIONS))))
    high = int(sum(points[:, c, :].max() for c in range(len(rules.COMBINATIONS))))
    width, offset = high - low + 1, -low
    by_layer = {layer: [used for used in states if used & start == start]  # those the start may reach
                for layer, states in states_by_layer().items()}
    first_layer = bin(start).count("1")
    row_of = {layer: {used: row for row, used in enumerate(states)} for layer, states in by_layer.items()}
    reach = {layer: np.zeros((len(states), width)) for layer, states in by_layer.items() if layer >= first_layer}
    reach[first_layer][row_of[first_layer][start], offset] = 1.0
    for layer in range(first_layer, len(rules.COMBINATIONS)):
        states, here = by_layer[layer], reach.pop(layer)
        turn = turns.layer(states, value)
        played = np.broadcast_to(np.arange(len(states))[:, None], turn["score1"].shape)
        stop1 = turn["score1"] >= turn["kept1"]
        ends = [(turns.first * stop1, turn["scores1"], 1)]  # (chances, combination, roll) where each turn ends
        carried = np.zeros((len(states), len(rules.KEEPS)))
        np.add.at(carried, (played, turn["keep1"]), turns.first * ~stop1)
        second = carried @ turns.roll
        stop2 = turn["score3"] >= turn["kept2"]
        ends.append((second * stop2, turn["scores3"], 0))
        carried = np.zeros((len(states), len(rules.KEEPS)))
        np.add.at(carried, (played, turn["keep2"]), second * ~stop2)
        ends.append((carried @ turns.roll, turn["scores3"], 0))
        rows = np.concatenate([played.ravel()] * 3)
        chosen = np.concatenate([combination.ravel() for _, combination, _ in ends])
        gained = np.concatenate([points[np.arange(len(rules.OUTCOMES))[None, :], combination, roll].ravel()
                                 for _, combination, roll in ends]).astype(int)
        chances = np.concatenate([chance.ravel() for chance, _, _ in ends])
        spans = (len(rules.COMBINATIONS), high - low + 1 - low, len(states))  # (combination, points - low, row)
        summed = np.bincount(np.ravel_multi_index((chosen, gained - low, rows), spans), weights=chances,
                             minlength=int(np.prod(spans)))
        following = reach[layer + 1]
        found = np.nonzero(summed > 0)[0]
        pairs, starts = np.unique(found // len(states), return_index=True)  # each (combination, points) in turn
        for pair, first, last in zip(pairs, starts, [*starts[1:], len(found)]):
            c, g = divmod(int(pair), spans[1])
            g += low
            rows_here = found[first:last] % len(states)
            into = np.array([row_of[layer + 1][states[row] | 1 << c] for row in rows_here])
            block = summed[found[first:last], None] * here[rows_here]
            if g >= 0:
                following[into, g:] += block[:, :width - g]
            else:
                following[into, :g] += block[:, -g:]
    final = reach[len(rules.COMBINATIONS)][row_of[len(rules.COMBINATIONS)][rules.ALL_USED]]
    return {float(score - offset): float(p) for score, p in enumerate(final) if p > 0}


def bench(backend: str, params: dict[str, object], distribution: bool = False, optimum_only: bool = False
          ) -> tuple[float, dict[str, tuple[float, float]], tuple[float, dict[float, float]] | None]:
    """Return the seconds the SQL solve of School on ``backend`` took (both policies, or the optimum alone), each
    policy's expected score and sd at the start, and (``distribution``) the seconds and outcome of the optimum's
    score distribution; print them."""
    first = rules.first_used(params)
    with bench_database(backend) as url:
        engine = open_database(url, create=True)
        started = time.perf_counter()
        built = build_graph(engine, get_game("school"), params)
        build_seconds = time.perf_counter() - started
        started = time.perf_counter()
        with engine.connect() as connection:
            graph = TurnGraph.load(connection, built.graph_id, get_game("school").turn(params))
            names = ["optimal"] if optimum_only else [declared.name for declared in graph.structure.policies]
            turns.solve_policies(connection, graph, names, commit_layers=True)  # what a cold report solves
            seconds = time.perf_counter() - started
            scores = {name: readers.game_score(connection, built.graph_id, turns.ensure_policy(connection, graph, name),
                                               rules.state_key(first)) for name in names}
            expected, sd = scores["optimal"]
            timed_distribution = None
            if distribution:
                started = time.perf_counter()
                found = turn_outcomes(connection, graph, "optimal")
                timed_distribution = time.perf_counter() - started, found
    turn_edges = sum(span.rolls + span.moves for span in graph.turn_spans)
    states = sum(1 for used in rules.states() if used & first == first) - 1  # those played: all but the last
    joined = len(names) * states * turn_edges
    target = None if optimum_only else TARGET_SECONDS.get(backend)
    against = f" ({seconds / target:.2f} of the {target / 60:.0f} min target)" if target else ""
    solved = " and ".join(names)
    print(f"{backend}: build {build_seconds:.1f} s; {solved} solved in {seconds:.1f} s{against}, "
          f"{joined / seconds / 1e6:.2f} M joined edges/s ({joined:,} = policies x states x turn edges); "
          f"expected score {expected:.9f}, sd {sd:.6f}; peak memory of the process so far {peak_memory()}", flush=True)
    if timed_distribution is not None:
        distribution_seconds, outcomes = timed_distribution
        print(f"{backend}: the optimum's score distribution in {distribution_seconds:.1f} s "
              f"({len(outcomes):,} scores); peak memory of the process so far {peak_memory()}", flush=True)
    return seconds, scores, timed_distribution


def print_same_work(results: dict[str, tuple[float, dict[str, tuple[float, float]], object]], first: int) -> None:
    """Time :func:`numpy_both_policies` from the state ``first`` and print each backend's time against it and the
    largest differences of a policy's mean and sd (``results``: :func:`bench`'s answer by backend)."""
    started = time.perf_counter()
    both = numpy_both_policies(first)
    same_work = time.perf_counter() - started
    found = {name: (both[name][first][0], spread(*both[name][first][:2])) for name in both}
    print(f"numpy doing the SQL's work (both policies, each one's mean and second moment): {same_work:.1f} s, "
          + ", ".join(f"{name} {mean:.9f} (sd {sd:.6f})" for name, (mean, sd) in found.items()))
    for backend, (sql_seconds, scores, _) in results.items():
        means, sds = (max(abs(scores[name][i] - found[name][i]) for name in found) for i in (0, 1))
        print(f"  {backend} / numpy doing the same work: {sql_seconds / same_work:.1f}x the time; largest |difference| "
              f"of a mean {means:.2e}, of an sd {sds:.2e} (equal choices are broken apart)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backends", nargs="*", default=["sqlite"])
    parser.add_argument("--combinations", default="all", help="the combinations in play (default: all)")
    parser.add_argument("--distribution", action="store_true",
                        help="also time the optimum's score distribution, beside numpy_distribution")
    parser.add_argument("--optimum-only", action="store_true",
                        help="solve the optimum alone in SQL, the policy the numpy reference solves")
    options = parser.parse_args()
    params = {**PARAMS, "combinations": options.combinations}
    results = {backend: bench(backend, params, options.distribution, options.optimum_only)
               for backend in options.backends}
    first = rules.first_used(params)
    started = time.perf_counter()
    values = numpy_values()
    seconds = time.perf_counter() - started
    reference = values[first]
    print(f"numpy in memory (the reference): {seconds:.1f} s, expected score {reference:.9f}")
    for backend, (sql_seconds, scores, _) in results.items():
        print(f"  {backend} / numpy: {sql_seconds / seconds:.1f}x the time; "
              f"|difference| {abs(scores['optimal'][0] - reference):.2e}")
    if not options.optimum_only:  # else the reference above did the same work (the SQL's second moments besides)
        print_same_work(results, first)
    if options.distribution:
        started = time.perf_counter()
        outcomes = numpy_distribution(NumpyTurns(PARAMS["straights"], PARAMS["grades"]), values, first)
        seconds = time.perf_counter() - started
        mean, sd = mean_and_spread(outcomes)
        print(f"numpy's distribution of the optimum's score (the reference, from the values above): {seconds:.1f} s, "
              f"mean {mean:.9f}, sd {sd:.6f}")
        for backend, (_, _, (sql_seconds, found)) in results.items():
            differs = max(abs(found.get(score, 0.0) - outcomes.get(score, 0.0)) for score in {*found, *outcomes})
            print(f"  {backend} / numpy: {sql_seconds / seconds:.1f}x the time; largest |difference| of a score's "
                  f"probability {differs:.2e}")


if __name__ == "__main__":
    main()
