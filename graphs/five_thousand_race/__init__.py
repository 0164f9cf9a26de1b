"""5000 as a race (seed 004): the game (:mod:`dicegraph.graphs.five_thousand_race.game`) and its report (:mod:`dicegraph.graphs.five_thousand_race.report`)."""

from dicegraph.graphs.five_thousand_race.game import *  # noqa: F401,F403  (the game's attributes and rules)
from dicegraph.graphs.five_thousand_race.game import __doc__ as _game_doc

__doc__ = _game_doc
from dicegraph.graphs.five_thousand_race.report import analyse, charts, describe, simulated_runs  # noqa: F401
