"""A turn folded over its layers inside each turn state's row: the turn solve of :mod:`dicegraph.store.solve.turns` on Spark
in one statement a batch of states, not a statement or two a turn layer.

Spark pays about half a second a statement whatever its rows, and each statement of the layer-by-layer turn solve
shuffles the whole ``(turn node, state)`` work table (docs/spark.md). Here the turn (a few thousand nodes, the same
for every state) goes into one row of arrays, its layers deepest first, a node's moves and rolls in edge id order,
each pointing at its child by position. Each state's row starts from an array of the turn's ends (what each is
worth from that state under each policy, null where the state has no such move: an array a field, see
:func:`fields`) and Spark's higher-order functions fold the turn's layers into it on the executors, the states
spread over them: ``aggregate`` over the layers, ``transform`` over a layer's nodes, appending their values. No
shuffle a turn layer, and the chosen moves come out of the same statement as text.

The fold's generated code is larger than the JVM compiles (HotSpot leaves a method of more than 8,000 bytes to
its bytecode interpreter), so Spark must evaluate it through its own expressions instead, as the dialect's
session settings have it: School's layer 11 (1,350 states, both policies) then took 33.1 s, against 256.7 s
(:data:`dicegraph.store.backends.spark.dialect.SESSION_SETTINGS`).

Every number follows :func:`dicegraph.store.solve.turns._turn_plan`'s rules: a chance node is the weighted mean of its
children that have a value (``sum(weight * value) / sum(weight)`` over them), a decision node is worth its best
move's profit ``p`` (the move's reward plus the child's), and its value ``v1`` and second moment ``v2`` follow the
move taken: the lowest edge id within :data:`dicegraph.graphs.protocol.TIE` of the best (the rule of
:func:`dicegraph.store.solve.layers.best_move_rows`). A node none of whose children has a value has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from dicegraph.store.schema import edge, node, turn_policy
from dicegraph.store.scratch import create_afresh
from dicegraph.store.turn_ends import end_worth
from dicegraph.store.turn_graph import TurnGraph, state_moves
from dicegraph.store.backends.spark.graph_fold import collected_map
from dicegraph.store.backends.spark.lambdas import SparkText, best_move, let, over_edges


def fields(policies: int) -> list[str]:
    """Return the names of the folded arrays, policy by policy: each node's profit ``p``, value ``v1``, second
    moment ``v2`` and, at a decision node, the offset ``c`` of the move taken.

    >>> fields(1)
    ['p0', 'v1_0', 'v2_0', 'c0']
    """
    return [name for i in range(policies) for name in (f"p{i}", f"v1_{i}", f"v2_{i}", f"c{i}")]


def _layer_step(policies: int) -> str:
    """Return the text of one step of the fold: ``vals`` (a struct of arrays, :func:`fields`) with the values of
    ``layer``'s nodes appended to each array.

    Per node ``n`` (at ``j`` in its layer): a chance node's total weight ``t[j]`` over its children with a value
    (null if none) and its values the weighted means over them; a decision node's best profit ``b_i[j]`` under
    policy ``i`` and the position ``m_i[j]`` of the move taken (null if none has a value).
    """
    child = "vals.p0[n.d[k]]"
    total = over_edges("0D", f"a + IF({child} IS NULL, 0D, n.w[k])")
    lets = [("t", f"transform(layer, n -> IF(n.chance, NULLIF({total}, 0D), NULL))")]
    appended = {}
    for i in range(policies):
        p, v1, v2 = (f"vals.{name}" for name in (f"p{i}", f"v1_{i}", f"v2_{i}"))
        profit = f"n.r[k] + {p}[n.d[k]]"
        best, first = best_move(profit, f"b{i}[j]")
        lets.append((f"b{i}", f"transform(layer, n -> IF(n.chance, NULL, {best}))"))
        lets.append((f"m{i}", f"transform(layer, (n, j) -> IF(b{i}[j] IS NULL, NULL, {first}))"))

        def mean(values: str) -> str:
            return over_edges("0D", f"a + n.w[k] * coalesce({values}[n.d[k]], 0D)") + " / t[j]"

        r, d = f"n.r[m{i}[j]]", f"n.d[m{i}[j]]"
        for name, chance, decision in (
                (f"p{i}", mean(p), f"b{i}[j]"),
                (f"v1_{i}", mean(v1), f"{r} + {v1}[{d}]"),
                (f"v2_{i}", mean(v2), f"{r} * {r} + 2D * {r} * {v1}[{d}] + {v2}[{d}]")):
            appended[name] = f"transform(layer, (n, j) -> IF(n.chance, {chance}, {decision}))"
        appended[f"c{i}"] = f"transform(layer, (n, j) -> n.o[m{i}[j]])"
    body = "named_struct(" + ", ".join(f"'{name}', concat(vals.{name}, {appended[name]})"
                                       for name in fields(policies)) + ")"
    for name, value in reversed(lets):
        body = let(value, name, body)
    return body


def fold_expression(policies: int) -> str:
    """Return the text folding ``turn.layers`` into ``start.ends``: a struct of arrays (:func:`fields`) of every
    turn node's values, the ends first, then the turn's nodes deepest layer first.

    >>> fold_expression(1)[:45]
    'aggregate(turn.layers, start.ends, (vals, lay'
    """
    return f"aggregate(turn.layers, start.ends, (vals, layer) -> {_layer_step(policies)})"


def fold_positions(graph_id: int, turn_layer: int, ends: sa.FromClause, end_count: int) -> tuple[sa.CTE, sa.CTE]:
    """Return the turn's nodes from ``turn_layer`` on, each ``(id, layer, kind, at)`` with its position ``at`` in the
    folded values (after the ``end_count`` ends, deepest layer first, by id within a layer), and every position,
    ``(id, at)``, the ends' (``ends``' rows by node id) first."""
    turn_nodes = (sa.select(node.c.id, node.c.layer, node.c.kind,
                            (sa.func.row_number().over(order_by=(node.c.layer.desc(), node.c.id)) - 1 + end_count)
                            .label("at"))
                  .where(node.c.graph_id == graph_id, node.c.layer >= turn_layer, node.c.kind != "terminal")
                  .cte("turn_node"))
    end_at = sa.select(ends.c.node_id.label("id"),
                       (sa.func.row_number().over(order_by=ends.c.node_id) - 1).label("at"))
    return turn_nodes, sa.union_all(sa.select(turn_nodes.c.id, turn_nodes.c.at), end_at).cte("turn_position")


def turn_arrays(graph_id: int, turn_layer: int, edges: tuple[int, int], ends: sa.FromClause, end_count: int,
                first_edge: int, positions: tuple[sa.CTE, sa.CTE] | None = None) -> sa.Select:
    """Return the SELECT of one row: ``layers``, the turn's nodes from ``turn_layer`` on, deepest layer first, each
    ``(chance, ix, d, w, r, o)``: its edges (ids in ``edges``) in id order as arrays of their positions ``ix``
    (0, 1, ...), their children's positions ``d`` among the ``end_count`` ends (``ends``' rows by node id) and the
    turn's nodes, their weights ``w``, rewards ``r`` and offsets ``o`` from ``first_edge``. ``positions`` are
    :func:`fold_positions`' (made here when not given)."""
    turn_nodes, position = positions or fold_positions(graph_id, turn_layer, ends, end_count)
    move = (sa.select(edge.c.src, sa.func.named_struct(
                          "id", edge.c.id, "d", position.c.at, "w", sa.cast(edge.c.weight, sa.Double),
                          "r", sa.cast(edge.c.reward, sa.Double),
                          "o", sa.cast(edge.c.id - first_edge, sa.BigInteger)).label("e"))
            .select_from(edge.join(position, position.c.id == edge.c.dst))
            .where(edge.c.graph_id == graph_id, edge.c.id.between(*edges))
            .cte("turn_edge"))
    in_order = sa.func.array_sort(sa.func.collect_list(move.c.e))
    sorted_edges = (sa.select(turn_nodes.c.layer, turn_nodes.c.at, (turn_nodes.c.kind == "chance").label("chance"),
                              in_order.label("edges"))
                    .select_from(turn_nodes.join(move, move.c.src == turn_nodes.c.id))
                    .group_by(turn_nodes.c.layer, turn_nodes.c.at, turn_nodes.c.kind)
                    .subquery("sorted_edges"))
    nodes = (sa.select(sorted_edges.c.layer, sorted_edges.c.at, sa.func.named_struct(
                 "chance", sorted_edges.c.chance,
                 "ix", sa.func.sequence(0, sa.func.size(sorted_edges.c.edges) - 1),
                 *[part for name in "dwro" for part in (name, SparkText(f"transform(sorted_edges.edges, x -> x.{name})"))]
             ).label("n"))
             .cte("turn_node_edges"))
    layers = (sa.select(nodes.c.layer, sa.func.transform(sa.func.array_sort(sa.func.collect_list(
                  sa.func.named_struct("at", nodes.c.at, "n", nodes.c.n))), SparkText("x -> x.n")).label("nodes"))
              .group_by(nodes.c.layer).cte("turn_layer"))
    deepest_first = sa.func.transform(sa.func.array_sort(sa.func.collect_list(
        sa.func.named_struct("k", -layers.c.layer, "nodes", layers.c.nodes))), SparkText("x -> x.nodes"))
    return sa.select(deepest_first.label("layers"))


