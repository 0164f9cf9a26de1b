"""SQLite, the embedded default: ``sqlite:///FILE``, through pysqlite3's driver where installed (a newer SQLite than
Python's own, :func:`driver`), else Python's ``sqlite3``.

What it does differently: exact transactions that take the write lock first (``BEGIN IMMEDIATE``, waiting while
another process writes), WAL and pragmas on every connection, a read-only engine that opens its file in SQLite's
read-only mode, a user's query kept from writing by ``query_only`` and an authorizer refusing ATTACH, rows loaded
through the driver's own ``executemany``, the planner's statistics taken after a build or a solve.

>>> BACKEND.name, BACKEND.file_header
('sqlite', (0, b'SQLite format 3\\x00'))
"""

from __future__ import annotations

import functools
import importlib
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from dicegraph.store.backends.record import Backend, Flush, Waiting

PRAGMAS = ("cache_size = -262144", "temp_store = MEMORY")
DRIVER_SETTING = "DICEGRAPH_SQLITE"  # "builtin": Python's own sqlite3 even where pysqlite3 is installed
BUSY_TIMEOUT_MS = 1000  # how long SQLite waits for a lock before dicegraph says it is waiting (and waits on)
ANALYSIS_LIMIT = 1000  # rows of each index ANALYZE reads for its statistics (SQLite's advice: 100 to 1000)


@functools.cache
def driver() -> ModuleType:
    """Return the DB-API module dicegraph reaches SQLite through: ``pysqlite3.dbapi2`` where it is installed and its
    SQLite is newer than Python's own (the ``pysqlite3-binary`` wheel, a dependency on Linux x86-64, carries 3.51
    where Python's ``sqlite3`` has 3.40 here: School's solve takes 17 to 18 % less time, docs/performance.md), else
    Python's ``sqlite3``, which ``$DICEGRAPH_SQLITE=builtin`` also keeps. Both read and write the same files.

    >>> driver().sqlite_version_info >= sqlite3.sqlite_version_info
    True
    """
    if os.environ.get(DRIVER_SETTING, "").lower() != "builtin":
        try:
            newer = importlib.import_module("pysqlite3.dbapi2")
        except ImportError:
            newer = None
        if newer is not None and newer.sqlite_version_info > sqlite3.sqlite_version_info:
            return newer
    return sqlite3


