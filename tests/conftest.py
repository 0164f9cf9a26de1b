"""Shared fixtures: a fresh database per test; a solved Jackpot, School and Yahtzee shared per session."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from filelock import FileLock

from dicegraph.graphs import get_game
from dicegraph.store.db import open_database
from dicegraph.store.report import game_report, prepare_game


# modules long enough that, handed out last, they would keep one worker busy alone (the longest first: a run's
# --durations; the Spark cluster's about 20 min, each of the others 3 to 5 min)
STARTED_FIRST = ("test_spark.py", "test_examples.py", "test_web.py", "test_benches.py", "test_turn_outcomes.py")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Return the number of workers ``-n auto`` starts: one more than the processors this process may use, since
    one worker spends most of the run waiting on the Spark cluster's Java process (in a run of 2 workers on 2
    processors, about 1.6 of them were busy)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Hand the modules to pytest-xdist's workers (a module to a worker, in this order: ``--no-loadscope-reorder``)
    longest first: :data:`STARTED_FIRST`, then by their number of tests, as xdist itself would order them."""
    tests = Counter(item.path for item in items)
    first = {name: rank for rank, name in enumerate(STARTED_FIRST)}
    items.sort(key=lambda item: (first.get(item.path.name, len(first)), -tests[item.path]))


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """URL of a database file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture
def engine(db_url: str) -> sa.Engine:
    """A new, migrated, empty database."""
    return open_database(db_url, create=True)


@pytest.fixture(scope="session")
def jackpot_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a database holding Jackpot (9 cells) solved, with every agent evaluated."""
    url = f"sqlite:///{tmp_path_factory.mktemp('jackpot') / 'jackpot.db'}"
    game_report(open_database(url, create=True), get_game("jackpot"), {"cells": 9})
    return url


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """Return this process's own copy of the database file ``make(path)`` writes at ``path``, made once a run.

    Under pytest-xdist the first worker to need it makes it while the others wait (a file lock in the run's
    directory, which the workers share), then each copies it: two processes may not write one DuckDB file at once.
    Without xdist it is made in place.
    """
    own = tmp_path_factory.mktemp(name) / f"{name}.duckdb"
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        make(own)
        return own
    shared = tmp_path_factory.getbasetemp().parent / "made-once"  # the run's directory, above each worker's
    shared.mkdir(exist_ok=True)
    made = shared / own.name
    with FileLock(f"{made}.lock"):
        if not made.exists():
            making = shared / f"making-{own.name}"
            make(making)
            for file in shared.glob(f"{making.name}*"):  # the database and any log DuckDB left beside it
                file.rename(shared / file.name.replace(making.name, made.name))
    for file in shared.glob(f"{made.name}*"):
        if not file.name.endswith(".lock"):
            shutil.copyfile(file, own.parent / file.name)
    return own


def _prepared(game: str, params: dict[str, Any]) -> Callable[[Path], None]:
    """Return a function writing a DuckDB file at a path, holding ``game`` built and solved (:func:`prepare_game`)."""
    def make(path: Path) -> None:
        engine = open_database(f"duckdb:///{path}", create=True)
        prepare_game(engine, get_game(game), params)
        engine.dispose()  # the file closed: a command of the tests opens it as another process would

    return make


@pytest.fixture(scope="session")
def whole_game(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a DuckDB database holding School (default rules) solved: optimal and Bob over whole games.

    DuckDB solves it several times faster than SQLite (tests/bench/bench_school.py
    times both; docs/performance.md keeps the figures).
    """
    made = _prepared("school", {"straights": (15, 20), "grades": "negative"})
    return f"duckdb:///{made_once(tmp_path_factory, 'school', made)}"


@pytest.fixture(scope="session")
def yahtzee_game(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a DuckDB database holding Yahtzee without bonuses solved: its three policies over whole games."""
    return f"duckdb:///{made_once(tmp_path_factory, 'yahtzee', _prepared('yahtzee', {'bonuses': 'off'}))}"


@pytest.fixture
def runner() -> CliRunner:
    """click's test runner (stderr kept apart from stdout)."""
    return CliRunner()
