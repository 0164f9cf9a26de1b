"""Apache Spark SQL's record: the facts and ways the rest of the store asks of it.

What it does differently: no transactions, keys or upserts (the algorithms append, and the catalog's small tables
are rewritten), a schema made at the head and never migrated, a writer's lock held while a command writes and the
small files compacted after, the work tables a killed process left dropped when a database opens, a statement
stopped by the Thrift server at a time limit, a user's query judged by Spark's own plan of it, and solves that fold
layers inside rows (its folds beside this record).

>>> BACKEND.transactions, BACKEND.migrated, len(BACKEND.faster)
(False, False, 11)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import sqlalchemy as sa
from alembic.ddl.impl import DefaultImpl

from dicegraph.store.backends.record import Backend, Implementation, Waiting
from dicegraph.store.errors import READ_ONLY_MESSAGE, DatabaseError, ReadOnly, driver_message

sa.dialects.registry.register("spark", "dicegraph.store.backends.spark.dialect", "SparkDialect")

# statements a user's read-only query may be, and what their plan must not name: a write, a command, a call into
# Java, a file read by its path rather than through a table
READING = re.compile(r"^\s*(select|with|values|table|show|describe|desc|explain)\b", re.IGNORECASE)
REFUSED_PLANS = re.compile(r"Execute |Command|WriteFiles|InsertInto|reflect\(|java_method\(|FileScan \w+ \[")


class AlembicSparkImpl(DefaultImpl):
    """Lets Alembic read a Spark database's revision (it never migrates one: ``dicegraph.store.db.create_at_head``)."""

    __dialect__ = "spark"
    transactional_ddl = False


@dataclass(frozen=True)
class Spark(Backend):
    """Spark's record: :class:`dicegraph.store.backends.record.Backend` with Spark's ways."""

    def before_open(self, url: sa.URL, create: bool) -> None:
        """Check that the Thrift server answers and, unless ``create``, that the database is there."""
        from dicegraph.store.backends.spark.dialect import reachable

        reachable(url, create)

    def after_open(self, engine: sa.Engine) -> None:
        """Drop what killed processes of this machine left: no transaction took it back."""
        from dicegraph.store.backends.spark.dialect import drop_leftovers

        with engine.connect() as connection:
            drop_leftovers(connection)

    @contextmanager
    def writing(self, engine: sa.Engine, on_wait: Waiting | None) -> Iterator[None]:
        """Hold the database's writer lock while a command writes (Spark has no transactions), and compact the
        small files its statements wrote into the tables they inserted into once it is done (a command within a
        command: once the outer one is)."""
        from dicegraph.store.backends.spark.compact import compact
        from dicegraph.store.backends.spark.writer import held, writing

        inserted = engine.dialect.inserted  # type: ignore[attr-defined]
        with engine.connect() as connection:
            outer = not held(connection)
            with writing(connection, on_wait):
                before = inserted.copy()
                yield
                if outer:
                    compact(connection, among={table for table, count in inserted.items() if count > before[table]})

    def set_time_limit(self, connection: sa.Connection, seconds: float | None) -> None:
        """The Thrift server stops the statement itself at the time limit (0: none)."""
        connection.exec_driver_sql(f"SET spark.sql.thriftServer.queryTimeout={int(seconds or 0)}")

    def refuse_writes(self, connection: sa.Connection, sql: str) -> None:
        """Refuse a statement Spark's plan shows would write, run a command, call into Java or read a file by its
        path (:data:`REFUSED_PLANS`): Spark has no read-only mode, so its own parse and plan (EXPLAIN) decide."""
        if ";" in sql.strip().rstrip(";"):
            raise ReadOnly("query runs one statement at a time")
        if not READING.match(sql):
            raise ReadOnly(READ_ONLY_MESSAGE)
        try:
            plan = "\n".join(str(row[0]) for row in connection.exec_driver_sql(f"EXPLAIN {sql.strip().rstrip(';')}"))
        except sa.exc.DBAPIError as error:
            raise DatabaseError(f"SQL error: {driver_message(error.orig).splitlines()[0]}") from None
        if plan.startswith("Error occurred during query planning"):
            said = [line for line in plan.splitlines()[1:] if line.strip()]
            raise DatabaseError(f"SQL error: {said[0] if said else plan}")
        if REFUSED_PLANS.search(plan):
            raise ReadOnly(READ_ONLY_MESSAGE)


_FOLDS = "dicegraph.store.backends.spark."
FASTER = (  # the solve's operations Spark folds inside rows (store/solve/dispatch.py), where each can_run says it can
    Implementation("layered", _FOLDS + "graph_fold:store_layered", _FOLDS + "graph_fold:folds"),
    Implementation("sweep", _FOLDS + "graph_fold:swept_outcomes", _FOLDS + "graph_fold:folds"),
    Implementation("cyclic", _FOLDS + "cycle_fold:store_cyclic", _FOLDS + "cycle_fold:can_store_cyclic"),
    Implementation("match", _FOLDS + "cycle_fold:root_values", _FOLDS + "cycle_fold:can_play"),
    Implementation("best response", _FOLDS + "cycle_fold:store_response", _FOLDS + "cycle_fold:can_store_response"),
    Implementation("turn batch", _FOLDS + "turn_fold:solve_batch", _FOLDS + "turn_fold:can_solve_batch"),
    Implementation("turn play", _FOLDS + "turn_fold:play_turns", _FOLDS + "turn_fold:can_play_turns"),
    Implementation("turn ends", _FOLDS + "outcome_fold:reach_ends", _FOLDS + "outcome_fold:can_reach_ends"),
    Implementation("race", _FOLDS + "race_fold:solve_race", _FOLDS + "race_fold:can_solve"),
    Implementation("end distributions", _FOLDS + "end_fold:play_ends", _FOLDS + "end_fold:can_play_ends"),
    Implementation("carried distributions", _FOLDS + "carried_fold:carried_distributions",
                   _FOLDS + "carried_fold:can_carry"),
)

BACKEND = Spark(
    name="spark", title="Spark", url_form="spark://HOST:PORT/DB",
    install="pip install 'dicegraph[spark]'; dicegraph spark start runs one here",
    migrated=False, alembic_alters_comments=False, transactions=False, updates=False, upserts=False, keys=False,
    hashed_joins=True, arg_min=True, recursive_union=False, pays_per_statement=True, faster=FASTER,
    turn_batch_states=1 << 20, parallel_connections=False, stops_statements_itself=True,
)
