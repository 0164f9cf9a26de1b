"""Benchmark of Can't Stop (not part of the test run).

    .venv/bin/python tests/bench/bench_cant_stop.py [--empty-board]

Prints the time of a cold ``dicegraph report cant-stop`` (a new process on an
empty SQLite database: both all-triples graphs built and solved, the tables and
lists), their sizes, and the ratio against the reference it names: the
notebook's 3 minutes of CPU for one top-30 list of ``optimal`` (189 s as it
printed). Then cold ``dicegraph cant-stop advise`` on a few boards, with the
sizes of their turn graphs; ``--empty-board`` adds a turn from the empty board.
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
NOTEBOOK_SECONDS = 189.0  # "CPU times: user 3min 8s, sys: 1.71 s" for top(30, optimal)
BOARDS = [("6:>1,7:>1,8:>1", "progress"), ("6:>1,7:>1,8:>1", "claim"), ("7:3>5,8:>2,12:x", "progress"),
          ("7:3>5,8:>2,12:x", "claim")]


def run(args: list[str], url: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dicegraph.cli", "--db", url, *args, "--json"], check=True, cwd=ROOT,
                          capture_output=True, text=True)
    return time.perf_counter() - started, json.loads(done.stdout)


def graph_size(url: str, graph_id: int) -> str:
    done = subprocess.run([sys.executable, "-m", "dicegraph.cli", "--db", url, "graphs", "--json"], check=True, cwd=ROOT,
                          capture_output=True, text=True)
    row = next(g for g in json.loads(done.stdout) if g["id"] == graph_id)
    return f"{row['nodes']:,} nodes, {row['edges']:,} edges"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--empty-board", action="store_true")
    args = parser.parse_args()
    boards = BOARDS + ([("", "progress")] if args.empty_board else [])
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{Path(workdir) / 'report.db'}"
        seconds, report = run(["report", "cant-stop", "-n", "0"], url)
        sizes = "; ".join(f"{worth}: {graph_size(url, graph_id)}" for worth, graph_id in
                          (("progress", report["graph"]), ("one", report["graph"] + 1)))
        print(f"report cant-stop, all 165 triples x 2 worths, cold: {seconds:.2f} s "
              f"(the notebook: {NOTEBOOK_SECONDS:.0f} s for one list, {NOTEBOOK_SECONDS / seconds:.0f} times longer); {sizes}")
        for board, objective in boards:
            url = f"sqlite:///{Path(workdir) / f'advise-{len(board)}-{objective}.db'}"
            seconds, advice = run(["cant-stop", "advise", "--board", board, "--objective", objective], url)
            print(f"advise --board {board!r} --objective {objective}, cold: {seconds:.2f} s; turn graph "
                  f"{graph_size(url, advice['graph'])}; {advice['decision']} ({advice['value']:.6f})")


if __name__ == "__main__":
    main()
