"""Yahtzee's advisor: at a moment of a turn, every alternative's worth under a policy, and each policy's choice.

It asks for the boxes filled and, where the graph's bonuses need them, the
upper total so far and whether the Yahtzee box holds 50; the dice and the rerolls
left; and the policy. The advice is :mod:`dicegraph.graphs.five_dice_advice`'s, as for School.
"""

from __future__ import annotations

from collections.abc import Mapping

from dicegraph.graphs.advice import Advice, Advisor, Question, parse_int
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.five_dice import box_mask
from dicegraph.graphs.five_dice_advice import ROLL_QUESTIONS, policy_question, turn_advice
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import StoredGraph
import dicegraph.graphs.yahtzee.boxes as rules
from dicegraph.graphs.yahtzee.game import POLICIES


def parse_state(answers: Mapping[str, str], sheet: rules.Sheet) -> rules.State:
    """Return the turn state the answers name (``filled``, ``upper``, ``yahtzee_50``); BadParameter if unreachable.
    The boxes out of play are filled whether named or not.

    >>> parse_state({"filled": "Aces, chance", "upper": "3", "yahtzee_50": "no"}, rules.Sheet("yahtzee", "upper"))
    State(filled=4097, upper=3, yahtzee_50=False)
    """
    filled = box_mask(answers.get("filled", ""), sheet.boxes) | sheet.first_filled
    if filled == sheet.all_filled:
        raise BadParameter("every box is filled: the game is over")
    upper = parse_int(answers, "upper", 0, rules.UPPER_BONUS_AT) if sheet.tracks_upper else 0
    state = rules.State(filled, upper, sheet.tracks_yahtzees and answers.get("yahtzee_50") == "yes")
    if state not in rules.states(sheet):
        raise BadParameter(f"no game reaches {rules.state_text(state, sheet)!r}: the upper total must be one the "
                           "filled upper boxes can score (capped at 63), and the Yahtzee box holds 50 only once filled")
    return state


def _advice(graph: StoredGraph, answers: Mapping[str, str]) -> Advice:
    """Return the explorer's advice at the moment the answers describe, on the graph's sheet."""
    sheet = rules.sheet_of(graph.params)
    state = parse_state(answers, sheet)
    return turn_advice(graph, answers, POLICIES, rules.state_key(state, sheet), rules.state_text(state, sheet),
                       sheet.boxes)


ADVISOR = Advisor(
    "What to do with this roll",
    (*ROLL_QUESTIONS,
     Question("filled", "Boxes filled", "Sixes,Chance", "comma-separated box names, blank for none", required=False),
     Question("upper", "Upper total so far", "18", "the upper boxes' points so far, 0..63 (capped)", default="0",
              when=lambda params: rules.sheet_of(params).tracks_upper),
     Question("yahtzee_50", "Yahtzee box holds 50", "no", "whether a Yahtzee was scored 50", choices=("no", "yes"),
              default="no", when=lambda params: rules.sheet_of(params).tracks_yahtzees),
     policy_question(POLICIES)),
    _advice, "expected points still to come, this turn's included (bonuses as the graph plays them)")


@hookimpl
def advisor() -> Advisor:
    """Return the game's advisor: the explorer's advice page."""
    return ADVISOR
