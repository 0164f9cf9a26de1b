"""Exact values from a game's rules, in fractions: the independent check of the expander and the SQL solve.

:func:`exact_value` works from the rules alone (:mod:`dicegraph.graphs.rules`), never
from rows. A game without loops is valued by recursion, one call per
position; a game whose positions repeat by exact linear solves: a policy's
values solve one sparse linear system (:func:`solve_sparse`), and the
optimum comes from policy iteration, certified when no move beats the one
taken. Both are for small parameters: every position is held in fractions.

>>> from dicegraph.graphs.rules import DiceRules, Ending, Move
>>> class Duel(DiceRules):
...     "Two players take turns rolling a die: a 6 wins; anything else hands the die over (or stop)."
...     def starts(self): return ["me"]
...     def key(self, position): return position
...     def label(self, position): return position
...     def payoff(self, position): return 1.0 if position == "won" else None
...     def rolls(self, position): return [("6", 1), ("other", 5)]
...     def moves(self, position, roll): return []
...     def ending(self, position, roll): return Ending("won", "won", 1.0) if roll == "6" else Move("me", "pass", passes=True)
>>> exact_value(Duel(), "max", loops=True)
Fraction(6, 11)
"""

from __future__ import annotations

import collections
import functools
import math
from collections.abc import Hashable, Iterable
from fractions import Fraction
from typing import NamedTuple

from dicegraph.graphs.rules import Ending, Move, Position, Roll, Rules

RHS = "rhs"  # the constant of a linear equation in :func:`solve_sparse`
MAX_POLICY_STEPS = 200


def solve_sparse(rows: dict[Hashable, dict[Hashable, Fraction]], order: Iterable[Hashable]) -> dict[Hashable, Fraction]:
    """Return unknown -> its exact value, for a system given a row per unknown: ``{unknown: coefficient, ...,
    RHS: constant}`` meaning ``sum(coefficient * unknown) = constant`` (``rows`` is changed in place).

    Gauss-Jordan elimination in the order given keeps rows short when each
    unknown depends on few others that come before it in that order (a
    game's deepest positions first).

    >>> from fractions import Fraction as F
    >>> solve_sparse({"x": {"x": F(1), "y": F(-1, 2), RHS: F(1)}, "y": {"y": F(1), "x": F(-1, 2), RHS: F(1)}}, ["x", "y"])
    {'x': Fraction(2, 1), 'y': Fraction(2, 1)}
    """
    users: dict[Hashable, set[Hashable]] = {}
    for unknown, row in rows.items():
        for column in row:
            users.setdefault(column, set()).add(unknown)
    for pivot in order:
        row = rows[pivot]
        lead = row[pivot]
        for column in row:
            row[column] /= lead
        for other in users.pop(pivot, set()) - {pivot}:
            changed = rows[other]
            factor = changed.pop(pivot)
            for column, x in row.items():
                if column != pivot:
                    changed[column] = changed.get(column, Fraction(0)) - factor * x
                    users.setdefault(column, set()).add(other)
    return {unknown: row[RHS] for unknown, row in rows.items()}


@functools.lru_cache(maxsize=4096)
def exactly(number: float) -> Fraction:
    """Return a payoff or a reward as the fraction it is exactly (the few distinct ones a game has, converted once).

    >>> exactly(0.375), exactly(-2.0)
    (Fraction(3, 8), Fraction(-2, 1))
    """
    return Fraction(number)


def exact_value(rules: Rules, objective: str, agent: str | None = None, position: Position | None = None,
                loops: bool = False) -> Fraction:
    """Return the exact value of ``position`` (default: the root) to the player to move there, by recursion over
    the rules (by policy iteration where the game declares ``loops``).

    Plays ``agent``'s moves where given (both seats, in a game for two), else the best move for
    ``objective`` (``max`` or ``min``).

    >>> from dicegraph.graphs.rules import DiceRules, Ending, Move
    >>> class Higher(DiceRules):
    ...     "Each of two players rolls a die once; the second wins with a higher face, the first otherwise."
    ...     def starts(self): return [0]
    ...     def key(self, first): return str(first)
    ...     def payoff(self, first): return None
    ...     def rolls(self, first): return [(face, 1) for face in range(1, 7)]
    ...     def moves(self, first, face): return [Move(face, "hand over", passes=True)] if first == 0 else []
    ...     def ending(self, first, face): return Ending(f"{first}-{face}", "over", float(face > first))
    >>> exact_value(Higher(), "max")  # the first wins 21 of the 36 rolls
    Fraction(7, 12)
    """
    if loops:
        return exact_values(rules, objective, agent)[rules.key(rules.starts()[0] if position is None else position)]
    numerator, denominator = _Recursion(rules, objective, agent).value(_start(rules, position))
    return Fraction(numerator, denominator)


