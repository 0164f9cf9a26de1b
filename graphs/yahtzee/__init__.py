"""Yahtzee: the game (:mod:`dicegraph.graphs.yahtzee.game`), its turn structure, report, advisor and Monte Carlo."""

from dicegraph.graphs.yahtzee.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.yahtzee.game import __doc__ as _game_doc
from dicegraph.graphs.yahtzee.advise import advisor  # noqa: F401
from dicegraph.graphs.yahtzee.play import simulator  # noqa: F401
from dicegraph.graphs.yahtzee.report import analyse, describe  # noqa: F401
from dicegraph.graphs.yahtzee.rules import rules  # noqa: F401
from dicegraph.graphs.yahtzee.stored import decision_array as play_turns  # noqa: F401

__doc__ = _game_doc
