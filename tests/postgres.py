"""The PostgreSQL server the tests use: ``$DICEGRAPH_TEST_POSTGRES``, the URL of a database on it whose user may
create databases (``.ci/run`` starts a throw-away cluster and sets it). Without it the PostgreSQL tests are
skipped and say why; in CI they must run."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

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
def reading_role(url: str) -> Iterator[str]:
    """Yield ``url`` as a login role of its own that reads every table and no server file (``pg_read_all_data``),
    the role ``query`` and the explorer's SQL console are meant to run as; drop the role after."""
    name = f"dicegraph_reader_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE ROLE {name} LOGIN IN ROLE pg_read_all_data")
        try:
            yield sa.make_url(url).set(username=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f"DROP OWNED BY {name}")
                connection.exec_driver_sql(f"DROP ROLE {name}")
    finally:
        admin.dispose()
