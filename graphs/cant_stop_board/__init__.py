"""Can't Stop on a real board: the game (:mod:`dicegraph.graphs.cant_stop_board.game`), its advisor and its commands."""

from dicegraph.graphs.cant_stop_board.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.cant_stop_board.game import __doc__ as _game_doc
from dicegraph.graphs.cant_stop_board.advise import advisor  # noqa: F401
from dicegraph.graphs.cant_stop_board.commands import commands  # noqa: F401

__doc__ = _game_doc
