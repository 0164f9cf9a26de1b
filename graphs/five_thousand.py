"""5000 (seed 004): the scoring rules and the exact score distribution of a roll (rules: shared/RULES.md).

Groundwork for the turn graph (issue 6); not registered as a game yet.

A roll scores 100 per 1 and 50 per 5, plus a three-of-a-kind bonus for the
face shown three or more times: 1,1,1 totals 1000, 5,5,5 totals 500, another
face ``f`` totals ``100*f``; dice of that face beyond three score only if they
are 1s or 5s.

>>> score((1, 1, 1, 1)), score((2, 2, 2, 2)), score((1, 5, 2, 3, 4)), score((2, 3, 4, 6, 6))
(1100, 200, 150, 0)
>>> scoring_units((1, 1, 5, 2, 2))
((1,), (1,), (5,))
>>> scoring_units((3, 3, 3, 1, 5))
((3, 3, 3), (1,), (5,))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from graphs.dice import sorted_rolls

DICE = 5
SINGLE = {1: 100, 5: 50}
TRIPLE = {1: 1000, 5: 500}


def triple_value(face: int) -> int:
    """Return what three of ``face`` score together."""
    return TRIPLE.get(face, 100 * face)


def score(dice: Sequence[int]) -> int:
    """Return what the dice score, all of them counted (0: nothing scores)."""
    total = 0
    for face, count in Counter(dice).items():
        if count >= 3:
            total += triple_value(face) + (count - 3) * SINGLE.get(face, 0)
        else:
            total += count * SINGLE.get(face, 0)
    return total


def scoring_units(dice: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Return the units a player may set aside: the triple (as one unit), then each other 1 and 5."""
    units: list[tuple[int, ...]] = []
    counts = Counter(dice)
    for face in sorted(counts):
        if counts[face] >= 3:
            units.append((face,) * 3)
            counts[face] -= 3
    for face in sorted(SINGLE):
        units += [(face,)] * counts[face]
    return tuple(units)


def distribution(dice: int) -> dict[int, int]:
    """Return score -> number of the ``6**dice`` ordered rolls scoring it, everything counted (X_n).

    >>> distribution(1)
    {0: 4, 50: 1, 100: 1}
    """
    counts: Counter[int] = Counter()
    for roll, weight in sorted_rolls(dice):
        counts[score(roll)] += weight
    return dict(sorted(counts.items()))


def mean(dice: int) -> Fraction:
    """Return E[X_n], exact."""
    return Fraction(sum(s * n for s, n in distribution(dice).items()), 6**dice)
