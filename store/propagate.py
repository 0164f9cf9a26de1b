"""Forward propagation: reach probabilities under a policy and outcome distributions.

The root has reach 1. Layer by layer, the reach of a node is the sum over its
incoming edges of the source's reach times the edge's probability: a roll
edge's ``weight / denom``, 1 for the move the policy chooses, 0 for other
moves. Reach is built in a temporary table, one INSERT ... SELECT per layer,
then written to ``value.reach`` in one UPDATE (nodes never reached get 0).
"""

from __future__ import annotations

import sqlalchemy as sa

from store.catalog import graph_layers
from store.schema import choice, edge, node, value


def _reach_table() -> sa.Table:
    """Return the temporary table of reach (and reach per unit of weight, ``share``)."""
    return sa.Table(
        "reach_tmp",
        sa.MetaData(),
        sa.Column("node_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("reach", sa.Double, nullable=False),
        sa.Column("share", sa.Double, nullable=False),
        prefixes=["TEMPORARY"],
    )


def _insert_reach(connection: sa.Connection, reach: sa.Table, graph_id: int, totals: sa.Subquery) -> None:
    """Insert ``totals`` (node_id, reach) with share = reach / denom on chance nodes."""
    share = sa.case((node.c.kind == "chance", totals.c.reach / node.c.denom), else_=totals.c.reach)
    rows = sa.select(totals.c.node_id, totals.c.reach, share).select_from(
        totals.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == totals.c.node_id))
    )
    connection.execute(sa.insert(reach).from_select(["node_id", "reach", "share"], rows))


def propagate(connection: sa.Connection, policy_id: int, graph_id: int) -> None:
    """Store in ``value.reach`` each node's probability of being reached under the policy."""
    reach = _reach_table()
    reach.drop(connection, checkfirst=True)
    reach.create(connection)
    root = sa.select(sa.literal(0).label("node_id"), sa.literal(1.0, sa.Double).label("reach")).subquery()
    _insert_reach(connection, reach, graph_id, root)
    for layer in range(1, graph_layers(connection, graph_id)):
        rolls = (
            sa.select(edge.c.dst, (reach.c.share * edge.c.weight).label("flow"))
            .select_from(edge.join(reach, reach.c.node_id == edge.c.src))
            .where(edge.c.graph_id == graph_id, edge.c.dst_layer == layer, edge.c.kind == "roll")
        )
        chosen = (
            sa.select(edge.c.dst, reach.c.share.label("flow"))
            .select_from(
                edge.join(
                    choice,
                    sa.and_(choice.c.policy_id == policy_id, choice.c.node_id == edge.c.src, choice.c.edge_id == edge.c.id),
                ).join(reach, reach.c.node_id == edge.c.src)
            )
            .where(edge.c.graph_id == graph_id, edge.c.dst_layer == layer, edge.c.kind == "move")
        )
        flows = sa.union_all(rolls, chosen).subquery()
        totals = sa.select(flows.c.dst.label("node_id"), sa.func.sum(flows.c.flow).label("reach")).group_by(flows.c.dst)
        _insert_reach(connection, reach, graph_id, totals.subquery())
    reached = sa.select(reach.c.reach).where(reach.c.node_id == value.c.node_id).scalar_subquery()
    connection.execute(sa.update(value).where(value.c.policy_id == policy_id).values(reach=sa.func.coalesce(reached, 0.0)))
    reach.drop(connection)


def outcome_distribution(connection: sa.Connection, policy_id: int, graph_id: int) -> dict[float, float]:
    """Return terminal payoff -> probability of ending there under the (propagated) policy.

    Terminals of equal payoff are added up; payoffs never reached are left out.
    """
    query = (
        sa.select(node.c.payoff, sa.func.sum(value.c.reach))
        .select_from(value.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == value.c.node_id)))
        .where(value.c.policy_id == policy_id, node.c.kind == "terminal", value.c.reach > 0)
        .group_by(node.c.payoff)
        .order_by(node.c.payoff)
    )
    return {payoff: probability for payoff, probability in connection.execute(query)}
