"""The two-sided bear-off: both players bear off N checkers from their last P points; the first off wins.

A position is the two sides' checkers, the player to move first (each side as in
:mod:`dicegraph.graphs.bear_off.game`), and is worth the mover's probability of winning. A roll is played by the
same rules of backgammon; a play that bears off the mover's last checker wins, any other hands the dice over.
As gnubg's two-sided bear-off databases (``makebearoff -t PxN``), every pair of positions of up to N checkers
a side is a start, so one solve answers for each of them: ``tests/test_bear_off.py`` compares them with the
cubeless equities of such a database (:func:`dicegraph.graphs.bear_off.gnubg.read_two_sided`).

>>> rules = RaceRules(2, 1)
>>> [move.label for move in rules.moves(((1, 0), (0, 1)), (1, 2))]
['1/off']
>>> len(rules.starts())
4
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dicegraph.graphs.bear_off.game import MAX_POINTS, ROLLS, Position, position_count, side_of, pips, plays, position_text, positions
from dicegraph.graphs.bear_off.picture import side_rows
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import Param
from dicegraph.graphs.rules import DiceRules, Move

name = "bear-off-race"
title = "Bear-off race"
summary = "Backgammon's two-sided bear-off: both players bear off N checkers; the first off wins."
version = 1
objective = "max"
players = 2  # each position seen from the player to move, worth that player's chance to win
loops = True  # no position recurs, but the turn passes: the store solves such layers as (acyclic) components
outcome = "probability that the player to move wins"
MAX_RACE_CHECKERS = 6  # a side's checkers: 6 on 6 points is 853,776 pairs of positions already

params = (
    Param("points", MAX_POINTS, int, "the points each side's checkers stand on (the last P points)",
          check=lambda points: 1 <= points <= MAX_POINTS, accepted=f"whole numbers 1..{MAX_POINTS}"),
    Param("checkers", 3, int, "each side's checkers (each pair of positions of up to this many is a start)",
          check=lambda checkers: 1 <= checkers <= MAX_RACE_CHECKERS, accepted=f"whole numbers 1..{MAX_RACE_CHECKERS}"),
)
small_params = {"points": 3, "checkers": 2}  # small enough for exhaustive checks (tests/test_conformance.py)

Race = tuple[Position, Position]  # the mover's checkers, then the opponent's
WON = "won"


class RaceRules(DiceRules):
    """Both sides bearing off: a position is (the mover's checkers, the opponent's); the clock is the pips gone."""

    def __init__(self, points: int, checkers: int):
        self.points, self.checkers = points, checkers
        side: Position = (0,) * (points - 1) + (checkers,)
        self.start: Race = (side, side)
        self.agents = {"most-off": self.most_off}

    @staticmethod
    def most_off(position: Race, roll: tuple[int, int], moves: Sequence[Move]) -> Move:
        """Win where the roll allows, else bear off as many checkers as it allows, then leave the fewest pips."""
        return min(moves, key=lambda move: (-1, 0) if move.next == WON else (sum(move.next[1]), pips(move.next[1])))

    def starts(self) -> list[Race]:
        """Return N checkers a side on the P-point first, then every other pair with checkers on both sides."""
        sides = [side for side in positions(self.points, self.checkers) if any(side)]
        return [self.start] + [(mine, theirs) for mine in sides for theirs in sides if (mine, theirs) != self.start]

    def key(self, position: Race | str) -> str:
        """Return the two sides' keys, the mover's first: ``'0-1 2-0'``."""
        return WON if position == WON else " ".join("-".join(map(str, side)) for side in position)

    def label(self, position: Race | str) -> str:
        """Return the two sides by points, the mover's first."""
        if position == WON:
            return "the player to move has borne off every checker and won"
        mine, theirs = position
        return f"to move {position_text(mine)} ({pips(mine)} pips); opponent {position_text(theirs)} ({pips(theirs)} pips)"

    def clock(self, position: Race | str) -> int:
        """Return the pips gone from both sides since the start (every roll takes some)."""
        left = 0 if position == WON else pips(position[0]) + pips(position[1])
        return 2 * pips(self.start[0]) - left

    def payoff(self, position: Race | str) -> float | None:
        """Return 1 at the win (the mover's), else None."""
        return 1.0 if position == WON else None

    def rolls(self, position: Race) -> list[tuple[tuple[int, int], int]]:
        """Return the 21 rolls of two dice, a double weighing 1 and any other 2 (of 36)."""
        return list(ROLLS)

    def roll_text(self, roll: tuple[int, int]) -> str:
        """Return the roll the higher die first: ``'6-4'``."""
        return f"{roll[1]}-{roll[0]}"

    def moves(self, position: Race, roll: tuple[int, int]) -> list[Move]:
        """Return one move per position the roll may leave the mover: off entirely wins, else the dice pass."""
        mine, theirs = position
        return [Move(WON, text) if not any(after) else Move((theirs, after), text, passes=True)
                for after, text in plays(mine, roll).items()]


def rules(params: Mapping[str, Any]) -> RaceRules:
    """Return the two-sided bear-off's rules for ``params`` (points, checkers)."""
    return RaceRules(params["points"], params["checkers"])


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return about how many edges the graph has: 21 rolls and about 4 moves a roll per pair of positions."""
    return position_count(params["points"], params["checkers"]) ** 2 * 21 * 5


@hookimpl
def board(key: str, params: dict[str, Any]) -> str | None:
    """Return both sides' points and checkers as an SVG, the player to move lower (:mod:`dicegraph.graphs.bear_off.picture`);
    None for a key that is no position (the win)."""
    halves = key.split("/")[0].split(" ")
    sides = [side_of(half, params["points"]) for half in halves]
    if len(sides) != 2 or None in sides:
        return None
    return side_rows(sides, ["to move", "opponent"])
