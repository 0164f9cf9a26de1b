"""School in arrays, in memory: the benchmarks' references, written apart from the graph and the SQL.

:class:`NumpyTurns` is School's turn as arrays; :func:`reach_chances` solves, by that turn, the best chance of
scoring at least T points from every state with positive grades, the equations of ``school-at-least-T``
(:mod:`dicegraph.graphs.paired`), every state solved.
"""

from __future__ import annotations

import numpy as np

from dicegraph.graphs import school as rules


class NumpyTurns:
    """School's turn in arrays: the chance of each outcome after each keep (``roll``), the keeps each outcome allows
    (``keeps``, padded with a repeat), the first roll's chances (``first``), and the points of each combination for
    each outcome (``points``: [outcome, combination, 1 on the first roll else 0])."""

    def __init__(self, straights: tuple[int, int] = (15, 20), grades: str = "negative") -> None:
        keep_ids = {keep: i for i, keep in enumerate(rules.KEEPS)}
        self.roll = np.zeros((len(rules.KEEPS), len(rules.OUTCOMES)))  # P(outcome | keep)
        for keep, k in keep_ids.items():
            for dice, weight in rules.rerolls(keep):
                self.roll[k, rules.OUTCOME_INDEX[dice]] += weight / 6 ** (rules.DICE - len(keep))
        self.first = self.roll[keep_ids[()]]
        options = [[keep_ids[k] for k in rules.sub_multisets(dice) if len(k) < rules.DICE] for dice in rules.OUTCOMES]
        width = max(map(len, options))
        self.keeps = np.array([row + [row[-1]] * (width - len(row)) for row in options])
        self.points = rules.points_table(straights, grades)

    def layer(self, states: list[int], value: dict[int, float]) -> dict[str, np.ndarray]:
        """Return the turn of each of ``states`` played for the most points plus what follows (``value`` of the
        states after): each outcome's value and best combination when scoring on the first roll (``score1``,
        ``scores1``) or later (``score3``, ``scores3``), and the best keep and its value after the first and second
        roll (``keep1``, ``kept1``, ``keep2``, ``kept2``), the first of equals."""
        after = np.full((len(states), len(rules.COMBINATIONS)), -np.inf)
        for row, used in enumerate(states):
            for c in rules.open_combinations(used):
                after[row, c] = value[used | 1 << c]
        found: dict[str, np.ndarray] = {}
        for roll, name in ((0, "3"), (1, "1")):
            totals = self.points[None, :, :, roll] + after[:, None, :]
            found[f"scores{name}"], found[f"score{name}"] = totals.argmax(axis=2), totals.max(axis=2)
        outcomes = np.arange(len(rules.OUTCOMES))
        decide = found["score3"]
        for name in ("2", "1"):
            kept = self._kept(decide)
            found[f"keep{name}"], found[f"kept{name}"] = self.keeps[outcomes, kept.argmax(axis=2)], kept.max(axis=2)
            decide = np.maximum(found["score3"], found["kept2"])
        return found

    def best_keeps(self, decide: np.ndarray) -> np.ndarray:
        """Return, for each row of ``decide`` (the value of each outcome of the next roll), the value of each
        outcome when its best keep is rolled again: [row, outcome]."""
        return self._kept(decide).max(axis=2)

    def _kept(self, decide: np.ndarray) -> np.ndarray:
        """Return the value of rolling again each keep each outcome allows: [row of ``decide``, outcome, keep]."""
        return (decide @ self.roll.T)[:, self.keeps]


def states_by_layer() -> dict[int, list[int]]:
    """Return School's states by the number of combinations used."""
    by_layer: dict[int, list[int]] = {}
    for used in rules.states():
        by_layer.setdefault(bin(used).count("1"), []).append(used)
    return by_layer


def reach_chances(target: int, straights: tuple[int, int] = (15, 20), first_used: int = 0,
                  chunk: int = 2048) -> np.ndarray:
    """Return the best chance of scoring at least ``target`` points from every state of School with positive
    grades, ``[used combinations, points still needed (0 to target)]``: 1 where nothing is needed, 0 with every
    combination used and points still needed, else the turn's best (the combination, then the keeps, maximise
    the chance of the state it leads to, its points taken off what is needed). Only the states with
    ``first_used`` used (those out of play) are solved; the others are 0.

    >>> trash_alone = rules.ALL_USED ^ 1 << rules.COMBINATIONS.index("Trash")  # five dice's sum, twice on the 1st roll
    >>> [round(float(reach_chances(target, first_used=trash_alone)[trash_alone, target]), 12) for target in (5, 61)]
    [1.0, 0.0]
    """
    turns = NumpyTurns(straights, "positive")
    points = turns.points.astype(np.int64)
    chances = np.zeros((rules.ALL_USED + 1, target + 1))
    chances[:, 0] = 1.0
    lefts = np.arange(1, target + 1)
    combinations = len(rules.COMBINATIONS)
    by_layer = states_by_layer()
    for used_count in range(combinations - 1, bin(first_used).count("1") - 1, -1):
        masks = [used for used in by_layer[used_count] if used & first_used == first_used]
        states = np.array([(used, left) for used in masks for left in lefts], dtype=np.int64).reshape(-1, 2)
        open_ = np.zeros((rules.ALL_USED + 1, combinations), dtype=bool)
        for used in masks:
            open_[used, list(rules.open_combinations(used))] = True
        for start in range(0, len(states), chunk):
            used, left = states[start:start + chunk, 0], states[start:start + chunk, 1]
            best = [np.full((len(used), len(rules.OUTCOMES)), -np.inf) for _ in (0, 1)]  # later rolls, the first
            for c in range(combinations):
                scoring = open_[used, c]
                if not scoring.any():
                    continue
                for roll in (0, 1):
                    after = chances[(used | 1 << c)[:, None], np.maximum(left[:, None] - points[None, :, c, roll], 0)]
                    best[roll] = np.where(scoring[:, None], np.maximum(best[roll], after), best[roll])
            later, first = best
            decide2 = np.maximum(later, turns.best_keeps(later))
            decide1 = np.maximum(first, turns.best_keeps(decide2))
            chances[used, left] = decide1 @ turns.first
    return chances
