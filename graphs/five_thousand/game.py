"""5000 (seed 004), one turn: scoring, the turn graph, threshold agents (rules: shared/RULES.md).

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

import functools
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from dicegraph.graphs.dice import sorted_rolls
from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import Param, Row
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "5000"
title = "5000 (one turn)"
summary = "Roll five dice, set scoring dice aside, bank or roll on (hot dice: all five again)."
version = 1
objective = "max"
outcome = "expected turn score"
params = (
    Param("slack", 0, int, "room to explore beyond the bank bound, in steps of 50 (tests)",
          check=lambda value: 0 <= value <= 100, accepted="whole numbers 0..100"),
)
THRESHOLDS = tuple(range(1, 7))
STEP = 50  # every score is a multiple of 50

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


def bust_probability(dice: int) -> Fraction:
    """Return P(X_n = 0), exact."""
    return Fraction(distribution(dice).get(0, 0), 6**dice)


def bank_bound() -> Fraction:
    """Return t* = max over n of E[X_n] / P(X_n = 0): from a turn total of t* on, banking is optimal.

    Rolling n dice once more and then banking is worth ``(1 - P(X_n = 0)) t + E[X_n]``,
    no more than ``t`` once ``t >= E[X_n] / P(X_n = 0)``; the total never
    falls while rolling, and the most that playing on could add from there,
    ``M``, satisfies ``M <= p M`` with ``p = 1 - min P(X_n = 0) < 1``: ``M = 0``.
    """
    return max(mean(n) / bust_probability(n) for n in range(1, DICE + 1))


def selections(dice: Sequence[int]) -> list[tuple[int, ...]]:
    """Return every non-empty choice of scoring units to set aside (as sorted dice), all of them first.

    >>> selections((1, 1, 5, 2, 3))
    [(1, 1, 5), (1, 1), (1, 5), (1,), (5,)]
    """
    units = scoring_units(dice)
    chosen = set()
    for mask in range(1, 1 << len(units)):
        chosen.add(tuple(sorted(d for i, unit in enumerate(units) if mask >> i & 1 for d in unit)))
    return sorted(chosen, key=lambda kept: (-len(kept), -score(kept), kept))


@functools.lru_cache(maxsize=None)
def kept_options(roll: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Return each choice of scoring dice of ``roll`` (:func:`selections`, in its order) with the points it
    scores, worked out once a roll (a build asks for each roll thousands of times).

    >>> kept_options((1, 2, 5, 6, 6))
    (((1, 5), 150), ((1,), 100), ((5,), 50))
    """
    return tuple((kept, score(kept)) for kept in selections(roll))


