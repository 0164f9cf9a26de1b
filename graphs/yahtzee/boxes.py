"""The score sheets of Yahtzee and Scandinavian Yatzy, their scoring, turn states and the ends of a turn
(shared/RULES.md for Yahtzee; Yatzy as ``yatzy-solver``'s ``yatzy-scandinavian`` plays it).

A :class:`Sheet` is what a game is played with: the rules' boxes (``yahtzee``, 13 boxes; ``yatzy``, 15),
the bonuses played (``on``, ``upper``, ``off``) and the boxes in play (the others start filled). Everything
here is the rules: :mod:`dicegraph.graphs.yahtzee.game` builds the graph from them and
:mod:`dicegraph.graphs.yahtzee.play` plays games with them.

>>> YAHTZEE = Sheet()
>>> YAHTZEE.points(YAHTZEE.box("Full house"), (2, 2, 5, 5, 5)), YAHTZEE.points(YAHTZEE.box("Small straight"), (1, 2, 3, 4, 6))
(25, 30)
>>> YAHTZEE.joker_points(YAHTZEE.box("Full house"), (3, 3, 3, 3, 3)), YAHTZEE.points(YAHTZEE.box("Full house"), (3, 3, 3, 3, 3))
(25, 0)
>>> YATZY = Sheet("yatzy")
>>> YATZY.points(YATZY.box("Two pairs"), (2, 2, 5, 5, 6)), YATZY.points(YATZY.box("Full house"), (2, 2, 5, 5, 5))
(14, 19)
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from dicegraph.graphs import five_dice
from dicegraph.graphs.five_dice import OUTCOMES, turn_key
from dicegraph.graphs.rules import Move

YAHTZEE_BOXES = (
    "Aces", "Twos", "Threes", "Fours", "Fives", "Sixes",
    "Three of a kind", "Four of a kind", "Full house", "Small straight", "Large straight", "Yahtzee", "Chance",
)
YATZY_BOXES = (  # in yatzy-solver's order of categories
    "Ones", "Twos", "Threes", "Fours", "Fives", "Sixes", "One pair", "Two pairs", "Three of a kind",
    "Four of a kind", "Small straight", "Large straight", "Full house", "Chance", "Yatzy",
)
RULES = {"yahtzee": YAHTZEE_BOXES, "yatzy": YATZY_BOXES}  # the rules a sheet may follow -> its boxes
BONUSES = ("on", "upper", "off")  # every bonus of the rules (and Yahtzee's joker); the upper bonus alone; none
UPPER = 6  # boxes 0..5 are the upper section, in both rules
UPPER_BONUS_AT = 63
UPPER_BONUS = {"yahtzee": 35, "yatzy": 50}
YAHTZEE_BONUS = 100
FIXED_POINTS = {  # the boxes that score a fixed number of points when the dice fit
    "yahtzee": {"Full house": 25, "Small straight": 30, "Large straight": 40, "Yahtzee": 50},
    "yatzy": {"Small straight": 15, "Large straight": 20, "Yatzy": 50},
}
JOKER_BOXES = ("Full house", "Small straight", "Large straight")  # Yahtzee's joker scores them at full value


def _made(name: str, dice: Sequence[int]) -> bool:
    """Return whether ``dice`` fit Yahtzee's lower box ``name``, or Yatzy's full house, chance or Yatzy (the same
    shapes; Yatzy's other boxes score by :func:`_yatzy_points`)."""
    counts = Counter(dice)
    shape = sorted(counts.values())
    faces = set(dice)
    return {
        "Three of a kind": shape[-1] >= 3,
        "Four of a kind": shape[-1] >= 4,
        "Full house": shape == [2, 3],
        "Small straight": any(run <= faces for run in ({1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6})),
        "Large straight": faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}),
        "Yahtzee": shape == [5],
        "Yatzy": shape == [5],
        "Chance": True,
    }[name]


