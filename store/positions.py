"""One position in full: its edges, where they lead, and what each policy does there."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from dicegraph.store.schema import choice, edge, layer, node, policy, turn_policy, value


def _values(connection: sa.Connection, graph_id: int, node_ids: list[int]) -> dict[int, dict[str, dict[str, float]]]:
    """Return node id -> policy name -> {"value", "reach"} for the evaluated policies, read in one statement."""
    stored = (
        sa.select(value.c.node_id, policy.c.name, value.c.value, value.c.reach, sa.literal_column("0").label("kept"),
                  policy.c.id.label("policy_id"))
        .select_from(value.join(policy, policy.c.id == value.c.policy_id))
        .where(policy.c.graph_id == graph_id, value.c.node_id.in_(node_ids))
    )
    per_turn_state = (  # a game whose turn is stored once keeps its turn states' values apart, without reach
        sa.select(turn_policy.c.node_id, policy.c.name, turn_policy.c.value, sa.null(), sa.literal_column("1"),
                  policy.c.id)
        .select_from(turn_policy.join(policy, policy.c.id == turn_policy.c.policy_id))
        .where(policy.c.graph_id == graph_id, turn_policy.c.node_id.in_(node_ids))
    )
    both = sa.union_all(stored, per_turn_state).subquery()
    found: dict[int, dict[str, dict[str, float]]] = {node_id: {} for node_id in node_ids}
    rows = sa.select(both.c.node_id, both.c.name, both.c.value, both.c.reach).order_by(both.c.kept, both.c.policy_id)
    for node_id, name, node_value, reach in connection.execute(rows):
        found[node_id][name] = {"value": node_value, "reach": reach}
    return found


def _out_edges(connection: sa.Connection, graph_id: int, sources: list[sa.Row]) -> dict[int, list[dict[str, Any]]]:
    """Return each source node's outgoing edges (id -> edges in order), read in one statement whatever their
    number (a chance node's rolls each lead to a decision: on Spark a statement costs half a second)."""
    spans = connection.execute(
        sa.select(layer.c.first_edge, layer.c.last_edge)
        .where(layer.c.graph_id == graph_id, layer.c.layer.in_(sorted({source.layer for source in sources})))
    ).all()
    found: dict[int, list[dict[str, Any]]] = {source.id: [] for source in sources}
    ranges = [edge.c.id.between(span.first_edge, span.last_edge) for span in spans if span.first_edge is not None]
    if not ranges:
        return found
    chosen_by = (
        sa.select(sa.func.aggregate_strings(policy.c.name, ","))
        .select_from(policy.join(choice, choice.c.policy_id == policy.c.id))
        .where(policy.c.graph_id == graph_id, choice.c.node_id == edge.c.src, choice.c.edge_id == edge.c.id)
        .scalar_subquery()
    )
    query = (
        sa.select(
            edge.c.id, edge.c.src, edge.c.kind, edge.c.label, edge.c.weight, edge.c.reward, edge.c.sign, edge.c.dst,
            node.c.key.label("to_key"), node.c.label.label("to_label"), node.c.kind.label("to_kind"),
            chosen_by.label("chosen_by"),
        )
        .select_from(edge.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == edge.c.dst)))
        .where(sa.or_(*ranges), edge.c.src.in_(list(found)))
        .order_by(edge.c.id)
    )
    for row in connection.execute(query):
        found[row.src].append(dict(row._mapping))
    return found


def describe_position(connection: sa.Connection, graph_id: int, key: str, depth: int = 2) -> dict[str, Any]:
    """Return the node ``key`` with its values per policy and its outgoing edges, ``depth`` levels deep.

    Each edge carries its probability (rolls), the policies that choose it
    (moves), and the value of what it leads to under every evaluated policy.
    A level takes the same few statements however many positions it holds.
    """
    from dicegraph.store.catalog import find_node

    row = find_node(connection, graph_id, key)
    return _described(connection, graph_id, [row], depth)[row.id]


def _described(connection: sa.Connection, graph_id: int, rows: list[sa.Row], depth: int) -> dict[int, dict[str, Any]]:
    """Return each of ``rows`` described ``depth`` levels deep (node id -> description), a level at a time."""
    edges = _out_edges(connection, graph_id, rows) if depth > 0 else {row.id: [] for row in rows}
    deeper: dict[int, dict[str, Any]] = {}
    decisions = sorted({out["dst"] for row in rows for out in edges[row.id] if out["to_kind"] == "decision"})
    if depth > 1 and decisions:
        children = connection.execute(sa.select(node).where(node.c.graph_id == graph_id, node.c.id.in_(decisions))).all()
        deeper = _described(connection, graph_id, list(children), 1)
    values = _values(connection, graph_id, sorted({row.id for row in rows} | {out["dst"] for row in rows
                                                                              for out in edges[row.id]}))
    described = {}
    for row in rows:
        items = []
        for out in edges[row.id]:
            item = {
                "kind": out["kind"], "label": out["label"], "to": out["to_key"], "to_label": out["to_label"],
                "weight": out["weight"], "reward": out["reward"], "sign": out["sign"],
                "probability": out["weight"] / row.denom if out["kind"] == "roll" else None,
                "chosen_by": sorted(out["chosen_by"].split(",")) if out["chosen_by"] else [],
                "values": {name: out["reward"] + out["sign"] * scores["value"]  # sign -1: the turn passes
                           for name, scores in values[out["dst"]].items()},
            }
            if out["dst"] in deeper:
                item["moves"] = deeper[out["dst"]]["edges"]
            items.append(item)
        described[row.id] = {"key": row.key, "label": row.label, "kind": row.kind, "layer": row.layer,
                             "denom": row.denom, "payoff": row.payoff, "policies": values[row.id], "edges": items}
    return described
