"""Loading a builder's rows into the database, one transaction per build.

Rows go through :class:`BulkInserter`, which batches them and uses the fastest
path the backend offers for a Core INSERT, and through
:class:`dicegraph.graphs.check.StreamChecker`, which checks the graph model on the way
(layers increase along edges, roll weights add up to the denominator, every
agent decides everywhere); a failure rolls the whole build back.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa

from dicegraph.graphs.check import StreamChecker, checker_for
from dicegraph.graphs.errors import InvalidGraph, TooLarge
from dicegraph.graphs.protocol import (CyclicLayers, Edge, EdgeColumns, Game, Node, Progress, Row, listed,
                                      with_defaults)
from dicegraph.store.backends import backend_of
from dicegraph.store.catalog import built_graphs
from dicegraph.store.schema import choice, edge, graph, graph_edge_span, layer, node, policy, turn_policy, value
from dicegraph.store.defaults import MAX_EDGES  # larger builds need force

BATCH_ROWS = 20_000
MAX_NODES = 20_000_000  # likewise for nodes, counted as they stream (a graph of many nodes and few edges)
BYTES_PER_EDGE = 45  # what an edge costs in SQLite with its share of nodes (measured: 1,000,004 synthetic edges, 44 MB)
BYTES_PER_NODE = 56  # what a node with a short key costs in SQLite (measured: 1,000,001 synthetic nodes, 56 MB)


@dataclass(frozen=True)
class BuildResult:
    """What :func:`build_graph` did: ``action`` is ``built``, ``reused`` or ``replaced``."""

    graph_id: int
    action: str
    nodes: int
    edges: int
    layers: int


def canonical_params(params: Mapping[str, Any]) -> str:
    """Return the parameters as the canonical JSON text stored in ``graph.params``.

    >>> canonical_params({"b": 2, "a": 1})
    '{"a": 1, "b": 2}'
    """
    return json.dumps(dict(params), sort_keys=True, separators=(", ", ": "))


def next_id(connection: sa.Connection, table: sa.Table) -> int:
    """Return one more than the largest id in ``table`` (portable across backends)."""
    return connection.execute(sa.select(sa.func.coalesce(sa.func.max(table.c.id), 0) + 1)).scalar_one()


def now() -> dt.datetime:
    """Return the current UTC time, as stored in ``created_at`` columns."""
    return dt.datetime.now(dt.timezone.utc)


class BulkInserter:
    """Buffers rows (tuples in ``columns`` order) for one table and inserts them in batches.

    Each batch goes in the fastest way the backend has
    (:meth:`dicegraph.store.backends.record.Backend.bulk_writer`: SQLite's driver's executemany, DuckDB's
    ``COPY`` from a file, PostgreSQL's ``COPY ... FROM STDIN``); elsewhere the Core INSERT through SQLAlchemy's
    executemany (its insertmanyvalues batching).
    """

    def __init__(self, connection: sa.Connection, table: sa.Table, columns: Sequence[str]):
        self.connection = connection
        self.columns = tuple(columns)
        self.statement = sa.insert(table)
        self.rows: list[tuple] = []
        self.count = 0
        backend = backend_of(connection)
        self._flush = backend.bulk_writer(connection, table, self.columns) or self._flush_generic
        self._columns = backend.column_writer(connection, table, self.columns)

    def add(self, row: tuple) -> None:
        """Queue one row; inserts a batch when the buffer is full."""
        self.rows.append(row)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def extend(self, rows: Iterable[tuple]) -> None:
        """Queue many rows at once; inserts a batch when the buffer is full."""
        self.rows.extend(rows)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def extend_columns(self, block: Mapping[str, Sequence[Any]]) -> None:
        """Insert a block given column by column (``columns``' names -> sequences or numpy arrays, all as long),
        after the rows queued: as it is where the backend takes columns
        (:meth:`dicegraph.store.backends.record.Backend.column_writer`), else queued as rows."""
        if self._columns is None:
            self.extend(zip(*(listed(block[name]) for name in self.columns)))
            return
        self.flush()
        self._columns(block)
        self.count += len(block[self.columns[0]])

    def flush(self) -> None:
        """Insert every queued row."""
        if self.rows:
            self._flush(self.rows)
            self.count += len(self.rows)
            self.rows = []

    def _flush_generic(self, rows: list[tuple]) -> None:
        self.connection.execute(self.statement, [dict(zip(self.columns, row)) for row in rows])


def find_graph(connection: sa.Connection, game: str, params_text: str, *, unfinished: bool = False) -> sa.Row | None:
    """Return the stored graph row of ``game`` built with ``params_text``, if any: a finished build's
    (:data:`dicegraph.store.catalog.BUILT`), or with ``unfinished`` also one that stopped before it was done."""
    query = (sa.select(graph) if unfinished else built_graphs()).where(graph.c.game == game, graph.c.params == params_text)
    return connection.execute(query).first()


def delete_graph(connection: sa.Connection, graph_id: int) -> None:
    """Delete a graph with its nodes, edges, policies, choices and values (per node and per turn state)."""
    policies = sa.select(policy.c.id).where(policy.c.graph_id == graph_id).scalar_subquery()
    connection.execute(sa.delete(value).where(value.c.policy_id.in_(policies)))
    connection.execute(sa.delete(choice).where(choice.c.policy_id.in_(policies)))
    connection.execute(sa.delete(turn_policy).where(turn_policy.c.policy_id.in_(policies)))
    first, last = graph_edge_span(connection, graph_id)
    if first is not None:
        connection.execute(sa.delete(edge).where(edge.c.id.between(first, last)))
    else:  # a build that stopped before its layers were written (on Spark): its edges found by their graph
        connection.execute(sa.delete(edge).where(edge.c.graph_id == graph_id))
    for table in (policy, layer, node):
        connection.execute(sa.delete(table).where(table.c.graph_id == graph_id))
    connection.execute(sa.delete(graph).where(graph.c.id == graph_id))


def build_graph(
    engine: sa.Engine,
    game: Game,
    params: Mapping[str, Any],
    *,
    replace: bool = False,
    progress: Progress | None = None,
    force: bool = False,
) -> BuildResult:
    """Build ``game`` with ``params`` into the database and return what was done.

    The same game and parameters built before with the same builder version is
    reused unless ``replace``; a stale builder version is replaced. Everything
    happens in one transaction: an error or Ctrl-C leaves the database as it was. Where there are no
    transactions (Spark), the graph's totals are written last and a graph without them is not listed
    (:data:`dicegraph.store.catalog.BUILT`); the next build of the same game and parameters deletes it and starts again.
    A game that estimates its size (``estimated_edges``) is refused, before
    anything is built, above :data:`MAX_EDGES` edges unless ``force``; every
    build is watched as it streams, and stopped (nothing kept) once it passes
    :data:`MAX_NODES` nodes or :data:`MAX_EDGES` edges unless ``force``.
    ``progress`` counts what :func:`build_count` says.
    """
    params = with_defaults(game, params)
    params_text = canonical_params(params)
    expected = expected_edges(game, params)
    edges = (expected or 0) if not force else 0
    if edges > MAX_EDGES:
        raise TooLarge(f"{game.name} with these parameters has about {edges:,} edges, about "
                       f"{edges * BYTES_PER_EDGE / 2**30:,.0f} GiB stored; dicegraph builds at most {MAX_EDGES:,} "
                       "unless forced (dicegraph build --force)")
    with engine.begin() as connection:
        old = find_graph(connection, game.name, params_text, unfinished=True)  # one that stopped is built again
        if old is not None and old.nodes > 0 and old.builder_version == game.version and not replace:
            return BuildResult(old.id, "reused", old.nodes, old.edges, old.layers)
        if old is not None:
            delete_graph(connection, old.id)
        graph_id = old.id if old is not None else next_id(connection, graph)
        connection.execute(
            sa.insert(graph).values(
                id=graph_id, game=game.name, params=params_text, builder_version=game.version,
                created_at=now(), nodes=0, edges=0, layers=0,
            )
        )
        agents = game.agents(params)
        policy_ids = _insert_agent_policies(connection, graph_id, agents, game.objective)
        checker = checker_for(game, params)
        watch = None if force else SizeWatch(game.name)
        _insert_rows(connection, graph_id, game.build(params), checker, policy_ids, progress, watch,
                     count_nodes=expected is None)  # as build_count says
        layers, totals = checker.finish()
        connection.execute(
            sa.insert(layer),
            [dict(graph_id=graph_id, **vars(stats)) for stats in layers],
        )
        connection.execute(sa.update(graph).where(graph.c.id == graph_id).values(**totals))
        backend_of(connection).take_statistics(connection, (graph, node, edge, layer, policy, choice))
    return BuildResult(graph_id, "built" if old is None else "replaced", **totals)


def build_count(game: Game, params: Mapping[str, Any]) -> tuple[str, int | None]:
    """Return what a build's progress counts and how many of them there will be: its edges, for a game that
    estimates them; else its nodes and edges, whose number is not known before the end.

    >>> from dicegraph.graphs import get_game
    >>> build_count(get_game("pig"), {"target": 10, "holds": ()})[0], build_count(get_game("jackpot"), {"cells": 4})
    ('edges', ('nodes and edges', None))
    """
    expected = expected_edges(game, params)
    return ("edges", expected) if expected is not None else ("nodes and edges", None)


@dataclass
class SizeWatch:
    """A build's size as it streams, stopped past :data:`MAX_NODES` nodes or :data:`MAX_EDGES` edges."""

    game: str
    nodes: int = 0
    edges: int = 0

    def grew(self, nodes: int = 0, edges: int = 0) -> None:
        """Count ``nodes`` and ``edges`` more; raise TooLarge once either passes its bound (the build's
        transaction then leaves nothing)."""
        self.nodes += nodes
        self.edges += edges
        if self.nodes > MAX_NODES or self.edges > MAX_EDGES:
            stored = (self.nodes * BYTES_PER_NODE + self.edges * BYTES_PER_EDGE) / 2**30
            raise TooLarge(f"{self.game} with these parameters passed {self.nodes:,} nodes and {self.edges:,} edges "
                           f"as it was built (about {stored:,.1f} GiB stored so far) and was stopped; dicegraph "
                           f"builds at most {MAX_NODES:,} nodes and {MAX_EDGES:,} edges unless forced (dicegraph "
                           "build --force); nothing was kept")


def expected_edges(game: Game, params: Mapping[str, Any]) -> int | None:
    """Return how many edges a build of ``game`` will have, counted before building (its ``estimated_edges``);
    None for a game that does not say."""
    return None if game.estimated_edges is None else game.estimated_edges(params)


def _insert_agent_policies(
    connection: sa.Connection, graph_id: int, agents: Iterable[str], objective: str
) -> dict[str, int]:
    first = next_id(connection, policy)
    policy_ids = {name: first + offset for offset, name in enumerate(agents)}
    if policy_ids:
        connection.execute(
            sa.insert(policy),
            [
                dict(id=policy_id, graph_id=graph_id, name=name, objective=objective, method="agent", created_at=now())
                for name, policy_id in policy_ids.items()
            ],
        )
    return policy_ids


NODE_COLUMNS = ("graph_id", "id", "key", "layer", "kind", "label", "denom", "payoff")
EDGE_COLUMNS = ("id", "graph_id", "src", "dst", "kind", "src_layer", "label", "weight", "reward", "sign")


def _insert_rows(
    connection: sa.Connection,
    graph_id: int,
    rows: Iterable[Row],
    checker: StreamChecker,
    policy_ids: Mapping[str, int],
    progress: Progress | None,
    watch: SizeWatch | None = None,
    *,
    count_nodes: bool = False,
) -> None:
    """Load the streamed ``rows`` (checked by ``checker``), telling ``progress`` of the edges loaded (and of the
    nodes, with ``count_nodes``) and ``watch`` of both."""
    nodes = BulkInserter(connection, node, NODE_COLUMNS)
    edges = BulkInserter(connection, edge, EDGE_COLUMNS)
    choices = BulkInserter(connection, choice, ("policy_id", "node_id", "edge_id"))
    next_edge = next_id(connection, edge)
    unchecked: list[Node] = []  # nodes queued, not yet checked: they are checked before the edges after them
    pending: list[Edge] = []  # edges streamed one by one, loaded as one block

    def check_nodes() -> None:
        nonlocal unchecked
        checker.nodes(unchecked)
        if watch is not None:
            watch.grew(nodes=len(unchecked))
        if progress is not None and count_nodes and unchecked:
            progress(len(unchecked))
        unchecked = []

    def load(block: EdgeColumns) -> None:
        nonlocal next_edge
        count = len(block.src)
        check_nodes()
        source_layers = checker.edge_columns(block, next_edge)
        edges.extend_columns({"id": np.arange(next_edge, next_edge + count, dtype=np.int64),
                              "graph_id": np.full(count, graph_id, dtype=np.int64), "src": block.src,
                              "dst": block.dst, "kind": block.kind, "src_layer": source_layers, "label": block.label,
                              "weight": block.weight, "reward": block.reward, "sign": block.sign})
        src = listed(block.src)
        for offset, agents in enumerate(block.chosen_by):
            for agent in agents:
                choices.add((policy_ids[agent], src[offset], next_edge + offset))
        if watch is not None:
            watch.grew(edges=count)
        if progress is not None:
            progress(count)
        next_edge += count

    def load_pending() -> None:
        nonlocal pending
        if pending:
            load(EdgeColumns.of(pending))
            pending = []

    try:
        for row in rows:
            kind = type(row)
            if kind is Edge:
                pending.append(row)
                if len(pending) >= BATCH_ROWS:
                    load_pending()
            elif kind is Node:
                unchecked.append(row)
                nodes.add((graph_id, *row))
                if len(unchecked) >= BATCH_ROWS:  # many nodes before an edge: checked, counted and watched
                    check_nodes()
            elif kind is EdgeColumns:
                load_pending()
                load(row)
            elif kind is CyclicLayers:
                load_pending()
                check_nodes()
                checker.cyclic(row)
            else:
                raise InvalidGraph(f"builder yielded {kind.__name__}, not a Node, Edge, EdgeColumns or CyclicLayers")
        load_pending()
        check_nodes()
        nodes.flush()
        edges.flush()
        choices.flush()
    except sa.exc.IntegrityError as error:
        raise InvalidGraph(f"duplicate node key or two choices of one agent at a node: {error.orig}") from None
