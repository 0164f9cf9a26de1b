"""School (seed 001): the game (:mod:`dicegraph.graphs.school.game`), its turn structure, report, advisor and commands."""

from dicegraph.graphs.school.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.school.game import __doc__ as _game_doc
from dicegraph.graphs.school.advise import advisor  # noqa: F401
from dicegraph.graphs.school.commands import commands  # noqa: F401
from dicegraph.graphs.school.report import analyse, describe  # noqa: F401
from dicegraph.graphs.school.rules import rules  # noqa: F401
from dicegraph.graphs.school.stored import decision_array as play_turns  # noqa: F401

__doc__ = _game_doc
