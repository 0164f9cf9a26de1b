"""The benchmarks under tests/bench/ (outside the test run) still run: each imports, and each that can runs whole
on its smallest size, so that a name the code no longer has, a module moved or a command renamed fails here, not
the next time someone measures (bench_pig.py imported head_to_head from where it had left; bench_expand.py read
its hand-written builds under the old top-level names)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT

BENCHES = sorted(path.stem for path in (Path(__file__).resolve().parent / "bench").glob("*.py"))
SMALLEST = {  # a benchmark -> its arguments on its smallest size (one backend, a run, a game of a few layers)
    "bench_backends": ["--width", "200"],
    "bench_bear_off": ["sqlite", "--points", "3", "--checkers", "3"],
    "bench_best_response": ["sqlite", "--target", "10", "--hold", "4"],
    "bench_cant_stop": ["--columns", "6,7,8", "--boards", "1"],
    "bench_expand": ["pig:target=10", "--runs", "1"],
    "bench_five_thousand": ["--games", "0"],
    "bench_foundation": ["--width", "200"],
    "bench_paired": ["sqlite", "-p", "bonuses=off", "-p", "boxes=Fives,Sixes,Chance", "--targets", "20"],
    "bench_pig": ["sqlite", "--target", "10"],
    "bench_play": ["--games", "1", "jackpot"],
    "bench_race": ["--targets", "100", "sqlite"],
    "bench_report": ["jackpot", "cells=4"],
    "bench_school": ["sqlite", "--combinations", "Grade 5,Grade 6,Pair,Full,Trash", "--distribution"],
    "bench_shut_the_box": ["--tiles", "4"],
    "bench_simulate_export": ["--games", "1000", "--cells", "5"],
    "bench_start": ["--runs", "1"],
    "bench_targets": ["sqlite", "--game", "shut-the-box"],
    "bench_web": ["--games", "jackpot,cant-stop-board", "--pages", "5", "--clients", "2", "--seconds", "1"],
    "bench_yahtzee": ["sqlite", "--bonuses", "off", "--boxes", "Fives,Sixes,Chance"],
}
ALSO_RUN = {  # a benchmark -> its arguments for a second path on its smallest size
    "bench_school": [*SMALLEST["bench_school"], "--optimum-only"],
}
IMPORTED_ONLY = {  # a benchmark that has no small size yet -> why (it is still imported below)
    "bench_spark": "it needs a Spark cluster: tests/test_spark.py starts one for its own tests",
    "phases": "the benchmarks' shared timing helpers, no benchmark",
}


@pytest.mark.parametrize("name", BENCHES)
def test_the_benchmark_imports(name: str) -> None:
    module = importlib.import_module(f"tests.bench.{name}")
    assert name == "phases" or callable(getattr(module, "main", None)), f"{name} has no main()"


def test_every_benchmark_is_run_or_says_why_not() -> None:
    assert sorted([*SMALLEST, *IMPORTED_ONLY]) == BENCHES


RUNS = [pytest.param(name, arguments, id=name) for name, arguments in sorted(SMALLEST.items())] + [
    pytest.param(name, arguments, id=f"{name}-{arguments[-1].lstrip('-')}") for name, arguments in ALSO_RUN.items()]


@pytest.mark.parametrize(("name", "arguments"), RUNS)
def test_the_benchmark_runs_on_its_smallest_size(name: str, arguments: list[str]) -> None:
    """The benchmark, as a person runs it (its own process, from the repository), on :data:`SMALLEST`'s
    arguments (and :data:`ALSO_RUN`'s): it exits 0 having printed its figures."""
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "bench" / f"{name}.py"), *arguments],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(done.stdout.strip().splitlines()) >= 1, done.stdout
