"""Yahtzee at the rules level (:mod:`dicegraph.graphs.repeating`): the five-dice turn repeats over the turn states (boxes
filled, the upper total, the Yahtzee box's 50), which add what the turn's ends are worth besides the printed
points: the upper bonus, the Yahtzee bonus, the joker.

The store keeps the turn once (:mod:`dicegraph.graphs.yahtzee.game`); these rules are what it means, for the exact check of
any state and for games played from the rules. A turn ends at ``end:<label>``, the label saying what the state
needs to know (:func:`dicegraph.graphs.yahtzee.boxes.end_label`); the state's move of that label says where it goes.

>>> from dicegraph.graphs.exact import exact_value
>>> full = rules({"bonuses": "off"})
>>> last = State(ALL_FILLED ^ 1 << BOXES.index("Chance"))  # Chance alone is left: the sum of five dice
>>> exact_value(full, "max", position=(last, full.root))  # per die: keep a 5 or 6 first, then a 4 or more
Fraction(70, 3)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from dicegraph.graphs.five_dice import FiveDiceTurn, StoredTurn, stored_turn_agent
from dicegraph.graphs.repeating import RepeatingTurn, TurnsInFull
from dicegraph.graphs.rules import Move
from dicegraph.graphs.yahtzee.boxes import (ALL_FILLED, BOXES, State, end_key, end_label, end_labels, parse_state_key,
                                            score_moves, state_key, state_moves, state_text)


class YahtzeeRules(RepeatingTurn):
    """Yahtzee's turn states over the five-dice turn, for a bonus setting (``on``, ``upper`` or ``off``)."""

    def __init__(self, bonuses: str):
        self.bonuses = bonuses
        scores = functools.partial(score_moves, bonuses)
        self.turn = FiveDiceTurn(scores)
        self.stored_turn = StoredTurn(scores, stop_after=(1, 2),
                                      ends=[(end_key(label), f"the turn ends: {label}") for label in end_labels(bonuses)])
        self._moves_of: tuple[State | None, dict[str, Move]] = (None, {})  # the last state asked, its moves

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

    def state_payoff(self, state: State) -> float | None:
        """Return 0 once every box is filled (the last move carries its bonuses), else None."""
        return 0.0 if state.filled == ALL_FILLED else None

    def end_label(self, end: str) -> str:
        """Return what an end says, ``'Threes 9'``: how a state's moves name it."""
        return end.removeprefix("end:")

    def _moves(self, state: State) -> dict[str, Move]:
        """Return the state's moves by label (the last state's kept: a state's ends are asked for one after another)."""
        last, moves = self._moves_of
        if last != state:
            moves = {move.label: move for move in state_moves(state, self.bonuses)}
            self._moves_of = (state, moves)
        return moves

    def through(self, state: State, end: str) -> Move | None:
        """Return the state's move labelled like the end (None where its box is filled): the next state, and
        as reward the bonuses and joker points the state adds."""
        return self._moves(state).get(self.end_label(end))

    def ways_through(self, state: State, ends: Sequence[str]) -> list[tuple[str, Move]]:
        """Return the state's moves, each with the end it goes through."""
        return [(end_key(move.label), move) for move in state_moves(state, self.bonuses)]


def stored_agent(decisions: Mapping[str, bytes], bonuses: str) -> Any:
    """Return a turn agent playing a stored policy's decision bytes (state key -> bytes) over the rules' turn."""
    def end_of(kind: int, payload: int, dice: tuple[int, ...]) -> str:
        return end_key(end_label(payload - 1, dice, bonuses))

    return stored_turn_agent(decisions, lambda state: state_key(state, bonuses), end_of)


def rules(params: Mapping[str, Any]) -> TurnsInFull:
    """Return Yahtzee's rules for ``params`` (bonuses), the turn copied into each state."""
    return TurnsInFull(YahtzeeRules(params["bonuses"]))
