"""One position in full: its edges, where they lead, and what each policy does there."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from dicegraph.store.schema import choice, edge, layer, node, policy, turn_policy, value


def _values(connection: sa.Connection, graph_id: int, node_ids: list[int]) -> dict[int, dict[str, dict[str, float]]]:
    """Return node id -> policy name -> {"value", "reach"} for the evaluated policies."""
    query = (
        sa.select(value.c.node_id, policy.c.name, value.c.value, value.c.reach)
        .select_from(value.join(policy, policy.c.id == value.c.policy_id))
        .where(policy.c.graph_id == graph_id, value.c.node_id.in_(node_ids))
        .order_by(policy.c.id)
    )
    per_turn_state = (  # a game whose turn is stored once keeps its turn states' values apart, without reach
        sa.select(turn_policy.c.node_id, policy.c.name, turn_policy.c.value, sa.null())
        .select_from(turn_policy.join(policy, policy.c.id == turn_policy.c.policy_id))
        .where(policy.c.graph_id == graph_id, turn_policy.c.node_id.in_(node_ids))
        .order_by(policy.c.id)
    )
    found: dict[int, dict[str, dict[str, float]]] = {node_id: {} for node_id in node_ids}
    for rows in (query, per_turn_state):
        for node_id, name, node_value, reach in connection.execute(rows):
            found[node_id][name] = {"value": node_value, "reach": reach}
    return found


def _out_edges(connection: sa.Connection, graph_id: int, source: sa.Row) -> list[dict[str, Any]]:
    span = connection.execute(
        sa.select(layer.c.first_edge, layer.c.last_edge).where(layer.c.graph_id == graph_id, layer.c.layer == source.layer)
    ).one()
    if span.first_edge is None:
        return []
    chosen_by = (
        sa.select(sa.func.aggregate_strings(policy.c.name, ","))
        .select_from(policy.join(choice, choice.c.policy_id == policy.c.id))
        .where(policy.c.graph_id == graph_id, choice.c.node_id == edge.c.src, choice.c.edge_id == edge.c.id)
        .scalar_subquery()
    )
    query = (
        sa.select(
            edge.c.id, edge.c.kind, edge.c.label, edge.c.weight, edge.c.reward, edge.c.sign, edge.c.dst,
            node.c.key.label("to_key"), node.c.label.label("to_label"), node.c.kind.label("to_kind"),
            chosen_by.label("chosen_by"),
        )
        .select_from(edge.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == edge.c.dst)))
        .where(edge.c.id.between(span.first_edge, span.last_edge), edge.c.src == source.id)
        .order_by(edge.c.id)
    )
    return [dict(row._mapping) for row in connection.execute(query)]


def describe_position(connection: sa.Connection, graph_id: int, key: str, depth: int = 2) -> dict[str, Any]:
    """Return the node ``key`` with its values per policy and its outgoing edges, ``depth`` levels deep.

    Each edge carries its probability (rolls), the policies that choose it
    (moves), and the value of what it leads to under every evaluated policy.
    """
    from dicegraph.store.catalog import find_node

    return _describe(connection, graph_id, find_node(connection, graph_id, key), depth)


def _describe(connection: sa.Connection, graph_id: int, row: sa.Row, depth: int) -> dict[str, Any]:
    described: dict[str, Any] = {
        "key": row.key, "label": row.label, "kind": row.kind, "layer": row.layer,
        "denom": row.denom, "payoff": row.payoff,
    }
    edges = _out_edges(connection, graph_id, row) if depth > 0 else []
    values = _values(connection, graph_id, [row.id] + [out["dst"] for out in edges])
    described["policies"] = values[row.id]
    described["edges"] = []
    for out in edges:
        item = {
            "kind": out["kind"], "label": out["label"], "to": out["to_key"], "to_label": out["to_label"],
            "weight": out["weight"], "reward": out["reward"], "sign": out["sign"],
            "probability": out["weight"] / row.denom if out["kind"] == "roll" else None,
            "chosen_by": sorted(out["chosen_by"].split(",")) if out["chosen_by"] else [],
            "values": {name: out["reward"] + out["sign"] * scores["value"]  # sign -1: the turn passes
                       for name, scores in values[out["dst"]].items()},
        }
        if depth > 1 and out["to_kind"] == "decision":
            child = connection.execute(sa.select(node).where(node.c.graph_id == graph_id, node.c.id == out["dst"])).one()
            item["moves"] = _describe(connection, graph_id, child, 1)["edges"]
        described["edges"].append(item)
    return described
