"""Yahtzee at the rules level (:mod:`dicegraph.graphs.repeating`): the five-dice turn repeats over the turn states (boxes
filled, the upper total, the Yahtzee box's 50), which add what the turn's ends are worth besides the printed
points: the upper bonus, the Yahtzee bonus, the joker.

The store keeps the turn once (:mod:`dicegraph.graphs.yahtzee.game`) as these rules say
(:func:`dicegraph.graphs.repeating.turn_structure`), with three policies:

* ``optimal`` maximises the expected final score (the published optimum);
* ``greedy`` plays each turn for the most points it scores in its box
  (printed points: it ignores bonuses, the joker and the boxes to come);
* ``above-average`` ranks a box by its points minus the box's average, the
  optimal value of the state where that box alone is open (seed 001's
  heuristic for School, played here on Yahtzee's boxes).

A decision byte (:mod:`dicegraph.graphs.five_dice`) scores box ``b`` as payload ``b + 1``. Copied into each state,
the rules are what the game means, for the exact check of any state and for games played from the rules. A turn ends at ``end:<label>``, the label saying what the state
needs to know (:func:`dicegraph.graphs.yahtzee.boxes.end_label`); the state's move of that label says where it goes.

>>> from dicegraph.graphs.exact import exact_value
>>> full = rules({"bonuses": "off"})
>>> last = State(Sheet().all_filled ^ 1 << Sheet().box("Chance"))  # Chance alone is left: the sum of five dice
>>> exact_value(full, "max", position=(last, full.root))  # per die: keep a 5 or 6 first, then a 4 or more
Fraction(70, 3)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from dicegraph.graphs import five_dice
from dicegraph.graphs.five_dice import DecisionBytes, FiveDiceTurn, StoredTurn, stored_turn_agent
from dicegraph.graphs.protocol import TurnPolicy
from dicegraph.graphs.repeating import RepeatingTurn, TurnsInFull
from dicegraph.graphs.rules import Move
from dicegraph.graphs.yahtzee.boxes import (Sheet, State, end_boxes, end_key, end_label, end_labels, open_boxes,
                                            parse_state_key, score_moves, sheet_of, state_key, state_moves, state_text,
                                            states)


def last_state(box: int, sheet: Sheet) -> str:
    """Return the key of the state where ``box`` alone is open (upper total 0, no Yahtzee bonus)."""
    return state_key(State(sheet.all_filled ^ 1 << box), sheet)


def last_states(sheet: Sheet) -> dict[int, str]:
    """Return each box in play -> the key of the state where it alone is open (its average is that state's value)."""
    return {box: last_state(box, sheet) for box in open_boxes(sheet, sheet.first_filled)}


def score_byte(sheet: Sheet, label: str) -> int:
    """Return the decision byte of the scoring move ``label``, ``'score <box>'``: a score of the box's number (1..15).

    >>> score_byte(Sheet(), "score Chance") == five_dice.encode_decision(five_dice.SCORE, 13)
    True
    """
    return five_dice.encode_decision(five_dice.SCORE, sheet.box(label.removeprefix("score ")) + 1)


def rankings(sheet: Sheet) -> tuple[TurnPolicy, ...]:
    """Return the policies besides the optimum: ``greedy`` (no end worth more than another) and ``above-average``
    (an end worth minus its box's average)."""
    box_of_end = {end_key(label): box for label, box in end_boxes(sheet).items()}
    lasts = last_states(sheet)

    def above_average(optimal: Mapping[str, float]) -> dict[str, float]:
        return {key: -optimal[lasts[box]] for key, box in box_of_end.items()}

    return (TurnPolicy("greedy", method="agent", end_profits=lambda optimal: dict.fromkeys(box_of_end, 0.0)),
            TurnPolicy("above-average", method="agent", needs=tuple(lasts.values()), end_profits=above_average))


class YahtzeeRules(RepeatingTurn):
    """Yahtzee's (or Yatzy's) turn states over the five-dice turn, for a :class:`~boxes.Sheet`: the rules' boxes, the
    bonuses played and the boxes in play."""

    def __init__(self, sheet: Sheet):
        self.sheet = sheet
        self.encoder = functools.partial(DecisionBytes, functools.partial(score_byte, sheet))
        self.rankings = rankings(sheet)
        scores = functools.partial(score_moves, sheet)
        self.turn = FiveDiceTurn(scores)
        self.stored_turn = StoredTurn(scores, stop_after=(1, 2),
                                      ends=[(end_key(label), f"the turn ends: {label}") for label in end_labels(sheet)])
        self._moves_of: tuple[State | None, dict[str, Move]] = (None, {})  # the last state asked, its moves

    def highest_still(self, state: State) -> float:
        """Return the sheet's :meth:`~dicegraph.graphs.yahtzee.boxes.Sheet.highest_still` from ``state``."""
        return float(self.sheet.highest_still(state))

    def lowest_still(self, state: State) -> float:
        """Return the sheet's :meth:`~dicegraph.graphs.yahtzee.boxes.Sheet.lowest_still` from ``state``."""
        return float(self.sheet.lowest_still(state))

    def first_state(self) -> State:
        """Return the boxes out of play filled (none when every box is in play)."""
        return State(self.sheet.first_filled)

    def state_count(self) -> int:
        """Return how many turn states the sheet has."""
        return len(states(self.sheet))

    def state_key(self, state: State) -> str:
        """Return the stored state's key, e.g. ``'filled:5 upper:4 y50:0'``."""
        return state_key(state, self.sheet)

    def state_of(self, key: str) -> State:
        """Return the state a key names."""
        return parse_state_key(key)

    def state_label(self, state: State) -> str:
        """Return the state in words."""
        return state_text(state, self.sheet)

    def state_payoff(self, state: State) -> float | None:
        """Return 0 once every box is filled (the last move carries its bonuses), else None."""
        return 0.0 if state.filled == self.sheet.all_filled else None

    def end_label(self, end: str) -> str:
        """Return what an end says, ``'Threes 9'``: how a state's moves name it."""
        return end.removeprefix("end:")

    def _moves(self, state: State) -> dict[str, Move]:
        """Return the state's moves by label (the last state's kept: a state's ends are asked for one after another)."""
        last, moves = self._moves_of
        if last != state:
            moves = {move.label: move for move in state_moves(state, self.sheet)}
            self._moves_of = (state, moves)
        return moves

    def through(self, state: State, end: str) -> Move | None:
        """Return the state's move labelled like the end (None where its box is filled): the next state, and
        as reward the bonuses and joker points the state adds."""
        return self._moves(state).get(self.end_label(end))

    def ways_through(self, state: State, ends: Sequence[str]) -> list[tuple[str, Move]]:
        """Return the state's moves, each with the end it goes through."""
        return [(end_key(move.label), move) for move in state_moves(state, self.sheet)]


def stored_agent(decisions: Mapping[str, bytes], sheet: Sheet) -> Any:
    """Return a turn agent playing a stored policy's decision bytes (state key -> bytes) over the rules' turn."""
    def end_of(kind: int, payload: int, dice: tuple[int, ...]) -> str:
        return end_key(end_label(payload - 1, dice, sheet))

    return stored_turn_agent(decisions, lambda state: state_key(state, sheet), end_of)


def rules(params: Mapping[str, Any]) -> TurnsInFull:
    """Return Yahtzee's rules for ``params`` (rules, bonuses, boxes), the turn copied into each state."""
    return TurnsInFull(YahtzeeRules(sheet_of(params)))
