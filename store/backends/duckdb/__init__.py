"""DuckDB, embedded and columnar: ``duckdb:///FILE`` (``pip install 'dicegraph[duckdb]'``, through duckdb-engine).

What it does differently: a memory limit (spilling past it beside the file), no extension installed or loaded by
itself, a read-only engine that reads no file but the database (and lets other readers share the file), a wait
while another process holds the file, a user's query kept from writing by DuckDB's own parse of it, rows loaded
as NumPy arrays that DuckDB scans. It joins by hashing, has ``arg_min`` and pays per statement, which the solve
reads from :data:`BACKEND`.

>>> BACKEND.hashed_joins, BACKEND.arg_min, BACKEND.migrated
(True, True, True)
>>> waiting_for('Conflicting lock is held in /usr/bin/python3 (PID 99999999). However', 'g.duckdb')
'another process (PID 99999999, /usr/bin/python3) has g.duckdb open; waiting for it to finish (Ctrl-C to give up)'
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from alembic.ddl.impl import DefaultImpl

from dicegraph.store.backends.record import Backend, ColumnFlush, Flush, Waiting
from dicegraph.store.errors import READ_ONLY_MESSAGE, DatabaseError, FilesReachable, ReadOnly
from dicegraph.store.memory import memory_bytes

sa.dialects.registry.register("duckdb", "dicegraph.store.backends.duckdb.dialect", "DuckDBDialect")

# DuckDB never installs nor loads an extension by itself (it would download one from the internet)
SETTINGS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
READING_STATEMENTS = ("SELECT", "EXPLAIN", "PRAGMA")  # what a user's read-only query may be


class AlembicDuckDBImpl(DefaultImpl):
    """Lets Alembic run on DuckDB (``duckdb:///...`` through duckdb-engine), which it does not know by itself."""

    __dialect__ = "duckdb"


@dataclass(frozen=True)
class DuckDB(Backend):
    """DuckDB's record: :class:`dicegraph.store.backends.record.Backend` with DuckDB's ways."""

    def engine_options(self, url: sa.URL, path: Path | None, read_only: bool, memory: str | None) -> dict[str, Any]:
        """At most ``memory`` (:func:`dicegraph.store.memory.memory_bytes`), spilling past it to DuckDB's temporary
        folder (FILE.tmp beside its file); read-only on a file, writes refused by DuckDB, and with them every file
        but the database's (read_text, glob, COPY, ATTACH...), and other readers may open the file too."""
        config: dict[str, Any] = {"memory_limit": f"{memory_bytes(memory) // 2**20}MiB", **SETTINGS}
        if read_only and path is not None:
            return {"connect_args": {"read_only": True, "config": {**config, "enable_external_access": False}}}
        return {"connect_args": {"config": config}}

    def configure(self, engine: sa.Engine, options: dict[str, Any], read_only: bool,
                  on_wait: Waiting | None) -> sa.Engine:
        """Return ``engine``, or, read-only where this process already has the file open for writing (DuckDB
        refuses a second configuration of one file in a process), an engine sharing that open database: other
        processes are kept out by the writer anyway, and viewing still writes nothing (``dicegraph.store.query``
        guards)."""
        connect_args = options["connect_args"]
        if not connect_args.get("read_only"):
            return engine
        try:
            engine.connect().close()
            return engine
        except sa.exc.DBAPIError as error:
            if "different configuration" not in str(error.orig):
                return engine  # waiting for another process, or a real error: wait_for_file handles both
        engine.dispose()
        config = {key: value for key, value in connect_args["config"].items() if key != "enable_external_access"}
        return sa.create_engine(engine.url, connect_args={"config": config})

    def wait_for_file(self, engine: sa.Engine, on_wait: Waiting | None) -> None:
        """Connect once, waiting while another process holds the file (DuckDB lets one process open it)."""
        told = False
        while True:
            try:
                engine.connect().close()
                return
            except sa.exc.DBAPIError as error:
                if "lock" not in str(error.orig).lower():
                    raise
                if not told and on_wait is not None:
                    on_wait(waiting_for(str(error.orig), engine.url.database or "the database"))
                told = True
                time.sleep(0.5)

    @contextmanager
    def sharing_processors(self, connection: sa.Connection, connections: int) -> Iterator[None]:
        """DuckDB's threads are the database's, not a connection's: while ``connections`` of them run statements at
        once, each gets its share (one a connection on two processors). Two connections of two threads each took a
        fifth to a third more time and processor time for School's solve (docs/performance.md)."""
        with _threads(connection, lambda threads: max(1, threads // connections)):
            yield

    @contextmanager
    def small_steps(self, connection: sa.Connection) -> Iterator[None]:
        """One thread: each step of a recursive query is a few thousand rows, and handing its operators to two
        threads cost more than it saved (the race to 5000's optimum 145 s on one, 189 s on two,
        docs/performance.md)."""
        with _threads(connection, lambda threads: 1):
            yield

    def refuse_writes(self, connection: sa.Connection, sql: str) -> None:
        """Refuse a connection that may reach files (this process writes the file) and any statement DuckDB's own
        parse says is not a read (DuckDB has no read-only transaction)."""
        import duckdb

        if connection.exec_driver_sql("SELECT current_setting('enable_external_access')").scalar():
            raise FilesReachable("query cannot keep a statement from the server's files here: this process has the "
                                 "DuckDB file open for writing; run the query in a process of its own")
        try:
            kinds = [statement.type.name for statement in duckdb.extract_statements(sql)]
        except duckdb.Error as error:
            raise DatabaseError(f"SQL error: {str(error).splitlines()[0]}") from None
        if any(kind not in READING_STATEMENTS for kind in kinds):
            raise ReadOnly(READ_ONLY_MESSAGE)

    def bulk_writer(self, connection: sa.Connection, table: sa.Table, columns: tuple[str, ...]) -> Flush | None:
        """Each batch of rows turned into columns, inserted by :meth:`column_writer` (DuckDB's executemany goes row
        by row, and ``COPY`` from a CSV file costs four times as much a row)."""
        insert = self.column_writer(connection, table, columns)
        return lambda rows: insert(dict(zip(columns, zip(*rows))))

    def column_writer(self, connection: sa.Connection, table: sa.Table,
                      columns: tuple[str, ...]) -> ColumnFlush | None:
        """Each block as one NumPy array a column, which DuckDB scans where it is registered: a typed array as it
        is, anything else (text, a Python ``None`` for NULL) as Python objects. No file is written, so an engine
        that may read none (a read-only one, whose work tables a comparison fills) loads so too."""
        batch = f"dicegraph_batch_{table.name}"
        statement = f"INSERT INTO {table.name} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM {batch}"

        def insert_columns(block: Mapping[str, Sequence[Any]]) -> None:
            driver = connection.connection.driver_connection
            driver.register(batch, {name: _scanned(block[name]) for name in columns})  # type: ignore[union-attr]
            try:
                driver.execute(statement)  # type: ignore[union-attr]
            finally:
                driver.unregister(batch)  # type: ignore[union-attr]

        return insert_columns


def _scanned(column: Sequence[Any]) -> np.ndarray:
    """Return a column as DuckDB scans it: a numeric numpy array as it is, anything else as Python objects."""
    if isinstance(column, np.ndarray) and column.dtype.kind in "iufb":
        return column
    found = np.empty(len(column), dtype=object)
    found[:] = column
    return found


def waiting_for(message: str, database: str) -> str:
    """Return the line that says which process holds a DuckDB file, from DuckDB's lock error (it names the PID),
    and that this one waits; a ``dicegraph serve`` keeps the file until it is stopped, which the line says."""
    found = re.search(r"held in (.+?) \(PID (\d+)\)", message)
    if found is None:
        return f"another process has {database} open; waiting for it to finish (Ctrl-C to give up)"
    program, pid = found.group(1), found.group(2)
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").replace("\0", " ").split()
    except OSError:
        words = []
    command = " ".join(words)[:120]  # one line, however the process was started
    if "serve" in words and ("dicegraph" in " ".join(words[:2]) or "from dicegraph.cli import" in " ".join(words)):
        return (f"dicegraph serve (PID {pid}) has {database} open and keeps it until it is stopped: stop it (kill "
                f"{pid}) or serve a copy of the file; waiting (Ctrl-C to give up)")
    return f"another process (PID {pid}, {command or program}) has {database} open; waiting for it to finish " \
           "(Ctrl-C to give up)"


@contextmanager
def _threads(connection: sa.Connection, share: Callable[[int], int]) -> Iterator[None]:
    """Set DuckDB's threads (the database's, not the connection's) to ``share`` of what they are, inside."""
    threads = connection.exec_driver_sql("SELECT current_setting('threads')").scalar()
    connection.exec_driver_sql(f"SET threads = {share(threads)}")
    try:
        yield
    finally:
        with suppress(sa.exc.DBAPIError):  # a failed transaction refuses it; the solve's error is the one to see
            connection.exec_driver_sql(f"SET threads = {threads}")


BACKEND = DuckDB(
    name="duckdb", title="DuckDB", url_form="duckdb:///FILE", install="pip install 'dicegraph[duckdb]'",
    embedded=True, file_header=(8, b"DUCK"), alembic_alters_comments=False,
    hashed_joins=True, arg_min=True, copies_turn_edges=True, pays_per_statement=True, grouped_recursion=True,
)
