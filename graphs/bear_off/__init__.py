"""Backgammon's bear-off: the game (:mod:`dicegraph.graphs.bear_off.game`) and GNU Backgammon's database of it
(:mod:`dicegraph.graphs.bear_off.gnubg`), which checks it position by position."""

from dicegraph.graphs.bear_off.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.bear_off.game import __doc__ as _game_doc

__doc__ = _game_doc
