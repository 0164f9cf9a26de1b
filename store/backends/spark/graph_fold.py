"""A graph of rows solved inside one row: backward induction and propagation on Spark in one statement a solve,
whatever the graph's depth, where the layer-by-layer solve of :mod:`dicegraph.store.solve.layers` takes a statement or two
a layer.

A layer needs the values of the layers below it, and Spark refuses the recursive query that would take them all
in one statement (its recursive part may not group: docs/spark.md, "Not yet"). Here the whole graph goes into one
row instead, as :mod:`dicegraph.store.backends.spark.turn_fold` does with a turn: every node in a layer array, deepest layer first,
each with its edges as arrays (in edge id order) pointing at their children by position, and Spark's higher-order
functions fold the layers into an array of values on an executor: ``aggregate`` over the layers, ``transform``
over a layer's nodes, appending their values and the moves taken. A second fold over the same nodes, shallowest
layer first, each with the edges that reach it, gives every node's reach under those moves. A row a policy: the
policies of a report (the optimum, the builder's agents) are folded side by side, each on an executor of its own.

The row is bounded (Spark's arrays hold at most about 2 billion elements, and a row is one task's memory), so the
fold takes graphs of at most :data:`EDGE_LIMIT` edges; a larger graph goes layer by layer, its statements spread
over the cluster.

The numbers follow :mod:`dicegraph.store.solve.layers`: a terminal is worth its payoff (or the goal's 0 or 1), a chance node
``sum(weight * (reward + value)) / sum(weight)`` over its children with a value, a decision node the best of
``reward + value`` over its moves (solving: the move taken is the lowest edge id within
:data:`dicegraph.graphs.protocol.TIE` of the best) or its stored move's (evaluating). The root has reach 1; a roll edge
carries ``reach * weight / denom``, the move taken ``reach``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.propagate import outcomes_by_goal
from dicegraph.store.schema import choice, edge, layer, layer_ranges, node, value
from dicegraph.store.scratch import keyed_pair_table
from dicegraph.store.backends.spark.lambdas import STORED_MOVE, SparkText, best_move, let, over_edges

# Edges a graph may have to be folded in one row: one task does the whole fold, so a larger graph is left to the
# layer-by-layer solve, which spreads over the cluster. The largest folded here: 5000's 113,672 edges (136 layers),
# the optimum's fold 145.5 s (docs/spark.md).
EDGE_LIMIT = 250_000


def folds(connection: sa.Connection, graph_id: int, *arguments: object) -> bool:
    """Return whether graph ``graph_id`` (of rows) is small enough to fold in one row: at most :data:`EDGE_LIMIT`
    edges. (The ``can_run`` of this folder's ``layered`` and ``sweep``, whose further ``arguments`` it takes.)"""
    edges = sa.select(sa.func.sum(layer.c.rolls + layer.c.moves)).where(layer.c.graph_id == graph_id)
    return (connection.execute(edges).scalar_one() or 0) <= EDGE_LIMIT


def layers_with_edges(connection: sa.Connection, graph_id: int) -> int:
    """Return how many layers of graph ``graph_id`` have edges: the steps a layer-by-layer solve of one policy
    reports, which a fold reports at its end."""
    return connection.execute(sa.select(sa.func.count()).select_from(layer).where(
        layer.c.graph_id == graph_id, layer.c.rolls + layer.c.moves > 0)).scalar_one()


def policy_keys(policy_ids: Sequence[int], solving: bool) -> sa.Select:
    """Return the SELECT of a fold's keys, ``(policy_id, given)``: the one policy being solved (``given`` null), or
    each policy of ``policy_ids`` with its stored moves as a map from a decision node's id to its edge's."""
    if solving:
        (policy_id,) = policy_ids
        return sa.select(sa.literal(policy_id).label("policy_id"), sa.null().label("given"))
    given = collected_map(sa.cast(choice.c.node_id, sa.BigInteger), sa.cast(choice.c.edge_id, sa.BigInteger))
    return (sa.select(choice.c.policy_id, given.label("given")).where(choice.c.policy_id.in_(list(policy_ids)))
            .group_by(choice.c.policy_id))


def store_folded(connection: sa.Connection, folded: sa.Table, solving: bool, reach: sa.ColumnElement) -> None:
    """Store the values (with ``reach``, a column of ``folded`` or null) and, ``solving``, the moves a fold's work
    table ``folded`` holds, and drop it."""
    if solving:
        connection.execute(sa.insert(choice).from_select(["policy_id", "node_id", "edge_id"], sa.select(
            folded.c.policy_id, folded.c.node_id, folded.c.edge_id).where(folded.c.edge_id.is_not(None))))
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value", "reach"], sa.select(
        folded.c.policy_id, folded.c.node_id, folded.c.value, reach)))
    folded.drop(connection)


