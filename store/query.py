"""Running a user's SQL: one statement, read-only unless asked."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from store.errors import DatabaseError, ReadOnly

WRITE_REFUSALS = ("readonly", "read-only", "read only", "query_only")


def run_query(engine: sa.Engine, sql: str, *, write: bool = False, limit: int | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one SQL statement; return its column names and rows (at most ``limit``).

    Without ``write`` nothing is ever committed, and a statement that writes
    is refused by the database itself: SQLite's ``query_only`` (set when the
    engine was opened read-only), PostgreSQL's read-only transaction, DuckDB's
    own parse of the statement. Raises ReadOnly for such a statement,
    DatabaseError for any other error the database reports (one line).
    """
    try:
        with engine.connect() as connection:
            if not write:
                _refuse_writes(connection, sql)
            result = connection.execute(sa.text(sql))
            columns, rows = [], []
            if result.returns_rows:
                columns = list(result.keys())
                rows = result.fetchmany(limit) if limit is not None else result.fetchall()
            if write:
                connection.commit()
            else:
                connection.rollback()
            return columns, [tuple(row) for row in rows]
    except sa.exc.DBAPIError as error:
        message = str(error.orig).splitlines()[0] if error.orig is not None else str(error)
        if not write and any(word in message.lower() for word in WRITE_REFUSALS):
            raise ReadOnly("query is read-only: pass --write to change the database") from None
        raise DatabaseError(f"SQL error: {message}") from None
    except sa.exc.ArgumentError as error:
        raise DatabaseError(f"SQL error: {error}") from None


READING_DUCKDB_STATEMENTS = ("SELECT", "EXPLAIN", "PRAGMA")


def _refuse_writes(connection: sa.Connection, sql: str) -> None:
    """Make the transaction read-only where the backend can; where it can't (DuckDB), refuse writing statements."""
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
    elif connection.dialect.name == "duckdb":
        import duckdb

        try:
            kinds = [statement.type.name for statement in duckdb.extract_statements(sql)]
        except duckdb.Error as error:
            raise DatabaseError(f"SQL error: {str(error).splitlines()[0]}") from None
        if any(kind not in READING_DUCKDB_STATEMENTS for kind in kinds):
            raise ReadOnly("query is read-only: pass --write to change the database")
