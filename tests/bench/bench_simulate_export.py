"""Benchmark of Monte Carlo and diagram export (not part of the test run).

    .venv/bin/python tests/bench/bench_simulate_export.py [--games 1000000] [--cells 9]

Prints:

- the time to simulate ``--games`` Jackpot games (``--cells``, 9 by default) with
  HiLo (numpy, one core), games per second, and the ratio against the reference
  named here: the same games (at most 100,000) played one by one in plain Python
  with the same rules and agent;
- the time to export the full HiLo policy view (of 9 cells: 512 positions,
  2,304 edges) to PNG through Graphviz's ``dot`` and through the pure-Python
  route, in process (SQL + DOT + drawing) and as a new ``dicegraph export``
  process;
- the peak memory of this process.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, as the issue asks
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.jackpot import AGENTS, ROLLS, cell_bit, offered_cells  # noqa: E402
from dicegraph.graphs.montecarlo import simulate  # noqa: E402
from dicegraph.store.catalog import resolve_graph  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.diagram import Diagram, draw_diagram  # noqa: E402
from dicegraph.store.render import available_renderers  # noqa: E402
from dicegraph.store.report import game_report  # noqa: E402
from tests.bench.phases import peak_mib  # noqa: E402

JACKPOT = get_game("jackpot")
REFERENCE_GAMES = 100_000  # the most games the plain Python reference plays


def plain_python_games(games: int, seed: int, cells: int) -> float:
    """The reference: HiLo games one at a time in plain Python; returns the win rate."""
    rng = random.Random(seed)
    full, wins = (1 << cells) - 1, 0
    for _ in range(games):
        up = 0
        while up != full:
            choices = offered_cells(ROLLS[rng.randrange(36)], up, cells)
            if not choices:
                break
            up |= cell_bit(AGENTS["hilo"](choices, cells))
        wins += up == full
    return wins / games


def bench_simulation(games: int, cells: int) -> None:
    started = time.perf_counter()
    estimate = simulate(JACKPOT, {"cells": cells}, "hilo", games, seed=1)
    seconds = time.perf_counter() - started
    reference_games = min(games, REFERENCE_GAMES)
    started = time.perf_counter()
    plain_python_games(reference_games, seed=1, cells=cells)
    reference_rate = reference_games / (time.perf_counter() - started)
    print(f"simulate: {games:,} HiLo games in {seconds:.3f} s = {games / seconds:,.0f} games/s "
          f"(estimate {estimate.mean:.5f} +- {estimate.stderr:.5f})")
    print(f"  reference, plain Python one game at a time: {reference_rate:,.0f} games/s; "
          f"numpy is {games / seconds / reference_rate:.0f} times faster")


def bench_export(workdir: Path, cells: int) -> None:
    url = f"sqlite:///{workdir / 'bench.db'}"
    engine = open_database(url, create=True)
    game_report(engine, JACKPOT, {"cells": cells})
    present = available_renderers()
    for renderer in ("dot", "python"):
        if renderer not in present:
            print(f"export: the {renderer!r} renderer is not installed; skipped")
            continue
        path = workdir / f"hilo-{renderer}.png"
        started = time.perf_counter()
        with engine.connect() as connection:
            row = resolve_graph(connection, "jackpot")
            drawn = draw_diagram(connection, row, Diagram(policy="hilo", layers=True), path, max_nodes=None,
                                 renderer=renderer)
        in_process = time.perf_counter() - started
        command = [sys.executable, "-m", "dicegraph.cli", "--db", url, "export", "jackpot", "-p", f"cells={cells}",
                   "--policy", "hilo", "--layers", "--renderer", renderer, "-o", str(path)]
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=ROOT, capture_output=True)
        cold = time.perf_counter() - started
        print(f"export ({renderer}): {drawn['nodes']} positions, {drawn['edges']:,} edges, {path.stat().st_size:,} "
              f"bytes; in process {in_process:.2f} s (drawing {drawn['seconds']:.2f} s), new process {cold:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--cells", type=int, default=9, help="Jackpot's cells (9: the figures of the docs)")
    args = parser.parse_args()
    bench_simulation(args.games, args.cells)
    with tempfile.TemporaryDirectory() as workdir:
        bench_export(Path(workdir), args.cells)
    print(f"peak memory of this process: {peak_mib():.0f} MiB")


if __name__ == "__main__":
    main()
