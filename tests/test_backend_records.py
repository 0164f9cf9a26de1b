"""Backends as records (:mod:`dicegraph.store.backends`): each database resolves to its backend's record when it
opens, the records say what each backend can do, and docs/backends.md's table is what they say."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
import sqlalchemy as sa

from dicegraph.store.backends import BACKENDS, backend_named, backend_of, url_backend
from dicegraph.store.backends.record import Backend
from dicegraph.store.db import open_database
from dicegraph.store.errors import DatabaseError


def test_the_docs_table_is_what_the_records_say() -> None:
    """docs/backends.md's table is generated from the records; regenerate it with ``python -m tests.backend_tables``."""
    from tests.backend_tables import PAGE, page

    assert PAGE.read_text() == page(), "docs/backends.md's table is stale: run .venv/bin/python -m tests.backend_tables"


def test_every_record_is_a_backend_with_its_own_folder_and_only_the_backends_methods() -> None:
    """One record a folder (``store/backends/<name>/``), each a :class:`Backend` whose methods are the base's
    (a record cannot add a way of its own that nothing calls), every fact saying what it means."""
    folder = Path(inspect.getfile(Backend)).parent
    assert sorted(path.name for path in folder.iterdir() if (path / "__init__.py").exists()) == \
        sorted(backend.name for backend in BACKENDS)
    shared = {name for name, member in vars(Backend).items() if inspect.isfunction(member)}
    for backend in BACKENDS:
        assert isinstance(backend, Backend) and backend_named(backend.name) is backend
        own = {name for name, member in vars(type(backend)).items() if inspect.isfunction(member)}
        assert own <= shared, (backend.name, own - shared)
    assert all(fact.metadata.get("means") for fact in dataclasses.fields(Backend))


def test_a_database_resolves_to_its_record_by_engine_connection_and_url(tmp_path: Path) -> None:
    engine = open_database(f"duckdb:///{tmp_path / 'g.duckdb'}", create=True)
    with engine.connect() as connection:
        assert backend_of(connection) is backend_of(engine) is backend_named("duckdb")
    engine.dispose()
    assert backend_of("sqlite:///x.db") is url_backend(sa.make_url("sqlite://")) is backend_named("sqlite")
    assert url_backend("mysql://h/db") is None
    with pytest.raises(KeyError):
        backend_of("mysql://h/db")


def test_an_unknown_backend_is_refused_naming_those_dicegraph_runs_on() -> None:
    with pytest.raises(DatabaseError) as refused:
        open_database("mysql+pymysql://alice:secret@h/db")
    message = str(refused.value)
    assert message.startswith("dicegraph does not run on 'mysql' databases; use sqlite:///FILE (built in)")
    assert all(backend.url_form in message for backend in BACKENDS) and "secret" not in message


def test_sqlite_is_reached_through_the_newer_driver_and_its_files_read_by_pythons_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQLite record opens its databases through :func:`dicegraph.store.backends.sqlite.driver`: pysqlite3's
    where it carries a newer SQLite (a dependency on Linux x86-64), Python's own with ``$DICEGRAPH_SQLITE=builtin``;
    a file either writes, the other reads, and read-only engines open through the same driver."""
    import sqlite3

    from dicegraph.store.backends import sqlite as record

    def engine_version(url: str, read_only: bool = False) -> tuple[int, ...]:
        engine = open_database(url, create=not read_only, read_only=read_only)
        with engine.connect() as connection:
            found = tuple(int(part) for part in connection.exec_driver_sql("SELECT sqlite_version()").scalar().split("."))
        engine.dispose()
        return found

    chosen = record.driver()
    assert chosen.sqlite_version_info >= sqlite3.sqlite_version_info
    newer = tmp_path / "newer.db"
    assert engine_version(f"sqlite:///{newer}") == chosen.sqlite_version_info
    assert engine_version(f"sqlite:///{newer}", read_only=True) == chosen.sqlite_version_info
    with sqlite3.connect(newer) as plain:  # Python's own reads what the driver wrote
        assert plain.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert plain.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)
    monkeypatch.setenv(record.DRIVER_SETTING, "builtin")
    record.driver.cache_clear()
    try:
        assert record.driver() is sqlite3
        assert engine_version(f"sqlite:///{newer}") == sqlite3.sqlite_version_info
    finally:
        monkeypatch.delenv(record.DRIVER_SETTING)
        record.driver.cache_clear()
    assert record.driver() is chosen
