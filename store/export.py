"""Diagrams of a stored graph: SQL selects the nodes and edges, a networkx DiGraph holds them.

Two views:

- the *policy view* (:func:`policy_view`) has one node per position (chance and
  terminal nodes the policy reaches) and one edge per (position, next position):
  a roll followed by the policy's moves, all rolls leading to the same next
  position added up into one integer ``weight`` over the position's ``denom``.
  Rolls that end the game with no move to make (*busts*, losing rolls) are
  left out unless asked for, as the seeds draw their graphs.
- the *full view* (:func:`neighbourhood`) has every node and edge within
  ``depth`` steps of one node (by default the whole graph from its root):
  chance, decision and terminal nodes, roll edges with their exact
  probabilities, moves with the policy's choice marked.

``store/render.py`` turns either into DOT, SVG or PNG.

>>> from dicegraph.graphs import get_game
>>> from dicegraph.store.catalog import find_policy
>>> from dicegraph.store.db import open_database
>>> from dicegraph.store.report import game_report
>>> engine = open_database("sqlite://", create=True)
>>> _ = game_report(engine, get_game("jackpot"), {"cells": 3})
>>> with engine.connect() as connection:
...     view = policy_view(connection, 1, find_policy(connection, 1, "hilo").id)
>>> sorted(view.nodes), view.edges["0", "4"]["weight"]
(['0', '1', '2', '3', '4', '5', '6', '7'], 7)
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any

import networkx as nx
import sqlalchemy as sa

from dicegraph.graphs.errors import TooLarge
from dicegraph.store.backends import backend_of
from dicegraph.store.catalog import find_node, has_cycles
from dicegraph.store.schema import choice, edge, graph_edge_span, layer, node, value

MOVE_SEPARATOR = ", "


def reached_ids(connection: sa.Connection, policy_id: int, first: int, last: int, cyclic: bool) -> sa.Select | list[int]:
    """Return the ids of the nodes the policy reaches with positive probability: those of positive stored reach;
    in a graph with cycles, whose reach is not propagated (a position may recur), those a walk from the root
    along the rolls and the policy's moves arrives at: a recursive query, whose UNION stops at a repeat, or, on a
    backend whose recursive queries only UNION ALL (:attr:`Backend.recursive_union`), a statement a step (ids)."""
    if not cyclic:
        return sa.select(value.c.node_id).where(value.c.policy_id == policy_id, value.c.reach > 0)

    def onward(sources: sa.CTE | list[int]) -> sa.Select:  # where the rolls and the policy's moves lead from sources
        listed = isinstance(sources, list)
        leaving = edge if listed else edge.join(sources, edge.c.src == sources.c.node_id)
        query = (sa.select(edge.c.dst)
                 .select_from(leaving.outerjoin(choice, sa.and_(choice.c.policy_id == policy_id,
                                                                choice.c.edge_id == edge.c.id)))
                 .where(edge.c.id.between(first, last),
                        sa.or_(sa.and_(edge.c.kind == "roll", edge.c.weight > 0), choice.c.edge_id.is_not(None))))
        return query.where(edge.c.src.in_(sources)) if listed else query

    root = sa.select(sa.literal(0, sa.Integer).label("node_id"))
    if backend_of(connection).recursive_union:
        walked = root.cte("reachable", recursive=True)
        return sa.select(walked.union(onward(walked)).c.node_id)
    seen, frontier = {0}, [0]
    while frontier:
        arrived = set(connection.execute(onward(frontier)).scalars())
        frontier = sorted(arrived - seen)
        seen.update(frontier)
    return sorted(seen)


def _reached(graph_id: int, policy_id: int, to_layer: int | None, reached: sa.Select | list[int]) -> sa.Select:
    """Positions (chance and terminal nodes) the policy reaches with positive probability (``reached``)."""
    query = (
        sa.select(node.c.id, node.c.key, node.c.label, node.c.layer, node.c.kind, node.c.denom, node.c.payoff,
                  value.c.value, value.c.reach)
        .select_from(node.join(value, sa.and_(value.c.node_id == node.c.id, value.c.policy_id == policy_id)))
        .where(node.c.graph_id == graph_id, node.c.kind != "decision", node.c.id.in_(reached))
    )
    return query if to_layer is None else query.where(node.c.layer <= to_layer)


def _guard(count: int, limit: int | None, smaller: str) -> None:
    if limit is not None and count > limit:
        raise TooLarge(f"the diagram would have {count:,} nodes, over the limit of {limit:,}: {smaller}, or pass --force")


def _count_ends(connection: sa.Connection, arrivals: sa.Select) -> int:
    """Return how many positions the policy view's ``arrivals`` (a walk's rows) join, the root among them."""
    drawn = arrivals.subquery()
    ends = sa.union(sa.select(drawn.c.position), sa.select(drawn.c.node), sa.select(sa.literal(0))).subquery()
    return connection.execute(sa.select(sa.func.count()).select_from(ends)).scalar_one()


def _walk(policy_id: int, first: int, last: int, to_layer: int | None, reached: sa.Select | list[int]) -> sa.CTE:
    """Recursive CTE: from each reached position, every roll, then the policy's moves until a position."""
    start = sa.select(
        edge.c.src.label("position"),
        edge.c.dst.label("node"),
        edge.c.weight,
        edge.c.id.label("roll_edge"),
        edge.c.label.label("roll"),
        sa.cast(sa.literal(""), sa.Text).label("moves"),
    ).where(edge.c.id.between(first, last), edge.c.kind == "roll", edge.c.src.in_(reached))
    if to_layer is not None:
        start = start.where(edge.c.src_layer < to_layer)
    walk = start.cte("walk", recursive=True)
    following = sa.select(
        walk.c.position,
        edge.c.dst,
        walk.c.weight,
        walk.c.roll_edge,
        walk.c.roll,
        sa.case((walk.c.moves == "", edge.c.label), else_=walk.c.moves + MOVE_SEPARATOR + edge.c.label),
    ).select_from(
        walk.join(choice, sa.and_(choice.c.policy_id == policy_id, choice.c.node_id == walk.c.node))
        .join(edge, edge.c.id == choice.c.edge_id)
    )
    return walk.union_all(following)


