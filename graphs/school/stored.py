"""School's turn structure: how its turn, stored once, joins its turn states, and its decisions in bytes.

The solve is the store's generic one (``store/solve/turns.py``); this module says
what is School's in it: the turn's root (``roll1``) and ends (``end:<c>``,
reached by the state moves labelled ``c``), the two policies (``optimal``,
and ``bob``, who ranks a combination by its points minus its average: the
optimal value of the state where it alone is left), and the layout of the
decision bytes (:class:`DecisionBytes`; 756 positions a state, position
``outcome * 3 + rerolls left``, see :func:`dicegraph.graphs.school.game.encode_decision`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs import five_dice
from dicegraph.graphs.protocol import TurnPolicy, TurnStructure
import dicegraph.graphs.school.game as rules


def end_key(c: int) -> str:
    """Return the key of the turn's end scoring combination ``c``."""
    return rules.turn_key("end", rules.COMBINATIONS[c])


def last_state(c: int) -> str:
    """Return the key of the state where combination ``c`` alone is left."""
    return rules.state_key(rules.ALL_USED ^ 1 << c)


def bob_profits(optimal: Mapping[str, float]) -> dict[str, float]:
    """Return Bob's profit of ending a turn with each combination: minus its average (seed 001's table)."""
    return {end_key(c): -optimal[last_state(c)] for c in range(len(rules.COMBINATIONS))}


def average_table(optimal: Mapping[str, float]) -> dict[str, float]:
    """Return each combination's average score: the optimal value of the state where it alone is left."""
    return {combination: optimal[last_state(c)] for c, combination in enumerate(rules.COMBINATIONS)}


class DecisionBytes(five_dice.DecisionBytes):
    """School's decision bytes: a score or cross-out names the combination (1..15), see :func:`dicegraph.graphs.school.game.score_byte`."""

    def score_byte(self, label: str) -> int:
        """Return the byte of the scoring move ``label``."""
        return rules.score_byte(label)


def turn(params: Mapping[str, Any]) -> TurnStructure:
    """Return School's turn structure (the same for every parameter)."""
    return TurnStructure(
        root=five_dice.FIRST_ROLL,
        ends={end_key(c): combination for c, combination in enumerate(rules.COMBINATIONS)},
        policies=(TurnPolicy("optimal"),
                  TurnPolicy("bob", method="agent", needs=tuple(last_state(c) for c in range(len(rules.COMBINATIONS))),
                             end_profits=bob_profits)),
        encoder=DecisionBytes,
        states=len(rules.STATES),
    )


def decision_array(decisions: Mapping[str, bytes]) -> Any:
    """Return stored decisions (state key -> bytes) as a uint8 array ``[unused mask, outcome, rerolls left]`` (0: none)."""
    import numpy as np

    array = np.zeros((rules.ALL_USED + 1, len(rules.OUTCOMES), rules.ROLLS), dtype=np.uint8)
    for key, packed in decisions.items():
        if packed:
            used = int(key.split(":")[1])
            array[rules.ALL_USED ^ used] = np.frombuffer(packed, dtype=np.uint8).reshape(len(rules.OUTCOMES), rules.ROLLS)
    return array
