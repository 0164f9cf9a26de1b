"""Benchmark of Can't Stop (not part of the test run).

    .venv/bin/python tests/bench/bench_cant_stop.py [--empty-board] [--columns 6,7,8] [--boards N]

Prints the time of a cold ``dicegraph report cant-stop`` (a new process on an
empty SQLite database: both all-triples graphs built and solved, the tables and
lists), their sizes, and the ratio against the reference it names: the
notebook's 3 minutes of CPU for one top-30 list of ``optimal`` (189 s as it
printed). Then cold ``dicegraph cant-stop advise`` on a few boards, with the
sizes of their turn graphs; ``--empty-board`` adds a turn from the empty board. ``--columns`` reports the
triples of those columns alone, and ``--boards`` advises on the first N boards (a quick run: the test run's).
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
    parser.add_argument("--columns", help="report the triples of these columns alone (default: all eleven)")
    parser.add_argument("--boards", type=int, default=len(BOARDS), help="advise on the first N boards")
    args = parser.parse_args()
    boards = BOARDS[:args.boards] + ([("", "progress")] if args.empty_board else [])
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{Path(workdir) / 'report.db'}"
        columns = ["-p", f"columns={args.columns}"] if args.columns else []
        seconds, report = run(["report", "cant-stop", *columns, "-n", "0"], url)
        sizes = "; ".join(f"{worth}: {graph_size(url, graph_id)}" for worth, graph_id in
                          (("progress", report["graph"]), ("one", report["graph"] + 1)))
        against = (f"the triples of columns {args.columns} x 2 worths, cold: {seconds:.2f} s" if args.columns else
                   f"all 165 triples x 2 worths, cold: {seconds:.2f} s (the notebook: {NOTEBOOK_SECONDS:.0f} s for one "
                   f"list, {NOTEBOOK_SECONDS / seconds:.0f} times longer)")
        print(f"report cant-stop, {against}; {sizes}")
        for board, objective in boards:
            url = f"sqlite:///{Path(workdir) / f'advise-{len(board)}-{objective}.db'}"
            seconds, advice = run(["cant-stop", "advise", "--board", board, "--objective", objective], url)
            print(f"advise --board {board!r} --objective {objective}, cold: {seconds:.2f} s; turn graph "
                  f"{graph_size(url, advice['graph'])}; {advice['decision']} ({advice['value']:.6f})")


if __name__ == "__main__":
    main()
