"""5000's scoring rules against the seed's exact distributions (groundwork for the turn graph)."""

from __future__ import annotations

import itertools

import pytest

from graphs.five_thousand import distribution, score

SEED = {  # the seed's X_1..X_3, counts over 6**n
    1: {0: 4, 50: 1, 100: 1},
    2: {0: 16, 50: 8, 100: 9, 150: 2, 200: 1},
    3: {0: 60, 50: 48, 100: 60, 150: 24, 200: 16, 250: 3, 300: 1, 400: 1, 500: 1, 600: 1, 1000: 1},
}


@pytest.mark.parametrize("dice", [1, 2, 3])
def test_the_seeds_distributions(dice: int) -> None:
    assert distribution(dice) == SEED[dice]


@pytest.mark.parametrize("dice", [1, 2, 3, 4, 5])
def test_distributions_count_every_ordered_roll(dice: int) -> None:
    counts = distribution(dice)
    assert sum(counts.values()) == 6**dice
    brute: dict[int, int] = {}
    for roll in itertools.product(range(1, 7), repeat=dice):
        brute[score(roll)] = brute.get(score(roll), 0) + 1
    assert counts == dict(sorted(brute.items()))


def test_the_rules_examples() -> None:
    assert score((1, 1, 1, 1)) == 1100 and score((2, 2, 2, 2)) == 200 and score((5, 5, 5, 5, 1)) == 650
