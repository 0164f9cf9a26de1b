"""Benchmark of a whole report, cold, part by part (not part of the test run).

    .venv/bin/python tests/bench/bench_report.py [--backend sqlite|duckdb] [--all-matches] GAME [NAME=VALUE ...]

Runs ``dicegraph report GAME -n 0`` through the Python API into an empty database of the backend (SQLite by
default) and prints how long each part took, as the report's progress names them (building, solving,
playing the matches, ...): the time from the part's start to its last step (parts the report opens
together start together), with the steps each counted, the whole time and the peak memory. The issue's
targets for ``5000-race`` at its own target, 5000: under 15 minutes on DuckDB and under an hour on SQLite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import dicegraph  # noqa: E402
from tests.bench.phases import peak_mib  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("params", nargs="*", help="NAME=VALUE, e.g. target=1000")
    parser.add_argument("--backend", choices=("sqlite", "duckdb"), default="sqlite")
    parser.add_argument("--all-matches", action="store_true")
    args = parser.parse_args()
    parts: list[tuple[str, float, int]] = []

    @contextmanager
    def meter(label: str, length: int | None) -> Iterator[Any]:
        started = time.perf_counter()
        counted, last = [0], [started]

        def advance(steps: int) -> None:
            counted[0] += steps
            last[0] = time.perf_counter()

        try:
            yield advance
        finally:
            parts.append((label, last[0] - started, counted[0]))

    params = dict(pair.split("=", 1) for pair in args.params)
    with tempfile.TemporaryDirectory() as folder:
        suffix = "duckdb" if args.backend == "duckdb" else "db"
        db = dicegraph.open(f"{args.backend}:///{folder}/report.{suffix}", meter=meter)
        started = time.perf_counter()
        db.report(args.game, params, all_matches=args.all_matches)
        total = time.perf_counter() - started
    print(f"report {args.game} {' '.join(args.params)} -n 0{' --all-matches' if args.all_matches else ''} "
          f"on {args.backend}, cold: {total:.1f} s, peak {peak_mib():,.0f} MiB")
    for label, seconds, steps in parts:
        if steps:
            print(f"  {label:<45} {seconds:8.1f} s  ({steps:,} steps)")


if __name__ == "__main__":
    main()
