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

import functools
from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction
from typing import Any

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


@functools.lru_cache(maxsize=4096)
def chance_of(weight: int, total: int) -> Fraction:
    """Return a roll's probability, its weight out of the ``total`` of its node's (each pair made once).

    >>> chance_of(2, 36)
    Fraction(1, 18)
    """
    return Fraction(weight, total)


def move_worth(rules: Rules, move: Move, value: Fraction) -> Fraction:
    """Return what a move is worth to the player making it, ``value`` being the worth of where it leads (to
    whoever moves there): its reward, plus ``value``, or ``constant_sum - value`` when it hands the turn over."""
    after = exactly(rules.constant_sum) - value if move.passes else value
    return after + exactly(move.reward) if move.reward else after


def exact_value(rules: Rules, objective: str, agent: str | None = None, position: Position | None = None,
                loops: bool = False) -> Fraction:
    """Return the exact value of ``position`` (default: the root) to the player to move there, by recursion over
    the rules (by policy iteration where the game declares ``loops``).

    Plays ``agent``'s moves where given (both seats, in a game for two), else the best move for
    ``objective`` (``max`` or ``min``).
    """
    if loops:
        return exact_values(rules, objective, agent)[rules.key(rules.starts()[0] if position is None else position)]
    return _recursion(rules, greatest if objective == "max" else least, _expected, agent, position)


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
    return _recursion(rules, _span, _possible_span, None, position, leaf=lambda payoff: (payoff, payoff),
                      worth=_range_worth)


def optimum_and_range(rules: Rules, objective: str, position: Position | None = None
                      ) -> tuple[Fraction, tuple[Fraction, Fraction]]:
    """Return :func:`exact_value` (the best play for ``objective``) and :func:`outcome_range` of ``position``
    (default: the root) of a game without loops, from one recursion over the rules: each position's rolls and
    moves are asked for once, where the two apart ask twice (:func:`outcome_range`'s example shows the three).
    """
    pick = greatest if objective == "max" else least

    def best(found: Iterable[tuple[Fraction, tuple[Fraction, Fraction]]]) -> tuple[Fraction, tuple[Fraction, Fraction]]:
        values, ranges = zip(*found)
        return pick(values), _span(ranges)

    def over_rolls(outcomes: Iterable[tuple[tuple[Fraction, tuple[Fraction, Fraction]], int]]
                   ) -> tuple[Fraction, tuple[Fraction, Fraction]]:
        outcomes = list(outcomes)
        return (_expected((value, weight) for (value, _), weight in outcomes),
                _possible_span((reached, weight) for (_, reached), weight in outcomes))

    def worth(rules: Rules, move: Move, found: tuple[Fraction, tuple[Fraction, Fraction]]
              ) -> tuple[Fraction, tuple[Fraction, Fraction]]:
        return move_worth(rules, move, found[0]), _range_worth(rules, move, found[1])

    return _recursion(rules, best, over_rolls, None, position, leaf=lambda payoff: (payoff, (payoff, payoff)),
                      worth=worth)


def highest_reachable(rules: Rules, position: Position | None = None) -> Fraction:
    """Return the highest outcome some play reaches from ``position`` (:func:`outcome_range`'s second)."""
    return outcome_range(rules, position)[1]


def lowest_reachable(rules: Rules, position: Position | None = None) -> Fraction:
    """Return the lowest outcome some play reaches from ``position`` (:func:`outcome_range`'s first)."""
    return outcome_range(rules, position)[0]


def _span(ranges: Iterable[tuple[Fraction, Fraction]]) -> tuple[Fraction, Fraction]:
    """Return the lowest and the highest of ``(lowest, highest)`` ranges."""
    lows, highs = zip(*ranges)
    return least(lows), greatest(highs)


def greatest(fractions: Iterable[Fraction]) -> Fraction:
    """Return the greatest of ``fractions``, as ``max`` does (the first of equal ones), comparing their numerators
    and denominators as integers: a recursion compares millions, and ``Fraction``'s own comparison costs several
    times as much.

    >>> greatest([Fraction(1, 3), Fraction(2, 5), Fraction(4, 10)]), least([Fraction(1, 3), Fraction(2, 6)])
    (Fraction(2, 5), Fraction(1, 3))
    """
    return _extreme(fractions, 1)


def least(fractions: Iterable[Fraction]) -> Fraction:
    """Return the least of ``fractions``, as ``min`` does (:func:`greatest`'s way)."""
    return _extreme(fractions, -1)


def _extreme(fractions: Iterable[Fraction], sign: int) -> Fraction:
    """Return the first of ``fractions`` that none after it exceeds once multiplied by ``sign`` (1 or -1)."""
    found = iter(fractions)
    best = next(found)
    top, bottom = best.numerator, best.denominator
    for fraction in found:
        numerator, denominator = fraction.numerator, fraction.denominator
        if sign * (numerator * bottom - top * denominator) > 0:
            best, top, bottom = fraction, numerator, denominator
    return best


def _possible_span(outcomes: Iterable[tuple[tuple[Fraction, Fraction], int]]) -> tuple[Fraction, Fraction]:
    """Return :func:`_span` of the ranges among ``(range, weight)`` outcomes that can happen (a weight above 0)."""
    return _span(found for found, weight in outcomes if weight > 0)


def _range_worth(rules: Rules, move: Move, reached: tuple[Fraction, Fraction]) -> tuple[Fraction, Fraction]:
    """Return :func:`move_worth` of the lowest and the highest outcome where ``move`` leads (swapped when it hands
    the turn over)."""
    low, high = (move_worth(rules, move, end) for end in reached)
    return (high, low) if move.passes else (low, high)


