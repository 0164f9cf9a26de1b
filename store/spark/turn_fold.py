"""A turn folded over its layers inside each turn state's row: the turn solve of :mod:`store.solve.turns` on Spark
in one statement a batch of states, not a statement or two a turn layer.

Spark pays about half a second a statement whatever its rows, and each statement of the layer-by-layer turn solve
shuffles the whole ``(turn node, state)`` work table (docs/spark.md). Here the turn (a few thousand nodes, the same
for every state) goes into one row of arrays, its layers deepest first, a node's moves and rolls in edge id order,
each pointing at its child by position. Each state's row starts from an array of the turn's ends (what each is
worth from that state under each policy, null where the state has no such move) and Spark's higher-order
functions fold the turn's layers into it on the executors, the states spread over them: ``aggregate`` over the
layers, ``transform`` over a layer's nodes, appending their values. No shuffle a turn layer, and the chosen moves
come out of the same statement as text.

Every number follows :func:`store.solve.turns._turn_plan`'s rules: a chance node is the weighted mean of its
children that have a value (``sum(weight * value) / sum(weight)`` over them), a decision node is worth its best
move's profit ``p`` (the move's reward plus the child's), and its value ``v1`` and second moment ``v2`` follow the
move taken: the lowest edge id within :data:`graphs.protocol.TIE` of the best (the rule of
:func:`store.solve.layers.best_move_rows`). A node none of whose children has a value has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from graphs.protocol import TIE
from store.schema import edge, node
from store.scratch import create_afresh


class _Spark(ColumnElement):
    """An expression of Spark SQL's own, as text (a lambda: SQLAlchemy has no construct for one)."""

    inherit_cache = False

    def __init__(self, text: str):
        self.text = text


@compiles(_Spark)
def _spark_text(element: _Spark, compiler: object, **kw: object) -> str:
    return element.text


def _struct(values: dict[str, str]) -> str:
    """Return Spark's ``named_struct`` of ``values`` (field -> expression text)."""
    return "named_struct(" + ", ".join(f"'{name}', {text}" for name, text in values.items()) + ")"


def _let(value: str, name: str, body: str) -> str:
    """Return the text of ``body`` with ``name`` bound to ``value``, evaluated once (a one-element ``transform``)."""
    return f"transform(array({value}), {name} -> {body})[0]"


def _chance(policies: int) -> str:
    """Return the value of chance node ``n``: the weighted mean of its children with a value, field by field."""
    kids = "filter(transform(n.edges, e -> named_struct('w', e.w, 'v', vals[e.d])), x -> x.v IS NOT NULL)"
    means = {}
    for i in range(policies):
        for name in (f"p{i}", f"v1_{i}", f"v2_{i}"):
            means[name] = f"aggregate(kids, 0D, (a, x) -> a + x.w * x.v.{name}) / total"
        means[f"c{i}"] = "CAST(NULL AS BIGINT)"
    whole = _let("aggregate(kids, 0D, (a, x) -> a + x.w)", "total", _struct(means))
    return _let(kids, "kids", f"IF(size(kids) = 0, NULL, {whole})")


def _decision(policies: int) -> str:
    """Return the value of decision node ``n``: each policy's best profit over the moves to children with a
    value, and the value and second moment of the move taken, the first in edge id order within TIE of the best."""
    kids = "filter(transform(n.edges, e -> named_struct('r', e.r, 'o', e.o, 'v', vals[e.d])), x -> x.v IS NOT NULL)"
    bests = {f"b{i}": f"array_max(transform(kids, x -> x.r + x.v.p{i}))" for i in range(policies)}
    taken = {f"m{i}": f"filter(kids, x -> x.r + x.v.p{i} >= b.b{i} - {TIE!r}D * (1D + abs(b.b{i})))[0]"
             for i in range(policies)}
    values = {}
    for i in range(policies):
        move = f"m.m{i}"
        values[f"p{i}"] = f"b.b{i}"
        values[f"v1_{i}"] = f"{move}.r + {move}.v.v1_{i}"
        values[f"v2_{i}"] = f"{move}.r * {move}.r + 2D * {move}.r * {move}.v.v1_{i} + {move}.v.v2_{i}"
        values[f"c{i}"] = f"{move}.o"
    chosen = _let(_struct(bests), "b", _let(_struct(taken), "m", _struct(values)))
    return _let(kids, "kids", f"IF(size(kids) = 0, NULL, {chosen})")


