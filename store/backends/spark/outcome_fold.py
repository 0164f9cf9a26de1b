"""A turn's ends reached from each turn state, folded inside its row: the spread of
:mod:`dicegraph.store.solve.turn_outcomes` on Spark in one statement a batch of states, not a statement or two a turn
layer.

The reference chooses the policy's moves in the turns of a batch of states (the turn solve's statements), then
spreads each state's reach from the turn's root along the rolls and the moves chosen, a statement a turn layer,
to the probability of each (end, points paid on the way). Here each state's row folds the turn backward as the
turn solve's fold does (:func:`dicegraph.store.backends.spark.turn_fold.folded_turn`: every decision node's move
taken), then forward, shallowest layer first, into the reach of every turn node (``aggregate`` over the layers,
as :mod:`dicegraph.store.backends.spark.graph_fold` propagates a graph of rows), and reads off each edge into an end
what it carries there. It runs where the turn pays points only on the edges into its ends (School's and Yahtzee's
scores, tally's keeps): the points of a way through the turn are then those of its last edge.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from dicegraph.store.backends.spark.graph_fold import in_order, nodes_by_layer
from dicegraph.store.backends.spark.lambdas import SparkText, let, over_edges
from dicegraph.store.backends.spark.turn_fold import fold_positions, folded_turn, kept_turn
from dicegraph.store.schema import edge
from dicegraph.store.turn_graph import TurnGraph


def _turn_edges(graph: TurnGraph) -> sa.ColumnElement[bool]:
    """Return the condition selecting the edges of ``graph``'s turn."""
    return sa.and_(edge.c.graph_id == graph.graph_id, edge.c.id.between(*graph.turn_edges()))


def forward_row(graph: TurnGraph, ends: sa.FromClause) -> sa.Select:
    """Return the SELECT of one row: ``layers``, the turn's nodes by layer, shallowest first, and ``ends``, its ends,
    each ``(id, ix, o, f, b, q, r)`` with the edges that reach it: their offsets ``o`` from the turn's first edge,
    parents' positions ``f`` (the turn's nodes shallowest layer first, then by id) and ``b`` (in the turn fold's
    values: the ends by id, then the nodes deepest layer first), the share ``q`` of a parent's reach a roll
    carries (null for a move) and the points ``r`` it pays (``ends``: the turn's ends table, whose node ids order
    them in the fold's values)."""
    turn_nodes, _ = fold_positions(graph.graph_id, graph.turn_spans[0].layer, ends, len(graph.ends))
    placed = (sa.select(turn_nodes.c.id, turn_nodes.c.layer, turn_nodes.c.kind, turn_nodes.c.at.label("b"),
                        (sa.func.row_number().over(order_by=(turn_nodes.c.layer, turn_nodes.c.id)) - 1).label("f"))
              .cte("placed_turn"))
    parent = placed.alias("parent")
    rolled = (sa.select(edge.c.src, sa.func.sum(edge.c.weight).label("total"))
              .where(_turn_edges(graph), edge.c.kind == "roll").group_by(edge.c.src).subquery("rolled"))
    share = sa.case((edge.c.kind == "roll", sa.cast(edge.c.weight, sa.Double) / rolled.c.total))
    into = (sa.select(edge.c.dst.label("node_id"), sa.func.named_struct(
                "o", sa.cast(edge.c.id - graph.turn_spans[0].first_edge, sa.BigInteger), "f", parent.c.f,
                "b", parent.c.b, "q", share, "r", sa.cast(edge.c.reward, sa.Double)).label("e"))
            .select_from(edge.join(parent, parent.c.id == edge.c.src).outerjoin(rolled, rolled.c.src == edge.c.src))
            .where(_turn_edges(graph))).subquery("into_turn")
    shallowest = nodes_by_layer(placed, into, "ofbq", False, "f")
    layers = sa.select(in_order(shallowest.c.nodes, shallowest.c.layer).label("layers")).subquery("forward_layers")
    into_end = (sa.select(into.c.node_id, sa.func.array_sort(sa.func.collect_list(into.c.e)).label("edges"))
                .where(into.c.node_id.in_(list(graph.ends.values()))).group_by(into.c.node_id).subquery("into_end"))
    ends = sa.select(sa.func.collect_list(sa.func.named_struct(
        "id", sa.cast(into_end.c.node_id, sa.BigInteger), "ix", SparkText("transform(into_end.edges, (x, i) -> i)"),
        *[part for name in "ofbqr" for part in (name, SparkText(f"transform(into_end.edges, x -> x.{name})"))]
    )).label("ends")).subquery("forward_ends")
    return sa.select(layers.c.layers, ends.c.ends).select_from(layers.join(ends, sa.true()))


