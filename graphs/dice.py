"""Dice maths shared by the games: ordered rolls, sorted rolls with their weights."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator

FACES = 6


def ordered_rolls(dice: int, faces: int = FACES) -> Iterator[tuple[int, ...]]:
    """Yield every ordered roll of ``dice`` dice, each equally likely.

    >>> list(ordered_rolls(2))[:3]
    [(1, 1), (1, 2), (1, 3)]
    >>> sum(1 for _ in ordered_rolls(4))
    1296
    """
    return itertools.product(range(1, faces + 1), repeat=dice)


def multinomial_weight(roll: tuple[int, ...]) -> int:
    """Return how many ordered rolls sort to the multiset ``roll``.

    >>> multinomial_weight((1, 1, 5)), multinomial_weight((2, 3, 4))
    (3, 6)
    """
    weight = math.factorial(len(roll))
    for count in Counter(roll).values():
        weight //= math.factorial(count)
    return weight


def sorted_rolls(dice: int, faces: int = FACES) -> Iterator[tuple[tuple[int, ...], int]]:
    """Yield each sorted roll of ``dice`` dice with its weight over ``faces ** dice``.

    >>> rolls = list(sorted_rolls(5))
    >>> len(rolls), sum(weight for _, weight in rolls)
    (252, 7776)
    """
    for roll in itertools.combinations_with_replacement(range(1, faces + 1), dice):
        yield roll, multinomial_weight(roll)
