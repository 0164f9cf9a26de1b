"""Spark SQL through a Spark Thrift server, as a SQLAlchemy dialect: ``spark://HOST:PORT/DATABASE``.

It is PyHive's Hive dialect (``pyhive.sqlalchemy_hive``) with what Spark 4 needs of it:

- an ``INSERT ... SELECT`` keeps its column list (PyHive drops it, Spark takes it);
- a table is created with its columns alone, as Parquet: Spark has no PRIMARY KEY, UNIQUE, FOREIGN KEY or index;
- parameters are written into the statement here, a float as a double literal (``0.1D``: Spark reads ``0.1`` as a
  decimal), and ``%`` is left alone in a statement without them (PyHive formats every statement it is given
  parameters for);
- many rows go in as a few statements, each the rows as one JSON text (:mod:`dicegraph.store.backends.spark.bulk`; PyHive sends one
  statement a row, and Spark pays dearly for each, and for a long ``VALUES`` list: docs/spark.md measures it);
- a table is looked for with ``SHOW TABLES`` (PyHive reads Hive's error text, which Spark 4's is not);
- statements are compiled once (:attr:`supports_statement_cache`), and there are no transactions to begin, commit
  or roll back;
- Spark's tables take no UPDATE or DELETE: one is run as a rewrite of the table (its rows as they are to be,
  copied aside, then written over it), which suits the catalog's small tables; the algorithms' large writes
  append instead. A DELETE of every row is a TRUNCATE;
- a temporary table (Spark has none that takes rows) is a table of its own name with this process's mark added
  (:attr:`SparkDialect.work_mark`), so that two processes' work tables never meet; one is compacted every
  :data:`WORK_FILES` inserts into it (each INSERT writes a file of its own; :mod:`dicegraph.store.backends.spark.compact` does the
  database's tables at the end of a command).

>>> from sqlalchemy import Column, Float, Integer, MetaData, Table, insert, select
>>> table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("v", Float))
>>> print(insert(table).from_select(["id", "v"], select(table.c.id, table.c.v)).compile(dialect=SparkDialect()))
INSERT INTO `t` (`id`, `v`) SELECT `t`.`id`, `t`.`v` 
FROM `t`
>>> literal(0.1), literal("it's"), literal(None), literal(True), literal(b"\\x01")
('0.1D', "'it\\\\'s'", 'NULL', 'TRUE', "X'01'")
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from pyhive import hive
from pyhive.sqlalchemy_hive import HiveCompiler, HiveDialect, HiveIdentifierPreparer, HiveTypeCompiler
from sqlalchemy.sql import compiler
from thrift.transport.TTransport import TTransportException

from dicegraph.store.errors import DatabaseError, NoDatabase
from dicegraph.store.backends.spark.processes import process_runs
from dicegraph.store.backends.spark.bulk import json_inserts
from dicegraph.store.backends.spark.literals import literal

_MARKED = re.compile(r"__(?P<rewrite>rewrite_)?w(?P<pid>\d+)_(?P<host>[0-9a-f]{6})_[0-9a-f]{6}$")  # a work table's name: its process, its host
READ_RETRIES = 3  # a read that met a table being written over is run again this many times, at most
_FILE_GONE = "FAILED_READ_FILE.FILE_NOT_EXIST"  # Spark's error for it
POLL_FIRST, POLL_MOST = 0.005, 0.1  # seconds between asking whether a statement has ended: first, at most
NEXT_STATEMENT = "\n/* dicegraph: next statement */\n"  # between the statements one compiled statement runs as
_VALUES = re.compile(r"^INSERT INTO `\w+` \((?P<columns>[^)]*)\) VALUES \((?P<binds>.*)\)$", re.DOTALL)
_BIND = re.compile(r"%\((\w+)\)s")
_INSERT_INTO = re.compile(r"^INSERT INTO `(?P<table>\w+)`")
_CREATE_TABLE = re.compile(r"^\s*CREATE TABLE `(?P<table>\w+)`")
_DROP_TABLE = re.compile(r"^\s*DROP TABLE (?P<if_exists>IF EXISTS )?`(?P<table>\w+)`\s*$")
WORK_FILES = 48  # a work table is compacted after this many inserts into it (each writes a file or more)


def host_mark() -> str:
    """Return six hex digits naming this machine in work tables' marks."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def work_mark(pid: int) -> str:
    """Return the mark of the work tables of process ``pid`` of this machine (and a random part, so that two
    engines of one process differ).

    >>> bool(_MARKED.search("work_value__" + work_mark(1234)))
    True
    """
    return f"w{pid}_{host_mark()}_{secrets.token_hex(3)}"