class _TurnLayers(sa.types.UserDefinedType):
    """Spark's type of :func:`turn_arrays`' ``layers``."""

    cache_ok = True

    def get_col_spec(self, **kw: object) -> str:
        return ("ARRAY<ARRAY<STRUCT<chance: BOOLEAN, ix: ARRAY<INT>, d: ARRAY<INT>, w: ARRAY<DOUBLE>, r: ARRAY<DOUBLE>, "
                "o: ARRAY<BIGINT>>>>")


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
    root_layer = sa.select(node.c.layer).where(node.c.graph_id == graph_id, node.c.id == root).scalar_subquery()
    before = sa.select(sa.func.count()).where(
        node.c.graph_id == graph_id, node.c.layer >= turn_layer, node.c.kind != "terminal",
        sa.or_(node.c.layer > root_layer, sa.and_(node.c.layer == root_layer, node.c.id < root)))
    return FoldedTurn(table, ends, end_count, end_count + connection.execute(before).scalar_one())


def folded_turn(arrays: sa.FromClause, ends: sa.FromClause, end_count: int, next_states: sa.FromClause,
                state_moves: sa.ColumnElement[bool], own_profits: Sequence[bool]) -> sa.Subquery:
    """Return the subquery ``folded`` of ``(state, vals)``: the turn (``arrays``, named ``turn``: a row of
    :func:`turn_arrays`) folded from each state's ends into every turn node's values (:func:`fields`).

    A state's ends come from its moves ``state_moves`` selects: the move labelled like an end (``ends``: node id,
    label, each policy's ``profit_i``) is worth its reward plus the value of the state it leads to
    (``next_states``: ``v1_i, v2_i``), its profit the policy's own where ``own_profits[i]``."""
    policies = len(own_profits)
    end_at = sa.select(ends, (sa.func.row_number().over(order_by=ends.c.node_id) - 1).label("at")).subquery("end_at")
    reward = edge.c.reward
    worth: list[sa.ColumnElement] = []
    for i, own in enumerate(own_profits):
        values = end_worth(reward, next_states.c[f"v1_{i}"], next_states.c[f"v2_{i}"],
                           end_at.c[f"profit{i}"] if own else None)
        for name, value in zip((f"p{i}", f"v1_{i}", f"v2_{i}"), values):
            worth += [sa.literal(name), sa.cast(value, sa.Double)]
        worth += [sa.literal(f"c{i}"), sa.cast(sa.null(), sa.BigInteger)]
    by_end = (sa.select(edge.c.src.label("state"),
                        collected_map(end_at.c.at, sa.func.named_struct(*worth)).label("worth"))
              .select_from(edge.join(next_states, next_states.c.node_id == edge.c.dst)
                           .join(end_at, end_at.c.label == edge.c.label))
              .where(state_moves).group_by(edge.c.src).subquery("by_end"))
    start = sa.select(by_end.c.state, sa.func.named_struct(*[part for name in fields(policies) for part in (
        name, SparkText(f"transform(sequence(0, {end_count - 1}), k -> try_element_at(by_end.worth, k).{name})"))]
    ).label("ends")).subquery("start")
    return (sa.select(start.c.state, SparkText(fold_expression(policies)).label("vals"))
            .select_from(start.join(arrays, sa.true())).subquery("folded"))


