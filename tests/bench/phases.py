"""What the benchmarks share: an empty database per backend, a solve's time split into phases, the references.

A solve's statements are told apart by the table they write: the work table
of values (backward induction), the work table of reach (propagation), or
the stored ``value`` and ``choice`` tables. The commit is timed on its own.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from dicegraph.store.db import scratch_database
from dicegraph.store.schema import edge, graph_edge_span, layer_ranges, node

POSTGRES_ENV = "DICEGRAPH_BENCH_POSTGRES"  # a PostgreSQL database whose user may create databases
PHASES = ("induction", "propagation", "storing", "commit", "other")
_TARGETS = {"work_value": "induction", "work_reach": "propagation", "value": "storing", "choice": "storing"}


def peak_mib() -> float:
    """Return the peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_memory() -> str:
    """Return the peak resident memory of this process so far, and of the largest worker process that ended
    (a SQLite turn solve's), as text: ``'220 MiB'`` or ``'220 MiB (workers: 310 MiB each at most)'``."""
    own = peak_mib()
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return f"{own:,.0f} MiB" + (f" (workers: {workers:,.0f} MiB each at most)" if workers else "")


@contextmanager
def bench_database(backend: str) -> Iterator[str]:
    """Yield the URL of an empty database on ``backend``: a file in a temporary folder, or on PostgreSQL
    a fresh database on the server ``$DICEGRAPH_BENCH_POSTGRES`` names (dropped afterwards)."""
    if backend == "postgresql":
        with scratch_database(os.environ[POSTGRES_ENV], "dicegraph_bench") as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as folder:
        yield f"{backend}:///{Path(folder) / f'bench.{backend}'}"


def phase_of(statement: str) -> str:
    """Return the phase a solver statement belongs to, from the table it writes.

    >>> phase_of("INSERT INTO work_reach (node_id) SELECT 1"), phase_of("DELETE FROM value WHERE 1"), phase_of("SELECT 1")
    ('propagation', 'storing', 'other')
    """
    words = statement.split(None, 3)
    if len(words) >= 3 and words[0].upper() in ("INSERT", "DELETE") and words[1].upper() in ("INTO", "FROM"):
        return _TARGETS.get(words[2].strip('"'), "other")
    return "other"


def timed_solve(engine: sa.Engine, solve: Callable[[sa.Connection], object]) -> Counter[str]:
    """Run ``solve`` in one transaction on ``engine``; return the seconds spent per phase (commit included)."""
    spent: Counter[str] = Counter()

    def started(conn, cursor, statement, *rest) -> None:  # noqa: ANN001
        conn.info["started"] = time.perf_counter()

    def finished(conn, cursor, statement, *rest) -> None:  # noqa: ANN001
        spent[phase_of(statement)] += time.perf_counter() - conn.info["started"]

    sa.event.listen(engine, "before_cursor_execute", started)
    sa.event.listen(engine, "after_cursor_execute", finished)
    try:
        with engine.connect() as connection:
            transaction = connection.begin()
            solve(connection)
            committing = time.perf_counter()
            transaction.commit()
            spent["commit"] += time.perf_counter() - committing
    finally:
        sa.event.remove(engine, "before_cursor_execute", started)
        sa.event.remove(engine, "after_cursor_execute", finished)
    return spent


def reference_rate(engine: sa.Engine, graph_id: int, edges: int) -> float:
    """Return the edges/s of a plain ``INSERT ... SELECT ... GROUP BY`` per layer (no join, no value lookups)."""
    scratch = sa.Table("bench_ref", sa.MetaData(), sa.Column("src", sa.Integer), sa.Column("total", sa.Double),
                       prefixes=["TEMPORARY"])
    with engine.begin() as connection:
        scratch.create(connection)
        started = time.perf_counter()
        for span in layer_ranges(connection, graph_id):
            rows = (sa.select(edge.c.src, sa.func.sum(edge.c.weight * edge.c.reward))
                    .where(edge.c.id.between(span.first_edge, span.last_edge)).group_by(edge.c.src))
            connection.execute(sa.insert(scratch).from_select(["src", "total"], rows))
        seconds = time.perf_counter() - started
        connection.rollback()
    return edges / seconds


def one_pass_rate(engine: sa.Engine, graph_id: int, edges: int) -> float:
    """Return the edges/s of one statement joining *all* edges with a value per node and summing per source.

    A bound on any solve: backward induction must make at least this pass
    (layer by layer, in fact), and propagation another.
    """
    values = sa.Table("bench_values", sa.MetaData(), sa.Column("node_id", sa.Integer), sa.Column("value", sa.Double),
                      prefixes=["TEMPORARY"])
    totals = sa.Table("bench_totals", sa.MetaData(), sa.Column("src", sa.Integer), sa.Column("total", sa.Double),
                      prefixes=["TEMPORARY"])
    with engine.begin() as connection:
        values.create(connection)
        totals.create(connection)
        connection.execute(sa.insert(values).from_select(
            ["node_id", "value"], sa.select(node.c.id, sa.cast(node.c.layer, sa.Double)).where(node.c.graph_id == graph_id)))
        first, last = graph_edge_span(connection, graph_id)
        started = time.perf_counter()
        rows = (sa.select(edge.c.src, sa.func.sum(edge.c.weight * (edge.c.reward + values.c.value)))
                .select_from(edge.join(values, values.c.node_id == edge.c.dst))
                .where(edge.c.id.between(first, last)).group_by(edge.c.src))
        connection.execute(sa.insert(totals).from_select(["src", "total"], rows))
        seconds = time.perf_counter() - started
        connection.rollback()
    return edges / seconds
