"""Shut The Box (seed 002): the game (:mod:`dicegraph.graphs.shut_the_box.game`) and its report (:mod:`dicegraph.graphs.shut_the_box.report`)."""

from dicegraph.graphs.shut_the_box.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.shut_the_box.game import __doc__ as _game_doc
from dicegraph.graphs.shut_the_box.report import analyse, describe  # noqa: F401

__doc__ = _game_doc