def fold_expression(policies: int) -> str:
    """Return the text folding ``turn.layers`` into ``start.ends``: the array of every turn node's values (the
    ends first, then the turn's nodes deepest layer first), each a struct of :func:`_fields`.

    >>> fold_expression(1)[:60]
    'aggregate(turn.layers, start.ends, (vals, layer) -> concat(v'
    """
    node_value = f"IF(n.chance, {_chance(policies)}, {_decision(policies)})"
    return f"aggregate(turn.layers, start.ends, (vals, layer) -> concat(vals, transform(layer, n -> {node_value})))"


def turn_arrays(graph_id: int, turn_layer: int, edges: tuple[int, int], ends: sa.FromClause, end_count: int,
                first_edge: int) -> sa.Select:
    """Return the SELECT of one row: ``layers``, the turn's nodes from ``turn_layer`` on, deepest layer first, each
    ``(chance, edges)`` with its edges (ids in ``edges``) in id order as ``(d, w, r, o)``: the child's position
    among the ``end_count`` ends (``ends``' rows by node id) and the turn's nodes, the weight, the reward and the offset from
    ``first_edge``."""
    turn_nodes = (sa.select(node.c.id, node.c.layer, node.c.kind,
                            (sa.func.row_number().over(order_by=(node.c.layer.desc(), node.c.id)) - 1 + end_count)
                            .label("at"))
                  .where(node.c.graph_id == graph_id, node.c.layer >= turn_layer, node.c.kind != "terminal")
                  .cte("turn_node"))
    end_at = sa.select(ends.c.node_id.label("id"),
                       (sa.func.row_number().over(order_by=ends.c.node_id) - 1).label("at"))
    position = sa.union_all(sa.select(turn_nodes.c.id, turn_nodes.c.at), end_at).cte("turn_position")
    move = (sa.select(edge.c.src, edge.c.id,
                      sa.func.named_struct("d", position.c.at, "w", sa.cast(edge.c.weight, sa.Double),
                                           "r", sa.cast(edge.c.reward, sa.Double),
                                           "o", sa.cast(edge.c.id - first_edge, sa.BigInteger)).label("e"))
            .select_from(edge.join(position, position.c.id == edge.c.dst))
            .where(edge.c.graph_id == graph_id, edge.c.id.between(*edges))
            .cte("turn_edge"))
    in_order = _Spark("x -> x.e")
    nodes = (sa.select(turn_nodes.c.layer, turn_nodes.c.at,
                       sa.func.named_struct(
                           "chance", turn_nodes.c.kind == "chance",
                           "edges", sa.func.transform(sa.func.array_sort(sa.func.collect_list(
                               sa.func.named_struct("id", move.c.id, "e", move.c.e))), in_order)).label("n"))
             .select_from(turn_nodes.join(move, move.c.src == turn_nodes.c.id))
             .group_by(turn_nodes.c.layer, turn_nodes.c.at, turn_nodes.c.kind)
             .cte("turn_node_edges"))
    layers = (sa.select(nodes.c.layer, sa.func.transform(sa.func.array_sort(sa.func.collect_list(
                  sa.func.named_struct("at", nodes.c.at, "n", nodes.c.n))), _Spark("x -> x.n")).label("nodes"))
              .group_by(nodes.c.layer).cte("turn_layer"))
    deepest_first = sa.func.transform(sa.func.array_sort(sa.func.collect_list(
        sa.func.named_struct("k", -layers.c.layer, "nodes", layers.c.nodes))), _Spark("x -> x.nodes"))
    return sa.select(deepest_first.label("layers"))


class _TurnLayers(sa.types.UserDefinedType):
    """Spark's type of :func:`turn_arrays`' ``layers``."""

    cache_ok = True

    def get_col_spec(self, **kw: object) -> str:
        return "ARRAY<ARRAY<STRUCT<chance: BOOLEAN, edges: ARRAY<STRUCT<d: INT, w: DOUBLE, r: DOUBLE, o: BIGINT>>>>>"


@dataclass(frozen=True)
class FoldedTurn:
    """A turn stored as one row of arrays (:func:`turn_arrays`) in a work table, made once a solve by
    :func:`fold_turn`: what :func:`folded_batch` needs of it."""

    table: sa.Table
    ends: sa.Table
    end_count: int
    root_at: int  # the root's position in the folded values