def policy_view(
    connection: sa.Connection,
    graph_id: int,
    policy_id: int,
    *,
    busts: bool = False,
    to_layer: int | None = None,
    max_nodes: int | None = None,
) -> nx.DiGraph:
    """Return the policy's position graph: nodes keyed by node key, edges weighted by roll counts.

    Node attributes: ``key, label, layer, kind, denom, payoff, value, reach``
    (value and reach under the policy). Edge attributes: ``weight`` (rolls
    leading there), ``denom`` (rolls of the source), ``moves`` (the policy's
    moves, one entry per distinct move sequence) and ``rolls`` (the roll labels,
    in stored order). With ``to_layer``, only positions in layers up to it.
    Raises TooLarge over ``max_nodes`` positions.
    """
    first, last = graph_edge_span(connection, graph_id)
    view = nx.DiGraph()
    if first is None:
        return view
    reached = reached_ids(connection, policy_id, first, last, has_cycles(connection, graph_id))
    positions = {row.id: row for row in connection.execute(_reached(graph_id, policy_id, to_layer, reached))}
    walk = _walk(policy_id, first, last, to_layer, reached)
    arrivals = (
        sa.select(walk.c.position, walk.c.node, walk.c.weight, walk.c.roll, walk.c.moves, walk.c.roll_edge)
        .join_from(walk, node, sa.and_(node.c.graph_id == graph_id, node.c.id == walk.c.node))
        .where(node.c.kind != "decision")
    )
    if not busts:
        arrivals = arrivals.where(sa.or_(walk.c.moves != "", node.c.kind != "terminal"))
    if to_layer is not None:
        arrivals = arrivals.where(node.c.layer <= to_layer)
    smaller = "keep the top layers with --to-layer N, draw around a node with --root KEY --depth N"
    wanted: set[int] = {0} if 0 in positions else set()
    edges = []
    ordered = arrivals.order_by(walk.c.position, walk.c.node, walk.c.roll_edge)
    streamed = connection.execution_options(stream_results=True).execute(ordered)
    for (source, target), rows in groupby(streamed, key=lambda row: (row.position, row.node)):
        wanted.update((source, target))
        if max_nodes is not None and len(wanted) + (0 not in wanted) > max_nodes:  # the walk is sent once; over
            streamed.close()  # the limit, once more to count the whole diagram
            _guard(_count_ends(connection, arrivals), max_nodes, smaller)
        rows = list(rows)
        moves = list(dict.fromkeys(row.moves for row in rows if row.moves))
        edges.append((source, target, {
            "weight": sum(row.weight for row in rows),
            "denom": positions[source].denom,
            "moves": moves,
            "rolls": [row.roll for row in rows],
        }))
    for node_id in sorted(wanted):
        view.add_node(positions[node_id].key, **_node_attributes(positions[node_id]))
    for source, target, attributes in edges:
        view.add_edge(positions[source].key, positions[target].key, **attributes)
    return view


