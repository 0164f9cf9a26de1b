"""Benchmark of how fast the commands start (not part of the test run).

    .venv/bin/python tests/bench/bench_start.py [--runs 7]

Each command runs ``--runs`` times as a new process, as a user's shell starts it; prints the median wall and CPU
time of each, and the ratio against the reference named here: a bare Python start (``python -c pass``) in the same
run. The commands: ``--help``, ``--version``, ``games``, ``report --help`` and, cold, ``report jackpot -n 0`` in a
new SQLite database each run. The machine's load average is printed beside them (these machines differ by a factor
of two or three from one day to the next).

The commands run with their modules' bytecode cached, as an installed package starts (pip compiles it as it
installs): a first, untimed run of each writes it to a folder of the benchmark's own (``PYTHONPYCACHEPREFIX``),
whatever ``PYTHONDONTWRITEBYTECODE`` says. Where that variable is set (these machines' sessions set it) and the
checkout has never been run without it, every command compiles dicegraph's modules from their source at each
start: about 0.14 s more for ``--help`` here (2026-12-03: 0.27 to 0.32 s instead of 0.15 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CLI = ["-c", "from dicegraph.cli import run; run()"]  # what the installed dicegraph script runs
COMMANDS = {  # name -> arguments after the interpreter ({db}: a new SQLite database)
    "python -c pass": ["-c", "pass"],
    "dicegraph --help": [*CLI, "--help"],
    "dicegraph --version": [*CLI, "--version"],
    "dicegraph games": [*CLI, "games"],
    "dicegraph report --help": [*CLI, "report", "--help"],
    "dicegraph report jackpot -n 0 (cold)": [*CLI, "--db", "{db}", "report", "jackpot", "-n", "0"],
}


def timed(args: list[str], folder: Path, run: int) -> tuple[float, float]:
    """Return the wall and CPU seconds of one run of the interpreter with ``args``, its bytecode written to and
    read from ``folder``'s ``pycache``."""
    filled = [arg.replace("{db}", f"sqlite:///{folder / f'start-{run}.db'}") for arg in args]
    cached = {**{name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
              "PYTHONPYCACHEPREFIX": str(folder / "pycache")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, *filled], check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=cached)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    """Time every command of :data:`COMMANDS` and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (the median is printed)")
    runs = parser.parse_args().runs
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} processors, {runs} runs each (medians)")
    with tempfile.TemporaryDirectory() as folder:
        bare = None
        for name, args in COMMANDS.items():
            timed(args, Path(folder), -1)  # writes the bytecode
            walls, cpus = zip(*(timed(args, Path(folder), run) for run in range(runs)))
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            bare = bare or wall
            print(f"{name:40s} {wall:6.3f} s wall  {cpu:6.3f} s CPU  {wall / bare:5.1f} x a bare Python start")


if __name__ == "__main__":
    main()
