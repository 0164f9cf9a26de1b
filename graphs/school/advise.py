"""School's advisor: at a turn position, every alternative with its worth under a policy, and each policy's choice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.advice import Advice, Advisor, Question
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.five_dice_advice import ROLL_QUESTIONS, advise_turn, policy_question, turn_advice
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import StoredGraph
import dicegraph.graphs.school.game as rules


def advise(graph: StoredGraph, name: str, used: int, dice: tuple[int, ...], rerolls_left: int) -> dict[str, Any]:
    """Return the decision of policy ``name`` at a turn position, every alternative's worth, and the other policy's.

    ``{"used", "roll", "rerolls_left", "policy", "decision", "alternatives": [{"move", "value", "profit"}],
    "others": {policy: decision}, "agree"}``. Values are expected points still to come, this turn's
    included, in the graph's scoring convention; ``profit`` is what the policy ranks moves by
    (:func:`dicegraph.graphs.five_dice_advice.advise_turn`).
    """
    if not 0 <= rerolls_left < rules.ROLLS:
        raise BadParameter(f"--rolls-left must be 0..{rules.ROLLS - 1} (not {rerolls_left})")
    return {
        "used": [c for i, c in enumerate(rules.COMBINATIONS) if used >> i & 1],
        "roll": list(dice),
        "rerolls_left": rerolls_left,
        "policy": name,
        **advise_turn(graph, name, rules.POLICIES, rules.state_key(used), dice, rerolls_left, rules.COMBINATIONS),
    }


def _advice(graph: StoredGraph, answers: Mapping[str, str]) -> Advice:
    """Return the explorer's advice for the answers (used, roll, rolls_left, policy)."""
    used = rules.parse_used(answers["used"]) | rules.first_used(graph.params)
    if used == rules.ALL_USED:
        raise BadParameter("every combination is used: the game is over")
    text = f"used: {', '.join(c for i, c in enumerate(rules.COMBINATIONS) if used >> i & 1) or 'nothing yet'}"
    return turn_advice(graph, answers, rules.POLICIES, rules.state_key(used), text, rules.COMBINATIONS)


ADVISOR = Advisor(
    "What to do with this roll",
    (*ROLL_QUESTIONS,
     Question("used", "Combinations used", "Grade 1,Grade 3,Grade 5,Pair", "comma-separated names from RULES.md, blank for none",
              required=False),
     policy_question(rules.POLICIES)),
    _advice, "expected points still to come, this turn's included, scored as the graph's rules say (grades)")


@hookimpl
def advisor() -> Advisor:
    """Return the game's advisor: the explorer's advice page."""
    return ADVISOR
