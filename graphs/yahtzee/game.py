"""Yahtzee (solitaire, the rules of the published optimum; shared/RULES.md): thirteen turns, thirteen boxes; and
Scandinavian Yatzy (``rules=yatzy``): fifteen.

Five dice, up to three rolls a turn keeping any dice; a turn ends by scoring
one open box (0 when the dice don't fit). With ``bonuses=on`` (the default):
the upper bonus (35 once Aces..Sixes total 63), the Yahtzee bonus (100 for
each further Yahtzee once the Yahtzee box holds 50) and the free-choice
joker (a Yahtzee may go in any open box; with the Yahtzee box and the upper
box of its face filled, Full House and the straights then score their full
value: the rule of the published optimum, see :meth:`dicegraph.graphs.yahtzee.boxes.Sheet.is_joker`). With
``bonuses=upper`` the upper bonus alone (the rules of Glenn's 245.87, and of
``yatzy-solver``'s ``american+no-bonus``); with ``bonuses=off`` none.

With ``rules=yatzy`` the sheet is Scandinavian Yatzy's, as ``yatzy-solver``'s
``yatzy-scandinavian`` plays it: ones to sixes, one pair, two pairs, three
and four of a kind (the dice that make them), small straight 1-5 (15), large
straight 2-6 (20), full house (the sum), chance and Yatzy (50); the upper
bonus of 50 at 63 (``bonuses=on``), no Yahtzee bonus, no joker.
``boxes`` plays some boxes only (the others start filled): a game of the
last turns, whose states are the whole game's with those boxes filled.

The graph is School's shape (:mod:`dicegraph.graphs.five_dice`), joined when solving
(``store/solve/turns.py``, as Yahtzee's rules declare), and is what those
rules (:mod:`dicegraph.graphs.yahtzee.rules`) expand to (:func:`dicegraph.graphs.expand.expand_repeating`):

* **Turn states** (layers 0..13, layer = boxes filled): the filled boxes
  (13 bits, bit ``i`` is :data:`BOXES` ``[i]``) and, with bonuses, the upper
  total so far capped at 63 and whether the Yahtzee box holds 50:
  536,448 states (357,632 with the upper bonus alone, 8,192 without bonuses;
  Yatzy's 15 boxes with its upper bonus 1,430,528).
* **The turn**, the same for every state. A box scores the same after any
  roll, so the first two rolls offer ``stop`` (score as after the third)
  and only the third roll's decision has the 13 scoring moves. Each leads to
  an *end* saying what the state needs to know: the box, and with bonuses
  the upper points scored (``end:Threes 9``) or whether the dice were a
  Yahtzee and of which face (``end:Full house with a Yahtzee of 4s``): 71 ends
  with every bonus, 43 with the upper bonus alone, 13 without (Yatzy: 45, 15).
* **State moves**, one per open box and end: the next state, and as reward
  what the state adds to the turn's points: the upper bonus when the upper
  total crosses 63, the Yahtzee bonus, the joker's Full House and straights.

The rules (boxes, scoring, states, ends) are :mod:`dicegraph.graphs.yahtzee.boxes`;
Monte Carlo is :mod:`dicegraph.graphs.yahtzee.play`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.protocol import Edge, Param, one_by_one
from dicegraph.graphs import five_dice
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.yahtzee.boxes import BONUSES, RULES, UPPER, Sheet, open_boxes, sheet_of, upper_totals
from dicegraph.graphs.yahtzee.play import simulator  # noqa: F401  (the game's Monte Carlo)
from dicegraph.graphs.yahtzee.rules import YahtzeeRules

name = "yahtzee"
title = "Yahtzee"
summary = ("Solitaire Yahtzee (13 boxes, with or without bonuses and joker) or Scandinavian Yatzy (15); policies "
           "optimal, greedy, above-average.")
version = 1
objective = "max"
repeating = True  # the five-dice turn is stored once, joined with the turn states (YahtzeeRules)
outcome = "expected final score"


def _bonuses(text: str) -> str | None:
    text = {"true": "on", "1": "on", "false": "off", "0": "off"}.get(text.strip().lower(), text.strip().lower())
    return text if text in BONUSES else None


def _rules(text: str) -> str | None:
    text = text.strip().lower()
    return text if text in RULES else None


params = (
    Param("bonuses", "on", _bonuses, "on: every bonus of the rules (Yahtzee's upper bonus, Yahtzee bonus and "
          "free-choice joker; Yatzy's upper bonus of 50); upper: Yahtzee's upper bonus alone (Glenn's 245.87); "
          "off: none", check=lambda value: value in BONUSES, accepted="on, upper or off"),
    Param("rules", "yahtzee", _rules, "yahtzee: the 13 boxes of Yahtzee; yatzy: the 15 of Scandinavian Yatzy "
          "(one pair, two pairs, straights 1-5 and 2-6, the upper bonus of 50, no joker)",
          accepted="yahtzee or yatzy"),
    Param("boxes", "all", five_dice.names_listed, "the boxes in play, comma-separated (the others start filled), "
          "or all",
          accepted="all or box names, e.g. 'Chance,Yatzy'"),
)
small_params = {"boxes": "Sixes,Full house,Yahtzee"}  # the Yahtzee bonus, the joker (a Yahtzee of sixes in Full
# house once Sixes is filled) and an upper total: few turn states, so that the rules' recursion checks the start


def check_params(values: Mapping[str, Any]) -> None:
    """Raise BadParameter for Yatzy with ``bonuses=upper`` (its one bonus is the upper bonus: ``on`` plays it) and
    for ``boxes`` naming a box the rules do not have, or none.

    >>> check_params({"rules": "yatzy", "bonuses": "on", "boxes": "one pair"})
    >>> check_params({"rules": "yahtzee", "bonuses": "on", "boxes": "one pair"})
    Traceback (most recent call last):
    ...
    dicegraph.graphs.errors.BadParameter: unknown box 'one pair' (known: Aces, Twos, Threes, Fours, Fives, Sixes, Three of a kind, Four of a kind, Full house, Small straight, Large straight, Yahtzee, Chance)
    """
    if values["rules"] == "yatzy" and values["bonuses"] == "upper":
        raise BadParameter("Scandinavian Yatzy's one bonus is its upper bonus: give bonuses=on (or off)")
    sheet_of(values)


POLICIES = ("optimal", "greedy", "above-average")


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return no edge-level agents: the heuristics decide per turn state, see :mod:`dicegraph.graphs.yahtzee.rules`."""
    return ()


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return the graph's edges before building it: the state moves (counted per mask) and the turn's."""
    sheet = sheet_of(params)
    moves = 0
    for filled in range(sheet.all_filled):
        if filled & sheet.first_filled != sheet.first_filled:
            continue
        per_state = sum(_moves_of_box(sheet, box) for box in open_boxes(sheet, filled))
        if sheet.tracks_upper:
            per_state *= len(upper_totals(filled & ~sheet.first_filled & (1 << UPPER) - 1))
        if sheet.tracks_yahtzees and filled >> sheet.yahtzee_box & 1:
            per_state *= 2
        moves += per_state
    return moves + _turn_edges(sheet)


def _moves_of_box(sheet: Sheet, box: int) -> int:
    """Return a state's moves that fill ``box``: one for each end of the box (:func:`~boxes.state_moves`)."""
    if sheet.tracks_yahtzees:
        return 2 if box == sheet.yahtzee_box else 7 if box < UPPER or sheet.is_joker_box(box) else 2
    return 6 if box < UPPER and sheet.tracks_upper else 1


@functools.cache
def _turn_edges(sheet: Sheet) -> int:
    from dicegraph.graphs.expand import expand  # the expander (numpy) when a graph is made, not when listed

    return sum(1 for row in one_by_one(expand(YahtzeeRules(sheet).stored_turn)) if isinstance(row, Edge))