def fold_turn(connection: sa.Connection, graph_id: int, turn_layer: int, edges: tuple[int, int], root: int,
              ends: sa.Table, end_count: int) -> FoldedTurn:
    """Store the turn of graph ``graph_id`` (from ``turn_layer`` on, edge ids in ``edges``, its ``end_count`` ends
    in ``ends``) as one row of arrays in a new work table; return it with the position of ``root``."""
    table = sa.Table("turn_fold", sa.MetaData(), sa.Column("layers", _TurnLayers()), prefixes=["TEMPORARY"])
    create_afresh(connection, table)
    connection.execute(sa.insert(table).from_select(["layers"], turn_arrays(
        graph_id, turn_layer, edges, ends, end_count, edges[0])))
    root_layer = sa.select(node.c.layer).where(node.c.id == root).scalar_subquery()
    before = sa.select(sa.func.count()).where(
        node.c.graph_id == graph_id, node.c.layer >= turn_layer, node.c.kind != "terminal",
        sa.or_(node.c.layer > root_layer, sa.and_(node.c.layer == root_layer, node.c.id < root)))
    return FoldedTurn(table, ends, end_count, end_count + connection.execute(before).scalar_one())


def folded_batch(turn: FoldedTurn, next_states: sa.Table, state_moves: sa.ColumnElement[bool],
                 own_profits: Sequence[bool]) -> sa.Select:
    """Return the SELECT of each state's results: ``(state, v1_0, v2_0, chosen_0, v1_1, ...)``, ``chosen_i`` the
    offsets (from the turn's first edge) of policy ``i``'s moves at the turn's decision nodes joined by commas.

    A state's ends come from its moves ``state_moves`` selects: the move labelled like an end is worth its reward
    plus the value of the state it leads to (``next_states``: ``v1_i, v2_i``), its profit the policy's own
    (the turn's ends table: ``profit_i``) where ``own_profits[i]``. States whose turn has no value are left out.
    """
    ends, end_count = turn.ends, turn.end_count
    policies = len(own_profits)
    end_at = sa.select(ends, (sa.func.row_number().over(order_by=ends.c.node_id) - 1).label("at")).subquery("end_at")
    reward = edge.c.reward
    worth: list[sa.ColumnElement] = []
    for i, own in enumerate(own_profits):
        v1, v2 = next_states.c[f"v1_{i}"], next_states.c[f"v2_{i}"]
        values = (end_at.c[f"profit{i}"] if own else reward + v1, reward + v1, reward * reward + 2 * reward * v1 + v2)
        for name, value in zip((f"p{i}", f"v1_{i}", f"v2_{i}"), values):
            worth += [sa.literal(name), sa.cast(value, sa.Double)]
        worth += [sa.literal(f"c{i}"), sa.cast(sa.null(), sa.BigInteger)]
    by_end = (sa.select(edge.c.src.label("state"), sa.func.map_from_entries(sa.func.collect_list(
                  sa.func.named_struct("k", end_at.c.at, "v", sa.func.named_struct(*worth)))).label("worth"))
              .select_from(edge.join(next_states, next_states.c.node_id == edge.c.dst)
                           .join(end_at, end_at.c.label == edge.c.label))
              .where(state_moves).group_by(edge.c.src).subquery("by_end"))
    start = sa.select(by_end.c.state, sa.func.transform(
        sa.func.sequence(0, end_count - 1), _Spark("k -> try_element_at(by_end.worth, k)")).label("ends")
    ).subquery("start")
    arrays = turn.table.alias("turn")
    folded = (sa.select(start.c.state, _Spark(fold_expression(policies)).label("vals"))
              .select_from(start.join(arrays, sa.true())).subquery("folded"))
    chosen = [sa.func.array_join(_Spark(
        f"transform(filter(folded.vals, x -> x.c{i} IS NOT NULL), x -> CAST(x.c{i} AS STRING))"), ",").label(f"chosen{i}")
        for i in range(policies)]
    result = sa.select(folded.c.state, sa.func.element_at(folded.c.vals, turn.root_at + 1).label("root"), *chosen) \
        .subquery("result")
    columns = [column for i in range(policies) for column in (
        _Spark(f"result.root.v1_{i}"), _Spark(f"result.root.v2_{i}"), result.c[f"chosen{i}"])]
    return sa.select(result.c.state, *columns).where(result.c.root.is_not(None))