def _yatzy_points(name: str, dice: Sequence[int]) -> int:
    """Return what ``dice`` score in Yatzy's lower box ``name``: the dice that make it, 15, 20 or 50 (0 when unmade)."""
    counts = Counter(dice)
    if name in ("Small straight", "Large straight"):
        run = {1, 2, 3, 4, 5} if name == "Small straight" else {2, 3, 4, 5, 6}
        return FIXED_POINTS["yatzy"][name] if set(dice) == run else 0
    if name in ("One pair", "Three of a kind", "Four of a kind"):
        needed = {"One pair": 2, "Three of a kind": 3, "Four of a kind": 4}[name]
        return max((face * needed for face, count in counts.items() if count >= needed), default=0)
    if name == "Two pairs":
        pairs = [face for face, count in counts.items() if count >= 2]
        return 2 * sum(pairs) if len(pairs) == 2 else 0
    if not _made(name, dice):
        return 0
    return FIXED_POINTS["yatzy"].get(name, sum(dice))


@dataclass(frozen=True)
class Sheet:
    """A score sheet: the rules' boxes (``yahtzee`` or ``yatzy``), the bonuses played and the boxes in play (a mask;
    None: all of them). The boxes out of play are filled when the game starts.

    >>> Sheet("yatzy", "on", 0b11).boxes[:2], Sheet("yatzy", "on", 0b11).first_filled == 2**15 - 4
    (('Ones', 'Twos'), True)
    """

    rules: str = "yahtzee"
    bonuses: str = "on"
    playing: int | None = None

    @property
    def boxes(self) -> tuple[str, ...]:
        """Return the names of the rules' boxes, bit ``i`` of a mask being ``boxes[i]``."""
        return RULES[self.rules]

    @property
    def all_filled(self) -> int:
        """Return the mask of every box."""
        return (1 << len(self.boxes)) - 1

    @property
    def first_filled(self) -> int:
        """Return the boxes filled when the game starts: those out of play."""
        return 0 if self.playing is None else self.all_filled & ~self.playing

    @property
    def turns(self) -> int:
        """Return the number of turns a game lasts: one a box in play."""
        return len(self.boxes) - bin(self.first_filled).count("1")

    @property
    def tracks_upper(self) -> bool:
        """Return whether the states carry the upper total (the upper bonus is played)."""
        return self.bonuses != "off"

    @property
    def tracks_yahtzees(self) -> bool:
        """Return whether Yahtzee's bonus and joker are played (the states carry whether the Yahtzee box holds 50)."""
        return self.bonuses == "on" and self.rules == "yahtzee"

    @property
    def upper_bonus(self) -> int:
        """Return the upper bonus's points, paid once the upper boxes total 63."""
        return UPPER_BONUS[self.rules]

    @property
    def yahtzee_box(self) -> int:
        """Return the index of the box of five of a kind (Yahtzee, Yatzy)."""
        return len(self.boxes) - 1 if self.rules == "yatzy" else self.boxes.index("Yahtzee")

    def box(self, text: str) -> int:
        """Return the index of a box named ``text`` (case and spaces forgiven); BadParameter when there is none.

        >>> Sheet().box("full House"), Sheet("yatzy").box("one pair")
        (8, 6)
        """
        return five_dice.box_index(text, self.boxes)

    def points(self, box: int, dice: Sequence[int]) -> int:
        """Return what ``dice`` score in ``box`` by the printed rules, no joker (0 when they don't fit).

        >>> Sheet().points(2, (3, 3, 1, 3, 6)), Sheet().points(Sheet().box("Four of a kind"), (2, 2, 2, 2, 6))
        (9, 14)
        >>> Sheet().points(Sheet().box("Full house"), (4, 4, 4, 4, 4)), Sheet("yatzy").points(6, (2, 3, 3, 5, 5))
        (0, 10)
        """
        if box < UPPER:
            return (box + 1) * sum(1 for face in dice if face == box + 1)
        name = self.boxes[box]
        if self.rules == "yatzy":
            return _yatzy_points(name, dice)
        return FIXED_POINTS["yahtzee"].get(name, sum(dice)) if _made(name, dice) else 0

    @functools.cached_property
    def most_points(self) -> tuple[int, ...]:
        """Return the most any five dice score in each box (as a joker too, where it is played).

        >>> Sheet(bonuses="off").most_points
        (5, 10, 15, 20, 25, 30, 30, 30, 25, 30, 40, 50, 30)
        """
        return tuple(max(max(self.points(box, dice), self.joker_points(box, dice) if self.tracks_yahtzees else 0)
                         for dice in OUTCOMES) for box in range(len(self.boxes)))

    def highest_still(self, state: State) -> int:
        """Return a bound on the points still to come from ``state`` on: each open box at the most any five dice
        score there (as a joker too, where it is played), the upper bonus where it is not yet paid and the open
        upper boxes can still reach it, and a Yahtzee bonus on every open box but the Yahtzee box, where that bonus
        is played and the Yahtzee box is open or holds 50. From the first state, a score no game of the sheet exceeds.

        >>> [sheet.highest_still(State(sheet.first_filled)) for sheet in (Sheet(), Sheet(bonuses="off"), Sheet("yatzy"))]
        [1575, 340, 374]
        >>> Sheet(bonuses="off").highest_still(State(0b1111111111110)), Sheet().highest_still(State(0b100000111111, 63, True))
        (5, 785)
        """
        open_now = open_boxes(self, state.filled)
        most = {box: self.most_points[box] for box in open_now}
        upper = state.upper + sum(points for box, points in most.items() if box < UPPER)
        bonus = self.upper_bonus if self.tracks_upper and state.upper < UPPER_BONUS_AT <= upper else 0
        yahtzee_open = self.yahtzee_box in open_now
        yahtzees = (YAHTZEE_BONUS * (len(open_now) - yahtzee_open)
                    if self.tracks_yahtzees and (yahtzee_open or state.yahtzee_50) else 0)
        return sum(most.values()) + bonus + yahtzees

    @functools.cached_property
    def least_points(self) -> tuple[int, ...]:
        """Return the least any five dice score in each box (a joker scores only a Yahtzee, which dice may avoid).

        >>> Sheet(bonuses="off").least_points
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5)
        """
        return tuple(min(self.points(box, dice) for dice in OUTCOMES) for box in range(len(self.boxes)))

    def lowest_still(self, state: State) -> int:
        """Return the least the points still to come from ``state`` on can be, whatever the play and the dice: each
        open box at the least any five dice score there (Chance's 5; the bonuses may always be missed).

        >>> Sheet().lowest_still(State(0)), Sheet().lowest_still(State(1 << 12)), Sheet("yatzy").lowest_still(State(0))
        (5, 0, 5)
        """
        return sum(self.least_points[box] for box in open_boxes(self, state.filled))

    def is_joker(self, filled: int, face: int) -> bool:
        """Return whether a Yahtzee of ``face`` is a joker: the Yahtzee box and the upper box of ``face`` are filled.

        Then Full House and the straights score their full value (the rule of
        the published optimum: Verhoeff 1999, Glenn 2006; ``yatzy-solver``'s
        ``american``). It may go in any open box either way.

        >>> Sheet().is_joker(1 << 11 | 1 << 4, 5), Sheet().is_joker(1 << 11, 5)
        (True, False)
        """
        return bool(filled >> self.yahtzee_box & 1 and filled >> (face - 1) & 1)

    def joker_points(self, box: int, dice: Sequence[int]) -> int:
        """Return what a Yahtzee scores in ``box`` as a joker: Full House and the straights their full value.

        >>> Sheet().joker_points(Sheet().box("Large straight"), (6, 6, 6, 6, 6)), Sheet().joker_points(12, (6,) * 5)
        (40, 30)
        """
        name = self.boxes[box]
        return FIXED_POINTS[self.rules][name] if name in JOKER_BOXES else self.points(box, dice)

    def is_joker_box(self, box: int) -> bool:
        """Return whether the joker scores ``box`` at full value (Full House and the straights)."""
        return self.boxes[box] in JOKER_BOXES