def threshold_move(threshold: int, dice: int, kept: int) -> str:
    """Return what threshold agent T does after keeping every scoring die: ``'roll'`` or ``'bank'``.

    Hot dice (all ``dice`` kept) are taken when ``T <= 5``; otherwise the
    ``dice - kept`` non-scoring dice are rolled if there are at least ``T``.
    """
    left = dice - kept
    if left == 0:
        return "roll" if threshold <= DICE else "bank"
    return "roll" if left >= threshold else "bank"


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the threshold agents ``threshold-1`` .. ``threshold-6``."""
    return tuple(f"threshold-{t}" for t in THRESHOLDS)


def roll_text(dice: Sequence[int]) -> str:
    """Return sorted dice as text, e.g. ``'1-1-5'``."""
    return "-".join(map(str, sorted(dice)))


def tails(threshold: int) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """Return (A, B): agent ``threshold``'s expected final total from ``n`` dice to roll and total ``t`` is ``A[n] t + B[n]``.

    Its moves never depend on the total, so its expectation is affine in it;
    A and B solve two 5x5 linear systems (exact fractions).
    """
    a_rows, b_terms = {}, {}
    for n in range(1, DICE + 1):
        to_next: Counter[int] = Counter()
        banked_p, banked_points, rolled_points = Fraction(0), Fraction(0), Counter()
        for roll, weight in sorted_rolls(n):
            points = score(roll)
            if not points:
                continue
            p = Fraction(weight, 6**n)
            kept = len(selections(roll)[0])
            if threshold_move(threshold, n, kept) == "bank":
                banked_p += p
                banked_points += p * points
            else:
                after = (n - kept) or DICE
                to_next[after] += p
                rolled_points[after] += p * points
        a_rows[n] = (banked_p, to_next)
        b_terms[n] = (banked_points, rolled_points)
    a = _solve({n: (c, m) for n, (c, m) in a_rows.items()})
    b = _solve({n: (banked + sum(a[m] * pts for m, pts in rolled.items()), a_rows[n][1])
                for n, (banked, rolled) in b_terms.items()})
    return a, b


def _solve(system: Mapping[int, tuple[Fraction, Mapping[int, Fraction]]]) -> dict[int, Fraction]:
    """Solve x[n] = c[n] + sum(m[n][k] x[k]) exactly by Gaussian elimination."""
    keys = sorted(system)
    rows = [[(1 if i == j else 0) - system[i][1].get(j, 0) for j in keys] + [system[i][0]] for i in keys]
    size = len(keys)
    for col in range(size):
        pivot = next(r for r in range(col, size) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col])]
    return {key: rows[i][size] / rows[i][i] for i, key in enumerate(keys)}


class FiveThousandRules(DiceRules):
    """One turn of 5000 at the rules level; the clock is the turn total in steps of 50.

    Positions: ``("roll", n, t)`` (``n`` dice to roll, total ``t``, key
    ``nd/t``), ``("bank", t)`` and, past the bank bound where only banking is
    offered, ``("tail", agent, n, t)``: a threshold agent that rolls on there
    ends at a terminal paying its exact expectation from that point (:func:`tails`).
    """

    def __init__(self, params: Mapping[str, Any]):
        self.limit = bank_bound() + STEP * params["slack"]
        self.affine = {t: tails(t) for t in THRESHOLDS}
        self.agents = {f"threshold-{t}": self._threshold(t) for t in THRESHOLDS}

    def _threshold(self, threshold: int) -> Callable[[tuple[Any, ...], tuple[int, ...], Sequence[Move]], Move]:
        agent = f"threshold-{threshold}"

        def pick(position: tuple[Any, ...], roll: tuple[int, ...], moves: Sequence[Move]) -> Move:
            _, dice, total = position
            kept, points = kept_options(roll)[0]
            after_total, after_dice = total + points, (dice - len(kept)) or DICE
            if threshold_move(threshold, dice, len(kept)) == "bank":
                action = f"bank {after_total}"
            else:
                action = f"roll {after_dice}" + ("" if after_total < self.limit else f" ({agent})")
            label = f"keep {roll_text(kept)}, {action}"
            return next(move for move in moves if move.label == label)

        return pick

    def starts(self) -> list[tuple[Any, ...]]:
        """Return the turn's start: five dice to roll, total 0."""
        return [("roll", DICE, 0)]

    def key(self, position: tuple[Any, ...]) -> str:
        """Return ``'5d/0'``, ``'bank/350'`` or ``'tail/threshold-2/3d/2050'``."""
        if position[0] == "roll":
            return f"{position[1]}d/{position[2]}"
        if position[0] == "bank":
            return f"bank/{position[1]}"
        return f"tail/{position[1]}/{position[2]}d/{position[3]}"

    def label(self, position: tuple[Any, ...]) -> str:
        """Return ``'total 0, rolling 5'``, ``'bank 350'`` or what the agent rolling on expects."""
        if position[0] == "roll":
            return f"total {position[2]}, rolling {position[1]}"
        if position[0] == "bank":
            return f"bank {position[1]}"
        return f"{position[1]} rolls on from {position[3]}: expects {float(self._tail(position)):.4f}"

    def _tail(self, position: tuple[Any, ...]) -> Fraction:
        _, agent, dice, total = position
        a, b = self.affine[int(agent.split("-")[1])]
        return a[dice] * total + b[dice]

    def clock(self, position: tuple[Any, ...]) -> int:
        """Return the total in steps of 50."""
        return position[-1] // STEP

    def payoff(self, position: tuple[Any, ...]) -> float | None:
        """Return the banked total, or the agent's expectation at a tail; None while rolling."""
        if position[0] == "bank":
            return float(position[1])
        return float(self._tail(position)) if position[0] == "tail" else None

    def rolls(self, position: tuple[Any, ...]) -> tuple[tuple[tuple[int, ...], int], ...]:
        """Return the sorted rolls of the dice with their multinomial weights."""
        return sorted_rolls(position[1])

    def moves(self, position: tuple[Any, ...], roll: tuple[int, ...]) -> list[Move]:
        """Return, for each choice of scoring dice, bank or roll on (past the bound only bank, and the agents' tails)."""
        _, dice, total = position
        found: list[Move] = []
        choices = kept_options(roll)
        for kept, points in choices:
            after_total, after_dice = total + points, (dice - len(kept)) or DICE
            keep = f"keep {roll_text(kept)}"
            found.append(Move(("bank", after_total), f"{keep}, bank {after_total}"))
            if after_total < self.limit:
                found.append(Move(("roll", after_dice, after_total), f"{keep}, roll {after_dice}"))
            elif kept == choices[0][0]:
                found += [Move(("tail", f"threshold-{t}", after_dice, after_total), f"{keep}, roll {after_dice} (threshold-{t})")
                          for t in THRESHOLDS if threshold_move(t, dice, len(kept)) == "roll"]
        return found

    def ending(self, position: tuple[Any, ...], roll: tuple[int, ...]) -> Ending:
        """Return the bust: nothing scores, the turn is worth 0."""
        return Ending(f"{self.key(position)}/bust", f"bust at {position[2]}", 0.0, roll_label="roll nothing that scores")

    def decision_label(self, position: tuple[Any, ...], roll: tuple[int, ...]) -> str:
        """Return ``'total 350, rolled 1-1-5'``."""
        return f"total {position[2]}, rolled {roll_text(roll)}"


