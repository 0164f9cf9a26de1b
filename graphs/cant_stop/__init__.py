"""Can't Stop (seed 003), one turn over a triple of columns: the game (:mod:`dicegraph.graphs.cant_stop.game`) and its report (:mod:`dicegraph.graphs.cant_stop.report`)."""

from dicegraph.graphs.cant_stop.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.cant_stop.game import __doc__ as _game_doc
from dicegraph.graphs.cant_stop.report import analyse, describe, report_graphs  # noqa: F401

__doc__ = _game_doc
