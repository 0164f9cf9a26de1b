"""Analyses particular to one game, added to its report: game name -> module with ``analyse`` and ``describe``.

``prepare(engine, game, params)``, if there, runs first (builds further graphs);
``analyse(connection, game, params, report)`` returns keys to add to the
report (``report`` is the generic part, see ``store.report.game_report``);
``describe(report)`` returns the lines the human-readable report prints after
the policy table.
"""

from __future__ import annotations

from types import ModuleType

from graphs.protocol import Game
from store.reports import cant_stop, five_thousand, school, shut_the_box

ANALYSES: dict[str, ModuleType] = {"5000": five_thousand, "cant-stop": cant_stop, "shut-the-box": shut_the_box}
# games solved by a module of their own, whose report replaces the generic one: game name -> module with
# ``ensure_solved(connection, graph_id, progress)`` (``SOLVE_STEPS`` progress steps), ``POLICIES``,
# ``report(engine, game, params, built, simulated_games, seed, progress)``, ``describe(report)`` and
# ``policy_to_play(connection, graph_id, name)`` (what the simulator plays, and the exact value)
OWN_REPORTS: dict[str, ModuleType] = {"school": school}


def has_own_solver(game: Game) -> bool:
    """Return whether the game is solved by a module of its own (:data:`OWN_REPORTS`), not the generic solver."""
    return game.name in OWN_REPORTS
