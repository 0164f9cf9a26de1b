"""One writer at a time on a Spark database, as SQLite's write lock and DuckDB's file lock give elsewhere.

Spark has no transactions: two processes writing at once would both take the next graph id, and one's
rewrite of the catalog (an UPDATE) would write over the other's rows. A writing command therefore holds the
database's writer table (:data:`WRITER`) from its first statement to its last. The metastore makes a table
once, so of two processes creating it one is refused; the table's properties name its holder's process and
machine. A holder of this machine that no longer runs (killed) is let go of; one of another machine is waited
for, and the wait says how to let go of it by hand.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from dicegraph.store.backends.spark.processes import process_runs
from dicegraph.store.backends.spark.dialect import host_mark

WRITER = "dicegraph_writer"  # the table whose existence is the lock
POLL_SECONDS = 2.0  # how often a waiting process tries again
_TAKEN = "TABLE_OR_VIEW_ALREADY_EXISTS"  # Spark's error when the table exists
_HELD: set[str] = set()  # the databases (URLs) whose writer table this process holds: asked without a statement


def holder(connection: sa.Connection) -> tuple[int, str] | None:
    """Return the process id and machine mark of the writer holding the database, or None when none does."""
    try:
        rows = dict(connection.exec_driver_sql(f"SHOW TBLPROPERTIES `{WRITER}`").all())
    except sa.exc.DBAPIError:  # let go of meanwhile
        return None
    return (int(rows["pid"]), rows["host"]) if "pid" in rows and "host" in rows else None


def _database(connection: sa.Connection) -> str:
    """Return what names ``connection``'s database among those this process holds (its URL, in full)."""
    return connection.engine.url.render_as_string()


def held(connection: sa.Connection) -> bool:
    """Return whether this process holds the writer table of ``connection``'s database (a block of :func:`writing`
    runs), without a statement."""
    return _database(connection) in _HELD


@contextmanager
def writing(connection: sa.Connection, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the database's writer table while the block runs: wait while another process holds it (telling
    ``on_wait`` once), let go of it at the end, also on an error or Ctrl-C. Within a block of this process's
    own, hold it on as it is."""
    told = False
    me = (os.getpid(), host_mark())
    if held(connection):  # by this process already (a command within a command): the outer block lets go
        yield
        return
    database = _database(connection)
    while True:
        try:
            connection.exec_driver_sql(f"CREATE TABLE `{WRITER}` (held INT) USING parquet TBLPROPERTIES "
                                       f"('pid'='{me[0]}', 'host'='{me[1]}')")
            break
        except sa.exc.DBAPIError as error:
            if _TAKEN not in str(error):
                raise
        found = holder(connection)
        if found == me:  # left by an earlier block of this process that could not let go: it is ours
            break
        if found is not None and found[1] == me[1] and not process_runs(found[0]):
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS `{WRITER}`")  # its holder was killed
            continue
        if not told and on_wait is not None and found is not None:
            on_wait(f"another process (id {found[0]}, machine {found[1]}) is writing to {connection.engine.url.database}; "
                    f"waiting for it to finish (Ctrl-C to give up; if that process is gone, DROP TABLE {WRITER})")
            told = True
        time.sleep(POLL_SECONDS)
    _HELD.add(database)
    try:
        yield
    finally:
        _HELD.discard(database)
        if holder(connection) == me:  # (not let go of by hand meanwhile and taken by another)
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS `{WRITER}`")
