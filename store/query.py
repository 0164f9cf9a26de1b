"""Running a user's SQL: one statement, read-only unless asked."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from store.errors import DatabaseError, ReadOnly

WRITE_REFUSALS = ("readonly", "read-only", "read only", "query_only")


def run_query(engine: sa.Engine, sql: str, *, write: bool = False, limit: int | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one SQL statement; return its column names and rows (at most ``limit``).

    Raises ReadOnly when a statement tries to write through a read-only engine,
    DatabaseError for any other error the database reports (one line).
    """
    try:
        with engine.begin() as connection:
            result = connection.execute(sa.text(sql))
            if not result.returns_rows:
                return [], []
            columns = list(result.keys())
            rows = result.fetchmany(limit) if limit is not None else result.fetchall()
            if not write:
                connection.rollback()
            return columns, [tuple(row) for row in rows]
    except sa.exc.DBAPIError as error:
        message = str(error.orig).splitlines()[0] if error.orig is not None else str(error)
        if not write and any(word in message.lower() for word in WRITE_REFUSALS):
            raise ReadOnly("query is read-only: pass --write to change the database") from None
        raise DatabaseError(f"SQL error: {message}") from None
    except sa.exc.ArgumentError as error:
        raise DatabaseError(f"SQL error: {error}") from None
