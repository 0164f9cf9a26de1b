"""Tables and views of a dicegraph database (SQLAlchemy Core).

The tables hold graphs as builders stream them (``graph``, ``layer``, ``node``,
``edge``) and what the algorithms compute over them (``policy``, ``choice``,
``value``, and ``turn_policy`` for games whose turn is stored once and joined
with their turn states).

Edges are stored in layer order under one id sequence shared by all graphs, so
the edges leaving a layer are the id range ``layer.first_edge ..
layer.last_edge``: every per-layer statement is a primary-key range scan and
the edge table needs no secondary index (which would halve the load rate).
On SQLite the edge id is the rowid; ``node``, ``choice`` and ``value`` are
clustered on their primary keys (``WITHOUT ROWID``).
The views ``positions`` and ``moves`` are the friendly surface for people
writing SQL; they are created by the migrations from :func:`positions_view`
and :func:`moves_view`.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import BigInteger, Column, DateTime, Double, ForeignKey, Integer, String, Table, Text

from dicegraph.store.backends import edge_id_type

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

graph = Table(
    "graph",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("game", String(64), nullable=False),
    Column("params", Text, nullable=False, comment="canonical JSON of the builder parameters"),
    Column("builder_version", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("nodes", Integer, nullable=False),
    Column("edges", BigInteger, nullable=False),
    Column("layers", Integer, nullable=False),
    sa.UniqueConstraint("game", "params"),
)

EdgeId = edge_id_type()  # INTEGER where a lone INTEGER PRIMARY KEY is the row id (SQLite), else BIGINT

layer = Table(
    "layer",
    metadata,
    Column("graph_id", Integer, ForeignKey("graph.id"), primary_key=True),
    Column("layer", Integer, primary_key=True, autoincrement=False),
    Column("nodes", Integer, nullable=False),
    Column("rolls", BigInteger, nullable=False, comment="roll edges leaving the layer"),
    Column("moves", BigInteger, nullable=False, comment="move edges leaving the layer"),
    Column("first_edge", EdgeId, comment="id range of the edges leaving the layer"),
    Column("last_edge", EdgeId),
    Column("cycle_start", Integer, comment="layers of a cyclic component: its first layer, which its edges may go back to"),
)

node = Table(
    "node",
    metadata,
    Column("graph_id", Integer, ForeignKey("graph.id"), primary_key=True),
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("key", Text, nullable=False, comment="canonical text of the state"),
    Column("layer", Integer, nullable=False),
    Column("kind", String(8), nullable=False, comment="chance, decision or terminal"),
    Column("label", Text, nullable=False),
    Column("denom", Integer, comment="chance nodes: total weight of the roll edges"),
    Column("payoff", Double, comment="terminal nodes: the game's value there"),
    sa.UniqueConstraint("graph_id", "key"),
    sqlite_with_rowid=False,
)

edge = Table(
    "edge",
    metadata,
    Column("id", EdgeId, primary_key=True, autoincrement=False),
    Column("graph_id", Integer, ForeignKey("graph.id"), nullable=False),
    Column("src", Integer, nullable=False),
    Column("dst", Integer, nullable=False),
    Column("kind", String(8), nullable=False, comment="roll or move"),
    Column("src_layer", Integer, nullable=False),
    Column("label", Text, nullable=False),
    Column("weight", Integer, nullable=False, comment="roll edges: outcomes over the source's denom"),
    Column("reward", Double, nullable=False),
    Column("sign", sa.SmallInteger, nullable=False, server_default="1",
           comment="-1 where the turn passes to the opponent: the edge is worth reward + sign * value(dst)"),
)

RESPONDS_TO = ("a best response: the id of the policy it is solved against, its values those of playing against "
               "it (NULL: values in self-play)")

OPPONENT_VALUE = ("a best response in a game for two: the value at the state of the policy it answers, to move there "
                  "against it, which its moves are ranked by (NULL: the policy's own value, in self-play)")

policy = Table(
    "policy",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("graph_id", Integer, ForeignKey("graph.id"), nullable=False),
    Column("name", String(64), nullable=False),
    Column("objective", String(8), nullable=False, comment="max or min: which payoff is better"),
    Column("method", String(8), nullable=False, comment="agent (from the builder) or solve"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("goal", String(32), comment="what a terminal is worth to a solve: NULL its payoff, else a test such as 'payoff = 0' (1 when it holds)"),
    Column("unfinished_since", DateTime(timezone=True),
           comment="set while a solve committed in steps is unfinished (it resumes; nothing lists it)"),
    Column("convergence", Text, comment="graphs with cycles: how the solve converged (JSON: method, passes, residual)"),
    Column("responds_to", Integer, comment=RESPONDS_TO),
    sa.UniqueConstraint("graph_id", "name"),
)

choice = Table(
    "choice",
    metadata,
    Column("policy_id", Integer, ForeignKey("policy.id"), primary_key=True),
    Column("node_id", Integer, primary_key=True, autoincrement=False),
    Column("edge_id", EdgeId, nullable=False),
    sqlite_with_rowid=False,
)

value = Table(
    "value",
    metadata,
    Column("policy_id", Integer, ForeignKey("policy.id"), primary_key=True),
    Column("node_id", Integer, primary_key=True, autoincrement=False),
    Column("value", Double, nullable=False, comment="expected payoff from the node under the policy"),
    Column("reach", Double, comment="probability of reaching the node from the root (NULL in graphs with cycles)"),
    sqlite_with_rowid=False,
)


turn_policy = Table(
    "turn_policy",
    metadata,
    Column("policy_id", Integer, ForeignKey("policy.id"), primary_key=True),
    Column("node_id", Integer, primary_key=True, autoincrement=False, comment="a turn state"),
    Column("value", Double, nullable=False, comment="expected points still to come from the state under the policy"),
    Column("moment2", Double, nullable=False, comment="expected square of those points"),
    Column("decisions", sa.LargeBinary, nullable=False,
           comment="the policy's moves at the turn's decision nodes, packed by the game's DecisionEncoder"),
    Column("opponent_value", Double, comment=OPPONENT_VALUE),
    sqlite_with_rowid=False,
    comment="games whose turn graph is stored once: a policy's value and decisions per turn state",
)


def ranked_values(policy_id: int) -> sa.Select:
    """Return a query of ``(node_id, rank)`` over the turn states of the stored policy ``policy_id``: the value of the
    player to move at the state facing the policy, which its moves are ranked by: in self-play its own value, for a
    race's best response the answered policy's (``opponent_value``)."""
    return sa.select(turn_policy.c.node_id, sa.func.coalesce(turn_policy.c.opponent_value, turn_policy.c.value)
                     .label("rank")).where(turn_policy.c.policy_id == policy_id)


def layer_ranges(connection: sa.Connection, graph_id: int) -> list[sa.Row]:
    """Return (layer, rolls, moves, first_edge, last_edge) of the layers that have edges, lowest first."""
    query = (
        sa.select(layer.c.layer, layer.c.rolls, layer.c.moves, layer.c.first_edge, layer.c.last_edge)
        .where(layer.c.graph_id == graph_id, layer.c.rolls + layer.c.moves > 0)
        .order_by(layer.c.layer)
    )
    return connection.execute(query).all()


def graph_edge_span(connection: sa.Connection, graph_id: int) -> tuple[int | None, int | None]:
    """Return the first and last edge id of the graph (None, None when it has no edges)."""
    span = sa.select(sa.func.min(layer.c.first_edge), sa.func.max(layer.c.last_edge)).where(layer.c.graph_id == graph_id)
    first, last = connection.execute(span).one()
    return first, last


def edges_of(span: sa.Row, kind: str, edges: sa.FromClause | None = None) -> sa.ColumnElement[bool]:
    """Return the condition selecting the ``kind`` edges leaving the layer ``span`` describes, in ``edges`` (the
    ``edge`` table, or a copy of some of its rows)."""
    edges = edge if edges is None else edges
    return sa.and_(edges.c.id.between(span.first_edge, span.last_edge), edges.c.kind == kind)


def positions_view() -> sa.Select:
    """Return the SELECT behind the ``positions`` view: a row per node and evaluated policy."""
    scores = value.join(policy, policy.c.id == value.c.policy_id)
    return sa.select(
        graph.c.game,
        node.c.graph_id.label("graph"),
        node.c.id.label("node"),
        node.c.key,
        node.c.label,
        node.c.layer,
        node.c.kind,
        node.c.payoff,
        policy.c.name.label("policy"),
        value.c.value,
        value.c.reach,
    ).select_from(
        node.join(graph, graph.c.id == node.c.graph_id).outerjoin(
            scores, sa.and_(value.c.node_id == node.c.id, policy.c.graph_id == node.c.graph_id)
        )
    )


def moves_view() -> sa.Select:
    """Return the SELECT behind the ``moves`` view: a row per edge, decoded."""
    src, dst = node.alias("src_node"), node.alias("dst_node")
    chooser = policy.alias("chooser")
    chosen_by = (
        sa.select(sa.func.aggregate_strings(chooser.c.name, ","))
        .select_from(chooser.join(choice, choice.c.policy_id == chooser.c.id))
        .where(
            chooser.c.graph_id == edge.c.graph_id,
            choice.c.node_id == edge.c.src,
            choice.c.edge_id == edge.c.id,
        )
        .scalar_subquery()
    )
    probability = sa.case(
        (edge.c.kind == "roll", sa.cast(edge.c.weight, Double) / src.c.denom), else_=sa.null()
    )
    return sa.select(
        graph.c.game,
        edge.c.graph_id.label("graph"),
        edge.c.id.label("edge"),
        src.c.key.label("from_key"),
        src.c.label.label("from_label"),
        dst.c.key.label("to_key"),
        dst.c.label.label("to_label"),
        edge.c.kind,
        edge.c.label.label("move"),
        edge.c.weight,
        probability.label("probability"),
        edge.c.reward,
        chosen_by.label("chosen_by"),
    ).select_from(
        edge.join(graph, graph.c.id == edge.c.graph_id)
        .join(src, sa.and_(src.c.graph_id == edge.c.graph_id, src.c.id == edge.c.src))
        .join(dst, sa.and_(dst.c.graph_id == edge.c.graph_id, dst.c.id == edge.c.dst))
    )


VIEWS = {"positions": positions_view, "moves": moves_view}
