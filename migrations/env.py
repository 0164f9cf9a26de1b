"""Alembic environment of dicegraph.

Tables are versioned by the revisions in ``versions/``. The views
(``dicegraph.store.schema.VIEWS``) are derived objects: every upgrade or downgrade drops
them first and, when the database ends at the head revision, creates them again
from the code, all in the same transaction. A change to a view therefore needs
only a new (possibly empty) revision so that existing databases pick it up.

``dicegraph`` passes its open connection in ``config.attributes["connection"]``;
the ``alembic`` command line uses ``sqlalchemy.url`` from ``alembic.ini``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context
from sqlalchemy.schema import CreateView, DropView

from dicegraph.store.schema import VIEWS, metadata

config = context.config
target_metadata = metadata


def _drop_views(connection: sa.Connection) -> None:
    for name in VIEWS:
        connection.execute(DropView(sa.table(name), if_exists=True))


def _create_views(connection: sa.Connection) -> None:
    for name, view in VIEWS.items():
        connection.execute(CreateView(view(), name))


def _migrate(connection: sa.Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        _drop_views(connection)
        context.run_migrations()
        if context.get_context().get_current_revision() == context.get_head_revision():
            _create_views(connection)


def run_migrations_offline() -> None:
    """Emit the SQL of the migrations as a script (``alembic upgrade head --sql``)."""
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on dicegraph's connection or on ``sqlalchemy.url``."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    engine = sa.create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        _migrate(connection)
        connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
