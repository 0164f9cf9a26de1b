"""What there is to look at: the graphs stored, their layers, positions by text.

The ``graphs`` command and the explorer (``web/``) list the same things through these functions (the games that
can be built: :mod:`dicegraph.graphs.listing`).

>>> from dicegraph.store.db import open_database
>>> from dicegraph.store.load import build_graph
>>> from dicegraph.graphs import get_game
>>> engine = open_database("sqlite://", create=True)
>>> graph_id = build_graph(engine, get_game("jackpot"), {"cells": 4}).graph_id
>>> with engine.connect() as connection:
...     [(found["key"], found["label"]) for found in search_positions(connection, graph_id, "1", limit=2)]
[('1', 'up 1'), ('0/1-1', 'none up; roll 1-1')]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from dicegraph.store.catalog import built_graphs, policies_of_graphs
from dicegraph.store.schema import graph, layer, node


def stored_graphs(connection: sa.Connection, with_policies: bool = False) -> list[dict[str, Any]]:
    """Return the stored graphs, oldest first: their ``graph`` table row as a dict, and with ``with_policies``
    their ``policies`` (:func:`dicegraph.store.catalog.list_policies`: name, objective, method, goal, root value)
    and their first position's key (``root``), read for all the graphs at once (three statements however many)."""
    rows = [dict(row._mapping) for row in connection.execute(built_graphs().order_by(graph.c.id))]
    if with_policies:
        ids = [row["id"] for row in rows]
        policies, roots = policies_of_graphs(connection, ids), root_keys(connection, ids)
        for row in rows:
            row["policies"], row["root"] = policies[row["id"]], roots.get(row["id"])
    return rows


def root_key(connection: sa.Connection, graph_id: int) -> str | None:
    """Return the key of the graph's first position (node 0), None for a graph without nodes."""
    return root_keys(connection, [graph_id]).get(graph_id)


def root_keys(connection: sa.Connection, graph_ids: Sequence[int]) -> dict[int, str]:
    """Return :func:`root_key` of each graph of ``graph_ids`` that has nodes, by graph id, in one statement."""
    if not graph_ids:
        return {}
    query = sa.select(node.c.graph_id, node.c.key).where(node.c.graph_id.in_(list(graph_ids)), node.c.id == 0)
    return dict(connection.execute(query).all())


def largest_payoff(connection: sa.Connection, graph_id: int) -> float:
    """Return the size of the graph's largest payoff (its terminals' largest absolute payoff; 0.0 without any)."""
    query = sa.select(sa.func.max(sa.func.abs(node.c.payoff))).where(node.c.graph_id == graph_id,
                                                                     node.c.kind == "terminal")
    return float(connection.execute(query).scalar() or 0.0)


def graph_layers(connection: sa.Connection, graph_id: int) -> list[dict[str, Any]]:
    """Return the graph's layers in order: ``layer``, ``nodes``, ``rolls``, ``moves`` (edges leaving it) and
    ``cycle_start`` (the first layer of its cyclic component, None outside cycles)."""
    query = (sa.select(layer.c.layer, layer.c.nodes, layer.c.rolls, layer.c.moves, layer.c.cycle_start)
             .where(layer.c.graph_id == graph_id).order_by(layer.c.layer))
    return [dict(row._mapping) for row in connection.execute(query)]


def search_positions(connection: sa.Connection, graph_id: int, text: str, limit: int = 50) -> list[dict[str, Any]]:
    """Return up to ``limit`` positions whose key or label contains ``text`` (case-insensitive), exact key first:
    ``key``, ``label``, ``kind``, ``layer``."""
    pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    query = (sa.select(node.c.key, node.c.label, node.c.kind, node.c.layer)
             .where(node.c.graph_id == graph_id,
                    sa.or_(sa.func.lower(node.c.key).like(pattern, escape="\\"),
                           sa.func.lower(node.c.label).like(pattern, escape="\\")))
             .order_by(sa.case((node.c.key == text, 0), else_=1), node.c.layer, node.c.id).limit(limit))
    return [dict(row._mapping) for row in connection.execute(query)]
