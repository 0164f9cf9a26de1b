"""Temporary tables the algorithms work in, keyed by node id.

Keyed by a lone integer primary key they are SQLite rowid tables, so the
lookup the solver makes for every edge is the cheapest one SQLite has; the
results are written to ``value`` and ``choice`` once, at the end.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from dicegraph.store.backends import backend_of
from dicegraph.store.load import BulkInserter
from dicegraph.store.schema import EdgeId, edge


def create_afresh(connection: sa.Connection, table: sa.Table) -> sa.Table:
    """Drop ``table`` if it exists, create it, and return it.

    DROP ... IF EXISTS rather than SQLAlchemy's checkfirst: DuckDB's has_table does
    not see temporary tables, and one left by a run whose connection rolled its
    DROP back (the pool keeps DuckDB's connection) would make CREATE fail.
    """
    connection.execute(sa.schema.DropTable(table, if_exists=True))
    table.create(connection)
    return table


def temporary_table(connection: sa.Connection, name: str, *columns: sa.Column, indexed: bool = True) -> sa.Table:
    """Create (afresh) and return a temporary table ``name(node_id INTEGER PRIMARY KEY, *columns)``.

    With ``indexed`` False, ``node_id`` is not declared a key (see :attr:`dicegraph.store.backends.record.Backend.hashed_joins`).
    """
    return create_afresh(connection, temporary_definition(name, *columns, indexed=indexed))


def temporary_definition(name: str, *columns: sa.Column, indexed: bool = True) -> sa.Table:
    """Return :func:`temporary_table`'s table without creating it: a table object kept and created again
    (:func:`create_afresh`) lets SQLAlchemy reuse the statements it compiled over it.

    >>> temporary_definition("work", indexed=False).c.node_id.primary_key
    False
    """
    return sa.Table(
        name,
        sa.MetaData(),
        sa.Column("node_id", sa.Integer, primary_key=indexed, autoincrement=False, nullable=False),
        *columns,
        prefixes=["TEMPORARY"],
    )


def values_table(connection: sa.Connection, key: str | None = None) -> sa.Table:
    """Return a new temporary table of node values, with the move taken at decision nodes (``edge_id``): per node,
    or per node and ``key`` (``node_id, key, value, edge_id``: several inductions in the same statements)."""
    columns = (sa.Column("value", sa.Double, nullable=False), sa.Column("edge_id", EdgeId))
    if key is None:
        return temporary_table(connection, "work_value", *columns, indexed=not backend_of(connection).hashed_joins)
    return keyed_pair_table(connection, "work_value", key, *columns, indexed=not backend_of(connection).hashed_joins)


def reach_table(connection: sa.Connection, key: str | None = None) -> sa.Table:
    """Return a new temporary table of reach probabilities (with the node's denom, 1 if none), per node or per
    node and ``key`` (``node_id, key, reach, denom``): keyed where flows are added in place
    (:attr:`dicegraph.store.backends.record.Backend.upserts`), else a row per flow, added up when read."""
    columns = (sa.Column("reach", sa.Double, nullable=False), sa.Column("denom", sa.Integer, nullable=False))
    if key is None:
        return temporary_table(connection, "work_reach", *columns, indexed=backend_of(connection).upserts)
    return keyed_pair_table(connection, "work_reach", key, *columns, indexed=backend_of(connection).upserts)


def keyed_pair_table(connection: sa.Connection, name: str, second_key: str, *columns: sa.Column,
                     indexed: bool = True) -> sa.Table:
    """Create (afresh) and return a temporary table ``name(node_id, <second_key>, *columns)`` keyed by both.

    Node first: the statements look rows up by node (the node an edge leads
    to) and read every row of it. With ``indexed`` False the key is not
    declared: DuckDB joins by hashing and would only pay for maintaining the
    index on every insert and delete (measured: a third of a turn-joined solve).
    """
    return create_afresh(connection, keyed_pair_definition(name, second_key, *columns, indexed=indexed))


def keyed_pair_definition(name: str, second_key: str, *columns: sa.Column, indexed: bool = True) -> sa.Table:
    """Return :func:`keyed_pair_table`'s table without creating it (see :func:`temporary_definition`)."""
    return sa.Table(
        name,
        sa.MetaData(),
        sa.Column("node_id", sa.Integer, primary_key=indexed, autoincrement=False, nullable=False),
        sa.Column(second_key, sa.Integer, primary_key=indexed, autoincrement=False, nullable=False),
        *columns,
        prefixes=["TEMPORARY"],
        sqlite_with_rowid=not indexed,
    )


def carried_reach_table(connection: sa.Connection) -> sa.Table:
    """Return a new temporary table of each policy's reach carried with the points won on the way: ``(node_id,
    policy_id, score, sign, reach, denom)``, keyed by the first four where flows are added in place
    (:attr:`dicegraph.store.backends.record.Backend.upserts`), ``sign`` the product of the signs of the edges taken
    (-1 where the turn was handed over an odd number of times)."""
    indexed = backend_of(connection).upserts
    return create_afresh(connection, sa.Table(
        "work_carried",
        sa.MetaData(),
        sa.Column("node_id", sa.Integer, primary_key=indexed, autoincrement=False, nullable=False),
        sa.Column("policy_id", sa.Integer, primary_key=indexed, autoincrement=False, nullable=False),
        sa.Column("score", sa.Double, primary_key=indexed, autoincrement=False, nullable=False),
        sa.Column("sign", sa.Integer, primary_key=indexed, autoincrement=False, nullable=False),
        sa.Column("reach", sa.Double, nullable=False),
        sa.Column("denom", sa.Integer, nullable=False),
        prefixes=["TEMPORARY"],
    ))


def outcome_table(connection: sa.Connection) -> sa.Table:
    """Return a new temporary table of what is still to come from each node: ``(node_id, outcome, probability)``,
    a row per node and outcome."""
    return create_afresh(connection, sa.Table(
        "work_outcome",
        sa.MetaData(),
        sa.Column("node_id", sa.Integer, nullable=False),
        sa.Column("outcome", sa.Double, nullable=False),
        sa.Column("probability", sa.Double, nullable=False),
        sa.Index("work_outcome_node", "node_id"),
        prefixes=["TEMPORARY"],
    ))


def sweep_table(connection: sa.Connection, name: str, *columns: sa.Column) -> sa.Table:
    """Return a new temporary table ``name(node_id, goal, *columns)``: one row per node and goal of a sweep."""
    return keyed_pair_table(connection, name, "goal", *columns)


def turn_work_table(connection: sa.Connection, name: str, *columns: sa.Column) -> sa.Table:
    """Return a new temporary table ``name(node_id, state, *columns)``: a turn's node played from a turn state.

    Keyed except where joins hash (:attr:`dicegraph.store.backends.record.Backend.hashed_joins`); nothing upserts into these tables.
    """
    return keyed_pair_table(connection, name, "state", *columns, indexed=not backend_of(connection).hashed_joins)


def edge_copy(connection: sa.Connection, name: str, first_edge: int, last_edge: int,
              progress: sa.Table | None = None, merge_except: Collection[int] | None = None) -> sa.Table:
    """Return a new temporary table holding the edges ``first_edge .. last_edge``, with the columns a solve joins
    by and reads (``id``, ``src``, ``dst``, ``kind``, ``weight``, ``reward``), in id order; with ``progress``
    (a table ``(node_id, progress)``), also the progress of each edge's source (NULL where it has none). With
    ``merge_except`` (node ids to keep as they are), the decision nodes that offer the same moves are one node
    (:func:`merge_equivalent_decisions`): a solve that values the nodes of ``merge_except``, or spreads the
    probabilities of reaching them, by moves it chooses itself, reads fewer rows.

    For statements that join a part of the graph, played from many states, with
    its work rows: DuckDB hashes the side of a join it estimates smaller, and
    estimates a range of the whole edge table large, so it hashed the work rows
    instead; a table of the part alone is hashed. Keyed by ``id`` where joins
    do not hash (:attr:`dicegraph.store.backends.record.Backend.hashed_joins`), for the ranges the statements select.
    """
    table = edge_copy_definition(connection, name, progress is not None)
    create_afresh(connection, table)
    if merge_except is None:
        fill_edge_copy(connection, table, first_edge, last_edge, progress)
        return table
    rows = connection.execute(_copied_edges(table, first_edge, last_edge, progress)).all()
    writer = BulkInserter(connection, table, [column.name for column in table.c])
    writer.extend(merge_equivalent_decisions(rows, merge_except))
    writer.flush()
    return table


def edge_copy_definition(connection: sa.Connection, name: str, with_progress: bool = False) -> sa.Table:
    """Return :func:`edge_copy`'s table without creating it (a table object kept and created again lets
    SQLAlchemy reuse the statements it compiled over it, as :func:`temporary_definition`'s)."""
    keyed = not backend_of(connection).hashed_joins
    extra = [sa.Column("progress", sa.Integer)] if with_progress else []
    return sa.Table(
        name,
        sa.MetaData(),
        sa.Column("id", EdgeId, primary_key=keyed, autoincrement=False, nullable=False),
        *(sa.Column(column.name, column.type, nullable=column.nullable) for column in
          (edge.c.src, edge.c.dst, edge.c.kind, edge.c.weight, edge.c.reward)),
        *extra,
        prefixes=["TEMPORARY"],
    )


def fill_edge_copy(connection: sa.Connection, table: sa.Table, first_edge: int, last_edge: int,
                   progress: sa.Table | None = None) -> None:
    """Insert into ``table`` (made by :func:`edge_copy_definition`, empty) the edges ``first_edge .. last_edge``, in
    id order, with their sources' ``progress`` where given."""
    connection.execute(sa.insert(table).from_select([column.name for column in table.c],
                                                    _copied_edges(table, first_edge, last_edge, progress)))


def _copied_edges(table: sa.Table, first_edge: int, last_edge: int, progress: sa.Table | None) -> sa.Select:
    """Return the SELECT of the edges ``first_edge .. last_edge`` as ``table``'s columns, in id order."""
    columns = [edge.c[column.name] for column in table.c if column.name != "progress"]
    source: sa.FromClause = edge
    if progress is not None:
        source = edge.outerjoin(progress, progress.c.node_id == edge.c.src)
        columns.append(progress.c.progress)
    return sa.select(*columns).select_from(source).where(edge.c.id.between(first_edge, last_edge)).order_by(edge.c.id)


def merge_equivalent_decisions(rows: Iterable[Sequence[Any]], kept: Collection[int] = ()) -> list[tuple]:
    """Return the edges ``rows`` (``id, src, dst, kind, weight, reward`` and any columns of the source, such as its
    progress), in id order, with the decision nodes that offer the same moves in the same order (to the same nodes,
    for the same rewards, the same source columns) made one: of each such set of nodes, the one whose edges come
    last keeps its moves, the others' are left out, and the edges into any of them lead to it, those of one chance
    node added up into one (the lowest id, the weights summed). Every node keeps its value and the place of the
    move it takes among its moves, under any choice by their values (the first within a tolerance of the best, as
    the solves take), so a solve that reads the values of nodes that are no merged decision (``kept`` are never
    merged), or the probabilities of reaching them, reads fewer rows. The edges must come in layers, each node's
    after those into it (a part of a layered graph): the node kept lies in the deepest layer of its set, so every
    edge still leads deeper.

    In a roll of three dice in 5000, 1-1-2 and 1-1-3 offer the same: set aside 200 or 100 points.

    >>> rows = [(1, 10, 11, "roll", 1, 0.0), (2, 10, 12, "roll", 2, 0.0), (3, 10, 13, "roll", 3, 0.0),
    ...         (4, 11, 20, "move", 1, 1.0), (5, 12, 20, "move", 1, 1.0), (6, 13, 20, "move", 1, 2.0)]
    >>> merge_equivalent_decisions(rows)
    [(1, 10, 12, 'roll', 3, 0.0), (3, 10, 13, 'roll', 3, 0.0), (5, 12, 20, 'move', 1, 1.0), (6, 13, 20, 'move', 1, 2.0)]
    """
    leaving: dict[int, list[tuple]] = {}
    for row in rows:
        leaving.setdefault(row[1], []).append(tuple(row))
    into: dict[int, int] = {}  # a decision node -> the node it is one with (itself, for the deepest)
    offering: dict[tuple, int] = {}  # what a decision node offers -> the deepest node offering it
    for src in sorted(leaving, key=lambda node_id: leaving[node_id][0][0], reverse=True):  # the deepest first
        out = leaving[src]
        if src not in kept and out[0][3] == "move":
            offer = (out[0][6:], tuple((into.get(row[2], row[2]), row[5]) for row in out))
            into[src] = offering.setdefault(offer, src)

    def one(node_id: int) -> int:
        return into.get(node_id, node_id)

    found: list[tuple] = []
    for src, out in leaving.items():
        if one(src) != src:
            continue
        rolls: dict[tuple, tuple] = {}
        for row in out:
            moved = (row[0], src, one(row[2]), *row[3:])
            if row[3] == "move":
                found.append(moved)
            elif (key := (moved[2], row[5])) in rolls:
                rolls[key] = (*rolls[key][:4], rolls[key][4] + row[4], *rolls[key][5:])
            else:
                rolls[key] = moved
        found.extend(rolls.values())
    return sorted(found)
