"""Outcome distributions of a graph of rows whose edges pay points, folded in one row a policy: what
:func:`dicegraph.store.propagate.carried_distributions` spreads a statement a layer, on Spark in one statement.

The reference carries each node's reach with the points won on the way and the sign they count with, a row per
(node, policy, points, sign), layer by layer from the start. Here the graph's nodes go into one row by layer,
shallowest first, each with the edges that reach it (as :mod:`dicegraph.store.backends.spark.graph_fold`
propagates reach), and ``aggregate`` folds the layers into an array holding, for every node, its
``(points, sign, reach)`` entries: an edge carries its parent's entries, the points it pays added with their
sign and its own sign multiplied in, each reach times the edge's share (a roll's weight over its parent's, the
policy's stored move all of it, another move nothing); entries of the same points and sign are added up. A
terminal's entries give the outcomes ``points + sign * payoff``. A row a policy, each folded on its own.

A node's entries are added up by sorting them and folding along them, which copies the array a step: cheap for the
few outcomes a node of the games here has (the bear-off's rolls, a dozen), quadratic in them for a node with
thousands.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from dicegraph.store.backends.spark.graph_fold import folds, in_order, nodes_by_layer, placed_nodes, policy_keys
from dicegraph.store.backends.spark.lambdas import SparkText, let
from dicegraph.store.schema import edge, node, policy

ENTRY = "STRUCT<s: DOUBLE, g: DOUBLE, r: DOUBLE>"  # a node's entry: the points won on the way, their sign, the reach


def can_carry(connection: sa.Connection, policy_ids: Sequence[int], graph_id: int, start: int = 0) -> bool:
    """Return whether :func:`carried_distributions` can run: the graph is small enough to fold in one row
    (:func:`dicegraph.store.backends.spark.graph_fold.folds`)."""
    return folds(connection, graph_id)


def _forward_row(graph_id: int) -> sa.Select:
    """Return the SELECT of one row: ``layers``, the graph's nodes by layer, shallowest first, each ``(id, ix, o, f,
    i, q, w, g, p)``: the edges that reach it, their ids ``o``, parents' positions ``f`` (in that order) and ids
    ``i``, the share ``q`` of a parent's reach a roll carries (null for a move), the points ``w`` and sign ``g`` each
    pays; and ``p``, a terminal's payoff (null for another node)."""
    placed = placed_nodes(graph_id, node.c.payoff)
    parent = placed.alias("parent")
    share = sa.case((edge.c.kind == "roll", sa.cast(edge.c.weight, sa.Double) / sa.func.coalesce(parent.c.denom, 1)))
    into = (sa.select(edge.c.dst.label("node_id"), sa.func.named_struct(
                "o", sa.cast(edge.c.id, sa.BigInteger), "f", parent.c.f, "i", sa.cast(parent.c.id, sa.BigInteger),
                "q", share, "w", sa.cast(edge.c.reward, sa.Double), "g", sa.cast(edge.c.sign, sa.Double)).label("e"))
            .select_from(edge.join(parent, parent.c.id == edge.c.src)).where(edge.c.graph_id == graph_id))
    layered = nodes_by_layer(placed, into.subquery("into_edge"), "ofiqwg", False, "f", own=("p", placed.c.p))
    return sa.select(in_order(layered.c.nodes, layered.c.layer).label("layers"))


def _merged(entries: str) -> str:
    """Return the text of ``entries`` (an array of :data:`ENTRY`) with those of the same points and sign added up,
    in order."""
    added = "named_struct('s', y.s, 'g', y.g, 'r', last.r + y.r)"
    step = let("try_element_at(acc, -1)", "last",
               f"IF(last IS NOT NULL AND last.s = y.s AND last.g = y.g, "
               f"concat(slice(acc, 1, size(acc) - 1), array({added})), concat(acc, array(y)))")
    return f"aggregate(array_sort({entries}), CAST(array() AS ARRAY<{ENTRY}>), (acc, y) -> {step})"


def _entries(start: int) -> str:
    """Return the text of the fold over ``forward.layers``: every node's entries, in the nodes' order (the start
    node's own entry: no points, sign 1, reach 1)."""
    share = "coalesce(n.q[k], IF(try_element_at(keyed.given, n.i[k]) = n.o[k], 1D, 0D))"
    carried = (f"transform(filter(reach[n.f[k]], x -> {share} > 0D), x -> named_struct('s', x.s + x.g * n.w[k], "
               f"'g', x.g * n.g[k], 'r', x.r * {share}))")
    own = f"IF(n.id = {int(start)}, array(named_struct('s', 0D, 'g', 1D, 'r', 1D)), CAST(array() AS ARRAY<{ENTRY}>))"
    edges = "coalesce(n.ix, CAST(array() AS ARRAY<INT>))"  # none into the root
    node_entries = _merged(f"concat({own}, flatten(transform({edges}, k -> {carried})))")
    return (f"aggregate(forward.layers, CAST(array() AS ARRAY<ARRAY<{ENTRY}>>), "
            f"(reach, layer) -> concat(reach, transform(layer, n -> {node_entries})))")


def carried_distributions(connection: sa.Connection, policy_ids: Sequence[int], graph_id: int,
                          start: int = 0) -> dict[int, dict[float, float]]:
    """Return what :func:`dicegraph.store.propagate.carried_distributions` does (each policy's outcome ->
    probability from the node ``start``), every policy's row folded in one statement."""
    from dicegraph.store.propagate import rounded_outcomes

    given = policy_keys(policy_ids, solving=False).subquery("given")  # a policy without moves has none
    keyed = (sa.select(policy.c.id.label("policy_id"), given.c.given)
             .select_from(policy.outerjoin(given, given.c.policy_id == policy.c.id))
             .where(policy.c.id.in_(list(policy_ids))).subquery("keyed"))
    forward = _forward_row(graph_id).subquery("forward")
    outcomes = (f"flatten(zip_with(flatten(forward.layers), {_entries(start)}, (n, es) -> IF(n.p IS NULL, "
                f"CAST(array() AS ARRAY<STRUCT<o: DOUBLE, r: DOUBLE>>), "
                f"transform(es, e -> named_struct('o', e.s + e.g * n.p, 'r', e.r)))))")
    ended = (sa.select(keyed.c.policy_id, sa.func.explode(SparkText(outcomes)).label("z"))
             .select_from(keyed.join(forward, sa.true())).subquery("ended"))
    outcome, reach = SparkText("ended.z.o"), SparkText("ended.z.r")
    rows = (sa.select(ended.c.policy_id, outcome, sa.func.sum(reach)).where(SparkText("ended.z.r > 0D"))
            .group_by(ended.c.policy_id, outcome))
    return rounded_outcomes(connection.execute(rows).all(), policy_ids)