def folded_batch(turn: FoldedTurn, next_states: sa.Table, state_moves: sa.ColumnElement[bool],
                 own_profits: Sequence[bool]) -> sa.Select:
    """Return the SELECT of each state's results: ``(state, v1_0, v2_0, chosen_0, v1_1, ...)``, ``chosen_i`` the
    offsets (from the turn's first edge) of policy ``i``'s moves at the turn's decision nodes joined by commas
    (the turn folded from each state's ends, :func:`folded_turn`, with the turn's ends table's profits). A state
    whose turn has no value has null values (left to the caller to drop: a filter on them here would have Spark
    fold twice).
    """
    folded = folded_turn(turn.table.alias("turn"), turn.ends, turn.end_count, next_states, state_moves, own_profits)
    columns = []
    for i in range(len(own_profits)):
        columns += [SparkText(f"folded.vals.{name}[{turn.root_at}]").label(name) for name in (f"v1_{i}", f"v2_{i}")]
        columns.append(sa.func.array_join(SparkText(f"transform(folded.vals.c{i}, x -> CAST(x AS STRING))"), ",")
                       .label(f"chosen{i}"))
    return sa.select(folded.c.state, *columns)


def can_solve_batch(*arguments: object) -> bool:
    """Return True: :func:`solve_batch` plays any batch of turn states."""
    return True


