"""Benchmark of games built from their rules (graphs/expand.py) against the hand-written builds they replaced
(not part of the test run).

    .venv/bin/python tests/bench/bench_expand.py [--target 100] [--game jackpot:cells=12 ...]

Pig's graph built into an empty SQLite database two ways, each in a process
of its own so that peak memory is its own: from its rules (today's
``pig`` game) and by the hand-written ``build`` that streamed its rows
before it was written at the rules level (``graphs/pig.py`` at revision
:data:`HAND_WRITTEN`, read from git: the reference). Prints each one's
time, edges a second, peak memory and the ratio, after checking that both
make one graph (nodes and edges by key). Then the time to make the rows of
each game named with ``--game``. The budget of issue 37: a build no more
than 20 % slower than before.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.phases import peak_mib  # noqa: E402

HAND_WRITTEN = "428633e"  # the last revision whose graphs/pig.py streams Pig's rows by hand


def hand_written_pig() -> types.ModuleType:
    """Return ``graphs/pig.py`` as it was at :data:`HAND_WRITTEN`, loaded as a module of its own."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{HAND_WRITTEN}:graphs/pig.py"], capture_output=True,
                            text=True, check=True).stdout
    module = types.ModuleType("hand_written_pig")
    exec(compile(source, f"{HAND_WRITTEN}:graphs/pig.py", "exec"), module.__dict__)  # noqa: S102 (our own history)
    return module


def pig_game(how: str):  # noqa: ANN201 (a GameSpec)
    """Return the registered Pig game, with its build replaced by the hand-written one when ``how`` is ``hand``."""
    from graphs import get_game

    game = get_game("pig")
    return game if how == "rules" else dataclasses.replace(game, build=hand_written_pig().build)


def build_into_sqlite(how: str, target: int) -> dict[str, float]:
    """Build Pig ``how`` (``rules`` or ``hand``) into an empty SQLite file in this process; return edges,
    seconds and peak MiB."""
    from store.db import open_database
    from store.load import build_graph

    with tempfile.TemporaryDirectory() as folder:
        engine = open_database(f"sqlite:///{folder}/pig.db", create=True)
        started = time.perf_counter()
        built = build_graph(engine, pig_game(how), {"target": target, "holds": (20,)})
        seconds = time.perf_counter() - started
        engine.dispose()
    return {"edges": built.edges, "seconds": seconds, "peak_mib": peak_mib()}


def same_graph(target: int) -> bool:
    """Return whether both ways make one graph for Pig to ``target`` (nodes and edges by key)."""
    from tests.test_conformance import same_graph as canonical

    params = {"target": target, "holds": (20,)}
    return canonical(pig_game("hand").build(params)) == canonical(pig_game("rules").build(params))


def game_rows(spec: str) -> tuple[int, float]:
    """Return (rows, seconds) of making the rows of ``name:key=value,...`` through its registered build."""
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
        print(json.dumps(build_into_sqlite(args.measure, args.target)))
        return
    checked = min(args.target, 30)
    print(f"Pig to {args.target}, built into SQLite: one graph both ways: {same_graph(checked)} (checked at {checked})")
    measured = {}
    for how in ("hand", "rules"):
        child = subprocess.run([sys.executable, __file__, "--target", str(args.target), "--measure", how],
                               capture_output=True, text=True, check=True)
        measured[how] = figures = json.loads(child.stdout)
        label = f"hand-written ({HAND_WRITTEN})" if how == "hand" else "from its rules"
        print(f"  {label:24}: {figures['edges']:,} edges in {figures['seconds']:.1f} s "
              f"({figures['edges'] / figures['seconds']:,.0f} edges a second), peak {figures['peak_mib']:,.0f} MiB")
    print(f"  rules / hand-written: {measured['rules']['seconds'] / measured['hand']['seconds']:.2f} times the time, "
          f"{measured['rules']['peak_mib'] / measured['hand']['peak_mib']:.1f} times the memory")
    for spec in args.game:
        count, seconds = game_rows(spec)
        print(f"{spec}: {count:,} rows in {seconds:.2f} s")


if __name__ == "__main__":
    main()
