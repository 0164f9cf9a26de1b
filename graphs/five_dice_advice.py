"""Advice at a moment of a five-dice turn (School, Yahtzee): every alternative's worth, and each policy's decision.

The turn is stored once (:mod:`dicegraph.graphs.five_dice`); the store solves the turn
of the one state asked about from the stored values of the states after it
(``StoredTurn.worths``). After a roll the player scores (where the
game lets the roll score: after a roll whose only move is ``stop`` the
scoring happens as after the third roll) or keeps some dice and rerolls the
rest; a keep is worth what its ``k`` node is worth.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dicegraph.graphs import five_dice
from dicegraph.graphs.advice import Advice, Alternative, Question, dice_faces, parse_int
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.protocol import StoredGraph

ROLL_QUESTIONS = (  # what every five-dice advisor asks first
    Question("roll", "Dice showing", "1,2,2,4,5", "five dice, 1..6"),
    Question("rolls_left", "Rerolls left", "2", "2 after the first roll, 0 after the third", choices=("2", "1", "0"),
             default="2"),
)


class Worth(NamedTuple):
    """One thing the player may do, with what it is worth under a policy."""

    move: str  # e.g. "reroll 1-4-5 (keep 2-2)", "score Pair", "cross out Poker"
    value: float  # expected points still to come, this turn's included
    profit: float  # what the policy ranks moves by (its value for the optimum; an agent's own profit)


def alternatives(graph: StoredGraph, policy: str, state: str, dice: tuple[int, ...], rerolls_left: int) -> list[Worth]:
    """Return every alternative at turn state ``state`` with ``dice`` showing, best (by the policy's profit) first.

    Ties keep the order the turn graph streams its moves in, as the solve does.
    """
    if not 0 <= rerolls_left < five_dice.ROLLS:
        raise BadParameter(f"rerolls left must be 0..{five_dice.ROLLS - 1} (not {rerolls_left})")
    worth = graph.turn.worths(policy, state)
    roll = five_dice.ROLLS - rerolls_left
    moves = graph.position(five_dice.turn_key(f"r{roll}", dice), depth=1)["edges"]
    if any(move["label"] == "stop" for move in moves):  # this roll scores as the third does
        moves = graph.position(five_dice.turn_key(f"r{five_dice.ROLLS}", dice), depth=1)["edges"]
    found = [Worth(move["label"], move["reward"] + worth[move["to"]][1], move["reward"] + worth[move["to"]][0])
             for move in moves if not move["label"].startswith("reroll a ") and move["to"] in worth]
    if roll < five_dice.ROLLS:
        for kept in five_dice.sub_multisets(dice):
            if len(kept) < five_dice.DICE:
                profit, value = worth[five_dice.turn_key(f"k{roll + 1}", kept)]
                move = five_dice.describe_decision(five_dice.keep_byte(dice, kept), dice, ())
                found.append(Worth(move, value, profit))
    return sorted(found, key=lambda a: -a.profit)


def decisions(graph: StoredGraph, policies: tuple[str, ...], state: str, dice: tuple[int, ...], rerolls_left: int,
              boxes: tuple[str, ...]) -> dict[str, str]:
    """Return each policy's stored decision at the moment, in words (``boxes``: the game's box names)."""
    position = five_dice.OUTCOME_INDEX[dice] * five_dice.ROLLS + rerolls_left
    return {name: five_dice.describe_decision(graph.turn.state(name, state)[2][position], dice, boxes)
            for name in policies}


def advise_turn(graph: StoredGraph, policy: str, policies: tuple[str, ...], state: str, dice: tuple[int, ...],
                rerolls_left: int, boxes: tuple[str, ...]) -> dict[str, Any]:
    """Return ``{"decision", "alternatives": [{"move", "value", "profit"}], "others": {policy: decision}, "agree"}``:
    the decision of ``policy``, every alternative best first, and the other ``policies``' decisions."""
    decided = decisions(graph, policies, state, dice, rerolls_left, boxes)
    return {
        "decision": decided[policy],
        "alternatives": [a._asdict() for a in alternatives(graph, policy, state, dice, rerolls_left)],
        "others": {other: move for other, move in decided.items() if other != policy},
        "agree": len(set(decided.values())) == 1,
    }


def policy_question(policies: tuple[str, ...]) -> Question:
    """Return the question of which stored policy advises (the first of ``policies`` by default)."""
    return Question("policy", "Advised by", policies[0], "the policy to follow", choices=policies, default=policies[0])


def turn_advice(graph: StoredGraph, answers: Mapping[str, str], policies: tuple[str, ...], state: str,
                state_text: str, boxes: tuple[str, ...]) -> Advice:
    """Return the explorer's advice at turn state ``state`` (described as ``state_text``) for the answers to
    :data:`ROLL_QUESTIONS` and :func:`policy_question`: an agent's own profit gets a column of its own."""
    dice = five_dice.parse_roll(answers["roll"])
    left = parse_int(answers, "rolls_left", 0, five_dice.ROLLS - 1)
    policy = answers["policy"]
    found = advise_turn(graph, policy, policies, state, dice, left, boxes)
    notes = (lambda a: {}) if policy == policies[0] else (lambda a: {f"{policy}'s profit": a["profit"]})
    rerolls = f"{left} reroll{'' if left == 1 else 's'} left"
    return Advice(f"roll {dice_faces(dice)} ({'-'.join(map(str, dice))}), {rerolls}; {state_text}", policy,
                  [Alternative(a["move"], a["value"], notes=notes(a)) for a in found["alternatives"]],
                  decision=found["decision"], others=found["others"])
