"""What a backend is and can do: one record, resolved when a database opens, that the store asks instead of a
dialect's name.

A backend's folder (``store/backends/<name>/``) holds its record, a :class:`Backend` whose fields say what the
backend can do and whose methods do what it does differently (open an engine, load rows in bulk, stop a
statement, keep a user's query from writing). The defaults here are the portable behaviour: a backend with
transactions, keys and upserts that needs nothing done to it.

>>> from dicegraph.store.backends import backend_named
>>> sqlite = backend_named("sqlite")
>>> sqlite.title, sqlite.embedded, sqlite.upserts, sqlite.migrated
('SQLite', True, True, True)
>>> backend_named("spark").upserts
False
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

Waiting = Callable[[str], None]  # told once what a process is waiting for
Flush = Callable[[list[tuple]], None]  # inserts one batch of rows
ColumnFlush = Callable[[Mapping[str, Sequence[Any]]], None]  # inserts one block given column by column


def fact(default: Any, means: str) -> Any:
    """Return a record's field with its ``default`` and what it ``means`` (docs/backends.md's table shows it)."""
    return field(default=default, metadata={"means": means})


@dataclass(frozen=True)
class Implementation:
    """A faster implementation of ``operation`` (one of :data:`dicegraph.store.solve.dispatch.OPERATIONS`) that a
    backend registers: ``runs`` and ``can_run``, each ``"module:function"``, imported when first called;
    ``can_run`` takes the operation's arguments and returns whether ``runs`` can run them.

    >>> Implementation("match", "m:played", "m:can_play").function("runs")
    ('m', 'played')
    """

    operation: str
    runs: str
    can_run: str

    def function(self, which: str) -> tuple[str, str]:
        """Return the module and the name of the function ``which`` (``"runs"`` or ``"can_run"``) names."""
        module, name = getattr(self, which).split(":")
        return module, name

    def load(self, which: str) -> Callable[..., Any]:
        """Return the function ``which`` names, imported."""
        module, name = self.function(which)
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Backend:
    """One backend dicegraph runs on: what it is, what it can do (its fields, each saying what it means), and what
    it does differently (the methods its own record overrides)."""

    name: str = field(metadata={"means": "the URL's scheme and SQLAlchemy's dialect name"})
    title: str = field(metadata={"means": "as messages and docs name it"})
    url_form: str = field(metadata={"means": "the URL a user gives, e.g. sqlite:///FILE"})
    install: str = field(metadata={"means": "what to install to use it"})
    embedded: bool = fact(False, "the database is a file (or memory) this process opens, not a server")
    file_header: tuple[int, bytes] | None = fact(None, "where an embedded database's file says what it is, and how")
    migrated: bool = fact(True, "Alembic migrates its schema (else the schema is made at the head, never migrated)")
    alembic_alters_comments: bool = fact(True, "Alembic can change a column's comment there")
    transactions: bool = fact(True, "a command's writes commit or roll back together")
    updates: bool = fact(True, "UPDATE and DELETE change rows in place (else a table is rewritten, work tables appended)")
    upserts: bool = fact(True, "INSERT ... ON CONFLICT DO UPDATE (needs keys)")
    keys: bool = fact(True, "primary keys, unique and foreign-key constraints, indexes")
    hashed_joins: bool = fact(False, "joins by hashing, so a key on a work table only costs")
    arg_min: bool = fact(False, "has the aggregate arg_min(value, key)")
    copies_turn_edges: bool = fact(False, "a turn-joined solve reads the turn's edges from a copy of their own "
                                          "(store/scratch.py edge_copy: its planner takes a range of the edge table "
                                          "for a large one, and hashed the turn's values instead)")
    bare_max: bool = fact(False, "a grouping with one max() takes its other columns from the row holding the maximum")
    recursive_union: bool = fact(True, "a recursive query may UNION its steps, dropping repeats (so a walk stops on a cycle)")
    pays_per_statement: bool = fact(False, "a statement over a few thousand rows costs more than its rows")
    grouped_recursion: bool = fact(False, "a recursive query may group each step's rows, so one statement values a "
                                          "turn, or a window of cyclic components, layer by layer "
                                          "(store/solve/turn_walk.py, cycle_walk.py)")
    keys_looked_up_one_by_one: bool = fact(False, "a list of keys is planned along the primary key (a union of equalities)")
    rowid_keys: bool = fact(False, "a lone INTEGER PRIMARY KEY is the table's row id (so edge ids are INTEGER there)")
    turn_batch_states: int = fact(2048, "turn states a batch of a turn-joined solve takes (bounds its memory)")
    parallel_connections: bool = fact(True, "threads may solve beside a connection on connections of their own")
    readers_open_their_own: bool = fact(False, "those connections open the database read-only themselves (not the engine's)")
    processes_share_file: bool = fact(False, "worker processes may open the database's file and solve beside this one")
    stops_statements_itself: bool = fact(False, "the server stops a statement at a time limit it is given")
    faster: tuple[Implementation, ...] = fact((), "operations it runs its own faster way where it can "
                                                  "(store/solve/dispatch.py; the reference runs the rest)")

    def keeps_read_only(self, in_memory: bool) -> bool:
        """Return whether an engine asked to be read-only is made read-only (``in_memory``: the database is held in
        memory)."""
        return True

    def engine_options(self, url: sa.URL, path: Path | None, read_only: bool, memory: str | None) -> dict[str, Any]:
        """Return the keyword arguments of ``sqlalchemy.create_engine`` for a database at ``url`` (``path``: its
        file, None for a server or memory), read-only or not, using at most ``memory``."""
        return {}

    def before_open(self, url: sa.URL, create: bool) -> None:
        """Check, before an engine is made, that the database can be reached; raise DatabaseError saying why not."""

    def configure(self, engine: sa.Engine, options: dict[str, Any], read_only: bool,
                  on_wait: Waiting | None) -> sa.Engine:
        """Return ``engine`` (made with :meth:`engine_options`' ``options``) set up for dicegraph (pragmas,
        transactions, read-only mode), or an engine in its place."""
        return engine

    def wait_for_file(self, engine: sa.Engine, on_wait: Waiting | None) -> None:
        """Connect once; where another process may hold the database's file, tell ``on_wait`` once and wait."""
        engine.connect().close()

    def after_open(self, engine: sa.Engine) -> None:
        """Tidy what an earlier process left, on a database opened for writing."""

    @contextmanager
    def writing(self, engine: sa.Engine, on_wait: Waiting | None) -> Iterator[None]:
        """Hold whatever a command that writes must hold while it writes (nothing where transactions do it)."""
        yield

    @contextmanager
    def small_steps(self, connection: sa.Connection) -> Iterator[None]:
        """Run the statements inside, a solve whose passes are each a recursive query of many small steps, as suits
        them (nothing here)."""
        yield

    @contextmanager
    def sharing_processors(self, connection: sa.Connection, connections: int) -> Iterator[None]:
        """Hold the database's own use of the processors to its share while ``connections`` connections of this
        process (``connection`` among them) run statements at once (nothing where each has its own)."""
        yield

    def plan_whole_layers(self, connection: sa.Connection) -> None:
        """Have the rest of the transaction's statements planned for whole layers of work tables."""

    def take_statistics(self, connection: sa.Connection, tables: Sequence[sa.Table]) -> None:
        """Have the planner's statistics of ``tables`` take in the rows a build or a solve has just written, where
        the backend plans by statistics it gathers on its own time."""

    def cancel(self, connection: sa.Connection) -> None:
        """Ask the database to stop the statement running on ``connection`` (called from another thread)."""
        connection.connection.driver_connection.interrupt()  # type: ignore[union-attr]

    def set_time_limit(self, connection: sa.Connection, seconds: float | None) -> None:
        """Have the server stop the next statements at ``seconds`` (None: no limit); only where
        :attr:`stops_statements_itself`."""
        raise NotImplementedError(f"{self.title} does not stop statements itself")

    def refuse_writes(self, connection: sa.Connection, sql: str) -> None:
        """Keep a user's statement ``sql`` on ``connection`` from writing or reaching files; raise ReadOnly (or
        FilesReachable) where it cannot be kept from them."""

    def allow_files(self, connection: sa.Connection) -> None:
        """Undo :meth:`refuse_writes` before the connection goes back to the pool."""

    def bulk_writer(self, connection: sa.Connection, table: sa.Table, columns: tuple[str, ...]) -> Flush | None:
        """Return a function inserting a batch of rows (tuples in ``columns`` order) into ``table`` faster than
        SQLAlchemy's executemany, or None to use that."""
        return None

    def column_writer(self, connection: sa.Connection, table: sa.Table,
                      columns: tuple[str, ...]) -> ColumnFlush | None:
        """Return a function inserting a block given column by column (``columns``' names -> sequences or numpy
        arrays, all as long) into ``table`` without a Python tuple a row, or None where the backend takes rows
        (:meth:`bulk_writer`)."""
        return None

    def upsert(self, table: sa.Table) -> Any:
        """Return the INSERT construct that takes ``on_conflict_do_update`` (only where :attr:`upserts`)."""
        return postgresql.insert(table)
