"""Benchmark of a whole report, cold, part by part (not part of the test run).

    .venv/bin/python tests/bench/bench_report.py [--backend sqlite|duckdb] [--all-matches] [--statements N] GAME [NAME=VALUE ...]

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
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

import dicegraph  # noqa: E402
from tests.bench.phases import peak_mib  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("params", nargs="*", help="NAME=VALUE, e.g. target=1000")
    parser.add_argument("--backend", choices=("sqlite", "duckdb"), default="sqlite")
    parser.add_argument("--all-matches", action="store_true")
    parser.add_argument("--statements", type=int, default=0, metavar="N",
                        help="also print the N costliest kinds of statement (their first words: what they write)")
    args = parser.parse_args()
    statements = _StatementClock()
    if args.statements:
        statements.listen()
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
    if args.statements:
        print(f"statements: {sum(statements.count.values()):,}; the costliest:")
        for kind, seconds in statements.spent.most_common(args.statements):
            print(f"  {seconds:8.1f} s  {statements.count[kind]:6,}  {kind}")


class _StatementClock:
    """The time and number of the statements every engine runs, by kind: a statement's first words up to the
    columns it names (``INSERT INTO tcy_turn``, ``SELECT edge.src``)."""

    def __init__(self) -> None:
        self.spent: Counter[str] = Counter()
        self.count: Counter[str] = Counter()

    def listen(self) -> None:
        """Time every statement from now on."""
        sa.event.listen(sa.engine.Engine, "before_cursor_execute", self._started)
        sa.event.listen(sa.engine.Engine, "after_cursor_execute", self._finished)

    def _started(self, conn, cursor, statement, *rest) -> None:  # noqa: ANN001
        conn.info["statement_started"] = time.perf_counter()

    def _finished(self, conn, cursor, statement, *rest) -> None:  # noqa: ANN001
        kind = " ".join(statement.split()[:3]).split("(")[0]
        self.spent[kind] += time.perf_counter() - conn.info["statement_started"]
        self.count[kind] += 1


if __name__ == "__main__":
    main()
