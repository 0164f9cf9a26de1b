"""School's advisor: at a turn position, every alternative with its worth under a policy, and each policy's choice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.advice import Advice, Advisor, Alternative as Move, Question, dice_faces, parse_int
from graphs.errors import BadParameter
from graphs.five_dice_advice import advise_turn
from graphs.protocol import StoredGraph
from graphs.school import game as rules


def advise(graph: StoredGraph, name: str, used: int, dice: tuple[int, ...], rerolls_left: int) -> dict[str, Any]:
    """Return the decision of policy ``name`` at a turn position, every alternative's worth, and the other policy's.

    ``{"used", "roll", "rerolls_left", "policy", "decision", "alternatives": [{"move", "value", "profit"}],
    "others": {policy: decision}, "agree"}``. Values are expected points still to come, this turn's
    included, in the graph's scoring convention; ``profit`` is what the policy ranks moves by
    (:func:`graphs.five_dice_advice.advise_turn`).
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
    """Return :func:`advise`'s answer as the explorer's advice (answers: used, roll, rolls_left, policy)."""
    used, dice = rules.parse_used(answers["used"]), rules.parse_roll(answers["roll"])
    left = parse_int(answers, "rolls_left", 0, rules.ROLLS - 1)
    found = advise(graph, answers["policy"], used, dice, left)
    notes = (lambda a: {"Bob's profit": a["profit"]}) if answers["policy"] == "bob" else (lambda a: {})
    rerolls = f"{left} reroll{'' if left == 1 else 's'} left"
    return Advice(f"roll {dice_faces(dice)} ({'-'.join(map(str, dice))}), {rerolls}; used: {', '.join(found['used']) or 'nothing yet'}",
                  answers["policy"], [Move(a["move"], a["value"], notes=notes(a)) for a in found["alternatives"]],
                  decision=found["decision"], others=found["others"])


# The game's ``advisor`` hook (the explorer's advice page): the optimal move or Bob's, every alternative's value.
advisor = Advisor(
    "What to do with this roll",
    (Question("roll", "Dice showing", "1,2,2,4,5", "five dice, 1..6"),
     Question("rolls_left", "Rerolls left", "2", "2 after the first roll, 0 after the third", choices=("2", "1", "0"),
              default="2"),
     Question("used", "Combinations used", "Grade 1,Pair", "comma-separated names from RULES.md, blank for none",
              required=False),
     Question("policy", "Advised by", "optimal", "the policy to follow", choices=rules.POLICIES, default="optimal")),
    _advice, "expected points still to come, this turn's included, scored as the graph's rules say (grades)")
