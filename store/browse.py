"""What there is to look at: the games that can be built, the graphs stored, their layers, positions by text.

The ``games`` and ``graphs`` commands and the explorer (``web/``) list the
same things through these functions.

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

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import OPTIMAL, value_text, with_defaults
from dicegraph.graphs.spec import GameSpec
from dicegraph.store.catalog import built_graphs, graph_by_id, list_policies
from dicegraph.store.solve.entry import policy_names
from dicegraph.store.schema import graph, layer, node


def game_listing(games: Iterable[GameSpec], broken: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Return each game that can be built: ``name``, ``title``, ``summary``, ``objective``, ``outcome``,
    ``players``, ``origin`` (``dicegraph``, or the plugin it comes from), ``extras`` (the optional extras it
    declares, :meth:`dicegraph.graphs.spec.GameSpec.extras`), ``params`` (``name``, ``default``, ``help``, ``accepted``),
    ``agents`` and the ``policies`` a report evaluates. A game whose own code fails as it is listed (its rules
    or agents raise on its defaults) is left out, the reason in one line in ``broken`` (name -> reason)."""
    listing = []
    for game in games:
        defaults = with_defaults(game, {})
        try:
            policies = policy_names(game, defaults)
        except Exception as error:  # noqa: BLE001 (a game's own code: its fault, never the listing's)
            said = " ".join(str(error).split())
            if broken is not None:
                broken[game.name] = (f"game {game.name!r} ({game.origin}): its agents cannot be named on its "
                                     f"defaults ({type(error).__name__}{f': {said}' if said else ''})")
            continue
        listing.append({
            "name": game.name,
            "title": game.title,
            "summary": game.summary,
            "objective": game.objective,
            "outcome": game.outcome,
            "players": game.players,
            "origin": game.origin,
            "extras": game.extras(),
            "params": [{"name": p.name, "default": value_text(p.default), "help": p.help, "accepted": p.accepted}
                       for p in game.params],
            "agents": [name for name in policies if name != OPTIMAL and name not in game.solves],
            "policies": policies,
        })
    return listing


def stored_graphs(connection: sa.Connection, with_policies: bool = False) -> list[dict[str, Any]]:
    """Return the stored graphs, oldest first: their ``graph`` table row as a dict, and with ``with_policies``
    their ``policies`` (:func:`dicegraph.store.catalog.list_policies`: name, objective, method, goal, root value)."""
    rows = [dict(row._mapping) for row in connection.execute(built_graphs().order_by(graph.c.id))]
    if with_policies:
        for row in rows:
            row["policies"] = list_policies(connection, row["id"])
    return rows


def stored_graph(connection: sa.Connection, graph_id: int) -> dict[str, Any]:
    """Return the ``graph`` table row of graph ``graph_id`` as a dict, or raise NotFound."""
    return dict(graph_by_id(connection, graph_id)._mapping)


def root_key(connection: sa.Connection, graph_id: int) -> str | None:
    """Return the key of the graph's first position (node 0), None for a graph without nodes."""
    return connection.execute(sa.select(node.c.key).where(node.c.graph_id == graph_id, node.c.id == 0)).scalar()


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