def is_yahtzee(dice: Sequence[int]) -> bool:
    """Return whether the five dice show one face."""
    return len(set(dice)) == 1


def sheet_of(params: Mapping[str, Any]) -> Sheet:
    """Return the sheet a game's parameters play: ``rules``, ``bonuses`` and ``boxes`` (``all`` or the boxes in play).

    >>> sheet_of({"rules": "yatzy", "bonuses": "on", "boxes": "Chance, yatzy"})
    Sheet(rules='yatzy', bonuses='on', playing=24576)
    """
    rules = params.get("rules", "yahtzee")
    chosen = params.get("boxes", "all")
    playing = None if chosen == "all" else five_dice.box_mask(chosen, RULES[rules], verb="named")
    return Sheet(rules, params["bonuses"], playing)


# --- turn states -------------------------------------------------------------------------------------------


class State(NamedTuple):
    """A turn state: the boxes filled (a mask), the upper total capped at 63, whether the Yahtzee box holds 50."""

    filled: int
    upper: int = 0
    yahtzee_50: bool = False


def open_boxes(sheet: Sheet, filled: int) -> tuple[int, ...]:
    """Return the boxes not yet filled."""
    return tuple(box for box in range(len(sheet.boxes)) if not filled >> box & 1)


@functools.cache
def upper_totals(upper_filled: int) -> frozenset[int]:
    """Return the upper totals (capped at 63) that the filled upper boxes ``upper_filled`` (6 bits) can hold."""
    totals = {0}
    for box in range(UPPER):
        if upper_filled >> box & 1:
            totals = {min(UPPER_BONUS_AT, total + (box + 1) * count) for total in totals for count in range(6)}
    return frozenset(totals)