def outcome_range(rules: Rules, position: Position | None = None) -> tuple[Fraction, Fraction]:
    """Return the lowest and the highest outcome that some play of a game for one without loops reaches from
    ``position`` (default: the root), points paid on moves included: every move open, every roll that can happen
    (one recursion over the rules, as :func:`exact_value`'s).

    >>> from dicegraph.graphs.rules import DiceRules, Move
    >>> class Once(DiceRules):
    ...     "Roll a die once and score it, or score 3."
    ...     def starts(self): return ["start"]
    ...     def key(self, position): return position
    ...     def label(self, position): return position
    ...     def payoff(self, position): return 0.0 if position == "end" else None
    ...     def rolls(self, position): return [(face, 1) for face in range(1, 7)]
    ...     def moves(self, position, roll): return [Move("end", "keep", float(roll)), Move("end", "three", 3.0)]
    >>> outcome_range(Once()), exact_value(Once(), "max")
    ((Fraction(1, 1), Fraction(6, 1)), Fraction(4, 1))
    >>> optimum_and_range(Once(), "max")
    (Fraction(4, 1), (Fraction(1, 1), Fraction(6, 1)))
    """
    return optimum_and_range(rules, "max", position)[1]


def optimum_and_range(rules: Rules, objective: str, position: Position | None = None
                      ) -> tuple[Fraction, tuple[Fraction, Fraction]]:
    """Return :func:`exact_value` (the best play for ``objective``) and :func:`outcome_range` of ``position``
    (default: the root) of a game without loops, from one recursion over the rules (:func:`outcome_range`'s
    example shows the three)."""
    walk = _Recursion(rules, objective, ranged=True)
    value, below, low, low_below, high, high_below = walk.value(_start(rules, position))
    return Fraction(value, below), (Fraction(low, low_below), Fraction(high, high_below))


def highest_reachable(rules: Rules, position: Position | None = None) -> Fraction:
    """Return the highest outcome some play reaches from ``position`` (:func:`outcome_range`'s second)."""
    return outcome_range(rules, position)[1]


def lowest_reachable(rules: Rules, position: Position | None = None) -> Fraction:
    """Return the lowest outcome some play reaches from ``position`` (:func:`outcome_range`'s first)."""
    return outcome_range(rules, position)[0]


def _start(rules: Rules, position: Position | None) -> Position:
    """Return ``position``, or the root where it is None."""
    return rules.starts()[0] if position is None else position


Ratio = tuple[int, int]  # a fraction as (numerator, denominator), in lowest terms, the denominator above 0


@functools.lru_cache(maxsize=4096)
def _ratio(number: float) -> Ratio:
    """Return a payoff, a reward or a constant sum as :data:`Ratio`: :func:`exactly`'s fraction, each converted once.

    >>> _ratio(0.375), _ratio(-2.0)
    ((3, 8), (-2, 1))
    """
    return exactly(number).as_integer_ratio()


