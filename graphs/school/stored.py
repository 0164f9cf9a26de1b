"""School's stored turn read back: each combination's average, and the decisions as an array.

The store keeps a policy's decisions as 756 bytes a state, position ``outcome * 3 +
rerolls left`` (:func:`dicegraph.graphs.school.game.encode_decision`, as School's rules
declare, :mod:`dicegraph.graphs.school.rules`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dicegraph.graphs.school.game as rules
from dicegraph.graphs.school.rules import last_states


def average_table(optimal: Mapping[str, float], first: int = 0) -> dict[str, float]:
    """Return each combination in play's average score (the game starting with ``first`` used): the optimal value
    of the state where it alone is left."""
    return {rules.COMBINATIONS[c]: optimal[last] for c, last in last_states(first).items()}


def decision_array(decisions: Mapping[str, bytes]) -> Any:
    """Return stored decisions (state key -> bytes) as a uint8 array ``[unused mask, outcome, rerolls left]`` (0: none)."""
    import numpy as np

    array = np.zeros((rules.ALL_USED + 1, len(rules.OUTCOMES), rules.ROLLS), dtype=np.uint8)
    for key, packed in decisions.items():
        if packed:
            used = int(key.split(":")[1])
            array[rules.ALL_USED ^ used] = np.frombuffer(packed, dtype=np.uint8).reshape(len(rules.OUTCOMES), rules.ROLLS)
    return array
