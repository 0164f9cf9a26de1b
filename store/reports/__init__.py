"""School's report and solve, not yet on the game hooks (a game's own analyses are its ``analyse`` hook)."""

from __future__ import annotations

from types import ModuleType

from graphs.protocol import Game
from store.reports import school

# games solved by a module of their own, whose report replaces the generic one: game name -> module with
# ``ensure_solved(connection, graph_id, progress)`` (``SOLVE_STEPS`` progress steps), ``POLICIES``,
# ``report(engine, game, params, built, simulated_games, seed, progress)``, ``describe(report)`` and
# ``policy_to_play(connection, graph_id, name)`` (what the simulator plays, and the exact value)
OWN_REPORTS: dict[str, ModuleType] = {"school": school}


def has_own_solver(game: Game) -> bool:
    """Return whether the game is solved by a module of its own (:data:`OWN_REPORTS`), not the generic solver."""
    return game.name in OWN_REPORTS
