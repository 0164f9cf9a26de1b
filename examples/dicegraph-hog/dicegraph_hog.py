"""Hog, one turn: choose how many dice to roll, then roll them once. Any 1 scores 1; otherwise the sum scores.

A game in a package of its own, found by dicegraph through the entry point its pyproject.toml names
(``dicegraph.games``): ``pip install examples/dicegraph-hog``, then ``dicegraph check hog``. Its one decision
comes before the one roll: more dice raise the sum and the risk of a 1 together.
"""

from __future__ import annotations

from collections import Counter
from itertools import product

from dicegraph.graphs.protocol import Param
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "hog"
title = "Hog"
summary = "how many dice to roll once: any 1 scores 1, else their sum"
version = 1
objective = "max"
outcome = "expected score"
params = (Param("dice", 6, int, "the most dice one may roll", lambda dice: 1 <= dice <= 8, "1..8"),)
small_params = {"dice": 4}

CHOOSING = 0  # the position before the choice; a position k > 0 is k dice chosen


def scores(dice: int) -> list[tuple[int, int]]:
    """Return each score of rolling ``dice`` dice with the number of the 6**dice rolls that give it.

    >>> scores(1)
    [(1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1)]
    >>> sum(weight for _, weight in scores(3)) == 6 ** 3
    True
    """
    counted = Counter(1 if 1 in faces else sum(faces) for faces in product(range(1, 7), repeat=dice))
    return sorted(counted.items())


class HogRules(DiceRules):
    """A position is how many dice are chosen (0 before the choice); the roll's score ends the game."""

    def __init__(self, dice: int) -> None:
        self.dice = dice
        self.agents = {"roll-one": lambda position, roll, moves: moves[0]}

    def starts(self) -> list[int]:
        return [CHOOSING]

    def key(self, position: int) -> str:
        return "choose" if position == CHOOSING else f"{position} dice"

    def label(self, position: int) -> str:
        return "choose how many dice" if position == CHOOSING else f"rolling {position} dice"

    def clock(self, position: int) -> int:
        return 0 if position == CHOOSING else 1

    def payoff(self, position: int) -> float | None:
        return None

    def rolls(self, position: int) -> list[tuple[int, int]] | None:
        return None if position == CHOOSING else scores(position)

    def moves(self, position: int, roll: int | None) -> list[Move]:
        if position == CHOOSING:
            return [Move(dice, f"roll {dice}") for dice in range(1, self.dice + 1)]
        return []

    def ending(self, position: int, roll: int) -> Ending:
        return Ending(f"scored {roll}", f"scored {roll}", float(roll), roll_label=f"{roll}")


def rules(params: dict) -> HogRules:
    """Return Hog's rules for the parameters."""
    return HogRules(params["dice"])