def _node_attributes(row: sa.Row) -> dict[str, Any]:
    return {name: getattr(row, name) for name in ("key", "label", "layer", "kind", "denom", "payoff")} | {
        "value": getattr(row, "value", None), "reach": getattr(row, "reach", None),
    }


def neighbourhood(
    connection: sa.Connection,
    graph_id: int,
    root_key: str | None = None,
    depth: int | None = None,
    policy_id: int | None = None,
    *,
    to_layer: int | None = None,
    max_nodes: int | None = None,
) -> nx.DiGraph:
    """Return every node and edge within ``depth`` steps of ``root_key`` (default: the whole graph).

    Node attributes as in :func:`policy_view` (value and reach when a policy is
    given and evaluated). Edge attributes: ``kind, label, weight, denom,
    reward, chosen`` (whether the policy takes the move). With ``to_layer``,
    only nodes in layers up to it. Raises TooLarge over ``max_nodes`` nodes.
    """
    if root_key is None:
        root = connection.execute(sa.select(node).where(node.c.graph_id == graph_id, node.c.id == 0)).one()
    else:
        root = find_node(connection, graph_id, root_key)
    spans = {row.layer: (row.first_edge, row.last_edge) for row in connection.execute(
        sa.select(layer.c.layer, layer.c.first_edge, layer.c.last_edge).where(layer.c.graph_id == graph_id))}
    chosen_edges = set()
    rows = {root.id: root}
    frontier = [root]
    found_edges = []
    steps = 0
    while frontier and (depth is None or steps < depth):
        steps += 1
        out = []
        for layer_number, group in groupby(sorted(frontier, key=lambda row: row.layer), key=lambda row: row.layer):
            first, last = spans.get(layer_number, (None, None))
            if first is None:
                continue
            ids = [row.id for row in group]
            out += connection.execute(
                sa.select(edge).where(edge.c.id.between(first, last), edge.c.src.in_(ids)).order_by(edge.c.id)
            ).all()
        targets = sa.select(node).where(node.c.graph_id == graph_id, node.c.id.in_(sorted({row.dst for row in out} - set(rows))))
        if to_layer is not None:
            targets = targets.where(node.c.layer <= to_layer)
        frontier = connection.execute(targets).all() if out else []
        _guard(len(rows) + len(frontier), max_nodes, "draw fewer steps with --depth N or layers with --to-layer N")
        rows.update((row.id, row) for row in frontier)
        found_edges += [row for row in out if row.dst in rows]
    values: dict[int, sa.Row] = {}
    if policy_id is not None:
        values = {row.node_id: row for row in connection.execute(
            sa.select(value).where(value.c.policy_id == policy_id, value.c.node_id.in_(list(rows))))}
        chosen_edges = set(connection.execute(
            sa.select(choice.c.edge_id).where(choice.c.policy_id == policy_id, choice.c.node_id.in_(list(rows)))
        ).scalars())
    view = nx.DiGraph()
    for node_id, row in rows.items():
        attributes = _node_attributes(row)
        if node_id in values:
            attributes |= {"value": values[node_id].value, "reach": values[node_id].reach}
        view.add_node(row.key, **attributes)
    for row in found_edges:
        view.add_edge(rows[row.src].key, rows[row.dst].key, kind=row.kind, label=row.label, weight=row.weight,
                      denom=rows[row.src].denom, reward=row.reward, chosen=row.id in chosen_edges)
    return view


def diagram_title(
    graph_row: sa.Row,
    policy_name: str,
    view: nx.DiGraph,
    *,
    full: bool,
    root: str | None = None,
    depth: int | None = None,
    to_layer: int | None = None,
) -> str:
    """Return a one-line title saying what a diagram shows, e.g. ``'jackpot (cells=9), policy hilo: ...'``."""
    params = ", ".join(f"{name}={setting}" for name, setting in json.loads(graph_row.params).items())
    scope = f"{view.number_of_nodes():,} nodes, {view.number_of_edges():,} edges"
    if full:
        around = "" if root is None else f" around {root}" + ("" if depth is None else f", {depth} step{'s' * (depth != 1)}")
        text = f"{graph_row.game} ({params}){around}: {scope}; moves of {policy_name} in blue"
    else:
        text = f"{graph_row.game} ({params}), policy {policy_name}: {scope}; line width = share of rolls"
    return text + ("" if to_layer is None else f"; layers up to {to_layer}")