def _expected(outcomes: Iterable[tuple[Fraction, int]]) -> Fraction:
    """Return the expectation of ``(value, weight)`` outcomes."""
    outcomes = list(outcomes)
    total = sum(weight for _, weight in outcomes)
    return sum((chance_of(weight, total) * value for value, weight in outcomes), Fraction(0))


def _recursion(rules: Rules, best: Callable[[Iterable[Any]], Any],
               over_rolls: Callable[[Iterable[tuple[Any, int]]], Any], agent: str | None,
               position: Position | None, leaf: Callable[[Fraction], Any] = lambda payoff: payoff,
               worth: Callable[[Rules, Move, Any], Any] = move_worth) -> Any:
    """Return the value of ``position`` (default: the root) by recursion over rules without loops, each position
    once: a decision takes ``best`` of its moves (or ``agent``'s move), a roll combines its outcomes by
    ``over_rolls``; an end is worth ``leaf`` of its payoff, a move ``worth`` of where it leads (by default a
    fraction, :func:`move_worth`)."""
    memo: dict[str, Any] = {}

    def value(at: Position) -> Any:
        key = rules.key(at)
        if key in memo:
            return memo[key]
        payoff = rules.payoff(at)
        if payoff is not None:
            result = leaf(exactly(payoff))
        else:
            rolls = rules.rolls(at)
            result = choose(at, None) if rolls is None else over_rolls((choose(at, roll), weight) for roll, weight in rolls)
        memo[key] = result
        return result

    def choose(at: Position, roll: Roll | None) -> Any:
        moves = rules.moves(at, roll)
        if not moves:
            after = rules.ending(at, roll)
            return leaf(exactly(after.payoff)) if isinstance(after, Ending) else worth(rules, after, value(after.next))
        if agent is not None:
            move = rules.agents[agent](at, roll, moves)
            return worth(rules, move, value(move.next))
        return best(worth(rules, move, value(move.next)) for move in moves)

    return value(rules.starts()[0] if position is None else position)


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
    # every position the rules reach, read once, breadth first: its payoff, or per roll its share, its moves
    # (none: the roll leads on without a choice, ``forced``) and the index of the move the agent plays
    table: dict[str, Fraction | list[tuple[Fraction, Sequence[Move], Ending | Move | None]]] = {}
    choices: dict[tuple[str, int, int], int] = {}  # (position, outcome, seat) -> the move the seat takes there
    seats = 1 if against is None else 2  # seat 1 plays ``against``, seat 0 best for ``objective``
    pending = [(rules.key(start), start) for start in rules.starts()]
    order: list[str] = []
    while pending:
        key, at = pending.pop(0)
        if key in table:
            continue
        order.append(key)
        payoff = rules.payoff(at)
        if payoff is not None:
            table[key] = Fraction(payoff)
            continue
        rolls = rules.rolls(at)
        outcomes = [(None, 1)] if rolls is None else list(rolls)
        total = sum(weight for _, weight in outcomes)
        table[key] = []
        for number, (roll, weight) in enumerate(outcomes):
            moves = rules.moves(at, roll)
            forced = None if moves else rules.ending(at, roll)
            table[key].append((Fraction(weight, total), moves, forced))
            if moves:
                played = {0: agent, 1: against}
                for seat in range(seats):
                    name = played[seat]
                    choices[key, number, seat] = 0 if name is None else moves.index(rules.agents[name](at, roll, moves))
            pending += [(rules.key(move.next), move.next) for move in (moves or [forced]) if isinstance(move, Move)]
    sign = 1 if objective == "max" else -1

    def solve(choice: dict[tuple[str, int, int], int]) -> dict[tuple[str, int], Fraction]:
        system: dict[Hashable, dict[Hashable, Fraction]] = {}
        for key, entry in table.items():
            for seat in range(seats):
                unknown = (key, seat)
                equation: dict[Hashable, Fraction] = {unknown: Fraction(1), RHS: Fraction(0)}
                if not isinstance(entry, list):
                    equation[RHS] = entry
                for number, (share, moves, forced) in enumerate(entry if isinstance(entry, list) else ()):
                    after = moves[choice[key, number, seat]] if moves else forced
                    if isinstance(after, Ending):
                        equation[RHS] += share * Fraction(after.payoff)
                        continue
                    equation[RHS] += share * (Fraction(after.reward) + (Fraction(rules.constant_sum) if after.passes else 0))
                    target = (rules.key(after.next), (seats - 1 - seat) if after.passes else seat)
                    equation[target] = equation.get(target, Fraction(0)) + (share if after.passes else -share)
                system[unknown] = equation
        return solve_sparse(system, [(key, seat) for key in reversed(order) for seat in range(seats)])

    for _ in range(MAX_POLICY_STEPS):
        values = solve(choices)
        better = dict(choices)
        for (key, number, seat), taken in choices.items():
            if (seat == 0 and agent is not None) or seat == 1:
                continue
            moves = table[key][number][1]  # type: ignore[index]
            to = (lambda move: (rules.key(move.next), (seats - 1 - seat) if move.passes else seat))
            worth = [sign * move_worth(rules, move, values[to(move)]) for move in moves]
            best = max(range(len(moves)), key=lambda index: (worth[index], index == taken))
            if worth[best] > worth[taken]:
                better[key, number, seat] = best
        if better == choices:
            return {key: found for (key, seat), found in values.items() if seat == 0}
        choices = better
    raise ArithmeticError(f"policy iteration did not settle in {MAX_POLICY_STEPS} steps")
