"""An in-memory numpy solver of Yahtzee's optimum, written from RULES.md apart from the graph (tests and benchmarks).

It shares nothing with ``graphs/yahtzee`` but the printed points of a box
(:meth:`dicegraph.graphs.yahtzee.boxes.Sheet.points`, doctested there): the bonuses, the
joker, the upper total, the states and the turn are its own. States are
solved one number of filled boxes at a time, all of them at once with
arrays; a turn is the third roll's best box for each of the 252 outcomes,
then twice the best keep (every sub-multiset of the dice, or keeping all).
Values only, no decisions. :func:`reach_chances` solves, by the same turn, the
best chance of scoring at least a target without bonuses (the paired game
``yahtzee-at-least-T``'s equations: a state is the boxes filled and the points
still needed).
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
    return float(optimal_values(bonuses, chunk)[0, 0, 0])


def _points() -> np.ndarray:
    """Return each box's points for each of the 252 outcomes (``[outcome, box]``)."""
    return np.array([[Sheet().points(box, dice) for box in range(BOXES)] for dice in OUTCOMES], dtype=np.float64)


def optimal_values(bonuses: str = "on", chunk: int = 4096) -> np.ndarray:
    """Return the optimal expected score still to come from every state, ``[filled boxes, upper total (capped at
    63), Yahtzee box holds 50]``, with ``bonuses`` on, upper or off (the upper total and the flag 0 without)."""
    upper_bonus, yahtzee_bonus = bonuses != "off", bonuses == "on"
    keep_matrix, allowed = _keeps()
    first = _probabilities(())
    points = _points()
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
    return value


def reach_chances(target: int, first_filled: int = 0, chunk: int = 4096) -> np.ndarray:
    """Return the best chance of scoring at least ``target`` points from every state of Yahtzee without bonuses,
    ``[filled boxes, points still needed (0 to target)]``: 1 where nothing is needed, 0 with every box filled and
    points still needed, else the turn's best (the box, then the keeps, maximise the chance of the state it
    leads to, the points scored taken off what is needed). Only the states with the boxes ``first_filled``
    filled are solved (those out of play; the others are 0).

    >>> chance_alone = (1 << BOXES) - 1 - (1 << 12)  # every box filled but Chance: five dice score 5 to 30
    >>> [round(float(reach_chances(target, chance_alone)[chance_alone, target]), 12) for target in (5, 31)]
    [1.0, 0.0]
    """
    keep_matrix, allowed = _keeps()
    first = _probabilities(())
    points = _points().astype(np.int64)
    chances = np.zeros((1 << BOXES, target + 1))
    chances[:, 0] = 1.0
    lefts = np.arange(1, target + 1)
    for filled_count in range(BOXES - 1, bin(first_filled).count("1") - 1, -1):
        masks = np.array([mask for mask in range(1 << BOXES) if bin(mask).count("1") == filled_count
                          and mask & first_filled == first_filled], dtype=np.int64)
        states = np.array([(mask, left) for mask in masks for left in lefts], dtype=np.int64).reshape(-1, 2)
        for start in range(0, len(states), chunk):
            part = states[start:start + chunk]
            mask, left = part[:, 0], part[:, 1]
            best = np.full((len(part), len(OUTCOMES)), -np.inf)
            for box in range(BOXES):
                open_ = (mask >> box & 1) == 0
                if not open_.any():
                    continue
                after = chances[(mask | 1 << box)[:, None], np.maximum(left[:, None] - points[None, :, box], 0)]
                best = np.where(open_[:, None], np.maximum(best, after), best)
            roll2 = np.maximum(best, (best @ keep_matrix.T)[:, allowed].max(axis=2))
            roll1 = np.maximum(roll2, (roll2 @ keep_matrix.T)[:, allowed].max(axis=2))
            chances[mask, left] = roll1 @ first
    return chances


def optimum_distribution(value: np.ndarray) -> dict[float, float]:
    """Return the final score -> probability of the optimum of Yahtzee without bonuses (``value``:
    :func:`optimal_values` of ``"off"``), whole games played forward a number of filled boxes at a time: each
    state's chances over the total so far (a dense row), each turn's chances of ending in each (box, points), its
    choices made again from the values (ties to the first box or keep, and to scoring over rolling on)."""
    keep_matrix, allowed = _keeps()
    first = _probabilities(())
    points = _points()
    width = int(points.max(axis=0).sum()) + 1
    reach = {0: np.zeros(width)}
    reach[0][0] = 1.0
    keep_of = np.arange(len(OUTCOMES))
    for filled_count in range(BOXES):
        masks = np.array(sorted(mask for mask in reach if bin(mask).count("1") == filled_count))
        here = np.array([reach.pop(int(mask)) for mask in masks])
        open_ = (masks[:, None] >> np.arange(BOXES)[None, :] & 1) == 0  # [state, box]
        totals = np.where(open_[:, None, :], points[None, :, :] + value[masks[:, None] | 1 << np.arange(BOXES)[None, :],
                                                                          0, 0][:, None, :], -np.inf)
        box, best = totals.argmax(axis=2), totals.max(axis=2)  # [state, outcome]
        kept2 = (best @ keep_matrix.T)[:, allowed]
        keep2, kv2 = allowed[keep_of, kept2.argmax(axis=2)], kept2.max(axis=2)
        roll2 = np.maximum(best, kv2)
        kept1 = (roll2 @ keep_matrix.T)[:, allowed]
        keep1, kv1 = allowed[keep_of, kept1.argmax(axis=2)], kept1.max(axis=2)
        rows = np.broadcast_to(np.arange(len(masks))[:, None], best.shape)
        stop1 = best >= kv1
        scored = first * stop1  # the chance of scoring each outcome, summed over the rolls
        carried = np.zeros((len(masks), len(keep_matrix)))
        np.add.at(carried, (rows, keep1), first * ~stop1)
        second = carried @ keep_matrix
        stop2 = best >= kv2
        scored = scored + second * stop2
        carried = np.zeros((len(masks), len(keep_matrix)))
        np.add.at(carried, (rows, keep2), second * ~stop2)
        scored = scored + carried @ keep_matrix
        gained = points[keep_of[None, :], box].astype(int)
        spans = (BOXES, width, len(masks))
        summed = np.bincount(np.ravel_multi_index((box.ravel(), gained.ravel(), rows.ravel()), spans),
                             weights=scored.ravel(), minlength=int(np.prod(spans)))
        found = np.nonzero(summed > 0)[0]
        pairs, starts = np.unique(found // len(masks), return_index=True)  # each (box, points) in turn
        for pair, start, end in zip(pairs, starts, [*starts[1:], len(found)]):
            chosen, points_won = divmod(int(pair), width)
            at = found[start:end] % len(masks)
            block = summed[found[start:end], None] * here[at]
            for row, shifted in zip(masks[at] | 1 << chosen, block):
                after = reach.setdefault(int(row), np.zeros(width))
                after[points_won:] += shifted[:width - points_won]
    final = reach[(1 << BOXES) - 1]
    return {float(score): float(p) for score, p in enumerate(final) if p > 0}
