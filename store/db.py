"""Opening a dicegraph database: engine from a URL, pragmas, schema revision check.

>>> engine = open_database("sqlite://", create=True)
>>> schema_revision(engine) == head_revision()
True
"""

from __future__ import annotations

import functools
import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from dicegraph import migrations
from dicegraph.store.backends import backend_of, supported, url_backend
from dicegraph.store.backends.record import Waiting
from dicegraph.store.errors import DatabaseError, NoDatabase
from dicegraph.store.schema import VIEWS, metadata
from dicegraph.store.defaults import DEFAULT_URL, ENV_VAR


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
    backend = url_backend(parsed)
    if backend is not None and backend.embedded and parsed.database is not None and not parsed.database.strip():
        raise DatabaseError(f"{shown_url(chosen)!r} names no file: give {backend.name}:///FILE (or {backend.name}:///:memory: "
                            "for a database in memory, gone when the command ends)")
    return chosen


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
    backend = url_backend(url)
    if backend is None or not backend.embedded or not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def _check_file_kind(title: str, header: tuple[int, bytes], path: Path, url: str) -> None:
    """Raise DatabaseError when ``path`` holds something other than a ``backend`` database (an empty file, or
    none, is a new database): DuckDB would open a JSON or CSV file as an empty database in memory, and keep
    nothing of what is built in it."""
    offset, magic = header
    try:
        with open(path, "rb") as source:
            head = source.read(offset + len(magic))
    except FileNotFoundError:
        return
    except OSError as error:
        raise DatabaseError(f"cannot read database {shown_url(url)!r}: {error.strerror or error}") from None
    if head and head[offset:] != magic:
        raise DatabaseError(f"cannot read database {shown_url(url)!r}: {path} is not a {title} database file; "
                            "name a new file (or the database's own)")


def is_in_memory(url: str) -> bool:
    """Return whether ``url`` names a database held in memory, which lives as long as its engine.

    >>> is_in_memory("sqlite://"), is_in_memory("duckdb:///:memory:"), is_in_memory("sqlite:///game.db")
    (True, True, False)
    """
    parsed = sa.make_url(url)
    backend = url_backend(parsed)
    return backend is not None and backend.embedded and parsed.database in (None, ":memory:")


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
                  on_wait: Waiting | None = None, memory: str | None = None, schema_seen: bool = False) -> sa.Engine:
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
    (:func:`dicegraph.store.memory.memory_bytes`: by default half of this machine's), spilling past
    it to ``FILE.tmp`` beside its file. ``schema_seen`` says the caller found this database's schema at the head
    revision when it opened it before (a session's second command), so that it is not read again: on a server
    that is two statements a command.
    """
    url_text = database_url(url)
    parsed = sa.make_url(url_text)
    path = _database_file(parsed)
    if path is not None and path.is_dir():
        raise DatabaseError(f"{path} is a folder, not a database file: name a file in it, e.g. {path / 'dicegraph.db'}")
    if not create and not database_exists(url_text):
        raise NoDatabase(f"no database at {path} (build a game first: dicegraph build GAME; dicegraph games lists them)")
    if path is not None and not path.parent.is_dir():
        raise DatabaseError(f"no folder {path.parent} to hold the database {path.name} (create it first)")
    backend = url_backend(parsed)
    if backend is None:
        raise DatabaseError(f"dicegraph does not run on {parsed.drivername.partition('+')[0]!r} databases; {supported()}")
    if path is not None and backend.file_header is not None:
        _check_file_kind(backend.title, backend.file_header, path, url_text)
    in_memory = is_in_memory(url_text)
    read_only = read_only and backend.keeps_read_only(in_memory)
    options = backend.engine_options(parsed, path, read_only, memory)
    if backend.embedded and in_memory:
        # one connection, whichever thread asks: each connection of its own would be an empty database of its own
        # (the session using it lets one thread in at a time)
        options["poolclass"] = sa.pool.StaticPool
    backend.before_open(parsed, create)
    try:
        engine = sa.create_engine(parsed, **options)
    except ImportError as error:
        raise DatabaseError(f"cannot open {shown_url(url_text)!r}: its driver ({error.name}) is not installed; "
                            f"{supported()}") from None
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as error:
        raise DatabaseError(f"cannot open {shown_url(url_text)!r}: {str(error).splitlines()[0]}; {supported()}") from None
    engine = backend.configure(engine, options, read_only, on_wait)
    try:
        backend.wait_for_file(engine, on_wait)
        if not schema_seen:
            _check_schema(engine, read_only)
        if not read_only:
            backend.after_open(engine)
    except sa.exc.DBAPIError as error:
        engine.dispose()
        said = " ".join(str(error.orig).split())  # one line, however many the driver wrote
        raise DatabaseError(f"cannot read database {shown_url(url_text)!r}: {said}") from None
    except DatabaseError:
        engine.dispose()
        raise
    return engine


def process_shared_url(connection: sa.Connection) -> str | None:
    """Return the URL by which worker processes open ``connection``'s database to solve beside it, where its backend lets
    them share its file (SQLite); else None.

    >>> process_shared_url(open_database("sqlite://", create=True).connect()) is None
    True
    """
    url = connection.engine.url
    if not backend_of(connection).processes_share_file or _database_file(url) is None:
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
    backend = backend_of(connection)
    if count < 1 or not backend.parallel_connections or (backend.embedded and _database_file(url) is None):
        yield []
        return
    engine = open_database(url.render_as_string(hide_password=False), read_only=True) \
        if backend.readers_open_their_own else connection.engine
    opened: list[sa.Connection] = []
    try:
        for _ in range(count):
            opened.append(engine.connect())
        with backend.sharing_processors(connection, len(opened) + 1):
            yield opened
    finally:
        for other in opened:
            other.close()
        if engine is not connection.engine:
            engine.dispose()


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
        raise NoDatabase("the database is empty (build a game first: dicegraph build GAME; dicegraph games lists them)")
    backend = backend_of(engine)
    if not backend.migrated:
        if current is not None:
            raise DatabaseError(f"database schema is at revision {current!r}, older than {head!r}, and dicegraph "
                                f"cannot migrate a {backend.title} database: build its games again in a new one")
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
    table has its columns alone (no keys or indexes: :mod:`dicegraph.store.backends.spark.dialect`)."""
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
