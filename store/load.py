"""Loading a builder's rows into the database, one transaction per build.

Rows go through :class:`BulkInserter`, which batches them and uses the fastest
path the backend offers for a Core INSERT. After the rows, SQL checks that the
graph obeys the model (layers increase along edges, roll weights add up to the
denominator, every agent decides everywhere); a failure rolls the build back.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from graphs.errors import InvalidGraph
from graphs.protocol import Edge, Game, Node, Row
from store.schema import choice, edge, graph, node, policy, value

BATCH_ROWS = 20_000
Progress = Callable[[int], None]


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

    SQLite takes the compiled Core INSERT through the driver's ``executemany``
    on plain tuples; other backends take the same statement through
    SQLAlchemy's executemany (its insertmanyvalues batching).
    """

    def __init__(self, connection: sa.Connection, table: sa.Table, columns: Sequence[str]):
        self.connection = connection
        self.columns = tuple(columns)
        self.statement = sa.insert(table)
        self.rows: list[tuple] = []
        self.count = 0
        if connection.dialect.name == "sqlite":
            compiled = self.statement.compile(dialect=connection.dialect, column_keys=list(self.columns))
            self._sql = str(compiled)
            self._order = [compiled.positiontup.index(name) for name in self.columns]  # type: ignore[union-attr]
            if self._order != sorted(self._order):
                raise ValueError(f"columns {self.columns} are not in {table.name}'s column order")
            self._flush = self._flush_sqlite
        else:
            self._flush = self._flush_generic

    def add(self, row: tuple) -> None:
        """Queue one row; inserts a batch when the buffer is full."""
        self.rows.append(row)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        """Insert every queued row."""
        if self.rows:
            self._flush(self.rows)
            self.count += len(self.rows)
            self.rows = []

    def _flush_sqlite(self, rows: list[tuple]) -> None:
        cursor = self.connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.executemany(self._sql, rows)
        finally:
            cursor.close()

    def _flush_generic(self, rows: list[tuple]) -> None:
        self.connection.execute(self.statement, [dict(zip(self.columns, row)) for row in rows])


def find_graph(connection: sa.Connection, game: str, params_text: str) -> sa.Row | None:
    """Return the stored graph row of ``game`` built with ``params_text``, if any."""
    query = sa.select(graph).where(graph.c.game == game, graph.c.params == params_text)
    return connection.execute(query).first()


def delete_graph(connection: sa.Connection, graph_id: int) -> None:
    """Delete a graph with its nodes, edges, policies, choices and values."""
    policies = sa.select(policy.c.id).where(policy.c.graph_id == graph_id).scalar_subquery()
    connection.execute(sa.delete(value).where(value.c.policy_id.in_(policies)))
    connection.execute(sa.delete(choice).where(choice.c.policy_id.in_(policies)))
    for table in (policy, edge, node):
        connection.execute(sa.delete(table).where(table.c.graph_id == graph_id))
    connection.execute(sa.delete(graph).where(graph.c.id == graph_id))


