"""5000 as a race solved in exact rationals from its rules, independently of dicegraph's graph, SQL and numpy.

Scores in steps of 50. The value of ``(a, b)`` is the probability that the
player to move wins with ``a`` against ``b``. Diagonals of equal ``a + b``
are solved from the highest down; on one, each pair's turn is, for fixed
moves, affine in the opponent's value after a bust, and policy iteration
(Newton's method on those affine pieces) ends when the values reproduce
themselves exactly.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from graphs.dice import sorted_rolls
from graphs.five_thousand.game import DICE, STEP, score, selections


@lru_cache(maxsize=None)
def _rolls(dice: int) -> tuple[tuple[Fraction, tuple[tuple[int, int], ...]], ...]:
    """Return each roll of ``dice`` dice: (probability, ((steps set aside, dice rolled next), ...)); bust: no options."""
    return tuple((Fraction(weight, 6**dice), tuple((score(kept) // STEP, (dice - len(kept)) or DICE)
                                                   for kept in selections(roll)))
                 for roll, weight in sorted_rolls(dice))


def _turn(a: int, b: int, steps: int, win: dict[tuple[int, int], Fraction],
          bust: Fraction) -> tuple[Fraction, Fraction]:
    """Return the best turn value of the mover at ``(a, b)`` and its slope in ``bust`` (the value of busting)."""
    values: dict[tuple[int, int], tuple[Fraction, Fraction]] = {}
    for total in range(steps - a - 1, -1, -1):
        for dice in range(1, DICE + 1):
            value, slope = Fraction(0), Fraction(0)
            for p, options in _rolls(dice):
                if not options:
                    value, slope = value + p * bust, slope + p
                    continue
                best = None
                for gain, after in options:
                    reached = a + total + gain
                    banked = Fraction(1) if reached >= steps else 1 - win[b, reached]
                    choice = (banked, Fraction(0))
                    if reached < steps and values[after, total + gain][0] > banked:
                        choice = values[after, total + gain]
                    if best is None or choice[0] > best[0]:
                        best = choice
                value, slope = value + p * best[0], slope + p * best[1]
            values[dice, total] = (value, slope)
    return values[DICE, 0]


def solve(target: int) -> dict[tuple[int, int], Fraction]:
    """Return (a, b) in steps -> the exact probability that the player to move wins, both playing best."""
    steps = target // STEP
    win: dict[tuple[int, int], Fraction] = {}
    for total in range(2 * steps - 2, -1, -1):
        pairs = [(a, total - a) for a in range(max(0, total - steps + 1), min(total, steps - 1) + 1)]
        guess = {pair: Fraction(1, 2) for pair in pairs}
        while True:
            turns = {(a, b): _turn(a, b, steps, win, 1 - guess[b, a]) for a, b in pairs}
            if all(turns[pair][0] == guess[pair] for pair in pairs):
                break
            # value = c - d * x_ba with c = value + d * x_ba; solve the pairs' 2x2 systems exactly
            c = {pair: value + slope * guess[pair[::-1]] for pair, (value, slope) in turns.items()}
            guess = {(a, b): (c[a, b] - turns[a, b][1] * c[b, a]) / (1 - turns[a, b][1] * turns[b, a][1])
                     for a, b in pairs}
        win.update(guess)
    return win
