"""Two players' exact score distributions against each other: one game, and a day of games.

>>> head_to_head({0: 0.5, 2: 0.5}, {1: 1.0}, lower_wins=True)
{'win': 0.5, 'loss': 0.5, 'tie': 0.0}
>>> round(series(0.5, 0.5, 0.0, games=2)["win"], 12)
0.25
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def head_to_head(first: Mapping[float, float], second: Mapping[float, float], lower_wins: bool) -> dict[str, float]:
    """Return the probabilities that the first player wins, loses or ties one game against the second.

    Each argument maps a score to its probability; the players are independent.
    """
    win = loss = tie = 0.0
    for mine, p in first.items():
        for theirs, q in second.items():
            if mine == theirs:
                tie += p * q
            elif (mine < theirs) == lower_wins:
                win += p * q
            else:
                loss += p * q
    return {"win": win, "loss": loss, "tie": tie}


def series(win: float, loss: float, tie: float, games: int) -> dict[str, float]:
    """Return the probabilities that, over ``games`` independent games, the first player wins more, fewer, as many.

    ``win``, ``loss`` and ``tie`` are one game's probabilities; the count of
    each over the series is multinomial.
    """
    more = fewer = same = 0.0
    for wins in range(games + 1):
        for losses in range(games - wins + 1):
            ties = games - wins - losses
            ways = math.comb(games, wins) * math.comb(games - wins, losses)
            p = ways * win**wins * loss**losses * tie**ties
            if wins > losses:
                more += p
            elif wins < losses:
                fewer += p
            else:
                same += p
    return {"win": more, "loss": fewer, "tie": same}