@functools.cache
def states(sheet: Sheet) -> tuple[State, ...]:
    """Return the reachable turn states, by boxes filled, then mask, upper total and Yahtzee flag.

    >>> [len(states(Sheet("yahtzee", bonuses))) for bonuses in BONUSES]
    [536448, 357632, 8192]
    >>> len(states(Sheet("yatzy", "on", 0b111 << 12)))  # three boxes in play, none of them upper
    8
    """
    found = []
    first = sheet.first_filled
    for filled in range(sheet.all_filled + 1):
        if filled & first != first:
            continue
        if not sheet.tracks_upper:
            found.append(State(filled))
            continue
        flags = (False, True) if sheet.tracks_yahtzees and filled >> sheet.yahtzee_box & 1 else (False,)
        played_upper = filled & ~first & (1 << UPPER) - 1
        found += [State(filled, upper, flag) for upper in sorted(upper_totals(played_upper)) for flag in flags]
    return tuple(sorted(found, key=lambda s: (bin(s.filled).count("1"), s)))


def state_key(state: State, sheet: Sheet) -> str:
    """Return the node key of a turn state: ``'filled:5'``, ``'filled:5 upper:4'`` or ``'filled:5 upper:4 y50:0'``."""
    key = f"filled:{state.filled}"
    if sheet.tracks_upper:
        key += f" upper:{state.upper}"
    if sheet.tracks_yahtzees:
        key += f" y50:{int(state.yahtzee_50)}"
    return key


def parse_state_key(key: str) -> State:
    """Return the state a key names (the inverse of :func:`state_key`).

    >>> parse_state_key("filled:5 upper:4 y50:1")
    State(filled=5, upper=4, yahtzee_50=True)
    """
    fields = dict(part.split(":") for part in key.split())
    return State(int(fields["filled"]), int(fields.get("upper", 0)), fields.get("y50") == "1")


def state_text(state: State, sheet: Sheet) -> str:
    """Return a state in words, e.g. ``'filled: Aces, Chance; upper 3'``."""
    text = "filled: " + (", ".join(name for box, name in enumerate(sheet.boxes) if state.filled >> box & 1) or "none")
    if sheet.tracks_upper:
        text += f"; upper {state.upper}"
    return text + ("; Yahtzee box holds 50" if state.yahtzee_50 else "")


# --- the turn's ends ----------------------------------------------------------------------------------------


