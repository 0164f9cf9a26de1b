"""Compaction of the small Parquet files Spark leaves: every INSERT writes at least one file of its own, so a solve
of a few hundred statements leaves a table in hundreds of files, and each later read of it opens them all.

A table held in more than :data:`FILES_PER_TABLE` files is written over by itself in few files
(:func:`dicegraph.store.backends.spark.dialect.compaction_statements`), through the same copy an UPDATE takes, so that a process
killed meanwhile leaves the copy for the next writer to finish (:func:`dicegraph.store.backends.spark.dialect.drop_leftovers`).
:class:`dicegraph.Database` compacts, at the end of every command that wrote to a Spark database, the tables that
command inserted into (counting the files reads every row; counting every table's, three commands of a check
of Jackpot took 4.7 s, the tables written 1.8 s); the dialect compacts a solve's work tables as it goes.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

from dicegraph.store.backends.spark.dialect import compaction_statements, is_work_table

FILES_PER_TABLE = 64  # a table held in more files than this is compacted


def table_files(connection: sa.Connection, among: Collection[str] | None = None) -> dict[str, int]:
    """Return each of the database's tables (not work tables; only those ``among`` when given, which are not
    listed first: a table a command inserted into is there) and the number of Parquet files holding its rows,
    counted in one statement (an empty table: 0)."""
    listed = connection.dialect.get_table_names(connection) if among is None else among
    names = [name for name in listed if not is_work_table(name)]
    if not names:
        return {}
    counts = " UNION ALL ".join(f"SELECT '{name}', count(DISTINCT _metadata.file_path) FROM `{name}`"
                                for name in names)
    return {name: int(files) for name, files in connection.exec_driver_sql(counts).all()}


def compact(connection: sa.Connection, at_least: int | None = None,
            among: Collection[str] | None = None) -> dict[str, tuple[int, int]]:
    """Rewrite each table (only those ``among`` when given) held in more than ``at_least`` files (by default
    :data:`FILES_PER_TABLE`) into few; return the tables rewritten, each with its number of files before and
    after."""
    if among is not None and not among:
        return {}
    limit = FILES_PER_TABLE if at_least is None else at_least
    before = {name: files for name, files in table_files(connection, among).items() if files > limit}
    for name in before:
        for statement in compaction_statements(name, connection.dialect.work_mark):  # type: ignore[attr-defined]
            connection.exec_driver_sql(statement)
    after = table_files(connection, before) if before else {}
    return {name: (files, after[name]) for name, files in before.items()}