def store_layered(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int], objective: str | None,
                  goal: Any, progress: Progress | None) -> None:
    """Do what :func:`dicegraph.store.solve.layers.store_layered` does (store the policies' values and reach, and
    solving, the one policy's moves) from the graph folded in one row a policy, in a statement whatever the graph's
    depth; ``progress`` counts every layer of each policy at the end. Returns nothing."""
    worth = node.c.payoff if goal is None else goal.worth(node.c.payoff)
    folded = fold_graph(connection, graph_id, worth, objective, policy_keys(policy_ids, objective is not None))
    store_folded(connection, folded, objective is not None, folded.c.reach)
    if progress is not None:
        progress(len(layer_ranges(connection, graph_id)) * len(policy_ids))


def swept_outcomes(connection: sa.Connection, graph_id: int, objective: str, targets: sa.Table,
                   test: str) -> list[dict[float, float]]:
    """Return what :func:`dicegraph.store.sweep.swept_outcomes` does, from the graph folded in one row a goal
    (``targets``' rows), a terminal worth 1 where its payoff passes ``test`` against the goal's threshold."""
    keys = sa.select(targets.c.goal, sa.null().label("given"), targets.c.threshold)
    folded = fold_graph(connection, graph_id, node.c.payoff, objective, keys, key="goal",
                  terminal=f"IF(n.p {test} keyed.threshold, 1D, 0D)")
    goals = connection.execute(sa.select(sa.func.count()).select_from(targets)).scalar_one()
    outcomes = outcomes_by_goal(connection, graph_id, folded, goals)
    folded.drop(connection)
    return outcomes


def placed_nodes(graph_id: int, worth: sa.ColumnElement[float]) -> sa.CTE:
    """Return the graph's nodes with a terminal's worth ``p`` and their positions: ``b`` in the order deepest layer
    first, ``f`` shallowest first (each then by id)."""
    return (sa.select(node.c.id, node.c.layer, node.c.kind, node.c.denom,
                      sa.case((node.c.kind == "terminal", sa.cast(worth, sa.Double))).label("p"),
                      (sa.func.row_number().over(order_by=(node.c.layer.desc(), node.c.id)) - 1).label("b"),
                      (sa.func.row_number().over(order_by=(node.c.layer, node.c.id)) - 1).label("f"))
            .where(node.c.graph_id == graph_id).cte("placed"))


def nodes_by_layer(placed: sa.CTE, edges: sa.Select, fields: str, deepest_first: bool, position: str,
                   own: Sequence[Any] | None = None) -> sa.Subquery:
    """Return the SELECT of a row a layer, ``(layer, nodes)``: its nodes in ``position`` order, each ``(id, ix,
    ...)`` with ``edges`` (rows ``(node_id, e)``, ``e`` a struct) as arrays of their ``fields``, and the ``kind`` and
    worth ``p`` of its own where ``deepest_first`` (``own``, names and columns in turn, where given)."""
    by_node = (sa.select(edges.c.node_id, sa.func.array_sort(sa.func.collect_list(edges.c.e)).label("edges"))
               .group_by(edges.c.node_id).subquery(f"{position}_edges"))
    arrays = [part for name in fields for part in (
        name, SparkText(f"transform({position}_edges.edges, x -> x.{name})"))]
    if own is None:
        own = ("kind", placed.c.kind, "p", placed.c.p) if deepest_first else ()
    nodes = (sa.select(placed.c.layer, placed.c[position].label("at"), sa.func.named_struct(
                 "id", sa.cast(placed.c.id, sa.BigInteger), *own,
                 "ix", SparkText(f"transform({position}_edges.edges, (x, i) -> i)"), *arrays).label("n"))
             .select_from(placed.outerjoin(by_node, by_node.c.node_id == placed.c.id)).subquery(f"{position}_node"))
    return (sa.select(nodes.c.layer, in_order(nodes.c.n, nodes.c.at).label("nodes"))
            .group_by(nodes.c.layer).subquery(f"{position}_layer"))


