"""PostgreSQL, a server: ``postgresql+psycopg://USER@HOST/DB`` (``pip install 'dicegraph[postgres]'``).

What it does differently: work tables joined by hashing and in the order written (its planner has no statistics
on them), a statement stopped by psycopg's cancel request, a user's query run in a read-only transaction by a role
that cannot reach the server's files, rows loaded with ``COPY ... FROM STDIN``.

>>> BACKEND.embedded, BACKEND.upserts, BACKEND.alembic_alters_comments
(False, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from dicegraph.store.backends.record import Backend, Flush
from dicegraph.store.errors import FilesReachable

# roles that read or write the server's files (pg_read_file, COPY ... FROM 'file', lo_import) or run programs
# there; a superuser holds them all, and no read-only transaction stops them
FILE_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")


@dataclass(frozen=True)
class PostgreSQL(Backend):
    """PostgreSQL's record: :class:`dicegraph.store.backends.record.Backend` with PostgreSQL's ways."""

    def plan_whole_layers(self, connection: sa.Connection) -> None:
        """Have the rest of the transaction join work tables by hashing, not by nested loops, in the order written.

        The work tables are temporary, so no autovacuum gathers their statistics,
        and PostgreSQL's planner, guessing, picked nested loops that look up a
        turn node's rows by the node alone and sift every state of a batch
        for each edge. And have it join in the order the statement is written: a match's statement joins each
        seat's move and the values it leads to (28 joins for 14 seats), and the planner, reordering them with
        no statistics, joined the values by state alone before the move, a product of the rows of every seat
        (147 s for one statement of the race to 150, against a fraction of a second in order). ``SET LOCAL``
        lasts until the transaction ends (docs/performance.md has what it saves).
        """
        connection.execute(sa.text("SET LOCAL enable_nestloop = off"))
        connection.execute(sa.text("SET LOCAL join_collapse_limit = 1"))

    def take_statistics(self, connection: sa.Connection, tables: Sequence[sa.Table]) -> None:
        """ANALYZE them. Autovacuum gathers statistics when it comes round, so a statement may be planned by
        statistics taken before a graph was built or a policy solved: a graph's end nodes joined with the values
        of a policy just solved, estimated at one row each, were joined by a nested loop over both (a check of
        Can't Stop took 181 to 224 s in CI instead of 16 s; docs/performance.md)."""
        preparer = connection.dialect.identifier_preparer
        connection.execute(sa.text(f"ANALYZE {', '.join(preparer.format_table(table) for table in tables)}"))

    def cancel(self, connection: sa.Connection) -> None:
        """psycopg's cancel request."""
        connection.connection.driver_connection.cancel_safe()  # type: ignore[union-attr]

    def refuse_writes(self, connection: sa.Connection, sql: str) -> None:
        """A read-only transaction, by a role that cannot reach the server's files (:data:`FILE_ROLES`): raise
        FilesReachable for one that can."""
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        checks = " OR ".join(f"pg_has_role(current_user, '{role}', 'MEMBER')" for role in FILE_ROLES)
        user, reaches = connection.exec_driver_sql(
            f"SELECT current_user, rolsuper OR {checks} FROM pg_roles WHERE rolname = current_user").one()
        if reaches:
            raise FilesReachable(f"query will not run as {user}, who may read the server's files (a superuser, or a "
                                 f"member of {', '.join(FILE_ROLES)}): connect as a role without them, e.g. one "
                                 "granted pg_read_all_data, or pass --write")

    def bulk_writer(self, connection: sa.Connection, table: sa.Table, columns: tuple[str, ...]) -> Flush | None:
        """Through psycopg, each batch streamed by ``COPY FROM STDIN``; through another driver, SQLAlchemy's
        executemany."""
        if connection.dialect.driver != "psycopg":
            return None
        statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"

        def copy_rows(rows: list[tuple]) -> None:
            cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                with cursor.copy(statement) as copy:
                    for row in rows:
                        copy.write_row(row)
            finally:
                cursor.close()

        return copy_rows


BACKEND = PostgreSQL(name="postgresql", title="PostgreSQL", url_form="postgresql+psycopg://USER@HOST/DB",
                     install="pip install 'dicegraph[postgres]'")