def is_work_table(name: str) -> bool:
    """Return whether ``name`` is a work table's or a rewrite's copy (marked with a process's mark).

    >>> is_work_table("value"), is_work_table("value__rewrite_" + work_mark(1234))
    (False, True)
    """
    return _MARKED.search(name) is not None


def drop_leftovers(connection: sa.Connection, alive: Callable[[int], bool] = process_runs) -> list[str]:
    """Drop the work tables that processes of this machine no longer running left in ``connection``'s database (a
    killed process drops none); return their names. ``alive(pid)`` says whether a process runs (by default: a
    signal 0 reaches it).

    A rewrite's copy (``policy__rewrite_w...``: an UPDATE or DELETE, see :meth:`SparkCompiler._rewrite`) is
    complete once it exists (Spark makes a table by ``CREATE TABLE ... AS`` only when its rows are written), and
    the process may have died while its table was being overwritten: the copy is written over the table again
    before it is dropped, which finishes the statement the process was running.
    """
    dropped = []
    names = [row[1] for row in connection.exec_driver_sql("SHOW TABLES").all()]
    for name in names:
        found = _MARKED.search(name)
        if found and found.group("host") == host_mark() and not alive(int(found.group("pid"))):
            table = name[:found.start()]
            if found.group("rewrite") and table in names:  # (a work table's copy: the work table goes too)
                connection.exec_driver_sql(f"INSERT OVERWRITE TABLE `{table}` SELECT * FROM `{name}`")
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS `{name}`")
            dropped.append(name)
    return dropped


def _formatted(statement: str, parameters: Mapping[str, Any] | Sequence[Any] | None) -> str:
    """Return ``statement`` (pyformat) with its parameters written in as literals."""
    if not parameters:
        return statement.replace("%%", "%")
    if isinstance(parameters, Mapping):
        return statement % {name: literal(value) for name, value in parameters.items()}
    return statement % tuple(literal(value) for value in parameters)


class _Bytes(sa.types.LargeBinary):
    """Bytes passed as they are (written in as ``X'..'`` by :func:`literal`): PyHive has no ``Binary`` wrapper."""

    def bind_processor(self, dialect: sa.Dialect) -> None:  # type: ignore[override]
        return None


def rewrite_statements(table: str, name: str, rows: str, mark: str, hint: str = "") -> list[str]:
    """Return the statements writing ``rows`` (a FROM item) over ``table`` (quoted; ``name`` bare) through a copy
    named with ``mark`` (Spark cannot overwrite a table with a statement that reads it); ``hint`` goes into the
    overwrite's SELECT (``/*+ REBALANCE */`` writes few files of Spark's advisory size).

    >>> for statement in rewrite_statements("`t`", "t", "`t`", "w1_abc123_def456"): print(statement)
    DROP TABLE IF EXISTS `t__rewrite_w1_abc123_def456`
    CREATE TABLE `t__rewrite_w1_abc123_def456` USING parquet AS SELECT * FROM `t`
    INSERT OVERWRITE TABLE `t` SELECT * FROM `t__rewrite_w1_abc123_def456`
    DROP TABLE `t__rewrite_w1_abc123_def456`
    """
    copy = f"`{name}__rewrite_{mark}`"
    return [f"DROP TABLE IF EXISTS {copy}",
            f"CREATE TABLE {copy} USING parquet AS SELECT * FROM {rows}",
            f"INSERT OVERWRITE TABLE {table} SELECT {hint + ' ' if hint else ''}* FROM {copy}",
            f"DROP TABLE {copy}"]


