"""Opening databases: migrations agree with the models, bad files are refused cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from dicegraph.store.db import alembic_config, head_revision, open_database, schema_revision, upgrade
from dicegraph.store.errors import DatabaseError, ReadOnly
from dicegraph.store.query import run_query
from dicegraph.store.schema import VIEWS, metadata


def test_single_head_revision() -> None:
    assert len(ScriptDirectory.from_config(alembic_config()).get_heads()) == 1


def test_models_match_migrations(engine: sa.Engine) -> None:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True, "render_as_batch": True})
        assert compare_metadata(context, metadata) == []


def test_views_exist_and_answer(engine: sa.Engine) -> None:
    with engine.connect() as connection:
        assert set(VIEWS) <= set(sa.inspect(connection).get_view_names())
        for name in VIEWS:
            assert connection.execute(sa.text(f"SELECT COUNT(*) FROM {name}")).scalar() == 0


def test_downgrade_to_base_and_up_again(engine: sa.Engine) -> None:
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
    assert schema_revision(engine) is None
    assert sa.inspect(engine).get_table_names() == ["alembic_version"]
    upgrade(engine)
    assert schema_revision(engine) == head_revision()
    assert set(VIEWS) <= set(sa.inspect(engine).get_view_names())


def test_newer_schema_is_refused(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
    with pytest.raises(DatabaseError, match="newer dicegraph"):
        open_database(db_url)
    with pytest.raises(DatabaseError, match="newer dicegraph"):
        open_database(db_url, read_only=True)


def test_a_session_reads_the_schema_revision_once_and_a_new_session_again(db_url: str) -> None:
    """A session (``dicegraph.open``) reads the schema's revision when it first opens the database, not at each
    command after (on a server each read is statements of its own); a new session reads it again, and refuses the
    revision a newer dicegraph wrote."""
    import dicegraph

    read: list[str] = []

    def count(connection: sa.Connection, cursor: object, statement: str, *args: object) -> None:
        read.extend([statement] if "alembic_version" in statement else [])

    sa.event.listen(sa.Engine, "before_cursor_execute", count)
    try:
        session = dicegraph.open(db_url)
        session.build("jackpot", {"cells": 2})
        first = len(read)
        session.report("jackpot", {"cells": 2}, games=0)
        session.policies("jackpot")
        assert first > 0 and len(read) == first
        engine = open_database(db_url)
        with engine.begin() as connection:
            connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
        engine.dispose()
        with pytest.raises(DatabaseError, match="newer dicegraph"):
            dicegraph.open(db_url).policies("jackpot")
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", count)


def test_missing_database_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    with pytest.raises(DatabaseError, match="no database at"):
        open_database(f"sqlite:///{path}")
    assert not path.exists()


def test_corrupt_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    garbage = b"this is not a database at all" * 100
    path.write_bytes(garbage)
    with pytest.raises(DatabaseError, match="cannot read database"):
        open_database(f"sqlite:///{path}", create=True)
    assert path.read_bytes() == garbage


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'other.db'}"
    with sa.create_engine(url).begin() as connection:
        connection.execute(sa.text("CREATE TABLE notes (body TEXT)"))
    with pytest.raises(DatabaseError, match="no dicegraph schema"):
        open_database(url)


def test_read_only_engine_cannot_write_its_file_but_may_work_in_temporary_tables(engine: sa.Engine, db_url: str) -> None:
    """What the explorer relies on: an advisor's work tables are allowed, writing the file is not, and a
    user's statement may not even make a temporary table."""
    reader = open_database(db_url, read_only=True)
    with reader.connect() as connection:
        connection.execute(sa.text("CREATE TEMPORARY TABLE work (x INTEGER)"))
        connection.execute(sa.text("INSERT INTO work SELECT count(*) FROM graph"))
        assert connection.execute(sa.text("SELECT x FROM work")).scalar_one() == 0
        with pytest.raises(sa.exc.OperationalError, match="readonly"):
            connection.execute(sa.text("CREATE TABLE kept (x INTEGER)"))
    with pytest.raises(ReadOnly):
        run_query(reader, "CREATE TEMPORARY TABLE sneaky (x INTEGER)")
    assert run_query(reader, "SELECT count(*) FROM graph") == (["count(*)"], [(0,)])
    assert "kept" not in sa.inspect(engine).get_table_names()
