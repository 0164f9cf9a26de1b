"""The backends dicegraph runs on, a record each (:class:`dicegraph.store.backends.record.Backend`), and how a
database's record is found: from its engine, connection or URL.

Everything the store does differently on one backend lives in that backend's folder here; the rest of the store
asks the record (``backend_of(connection).upserts``), never a dialect's name.

>>> [backend.name for backend in BACKENDS]
['sqlite', 'duckdb', 'postgresql', 'spark']
>>> backend_of("duckdb:///games.duckdb").title
'DuckDB'
"""

from __future__ import annotations

import sqlalchemy as sa

from dicegraph.store.backends import duckdb, postgresql, spark, sqlite
from dicegraph.store.backends.record import Backend

BACKENDS: tuple[Backend, ...] = (sqlite.BACKEND, duckdb.BACKEND, postgresql.BACKEND, spark.BACKEND)
_BY_NAME = {backend.name: backend for backend in BACKENDS}


def backend_named(name: str) -> Backend | None:
    """Return the record of the backend whose URL scheme (SQLAlchemy dialect name) is ``name``, None if dicegraph
    does not run on it.

    >>> backend_named("postgresql").title, backend_named("oracle")
    ('PostgreSQL', None)
    """
    return _BY_NAME.get(name)


def url_backend(url: sa.URL | str) -> Backend | None:
    """Return the record of the backend a database URL names, None if dicegraph does not run on it.

    >>> url_backend("postgresql+psycopg://alice@db.example/games").title, url_backend("oracle://x/y")
    ('PostgreSQL', None)
    """
    return backend_named(sa.make_url(url).get_backend_name())


def backend_of(bind: sa.Connection | sa.Engine | sa.URL | str) -> Backend:
    """Return the record of the backend ``bind`` (a connection, an engine, a URL or its text) runs on; raise
    KeyError for a backend dicegraph does not run on (:func:`dicegraph.store.db.open_database` refuses those)."""
    if isinstance(bind, (sa.Connection, sa.Engine)):
        return _BY_NAME[bind.dialect.name]
    found = url_backend(bind)
    if found is None:
        raise KeyError(sa.make_url(bind).drivername)
    return found


def supported() -> str:
    """Return the sentence that says which URLs dicegraph opens and what each needs.

    >>> supported().startswith("use sqlite:///FILE (built in), duckdb:///FILE")
    True
    """
    forms = [f"{backend.url_form} ({backend.install})" for backend in BACKENDS]
    return f"use {', '.join(forms[:-1])} or {forms[-1]}"


def edge_id_type() -> sa.types.TypeEngine:
    """Return the type of edge ids: BIGINT, or INTEGER where a lone integer primary key is the row id.

    >>> from sqlalchemy.dialects import sqlite as sqlite_dialect
    >>> edge_id_type().compile(dialect=sqlite_dialect.dialect())
    'INTEGER'
    """
    kind = sa.BigInteger()
    for backend in BACKENDS:
        if backend.rowid_keys:
            kind = kind.with_variant(sa.Integer(), backend.name)
    return kind