def compaction_statements(name: str, mark: str) -> list[str]:
    """Return the statements writing table ``name`` over itself in few files (:func:`rewrite_statements` with the
    ``REBALANCE`` hint: files of Spark's advisory size with adaptive execution, a shuffle partition each
    without)."""
    return rewrite_statements(f"`{name}`", name, f"`{name}`", mark, hint="/*+ REBALANCE */")


class SparkCompiler(HiveCompiler):
    """PyHive's compiler, keeping an INSERT's column list, with Spark's names for joining strings and for the
    value at a group's least or greatest key (``arg_min``, ``arg_max``: Spark's ``min_by``, ``max_by``).

    >>> v, k = sa.column("v"), sa.column("k")
    >>> print(sa.select(sa.func.arg_min(v, k), sa.func.arg_max(v, k)).compile(dialect=SparkDialect()))
    SELECT min_by(`v`, `k`) AS `arg_min_1`, max_by(`v`, `k`) AS `arg_max_1`
    """

    def visit_insert(self, insert_stmt: Any, **kw: Any) -> str:  # type: ignore[override]
        return compiler.SQLCompiler.visit_insert(self, insert_stmt, **kw)

    def visit_table(self, table: Any, asfrom: bool = False, enclosing_alias: Any = None, **kw: Any) -> str:
        if not asfrom or "TEMPORARY" not in getattr(table, "_prefixes", ()):
            return super().visit_table(table, asfrom=asfrom, enclosing_alias=enclosing_alias, **kw)
        marked = self.preparer.format_table(table)
        if enclosing_alias is not None and enclosing_alias.element is table:
            return marked
        return f"{marked} AS {self.preparer.quote(table.name)}"  # its columns are named by the table's own name

    def visit_delete(self, delete_stmt: Any, **kw: Any) -> str:  # type: ignore[override]
        table = delete_stmt.table
        if delete_stmt.whereclause is None:
            return f"TRUNCATE TABLE {self.preparer.format_table(table)}"
        kept = sa.select(*table.c).where(sa.not_(sa.func.coalesce(delete_stmt.whereclause, sa.false())))
        return self._rewrite(table, kept, **kw)

    def visit_update(self, update_stmt: Any, **kw: Any) -> str:  # type: ignore[override]
        table = update_stmt.table
        values = {(key if isinstance(key, str) else key.key): value for key, value in update_stmt._values.items()}
        chosen = sa.true() if update_stmt.whereclause is None else sa.func.coalesce(update_stmt.whereclause, sa.false())
        rows = sa.select(*(sa.case((chosen, values[column.key]), else_=column).label(column.name)
                           if column.key in values else column for column in table.c))
        return self._rewrite(table, rows, **kw)

    def _rewrite(self, table: sa.Table, rows: sa.Select, **kw: Any) -> str:
        """Return the statements writing ``rows`` over ``table`` through a copy (Spark cannot overwrite a table
        with a statement that reads it)."""
        kw.pop("asfrom", None)
        selected = self.process(rows.subquery("rows"), asfrom=True, **kw)
        return NEXT_STATEMENT.join(rewrite_statements(self.preparer.format_table(table), table.name,
                                                      selected, self.dialect.work_mark))

    def visit_arg_min_func(self, fn: Any, **kw: Any) -> str:
        return f"min_by{self.function_argspec(fn, **kw)}"

    def visit_arg_max_func(self, fn: Any, **kw: Any) -> str:
        return f"max_by{self.function_argspec(fn, **kw)}"

    def visit_aggregate_strings_func(self, fn: Any, **kw: Any) -> str:
        value, separator = fn.clauses
        return f"array_join(collect_list({self.process(value, **kw)}), {self.process(separator, **kw)})"


