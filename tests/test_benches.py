"""The benchmarks under tests/bench/ (outside the test run) still import: a name they use that the code no longer
has fails here, not the next time someone measures (bench_pig.py imported head_to_head from where it had left)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCHES = sorted(path.stem for path in (Path(__file__).resolve().parent / "bench").glob("*.py"))


@pytest.mark.parametrize("name", BENCHES)
def test_the_benchmark_imports(name: str) -> None:
    module = importlib.import_module(f"tests.bench.{name}")
    assert name == "phases" or callable(getattr(module, "main", None)), f"{name} has no main()"
