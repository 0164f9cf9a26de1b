"""Benchmark of the 5000 report (not part of the test run).

    .venv/bin/python tests/bench/bench_five_thousand.py [--games N]

Runs ``dicegraph report 5000`` cold (a new process on an empty SQLite database:
build, solve optimal, evaluate the six threshold agents, simulate 100,000 turns
of each policy, the analyses) and prints the time against the issue's 10 s,
and the graph's size. ``--games`` simulates N turns of each policy instead
(``report -n``; 0 for none: the test run's quick run).
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
TARGET_SECONDS = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, help="turns simulated for each policy (report -n; default: report's)")
    args = parser.parse_args()
    simulated = [] if args.games is None else ["-n", str(args.games)]
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{Path(workdir) / 'five.db'}"
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dicegraph.cli", "--db", url, "report", "5000", *simulated, "--json"],
                              check=True, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    report = json.loads(done.stdout)
    size = report["graph_size"]
    print(f"report 5000, cold: {seconds:.2f} s ({seconds / TARGET_SECONDS:.2f} of the 10 s target); graph "
          f"{size['nodes']:,} nodes, {size['edges']:,} edges, {size['layers']} layers")


if __name__ == "__main__":
    main()