class SparkTypeCompiler(HiveTypeCompiler):
    """PyHive's type names, every float a double (Spark's FLOAT has four bytes)."""

    def visit_FLOAT(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"

    def visit_REAL(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"

    def visit_DOUBLE(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"


class SparkIdentifierPreparer(HiveIdentifierPreparer):
    """PyHive's quoting, a temporary table's name marked with its process's (:attr:`SparkDialect.work_mark`)."""

    def format_table(self, table: Any, use_schema: bool = True, name: str | None = None) -> str:
        if name is None and "TEMPORARY" in getattr(table, "_prefixes", ()):
            name = f"{table.name}__{self.dialect.work_mark}"
        return super().format_table(table, use_schema, name)


class SparkDDLCompiler(compiler.DDLCompiler):
    """Tables as Spark makes them: columns and their types, stored as Parquet, no constraints; a temporary table
    an ordinary one under its marked name."""

    def visit_create_table(self, create: Any, **kw: Any) -> str:
        return super().visit_create_table(create, **kw).replace("CREATE TEMPORARY TABLE", "CREATE TABLE", 1)

    def create_table_constraints(self, table: sa.Table, **kw: Any) -> str:
        return ""

    def get_column_specification(self, column: sa.Column, **kw: Any) -> str:
        text = f"{self.preparer.format_column(column)} {self.dialect.type_compiler_instance.process(column.type)}"
        default = self.get_column_default_string(column)
        return text if default is None else f"{text} DEFAULT {default}"

    def post_create_table(self, table: sa.Table) -> str:
        return " USING parquet"


# Spark's whole-stage code generation compiles each query into Java methods, and the JVM leaves a method of more
# than 8,000 bytes of bytecode uncompiled (HotSpot's HugeMethodLimit) while Spark only gives up above 65,535: a
# turn folded in one expression (store/backends/spark/turn_fold.py) then ran its generated code in the bytecode interpreter,
# four times slower than Spark's own expression evaluation (measured: School, 400 states of layer 10 through the
# whole turn, 61.0 s against 14.9 s). Spark documents 8000 as the value that matches the JVM.
SESSION_SETTINGS = {"spark.sql.codegen.hugeMethodLimit": "8000"}


class SparkDialect(HiveDialect):
    """SQLAlchemy's view of a Spark Thrift server (``spark://HOST:PORT/DATABASE``, port 10000 by default)."""

    name = "spark"
    driver = "pyhive"
    statement_compiler = SparkCompiler
    ddl_compiler = SparkDDLCompiler
    type_compiler = type_compiler_cls = SparkTypeCompiler
    preparer = SparkIdentifierPreparer

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.work_mark = work_mark(os.getpid())  # this engine's work tables' mark
        self.inserted: Counter[str] = Counter()  # table -> INSERT statements into it this engine sent (see
        # _count_insert): a command's compaction counts the files of the tables it wrote to, and no others
        self.work_tables: set[str] = set()  # this engine's work tables that may exist (see _needed)
    supports_statement_cache = True
    supports_sane_multi_rowcount = False
    colspecs = {**HiveDialect.colspecs, sa.types.LargeBinary: _Bytes}

    @classmethod
    def import_dbapi(cls) -> Any:
        return hive

    def on_connect(self) -> Any:
        """Return what a new session runs first: :data:`SESSION_SETTINGS`."""
        def settle(connection: Any) -> None:
            cursor = connection.cursor()
            for key, value in SESSION_SETTINGS.items():
                cursor.execute(f"SET {key}={value}")
            cursor.close()
        return settle

    def create_connect_args(self, url: sa.URL) -> tuple[list[Any], dict[str, Any]]:
        return [], {"host": url.host or "127.0.0.1", "port": url.port or 10000, "username": url.username,
                    "database": url.database or "default", **url.query}

    def has_table(self, connection: sa.Connection, table_name: str, schema: str | None = None,
                  **kw: Any) -> bool:
        where = schema or connection.engine.url.database or "default"
        rows = connection.exec_driver_sql(f"SHOW TABLES IN `{where}` LIKE '{table_name}'").all()
        return any(row[1] == table_name for row in rows)

    def get_table_names(self, connection: sa.Connection, schema: str | None = None, **kw: Any) -> list[str]:
        where = schema or connection.engine.url.database or "default"
        views = set(self.get_view_names(connection, schema))
        return [row[1] for row in connection.exec_driver_sql(f"SHOW TABLES IN `{where}`").all()
                if not row[2] and row[1] not in views]

    def get_view_names(self, connection: sa.Connection, schema: str | None = None, **kw: Any) -> list[str]:
        where = schema or connection.engine.url.database or "default"
        return [row[1] for row in connection.exec_driver_sql(f"SHOW VIEWS IN `{where}`").all() if not row[2]]

    def do_execute(self, cursor: hive.Cursor, statement: str, parameters: Any, context: Any = None) -> None:
        self.do_execute_no_params(cursor, _formatted(statement, parameters), context)

    def do_execute_no_params(self, cursor: hive.Cursor, statement: str, context: Any = None) -> None:
        for part in statement.split(NEXT_STATEMENT):
            if self._needed(part):
                _sent(cursor, part)
                self._note_dropped(part)
        self._count_insert(cursor, statement)

    def _needed(self, statement: str) -> bool:
        """Return whether ``statement`` must be sent: not a ``DROP TABLE IF EXISTS`` of a work table of this engine
        that it has not created (its mark is this engine's alone, so no other made it: on the server a DROP of
        a missing table is a statement like another, about 0.3 s); note a work table it creates, before it is
        sent (a CREATE that fails may leave it).

        >>> dialect = SparkDialect()
        >>> work = f"`work_value__{dialect.work_mark}`"
        >>> [dialect._needed(f"DROP TABLE IF EXISTS {work}"), dialect._needed(f"CREATE TABLE {work} (x INT)"),
        ...  dialect._needed(f"DROP TABLE IF EXISTS {work}"), dialect._needed("DROP TABLE IF EXISTS `dicegraph_writer`")]
        [False, True, True, True]
        >>> dialect._note_dropped(f"DROP TABLE IF EXISTS {work}"); dialect._needed(f"DROP TABLE IF EXISTS {work}")
        False
        """
        created = _CREATE_TABLE.match(statement)
        if created is not None and created.group("table").endswith(self.work_mark):
            self.work_tables.add(created.group("table"))
            return True
        dropped = _DROP_TABLE.match(statement)
        return (dropped is None or not dropped.group("if_exists") or not dropped.group("table").endswith(self.work_mark)
                or dropped.group("table") in self.work_tables)

    def _note_dropped(self, statement: str) -> None:
        """Note that the work table ``statement`` dropped (once the server has) is gone (:meth:`_needed`)."""
        dropped = _DROP_TABLE.match(statement)
        if dropped is not None:
            self.work_tables.discard(dropped.group("table"))

    def _count_insert(self, cursor: hive.Cursor, statement: str) -> None:
        """Count the inserts into each table (:attr:`inserted`), and compact a work table of this engine every
        :data:`WORK_FILES` inserts into it: a solve reads its work tables at every layer, and Spark opens each of
        their files to do so (measured: a count of a work table of 282 files took 1.2 s, of the graph's edges in
        3 files 0.27 s).

        >>> dialect, sent = SparkDialect(), []
        >>> class Cursor:
        ...     def execute(self, statement, async_): sent.append(statement)
        ...     def poll(self, get_progress_update): return type("Ended", (), {"operationState": 2})  # finished
        >>> for _ in range(WORK_FILES):
        ...     dialect.do_execute_no_params(Cursor(), f"INSERT INTO `work_value__{dialect.work_mark}` SELECT 1")
        >>> [statement.split(" SELECT")[0] for statement in sent[WORK_FILES - 1:]]  # doctest: +ELLIPSIS
        ['INSERT INTO `work_value__w...`', 'DROP TABLE IF EXISTS `work_value__w...__rewrite_w...`', 'CREATE TABLE ...', 'INSERT OVERWRITE TABLE `work_value__w...`', 'DROP TABLE `work_value__w...__rewrite_w...`']
        >>> sorted(dialect.inserted.values())
        [48]
        """
        found = _INSERT_INTO.match(statement)
        if found is None:
            return
        table = found.group("table")
        self.inserted[table] += 1
        if table.endswith(self.work_mark) and self.inserted[table] % WORK_FILES == 0:
            for part in compaction_statements(table, self.work_mark):
                _sent(cursor, part)

    def do_executemany(self, cursor: hive.Cursor, statement: str, parameters: Sequence[Any],
                       context: Any = None) -> None:
        """Run an ``INSERT ... VALUES`` for many rows as a few statements, the rows as one JSON text each
        (:func:`dicegraph.store.backends.spark.bulk.json_inserts`); any other statement once a row."""
        columns = _bulk_columns(statement, context)
        if columns is None:
            for row in parameters:
                self.do_execute(cursor, statement, row, context)
            return
        for part in json_inserts(statement[:statement.index(" VALUES ")] + " ", columns, parameters):
            _sent(cursor, part)
        self._count_insert(cursor, statement)

    def do_begin(self, dbapi_connection: Any) -> None:
        pass

    def do_commit(self, dbapi_connection: Any) -> None:
        pass

    def do_rollback(self, dbapi_connection: Any) -> None:
        pass


def _bulk_columns(statement: str, context: Any) -> list[tuple[str, str]] | None:
    """Return the parameters' keys of an ``INSERT ... VALUES`` of one bind a column, each with its column's Spark
    type, in the statement's column order; None for any other statement."""
    found = _VALUES.match(statement)
    table = getattr(getattr(getattr(context, "compiled", None), "statement", None), "table", None)
    if found is None or not isinstance(table, sa.Table):
        return None
    names = [name.strip().strip("`") for name in found.group("columns").split(",")]
    binds = [part.strip() for part in found.group("binds").split(",")]
    keys = [bind.group(1) for bind in map(_BIND.fullmatch, binds) if bind]
    if len(keys) != len(names) or len(binds) != len(names) or not all(name in table.c for name in names):
        return None
    dialect = context.dialect
    return [(key, table.c[name].type.compile(dialect=dialect)) for key, name in zip(keys, names)]


def _sent(cursor: hive.Cursor, statement: str) -> None:
    """Run ``statement`` on ``cursor``; raise the DB-API's OperationalError, which SQLAlchemy hands on as the
    database's error, when the server stops answering (thrift raises its own transport error, no DB-API one).

    >>> class Gone:
    ...     def execute(self, statement, async_): raise TTransportException(message="TSocket read 0 bytes")
    >>> _sent(Gone(), "SELECT 1")
    Traceback (most recent call last):
    pyhive.exc.OperationalError: the Spark Thrift server stopped answering (TSocket read 0 bytes): see dicegraph spark status, start it again with dicegraph spark start, and run the command again

    A statement that read a table while another connection wrote it over (a rewrite's ``INSERT OVERWRITE``)
    finds a file of it gone; it is run again, at most :data:`READ_RETRIES` times, unless it is itself an
    overwrite (its job failed, so it wrote nothing).

    >>> class Overwritten:
    ...     calls = 0
    ...     def poll(self, get_progress_update): return type("Ended", (), {"operationState": 2})  # finished
    ...     def execute(self, statement, async_):
    ...         Overwritten.calls += 1
    ...         if Overwritten.calls == 1: raise hive.OperationalError("[FAILED_READ_FILE.FILE_NOT_EXIST] part-0")
    >>> _sent(Overwritten(), "SELECT count(*) FROM policy"), Overwritten.calls
    (None, 2)
    """
    for attempt in range(READ_RETRIES + 1):
        try:
            _run_to_the_end(cursor, statement)
            return
        except TTransportException as error:
            raise hive.OperationalError(f"the Spark Thrift server stopped answering ({error}): see dicegraph "
                                        "spark status, start it again with dicegraph spark start, and run the "
                                        "command again") from None
        except hive.OperationalError as error:
            if (attempt == READ_RETRIES or _FILE_GONE not in str(error)
                    or statement.lstrip().upper().startswith("INSERT OVERWRITE")):
                raise
            time.sleep(0.5 * (attempt + 1))


def _run_to_the_end(cursor: hive.Cursor, statement: str) -> None:
    """Start ``statement`` on the server and wait for it to end, asking every :data:`POLL_FIRST` seconds at first,
    then twice as long each time up to :data:`POLL_MOST`; raise the DB-API's OperationalError with the server's
    message where it failed, and cancel it on the server where this process is interrupted (Ctrl-C), so that no
    job of an abandoned command runs on.

    In the main thread a Ctrl-C is noted, not raised where it lands: raised
    inside a call to the server, it would leave the Thrift connection halfway
    through an answer, and the cancel sent on it would fail, leaving the
    statement running on the cluster. The statement is cancelled once the call
    is back, then KeyboardInterrupt raised.

    >>> from TCLIService.ttypes import TOperationState
    >>> class Cursor:
    ...     states = [TOperationState.RUNNING_STATE, TOperationState.ERROR_STATE]
    ...     def execute(self, statement, async_): self.said = (statement, async_)
    ...     def poll(self, get_progress_update):
    ...         return type("Status", (), {"operationState": self.states.pop(0), "errorMessage": "[X] no",
    ...                                    "sqlState": None, "errorCode": 0})
    >>> _run_to_the_end(Cursor(), "SELECT 1")
    Traceback (most recent call last):
    pyhive.exc.OperationalError: TExecuteStatementResp(status=TStatus(statusCode=3, infoMessages=None, sqlState=None, errorCode=0, errorMessage='[X] no'), operationHandle=None)
    >>> import signal
    >>> class PressedWhileAsking(Cursor):  # Ctrl-C while the server is asked: the answer comes, then the cancel
    ...     def poll(self, get_progress_update):
    ...         signal.raise_signal(signal.SIGINT)
    ...         print("answered")
    ...         return type("Status", (), {"operationState": TOperationState.RUNNING_STATE})
    ...     def cancel(self): print("cancelled")
    >>> try:
    ...     _run_to_the_end(PressedWhileAsking(), "SELECT 1")
    ... except KeyboardInterrupt:
    ...     print("interrupted")
    answered
    cancelled
    interrupted
    >>> class Interrupted(Cursor):  # an interrupt raised where none was noted (off the main thread): cancelled too
    ...     def poll(self, get_progress_update): raise KeyboardInterrupt
    ...     def cancel(self): print("cancelled")
    >>> try:
    ...     _run_to_the_end(Interrupted(), "SELECT 1")
    ... except KeyboardInterrupt:
    ...     print("interrupted")
    cancelled
    interrupted
    """
    from TCLIService import ttypes

    pressed = threading.Event()
    noting = threading.current_thread() is threading.main_thread()  # only the main thread may set a handler
    previous = signal.signal(signal.SIGINT, lambda *_: pressed.set()) if noting else None
    try:
        cursor.execute(statement, async_=True)
        wait = POLL_FIRST
        while not pressed.is_set():
            status = cursor.poll(get_progress_update=False)
            state = status.operationState
            if state == ttypes.TOperationState.FINISHED_STATE:
                return
            if state not in (ttypes.TOperationState.INITIALIZED_STATE, ttypes.TOperationState.PENDING_STATE,
                             ttypes.TOperationState.RUNNING_STATE):
                said = status.errorMessage or ""
                if state == ttypes.TOperationState.TIMEDOUT_STATE and "timed out" not in said:
                    said = f"{said} the statement timed out".strip()
                elif not said:
                    said = f"the statement ended {ttypes.TOperationState._VALUES_TO_NAMES.get(state, state)}"
                raise hive.OperationalError(ttypes.TExecuteStatementResp(status=ttypes.TStatus(
                    statusCode=ttypes.TStatusCode.ERROR_STATUS, errorMessage=said, sqlState=status.sqlState,
                    errorCode=status.errorCode)))
            if not pressed.is_set():
                time.sleep(wait)
            wait = min(2 * wait, POLL_MOST)
    except KeyboardInterrupt:
        _cancel_quietly(cursor)
        raise
    finally:
        if noting:
            signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
    _cancel_quietly(cursor)
    raise KeyboardInterrupt


def _cancel_quietly(cursor: hive.Cursor) -> None:
    """Cancel ``cursor``'s statement on the server, as a courtesy: the interrupt is what the user is told of."""
    try:
        cursor.cancel()
    except Exception:  # noqa: BLE001
        pass


RELATION_CACHE = "spark.sql.filesourceTableRelationCacheSize"  # must be 0 (docs/spark.md)


def relation_cache_size(cursor: Any) -> int:
    """Return the server's :data:`RELATION_CACHE`: how many tables' file lists a connection keeps from its first
    read of them (Spark's default 1,000). Above 0, a connection misses the rows that others write after it read
    a table (measured: a count stayed 0 after another connection's insert) and fails on files they overwrote.

    >>> class Server:
    ...     def execute(self, statement): self.said = statement
    ...     def fetchall(self): return [(self.said.split()[1], "1000")]
    >>> relation_cache_size(Server())
    1000
    """
    cursor.execute(f"SET {RELATION_CACHE}")
    return int(cursor.fetchall()[0][1])


def reachable(url: sa.URL, create: bool) -> None:
    """Check that a Spark Thrift server answers at ``url`` and holds its database, creating the database when
    ``create``; raise DatabaseError in one line saying what is wrong and what to do."""
    host, port, name = url.host or "127.0.0.1", url.port or 10000, url.database or "default"
    quiet = logging.getLogger("thrift.transport.TSocket")
    level, quiet.level = quiet.level, logging.CRITICAL  # it logs the refused connection on its own
    try:
        connection = hive.connect(host=host, port=port, username=url.username, database="default")
    except Exception:  # thrift's transport error, or the server hanging up on us
        raise DatabaseError(f"no Spark Thrift server answers at {host}:{port}: start one with dicegraph spark start "
                            "(or check the URL's host and port)") from None
    finally:
        quiet.level = level
    try:
        cursor = connection.cursor()
        if (cached := relation_cache_size(cursor)) != 0:
            raise DatabaseError(f"the Spark Thrift server at {host}:{port} keeps each connection's list of a table's "
                                f"files (spark.sql.filesourceTableRelationCacheSize={cached}), so a connection would not "
                                "see what others write: start it with --conf spark.sql.filesourceTableRelationCacheSize=0 "
                                "(dicegraph spark start does)")
        cursor.execute("SHOW DATABASES")
        if name.lower() not in {row[0].lower() for row in cursor.fetchall()}:
            if not create:
                raise NoDatabase(f"no database {name!r} on the Spark server at {host}:{port} (build a game first: "
                                 "dicegraph build GAME)")
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{name}`")
    finally:
        connection.close()