def back_layers(graph_id: int, placed: sa.CTE) -> sa.Subquery:
    """Return the SELECT of a row a layer of graph ``graph_id`` (its nodes ``placed``: :func:`placed_nodes`),
    ``(layer, nodes)``: its nodes ``(id, kind, p, ix, o, d, w, r, s)``, a terminal worth ``p``, a node's edges in id order as arrays of their indices ``ix`` (0, 1, ...),
    ids ``o``, children's positions ``d`` (all nodes deepest layer first, then by id), weights ``w``, rewards ``r``
    and signs ``s``."""
    child = placed.alias("child")
    out = (sa.select(edge.c.src.label("node_id"), sa.func.named_struct(
               "o", sa.cast(edge.c.id, sa.BigInteger), "d", child.c.b, "w", sa.cast(edge.c.weight, sa.Double),
               "r", sa.cast(edge.c.reward, sa.Double), "s", sa.cast(edge.c.sign, sa.Double)).label("e"))
           .select_from(edge.join(child, child.c.id == edge.c.dst)).where(edge.c.graph_id == graph_id))
    return nodes_by_layer(placed, out.subquery("out_edge"), "odwrs", True, "b")


def in_order(item: sa.ColumnElement, order: sa.ColumnElement[int]) -> sa.ColumnElement:
    """Return the aggregate of the array of ``item`` over the rows grouped, in ``order``."""
    return sa.func.transform(sa.func.array_sort(sa.func.collect_list(sa.func.named_struct("k", order, "x", item))),
                             SparkText("x -> x.x"))


def collected_map(key: sa.ColumnElement, value: sa.ColumnElement) -> sa.ColumnElement:
    """Return the aggregate of the map from ``key`` to ``value`` over the rows grouped (a fold's ``given`` moves, a
    state's ends)."""
    return sa.func.map_from_entries(sa.func.collect_list(sa.func.named_struct("k", key, "v", value)))


def _graph_row(graph_id: int, worth: sa.ColumnElement[float]) -> sa.Select:
    """Return the SELECT of one row: ``back``, the graph's nodes by layer, deepest first (:func:`back_layers`); and
    ``forward``, the nodes by layer, shallowest first, each ``(id, ix, o, f, b, q)`` with the edges that reach it:
    their ids ``o``, parents' positions ``f`` in ``forward``'s order and ``b`` in ``back``'s, and the share ``q`` of
    a parent's reach a roll carries (null for a move)."""
    placed = placed_nodes(graph_id, worth)
    parent = placed.alias("parent")
    share = sa.case((edge.c.kind == "roll",
                     sa.cast(edge.c.weight, sa.Double) / sa.func.coalesce(parent.c.denom, 1)))
    into = (sa.select(edge.c.dst.label("node_id"), sa.func.named_struct(
                "o", sa.cast(edge.c.id, sa.BigInteger), "f", parent.c.f, "b", parent.c.b, "q", share).label("e"))
            .select_from(edge.join(parent, parent.c.id == edge.c.src)).where(edge.c.graph_id == graph_id))
    deepest = back_layers(graph_id, placed)
    shallowest = nodes_by_layer(placed, into.subquery("into_edge"), "ofbq", False, "f")
    back = sa.select(in_order(deepest.c.nodes, -deepest.c.layer).label("layers")).subquery("back")
    forward = sa.select(in_order(shallowest.c.nodes, shallowest.c.layer).label("layers")).subquery("forward")
    return sa.select(back.c.layers.label("back"), forward.c.layers.label("forward")).select_from(
        back.join(forward, sa.true()))


def _back_step(objective: str | None, terminal: str) -> str:
    """Return the text of one step of the backward fold: ``vals`` (``v``, the values so far, and ``c``, the moves
    taken) with the values of ``layer``'s nodes appended, a terminal ``n`` worth ``terminal``; the best move for
    ``objective``, or (None) the move the row's ``given`` map has for the node."""
    child = "vals.v[n.d[k]]"
    total = over_edges("0D", f"a + IF({child} IS NULL, 0D, n.w[k])")
    summed = over_edges("0D", f"a + IF({child} IS NULL, 0D, n.w[k] * (n.r[k] + {child}))")
    lets = [("t", f"transform(layer, n -> IF(n.kind = 'chance', NULLIF({total}, 0D), NULL))")]
    if objective is None:
        stored = let(STORED_MOVE, "at",
                     "IF(at > 0 AND vals.v[n.d[at - 1]] IS NOT NULL, at - 1, NULL)")
        lets.append(("m", f"transform(layer, n -> IF(n.kind = 'decision', {stored}, NULL))"))
        decision = "n.r[m[j]] + vals.v[n.d[m[j]]]"
    else:
        profit = f"n.r[k] + {child}"
        best, first = best_move(profit, "b[j]", objective)
        lets.append(("b", f"transform(layer, n -> IF(n.kind = 'decision', {best}, NULL))"))
        lets.append(("m", f"transform(layer, (n, j) -> IF(b[j] IS NULL, NULL, {first}))"))
        decision = "b[j]"
    values = (f"transform(layer, (n, j) -> CASE n.kind WHEN 'terminal' THEN {terminal} "
              f"WHEN 'chance' THEN {summed} / t[j] ELSE {decision} END)")
    body = f"named_struct('v', concat(vals.v, {values}), 'c', concat(vals.c, transform(layer, (n, j) -> n.o[m[j]])))"
    for name, text in reversed(lets):
        body = let(text, name, body)
    return body


