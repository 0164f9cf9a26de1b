"""Dice maths shared by the games: ordered rolls, sorted rolls with their weights."""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator

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


@functools.lru_cache(maxsize=None)
def sorted_rolls(dice: int, faces: int = FACES) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Return each sorted roll of ``dice`` dice with its weight over ``faces ** dice`` (made once, then kept).

    >>> rolls = sorted_rolls(5)
    >>> len(rolls), sum(weight for _, weight in rolls)
    (252, 7776)
    """
    return tuple((roll, multinomial_weight(roll))
                 for roll in itertools.combinations_with_replacement(range(1, faces + 1), dice))


def roll_summary(labels: Iterable[str], per_line: int = 6) -> str:
    """Return roll labels in short: a shared leading word dropped, orders of the same dice merged.

    Labels like ``'roll 1-3'`` and ``'roll 3-1'`` (the same dice in two orders)
    become one entry with its count; other labels are kept as they are.
    Entries are separated by spaces, ``per_line`` to a line.

    >>> roll_summary(["roll 1-3", "roll 3-1", "roll 2-2", "roll 1-4", "roll 4-1"])
    '1-3 x2  2-2  1-4 x2'
    """
    counts: Counter[str] = Counter()
    for label in labels:
        text = label.split(" ", 1)[1] if " " in label else label
        faces = text.split("-")
        counts["-".join(sorted(faces)) if all(face.isdigit() for face in faces) else text] += 1
    entries = [f"{text} x{count}" if count > 1 else text for text, count in counts.items()]
    return "\n".join("  ".join(entries[i:i + per_line]) for i in range(0, len(entries), per_line))
