"""Registry of the games dicegraph can build: name -> game module.

>>> sorted(GAMES)
['5000', '5000-race', 'cant-stop', 'cant-stop-board', 'jackpot', 'pig', 'school', 'shut-the-box', 'synthetic', 'yahtzee']
>>> get_game("jackpot").title
'Jackpot'
"""

from __future__ import annotations

from graphs import cant_stop, cant_stop_board, five_thousand, five_thousand_race, jackpot, pig, school, shut_the_box, synthetic, yahtzee
from graphs.errors import DicegraphError, UnknownGame
from graphs.protocol import Game

GAMES: dict[str, Game] = {module.name: module for module in (jackpot, shut_the_box, cant_stop, cant_stop_board, five_thousand, school, synthetic, yahtzee, pig, five_thousand_race)}  # type: ignore[misc]


def register(game: Game) -> Game:
    """Add ``game`` (a module or object following :class:`graphs.protocol.Game`) to the registry; return it.

    Every command, report and conformance test then knows it by ``game.name``.
    A game of this repository is listed in :data:`GAMES` above instead.
    """
    known = GAMES.get(game.name)
    if known is not None and known is not game:
        raise DicegraphError(f"a game called {game.name!r} is registered already")
    GAMES[game.name] = game
    return game


def get_game(name: str) -> Game:
    """Return the game registered as ``name``, or raise UnknownGame listing the known ones."""
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGame(f"unknown game {name!r} (known: {', '.join(sorted(GAMES))})") from None