def _reach_step() -> str:
    """Return the text of one step of the forward fold: ``reach`` with the reach of ``layer``'s nodes appended, from
    the edges reaching each (a roll's share, or the whole where the move is the one taken, ``folded.vals.c``)."""
    flow = "reach[n.f[k]] * coalesce(n.q[k], IF(folded.vals.c[n.b[k]] = n.o[k], 1D, 0D))"
    return (f"concat(reach, transform(layer, n -> IF(n.id = 0, 1D, 0D) + "
            f"coalesce({over_edges('0D', f'a + {flow}')}, 0D)))")


def fold_graph(connection: sa.Connection, graph_id: int, worth: sa.ColumnElement[float], objective: str | None,
         keys: sa.Select, key: str = "policy_id", terminal: str = "n.p") -> sa.Table:
    """Fold graph ``graph_id`` in one row a key; return a new work table of ``(node_id, <key>, value, edge_id,
    reach)``, a row per node with a value.

    ``keys`` selects ``(<key>, given, ...)``: a row a fold, ``given`` a map from a decision node's id to the id of
    the move it takes (null when solving). A terminal ``n`` is worth ``terminal``, Spark's text over ``n.p`` (its
    ``worth``, an expression over ``node``) and the columns of ``keys`` (as ``keyed``: a sweep's threshold, say);
    ``objective`` ``'max'`` or ``'min'`` solves, None evaluates the ``given`` moves. One statement, whatever the
    graph's depth.
    """
    table = keyed_pair_table(connection, "work_fold", key, sa.Column("value", sa.Double),
                             sa.Column("edge_id", sa.BigInteger), sa.Column("reach", sa.Double), indexed=False)
    graph = _graph_row(graph_id, worth).subquery("graph")
    keyed = keys.subquery("keyed")
    empty = "named_struct('v', CAST(array() AS ARRAY<DOUBLE>), 'c', CAST(array() AS ARRAY<BIGINT>))"
    ids = "flatten(transform({0}, l -> transform(l, n -> n.id)))"
    folded = (sa.select(keyed.c[key], graph.c.forward, SparkText(ids.format("graph.back")).label("ids"),
                        SparkText(f"aggregate(graph.back, {empty}, (vals, layer) -> {_back_step(objective, terminal)})")
                        .label("vals"))
              .select_from(keyed.join(graph, sa.true())).subquery("folded"))
    reach = f"aggregate(folded.forward, CAST(array() AS ARRAY<DOUBLE>), (reach, layer) -> {_reach_step()})"
    reached = sa.select(folded.c[key], folded.c.ids, folded.c.vals, sa.func.map_from_arrays(
        SparkText(ids.format("folded.forward")), SparkText(reach)).label("reach")).subquery("reached")
    store_rows(connection, table, reached, key, {
        "value": "reached.vals.v[i]", "edge_id": "reached.vals.c[i]",
        "reach": "coalesce(try_element_at(reached.reach, x), 0D)"})
    return table


def store_rows(connection: sa.Connection, table: sa.Table, folded: sa.Subquery, key: str,
               columns: dict[str, str]) -> None:
    """Insert into ``table`` a row a node with a value from each row of ``folded`` (its ``<key>``, and ``ids``, the
    nodes' ids in the fold's order): ``node_id`` and ``columns``, each Spark's text over the node's id ``x`` and its
    position ``i`` (``value`` among them)."""
    fields = ", ".join(f"'{name}', {text}" for name, text in {"node_id": "x", **columns}.items())
    exploded = sa.select(folded.c[key], sa.func.explode(SparkText(
        f"transform({folded.name}.ids, (x, i) -> named_struct({fields}))")).label("z")).subquery("exploded")
    names = ["node_id", *columns]
    rows = sa.select(*(SparkText(f"exploded.z.{name}") for name in names), exploded.c[key]).where(
        SparkText("exploded.z.value IS NOT NULL"))
    connection.execute(sa.insert(table).from_select([*names, key], rows))
