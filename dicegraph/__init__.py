"""dicegraph as a library: ``import dicegraph``, then ``db = dicegraph.open(url)`` (the manual: docs/python.md).

>>> import dicegraph
>>> db = dicegraph.open("sqlite://")
>>> db.build("jackpot", {"cells": 3})["action"]
'built'
>>> sorted(dicegraph.games())[:3]
['5000', '5000-race', 'cant-stop']
>>> try:
...     db.build("jackpot", {"cells": 99})
... except dicegraph.Error as error:
...     print(error)
invalid value '99' for parameter 'cells' (accepted: whole numbers 2..12)
"""

from __future__ import annotations

from graphs import GAMES
from graphs.errors import DicegraphError as Error
from graphs.spec import GameSpec

from dicegraph.database import Database, Meter, open

__all__ = ["Database", "Error", "GameSpec", "Meter", "games", "open"]


def games() -> dict[str, GameSpec]:
    """Return the games dicegraph can build by name (built in and installed plugins), each its declared spec."""
    return dict(GAMES)
