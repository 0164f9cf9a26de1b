"""Yahtzee's stored turn read back: each box's average, and the decisions as an array (the five-dice layout)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs import five_dice
from dicegraph.graphs.yahtzee.boxes import Sheet
from dicegraph.graphs.yahtzee.rules import last_states


def average_table(optimal: Mapping[str, float], sheet: Sheet) -> dict[str, float]:
    """Return each box in play's average score alone: the optimal value of the state where it alone is open."""
    return {sheet.boxes[box]: optimal[key] for box, key in last_states(sheet).items()}


def decision_array(decisions: Mapping[str, bytes]) -> tuple[tuple[str, ...], Any]:
    """Return stored decisions (state key -> bytes) as the states' keys and a uint8 array ``[state index, outcome,
    rerolls left]``, the state index being the key's place; 0 bytes: no decision."""
    import numpy as np

    keys = tuple(decisions)
    array = np.zeros((len(keys), len(five_dice.OUTCOMES), five_dice.ROLLS), dtype=np.uint8)
    for index, packed in enumerate(decisions.values()):
        if packed:
            array[index] = np.frombuffer(packed, dtype=np.uint8).reshape(len(five_dice.OUTCOMES), five_dice.ROLLS)
    return keys, array
