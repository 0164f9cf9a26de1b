"""Monte Carlo against the stored graph: which moves to play, and the exact value to compare with.

An agent of the game is played from the rules (the game's module) by name;
any other policy (``optimal``, a named solve) is played by looking up the moves
it stores. The simulation itself never reads the graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.montecarlo import Policy, require_simulator, simulate
from dicegraph.graphs.protocol import Game, Progress, with_defaults
from dicegraph.store.catalog import find_policy, list_policies, root_value
from dicegraph.store.errors import NotFound
from dicegraph.store.load import canonical_params, find_graph
from dicegraph.store.propagate import mean_payoff
from dicegraph.store.view import GraphView


def policy_to_play(
    connection: sa.Connection | None, game: Game, params: Mapping[str, Any], name: str
) -> tuple[Policy, float | None]:
    """Return what the simulator plays for policy ``name``, and its exact value when stored.

    Agents need no database (``connection`` may be None); stored policies raise
    NotFound when the graph or the policy is not there.
    """
    is_agent = name in game.agents(params)
    stored = None if connection is None else find_graph(connection, game.name, canonical_params(with_defaults(game, params)))
    if stored is None:
        if is_agent:
            return name, None
        raise NotFound(f"policy {name!r} needs the stored graph of {game.name}: build and solve it first (dicegraph report {game.name})")
    if not is_agent:
        return GraphView(connection, stored.id, game).policy_to_play(name)
    row = _maybe_policy(connection, stored.id, name)
    exact = None if row is None else root_value(connection, row.id)
    if exact is not None and row.goal is not None:  # the value is the goal's probability; games score payoffs
        exact = mean_payoff(connection, row.id, stored.id)
    return name, exact


def _answered(connection: sa.Connection | None, game: Game, params: Mapping[str, Any], name: str) -> str | None:
    """Return the name of the policy that the stored policy ``name`` is the best response to (None: it is none, or
    not stored)."""
    stored = None if connection is None else find_graph(connection, game.name, canonical_params(with_defaults(game, params)))
    listed = [] if stored is None else list_policies(connection, stored.id)
    return next((row["answers"] for row in listed if row["name"] == name), None)


def _maybe_policy(connection: sa.Connection, graph_id: int, name: str) -> sa.Row | None:
    try:
        return find_policy(connection, graph_id, name)
    except NotFound:
        return None


def monte_carlo(
    connection: sa.Connection | None,
    game: Game,
    params: Mapping[str, Any],
    name: str,
    games: int,
    seed: int,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Return ``{"game", "policy", "against", "games", "estimate", "stderr", "exact", "z"}`` for policy ``name``.

    ``against`` names the policy a best response plays against, moving first (None: the policy plays every
    seat). ``exact`` and ``z`` are None when the policy's value is not stored. Raises DicegraphError for a game
    without a simulator, before reading anything.
    """
    require_simulator(game)
    policy, exact = policy_to_play(connection, game, params, name)
    estimate = simulate(game, params, policy, games, seed, progress)
    return {
        "game": game.name,
        "policy": name,
        "against": _answered(connection, game, params, name),
        "games": games,
        "estimate": estimate.mean,
        "stderr": estimate.stderr,
        "exact": exact,
        "z": None if exact is None else estimate.z(exact),
    }
