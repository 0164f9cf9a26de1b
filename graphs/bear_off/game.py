"""Backgammon's bear-off: one player bears off N checkers from the last P points, in as few rolls as possible.

A position is how many checkers stand on each point, the 1-point first (``(2, 0, 1)``: two on the
1-point, one on the 3-point). Each roll of two dice is played by the rules of backgammon with every
checker home: a die moves a checker that many points down, or bears it off from the point of its
number; from a lower point only when no checker stands higher. Both dice are played (doubles four
times) unless the last checker is off first; with every checker home a die can always be played, so the
rule of using both dice, or the higher one, never bites. A roll's plays that leave the same position are
one move, labelled by the first of them in gnubg's notation (``6/off 4/1``). Every move costs one roll:
the game minimises the expected rolls, and the outcome distribution is P(off in n rolls).

GNU Backgammon's one-sided bear-off database (``gnubg_os0.bd``) holds every position of up to 15
checkers on 6 points: 54,264. The game starts with N checkers on the P-point, and every position of up
to N checkers is a start of its own too, so the graph holds the whole database
(:mod:`dicegraph.graphs.bear_off.gnubg` reads it; ``tests/test_bear_off.py`` compares them).

>>> plays((0, 0, 1), (1, 2))
{(0, 0, 0): '3/1 1/off'}
>>> sorted(plays((0, 0, 0, 0, 0, 2), (6, 6)))
[(0, 0, 0, 0, 0, 0)]
>>> len(positions(6, 15))
54264
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dicegraph.graphs.bear_off.picture import side_rows
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import Param
from dicegraph.graphs.rules import DiceRules, Move

name = "bear-off"
title = "Bear-off"
summary = "Backgammon's bear-off for one player: N checkers off the last P points in the fewest rolls."
version = 1
objective = "min"
outcome = "expected rolls to bear off"

MAX_POINTS = 6  # the home board: a die of 6 bears off from the 6-point
MAX_CHECKERS = 15  # a backgammon player's checkers, as in gnubg's database

params = (
    Param("points", MAX_POINTS, int, "the points the checkers stand on (the last P points of the board)",
          check=lambda points: 1 <= points <= MAX_POINTS, accepted=f"whole numbers 1..{MAX_POINTS}"),
    Param("checkers", MAX_CHECKERS, int, "the checkers to bear off (each position of up to this many is a start)",
          check=lambda checkers: 1 <= checkers <= MAX_CHECKERS, accepted=f"whole numbers 1..{MAX_CHECKERS}"),
)
small_params = {"points": 4, "checkers": 3}  # small enough for exhaustive checks (tests/test_conformance.py)

Position = tuple[int, ...]
ROLLS: tuple[tuple[tuple[int, int], int], ...] = tuple(
    ((low, high), 1 if low == high else 2) for low in range(1, 7) for high in range(low, 7))


@functools.cache
def positions(points: int, checkers: int) -> tuple[Position, ...]:
    """Return every position of up to ``checkers`` checkers on ``points`` points, in gnubg's order (its index in
    the one-sided database: fewer checkers first, then by the combinatorial number of the position); worked out
    once a size (a game played from the rules asks for them each time it starts).

    >>> positions(2, 2)
    ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2))
    """
    return tuple(sorted(_all_positions(points, checkers), key=gnubg_index))


def _all_positions(points: int, checkers: int) -> Iterator[Position]:
    if points == 0:
        yield ()
        return
    for here in range(checkers + 1):
        for rest in _all_positions(points - 1, checkers - here):
            yield (here, *rest)


def gnubg_index(position: Position) -> int:
    """Return the position's index in gnubg's one-sided database of its points (``PositionBearoff``): the
    checkers and the points between them as a word of bits, one bit a point (the highest at
    ``points - 1 + checkers``, then each point's after its checkers), ranked in colexicographic order; the
    same whatever the database's number of checkers, fewer checkers first, 0 the empty board.

    >>> [gnubg_index(p) for p in [(0,) * 6, (1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 1, 0)]]
    [0, 1, 5]
    """
    bit = len(position) - 1 + sum(position)
    bits = [bit]
    for count in position[:-1]:
        bit -= count + 1
        bits.append(bit)
    return sum(math.comb(bit, rank) for rank, bit in enumerate(sorted(bits), 1))


@functools.lru_cache(maxsize=1 << 19)  # each position and die of gnubg's database: the rolls' plays share them
def _die_plays(position: Position, die: int) -> tuple[tuple[Position, str], ...]:
    """Return what one die may do: each checker that may move (from the highest point down), and its text."""
    highest = max(point for point, count in enumerate(position, 1) if count)
    found = []
    for point in range(highest, 0, -1):
        if not position[point - 1]:
            continue
        to = point - die
        if to >= 1 or point == die or point == highest:  # moves down; off from its own number or from the top
            after = list(position)
            after[point - 1] -= 1
            if to >= 1:
                after[to - 1] += 1
            found.append((tuple(after), f"{point}/{to if to >= 1 else 'off'}"))
    return tuple(found)


def plays(position: Position, roll: tuple[int, int]) -> dict[Position, str]:
    """Return each position a roll may leave, with the text of the first play found that leaves it (the higher
    die first, each die from the highest point down): both dice played, doubles four times, unless every checker
    is off before.

    The dice are played one at a time over every position the dice before them may leave, each kept with the
    first play reaching it (in that order the first play found of each end is the first in depth-first order).
    """
    low, high = roll
    found: dict[Position, str] = {}
    for dice in [(high,) * 4] if low == high else [(high, low), (low, high)]:
        reached = {position: ""}
        for die in dice:
            after_die: dict[Position, str] = {}
            for here, texts in reached.items():
                if not any(here):  # every checker off: the dice left are not played
                    after_die.setdefault(here, texts)
                    continue
                for after, text in _die_plays(here, die):
                    after_die.setdefault(after, f"{texts} {text}" if texts else text)
            reached = after_die
        for after, texts in reached.items():
            found.setdefault(after, texts)
    return found


def pips(position: Position) -> int:
    """Return the position's pip count: the points its checkers must still travel."""
    return sum(point * count for point, count in enumerate(position, 1))


def position_text(position: Position) -> str:
    """Return the position as its points from the highest down, ``'6:2 3:1'`` (``'all off'`` when empty)."""
    return " ".join(f"{point}:{count}" for point, count in reversed(list(enumerate(position, 1))) if count) or "all off"


class BearOffRules(DiceRules):
    """The bear-off at the rules level: a position is the checkers per point; the clock is the pips gone."""

    def __init__(self, points: int, checkers: int):
        self.points, self.checkers = points, checkers
        self.start: Position = (0,) * (points - 1) + (checkers,)
        self.agents = {"most-off": self.most_off}

    @staticmethod
    def most_off(position: Position, roll: tuple[int, int], moves: Sequence[Move]) -> Move:
        """Bear off as many checkers as the roll allows, then leave the fewest pips, then the lowest top point."""
        return min(moves, key=lambda move: _fewest_left(move.next))

    def starts(self) -> list[Position]:
        """Return N checkers on the P-point first, then every other position of up to N checkers."""
        return [self.start] + [p for p in positions(self.points, self.checkers) if p != self.start]

    def key(self, position: Position) -> str:
        """Return the checkers per point from the 1-point, ``'2-0-1'``."""
        return _key(position)

    def label(self, position: Position) -> str:
        """Return the position by points, ``'6:2 3:1'``, with its pips."""
        return _label(position)

    def clock(self, position: Position) -> int:
        """Return the pips gone since the start (a roll always takes some)."""
        return pips(self.start) - pips(position)

    def payoff(self, position: Position) -> float | None:
        """Return 0 once every checker is off (the rolls were counted on the way), else None."""
        return None if any(position) else 0.0

    def rolls(self, position: Position) -> list[tuple[tuple[int, int], int]]:
        """Return the 21 rolls of two dice, a double weighing 1 and any other 2 (of 36)."""
        return list(ROLLS)

    def roll_text(self, roll: tuple[int, int]) -> str:
        """Return the roll the way backgammon says it, the higher die first: ``'6-4'``."""
        return f"{roll[1]}-{roll[0]}"

    def moves(self, position: Position, roll: tuple[int, int]) -> list[Move]:
        """Return one move per position the roll may leave, each costing one roll."""
        return [Move(after, text, 1.0) for after, text in plays(position, roll).items()]


def _top(position: Position) -> int:
    return max((point for point, count in enumerate(position, 1) if count), default=0)


# A position's texts and the agent's order, worked out once a position: the expander asks for them at every
# move into it (gnubg's database has 54,264 positions and 10 million edges between them).
@functools.lru_cache(maxsize=1 << 17)
def _key(position: Position) -> str:
    return "-".join(map(str, position))


@functools.lru_cache(maxsize=1 << 17)
def _label(position: Position) -> str:
    return f"{position_text(position)} ({pips(position)} pips)" if any(position) else "all off"


@functools.lru_cache(maxsize=1 << 17)
def _fewest_left(position: Position) -> tuple[int, int, int]:
    """Return what most-off minimises: the checkers left, then the pips, then the top point."""
    return sum(position), pips(position), _top(position)


def rules(params: Mapping[str, Any]) -> BearOffRules:
    """Return the bear-off's rules for ``params`` (points, checkers)."""
    return BearOffRules(params["points"], params["checkers"])


def position_count(points: int, checkers: int) -> int:
    """Return how many positions of up to ``checkers`` checkers ``points`` points hold (gnubg's database size).

    >>> position_count(6, 15)
    54264
    """
    return math.comb(points + checkers, points)


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return about how many edges the graph has: 21 rolls and about 7 moves a roll per position."""
    return position_count(params["points"], params["checkers"]) * 21 * 7


@hookimpl
def board(key: str, params: dict[str, Any]) -> str | None:
    """Return the position's points and checkers as an SVG (:mod:`dicegraph.graphs.bear_off.picture`); a decision's
    key (``position/roll``) shows its position; None for a key that is no position."""
    side = side_of(key.split("/")[0], params["points"])
    return None if side is None else side_rows([side], ["to bear off"])


def side_of(text: str, points: int) -> Position | None:
    """Return the side a key's part names (``'0-0-1'``), or None when it names none of ``points`` points."""
    fields = text.split("-")
    if len(fields) != points or not all(field.isdigit() for field in fields):
        return None
    return tuple(int(field) for field in fields)
