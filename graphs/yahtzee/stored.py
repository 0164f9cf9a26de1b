"""Yahtzee's stored turn read back: each box's average, and the decisions as an array (the five-dice layout)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs import five_dice
import dicegraph.graphs.yahtzee.boxes as rules
from dicegraph.graphs.yahtzee.rules import last_state


def average_table(optimal: Mapping[str, float], bonuses: str) -> dict[str, float]:
    """Return each box's average score alone: the optimal value of the state where it alone is open."""
    return {box: optimal[last_state(b, bonuses)] for b, box in enumerate(rules.BOXES)}


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
