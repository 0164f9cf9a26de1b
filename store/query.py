"""Running a user's SQL: one statement, read-only unless asked, time-limited, stoppable with Ctrl-C.

The statement runs in a worker thread on a connection the caller's thread
opened; that thread waits for it and, when the time limit passes or Ctrl-C
arrives, asks the database to stop the statement (SQLite's and DuckDB's
``interrupt``, psycopg's cancel request), so a runaway ``WITH RECURSIVE``
ends at once on every backend and nothing is committed.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from dicegraph.store.backends import backend_of
from dicegraph.store.errors import DAMAGED, READ_ONLY_MESSAGE, DatabaseError, ReadOnly, database_failure, driver_message
from dicegraph.store.defaults import DEFAULT_TIMEOUT

WRITE_REFUSALS = ("readonly", "read-only", "read only", "query_only", "not authorized", "authorization denied")
STOPPED_BY_CTRL_C = "the statement was stopped (Ctrl-C); nothing was written"
POLL_SECONDS = 0.05  # how often the waiting thread looks at the clock
FILE_STATEMENT = re.compile(r"^\s*(copy|attach|detach|load|install|export|import)\b", re.IGNORECASE)
FILE_REFUSALS = ("file system operations are disabled",)  # DuckDB's word when a statement reaches for a file
BATCH_ROWS = 1000  # rows a streamed result hands on at a time
RowsTaker = Callable[[list[str], list[tuple[Any, ...]]], None]  # told the columns and each batch of rows
FILES_MESSAGE = "query reads no file but the database: pass --write to read or write other files"


class QueryStopped(DatabaseError):
    """A statement was stopped: it ran past its time limit, or the user pressed Ctrl-C."""


def run_query(engine: sa.Engine, sql: str, *, write: bool = False, limit: int | None = None,
              timeout: float | None = DEFAULT_TIMEOUT, on_rows: RowsTaker | None = None
              ) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one SQL statement; return its column names and rows (at most ``limit``). With ``on_rows``, the rows
    are handed to it a batch (:data:`BATCH_ROWS`) at a time as the driver reads them, never held all at once,
    and none are returned: ``on_rows(columns, rows)`` is called at least once, with the columns of a
    statement that returns no rows too.

    Without ``write`` nothing is ever committed, and a statement that writes
    or touches files is refused: SQLite's ``query_only`` (for the statement,
    on a file opened read-only by a read-only engine) and an authorizer refusing ATTACH (and so VACUUM
    INTO), PostgreSQL's read-only transaction, DuckDB's own parse of the
    statement; statements that read or write files (COPY, ATTACH, ...) are
    refused on every backend. No file but the database is read either:
    SQLite's driver has no file functions and loads no extension; DuckDB's
    read-only engine runs with ``enable_external_access`` off (so ``read_text``,
    ``glob``, ``read_csv`` fail), and a DuckDB connection where it is on (this
    process writes the file) is refused; on PostgreSQL a role that may read or
    write the server's files (a superuser, or a member of a role that may) is refused
    (FilesReachable), and any other role is kept from them by the server.
    ``timeout`` seconds (None: no limit) bound the
    statement. Raises ReadOnly for a refused statement, QueryStopped when it
    was stopped, DatabaseError for any other error the database reports (one line).

    >>> from dicegraph.store.db import open_database
    >>> run_query(open_database("sqlite://", create=True), "SELECT 1 + 1 AS two")
    (['two'], [(2,)])
    """
    try:
        with engine.connect() as connection:
            if not write:
                _refuse_writes(connection, sql)
            try:
                columns, rows = _interruptible(connection, lambda: _fetch(connection, sql, limit, on_rows), timeout)
            finally:  # also after an SQL error: the connection goes back to the pool without the authorizer
                if not write and not connection.invalidated:
                    _allow_files(connection)
            if write:
                connection.commit()
            else:
                connection.rollback()
            return columns, rows
    except sa.exc.DBAPIError as error:
        message = driver_message(error.orig if error.orig is not None else error).splitlines()[0]
        if "timed out" in message.lower() or "timeout" in message.lower():
            raise QueryStopped(f"the statement ran longer than {timeout:g} s and was stopped (--timeout SECONDS; 0: "
                               "no limit)") from None
        if any(word in message.lower() for word in DAMAGED):
            raise database_failure(error) from None
        if not write and any(word in message.lower() for word in FILE_REFUSALS):
            raise ReadOnly(FILES_MESSAGE) from None
        if not write and any(word in message.lower() for word in WRITE_REFUSALS):
            raise ReadOnly(READ_ONLY_MESSAGE) from None
        raise DatabaseError(f"SQL error: {message}") from None
    except sa.exc.ArgumentError as error:
        raise DatabaseError(f"SQL error: {error}") from None
    except getattr(engine.dialect.loaded_dbapi, "Warning", ()) as error:  # DB-API's, which SQLAlchemy passes on
        raise DatabaseError(f"SQL error: {driver_message(error).splitlines()[0]}") from None  # (pysqlite3: two at once)


