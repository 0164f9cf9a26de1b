"""Yahtzee (solitaire, the rules of the published optimum; shared/RULES.md): thirteen turns, thirteen boxes.

Five dice, up to three rolls a turn keeping any dice; a turn ends by scoring
one open box (0 when the dice don't fit). With ``bonuses=on`` (the default):
the upper bonus (35 once Aces..Sixes total 63), the Yahtzee bonus (100 for
each further Yahtzee once the Yahtzee box holds 50) and the free-choice
joker (a Yahtzee may go in any open box; with the Yahtzee box and the upper
box of its face filled, Full House and the straights then score their full
value: the rule of the published optimum, see :func:`dicegraph.graphs.yahtzee.boxes.is_joker`). With
``bonuses=upper`` the upper bonus alone (the rules of Glenn's 245.87, and of
``yatzy-solver``'s ``american+no-bonus``); with ``bonuses=off`` none.

The graph is School's shape (:mod:`dicegraph.graphs.five_dice`), joined when solving
(``store/solve/turns.py``, as Yahtzee's rules declare), and is what those
rules (:mod:`dicegraph.graphs.yahtzee.rules`) expand to (:func:`dicegraph.graphs.expand.expand_repeating`):

* **Turn states** (layers 0..13, layer = boxes filled): the filled boxes
  (13 bits, bit ``i`` is :data:`BOXES` ``[i]``) and, with bonuses, the upper
  total so far capped at 63 and whether the Yahtzee box holds 50:
  536,448 states (357,632 with the upper bonus alone, 8,192 without bonuses).
* **The turn**, the same for every state. A box scores the same after any
  roll, so the first two rolls offer ``stop`` (score as after the third)
  and only the third roll's decision has the 13 scoring moves. Each leads to
  an *end* saying what the state needs to know: the box, and with bonuses
  the upper points scored (``end:Threes 9``) or whether the dice were a
  Yahtzee and of which face (``end:Full house with a Yahtzee of 4s``): 71 ends
  with every bonus, 43 with the upper bonus alone, 13 without.
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

from dicegraph.graphs.expand import expand
from dicegraph.graphs.protocol import Edge, Param, one_by_one
from dicegraph.graphs.yahtzee.boxes import (ALL_FILLED, BONUSES, JOKER_BOXES, UPPER, YAHTZEE, open_boxes, tracks_upper,
                                            tracks_yahtzees, upper_totals)
from dicegraph.graphs.yahtzee.play import simulator  # noqa: F401  (the game's Monte Carlo)
from dicegraph.graphs.yahtzee.rules import YahtzeeRules

name = "yahtzee"
title = "Yahtzee"
summary = "Solitaire Yahtzee, 13 boxes, with or without bonuses and joker; policies optimal, greedy, above-average."
version = 1
objective = "max"
repeating = True  # the five-dice turn is stored once, joined with the turn states (YahtzeeRules)
outcome = "expected final score"


def _bonuses(text: str) -> str | None:
    text = {"true": "on", "1": "on", "false": "off", "0": "off"}.get(text.strip().lower(), text.strip().lower())
    return text if text in BONUSES else None


params = (
    Param("bonuses", "on", _bonuses, "on: upper bonus, Yahtzee bonus and free-choice joker; upper: the upper bonus "
          "alone (Glenn's 245.87); off: none", check=lambda value: value in BONUSES, accepted="on, upper or off"),
)
small_params = {"bonuses": "off"}
POLICIES = ("optimal", "greedy", "above-average")


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return no edge-level agents: the heuristics decide per turn state, see :mod:`dicegraph.graphs.yahtzee.rules`."""
    return ()


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return the graph's edges before building it: the state moves (counted per mask) and the turn's."""
    bonuses = params["bonuses"]
    moves = 0
    for filled in range(ALL_FILLED):
        if not tracks_upper(bonuses):
            moves += len(open_boxes(filled))
        elif not tracks_yahtzees(bonuses):
            per_state = sum(6 if box < UPPER else 1 for box in open_boxes(filled))
            moves += per_state * len(upper_totals(filled & (1 << UPPER) - 1))
        else:
            per_state = sum(7 if box < UPPER else 7 if box in JOKER_BOXES else 2 for box in open_boxes(filled))
            moves += per_state * len(upper_totals(filled & (1 << UPPER) - 1)) * (2 if filled >> YAHTZEE & 1 else 1)
    return moves + _turn_edges(bonuses)


@functools.cache
def _turn_edges(bonuses: str) -> int:
    return sum(1 for row in one_by_one(expand(YahtzeeRules(bonuses).stored_turn)) if isinstance(row, Edge))
