"""The PostgreSQL server the tests use: ``$DICEGRAPH_TEST_POSTGRES``, the URL of a database on it whose user may
create databases (``.ci/run`` starts a throw-away cluster and sets it). Without it the PostgreSQL tests are
skipped and say why; in CI they must run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dicegraph.store.db import scratch_database

POSTGRES_ENV = "DICEGRAPH_TEST_POSTGRES"


def postgres_server() -> str:
    """Return ``$DICEGRAPH_TEST_POSTGRES``; without it skip the test, saying why (in CI: fail)."""
    server = os.environ.get(POSTGRES_ENV)
    if not server:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must test PostgreSQL: .ci/run sets ${POSTGRES_ENV}")
        pytest.skip(f"PostgreSQL tests need a server: set ${POSTGRES_ENV} to a database URL "
                    "(postgresql+psycopg://user@host:port/db, user allowed to create databases)")
    return server


@contextmanager
def database_on(backend: str, folder: Path) -> Iterator[str]:
    """Yield the URL of a new database on ``backend`` (a file in ``folder``, or a scratch PostgreSQL database)."""
    if backend == "postgresql":
        with scratch_database(postgres_server()) as url:
            yield url
    else:
        folder.mkdir(parents=True, exist_ok=True)
        yield f"{backend}:///{folder / f'check.{backend}'}"