@dataclass(frozen=True)
class SQLite(Backend):
    """SQLite's record: :class:`dicegraph.store.backends.record.Backend` with SQLite's ways."""

    def keeps_read_only(self, in_memory: bool) -> bool:
        """A private in-memory database has nothing to protect, and starts empty: it is never read-only."""
        return not in_memory

    def engine_options(self, url: sa.URL, path: Path | None, read_only: bool, memory: str | None) -> dict[str, Any]:
        """Through :func:`driver`'s module; ``query`` runs a statement in a worker thread (to stop it at a time limit),
        never two at once; a read-only engine on a file opens it in SQLite's read-only mode
        (:func:`read_only_connection`)."""
        options: dict[str, Any] = {"connect_args": {"check_same_thread": False}, "module": driver()}
        if read_only and path is not None:
            options["creator"] = read_only_connection(path)
        return options

    def configure(self, engine: sa.Engine, options: dict[str, Any], read_only: bool,
                  on_wait: Waiting | None) -> sa.Engine:
        """Exact transactions, WAL, a busy timeout, pragmas, optional read-only.

        A read-only engine on a file opens it in SQLite's read-only mode (see
        :func:`read_only_connection`); on anything else it sets ``query_only``.

        BEGIN covers DDL and reads too. A writing engine keeps the file in WAL
        mode, so readers never block a writer's commit nor a writer a reader,
        and begins every transaction with ``BEGIN IMMEDIATE``: it takes the write
        lock first, so work is never thrown away at commit because another
        process wrote in between. When another process holds that lock, it says
        so through ``on_wait`` once and waits (Ctrl-C gives up, losing nothing).
        """

        @sa.event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            for pragma in PRAGMAS + (f"busy_timeout = {BUSY_TIMEOUT_MS}",):
                cursor.execute(f"PRAGMA {pragma}")
            if read_only and engine.url.database and engine.url.database.startswith("file:"):
                cursor.execute("PRAGMA query_only = ON")  # a URI the user wrote: keep it as it is, refuse writes
            elif not read_only:
                try:
                    cursor.execute("PRAGMA journal_mode = WAL")
                except driver().OperationalError:
                    pass  # another process holds the file in rollback mode right now; the next writer switches it
            cursor.close()

        @sa.event.listens_for(engine, "begin")
        def _on_begin(connection):  # type: ignore[no-untyped-def]
            if read_only:
                connection.exec_driver_sql("BEGIN")
                return
            told = False
            while True:
                try:
                    connection.exec_driver_sql("BEGIN IMMEDIATE")
                    return
                except sa.exc.OperationalError as error:
                    if "locked" not in str(error.orig) and "busy" not in str(error.orig):
                        raise
                    if not told and on_wait is not None:
                        on_wait(f"another process is writing to {engine.url.database}; "
                                "waiting for it to finish (Ctrl-C to give up)")
                    told = True

        return engine

    def take_statistics(self, connection: sa.Connection, tables: Sequence[sa.Table]) -> None:
        """ANALYZE them, reading at most :data:`ANALYSIS_LIMIT` rows of each index. Without statistics SQLite 3.51's
        planner (pysqlite3's, :func:`driver`) made a policy's choices the outer loop of the policy view's walk
        (``store/export.py``) and scanned the walk once a choice: Jackpot's view took 60 s instead of 1.5 s
        (docs/performance.md)."""
        connection.exec_driver_sql(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}")
        preparer = connection.dialect.identifier_preparer
        for table in tables:
            connection.exec_driver_sql(f"ANALYZE {preparer.format_table(table)}")

    def refuse_writes(self, connection: sa.Connection, sql: str) -> None:
        """``query_only`` (not even temporary tables) and an authorizer refusing ATTACH and DETACH."""
        connection.exec_driver_sql("PRAGMA query_only = ON")
        connection.connection.driver_connection.set_authorizer(_refuse_files)  # type: ignore[union-attr]

    def allow_files(self, connection: sa.Connection) -> None:
        """Take the authorizer and ``query_only`` off again (a read-only engine's connection still cannot write
        its file: :meth:`engine_options`)."""
        connection.connection.driver_connection.set_authorizer(None)  # type: ignore[union-attr]
        connection.exec_driver_sql("PRAGMA query_only = OFF")

    def bulk_writer(self, connection: sa.Connection, table: sa.Table, columns: tuple[str, ...]) -> Flush | None:
        """The compiled Core INSERT through the driver's ``executemany`` on plain tuples (``columns`` in the table's
        order)."""
        compiled = sa.insert(table).compile(dialect=connection.dialect, column_keys=list(columns))
        order = [compiled.positiontup.index(name) for name in columns]  # type: ignore[union-attr]
        if order != sorted(order):
            raise ValueError(f"columns {columns} are not in {table.name}'s column order")
        sql = str(compiled)

        def flush(rows: list[tuple]) -> None:
            cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.executemany(sql, rows)
            finally:
                cursor.close()

        return flush

    def upsert(self, table: sa.Table) -> Any:
        """SQLite's INSERT construct, which takes ``on_conflict_do_update``."""
        return sqlite.insert(table)


def read_only_connection(path: Path) -> Callable[[], Any]:
    """Return a function opening ``path`` in SQLite's read-only mode (``mode=ro``; ``immutable`` where the file or
    its folder cannot be written).

    The file itself cannot be written through such a connection, yet the
    algorithms may still work in temporary tables (an advisor solving one
    turn), which ``PRAGMA query_only`` would refuse. ``run_query`` adds
    ``query_only`` for a user's statement.
    """
    address = f"{path.resolve().as_uri()}?mode=ro"
    if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        # a read-only medium (or a file and folder this user cannot write): SQLite's WAL needs to write FILE-shm
        # beside a file it merely reads, so the file is read as immutable, no lock or index of another writer's
        address += "&immutable=1"
    return lambda: driver().connect(address, uri=True, check_same_thread=False)


def _refuse_files(action: int, *_: Any) -> int:
    """SQLite authorizer: refuse ATTACH and DETACH (ATTACH creates files; VACUUM INTO attaches one)."""
    return sqlite3.SQLITE_DENY if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH) else sqlite3.SQLITE_OK


BACKEND = SQLite(
    name="sqlite", title="SQLite", url_form="sqlite:///FILE", install="built in",
    embedded=True, file_header=(0, b"SQLite format 3\x00"), alembic_alters_comments=False,
    bare_max=True, keys_looked_up_one_by_one=True, rowid_keys=True, turn_batch_states=256,
    readers_open_their_own=True, processes_share_file=True,
)
