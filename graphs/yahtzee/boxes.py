"""Yahtzee's boxes and their scoring, its turn states and the ends of its turn (shared/RULES.md).

Everything here is the rules: :mod:`dicegraph.graphs.yahtzee.game` builds the graph
from them and :mod:`dicegraph.graphs.yahtzee.play` plays games with them.

>>> box_points(BOXES.index("Full house"), (2, 2, 5, 5, 5)), box_points(BOXES.index("Small straight"), (1, 2, 3, 4, 6))
(25, 30)
>>> joker_points(BOXES.index("Full house"), (3, 3, 3, 3, 3)), box_points(BOXES.index("Full house"), (3, 3, 3, 3, 3))
(25, 0)
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from dicegraph.graphs import five_dice
from dicegraph.graphs.five_dice import OUTCOMES, turn_key
from dicegraph.graphs.rules import Move

BOXES = (
    "Aces", "Twos", "Threes", "Fours", "Fives", "Sixes",
    "Three of a kind", "Four of a kind", "Full house", "Small straight", "Large straight", "Yahtzee", "Chance",
)
UPPER = 6  # boxes 0..5 are the upper section
FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT, YAHTZEE = (BOXES.index(box) for box in (
    "Full house", "Small straight", "Large straight", "Yahtzee"))
FIXED_POINTS = {FULL_HOUSE: 25, SMALL_STRAIGHT: 30, LARGE_STRAIGHT: 40, YAHTZEE: 50}
JOKER_BOXES = (FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT)  # full value for a Yahtzee as joker
ALL_FILLED = (1 << len(BOXES)) - 1
UPPER_BONUS_AT, UPPER_BONUS = 63, 35
YAHTZEE_BONUS = 100


# --- scoring -----------------------------------------------------------------------------------------------


def box_index(text: str) -> int:
    """Return the index of a box named as in RULES.md (case and spaces forgiven).

    >>> box_index("full House"), box_index("sixes")
    (8, 5)
    """
    return five_dice.box_index(text, BOXES)


def is_yahtzee(dice: Sequence[int]) -> bool:
    """Return whether the five dice show one face."""
    return len(set(dice)) == 1


def box_points(box: int, dice: Sequence[int]) -> int:
    """Return what ``dice`` score in ``box`` by the printed rules, no joker (0 when they don't fit).

    >>> box_points(BOXES.index("Threes"), (3, 3, 1, 3, 6)), box_points(BOXES.index("Four of a kind"), (2, 2, 2, 2, 6))
    (9, 14)
    >>> box_points(BOXES.index("Full house"), (4, 4, 4, 4, 4))
    0
    """
    counts = Counter(dice)
    if box < UPPER:
        return (box + 1) * counts[box + 1]
    shape = sorted(counts.values())
    faces = set(dice)
    made = {
        "Three of a kind": shape[-1] >= 3,
        "Four of a kind": shape[-1] >= 4,
        "Full house": shape == [2, 3],
        "Small straight": any(run <= faces for run in ({1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6})),
        "Large straight": faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}),
        "Yahtzee": shape == [5],
        "Chance": True,
    }[BOXES[box]]
    return (FIXED_POINTS.get(box, sum(dice))) if made else 0


def is_joker(filled: int, face: int) -> bool:
    """Return whether a Yahtzee of ``face`` is a joker: the Yahtzee box and the upper box of ``face`` are filled.

    Then Full House and the straights score their full value (the rule of
    the published optimum: Verhoeff 1999, Glenn 2006; ``yatzy-solver``'s
    ``american``). It may go in any open box either way.

    >>> is_joker(1 << YAHTZEE | 1 << 4, 5), is_joker(1 << YAHTZEE, 5)
    (True, False)
    """
    return bool(filled >> YAHTZEE & 1 and filled >> (face - 1) & 1)


def joker_points(box: int, dice: Sequence[int]) -> int:
    """Return what a Yahtzee scores in ``box`` as a joker: Full House and the straights their full value.

    >>> joker_points(BOXES.index("Large straight"), (6, 6, 6, 6, 6)), joker_points(BOXES.index("Chance"), (6,) * 5)
    (40, 30)
    """
    return FIXED_POINTS[box] if box in JOKER_BOXES else box_points(box, dice)


# --- turn states -------------------------------------------------------------------------------------------


class State(NamedTuple):
    """A turn state: the boxes filled (a mask), the upper total capped at 63, whether the Yahtzee box holds 50."""

    filled: int
    upper: int = 0
    yahtzee_50: bool = False


def open_boxes(filled: int) -> tuple[int, ...]:
    """Return the boxes not yet filled."""
    return tuple(box for box in range(len(BOXES)) if not filled >> box & 1)


@functools.cache
def upper_totals(upper_filled: int) -> frozenset[int]:
    """Return the upper totals (capped at 63) that the filled upper boxes ``upper_filled`` (6 bits) can hold."""
    totals = {0}
    for box in range(UPPER):
        if upper_filled >> box & 1:
            totals = {min(UPPER_BONUS_AT, total + (box + 1) * count) for total in totals for count in range(6)}
    return frozenset(totals)


BONUSES = ("on", "upper", "off")  # every bonus and the joker; the upper bonus alone; none


def tracks_upper(bonuses: str) -> bool:
    """Return whether the states carry the upper total (the upper bonus is played)."""
    return bonuses != "off"


def tracks_yahtzees(bonuses: str) -> bool:
    """Return whether the Yahtzee bonus and the joker are played (the states carry the Yahtzee box's 50)."""
    return bonuses == "on"


@functools.cache
def states(bonuses: str) -> tuple[State, ...]:
    """Return the reachable turn states, by boxes filled, then mask, upper total and Yahtzee flag.

    >>> [len(states(bonuses)) for bonuses in BONUSES]
    [536448, 357632, 8192]
    """
    found = []
    for filled in range(ALL_FILLED + 1):
        if not tracks_upper(bonuses):
            found.append(State(filled))
            continue
        flags = (False, True) if tracks_yahtzees(bonuses) and filled >> YAHTZEE & 1 else (False,)
        found += [State(filled, upper, flag) for upper in sorted(upper_totals(filled & (1 << UPPER) - 1))
                  for flag in flags]
    return tuple(sorted(found, key=lambda s: (bin(s.filled).count("1"), s)))


def state_key(state: State, bonuses: str) -> str:
    """Return the node key of a turn state: ``'filled:5'``, ``'filled:5 upper:4'`` or ``'filled:5 upper:4 y50:0'``."""
    key = f"filled:{state.filled}"
    if tracks_upper(bonuses):
        key += f" upper:{state.upper}"
    if tracks_yahtzees(bonuses):
        key += f" y50:{int(state.yahtzee_50)}"
    return key


def bonuses_of_key(key: str) -> str:
    """Return the bonus setting whose states have keys like ``key``.

    >>> bonuses_of_key("filled:5 upper:4"), bonuses_of_key("filled:5")
    ('upper', 'off')
    """
    return "on" if " y50:" in key else "upper" if " upper:" in key else "off"


def parse_state_key(key: str) -> State:
    """Return the state a key names (the inverse of :func:`state_key`).

    >>> parse_state_key("filled:5 upper:4 y50:1")
    State(filled=5, upper=4, yahtzee_50=True)
    """
    fields = dict(part.split(":") for part in key.split())
    return State(int(fields["filled"]), int(fields.get("upper", 0)), fields.get("y50") == "1")


def state_text(state: State, bonuses: str) -> str:
    """Return a state in words, e.g. ``'filled: Aces, Chance; upper 3'``."""
    text = "filled: " + (", ".join(BOXES[box] for box in range(len(BOXES)) if state.filled >> box & 1) or "none")
    if tracks_upper(bonuses):
        text += f"; upper {state.upper}"
    return text + ("; Yahtzee box holds 50" if state.yahtzee_50 else "")


# --- the turn's ends ----------------------------------------------------------------------------------------


def end_label(box: int, dice: Sequence[int], bonuses: str) -> str:
    """Return the end a turn scoring ``dice`` in ``box`` reaches, as the state moves name it.

    The box, and what the state needs to know besides: an upper box's points
    when the upper total counts; when the Yahtzee bonus and the joker count,
    whether the dice were a Yahtzee, and for the joker's boxes (Full house,
    the straights) its face: the joker needs that face's upper box filled.

    >>> end_label(2, (3, 3, 3, 1, 2), "on"), end_label(12, (4,) * 5, "on"), end_label(8, (4,) * 5, "on")
    ('Threes 9', 'Chance with a Yahtzee', 'Full house with a Yahtzee of 4s')
    >>> end_label(12, (4,) * 5, "upper")
    'Chance'
    """
    if tracks_yahtzees(bonuses):
        if box == YAHTZEE:
            return f"Yahtzee {box_points(box, dice)}"
        if is_yahtzee(dice) and box in JOKER_BOXES:
            return f"{BOXES[box]} with a Yahtzee of {dice[0]}s"
        if is_yahtzee(dice) and not (box < UPPER and dice[0] == box + 1):
            return f"{BOXES[box]} with a Yahtzee"
    if box < UPPER and tracks_upper(bonuses):
        return f"{BOXES[box]} {box_points(box, dice)}"
    return BOXES[box]


def end_labels(bonuses: str) -> tuple[str, ...]:
    """Return every end of the turn, in the order of the boxes.

    >>> [len(end_labels(bonuses)) for bonuses in BONUSES]
    [71, 43, 13]
    """
    return tuple(dict.fromkeys(end_label(box, dice, bonuses) for box in range(len(BOXES)) for dice in OUTCOMES))


def end_boxes(bonuses: str) -> dict[str, int]:
    """Return each end of the turn -> the box it fills.

    >>> end_boxes("on")["Full house with a Yahtzee of 3s"], end_boxes("off")["Chance"]
    (8, 12)
    """
    return {end_label(box, dice, bonuses): box for box in range(len(BOXES)) for dice in OUTCOMES}


@functools.cache
def end_key(label: str) -> str:
    """Return the key of the turn's end ``label``."""
    return turn_key("end", label)


def state_moves(state: State, bonuses: str) -> Iterator[Move]:
    """Yield the state's moves, one for each end of each open box, labelled like the end: where the state goes
    when its turn reaches that end, and what the state adds to the turn's points there.

    >>> [(m.label, m.reward) for m in state_moves(State(0b100000001000, 60, True), "on") if m.label in ("Sixes 30", "Aces 2")]
    [('Aces 2', 0.0), ('Sixes 30', 135.0)]
    """
    upper_bonus, yahtzees = tracks_upper(bonuses), tracks_yahtzees(bonuses)
    bonus = YAHTZEE_BONUS if state.yahtzee_50 else 0
    for box in open_boxes(state.filled):
        filled = state.filled | 1 << box
        if box == YAHTZEE and yahtzees:
            yield Move(State(filled, state.upper, False), "Yahtzee 0", 0.0)
            yield Move(State(filled, state.upper, True), "Yahtzee 50", 0.0)
            continue
        if box < UPPER and upper_bonus:
            for count in range(6):
                points = (box + 1) * count
                upper = min(UPPER_BONUS_AT, state.upper + points)
                crossed = UPPER_BONUS if state.upper < UPPER_BONUS_AT <= state.upper + points else 0
                yield Move(State(filled, upper, state.yahtzee_50), f"{BOXES[box]} {points}",
                           float(crossed + (bonus if count == 5 else 0)))
        else:
            yield Move(State(filled, state.upper, state.yahtzee_50), BOXES[box], 0.0)
        if yahtzees and box in JOKER_BOXES:
            for face in range(1, 7):
                joker = FIXED_POINTS[box] if is_joker(state.filled, face) else 0
                yield Move(State(filled, state.upper, state.yahtzee_50), f"{BOXES[box]} with a Yahtzee of {face}s",
                           float(joker + bonus))
        elif yahtzees:
            yield Move(State(filled, state.upper, state.yahtzee_50), f"{BOXES[box]} with a Yahtzee", float(bonus))


def score_moves(bonuses: str, dice: tuple[int, ...], roll: int) -> Iterator[tuple[str, str, float]]:
    """Yield the third roll's scoring moves: each box, its printed points (bonuses and joker are the state's)."""
    for box, name_ in enumerate(BOXES):
        yield f"score {name_}", end_key(end_label(box, dice, bonuses)), float(box_points(box, dice))
