"""Benchmark of the Shut The Box report (not part of the test run).

    .venv/bin/python tests/bench/bench_shut_the_box.py [--tiles 9,12]

Runs ``dicegraph report shut-the-box`` cold (a new process on an empty SQLite
database: build, solve optimal and optimal-shut, evaluate greedy, simulate
100,000 games of each policy, the two-player sweep, the day) for 9 tiles and
for 12 (``--tiles``), and prints the time, the graph's size and the edges per second of the
whole report. The reference it names: the issue's 5 s for 9 tiles.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_SECONDS = 5.0


def cold_report(tiles: int, workdir: Path) -> tuple[float, dict]:
    url = f"sqlite:///{workdir / f'stb{tiles}.db'}"
    command = [sys.executable, "-m", "dicegraph.cli", "--db", url, "report", "shut-the-box", "-p", f"tiles={tiles}", "--json"]
    started = time.perf_counter()
    done = subprocess.run(command, check=True, cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - started, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tiles", default="9,12", help="the boards, comma-separated (default: 9,12)")
    boards = [int(tiles) for tiles in parser.parse_args().tiles.split(",")]
    with tempfile.TemporaryDirectory() as workdir:
        for tiles in boards:
            seconds, report = cold_report(tiles, Path(workdir))
            size = report["graph_size"]
            print(f"{tiles} tiles: cold report {seconds:.2f} s ({seconds / TARGET_SECONDS:.2f} of the 5 s target); "
                  f"graph {size['nodes']:,} nodes, {size['edges']:,} edges, {size['layers']} layers "
                  f"({size['edges'] / seconds:,.0f} edges/s over the whole report); "
                  f"optimal expects {report['expected_score']['optimal']:.6f}, "
                  f"greedy exceptions {report['greedy_exceptions']['count']}")


if __name__ == "__main__":
    main()
