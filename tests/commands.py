"""Running dicegraph's commands in the tests' own process, and what a refused command must look like."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from dicegraph.cli import main
from dicegraph.store.db import open_database

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"  # never ends


def run(db: str, *args: str) -> Result:
    """Return the result of ``dicegraph --db DB ARGS`` run through click's runner (stderr kept apart)."""
    return CliRunner().invoke(main, ["--db", db, *args])


@contextmanager
def engine_on(url: str, **options: Any) -> Iterator[sa.Engine]:
    """Yield an engine on ``url`` (``open_database``'s options), disposed of afterwards: a DuckDB file a test left
    open for writing would make a later ``query`` in the same worker refuse (it cannot fence that process's files)."""
    engine = open_database(url, **options)
    try:
        yield engine
    finally:
        engine.dispose()


def assert_one_line_error(result: Result, *phrases: str) -> None:
    """The command failed with status 1, no traceback, and one line on stderr holding every phrase."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for phrase in phrases:
        assert phrase in lines[0], (phrase, lines[0])


def assert_close(found: Any, expected: Any, where: str = "", absolute: float = 1e-15) -> None:
    """Assert that ``found`` equals ``expected``: the same structure (JSON's dicts and lists), floats to 1e-12
    relative or ``absolute`` (sums of the same values in another order)."""
    if isinstance(expected, dict):
        assert isinstance(found, dict) and found.keys() == expected.keys(), where
        for key in expected:
            assert_close(found[key], expected[key], f"{where}/{key}", absolute)
    elif isinstance(expected, list):
        assert isinstance(found, list) and len(found) == len(expected), where
        for index, (one, other) in enumerate(zip(found, expected)):
            assert_close(one, other, f"{where}/{index}", absolute)
    elif isinstance(expected, float):
        assert found == pytest.approx(expected, rel=1e-12, abs=absolute), where
    else:
        assert found == expected, where
