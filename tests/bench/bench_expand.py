"""Benchmark of games built from their rules (graphs/expand.py) against the hand-written builds they replaced
(not part of the test run).

    .venv/bin/python tests/bench/bench_expand.py [--runs 3] [GAME[:key=value,...] ...]

Each game named (default: Pig to 100, the race to 5000, Can't Stop's 165
triples, a turn on a board, School, Yahtzee with the upper bonus) is built into an empty SQLite database two ways,
each in a process of its own so that peak memory is its own: from its rules
(today's registered game) and by the hand-written ``build`` that streamed its
rows before it was written at the rules level (its module at revision
:data:`HAND_WRITTEN`, read from git: the reference). The two ways alternate
``--runs`` times. Prints each build's time, edges a second and peak memory,
the ratio of the means, and whether both ways make one graph (nodes and
edges by key, checked on small parameters). The budget of issue 37: a build
no more than 20 % slower than before.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.phases import peak_mib  # noqa: E402

HAND_WRITTEN = "428633e"  # the last revision whose games below stream their rows by hand
# the game's module at that revision, after the modules of that revision it imports that have changed since
MODULES = {"pig": ["graphs/pig.py"], "5000-race": ["graphs/five_thousand_race/game.py"],
           "cant-stop": ["graphs/cant_stop/game.py"], "cant-stop-board": ["graphs/cant_stop_board/game.py"],
           "school": ["graphs/five_dice.py", "graphs/school/game.py"],
           "yahtzee": ["graphs/five_dice.py", "graphs/yahtzee/game.py"]}
DEFAULTS = ["pig:target=100", "5000-race:target=5000", "cant-stop", "cant-stop-board:board=7:3>5,8:>2,12:x", "school",
            "yahtzee:bonuses=upper"]


def _at_hand_written(path: str) -> str:
    """Return the text of ``path`` at :data:`HAND_WRITTEN`."""
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{HAND_WRITTEN}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def hand_written(name: str) -> types.ModuleType:
    """Return the module of game ``name`` as it was at :data:`HAND_WRITTEN`, loaded as a module of its own (the
    modules it imports that changed since are loaded from that revision too, under their own names, so call it
    in a process that builds nothing else)."""
    import dicegraph.graphs.protocol

    if not hasattr(dicegraph.graphs.protocol, "NodeIds"):  # the helpers hand-written builds used, defined over today's rows
        source = _at_hand_written("graphs/protocol.py")
        exec(source[source.index("class NodeIds(dict):"):], dicegraph.graphs.protocol.__dict__)  # noqa: S102
    for path in MODULES[name]:  # its imports under today's names (the games were top-level ``graphs`` then)
        source = re.sub(r"^(from|import) (graphs|store)\b", r"\1 dicegraph.\2", _at_hand_written(path), flags=re.M)
        module = types.ModuleType("dicegraph." + path.removesuffix(".py").replace("/", "."))
        sys.modules[module.__name__] = module  # dataclasses look their module up; the next module imports it
        exec(compile(source, f"{HAND_WRITTEN}:{path}", "exec"), module.__dict__)  # noqa: S102 (our own history)
    return module


def game_and_params(spec: str, how: str) -> tuple[Any, dict[str, Any]]:
    """Return the registered game of ``name:key=value,...`` (its build the hand-written one when ``how`` is
    ``hand``) and its resolved parameters."""
    from dicegraph.graphs import get_game
    from dicegraph.graphs.protocol import resolve_params

    name, _, given = spec.partition(":")
    game = get_game(name)
    params = resolve_params(game, dict(item.split("=", 1) for item in re.split(r",(?=\w+=)", given) if item))
    return (game if how == "rules" else dataclasses.replace(game, build=hand_written(name).build)), params


def build_into_sqlite(spec: str, how: str) -> dict[str, float]:
    """Build ``spec`` ``how`` (``rules`` or ``hand``) into an empty SQLite file in this process; return edges,
    seconds and peak MiB."""
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph

    game, params = game_and_params(spec, how)
    with tempfile.TemporaryDirectory() as folder:
        engine = open_database(f"sqlite:///{folder}/game.db", create=True)
        started = time.perf_counter()
        built = build_graph(engine, game, params)
        seconds = time.perf_counter() - started
        engine.dispose()
    return {"edges": built.edges, "seconds": seconds, "peak_mib": peak_mib()}


def same_graph(name: str) -> bool:
    """Return whether both ways make one graph of ``name`` on its small parameters (nodes and edges by key); in a
    process of its own (:func:`hand_written`)."""
    from dicegraph.graphs import get_game
    from tests.test_conformance import same_graph as canonical

    game = get_game(name)
    small = f"{name}:" + ",".join(f"{key}={','.join(map(str, value)) if isinstance(value, tuple) else value}"
                                  for key, value in (game.small_params or {}).items())
    (rules, params) = game_and_params(small, "rules")
    expanded = canonical(rules.build(params))
    hand, _ = game_and_params(small, "hand")
    return canonical(hand.build(params)) == expanded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=DEFAULTS, help="e.g. pig:target=100 (default: the four games)")
    parser.add_argument("--runs", type=int, default=3, help="builds each way, alternating (default 3)")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)  # one build, in a child: SPEC HOW
    parser.add_argument("--same", help=argparse.SUPPRESS)  # the check of one graph both ways, in a child: NAME
    args = parser.parse_args()
    if args.same:
        print(same_graph(args.same))
        return
    if args.measure:
        print(json.dumps(build_into_sqlite(*args.measure)))
        return
    for spec in args.games:
        name = spec.partition(":")[0]
        same = subprocess.run([sys.executable, __file__, "--same", name], capture_output=True, text=True, check=True)
        print(f"{spec}, built into SQLite; one graph both ways on its small parameters: {same.stdout.strip()}")
        measured: dict[str, list[dict[str, float]]] = {"hand": [], "rules": []}
        for _ in range(args.runs):
            for how in ("hand", "rules"):
                child = subprocess.run([sys.executable, __file__, "--measure", spec, how], capture_output=True,
                                       text=True, check=True)
                measured[how].append(json.loads(child.stdout))
        for how, runs in measured.items():
            label = f"hand-written ({HAND_WRITTEN})" if how == "hand" else "from its rules"
            times = ", ".join(f"{run['seconds']:.1f}" for run in runs)
            print(f"  {label:24}: {runs[0]['edges']:,} edges in {times} s (mean "
                  f"{statistics.mean(run['seconds'] for run in runs):.1f} s, "
                  f"{runs[0]['edges'] / statistics.mean(run['seconds'] for run in runs):,.0f} edges a second), "
                  f"peak {max(run['peak_mib'] for run in runs):,.0f} MiB")
        ratio = statistics.mean(r["seconds"] for r in measured["rules"]) / statistics.mean(r["seconds"] for r in measured["hand"])
        memory = max(r["peak_mib"] for r in measured["rules"]) / max(r["peak_mib"] for r in measured["hand"])
        print(f"  rules / hand-written: {ratio:.2f} times the time, {memory:.1f} times the memory")


if __name__ == "__main__":
    main()
