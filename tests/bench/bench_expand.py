"""Benchmark of the generic expander (graphs/expand.py) against a hand-streamed build (not part of the test run).

    .venv/bin/python tests/bench/bench_expand.py [--target 100] [--game jackpot:cells=12 ...]

Pig's graph two ways, each in a process of its own so that peak memory is its
own: expanded from its rules (``graphs.pig.PigRules``: the loops found, the
graph held whole) and streamed by Pig's hand-written ``build`` (the reference).
Prints each one's time to make every row, rows a second, peak memory and the
ratio, after checking that both are one graph (nodes and edges by key). Then
the time of each game named with ``--game`` built from its rules. The issue's
budget: a build no more than 20 % slower than before.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.phases import peak_mib  # noqa: E402


def rows_of(how: str, target: int) -> dict[str, float]:
    """Make Pig's rows ``how`` (``rules`` or ``hand``) in this process; return rows, seconds and peak MiB."""
    from graphs import get_game, pig
    from graphs.expand import expand

    params = {"target": target, "holds": (20,)}
    started = time.perf_counter()
    rows = expand(pig.rules(params), players=2, loops=True) if how == "rules" else get_game("pig").build(params)
    count = sum(1 for _ in rows)
    return {"rows": count, "seconds": time.perf_counter() - started, "peak_mib": peak_mib()}


def same_graph(target: int) -> bool:
    """Return whether Pig's rules expand to the graph its build streams (nodes and edges by key)."""
    from graphs import get_game, pig
    from graphs.expand import expand
    from tests.test_conformance import same_graph as canonical

    params = {"target": target, "holds": (20,)}
    return canonical(get_game("pig").build(params)) == canonical(expand(pig.rules(params), players=2, loops=True))


def game_build(spec: str) -> tuple[int, float]:
    """Return (rows, seconds) of building ``name:key=value,...`` through its registered build."""
    from graphs import get_game
    from graphs.protocol import resolve_params

    name, _, given = spec.partition(":")
    game = get_game(name)
    params = resolve_params(game, dict(item.split("=", 1) for item in given.split(",") if item))
    started = time.perf_counter()
    count = sum(1 for _ in game.build(params))
    return count, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=int, default=100)
    parser.add_argument("--game", action="append", default=[], help="e.g. jackpot:cells=12 (repeatable)")
    parser.add_argument("--measure", choices=("rules", "hand"), help=argparse.SUPPRESS)  # one side, in a child
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(rows_of(args.measure, args.target)))
        return
    print(f"Pig to {args.target}: one graph both ways: {same_graph(min(args.target, 30))} (checked at "
          f"{min(args.target, 30)})")
    measured = {}
    for how in ("hand", "rules"):
        child = subprocess.run([sys.executable, __file__, "--target", str(args.target), "--measure", how],
                               capture_output=True, text=True, check=True)
        measured[how] = json.loads(child.stdout)
        figures = measured[how]
        print(f"  {how:5}: {figures['rows']:,} rows in {figures['seconds']:.1f} s "
              f"({figures['rows'] / figures['seconds']:,.0f} rows a second), peak {figures['peak_mib']:,.0f} MiB")
    print(f"  rules / hand: {measured['rules']['seconds'] / measured['hand']['seconds']:.2f} times the time, "
          f"{measured['rules']['peak_mib'] / measured['hand']['peak_mib']:.1f} times the memory")
    for spec in args.game:
        count, seconds = game_build(spec)
        print(f"{spec}: {count:,} rows in {seconds:.2f} s")


if __name__ == "__main__":
    main()