class _Recursion:
    """The exact value of a game without loops by recursion over its rules, each position once, in integers.

    A position's value is ``(numerator, denominator)`` in lowest terms; where ``ranged``, the lowest and the
    highest outcome some play reaches from it follow, as two more such pairs (four more integers). A decision
    takes the best move for ``objective`` (or ``agent``'s), a roll the expectation of its outcomes; a move is
    worth its reward plus where it leads, or ``constant_sum`` less that when it hands the turn over. Fractions
    are kept as numerators and denominators (a roll's outcomes summed over a common denominator and reduced
    once, comparisons by cross-multiplying): a five-combination School asks for three million moves' worths,
    and ``Fraction``'s arithmetic, normalising each result, took twice as long.
    """

    def __init__(self, rules: Rules, objective: str, agent: str | None = None, ranged: bool = False):
        self.rules, self.sign, self.ranged = rules, 1 if objective == "max" else -1, ranged
        self.agent = None if agent is None else rules.agents[agent]
        self.constant_sum = _ratio(rules.constant_sum)
        self.memo: dict[str, tuple[int, ...]] = {}

    def value(self, at: Position) -> tuple[int, ...]:
        """Return the value of position ``at`` (and its range, where ``ranged``), worked out once."""
        key = self.rules.key(at)
        found = self.memo.get(key)
        if found is None:
            payoff = self.rules.payoff(at)
            if payoff is not None:
                found = self.leaf(payoff)
            else:
                rolls = self.rules.rolls(at)
                found = self.choose(at, None) if rolls is None else self.expected(at, rolls)
            self.memo[key] = found
        return found

    def leaf(self, payoff: float) -> tuple[int, ...]:
        """Return the value of an end that pays ``payoff`` (its range: that payoff alone)."""
        exact = _ratio(payoff)
        return exact * 3 if self.ranged else exact

    def expected(self, at: Position, rolls: Iterable[tuple[Roll, int]]) -> tuple[int, ...]:
        """Return the expectation over ``rolls`` at ``at`` (the range: over the rolls that can happen)."""
        outcomes = [(self.choose(at, roll), weight) for roll, weight in rolls]
        numerator, common, total = 0, 1, 0  # the sum so far over a common denominator; the weights' sum
        bounds: list[int] = []
        for found, weight in outcomes:
            top, bottom = found[0], found[1]
            if common % bottom:
                scale = bottom // math.gcd(common, bottom)
                numerator, common = numerator * scale, common * scale
            numerator += weight * top * (common // bottom)
            total += weight
            if self.ranged and weight > 0:
                bounds = _widened(bounds, found)
        common *= total
        reduced = math.gcd(numerator, common)
        return numerator // reduced, common // reduced, *bounds

    def choose(self, at: Position, roll: Roll | None) -> tuple[int, ...]:
        """Return the value after ``roll`` at ``at`` (None: a decision before rolling): the best move's (or the
        agent's), the one the roll leads to without a choice, or the ending's payoff."""
        moves = self.rules.moves(at, roll)
        if not moves:
            after = self.rules.ending(at, roll)
            return self.leaf(after.payoff) if isinstance(after, Ending) else self.worth(after)
        if self.agent is not None:
            return self.worth(self.agent(at, roll, moves))
        sign = self.sign
        top, bottom, bounds = 0, 0, []  # no move yet (a denominator of 0)
        for move in moves:
            found = self.worth(move)
            numerator, denominator = found[0], found[1]
            if not bottom or sign * (numerator * bottom - top * denominator) > 0:
                top, bottom = numerator, denominator
            if self.ranged:
                bounds = _widened(bounds, found)
        return top, bottom, *bounds

    def worth(self, move: Move) -> tuple[int, ...]:
        """Return what ``move`` is worth to the player making it (and the range it reaches, to that player)."""
        found = self.value(move.next)
        if not move.passes and not move.reward:
            return found
        if move.passes:  # constant_sum less the opponent's value: the opponent's highest is the lowest here
            flipped = (-found[0], found[1]) if len(found) == 2 else (-found[0], found[1], -found[4], found[5],
                                                                     -found[2], found[3])
            found = _plus(flipped, self.constant_sum)
        return _plus(found, _ratio(move.reward)) if move.reward else found


def _plus(found: tuple[int, ...], added: Ratio) -> tuple[int, ...]:
    """Return ``found``, fractions as numerator and denominator one after the other, with ``added`` added to each
    (a whole ``added`` needs no division).

    >>> _plus((1, 3, 1, 6), (2, 1)), _plus((1, 6), (1, 3))
    ((7, 3, 13, 6), (1, 2))
    """
    top, bottom = added
    sums = []
    for at in range(0, len(found), 2):
        numerator, denominator = found[at], found[at + 1]
        if bottom == 1:
            sums += (numerator + top * denominator, denominator)
            continue
        numerator, denominator = numerator * bottom + top * denominator, denominator * bottom
        common = math.gcd(numerator, denominator)
        sums += (numerator // common, denominator // common)
    return tuple(sums)


def _widened(bounds: list[int], found: tuple[int, ...]) -> list[int]:
    """Return the range ``bounds`` (lowest numerator and denominator, highest numerator and denominator; empty
    at first) widened to take in the range ``found`` carries after its value."""
    if not bounds:
        return list(found[2:])
    if found[2] * bounds[1] < bounds[0] * found[3]:
        bounds[0:2] = found[2:4]
    if found[4] * bounds[3] > bounds[2] * found[5]:
        bounds[2:4] = found[4:6]
    return bounds


class _Step(NamedTuple):
    """Where a move (or a roll without a choice) leads, as :func:`exact_values`' equations read it: the points it
    adds for the player making it (its reward, plus ``constant_sum`` when it hands the turn over; an ending's
    payoff), the key of the position it leads to (None: an ending, the game is over) and whether it hands the turn
    over (the value there, the opponent's, is then taken away)."""

    points: Fraction
    to: str | None
    passes: bool


def _step(rules: Rules, after: Move | Ending) -> _Step:
    """Return the :class:`_Step` of a move or of where a roll without a choice leads."""
    if isinstance(after, Ending):
        return _Step(exactly(after.payoff), None, False)
    points = exactly(after.reward) + exactly(rules.constant_sum) if after.passes else exactly(after.reward)
    return _Step(points, rules.key(after.next), after.passes)


def exact_values(rules: Rules, objective: str, agent: str | None = None, against: str | None = None
                 ) -> dict[str, Fraction]:
    """Return every position's exact value (key -> value) in a game whose positions may repeat, to the player to
    move there, under ``agent`` (both seats) or the best moves for ``objective``; with ``against`` (a game for
    two), the best response to the agent ``against``: the value to the player to move who plays best when the
    opponent plays ``against``.

    Each position (and, against an agent, each seat to move) is an unknown; a policy (a move for each roll that
    offers a choice) makes the values one linear system. Policy iteration improves the policy where a move is
    strictly better under its values, until none is.
    """
    # every position the rules reach, read once, breadth first: its payoff, or per roll its share and where each
    # of its moves leads (one step: the roll leads on without a choice); and the index of the move the agent plays
    table: dict[str, Fraction | list[tuple[Fraction, list[_Step]]]] = {}
    choices: dict[tuple[str, int, int], int] = {}  # (position, outcome, seat) -> the move the seat takes there
    seats = 1 if against is None else 2  # seat 1 plays ``against``, seat 0 best for ``objective``
    pending = collections.deque((rules.key(start), start) for start in rules.starts())
    order: list[str] = []
    while pending:
        key, at = pending.popleft()
        if key in table:
            continue
        order.append(key)
        payoff = rules.payoff(at)
        if payoff is not None:
            table[key] = exactly(payoff)
            continue
        rolls = rules.rolls(at)
        outcomes = [(None, 1)] if rolls is None else list(rolls)
        total = sum(weight for _, weight in outcomes)
        table[key] = []
        for number, (roll, weight) in enumerate(outcomes):
            moves = rules.moves(at, roll)
            taken = moves or [rules.ending(at, roll)]
            table[key].append((Fraction(weight, total), [_step(rules, after) for after in taken]))
            if moves:
                played = {0: agent, 1: against}
                for seat in range(seats):
                    name = played[seat]
                    choices[key, number, seat] = 0 if name is None else moves.index(rules.agents[name](at, roll, moves))
            pending += [(rules.key(after.next), after.next) for after in taken if isinstance(after, Move)]
    sign = 1 if objective == "max" else -1

    def solve(choice: dict[tuple[str, int, int], int]) -> dict[tuple[str, int], Fraction]:
        system: dict[Hashable, dict[Hashable, Fraction]] = {}
        for key, entry in table.items():
            for seat in range(seats):
                unknown = (key, seat)
                equation: dict[Hashable, Fraction] = {unknown: Fraction(1), RHS: Fraction(0)}
                if not isinstance(entry, list):
                    equation[RHS] = entry
                for number, (share, steps) in enumerate(entry if isinstance(entry, list) else ()):
                    points, to, passes = steps[choice.get((key, number, seat), 0)]
                    equation[RHS] += share * points
                    if to is not None:
                        target = (to, (seats - 1 - seat) if passes else seat)
                        equation[target] = equation.get(target, Fraction(0)) + (share if passes else -share)
                system[unknown] = equation
        return solve_sparse(system, [(key, seat) for key in reversed(order) for seat in range(seats)])

    for _ in range(MAX_POLICY_STEPS):
        values = solve(choices)
        better = dict(choices)
        for (key, number, seat), taken in choices.items():
            if (seat == 0 and agent is not None) or seat == 1:
                continue
            steps = table[key][number][1]  # type: ignore[index]
            other = seats - 1 - seat  # the seat moving after a move that hands the turn over
            worth = [sign * (points - values[to, other] if passes else points + values[to, seat])
                     for points, to, passes in steps]
            best = max(range(len(steps)), key=lambda index: (worth[index], index == taken))
            if worth[best] > worth[taken]:
                better[key, number, seat] = best
        if better == choices:
            return {key: found for (key, seat), found in values.items() if seat == 0}
        choices = better
    raise ArithmeticError(f"policy iteration did not settle in {MAX_POLICY_STEPS} steps")
