"""Opening a dicegraph database: engine from a URL, pragmas, schema revision check.

>>> engine = open_database("sqlite://", create=True)
>>> schema_revision(engine) == head_revision()
True
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.ddl.impl import DefaultImpl
from alembic.script import ScriptDirectory

from dicegraph import migrations
from dicegraph.store.errors import DatabaseError
from dicegraph.store.schema import VIEWS, metadata

sa.dialects.registry.register("spark", "dicegraph.store.spark.dialect", "SparkDialect")
sa.dialects.registry.register("duckdb", "dicegraph.store.duckdb_dialect", "DuckDBDialect")  # duckdb-engine's, statements cached

class AlembicDuckDBImpl(DefaultImpl):
    """Lets Alembic run on DuckDB (``duckdb:///...`` through duckdb-engine), which it does not know by itself."""

    __dialect__ = "duckdb"


class AlembicSparkImpl(DefaultImpl):
    """Lets Alembic read a Spark database's revision (it never migrates one: :func:`create_at_head`)."""

    __dialect__ = "spark"
    transactional_ddl = False


DEFAULT_URL = "sqlite:///dicegraph.db"
BACKENDS = ("sqlite", "duckdb", "postgresql", "spark")  # the backends dicegraph runs on
EMBEDDED = ("sqlite", "duckdb")  # the backends whose database is a file (or memory)
FILE_HEADERS = {"sqlite": (0, b"SQLite format 3\x00"), "duckdb": (8, b"DUCK")}  # where each file says what it is
# DuckDB never installs nor loads an extension by itself (it would download one from the internet)
DUCKDB_SETTINGS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
SUPPORTED = ("use sqlite:///FILE (built in), duckdb:///FILE (pip install 'dicegraph[duckdb]'), "
             "postgresql+psycopg://USER@HOST/DB (pip install 'dicegraph[postgres]') or spark://HOST:PORT/DB "
             "(pip install 'dicegraph[spark]'; dicegraph spark start runs one here)")
UNMIGRATED = ("spark",)  # backends Alembic cannot drive: their schema is made at the head from dicegraph.store.schema
ENV_VAR = "DICEGRAPH_DB"
SQLITE_PRAGMAS = ("cache_size = -262144", "temp_store = MEMORY")
MEMORY_VAR = "DICEGRAPH_MEMORY"  # the memory DuckDB may use (--memory): a size such as 8GB, or a share such as 50%
DEFAULT_MEMORY = "50%"  # of this machine's memory: DuckDB spills to its temporary folder past it, rather than grow
MEMORY_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
                "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
BUSY_TIMEOUT_MS = 1000  # how long SQLite waits for a lock before dicegraph says it is waiting (and waits on)
Waiting = Callable[[str], None]  # told once what a process is waiting for


def shown_url(url: str | sa.URL) -> str:
    """Return a database URL as messages show it: its password masked, also in text that is no URL.

    >>> shown_url("postgresql+psycopg://alice:secret@db.example/games")
    'postgresql+psycopg://alice:***@db.example/games'
    >>> shown_url("not a url://bob:hunter2@x"), shown_url("postgresql://al:p@ss@h/db"), shown_url("sqlite:///a:b.db")
    ('not a url://bob:***@x', 'postgresql://al:***@h/db', 'sqlite:///a:b.db')
    """
    text = url.render_as_string(hide_password=False) if isinstance(url, sa.URL) else str(url)
    return re.sub(r"(://[^:/@\s]*):[^/\s]*@", r"\1:***@", text)  # to the last @ before the path: all of it


def database_url(url: str | None = None) -> str:
    """Return ``url``, else ``$DICEGRAPH_DB``, else the default ``sqlite:///dicegraph.db``; raise DatabaseError for
    text that is no database URL (a file's path, say), naming the URL to give instead, and for a URL of an
    embedded database that names no file (``sqlite:///``, as ``sqlite:///$DB`` gives with ``$DB`` unset): a
    database in memory is asked for by name (``sqlite://``, ``sqlite:///:memory:``).

    >>> database_url("games.db")
    Traceback (most recent call last):
    ...
    dicegraph.store.errors.DatabaseError: 'games.db' is not a database URL: give sqlite:///games.db for a SQLite file (or duckdb:///games.db, postgresql://HOST/NAME)
    >>> database_url("sqlite:///")
    Traceback (most recent call last):
    ...
    dicegraph.store.errors.DatabaseError: 'sqlite:///' names no file: give sqlite:///FILE (or sqlite:///:memory: for a database in memory, gone when the command ends)
    """
    chosen = url or os.environ.get(ENV_VAR) or DEFAULT_URL
    try:
        parsed = sa.make_url(chosen)
    except sa.exc.ArgumentError:
        raise DatabaseError(f"{shown_url(chosen)!r} is not a database URL: give sqlite:///{chosen} for a SQLite "
                            f"file (or duckdb:///{chosen}, postgresql://HOST/NAME)") from None
    if chosen.partition("://")[2].partition("/")[0].count("@") > 1:
        raise DatabaseError(f"{shown_url(chosen)!r} is not a database URL: write an @ in a user's name or password "
                            "as %40")
    backend = parsed.get_backend_name()
    if backend in EMBEDDED and parsed.database is not None and not parsed.database.strip():
        raise DatabaseError(f"{shown_url(chosen)!r} names no file: give {backend}:///FILE (or {backend}:///:memory: "
                            "for a database in memory, gone when the command ends)")
    return chosen


def memory_bytes(text: str | None = None) -> int:
    """Return the memory DuckDB may use, in bytes: ``text`` (a size such as ``8GB``, ``512MiB``, or a share of
    this machine's memory such as ``50%``), else ``$DICEGRAPH_MEMORY``, else :data:`DEFAULT_MEMORY`.

    >>> memory_bytes("8GB"), memory_bytes("1.5 GiB")
    (8000000000, 1610612736)
    >>> memory_bytes("100%") == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    True
    """
    text = (text or os.environ.get(MEMORY_VAR) or DEFAULT_MEMORY).strip()
    how = f"memory {text!r}: give a size such as 8GB or 512MiB, or a share of this machine's memory such as 50%"
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 < share <= 100:
                raise ValueError
            return int(share / 100 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        number = text.rstrip("BbKkMmGgTtIi ")
        unit = text[len(number):].strip().upper()
        size = int(float(number) * MEMORY_UNITS[unit])
    except (ValueError, KeyError):
        raise DatabaseError(how) from None
    if size < 2**26:  # below 64 MiB DuckDB cannot even load a graph
        raise DatabaseError(f"{how} (at least 64MiB)")
    return size


def alembic_config() -> Config:
    """Return the Alembic configuration of the migrations shipped with dicegraph."""
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    return config


@functools.cache
def head_revision() -> str:
    """Return the schema revision this dicegraph writes (read from the migrations once a process)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()  # type: ignore[return-value]


def schema_revision(engine: sa.Engine) -> str | None:
    """Return the schema revision stored in the database (None for an empty database); raise DatabaseError when
    its ``alembic_version`` table holds several (changed outside dicegraph: no command could say which is true)."""
    with engine.connect() as connection:
        heads = MigrationContext.configure(connection).get_current_heads()
    if len(heads) > 1:
        raise DatabaseError(f"the database's alembic_version table holds {len(heads)} revisions ({', '.join(heads)}) "
                            "where dicegraph keeps one: it was changed outside dicegraph; restore a copy of the "
                            f"file, or keep the one row that names its schema (this dicegraph's is {head_revision()})")
    return heads[0] if heads else None


def _database_file(url: sa.URL) -> Path | None:
    """Return the file an embedded database (SQLite, DuckDB) lives in; None for servers and memory."""
    database = url.database
    if url.get_backend_name() not in ("sqlite", "duckdb") or not database or database == ":memory:" \
            or database.startswith("file:"):
        return None
    return Path(database)


def _check_file_kind(backend: str, path: Path, url: str) -> None:
    """Raise DatabaseError when ``path`` holds something other than a ``backend`` database (an empty file, or
    none, is a new database): DuckDB would open a JSON or CSV file as an empty database in memory, and keep
    nothing of what is built in it."""
    offset, magic = FILE_HEADERS[backend]
    try:
        with open(path, "rb") as source:
            head = source.read(offset + len(magic))
    except FileNotFoundError:
        return
    except OSError as error:
        raise DatabaseError(f"cannot read database {shown_url(url)!r}: {error.strerror or error}") from None
    if head and head[offset:] != magic:
        name = {"sqlite": "SQLite", "duckdb": "DuckDB"}[backend]
        raise DatabaseError(f"cannot read database {shown_url(url)!r}: {path} is not a {name} database file; "
                            "name a new file (or the database's own)")


def _configure_sqlite(engine: sa.Engine, read_only: bool, on_wait: Waiting | None) -> None:
    """Exact transactions, WAL, a busy timeout, pragmas, optional read-only.

    A read-only engine on a file opens it in SQLite's read-only mode (see
    :func:`_read_only_sqlite`); on anything else it sets ``query_only``.

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
        for pragma in SQLITE_PRAGMAS + (f"busy_timeout = {BUSY_TIMEOUT_MS}",):
            cursor.execute(f"PRAGMA {pragma}")
        if read_only and engine.url.database and engine.url.database.startswith("file:"):
            cursor.execute("PRAGMA query_only = ON")  # a URI the user wrote: keep it as it is, refuse writes
        elif not read_only:
            try:
                cursor.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError:
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


def _read_only_sqlite(path: Path) -> Callable[[], sqlite3.Connection]:
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
    return lambda: sqlite3.connect(address, uri=True, check_same_thread=False)


def is_in_memory(url: str) -> bool:
    """Return whether ``url`` names a database held in memory, which lives as long as its engine.

    >>> is_in_memory("sqlite://"), is_in_memory("duckdb:///:memory:"), is_in_memory("sqlite:///game.db")
    (True, True, False)
    """
    parsed = sa.make_url(url)
    return parsed.get_backend_name() in EMBEDDED and parsed.database in (None, ":memory:")


def in_memory_url(url: str) -> bool:
    """Return whether ``url`` is a URL naming a database held in memory (False for any other text).

    >>> in_memory_url("sqlite://"), in_memory_url("sqlite:///g.db"), in_memory_url("no url")
    (True, False, False)
    """
    try:
        return is_in_memory(url)
    except sa.exc.ArgumentError:
        return False


def database_exists(url: str | None = None) -> bool:
    """Return False when ``url`` names a SQLite or DuckDB file that is not there (True for servers and memory)."""
    try:
        path = _database_file(sa.make_url(database_url(url)))
    except sa.exc.ArgumentError:
        return True  # let open_database report the bad URL
    return path is None or path.exists()


def open_database(url: str | None = None, *, create: bool = False, read_only: bool = False,
                  on_wait: Waiting | None = None, memory: str | None = None) -> sa.Engine:
    """Return an engine on a dicegraph database whose schema is at the head revision.

    A missing SQLite or DuckDB file is created only with ``create``. An older
    schema is upgraded (not in ``read_only`` mode, where it is refused); a
    newer one, or a file that is not a dicegraph database, raises
    DatabaseError. When another process holds the database (SQLite: its
    write lock, for a writing engine; DuckDB: the file), ``on_wait`` is told
    once and the engine waits for it. A ``read_only`` engine on a file opens
    it in the backend's read-only mode, so it can never write it: SQLite's
    ``mode=ro``, DuckDB's ``read_only`` (which also lets several viewers
    share the file; a writer waits for them). DuckDB uses at most ``memory``
    (:func:`memory_bytes`: by default half of this machine's), spilling past
    it to ``FILE.tmp`` beside its file.
    """
    url_text = database_url(url)
    parsed = sa.make_url(url_text)
    path = _database_file(parsed)
    if path is not None and path.is_dir():
        raise DatabaseError(f"{path} is a folder, not a database file: name a file in it, e.g. {path / 'dicegraph.db'}")
    if not create and not database_exists(url_text):
        raise DatabaseError(f"no database at {path} (build a game first: dicegraph build GAME; dicegraph games lists them)")
    if path is not None and not path.parent.is_dir():
        raise DatabaseError(f"no folder {path.parent} to hold the database {path.name} (create it first)")
    backend = parsed.get_backend_name()
    if path is not None:
        _check_file_kind(backend, path, url_text)
    if backend == "sqlite" and is_in_memory(url_text):
        read_only = False  # a private in-memory database: nothing to protect, and it starts empty
    if backend not in BACKENDS:
        raise DatabaseError(f"dicegraph does not run on {backend!r} databases; {SUPPORTED}")
    # SQLite: query runs a statement in a worker thread (to stop it at a time limit); never two at once
    options: dict[str, Any] = {"connect_args": {"check_same_thread": False}} if backend == "sqlite" else {}
    if backend == "sqlite" and read_only and path is not None:
        options["creator"] = _read_only_sqlite(path)
    if backend in EMBEDDED and is_in_memory(url_text):
        # one connection, whichever thread asks: each connection of its own would be an empty database of its own
        # (the session using it lets one thread in at a time)
        options["poolclass"] = sa.pool.StaticPool
    if backend == "duckdb":
        # at most this much memory, spilling past it to DuckDB's temporary folder (FILE.tmp beside its file)
        config: dict[str, Any] = {"memory_limit": f"{memory_bytes(memory) // 2**20}MiB", **DUCKDB_SETTINGS}
        options["connect_args"] = {"config": config}
    if backend == "duckdb" and read_only and path is not None:
        # writes refused by DuckDB, and with them every file but the database's (read_text, glob, COPY, ATTACH...);
        # other readers may open the file too
        options["connect_args"] = {"read_only": True, "config": {**config, "enable_external_access": False}}
    if backend == "spark":
        from dicegraph.store.spark.dialect import reachable

        reachable(parsed, create)
    try:
        engine = sa.create_engine(parsed, **options)
    except ImportError as error:
        raise DatabaseError(f"cannot open {shown_url(url_text)!r}: its driver ({error.name}) is not installed; "
                            f"{SUPPORTED}") from None
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as error:
        raise DatabaseError(f"cannot open {shown_url(url_text)!r}: {str(error).splitlines()[0]}; {SUPPORTED}") from None
    if backend == "sqlite":
        _configure_sqlite(engine, read_only, on_wait)
    if "read_only" in options.get("connect_args", {}):
        engine = _shared_if_open_here(engine, parsed, config)
    try:
        _wait_for_file(engine, on_wait)
        _check_schema(engine, read_only)
        if backend == "spark" and not read_only:
            from dicegraph.store.spark.dialect import drop_leftovers

            with engine.connect() as connection:
                drop_leftovers(connection)  # what killed processes of this machine left: no transaction took it back
    except sa.exc.DBAPIError as error:
        engine.dispose()
        said = " ".join(str(error.orig).split())  # one line, however many the driver wrote
        raise DatabaseError(f"cannot read database {shown_url(url_text)!r}: {said}") from None
    except DatabaseError:
        engine.dispose()
        raise
    return engine


def sqlite_file_url(connection: sa.Connection) -> str | None:
    """Return the URL by which another process opens ``connection``'s database when it is a SQLite file; else None.

    >>> sqlite_file_url(open_database("sqlite://", create=True).connect()) is None
    True
    """
    url = connection.engine.url
    if url.get_backend_name() != "sqlite" or _database_file(url) is None:
        return None
    return url.render_as_string(hide_password=False)


@contextmanager
def side_connections(connection: sa.Connection, count: int) -> Iterator[list[sa.Connection]]:
    """Yield up to ``count`` more connections to ``connection``'s database, for work in other threads; close them after.

    They see what ``connection`` has committed, not its open transaction,
    and write only temporary tables of their own. On SQLite they open the
    file read-only (the writing engine's BEGIN IMMEDIATE would wait for
    ``connection``'s write lock); DuckDB's share its database in this
    process. None where a database lives in one connection's memory.

    >>> engine = open_database("sqlite://", create=True)
    >>> with engine.connect() as connection, side_connections(connection, 2) as others:
    ...     others
    []
    """
    url = connection.engine.url
    backend = url.get_backend_name()
    if count < 1 or (backend != "postgresql" and _database_file(url) is None):
        yield []
        return
    engine = open_database(url.render_as_string(hide_password=False), read_only=True) if backend == "sqlite" \
        else connection.engine
    opened: list[sa.Connection] = []
    try:
        for _ in range(count):
            opened.append(engine.connect())
        yield opened
    finally:
        for other in opened:
            other.close()
        if engine is not connection.engine:
            engine.dispose()


def _shared_if_open_here(engine: sa.Engine, url: sa.URL, config: dict[str, Any]) -> sa.Engine:
    """Return ``engine`` (DuckDB, read-only), or, when this process already has the file open for writing (DuckDB
    refuses a second configuration of one file in a process), an engine sharing that open database: other
    processes are kept out by the writer anyway, and viewing still writes nothing (``dicegraph.store.query`` guards)."""
    try:
        engine.connect().close()
        return engine
    except sa.exc.DBAPIError as error:
        if "different configuration" not in str(error.orig):
            return engine  # waiting for another process, or a real error: _wait_for_file handles both
    engine.dispose()
    return sa.create_engine(url, connect_args={"config": config})


def _wait_for_file(engine: sa.Engine, on_wait: Waiting | None) -> None:
    """Connect once, waiting while another process holds a DuckDB file (DuckDB lets one process open it)."""
    told = False
    while True:
        try:
            engine.connect().close()
            return
        except sa.exc.DBAPIError as error:
            if "lock" not in str(error.orig).lower() or engine.dialect.name != "duckdb":
                raise
            if not told and on_wait is not None:
                on_wait(_waiting_for(str(error.orig), engine.url.database or "the database"))
            told = True
            time.sleep(0.5)


def _waiting_for(message: str, database: str) -> str:
    """Return the line that says which process holds a DuckDB file, from DuckDB's lock error (it names the PID),
    and that this one waits; a ``dicegraph serve`` keeps the file until it is stopped, which the line says.

    >>> _waiting_for('Conflicting lock is held in /usr/bin/python3 (PID 99999999). However', 'g.duckdb')
    'another process (PID 99999999, /usr/bin/python3) has g.duckdb open; waiting for it to finish (Ctrl-C to give up)'
    """
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


def _check_schema(engine: sa.Engine, read_only: bool) -> None:
    head = head_revision()
    current = schema_revision(engine)
    if current == head:
        return
    known = {script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()}
    if current is not None and current not in known:
        raise DatabaseError(
            f"database schema revision {current!r} was written by a newer dicegraph "
            f"(this one knows up to {head!r}); upgrade dicegraph to use it"
        )
    if current is None and _has_foreign_tables(engine):
        raise DatabaseError("the database holds tables but no dicegraph schema; use a new file")
    if read_only and current is None:
        raise DatabaseError("the database is empty (build a game first: dicegraph build GAME; dicegraph games lists them)")
    if engine.dialect.name in UNMIGRATED:
        if current is not None:
            raise DatabaseError(f"database schema is at revision {current!r}, older than {head!r}, and dicegraph "
                                f"cannot migrate a {engine.dialect.name} database: build its games again in a new one")
        create_at_head(engine)
        return
    if read_only:
        raise DatabaseError(
            f"database schema is at revision {current!r}, older than {head!r}: "
            "upgrade it with: dicegraph upgrade"
        )
    upgrade(engine)


def create_at_head(engine: sa.Engine) -> None:
    """Make the head schema in an empty database from :mod:`dicegraph.store.schema`'s tables and views, and record the head
    revision as Alembic does (``alembic_version``): the migrations' equivalent where Alembic cannot run. On Spark a
    table has its columns alone (no keys or indexes: :mod:`dicegraph.store.spark.dialect`)."""
    version = sa.Table("alembic_version", sa.MetaData(), sa.Column("version_num", sa.String(32), nullable=False))
    with engine.begin() as connection:
        for table in metadata.sorted_tables:
            connection.execute(sa.schema.CreateTable(table))
        for name, view in VIEWS.items():
            connection.execute(sa.schema.CreateView(view(), name))
        connection.execute(sa.schema.CreateTable(version))  # last: an interrupted creation is no dicegraph schema
        connection.execute(sa.insert(version).values(version_num=head_revision()))


def _has_foreign_tables(engine: sa.Engine) -> bool:
    return bool(sa.inspect(engine).get_table_names())


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Migrate the database to ``revision`` in one transaction."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


@contextmanager
def _made_then_dropped(server_url: str, make: str, drop: tuple[str, ...]) -> Iterator[None]:
    """Run ``make`` on the PostgreSQL server of ``server_url`` (outside a transaction), yield, then run ``drop``."""
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(make)
        try:
            yield
        finally:
            with admin.connect() as connection:
                for statement in drop:
                    connection.exec_driver_sql(statement)
    finally:
        admin.dispose()


@contextmanager
def scratch_database(server_url: str, prefix: str = "dicegraph_scratch") -> Iterator[str]:
    """Create a database with a fresh name on the PostgreSQL server of ``server_url``; yield its URL; drop it.

    For tests and benchmarks: ``server_url`` names any database there whose
    user may create databases.
    """
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with _made_then_dropped(server_url, f"CREATE DATABASE {name}", (f"DROP DATABASE {name} WITH (FORCE)",)):
        yield sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)


@contextmanager
def scratch_reader(url: str) -> Iterator[str]:
    """Yield ``url`` as a login role with a fresh name that reads every table and no server file
    (``pg_read_all_data``), the role ``query`` and the explorer's SQL console are meant to run as on PostgreSQL;
    drop the role after. For tests and benchmarks: ``url``'s user may create roles."""
    name = f"dicegraph_reader_{uuid.uuid4().hex[:10]}"
    with _made_then_dropped(url, f"CREATE ROLE {name} LOGIN IN ROLE pg_read_all_data",
                            (f"DROP OWNED BY {name}", f"DROP ROLE {name}")):
        yield sa.make_url(url).set(username=name).render_as_string(hide_password=False)