def rules(params: Mapping[str, Any]) -> FiveThousandRules:
    """Return the turn's rules for ``params`` (slack)."""
    return FiveThousandRules(params)


def build(params: Mapping[str, Any]) -> Iterator[Row]:
    """Yield the turn graph, expanded from :func:`rules`: states (dice to roll, total) below the bank bound.

    From the bound on (``bank_bound``) only banking is offered, except to a
    threshold agent that rolls on there: its move leads to a terminal paying
    its exact expectation from that point (``tails``).
    """
    from dicegraph.graphs.expand import expand  # the expander (numpy) when a graph is made, not when listed

    return expand(rules(params))


def parse_move(label: str) -> tuple[tuple[int, ...], bool]:
    """Return (dice kept, rolls on) from a move label such as ``'keep 1-5, roll 3'``."""
    keep, action = label.split(", ", 1)
    return tuple(int(d) for d in keep.removeprefix("keep ").split("-")), action.startswith("roll")


def roller() -> tuple[list[tuple[int, tuple[int, ...]]], Callable[[Any, Any], Any]]:
    """Return every outcome ``(dice, sorted roll)`` of rolling 1 to 5 dice, and a function rolling dice with a numpy
    generator: ``roll(rng, dice)`` rolls ``dice[i]`` dice for each i and returns the outcomes' indices.

    >>> import numpy as np
    >>> outcomes, roll = roller()
    >>> [outcomes[i][0] for i in roll(np.random.default_rng(1), np.array([5, 1, 3]))]
    [5, 1, 3]
    """
    import numpy as np

    outcomes = [(n, roll) for n in range(1, DICE + 1) for roll, _ in sorted_rolls(n)]
    powers = 8 ** np.arange(DICE)
    lookup = np.full(6 * 8**DICE, -1, dtype=np.int32)
    for index, (n, roll) in enumerate(outcomes):
        lookup[sum(d * 8**i for i, d in enumerate(tuple(roll) + (7,) * (DICE - n))) + n * 8**DICE] = index

    def roll_dice(rng: Any, dice: Any) -> Any:
        raw = rng.integers(1, 7, size=(len(dice), DICE))
        raw = np.where(np.arange(DICE) < dice[:, None], raw, 7)  # 7: no die
        raw.sort(axis=1)
        return lookup[(raw * powers).sum(axis=1) + dice * 8**DICE]

    return outcomes, roll_dice


def simulator(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` random turns with a numpy generator; their scores.

    A threshold agent is played from the rules; a stored policy by looking up
    its move for (dice, total, roll) by key (past the bank bound it banks, as
    its graph offers nothing else).
    """
    import numpy as np

    outcomes, roll_dice = roller()
    rows = 1 if isinstance(policy, str) else int(bank_bound()) // STEP + params["slack"] + 1
    gain = np.zeros((rows, len(outcomes)), dtype=np.int64)  # 0: bust
    then = np.zeros((rows, len(outcomes)), dtype=np.int64)  # dice rolled next, 0: bank
    for index, (n, roll) in enumerate(outcomes):
        if not score(roll):
            continue
        for row in range(rows):
            if isinstance(policy, str):
                kept = selections(roll)[0]
                rolls_on = threshold_move(int(policy.split("-")[1]), n, len(kept)) == "roll"
            else:
                label = policy.get(f"{n}d/{row * STEP}/{roll_text(roll)}")
                if label is None:
                    continue  # a state the policy never reaches
                kept, rolls_on = parse_move(label)
                if kept not in selections(roll):
                    raise DicegraphError(f"the stored policy keeps {kept} from {roll_text(roll)}, which the rules forbid")
            gain[row, index] = score(kept)
            then[row, index] = ((n - len(kept)) or DICE) if rolls_on else 0

    def play(games: int, rng: Any) -> Any:
        dice = np.full(games, DICE)
        total = np.zeros(games, dtype=np.int64)
        final = np.full(games, -1.0)
        active = np.arange(games)
        while active.size:
            outcome = roll_dice(rng, dice[active])
            row = 0 if rows == 1 else total[active] // STEP
            points, next_dice = gain[row, outcome], then[row, outcome]
            ended = (points == 0) | (next_dice == 0)
            final[active[ended]] = np.where(points[ended] == 0, 0, total[active[ended]] + points[ended])
            going = active[~ended]
            total[going] += points[~ended]
            dice[going] = next_dice[~ended]
            active = going
        return final

    return play
