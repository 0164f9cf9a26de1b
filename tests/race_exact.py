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

from dicegraph.graphs.dice import sorted_rolls
from dicegraph.graphs.five_thousand.game import DICE, STEP, score, selections, threshold_move


@lru_cache(maxsize=None)
def _rolls(dice: int) -> tuple[tuple[Fraction, tuple[tuple[int, int], ...]], ...]:
    """Return each roll of ``dice`` dice: (probability, ((steps set aside, dice rolled next), ...)); bust: no options."""
    return tuple((Fraction(weight, 6**dice), tuple((score(kept) // STEP, (dice - len(kept)) or DICE)
                                                   for kept in selections(roll)))
                 for roll, weight in sorted_rolls(dice))


def _banked(a: int, b: int, total: int, steps: int, win: dict[tuple[int, int], Fraction]) -> Fraction:
    """Return what banking ``total`` steps is worth to the mover at ``(a, b)``: a win, or the opponent's loss after."""
    return Fraction(1) if a + total >= steps else 1 - win[b, a + total]


def _turn_table(a: int, b: int, steps: int, win: dict[tuple[int, int], Fraction],
                bust: Fraction) -> dict[tuple[int, int], tuple[Fraction, Fraction]]:
    """Return (dice, total) -> the best value of rolling there from ``(a, b)`` and its slope in ``bust`` (the value
    of busting); rolling on is taken only when it beats banking."""
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
                    choice = (_banked(a, b, total + gain, steps, win), Fraction(0))
                    if a + total + gain < steps and values[after, total + gain][0] > choice[0]:
                        choice = values[after, total + gain]
                    if best is None or choice[0] > best[0]:
                        best = choice
                value, slope = value + p * best[0], slope + p * best[1]
            values[dice, total] = (value, slope)
    return values


def _turn(a: int, b: int, steps: int, win: dict[tuple[int, int], Fraction],
          bust: Fraction) -> tuple[Fraction, Fraction]:
    """Return the best turn value of the mover at ``(a, b)`` and its slope in ``bust`` (the value of busting)."""
    return _turn_table(a, b, steps, win, bust)[DICE, 0]


@lru_cache(maxsize=None)
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


def _one_turn_points(highest: int) -> dict[tuple[int, int], Fraction]:
    """Return (dice, total in steps) -> the expected points (in steps) of the one-turn optimum rolling there,
    for totals up to ``highest`` steps and beyond the bank bound (where banking is best)."""
    top = highest + 60  # 5000's bank bound is 2793 points, under 60 steps
    worth: dict[tuple[int, int], Fraction] = {}
    for total in range(top, -1, -1):
        for dice in range(1, DICE + 1):
            expected = Fraction(0)
            for p, options in _rolls(dice):
                best = Fraction(0)
                for gain, after in options:
                    best = max(best, Fraction(total + gain), worth.get((after, total + gain), Fraction(0)))
                expected += p * best
            worth[dice, total] = expected
    return worth


def _turn_values(a: int, b: int, steps: int, win: dict[tuple[int, int], Fraction]) -> dict[tuple[int, int], Fraction]:
    """Return (dice, total) -> the optimum's value rolling there from ``(a, b)`` (both playing best)."""
    return {at: value for at, (value, _) in _turn_table(a, b, steps, win, 1 - win[b, a]).items()}


def strategy(name: str, steps: int, win: dict[tuple[int, int], Fraction]):
    """Return strategy ``name`` as ``choose(a, b, dice, total, options) -> (option index, rolls on)``: ``optimal``
    (the best move at the optimum's values, banking first on ties), ``threshold-T`` or ``turn-optimal``. A fixed
    strategy banks the first option that reaches the target when there is one."""
    if name == "optimal":
        tables: dict[tuple[int, int], dict] = {}

        def best(a, b, dice, total, options):
            if (a, b) not in tables:
                tables[a, b] = _turn_values(a, b, steps, win)
            values = tables[a, b]
            ranked = []
            for index, (gain, after) in enumerate(options):
                ranked.append((_banked(a, b, total + gain, steps, win), -2 * index, index, False))
                if a + total + gain < steps and (after, total + gain) in values:
                    ranked.append((values[after, total + gain], -2 * index - 1, index, True))
            _, _, index, rolls_on = max(ranked)
            return index, rolls_on
        return best
    points = _one_turn_points(steps) if name == "turn-optimal" else None

    def fixed(a, b, dice, total, options):
        for index, (gain, _) in enumerate(options):
            if a + total + gain >= steps:
                return index, False
        if points is None:  # keep every scoring die (the first option); roll on with at least T dice left
            gain, after = options[0]
            kept = dice if after == DICE else dice - after
            return 0, threshold_move(int(name.split("-")[1]), dice, kept) == "roll" and total + gain < steps
        ranked = []
        for index, (gain, after) in enumerate(options):
            ranked.append((Fraction(total + gain), -2 * index, index, False))
            if total + gain < steps:
                ranked.append((points[after, total + gain], -2 * index - 1, index, True))
        _, _, index, rolls_on = max(ranked)
        return index, rolls_on
    return fixed


def _fixed_turn(a: int, b: int, steps: int, choose, later: dict[tuple[int, int], Fraction]) -> tuple[Fraction, Fraction]:
    """Return the mover's turn from ``(a, b)`` playing ``choose``: (value when a bust is worth 0, P(bust)); a bank
    at ``t`` is worth ``1 - later[b, a + t]`` (the opponent's value there, of the other seat)."""
    values: dict[tuple[int, int], tuple[Fraction, Fraction]] = {}
    for total in range(steps - a - 1, -1, -1):
        for dice in range(1, DICE + 1):
            value, busts = Fraction(0), Fraction(0)
            for p, options in _rolls(dice):
                if not options:
                    busts += p
                    continue
                index, rolls_on = choose(a, b, dice, total, options)
                gain, after = options[index]
                if rolls_on:
                    v, q = values[after, total + gain]
                    value, busts = value + p * v, busts + p * q
                else:
                    value += p * (Fraction(1) if a + total + gain >= steps else 1 - later[b, a + total + gain])
            values[dice, total] = (value, busts)
    return values[DICE, 0]


def match(target: int, first: str, second: str) -> tuple[Fraction, Fraction]:
    """Return the exact probabilities that ``first``, moving first, beats ``second``, and the other way round."""
    steps = target // STEP
    optimum = solve(target)
    plays = [strategy(first, steps, optimum), strategy(second, steps, optimum)]
    seat: list[dict[tuple[int, int], Fraction]] = [{}, {}]  # seat i: the mover plays plays[i]
    for total in range(2 * steps - 2, -1, -1):
        pairs = [(a, total - a) for a in range(max(0, total - steps + 1), min(total, steps - 1) + 1)]
        turns = {(i, pair): _fixed_turn(*pair, steps, plays[i], seat[1 - i]) for i in (0, 1) for pair in pairs}
        for a, b in pairs:  # x = c + q (1 - y), y = c' + q' (1 - x): the mover at (a, b) and the other at (b, a)
            for i in (0, 1):
                c, q = turns[i, (a, b)]
                c2, q2 = turns[1 - i, (b, a)]
                seat[i][a, b] = (c + q * (1 - c2 - q2)) / (1 - q * q2)
    return seat[0][0, 0], seat[1][0, 0]


def best_response(target: int, agent: str) -> tuple[Fraction, Fraction]:
    """Return the exact probabilities that the best response to ``agent`` wins against it moving first and moving
    second. The answered seat's turn is affine in the value of its bust (:func:`_fixed_turn`); the best response's
    is the best of such pieces (:func:`_turn`), found for each pair by Newton's method on the pieces, which ends
    when the value reproduces itself exactly."""
    steps = target // STEP
    plays = strategy(agent, steps, solve(target) if agent == "optimal" else {})
    best: dict[tuple[int, int], Fraction] = {}  # the best response to move at (a, b)
    answered: dict[tuple[int, int], Fraction] = {}  # the agent to move at (a, b)
    for total in range(2 * steps - 2, -1, -1):
        pairs = [(a, total - a) for a in range(max(0, total - steps + 1), min(total, steps - 1) + 1)]
        fixed = {pair: _fixed_turn(*pair, steps, plays, best) for pair in pairs}
        for a, b in pairs:  # x at (a, b) and the agent's y = c + q (1 - x) at (b, a), after x's bust
            c, q = fixed[b, a]
            x = Fraction(1, 2)
            while True:
                bust = 1 - (c + q * (1 - x))
                value, slope = _turn(a, b, steps, answered, bust)
                if value == x:
                    break
                x = (value + slope * (1 - c - q - bust)) / (1 - slope * q)
            best[a, b] = x
        for a, b in pairs:
            c, q = fixed[a, b]
            answered[a, b] = c + q * (1 - best[b, a])
    return best[0, 0], 1 - answered[0, 0]


def _turn_ends(a: int, b: int, steps: int, choose) -> dict[int | None, Fraction]:
    """Return how the mover's turn from ``(a, b)`` playing ``choose`` ends: steps banked -> probability (a win
    banks ``steps - a`` or more, counted at ``steps - a``), None for a bust."""
    ends: dict[tuple[int, int], dict[int | None, Fraction]] = {}
    for total in range(steps - a - 1, -1, -1):
        for dice in range(1, DICE + 1):
            found: dict[int | None, Fraction] = {}
            for p, options in _rolls(dice):
                if not options:
                    found[None] = found.get(None, Fraction(0)) + p
                    continue
                index, rolls_on = choose(a, b, dice, total, options)
                gain, after = options[index]
                reached = ends[after, total + gain] if rolls_on else {min(total + gain, steps - a): Fraction(1)}
                for end, q in reached.items():
                    found[end] = found.get(end, Fraction(0)) + p * q
            ends[dice, total] = found
    return ends[DICE, 0]


def match_lengths(target: int, first: str, second: str, turns: int) -> dict[int, Fraction]:
    """Return n -> the exact probability that ``first``, moving first, and ``second`` end their race with a win
    after n turns (both players' turns counted), for n up to ``turns``: the share of races at each (score pair,
    seat to move) carried a turn at a time."""
    steps = target // STEP
    optimum = solve(target)
    plays = [strategy(first, steps, optimum), strategy(second, steps, optimum)]
    ends = {}
    playing = {(0, 0, 0): Fraction(1)}  # (mover's score, the other's, seat to move) -> probability
    lengths: dict[int, Fraction] = {}
    for n in range(1, turns + 1):
        following: dict[tuple[int, int, int], Fraction] = {}
        for (a, b, seat), p in playing.items():
            if (a, b, seat) not in ends:
                ends[a, b, seat] = _turn_ends(a, b, steps, plays[seat])
            for end, q in ends[a, b, seat].items():
                if end is not None and a + end >= steps:
                    lengths[n] = lengths.get(n, Fraction(0)) + p * q
                    continue
                after = (b, a, 1 - seat) if end is None else (b, a + end, 1 - seat)
                following[after] = following.get(after, Fraction(0)) + p * q
        playing = following
    return lengths
