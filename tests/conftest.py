"""Shared fixtures: a fresh database per test, a solved Jackpot shared per session."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from graphs import get_game
from store.db import open_database
from store.report import game_report


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


@pytest.fixture
def runner() -> CliRunner:
    """click's test runner (stderr kept apart from stdout)."""
    return CliRunner()