def build_graph(
    engine: sa.Engine,
    game: Game,
    params: Mapping[str, Any],
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> BuildResult:
    """Build ``game`` with ``params`` into the database and return what was done.

    The same game and parameters built before with the same builder version is
    reused unless ``replace``; a stale builder version is replaced. Everything
    happens in one transaction: an error or Ctrl-C leaves the database as it was.
    """
    params_text = canonical_params(params)
    with engine.begin() as connection:
        old = find_graph(connection, game.name, params_text)
        if old is not None and old.builder_version == game.version and not replace:
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
        nodes, edges = _insert_rows(connection, graph_id, game.build(params), policy_ids, progress)
        layers = validate_graph(connection, graph_id, policy_ids)
        connection.execute(sa.update(graph).where(graph.c.id == graph_id).values(nodes=nodes, edges=edges, layers=layers))
    return BuildResult(graph_id, "built" if old is None else "replaced", nodes, edges, layers)


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
EDGE_COLUMNS = ("graph_id", "id", "src", "dst", "kind", "src_layer", "dst_layer", "label", "weight", "reward")


def _insert_rows(
    connection: sa.Connection,
    graph_id: int,
    rows: Iterable[Row],
    policy_ids: Mapping[str, int],
    progress: Progress | None,
) -> tuple[int, int]:
    nodes = BulkInserter(connection, node, NODE_COLUMNS)
    edges = BulkInserter(connection, edge, EDGE_COLUMNS)
    choices = BulkInserter(connection, choice, ("policy_id", "node_id", "edge_id"))
    edge_id = 0
    try:
        for row in rows:
            if type(row) is Edge:
                edges.add((graph_id, edge_id, *row[:8]))
                for agent in row.chosen_by:
                    choices.add((policy_ids[agent], row.src, edge_id))
                edge_id += 1
                if progress is not None and edge_id % BATCH_ROWS == 0:
                    progress(BATCH_ROWS)
            elif type(row) is Node:
                nodes.add((graph_id, *row))
            else:
                raise InvalidGraph(f"builder yielded {type(row).__name__}, not a Node or Edge")
        for inserter in (nodes, edges, choices):
            inserter.flush()
    except KeyError as error:
        raise InvalidGraph(f"an edge is chosen by {error.args[0]!r}, which is not one of the game's agents") from None
    except sa.exc.IntegrityError as error:
        raise InvalidGraph(f"duplicate node key, node id or agent choice: {error.orig}") from None
    if progress is not None:
        progress(edge_id % BATCH_ROWS)
    return nodes.count, edges.count


def _first_violation(connection: sa.Connection, query: sa.Select) -> sa.Row | None:
    return connection.execute(query.limit(1)).first()


def validate_graph(connection: sa.Connection, graph_id: int, policy_ids: Mapping[str, int]) -> int:
    """Check the stored graph against the model and return its number of layers.

    Raises InvalidGraph naming the first offending node or edge.
    """
    src, dst = node.alias("src"), node.alias("dst")
    in_graph = edge.c.graph_id == graph_id
    root = connection.execute(
        sa.select(node.c.id, node.c.layer).where(node.c.graph_id == graph_id).order_by(node.c.layer, node.c.id).limit(2)
    ).all()
    if not root or root[0].id != 0 or (len(root) > 1 and root[1].layer == root[0].layer):
        raise InvalidGraph("the graph needs exactly one root: node 0, alone in the lowest layer")
    bad_edge = _first_violation(
        connection,
        sa.select(edge.c.id, edge.c.src, edge.c.dst)
        .select_from(
            edge.outerjoin(src, sa.and_(src.c.graph_id == graph_id, src.c.id == edge.c.src)).outerjoin(
                dst, sa.and_(dst.c.graph_id == graph_id, dst.c.id == edge.c.dst)
            )
        )
        .where(
            in_graph,
            sa.or_(
                src.c.id.is_(None),
                dst.c.id.is_(None),
                src.c.layer != edge.c.src_layer,
                dst.c.layer != edge.c.dst_layer,
                edge.c.dst_layer <= edge.c.src_layer,
                sa.and_(edge.c.kind == "roll", src.c.kind != "chance"),
                sa.and_(edge.c.kind == "move", src.c.kind != "decision"),
                sa.and_(edge.c.kind == "roll", edge.c.weight <= 0),
            ),
        ),
    )
    if bad_edge is not None:
        raise InvalidGraph(
            f"edge {bad_edge.id} ({bad_edge.src} -> {bad_edge.dst}) breaks the model: it must join existing "
            "nodes from a lower to a higher layer, rolls leaving chance nodes with a positive weight, "
            "moves leaving decision nodes"
        )
    out = (
        sa.select(
            edge.c.src,
            sa.func.count().label("edges"),
            sa.func.sum(sa.case((edge.c.kind == "roll", edge.c.weight), else_=0)).label("weight"),
        )
        .where(in_graph)
        .group_by(edge.c.src)
        .subquery()
    )
    bad_node = _first_violation(
        connection,
        sa.select(node.c.key, node.c.kind)
        .select_from(node.outerjoin(out, out.c.src == node.c.id))
        .where(
            node.c.graph_id == graph_id,
            sa.or_(
                sa.and_(node.c.kind == "terminal", sa.or_(out.c.edges.is_not(None), node.c.payoff.is_(None))),
                sa.and_(node.c.kind == "decision", out.c.edges.is_(None)),
                sa.and_(node.c.kind == "chance", sa.func.coalesce(out.c.weight, 0) != node.c.denom),
                node.c.kind.not_in(("chance", "decision", "terminal")),
            ),
        ),
    )
    if bad_node is not None:
        raise InvalidGraph(
            f"{bad_node.kind} node {bad_node.key!r} breaks the model: terminals need a payoff and no edges, "
            "decisions at least one move, chance nodes roll weights adding up to their denom"
        )
    for name, policy_id in policy_ids.items():
        undecided = _first_violation(
            connection,
            sa.select(node.c.key)
            .select_from(
                node.outerjoin(choice, sa.and_(choice.c.policy_id == policy_id, choice.c.node_id == node.c.id))
            )
            .where(node.c.graph_id == graph_id, node.c.kind == "decision", choice.c.edge_id.is_(None)),
        )
        if undecided is not None:
            raise InvalidGraph(f"agent {name!r} makes no choice at decision node {undecided.key!r}")
    return connection.execute(sa.select(sa.func.max(node.c.layer) + 1).where(node.c.graph_id == graph_id)).scalar_one()