def end_label(box: int, dice: Sequence[int], sheet: Sheet) -> str:
    """Return the end a turn scoring ``dice`` in ``box`` reaches, as the state moves name it.

    The box, and what the state needs to know besides: an upper box's points
    when the upper total counts; when the Yahtzee bonus and the joker count,
    whether the dice were a Yahtzee, and for the joker's boxes (Full house,
    the straights) its face: the joker needs that face's upper box filled.

    >>> end_label(2, (3, 3, 3, 1, 2), Sheet()), end_label(12, (4,) * 5, Sheet()), end_label(8, (4,) * 5, Sheet())
    ('Threes 9', 'Chance with a Yahtzee', 'Full house with a Yahtzee of 4s')
    >>> end_label(12, (4,) * 5, Sheet("yahtzee", "upper")), end_label(0, (1,) * 5, Sheet("yatzy"))
    ('Chance', 'Ones 5')
    """
    name = sheet.boxes[box]
    if sheet.tracks_yahtzees:
        if box == sheet.yahtzee_box:
            return f"{name} {sheet.points(box, dice)}"
        if is_yahtzee(dice) and sheet.is_joker_box(box):
            return f"{name} with a Yahtzee of {dice[0]}s"
        if is_yahtzee(dice) and not (box < UPPER and dice[0] == box + 1):
            return f"{name} with a Yahtzee"
    if box < UPPER and sheet.tracks_upper:
        return f"{name} {sheet.points(box, dice)}"
    return name


def end_boxes(sheet: Sheet) -> dict[str, int]:
    """Return each end of the turn -> the box it fills, in the order of the boxes (only the boxes in play).

    >>> end_boxes(Sheet())["Full house with a Yahtzee of 3s"], end_boxes(Sheet("yahtzee", "off"))["Chance"]
    (8, 12)
    >>> [len(end_boxes(Sheet("yahtzee", bonuses))) for bonuses in BONUSES], len(end_boxes(Sheet("yatzy")))
    ([71, 43, 13], 45)
    """
    return {end_label(box, dice, sheet): box for box in open_boxes(sheet, sheet.first_filled) for dice in OUTCOMES}


def end_labels(sheet: Sheet) -> tuple[str, ...]:
    """Return every end of the turn, in the order of the boxes."""
    return tuple(end_boxes(sheet))


@functools.cache
def end_key(label: str) -> str:
    """Return the key of the turn's end ``label``."""
    return turn_key("end", label)


def state_moves(state: State, sheet: Sheet) -> Iterator[Move]:
    """Yield the state's moves, one for each end of each open box, labelled like the end: where the state goes
    when its turn reaches that end, and what the state adds to the turn's points there.

    >>> [(m.label, m.reward) for m in state_moves(State(0b100000001000, 60, True), Sheet()) if m.label in ("Sixes 30", "Aces 2")]
    [('Aces 2', 0.0), ('Sixes 30', 135.0)]
    """
    yahtzees = sheet.tracks_yahtzees
    bonus = YAHTZEE_BONUS if state.yahtzee_50 else 0
    for box in open_boxes(sheet, state.filled):
        name = sheet.boxes[box]
        filled = state.filled | 1 << box
        if box == sheet.yahtzee_box and yahtzees:
            yield Move(State(filled, state.upper, False), f"{name} 0", 0.0)
            yield Move(State(filled, state.upper, True), f"{name} 50", 0.0)
            continue
        if box < UPPER and sheet.tracks_upper:
            for count in range(6):
                points = (box + 1) * count
                upper = min(UPPER_BONUS_AT, state.upper + points)
                crossed = sheet.upper_bonus if state.upper < UPPER_BONUS_AT <= state.upper + points else 0
                yield Move(State(filled, upper, state.yahtzee_50), f"{name} {points}",
                           float(crossed + (bonus if count == 5 else 0)))
        else:
            yield Move(State(filled, state.upper, state.yahtzee_50), name, 0.0)
        if yahtzees and sheet.is_joker_box(box):
            for face in range(1, 7):
                joker = sheet.joker_points(box, (face,) * 5) if sheet.is_joker(state.filled, face) else 0
                yield Move(State(filled, state.upper, state.yahtzee_50), f"{name} with a Yahtzee of {face}s",
                           float(joker + bonus))
        elif yahtzees:
            yield Move(State(filled, state.upper, state.yahtzee_50), f"{name} with a Yahtzee", float(bonus))


def score_moves(sheet: Sheet, dice: tuple[int, ...], roll: int) -> Iterator[tuple[str, str, float]]:
    """Yield the third roll's scoring moves: each box in play, its printed points (bonuses and joker are the
    state's)."""
    for box in open_boxes(sheet, sheet.first_filled):
        yield f"score {sheet.boxes[box]}", end_key(end_label(box, dice, sheet)), float(sheet.points(box, dice))
