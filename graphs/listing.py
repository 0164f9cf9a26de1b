"""The games that can be built, as ``dicegraph games`` and the explorer's front page list them: read from what each
game declares, with no database (so the listing imports no driver).

>>> from dicegraph.graphs import get_game
>>> [entry["name"] for entry in game_listing([get_game("jackpot")])], game_listing([get_game("jackpot")])[0]["players"]
(['jackpot'], 1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dicegraph.graphs.protocol import OPTIMAL, value_text, with_defaults
from dicegraph.graphs.spec import GameSpec, policy_names


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
