"""Forward propagation: reach probabilities under a policy, outcome distributions.

The root has reach 1. Going up the layers, each layer's nodes have their final
reach once every lower layer has pushed its flow: a roll edge carries
``reach(src) * weight / denom``, the move the policy takes carries
``reach(src)``, other moves carry nothing. One statement per layer adds the
flows into the destinations (``INSERT ... ON CONFLICT DO UPDATE``, which
SQLite, DuckDB and PostgreSQL share; on Spark, which has no keys, it appends
them, and a node's reach is the sum of its rows); nodes never reached get no
row (reach 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from dicegraph.store.backends import backend_of
from dicegraph.store.catalog import has_cycles
from dicegraph.store.errors import NotFound
from dicegraph.store.schema import choice, edge, edges_of, layer_ranges, node, value
from dicegraph.store.scratch import carried_reach_table, outcome_table, reach_table
from dicegraph.store.solve.dispatch import dispatchable


class Reach(NamedTuple):
    """A propagation's result: its work ``table`` (dropped by the caller) and ``by_node``, a row per reached node
    (``node_id``, ``reach``, ``denom``)."""

    table: sa.Table
    by_node: sa.FromClause


def summed(reach: sa.Table, upserts: bool, keys: Sequence[str] = ("node_id",)) -> sa.FromClause:
    """Return a reach table (``*keys``, ``reach``, ``denom``) as a row per key: the table itself where flows were
    added in place, else their sums (:func:`insert_adding`)."""
    if upserts:
        return reach
    key_columns = [reach.c[key] for key in keys]
    return sa.select(*key_columns, sa.func.sum(reach.c.reach).label("reach"),
                     sa.func.max(reach.c.denom).label("denom")).group_by(*key_columns).subquery(f"{reach.name}_summed")


def insert_adding(connection: sa.Connection, table: sa.Table, rows: sa.Select, add: str,
                  keys: Sequence[str] = ("node_id",)) -> None:
    """INSERT ``rows`` (every column of ``table``, in order) into ``table``; where its ``keys`` are there already,
    add to their ``add`` column. Where the backend has no upsert the rows are appended, and :func:`summed` adds
    them up when read."""
    columns = [column.name for column in table.columns]
    if not backend_of(connection).upserts:
        connection.execute(sa.insert(table).from_select(columns, rows))
        return
    statement = backend_of(connection).upsert(table).from_select(columns, rows)
    statement = statement.on_conflict_do_update(
        index_elements=[table.c[key] for key in keys], set_={add: table.c[add] + statement.excluded[add]}
    )
    connection.execute(statement)


def _layer_rows(graph_id: int, span: sa.Row, reach: sa.FromClause, chosen: sa.FromClause,
                carried: Sequence[sa.ColumnElement[Any]], matched: Sequence[sa.ColumnElement[bool]]) -> sa.Select:
    """Return the rows the edges leaving the layer ``span`` add to a reach table, ``(dst, *carried, reach,
    denom)``: a roll carries ``reach(src) * weight / denom``, the ``chosen`` move ``reach(src)``, summed by
    destination and the ``carried`` columns (named expressions over the source's ``reach`` row and the edge: a
    sweep's goal, the points won so far); ``matched`` are further conditions joining ``chosen`` to the source's
    row (the same goal)."""
    names = [column.name for column in carried]
    rolls = (
        sa.select(edge.c.dst, *carried, (reach.c.reach * edge.c.weight / reach.c.denom).label("flow"))
        .select_from(edge.join(reach, reach.c.node_id == edge.c.src))
        .where(edges_of(span, "roll"))
    )
    moves = (
        sa.select(edge.c.dst, *carried, reach.c.reach.label("flow"))
        .select_from(
            edge.join(chosen, sa.and_(chosen.c.node_id == edge.c.src, chosen.c.edge_id == edge.c.id)).join(
                reach, sa.and_(reach.c.node_id == edge.c.src, *matched)
            )
        )
        .where(edges_of(span, "move"))
    )
    parts = [part for part, count in ((rolls, span.rolls), (moves, span.moves)) if count]
    flows = (sa.union_all(*parts) if len(parts) > 1 else parts[0]).subquery()
    grouping = [flows.c[name] for name in names]
    totals = (
        sa.select(flows.c.dst, *grouping, sa.func.sum(flows.c.flow).label("reach"))
        .where(sa.true())  # SQLite needs a WHERE before ON CONFLICT in INSERT ... SELECT
        .group_by(flows.c.dst, *grouping)
        .subquery()
    )
    return sa.select(totals.c.dst, *(totals.c[name] for name in names), totals.c.reach,
                     sa.func.coalesce(node.c.denom, 1)).select_from(
        totals.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == totals.c.dst))
    ).where(sa.true())


def propagate(connection: sa.Connection, graph_id: int, spans: Sequence[sa.Row], chosen: sa.FromClause,
              key: str | None = None, key_values: Sequence[int] = ()) -> Reach:
    """Return each reached node's probability under the ``chosen`` moves, in a temporary table.

    ``chosen`` has the move taken at each decision node as (``node_id``, ``edge_id``) rows;
    rows whose ``edge_id`` is NULL (the solver's other nodes) match no edge. With a ``key`` (a column of
    ``chosen``: a sweep's goal, an evaluation's policy) each of its ``key_values`` is propagated on its own,
    in the same statements, and the reach table has that column too.

    ``spans`` are the graph's layers with their edge id ranges (``dicegraph.store.schema.layer_ranges``).
    """
    keys = (() if key is None else (key,))
    table = reach_table(connection, key)
    reach = summed(table, backend_of(connection).upserts, (*keys, "node_id"))
    root = sa.select(node.c.id, sa.literal(1.0, sa.Double), sa.func.coalesce(node.c.denom, 1).label("denom")).where(
        node.c.graph_id == graph_id, node.c.id == 0)
    if key is None:
        connection.execute(sa.insert(table).from_select(["node_id", "reach", "denom"], root))
    elif key_values:
        denom = connection.execute(sa.select(root.subquery().c.denom)).scalar_one()
        connection.execute(sa.insert(table), [{key: value, "node_id": 0, "reach": 1.0, "denom": denom}
                                              for value in key_values])
    carried = [reach.c[name] for name in keys]
    same_key = [reach.c[name] == chosen.c[name] for name in keys]
    for span in spans:
        insert_adding(connection, table, _layer_rows(graph_id, span, reach, chosen, carried, same_key), "reach",
                      ("node_id", *keys))
    return Reach(table, reach)


def outcome_distribution(connection: sa.Connection, policy_id: int, graph_id: int, start: int = 0) -> dict[float, float]:
    """Return outcome -> probability of ending the game with it under the (evaluated) policy: the terminal's
    payoff, plus the points paid on the edges taken (:func:`pays_on_edges`), from the first mover's view; from
    the node ``start`` rather than the root where asked (what is still to come from there).

    Outcomes that are equal are added up; outcomes never reached are left out.
    A graph with cycles has no reach (a position may recur): NotFound says so.
    A probability is at most 1: a sum of reaches that rounding takes a few ulps
    past 1 (every game ends there) is given as 1.
    """
    if start:
        if has_cycles(connection, graph_id):
            raise NotFound(CYCLIC.format(graph_id))
        return carried_distributions(connection, [policy_id], graph_id, start)[policy_id]
    return outcome_distributions(connection, graph_id, [policy_id])[policy_id]


CYCLIC = ("graph {} has cycles, so no outcome distribution is propagated (a position can recur); its report gives "
          "the win probabilities")


def outcome_distributions(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int]) -> dict[int, dict[float, float]]:
    """Return :func:`outcome_distribution` of each (evaluated) policy of ``policy_ids`` from the root, by id: what
    the graph is (its cycles, its points on edges) asked once for all; where its terminals pay the whole outcome,
    every policy's terminals' reach summed in one statement, else every policy's reach carried through the layers
    in the same statements (:func:`carried_distributions`)."""
    if has_cycles(connection, graph_id):
        raise NotFound(CYCLIC.format(graph_id))
    if not policy_ids:
        return {}
    if pays_on_edges(connection, graph_id):
        return carried_distributions(connection, policy_ids, graph_id, 0)
    query = (
        sa.select(value.c.policy_id, node.c.payoff, sa.func.sum(value.c.reach))
        .select_from(value.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == value.c.node_id)))
        .where(value.c.policy_id.in_(list(policy_ids)), node.c.kind == "terminal", value.c.reach > 0)
        .group_by(value.c.policy_id, node.c.payoff)
        .order_by(value.c.policy_id, node.c.payoff)
    )
    found: dict[int, dict[float, float]] = {policy_id: {} for policy_id in policy_ids}
    for policy_id, payoff, probability in connection.execute(query):
        found[policy_id][payoff] = min(probability, 1.0)
    return found


def mean_payoff(connection: sa.Connection, policy_id: int, graph_id: int) -> float:
    """Return the expected terminal payoff under the (evaluated) policy, from its outcome distribution.

    For a policy solved for a goal, whose values are probabilities, this is
    still the game's payoff (e.g. the expected score of playing for a goal).
    """
    return sum(payoff * probability for payoff, probability in outcome_distribution(connection, policy_id, graph_id).items())


OUTCOME_DIGITS = 9  # decimals an outcome is rounded to when outcomes are added up (sums of points in another order)


def pays_on_edges(connection: sa.Connection, graph_id: int) -> bool:
    """Return whether any edge of the graph pays points (a reward) or hands the turn over (a sign of -1), so that
    a game's outcome is not its terminal's payoff alone."""
    paying = sa.select(edge.c.id).where(edge.c.graph_id == graph_id,
                                        sa.or_(edge.c.reward != 0, edge.c.sign != 1)).limit(1)
    return connection.execute(paying).first() is not None


@dispatchable("carried distributions")
def carried_distributions(connection: sa.Connection, policy_ids: Sequence[int], graph_id: int,
                          start: int = 0) -> dict[int, dict[float, float]]:
    """Return :func:`outcome_distribution` of each (evaluated) policy of ``policy_ids``, by id, in a graph whose
    edges pay points or hand the turn over, or from the node ``start``: every policy's reach carried layer by layer
    with the points won on the way and the sign they count with, all of them in the same statements (one a layer,
    :func:`_layer_rows` as :func:`propagate`'s, the policy a key), the outcome at a terminal being
    ``score + sign * payoff``."""
    first, denom = connection.execute(sa.select(node.c.layer, sa.func.coalesce(node.c.denom, 1)).where(
        node.c.graph_id == graph_id, node.c.id == start)).one()
    spans = [span for span in layer_ranges(connection, graph_id) if span.layer >= first]
    table = carried_reach_table(connection)
    keys = ("node_id", "policy_id", "score", "sign")
    upserts = backend_of(connection).upserts
    reach = summed(table, upserts, keys)
    chosen = (sa.select(choice.c.policy_id, choice.c.node_id, choice.c.edge_id)
              .where(choice.c.policy_id.in_(list(policy_ids))).subquery())
    connection.execute(sa.insert(table), [{"node_id": start, "policy_id": policy_id, "score": 0.0, "sign": 1,
                                           "reach": 1.0, "denom": denom} for policy_id in policy_ids])
    carried = [reach.c.policy_id, (reach.c.score + reach.c.sign * edge.c.reward).label("score"),
               (reach.c.sign * edge.c.sign).label("sign")]
    for span in spans:
        insert_adding(connection, table, _layer_rows(graph_id, span, reach, chosen, carried,
                                                     [reach.c.policy_id == chosen.c.policy_id]), "reach", keys)
    outcome = (reach.c.score + reach.c.sign * node.c.payoff).label("outcome")
    ends = (sa.select(reach.c.policy_id, outcome, sa.func.sum(reach.c.reach))
            .select_from(reach.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == reach.c.node_id)))
            .where(node.c.kind == "terminal", reach.c.reach > 0).group_by(reach.c.policy_id, outcome))
    found = rounded_outcomes(connection.execute(ends).all(), policy_ids)
    table.drop(connection)
    return found


def rounded_outcomes(rows: Sequence[Sequence[Any]], policy_ids: Sequence[int]) -> dict[int, dict[float, float]]:
    """Return each policy's outcome -> probability from ``rows`` of ``(policy_id, outcome, probability)``: the
    outcomes rounded to :data:`OUTCOME_DIGITS` decimals (sums of points added in other orders) and their
    probabilities added up, each at most 1, in the order of the outcomes; a policy of ``policy_ids`` without rows
    has none.

    >>> rounded_outcomes([(7, 1.0000000000001, 0.25), (7, 1.0, 0.5), (7, -0.0, 0.25)], [7, 8])
    {7: {0.0: 0.25, 1.0: 0.75}, 8: {}}
    """
    found: dict[int, dict[float, float]] = {policy_id: {} for policy_id in policy_ids}
    for policy_id, ending, probability in rows:
        rounded = round(ending, OUTCOME_DIGITS) + 0.0  # -0.0 and 0.0 alike
        found[policy_id][rounded] = found[policy_id].get(rounded, 0.0) + probability
    return {policy_id: {ending: min(spread[ending], 1.0) for ending in sorted(spread)}
            for policy_id, spread in found.items()}


def outcomes_from_every_position(connection: sa.Connection, policy_id: int, graph_id: int) -> dict[str, dict[float, float]]:
    """Return, for each position (a chance or terminal node) of an acyclic graph, by key, the outcome -> probability
    of what is still to come from there under the (evaluated) policy: :func:`outcome_distribution` from each
    position at once, worked backwards a layer at a time (a statement a layer: a roll spreads the
    distributions of where it leads by its weight, the policy's move takes its own, each shifted by the points
    the edge pays, ``reward + sign * outcome``). Backgammon's bear-off database is this table.
    """
    if has_cycles(connection, graph_id):
        raise NotFound(f"graph {graph_id} has cycles, so no outcome distribution is worked out (a position can recur)")
    table = outcome_table(connection)
    terminals = sa.select(node.c.id, node.c.payoff, sa.literal(1.0, sa.Double)).where(
        node.c.graph_id == graph_id, node.c.kind == "terminal")
    connection.execute(sa.insert(table).from_select(["node_id", "outcome", "probability"], terminals))
    after = table.alias("after")
    source = node.alias("source")
    shifted = (edge.c.reward + edge.c.sign * after.c.outcome).label("outcome")
    joined = edge.join(after, after.c.node_id == edge.c.dst)
    for span in reversed(layer_ranges(connection, graph_id)):
        parts = []
        if span.rolls:
            parts.append(sa.select(edge.c.src, shifted, (sa.func.sum(edge.c.weight * after.c.probability) / source.c.denom))
                         .select_from(joined.join(source, sa.and_(source.c.graph_id == graph_id, source.c.id == edge.c.src)))
                         .where(edges_of(span, "roll")).group_by(edge.c.src, shifted, source.c.denom))
        if span.moves:
            parts.append(sa.select(edge.c.src, shifted, after.c.probability).select_from(
                joined.join(choice, sa.and_(choice.c.policy_id == policy_id, choice.c.edge_id == edge.c.id)))
                .where(edges_of(span, "move")))
        rows = sa.union_all(*parts) if len(parts) > 1 else parts[0]
        connection.execute(sa.insert(table).from_select(["node_id", "outcome", "probability"], rows))
    found: dict[str, dict[float, float]] = {}
    positions = (sa.select(node.c.key, table.c.outcome, table.c.probability)
                 .select_from(table.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == table.c.node_id)))
                 .where(node.c.kind.in_(("chance", "terminal")), table.c.probability > 0)
                 .order_by(node.c.id, table.c.outcome))
    for key, outcome, probability in connection.execute(positions):
        rounded = round(outcome, OUTCOME_DIGITS) + 0.0
        outcomes = found.setdefault(key, {})
        outcomes[rounded] = outcomes.get(rounded, 0.0) + probability
    table.drop(connection)
    return found


def outcomes_by_goal(connection: sa.Connection, graph_id: int, reach: sa.FromClause, goals: int) -> list[dict[float, float]]:
    """Return each goal's terminal payoff -> probability from ``reach`` (``goal, node_id, reach``, goals numbered
    from 0 to ``goals`` - 1): the payoffs reached, added up."""
    query = (
        sa.select(reach.c.goal, node.c.payoff, sa.func.sum(reach.c.reach))
        .select_from(reach.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == reach.c.node_id)))
        .where(node.c.kind == "terminal", reach.c.reach > 0)
        .group_by(reach.c.goal, node.c.payoff)
        .order_by(reach.c.goal, node.c.payoff)
    )
    outcomes: list[dict[float, float]] = [{} for _ in range(goals)]
    for goal, payoff, probability in connection.execute(query):
        outcomes[goal][payoff] = probability
    return outcomes
