"""School's turn structure: how its turn, stored once, joins its turn states, and its decisions in bytes.

The solve is the store's generic one (``store/turns.py``); this module says
what is School's in it: the turn's root (``roll1``) and ends (``end:<c>``,
reached by the state moves labelled ``c``), the two policies (``optimal``,
and ``bob``, who ranks a combination by its points minus its average: the
optimal value of the state where it alone is left), and the layout of the
decision bytes (:class:`DecisionBytes`; 756 positions a state, position
``outcome * 3 + rerolls left``, see :func:`graphs.school.game.encode_decision`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphs.protocol import TurnPolicy, TurnStructure
from graphs.school import game as rules

POSITIONS = len(rules.OUTCOMES) * rules.ROLLS  # decision bytes per turn state
STOP = 255  # the move "stop" at the second roll: its byte is the third roll's decision


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


class DecisionBytes:
    """Turns the chosen moves of a solve into each state's 756 decision bytes.

    A decision's move is a score, ``stop`` (the third roll's score, after the
    second roll) or ``reroll a d``; the last is followed through the keep's
    choices (``reroll a d`` again, until ``roll n``) to the dice kept.
    """

    SCORE, STOP, PUT_BACK, ROLL_NOW = range(4)

    def __init__(self, nodes: Sequence[tuple[int, str]], moves: Sequence[tuple[int, int, int, str]]):
        import numpy as np

        self.local: dict[int, int] = {}
        decisions = []  # (local index, position, outcome)
        keep_index = {keep: k for k, keep in enumerate(rules.KEEPS)}
        dice_of: dict[int, tuple[int, ...]] = {}
        for node_id, key in nodes:
            if key[0] not in "rh" or key == "roll1":
                continue
            self.local[node_id] = len(self.local)
            stage, text = key.split(":")
            dice = () if text == "-" else tuple(int(f) for f in text)
            dice_of[node_id] = dice
            if stage[0] == "r":
                outcome = rules.OUTCOME_INDEX[dice]
                decisions.append((self.local[node_id], outcome * rules.ROLLS + rules.ROLLS - int(stage[1]), outcome))
        self.decisions = np.array(sorted(decisions), dtype=np.int64).reshape(-1, 3)
        size = max(offset for offset, *_ in moves) + 1
        self.kind, self.byte = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.target, self.keep = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.src = np.zeros(size, dtype=np.int64)
        for at, src, dst, label in moves:
            if src not in self.local:
                continue
            self.src[at] = self.local[src]
            if label == "stop":
                self.kind[at] = self.STOP
            elif label.startswith("reroll a "):
                self.kind[at], self.target[at] = self.PUT_BACK, self.local[dst]
            elif label.startswith("roll "):
                self.kind[at], self.keep[at] = self.ROLL_NOW, keep_index[dice_of[src]]
            else:
                self.kind[at], self.byte[at] = self.SCORE, rules.score_byte(label)
        self.mask = np.zeros((len(rules.OUTCOMES), len(rules.KEEPS)), dtype=np.int64)
        for outcome, dice in enumerate(rules.OUTCOMES):
            for kept in rules.sub_multisets(dice):
                if len(kept) < rules.DICE:
                    self.mask[outcome, keep_index[kept]] = rules.reroll_mask(dice, kept)

    def pack(self, states: Any, moves: Any) -> dict[int, bytes]:
        """Return state -> its decision bytes, from arrays of (state, chosen move's offset)."""
        import numpy as np

        states, state_row = np.unique(states, return_inverse=True)
        chosen = np.full((len(states), len(self.local)), -1, dtype=np.int64)
        chosen[state_row, self.src[moves]] = moves
        every = np.arange(len(states))[:, None]
        moves = chosen[:, self.decisions[:, 0]]  # [state, decision]
        kinds = self.kind[moves]
        packed = np.where(kinds == self.SCORE, self.byte[moves], 0)
        current, kept = moves.copy(), np.full(moves.shape, -1, dtype=np.int64)
        for _ in range(rules.DICE + 1):  # follow the keep's choices to "roll n"
            following = (kinds == self.PUT_BACK) & (kept < 0)
            if not following.any():
                break
            current = np.where(following, chosen[every, self.target[current]], current)
            done = following & (self.kind[current] == self.ROLL_NOW)
            kept = np.where(done, self.keep[current], kept)
        rerolled = kinds == self.PUT_BACK
        outcomes = np.broadcast_to(self.decisions[:, 2], moves.shape)
        packed = np.where(rerolled, rules.encode_decision(rules.REROLL, 0) | self.mask[outcomes, np.maximum(kept, 0)], packed)
        by_position = np.zeros((len(states), POSITIONS), dtype=np.int64)
        by_position[:, self.decisions[:, 1]] = np.where(kinds == self.STOP, STOP, packed)
        second = np.arange(len(rules.OUTCOMES)) * rules.ROLLS + 1  # rerolls left 1: "stop" plays the third roll's move
        by_position[:, second] = np.where(by_position[:, second] == STOP, by_position[:, second - 1], by_position[:, second])
        return {int(state): by_position[i].astype(np.uint8).tobytes() for i, state in enumerate(states)}


def turn(params: Mapping[str, Any]) -> TurnStructure:
    """Return School's turn structure (the same for every parameter)."""
    return TurnStructure(
        root="roll1",
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