def _fetch(connection: sa.Connection, sql: str, limit: int | None,
           on_rows: RowsTaker | None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Return the statement's columns and rows, or hand the rows to ``on_rows`` a batch at a time (a server-side
    cursor where the driver has one, so that neither end holds them all) and return the columns alone."""
    # the statement goes to the driver as written, with no parameters: a ``:word`` or a ``%`` in its text is
    # text, not a parameter's mark
    connection = connection.execution_options(no_parameters=True)
    if on_rows is None:
        result = connection.exec_driver_sql(sql)
        if not result.returns_rows:
            return [], []
        rows = result.fetchmany(limit) if limit is not None else result.fetchall()
        return list(result.keys()), [tuple(row) for row in rows]
    result = connection.execution_options(stream_results=True, max_row_buffer=BATCH_ROWS).exec_driver_sql(sql)
    columns = list(result.keys()) if result.returns_rows else []
    left, first = limit, True
    while True:
        size = BATCH_ROWS if left is None else min(BATCH_ROWS, left)
        rows = [tuple(row) for row in result.fetchmany(size)] if columns and size else []
        if rows or first:
            on_rows(columns, rows)
        first = False
        if len(rows) < size or not rows:
            break
        left = None if left is None else left - len(rows)
    result.close()
    return columns, []


def _interruptible(connection: sa.Connection, work: Callable[[], Any], timeout: float | None) -> Any:
    """Return ``work()`` run in a worker thread; stop the statement on time-out or Ctrl-C and raise QueryStopped."""
    backend = backend_of(connection)
    if backend.stops_statements_itself:  # the server stops the statement at the time limit
        backend.set_time_limit(connection, timeout)
        try:
            return work()
        except KeyboardInterrupt:  # the dialect has cancelled the statement on the server
            connection.invalidate()
            raise QueryStopped(STOPPED_BY_CTRL_C) from None
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # handed back to the waiting thread
            outcome["error"] = error

    worker = threading.Thread(target=target, name="dicegraph-query", daemon=True)
    deadline = None if not timeout else time.monotonic() + timeout
    stopped = None
    pressed = threading.Event()
    previous = _on_ctrl_c(lambda *_: pressed.set())
    worker.start()
    try:
        while worker.is_alive():
            worker.join(POLL_SECONDS)
            if stopped is None and pressed.is_set():
                stopped = STOPPED_BY_CTRL_C
                _cancel(connection)
            elif stopped is None and deadline is not None and time.monotonic() > deadline:
                stopped = f"the statement ran longer than {timeout:g} s and was stopped (--timeout SECONDS; 0: no limit)"
                _cancel(connection)
    finally:
        _on_ctrl_c(previous)
    if stopped is not None:
        connection.invalidate()  # drop the connection and its transaction rather than reuse a stopped one
        raise QueryStopped(stopped)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _on_ctrl_c(handler: Any) -> Any:
    """Install ``handler`` for Ctrl-C (SIGINT) where this thread may (the main thread); return the previous one."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, handler)


def _cancel(connection: sa.Connection) -> None:
    """Ask the database to stop the statement running on ``connection`` (from another thread)."""
    backend_of(connection).cancel(connection)


def _refuse_writes(connection: sa.Connection, sql: str) -> None:
    """Make the transaction read-only where the backend can; where it can't (DuckDB, Spark), refuse writing
    statements; refuse statements that read or write files on every backend."""
    if FILE_STATEMENT.match(sql):
        raise ReadOnly(READ_ONLY_MESSAGE)
    backend_of(connection).refuse_writes(connection, sql)


def _allow_files(connection: sa.Connection) -> None:
    """Undo :func:`_refuse_writes` before the connection goes back to the pool (a connection of a read-only engine
    still cannot write its file: :func:`dicegraph.store.db.open_database`)."""
    backend_of(connection).allow_files(connection)
