"""Pig solved in exact rationals from its rules, independently of dicegraph's graph and SQL.

A position is (my score, the opponent's, turn total), seen from the player to
move; its value is the probability that this player wins. A *strategy* maps
positions to "roll" or "hold". For a pair of strategies the values solve a
linear system (sparse Gauss-Jordan elimination in fractions); the optimum comes from
policy iteration, certified at the end by the Bellman equations holding
exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from dicegraph.graphs.exact import RHS, solve_sparse

Position = tuple[int, int, int]
Strategy = Callable[[Position], str]


def positions(target: int) -> list[Position]:
    """Return every decision position: scores 0 and 2..target-1, turn totals 0 and 2.. with a + k < target."""
    scores = [0, *range(2, target)]
    return [(a, b, k) for a in scores for b in scores for k in [0, *range(2, target - a)]]


def _terms(position: Position, move: str, target: int) -> list[tuple[Fraction, Position | None, bool]]:
    """Return the move's outcomes as (probability, next position or None for a win, whether the turn passed)."""
    a, b, k = position
    if move == "hold":
        return [(Fraction(1), (b, a + k, 0), True)]
    outcomes: list[tuple[Fraction, Position | None, bool]] = [(Fraction(1, 6), (b, a, 0), True)]
    for face in range(2, 7):
        outcomes.append((Fraction(1, 6), None if a + k + face >= target else (a, b, k + face), False))
    return outcomes


def _value(term: tuple[Fraction, Position | None, bool], values: dict) -> Fraction:
    probability, after, passed = term
    if after is None:
        return probability
    return probability * (1 - values[after]) if passed else probability * values[after]


def evaluate(target: int, first: Strategy, second: Strategy) -> dict[tuple[int, Position], Fraction]:
    """Return (seat, position) -> exact probability that seat's player, to move, wins; seat 0 plays ``first``.

    The linear system is solved by sparse Gauss-Jordan elimination, highest
    score sum and turn total first, so a row never holds more than a few terms.
    """
    rows: dict[tuple[int, Position], dict] = {}
    for seat in (0, 1):
        for position in positions(target):
            row: dict = {(seat, position): Fraction(1), RHS: Fraction(0)}
            move = (first if seat == 0 else second)(position)
            for probability, after, passed in _terms(position, move, target):
                if after is None or passed:
                    row[RHS] += probability
                if after is not None:
                    other = (1 - seat, after) if passed else (seat, after)
                    row[other] = row.get(other, Fraction(0)) + (probability if passed else -probability)
            rows[seat, position] = row
    order = sorted(rows, key=lambda state: (-sum(state[1][:2]), -state[1][2], state))
    return solve_sparse(rows, order)  # type: ignore[return-value]


def optimum(target: int) -> tuple[dict[Position, Fraction], dict[Position, str]]:
    """Return the optimal values and moves (ties: roll) by policy iteration, checked against Bellman exactly."""
    moves = {p: "roll" for p in positions(target)}
    for _ in range(100):
        values = {p: v for (seat, p), v in evaluate(target, moves.__getitem__, moves.__getitem__).items() if seat == 0}
        better = {}
        for p in positions(target):
            worth = {move: sum(_value(t, values) for t in _terms(p, move, target)) for move in ("roll", "hold")}
            better[p] = "hold" if worth["hold"] > worth["roll"] else "roll"
        if better == moves:
            for p in positions(target):
                best = max(sum(_value(t, values) for t in _terms(p, move, target)) for move in ("roll", "hold"))
                assert best == values[p], "the Bellman equations do not hold"
            return values, moves
        moves = better
    raise AssertionError("policy iteration did not settle")
