"""Benchmark of a game paired with a target (not part of the test run): what the pairing costs and how it grows
with T.

    .venv/bin/python tests/bench/bench_paired.py [sqlite|duckdb] [--game yahtzee] [-p bonuses=off] [--targets 50,100,200]

For the game and each target T, builds and solves (``dicegraph solve``) ``GAME-at-least-T`` (``at-most`` for a
game that minimises) in an empty database of the backend, and prints the build's and the solve's seconds, the paired graph's nodes and
edges beside the game's own (built first, in the same run), the growth (paired edges / game edges), the best
chance of reaching T, and the peak memory. For Yahtzee without bonuses and School with positive grades, the
in-memory numpy solver of the same equations (:func:`tests.yahtzee_numpy.reach_chances`,
:func:`tests.school_numpy.reach_chances`) runs beside each target: its time, the SQL solve's ratio to
it and the difference of the best chances.

    .venv/bin/python tests/bench/bench_paired.py duckdb --game yahtzee -p bonuses=off --targets 100,150,200
    .venv/bin/python tests/bench/bench_paired.py duckdb --game school -p grades=positive --targets 10,20
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import dicegraph  # noqa: E402
from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.paired import paired_name  # noqa: E402
from tests.bench.phases import bench_database, peak_memory  # noqa: E402


def built_and_solved(url: str, name: str, params: dict[str, str]) -> tuple[float, float, dict, float]:
    """Return the build's and the solve's seconds of ``name`` into ``url`` (``dicegraph solve``: the optimum, with
    the policies a turn stored once declares beside it), the build's figures and the optimum's value. The build is
    forced past the size a build stops at unless forced (Yahtzee at T = 200 has 60.5 million edges)."""
    database = dicegraph.open(url)
    started = time.perf_counter()
    built = database.build(name, params, force=True)
    building = time.perf_counter() - started
    solved = database.solve(name, params)
    solving = time.perf_counter() - started - building
    return building, solving, built, solved["value"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backend", nargs="?", default="duckdb", choices=["sqlite", "duckdb"])
    parser.add_argument("--game", default="yahtzee")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--targets", default="100,200", help="the targets T, comma-separated")
    args = parser.parse_args()
    params = dict(part.split("=", 1) for part in args.param)
    test = ">=" if get_game(args.game).objective == "max" else "<="
    with bench_database(args.backend) as url:
        building, solving, built, optimal = built_and_solved(url, args.game, params)
    print(f"{args.game} {params} on {args.backend}: build {building:.1f} s, solve {solving:.1f} s, "
          f"{built['nodes']:,} nodes, {built['edges']:,} edges; optimal {optimal:.10f}", flush=True)
    for target in (int(text) for text in args.targets.split(",")):
        name = paired_name(args.game, test, target)
        with bench_database(args.backend) as url:
            paired_building, paired_solving, paired_built, chance = built_and_solved(url, name, params)
        print(f"{name}: build {paired_building:.1f} s, solve {paired_solving:.1f} s, {paired_built['nodes']:,} "
              f"nodes, {paired_built['edges']:,} edges ({paired_built['edges'] / built['edges']:.1f} times the "
              f"game's); best chance {chance:.10f}; peak {peak_memory()}", flush=True)
        solver = numpy_solver(args.game, params)
        if solver is not None:
            numpy_reference(solver, target, paired_solving, chance)


def numpy_solver(name: str, params: dict[str, str]) -> Callable[[int], float] | None:
    """Return the numpy solver of the game's paired equations, the best chance of reaching a target from the
    game's start, where one is written (Yahtzee without bonuses, School with positive grades); else None."""
    if name == "yahtzee" and params.get("bonuses") == "off" and params.get("rules", "yahtzee") == "yahtzee":
        from dicegraph.graphs.yahtzee.boxes import sheet_of
        from tests.yahtzee_numpy import reach_chances

        filled = sheet_of(params).first_filled
        return lambda target: float(reach_chances(target, filled)[filled, target])
    if name == "school" and params.get("grades") == "positive":
        from dicegraph.graphs.protocol import resolve_params
        from dicegraph.graphs.school.game import first_used
        from tests.school_numpy import reach_chances as school_chances

        values = resolve_params(get_game(name), params)
        used = first_used(values)
        return lambda target: float(school_chances(target, values["straights"], used)[used, target])
    return None


def numpy_reference(solver: Callable[[int], float], target: int, sql_seconds: float, chance: float) -> None:
    """Time the numpy solver of the game's paired equations for ``target``; print it beside the SQL solve."""
    started = time.perf_counter()
    reference = solver(target)
    seconds = time.perf_counter() - started
    print(f"  numpy in memory (the reference): {seconds:.2f} s, best chance {reference:.10f}; the SQL solve "
          f"{sql_seconds / seconds:.1f}x its time; |difference| {abs(chance - reference):.1e}", flush=True)


if __name__ == "__main__":
    main()
