"""5000 (seed 004), one turn: the game (:mod:`dicegraph.graphs.five_thousand.game`) and its report (:mod:`dicegraph.graphs.five_thousand.report`)."""

from dicegraph.graphs.five_thousand.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.five_thousand.game import __doc__ as _game_doc
from dicegraph.graphs.five_thousand.report import analyse, describe  # noqa: F401

__doc__ = _game_doc
