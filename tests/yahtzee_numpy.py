"""An in-memory numpy solver of Yahtzee's optimum, written from RULES.md apart from the graph (tests and benchmarks).

It shares nothing with ``graphs/yahtzee`` but the printed points of a box
(:meth:`dicegraph.graphs.yahtzee.boxes.Sheet.points`, doctested there): the bonuses, the
joker, the upper total, the states and the turn are its own. States are
solved one number of filled boxes at a time, all of them at once with
arrays; a turn is the third roll's best box for each of the 252 outcomes,
then twice the best keep (every sub-multiset of the dice, or keeping all).
Values only, no decisions.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from dicegraph.graphs.yahtzee.boxes import Sheet

FACES, DICE, BOXES, UPPER, YAHTZEE = 6, 5, 13, 6, 11
FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT = 8, 9, 10
OUTCOMES = sorted(set(tuple(sorted(roll)) for roll in itertools.product(range(1, 7), repeat=DICE)))


def _probabilities(kept: tuple[int, ...]) -> np.ndarray:
    """Return P(outcome) over the 252 outcomes when ``kept`` is kept and the other dice are rolled."""
    counts = Counter(tuple(sorted(kept + roll)) for roll in itertools.product(range(1, 7), repeat=DICE - len(kept)))
    index = {dice: i for i, dice in enumerate(OUTCOMES)}
    row = np.zeros(len(OUTCOMES))
    for dice, count in counts.items():
        row[index[dice]] = count / FACES ** (DICE - len(kept))
    return row


def _keeps() -> tuple[np.ndarray, np.ndarray]:
    """Return the keep matrix P[keep, outcome] and, per outcome, the keeps it allows (padded with repeats)."""
    keeps = sorted({tuple(sorted(sub)) for dice in OUTCOMES for size in range(DICE)
                    for sub in itertools.combinations(dice, size)})
    matrix = np.array([_probabilities(keep) for keep in keeps])
    index = {keep: k for k, keep in enumerate(keeps)}
    allowed = [sorted({index[tuple(sorted(sub))] for size in range(DICE) for sub in itertools.combinations(dice, size)})
               for dice in OUTCOMES]
    width = max(map(len, allowed))
    return matrix, np.array([row + [row[-1]] * (width - len(row)) for row in allowed])


def optimal_score(bonuses: str = "on", chunk: int = 4096) -> float:
    """Return the optimal expected final score of Yahtzee with ``bonuses`` on, upper or off."""
    upper_bonus, yahtzee_bonus = bonuses != "off", bonuses == "on"
    keep_matrix, allowed = _keeps()
    first = _probabilities(())
    points = np.array([[Sheet().points(box, dice) for box in range(BOXES)] for dice in OUTCOMES], dtype=np.float64)
    is_yahtzee = np.array([len(set(dice)) == 1 for dice in OUTCOMES])
    face = np.array([dice[0] for dice in OUTCOMES])
    joker = points.copy()
    joker[is_yahtzee, FULL_HOUSE], joker[is_yahtzee, SMALL_STRAIGHT], joker[is_yahtzee, LARGE_STRAIGHT] = 25, 30, 40
    uppers = range(64) if upper_bonus else range(1)
    flags = (0, 1) if yahtzee_bonus else (0,)
    value = np.zeros((1 << BOXES, 64, 2))  # filled, upper total (capped), Yahtzee box holds 50
    masks_by_filled: dict[int, list[int]] = {}
    for mask in range(1 << BOXES):
        masks_by_filled.setdefault(bin(mask).count("1"), []).append(mask)
    for filled_count in range(BOXES - 1, -1, -1):
        states = np.array([(mask, upper, flag) for mask in masks_by_filled[filled_count] for upper in uppers
                           for flag in flags if not (flag and not mask >> YAHTZEE & 1)])
        for start in range(0, len(states), chunk):
            part = states[start:start + chunk]
            mask, upper, flag = part[:, 0], part[:, 1], part[:, 2]
            best = np.full((len(part), len(OUTCOMES)), -np.inf)
            for box in range(BOXES):
                open_ = (mask >> box & 1) == 0
                if not open_.any():
                    continue
                gained = np.broadcast_to(points[:, box], best.shape).copy()
                new_upper = np.broadcast_to(upper[:, None], best.shape).copy()
                new_flag = np.broadcast_to(flag[:, None], best.shape).copy()
                if yahtzee_bonus:
                    # the joker: the Yahtzee box and the upper box of the Yahtzee's face filled
                    joker_ok = ((mask >> YAHTZEE & 1)[:, None] == 1) & ((mask[:, None] >> (face[None, :] - 1) & 1) == 1)
                    gained = np.where(is_yahtzee[None, :] & joker_ok, joker[:, box][None, :], gained)
                    gained += np.where(is_yahtzee[None, :] & (flag[:, None] == 1), 100, 0)
                    if box == YAHTZEE:
                        new_flag = np.broadcast_to(is_yahtzee[None, :].astype(np.int64), best.shape)
                if upper_bonus and box < UPPER:
                    total = upper[:, None] + points[None, :, box]
                    gained += np.where((upper[:, None] < 63) & (total >= 63), 35, 0)
                    new_upper = np.minimum(total, 63).astype(np.int64)
                after = value[(mask | 1 << box)[:, None], new_upper, new_flag]
                best = np.where(open_[:, None], np.maximum(best, gained + after), best)
            roll2 = np.maximum(best, (best @ keep_matrix.T)[:, allowed].max(axis=2))
            roll1 = np.maximum(roll2, (roll2 @ keep_matrix.T)[:, allowed].max(axis=2))
            value[mask, upper, flag] = roll1 @ first
    return float(value[0, 0, 0])
