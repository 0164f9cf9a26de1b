"""Monte Carlo of whole Yahtzee games, played from the rules with a stored policy's decision bytes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.five_dice import OUTCOMES, SCORE, play_turns
import dicegraph.graphs.yahtzee.boxes as rules


def simulator(params: Mapping[str, Any], policy: Any) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` whole games with a numpy generator; their final scores.

    ``policy`` is a stored policy's decisions: the states' keys and a uint8
    array ``[state index, outcome, rerolls left]`` (:func:`dicegraph.graphs.yahtzee.stored.decision_array`).
    The scoring, the bonuses and the joker are applied here, from the rules;
    a decision the rules don't allow is an error.
    """
    import numpy as np

    if isinstance(policy, str):
        raise DicegraphError(f"yahtzee plays stored policies only (see dicegraph report yahtzee), not {policy!r}")
    sheet = rules.sheet_of(params)
    keys, decisions = policy
    known = {rules.state_key(state, sheet) for state in rules.states(sheet)}
    stranger = next((key for key in keys if key not in known), None)
    if stranger is not None:
        raise DicegraphError(f"the decisions hold a state {stranger!r} that {sheet} does not have")
    state_index = np.full((sheet.all_filled + 1, rules.UPPER_BONUS_AT + 1, 2), -1, dtype=np.int32)
    for i, key in enumerate(keys):
        state = rules.parse_state_key(key)
        state_index[state.filled, state.upper, int(state.yahtzee_50)] = i
    boxes = range(len(sheet.boxes))
    points = np.array([[sheet.points(box, dice) for box in boxes] for dice in OUTCOMES])
    joker = (np.array([[sheet.joker_points(box, dice) for box in boxes] for dice in OUTCOMES]) if sheet.tracks_yahtzees
             else points)
    yahtzee = np.array([rules.is_yahtzee(dice) for dice in OUTCOMES])
    face = np.array([dice[0] for dice in OUTCOMES])

    def score(filled: Any, upper: Any, y50: Any, outcome: Any, box: Any) -> tuple[Any, Any, Any, Any]:
        """Return the points of scoring ``box`` and the next (filled, upper, y50), for arrays of games."""
        gained = points[outcome, box]
        if sheet.tracks_yahtzees:
            rolled = yahtzee[outcome]
            is_joker = rolled & (filled >> sheet.yahtzee_box & 1 == 1) & (filled >> (face[outcome] - 1) & 1 == 1)
            gained = np.where(is_joker, joker[outcome, box], gained)
            gained = gained + np.where(rolled & y50, rules.YAHTZEE_BONUS, 0)
            y50 = y50 | ((box == sheet.yahtzee_box) & rolled)
        if not sheet.tracks_upper:
            return gained, filled | 1 << box, upper, y50
        in_upper = box < rules.UPPER
        new_upper = np.minimum(rules.UPPER_BONUS_AT, upper + np.where(in_upper, points[outcome, box], 0))
        gained = gained + np.where((upper < rules.UPPER_BONUS_AT) & (new_upper >= rules.UPPER_BONUS_AT),
                                   sheet.upper_bonus, 0)
        return gained, filled | 1 << box, new_upper, y50

    def play(games: int, rng: Any) -> Any:
        filled = np.full(games, sheet.first_filled, dtype=np.int64)
        upper = np.zeros(games, dtype=np.int64)
        y50 = np.zeros(games, dtype=bool)
        total = np.zeros(games)

        def decide(playing: Any, outcome: Any, rerolls_left: int) -> Any:
            at = state_index[filled[playing], upper[playing], y50[playing].astype(np.int64)]
            return decisions[at, outcome, rerolls_left]

        def score_box(ending: Any, outcome: Any, box: Any, roll: int) -> None:
            if (filled[ending] >> box & 1).any():
                raise DicegraphError("the stored decisions score a box that is filled already")
            gained, filled[ending], upper[ending], y50[ending] = score(
                filled[ending], upper[ending], y50[ending], outcome, box)
            total[ending] += gained

        play_turns(games, sheet.turns, rng, decide, score_box, scoring_kinds=(SCORE,))
        return total

    return play
