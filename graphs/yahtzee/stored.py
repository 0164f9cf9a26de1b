"""Yahtzee's turn structure: its ends, its three policies and its decision bytes (the five-dice layout).

The solve is the store's generic one (``store/solve/turns.py``). The policies:

* ``optimal`` maximises the expected final score (the published optimum);
* ``greedy`` plays each turn for the most points it scores in its box
  (printed points: it ignores bonuses, the joker and the boxes to come);
* ``above-average`` ranks a box by its points minus the box's average, the
  optimal value of the state where that box alone is open (seed 001's
  heuristic for School, played here on Yahtzee's boxes).

A decision byte (:mod:`dicegraph.graphs.five_dice`) scores box ``b`` as payload ``b + 1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs import five_dice
from dicegraph.graphs.protocol import TurnPolicy, TurnStructure
import dicegraph.graphs.yahtzee.boxes as rules


def last_state(box: int, bonuses: str) -> str:
    """Return the key of the state where ``box`` alone is open (upper total 0, no Yahtzee bonus)."""
    return rules.state_key(rules.State(rules.ALL_FILLED ^ 1 << box), bonuses)


def average_table(optimal: Mapping[str, float], bonuses: str) -> dict[str, float]:
    """Return each box's average score alone: the optimal value of the state where it alone is open."""
    return {box: optimal[last_state(b, bonuses)] for b, box in enumerate(rules.BOXES)}


class DecisionBytes(five_dice.DecisionBytes):
    """Yahtzee's decision bytes: ``score <box>`` is a score of the box's number (1..13)."""

    def score_byte(self, label: str) -> int:
        """Return the byte of the scoring move ``label``."""
        return five_dice.encode_decision(five_dice.SCORE, rules.box_index(label.removeprefix("score ")) + 1)


def turn(params: Mapping[str, Any]) -> TurnStructure:
    """Return Yahtzee's turn structure for ``params`` (the ends depend on ``bonuses``)."""
    bonuses = params["bonuses"]
    ends = {rules.end_key(label): label for label in rules.end_labels(bonuses)}
    box_of_end = {rules.end_key(label): box for label, box in rules.end_boxes(bonuses).items()}

    def above_average(optimal: Mapping[str, float]) -> dict[str, float]:
        return {key: -optimal[last_state(box, bonuses)] for key, box in box_of_end.items()}

    return TurnStructure(
        root=five_dice.FIRST_ROLL,
        ends=ends,
        policies=(
            TurnPolicy("optimal"),
            TurnPolicy("greedy", method="agent", end_profits=lambda optimal: {key: 0.0 for key in ends}),
            TurnPolicy("above-average", method="agent",
                       needs=tuple(last_state(box, bonuses) for box in range(len(rules.BOXES))),
                       end_profits=above_average),
        ),
        encoder=DecisionBytes,
        states=len(rules.states(bonuses)),
    )


def decision_array(decisions: Mapping[str, bytes]) -> Any:
    """Return stored decisions (state key -> bytes) as a uint8 array ``[state index, outcome, rerolls left]``.

    The state index is the state's place in :func:`dicegraph.graphs.yahtzee.boxes.states`
    (with or without bonuses, as the keys say); 0 bytes: no decision.
    """
    import numpy as np

    bonuses = rules.bonuses_of_key(next(iter(decisions), ""))
    every = rules.states(bonuses)
    index = {rules.state_key(state, bonuses): i for i, state in enumerate(every)}
    array = np.zeros((len(every), len(five_dice.OUTCOMES), five_dice.ROLLS), dtype=np.uint8)
    for key, packed in decisions.items():
        if packed:
            array[index[key]] = np.frombuffer(packed, dtype=np.uint8).reshape(len(five_dice.OUTCOMES), five_dice.ROLLS)
    return array