def kept_turn(connection: sa.Connection, graph: TurnGraph, work: Any) -> FoldedTurn:
    """Return ``graph``'s turn folded into one row of arrays (:func:`fold_turn`, from the turn's ends table of
    ``work``, the turn solve's work tables), made at the first call and kept in ``work`` (dropped with it)."""
    if work.kept is None:
        work.kept = fold_turn(connection, graph.graph_id, graph.turn_spans[0].layer, graph.turn_edges(), graph.root,
                              work.ends, len(graph.ends))
        work.added.append(work.kept.table)
    return work.kept


def solve_batch(connection: sa.Connection, work: Any, batch: Any) -> list[tuple[list, list]]:
    """Do what :func:`dicegraph.store.solve.turns.solve_batch` does (``work`` its work tables, ``batch`` its batch of
    turn states) in one statement folding the turn in each state's row; the turn is folded into one row of arrays
    on the first batch and kept in ``work`` for the next. Return, for each policy, its chosen moves as ``(state,
    offsets joined by commas)`` and the states' values ``(state, v1, v2)``."""
    graph = batch.graph
    which = state_moves(graph, batch.layer, batch.states)
    rows = connection.execute(folded_batch(kept_turn(connection, graph, work), work.state, which,
                                           batch.own_profits)).all()
    rows = [row for row in rows if row[1] is not None]  # a state whose turn has no value
    return [([(row[0], row[3 + 3 * i]) for row in rows if row[3 + 3 * i]],
             [(row[0], row[1 + 3 * i], row[2 + 3 * i]) for row in rows]) for i in range(work.policies)]


def can_play_turns(*arguments: object, **keywords: object) -> bool:
    """Return True: :func:`play_turns` plays the turns of any turn states."""
    return True


def play_turns(connection: sa.Connection, graph: TurnGraph, policy_id: int, ends: Sequence[dict], own_profits: bool,
               states: Sequence[tuple[int, int]], prepared: Any = None) -> dict[int, dict[int, tuple[float, float]]]:
    """Do what :func:`dicegraph.store.solve.turns.play_turns` does in one statement and no work table: the ends'
    rows written in it, the states the moves lead to read from the stored policy ``policy_id``, the turn folded in
    each state's row (:func:`folded_turn`) and every position's values read back by node id (``prepared``, the
    reference's work tables and statements, is not needed)."""
    if not states:
        return {}
    literal_ends = sa.union_all(*(sa.select(sa.literal(row["node_id"], sa.BigInteger).label("node_id"),
                                            sa.literal(row["label"], sa.Text).label("label"),
                                            sa.cast(sa.literal(row["profit0"]), sa.Double).label("profit0"))
                                  for row in ends)).subquery("ends")
    which = sa.or_(*(state_moves(graph, layer, (state, state)) for state, layer in states))
    leads_to = sa.select(edge.c.dst).where(which)
    payoff = sa.cast(node.c.payoff, sa.Double)
    root_layer = graph.turn_spans[0].layer
    next_states = sa.union_all(
        sa.select(node.c.id.label("node_id"), payoff.label("v1_0"), (payoff * payoff).label("v2_0")).where(
            node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < root_layer,
            node.c.id.in_(leads_to)),
        sa.select(turn_policy.c.node_id, turn_policy.c.value, turn_policy.c.moment2).where(
            turn_policy.c.policy_id == policy_id, turn_policy.c.node_id.in_(leads_to))).subquery("next_states")
    end_count, edges = len(graph.ends), graph.turn_edges()
    positions = fold_positions(graph.graph_id, root_layer, literal_ends, end_count)
    arrays = turn_arrays(graph.graph_id, root_layer, edges, literal_ends, end_count, edges[0], positions).subquery("turn")
    folded = folded_turn(arrays, literal_ends, end_count, next_states, which, (own_profits,))
    position = positions[1]
    p, v1 = (sa.func.element_at(SparkText(f"folded.vals.{name}"), position.c.at + 1) for name in ("p0", "v1_0"))
    valued = (sa.select(folded.c.state, position.c.id, p.label("p"), v1.label("v1"))
              .select_from(folded.join(position, sa.true())).subquery("valued"))
    found: dict[int, dict[int, tuple[float, float]]] = {state: {} for state, _ in states}
    for state, node_id, profit, value in connection.execute(sa.select(valued).where(valued.c.p.is_not(None))):
        found[state][node_id] = (profit, value)
    return found
