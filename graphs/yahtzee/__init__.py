"""Yahtzee: the game (:mod:`graphs.yahtzee.game`), its turn structure, report, advisor and Monte Carlo."""

from graphs.yahtzee.game import *  # noqa: F401,F403  (the game's attributes and rules)
from graphs.yahtzee.game import __doc__ as _game_doc
from graphs.yahtzee.advise import advisor  # noqa: F401
from graphs.yahtzee.play import simulator  # noqa: F401
from graphs.yahtzee.report import describe, turn_report  # noqa: F401
from graphs.yahtzee.rules import rules  # noqa: F401
from graphs.yahtzee.turn import decision_array as play_turns, turn  # noqa: F401

__doc__ = _game_doc
