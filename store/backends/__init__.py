"""The backends dicegraph runs on, a record each (:class:`dicegraph.store.backends.record.Backend`), and how a
database's record is found: from its engine, connection or URL.

Everything the store does differently on one backend lives in that backend's folder here; the rest of the store
asks the record (``backend_of(connection).upserts``), never a dialect's name.

>>> from dicegraph.store.backends import BACKENDS
>>> [backend.name for backend in BACKENDS]
['sqlite', 'duckdb', 'postgresql', 'spark']
>>> backend_of("duckdb:///games.duckdb").title
'DuckDB'
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlalchemy as sa

    from dicegraph.store.backends.record import Backend

# The records are read when first asked for, not when this package is imported: a module of a backend's folder
# that needs no driver (Spark's cluster, whose defaults ``dicegraph --help`` shows) imports without SQLAlchemy.


@functools.cache
def _records() -> tuple[Backend, ...]:
    from dicegraph.store.backends import duckdb, postgresql, sqlite
    from dicegraph.store.backends.spark import backend as spark

    return sqlite.BACKEND, duckdb.BACKEND, postgresql.BACKEND, spark.BACKEND


def __getattr__(name: str) -> Any:
    """``BACKENDS``: every record, in the order the docs list them (read when first asked for)."""
    if name == "BACKENDS":
        return _records()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def backend_named(name: str) -> Backend | None:
    """Return the record of the backend whose URL scheme (SQLAlchemy dialect name) is ``name``, None if dicegraph
    does not run on it.

    >>> backend_named("postgresql").title, backend_named("oracle")
    ('PostgreSQL', None)
    """
    return next((backend for backend in _records() if backend.name == name), None)


def url_backend(url: sa.URL | str) -> Backend | None:
    """Return the record of the backend a database URL names, None if dicegraph does not run on it.

    >>> url_backend("postgresql+psycopg://alice@db.example/games").title, url_backend("oracle://x/y")
    ('PostgreSQL', None)
    """
    import sqlalchemy as sa

    return backend_named(sa.make_url(url).get_backend_name())


def backend_of(bind: sa.Connection | sa.Engine | sa.URL | str) -> Backend:
    """Return the record of the backend ``bind`` (a connection, an engine, a URL or its text) runs on; raise
    KeyError for a backend dicegraph does not run on (:func:`dicegraph.store.db.open_database` refuses those)."""
    import sqlalchemy as sa

    if isinstance(bind, (sa.Connection, sa.Engine)):
        found = backend_named(bind.dialect.name)
        if found is None:
            raise KeyError(bind.dialect.name)
        return found
    found = url_backend(bind)
    if found is None:
        raise KeyError(sa.make_url(bind).drivername)
    return found


def supported() -> str:
    """Return the sentence that says which URLs dicegraph opens and what each needs.

    >>> supported().startswith("use sqlite:///FILE (built in), duckdb:///FILE")
    True
    """
    forms = [f"{backend.url_form} ({backend.install})" for backend in _records()]
    return f"use {', '.join(forms[:-1])} or {forms[-1]}"


def edge_id_type() -> sa.types.TypeEngine:
    """Return the type of edge ids: BIGINT, or INTEGER where a lone integer primary key is the row id.

    >>> from sqlalchemy.dialects import sqlite as sqlite_dialect
    >>> edge_id_type().compile(dialect=sqlite_dialect.dialect())
    'INTEGER'
    """
    import sqlalchemy as sa

    kind = sa.BigInteger()
    for backend in _records():
        if backend.rowid_keys:
            kind = kind.with_variant(sa.Integer(), backend.name)
    return kind
