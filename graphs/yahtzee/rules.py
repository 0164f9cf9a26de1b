"""Yahtzee at the rules level (:mod:`graphs.repeating`): the five-dice turn repeats over the turn states (boxes
filled, the upper total, the Yahtzee box's 50), which add what the turn's ends are worth besides the printed
points: the upper bonus, the Yahtzee bonus, the joker.

The store keeps the turn once (:mod:`graphs.yahtzee.game`); these rules are what it means, for the exact check of
any state and for games played from the rules. A turn ends at ``end:<label>``, the label saying what the state
needs to know (:func:`graphs.yahtzee.boxes.end_label`); the state's move of that label says where it goes.

>>> from graphs.exact import exact_value
>>> full = rules({"bonuses": "off"})
>>> last = State(ALL_FILLED ^ 1 << BOXES.index("Chance"))  # Chance alone is left: the sum of five dice
>>> exact_value(full, "max", position=(last, full.root))  # per die: keep a 5 or 6 first, then a 4 or more
Fraction(70, 3)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from graphs.five_dice import FiveDiceTurn, stored_turn_agent
from graphs.repeating import RepeatingTurn, TurnsInFull
from graphs.rules import Ending, Move
from graphs.yahtzee.boxes import (ALL_FILLED, BOXES, State, end_key, end_label, parse_state_key, state_key, state_moves,
                                  state_text)
from graphs.yahtzee.game import score_moves


class YahtzeeRules(RepeatingTurn):
    """Yahtzee's turn states over the five-dice turn, for a bonus setting (``on``, ``upper`` or ``off``)."""

    def __init__(self, bonuses: str):
        self.bonuses = bonuses
        self.turn = FiveDiceTurn(functools.partial(score_moves, bonuses))

    def first_state(self) -> State:
        """Return no box filled."""
        return State(0)

    def state_key(self, state: State) -> str:
        """Return the stored state's key, e.g. ``'filled:5 upper:4 y50:0'``."""
        return state_key(state, self.bonuses)

    def state_of(self, key: str) -> State:
        """Return the state a key names."""
        return parse_state_key(key)

    def state_label(self, state: State) -> str:
        """Return the state in words."""
        return state_text(state, self.bonuses)

    def through(self, state: State, end: str) -> Move | Ending | None:
        """Return the state's move labelled like the end (None where its box is filled): the next state, and
        as reward the bonuses and joker points the state adds; the game is over when every box is filled."""
        label = end.removeprefix("end:")
        move = next((move for move in state_moves(state, self.bonuses) if move.label == label), None)
        if move is None:
            return None
        if move.next.filled == ALL_FILLED:
            return Ending(state_key(move.next, self.bonuses), state_text(move.next, self.bonuses), float(move.reward))
        return Move(move.next, label, float(move.reward))


def stored_agent(decisions: Mapping[str, bytes], bonuses: str) -> Any:
    """Return a turn agent playing a stored policy's decision bytes (state key -> bytes) over the rules' turn."""
    def end_of(kind: int, payload: int, dice: tuple[int, ...]) -> str:
        return end_key(end_label(payload - 1, dice, bonuses))

    return stored_turn_agent(decisions, lambda state: state_key(state, bonuses), end_of)


def rules(params: Mapping[str, Any]) -> TurnsInFull:
    """Return Yahtzee's rules for ``params`` (bonuses), the turn copied into each state."""
    return TurnsInFull(YahtzeeRules(params["bonuses"]))
