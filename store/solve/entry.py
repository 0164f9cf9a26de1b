"""The one solve entry, :func:`solve_graph`: it picks the method from what the graph is (the package's
docstring, :mod:`dicegraph.store.solve`, has the methods), and says before a solve what it will store
(:func:`policy_names`) in how many steps (:func:`solve_steps`).

The ``connection`` is the caller's: a graph of rows is solved inside its transaction (the caller commits);
a turn stored once commits as it goes (the connection must not be inside a ``begin()`` block).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import OPTIMAL, Progress
from dicegraph.graphs.spec import GameSpec
from dicegraph.store.catalog import find_policy, stored_params
from dicegraph.store.solve import layers, turn_cycles, turns
from dicegraph.store.solve.layers import Goal


def solve_graph(connection: sa.Connection, graph_id: int, game: GameSpec, *, objective: str | None = None,
                name: str = OPTIMAL, goal: Goal | None = None, progress: Progress | None = None) -> int:
    """Solve the stored graph ``graph_id`` of ``game`` for ``objective`` (the game's by default), store the policy
    as ``name`` (for ``goal``, when given: the probability of reaching it) and return its id.

    ``progress`` counts the layers solved (a turn stored once: the states of each policy). A game whose
    turn is stored once solves the turn policies it declares, for its own objective, and refuses others.
    """
    params = stored_params(connection, graph_id)
    if not game.stores_turn_once:
        return layers.solve(connection, graph_id, objective or game.objective, name, progress, goal=goal,
                            first_guess=game.guess_for(params))
    structure = game.turn(params)
    declared = [policy.name for policy in structure.policies]
    if (objective or game.objective) != game.objective or name not in declared or goal is not None:
        raise DicegraphError(f"{game.name} solves its declared policies ({', '.join(declared)}) for "
                             f"{game.objective}, with no goal: solve it without --objective and --name")
    graph = turns.TurnGraph.load(connection, graph_id, structure)
    if turn_cycles.has_cyclic_states(connection, graph):  # a race: Newton's method per state layer
        turn_cycles.ensure_race_solved(connection, graph, progress)
    else:
        turns.ensure_turns_solved(connection, graph, progress)
    return find_policy(connection, graph_id, name).id


def policy_names(game: GameSpec, params: Mapping[str, Any]) -> list[str]:
    """Return the names of the policies the game's report evaluates (and simulates): a repeating game's
    turn policies, else its agents, the optimum and its further solves."""
    if game.stores_turn_once:
        return [declared.name for declared in game.turn(params).policies]
    return [*game.agents(params), OPTIMAL, *game.solves]


def solve_steps(game: GameSpec, params: Mapping[str, Any]) -> int:
    """Return how many steps a solve of a repeating game reports to its progress callback for ``params``
    (``dicegraph.store.report.prepare_game`` solves it as it is built; 0: no progress to show)."""
    if not game.stores_turn_once:
        return 0
    structure = game.turn(params)
    return len(structure.policies) * (structure.states or 0)
