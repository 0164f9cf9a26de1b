"""School at the rules level (:mod:`dicegraph.graphs.repeating`): the five-dice turn repeats, and a turn state (the used
combinations) says which of the turn's ends are open and where each leads.

The store keeps the turn once (:mod:`dicegraph.graphs.school.game`) as these rules say
(:func:`dicegraph.graphs.repeating.turn_structure`): besides the optimum, ``bob``, who ranks a combination by its points
minus its average (the optimal value of the state where it alone is left); decisions in the seed's bytes. Copied into
each state, they are what the game means, for the exact check of any state (:func:`dicegraph.graphs.exact.exact_value`
from ``(state, turn start)``) and for games played from the rules.

>>> from dicegraph.graphs.exact import exact_value
>>> full = rules({"straights": (15, 20), "grades": "negative"})
>>> last = ALL_USED ^ 1 << COMBINATIONS.index("Trash")  # Trash alone is left: a sum of five dice
>>> round(float(exact_value(full, "max", position=(last, full.root))), 4)  # doubled on the first roll
35.1006
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from dicegraph.graphs.five_dice import DecisionBytes, FiveDiceTurn, StoredTurn, stored_turn_agent
from dicegraph.graphs.protocol import TurnPolicy
from dicegraph.graphs.repeating import RepeatingTurn, TurnsInFull
from dicegraph.graphs.rules import Ending, Move
from dicegraph.graphs.school.game import (ALL_USED, COMBINATIONS, extreme_points, first_used,
                                          open_combinations, score_byte, score_moves, state_key, turn_key, unused_sum,
                                          states, used_text)


END_KEYS = tuple(turn_key("end", combination) for combination in COMBINATIONS)  # each combination's end
END_COMBINATION = {key: c for c, key in enumerate(END_KEYS)}  # an end's combination


def last_states(first: int = 0) -> dict[int, str]:
    """Return each combination in play (the game starting with ``first`` used) -> the key of the state where it
    alone is left."""
    return {c: state_key(ALL_USED ^ 1 << c) for c in range(len(COMBINATIONS)) if not first >> c & 1}


LAST_STATES = tuple(last_states().values())  # where combination c alone is left, in the whole game


def bob(first: int) -> TurnPolicy:
    """Return Bob, who ranks ending a turn with a combination by minus its average (seed 001's table), from the
    optimal values of :func:`last_states` (a combination out of play: 0, never reached)."""
    lasts = last_states(first)

    def profits(optimal: Mapping[str, float]) -> dict[str, float]:
        return {END_KEYS[c]: -optimal[lasts[c]] if c in lasts else 0.0 for c in range(len(COMBINATIONS))}

    return TurnPolicy("bob", method="agent", needs=tuple(lasts.values()), end_profits=profits)


class SchoolRules(RepeatingTurn):
    """School's turn states (used combinations, a mask) over the five-dice turn; ends ``end:<combination>``."""

    encoder = functools.partial(DecisionBytes, score_byte)

    def __init__(self, params: Mapping[str, Any]):
        self.first, self.params = first_used(params), params
        self.rankings = (bob(self.first),)
        scores = functools.partial(score_moves, params)
        self.turn = FiveDiceTurn(scores)
        self.stored_turn = StoredTurn(scores, stop_after=(2,), ends=[
            (turn_key("end", combination), f"the turn ends with {combination}") for combination in COMBINATIONS])

    @property
    def points_fall(self) -> bool:  # type: ignore[override]
        """Return whether a grade may score below 0: with negative grades (upstream's rule), when asked (the turn's
        structure is made from no parameters)."""
        return self.params["grades"] == "negative"

    @functools.cached_property
    def _points_range(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Return the least and the most any five dice score in each combination (:func:`extreme_points`)."""
        return extreme_points(self.params, min), extreme_points(self.params, max)

    def highest_still(self, state: int) -> float:
        """Return each combination unused in ``state`` at its most (:func:`~dicegraph.graphs.school.game.unused_sum`)."""
        return float(unused_sum(self._points_range[1], state))

    def lowest_still(self, state: int) -> float:
        """Return each combination unused in ``state`` at its least (:func:`~dicegraph.graphs.school.game.unused_sum`)."""
        return float(unused_sum(self._points_range[0], state))

    def first_state(self) -> int:
        """Return the combinations out of play used (nothing when all are in play)."""
        return self.first

    def state_count(self) -> int:
        """Return how many used sets the school phase allows from the first."""
        return sum(1 for used in states() if used & self.first == self.first)

    state_key = staticmethod(state_key)  # ``'used:7'``, the stored state's key

    def state_of(self, key: str) -> int:
        """Return the used mask of ``'used:7'``."""
        return int(key.split(":", 1)[1])

    def state_label(self, state: int) -> str:
        """Return the used combinations."""
        return f"used: {used_text(state)}"

    def end_label(self, end: str) -> str:
        """Return the combination an end scores: how a state's moves name it."""
        return end.split(":", 1)[1]

    def ways_through(self, state: int, ends: Sequence[str]) -> list[tuple[str, Move | Ending]]:
        """Return a move through each open combination's end (written out: it runs once for every state's edge)."""
        last = ALL_USED
        return [(END_KEYS[c], Move(state | 1 << c, COMBINATIONS[c]) if state | 1 << c != last else self._after(state, c))
                for c in open_combinations(state)]

    @staticmethod
    def _after(state: int, c: int) -> Move | Ending:
        """Return where using combination ``c`` leads from ``state`` (the game's end once all are used)."""
        after = state | 1 << c
        if after == ALL_USED:
            return Ending(state_key(after), f"used: {used_text(after)}", 0.0)
        return Move(after, COMBINATIONS[c])

    def through(self, state: int, end: str) -> Move | Ending | None:
        """Return the move to the state with the end's combination used (None where the combination is not open;
        the game is over when every combination is used)."""
        c = END_COMBINATION[end]
        return self._after(state, c) if c in open_combinations(state) else None


def stored_agent(decisions: Mapping[str, bytes]) -> Any:
    """Return a turn agent playing a stored policy's decision bytes (state key -> bytes) over the rules' turn."""
    return stored_turn_agent(decisions, state_key, lambda kind, payload, dice: turn_key("end", COMBINATIONS[payload - 1]))


def rules(params: Mapping[str, Any]) -> TurnsInFull:
    """Return School's rules for ``params`` (straights, grades), the turn copied into each state."""
    return TurnsInFull(SchoolRules(params))