def _flow() -> str:
    """Return the text of what edge ``k`` into node ``n`` carries of its parent's ``reach``: a roll's share of it,
    or all of it where the move is the one the parent takes (``folded.vals.c0``, offsets in the backward order)."""
    return "reach[n.f[k]] * coalesce(n.q[k], IF(folded.vals.c0[n.b[k]] = n.o[k], 1D, 0D))"


def hits_expression(root: int) -> str:
    """Return the text of a state's hits: each edge into an end that its turn reaches, ``(node_id, points, q)``,
    from the reach of every turn node (the forward fold over ``forward.layers``, the node ``root`` reached
    surely)."""
    reach = (f"aggregate(forward.layers, CAST(array() AS ARRAY<DOUBLE>), (reach, layer) -> concat(reach, "
             f"transform(layer, n -> IF(n.id = {root}, 1D, 0D) + coalesce({over_edges('0D', f'a + {_flow()}')}, 0D))))")
    hits = (f"flatten(transform(forward.ends, n -> transform(n.ix, k -> named_struct("
            f"'node_id', n.id, 'points', n.r[k], 'q', {_flow()}))))")
    return let(reach, "reach", hits)


def can_reach_ends(connection: sa.Connection, graph: TurnGraph, *arguments: Any) -> bool:
    """Return whether :func:`reach_ends` can run: the turn pays points only on the edges into its ends."""
    paying = sa.select(sa.func.count()).where(_turn_edges(graph), edge.c.reward != 0,
                                              edge.c.dst.not_in(list(graph.ends.values())))
    return connection.execute(paying).scalar_one() == 0


def reach_ends(connection: sa.Connection, graph: TurnGraph, choices: Any, spread: Any, playing: sa.ColumnElement[bool],
               batch: sa.Table, into: sa.Table) -> None:
    """Do what :func:`dicegraph.store.solve.turn_outcomes.reach_ends` does in one statement: the turn folded into
    each state's row (its moves ``playing`` selects) backward, for the moves ``choices``' policy takes (from its
    work's stored values and ends), then forward; each (state, end, points)'s probability added to ``into``. The
    turn is folded into one row of arrays on the first call and kept in ``choices``' work for the next (``spread``
    and ``batch``, the reference's, are not needed)."""
    work = choices.work
    arrays = kept_turn(connection, graph, work).table.alias("turn")
    folded = folded_turn(arrays, work.ends, len(graph.ends), work.state, playing, choices.own_profits)
    forward = forward_row(graph, work.ends).subquery("forward")
    hits = (sa.select(folded.c.state, sa.func.explode(SparkText(hits_expression(graph.root))).label("hit"))
            .select_from(folded.join(forward, sa.true())).subquery("hits"))
    node_id, points, q = (SparkText(f"hits.hit.{name}") for name in ("node_id", "points", "q"))
    reached = (sa.select(hits.c.state, node_id, points, sa.func.sum(q)).where(SparkText("hits.hit.q > 0D"))
               .group_by(hits.c.state, node_id, points))
    connection.execute(sa.insert(into).from_select(["state", "node_id", "points", "q"], reached))
