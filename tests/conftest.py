"""Shared fixtures: a fresh database per test; a solved Jackpot, School and Yahtzee shared per session."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from graphs import get_game
from store.db import open_database
from store.report import game_report, prepare_game


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


@pytest.fixture(scope="session")
def whole_game(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a DuckDB database holding School (default rules) solved: optimal and Bob over whole games.

    DuckDB runs the same statements as SQLite in under half the time (about 5
    minutes here for both policies; tests/bench/bench_school.py times SQLite).
    """
    url = f"duckdb:///{tmp_path_factory.mktemp('school') / 'school.duckdb'}"
    engine = open_database(url, create=True)
    prepare_game(engine, get_game("school"), {"straights": (15, 20), "grades": "negative"})
    engine.dispose()  # the file closed: a command of the tests opens it as another process would
    return url


@pytest.fixture(scope="session")
def yahtzee_game(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a DuckDB database holding Yahtzee without bonuses solved: its three policies over whole games."""
    url = f"duckdb:///{tmp_path_factory.mktemp('yahtzee') / 'yahtzee.duckdb'}"
    engine = open_database(url, create=True)
    prepare_game(engine, get_game("yahtzee"), {"bonuses": "off"})
    engine.dispose()
    return url


@pytest.fixture
def runner() -> CliRunner:
    """click's test runner (stderr kept apart from stdout)."""
    return CliRunner()
