"""School (seed 001): a Yahtzee-like game of 15 turns (rules: shared/RULES.md).

Five dice, up to three rolls a turn, keeping any dice between rolls; a turn
ends by scoring one unused combination (0 points, a cross-out, when the dice
don't make it). Grades 1..6 come first (the *school phase*: until three grades
are scored only grades may be scored); a non-grade scored on a turn's first
roll counts double.

The graph has two parts, built once and joined when solving (``store/solve/turns.py``, as School's rules,
:mod:`dicegraph.graphs.school.rules`, declare), both what those rules expand to
(:func:`dicegraph.graphs.expand.expand_repeating`; the turn as :class:`dicegraph.graphs.five_dice.StoredTurn` keeps it):

* **Turn states** (layers 0..15): the sets of used combinations the school
  phase allows, as a 15-bit mask (bit ``i`` is :data:`COMBINATIONS` ``[i]``),
  21,526 of them. Layer = combinations used. A move edge ``U -> U + c`` is
  labelled with the combination ``c`` the turn ends with; the points it brings
  depend on the dice, so they are on the turn part's edges.
* **The turn** (layers 16..40), the same for every state, the five-dice
  turn of :mod:`dicegraph.graphs.five_dice`: the first roll (252 sorted outcomes,
  multinomial weights over 7,776); after each roll a decision: score a
  combination (the edge's reward is the points, doubled on the first roll
  for non-grades; ``cross out`` when the dice don't make it), or choose dice
  to reroll. A keep is chosen one die at a time (``reroll a 4`` leads to a
  node ``h`` holding the other four, which may ``reroll a ...`` again or
  ``roll n``) and the rest is rolled one die at a time (chance nodes ``k``
  holding 0..4 dice, six edges each). Each keep is then one node per roll,
  reached from all the rolls containing it, and the turn has 13,524 edges
  (19,236 with the rest rolled at once, an edge per outcome; 24,528 with a
  move per keep as well).
  After the second roll the player may ``stop``: go to the third-roll
  decision with the same dice, where the only moves are scores. 15
  terminals ``end:<c>``: the turn ends with c.

A state's value joins the two: the turn's terminal ``end:<c>`` is worth the
value of ``U + c`` when ``c`` is open in ``U``, and is not there otherwise.

``combinations`` plays some combinations only: the game starts at the state
with the others used (:func:`first_used`), so its states are the whole game's.

>>> points(COMBINATIONS.index("Two pairs"), (2, 2, 5, 5, 6)), points(COMBINATIONS.index("Grade 2"), (2, 2, 5, 5, 6))
(14, -6)
>>> points(COMBINATIONS.index("Full"), (3, 3, 3, 3, 3), first_roll=True)
30
>>> len(states()), sum(1 for _ in sub_multisets((1, 2, 2)))
(21526, 6)
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from dicegraph.graphs import five_dice
from dicegraph.graphs.errors import BadParameter, DicegraphError
from dicegraph.graphs.five_dice import (  # noqa: F401  (School's dice and decision bytes are the family's)
    CROSS_OUT, DICE, KEEPS, NO_DECISION, OUTCOME_INDEX, OUTCOMES, REROLL, ROLLS, SCORE, decode_decision, dice_text,
    encode_decision, keep_byte, parse_roll, reroll_mask, rerolls, sub_multisets, turn_key)
from dicegraph.graphs.protocol import Param

name = "school"
title = "School"
summary = "Fifteen turns of a Yahtzee-like game, grades first; policies optimal and bob (the seed's heuristic)."
version = 1
objective = "max"
repeating = True  # the five-dice turn is stored once, joined with the used sets (SchoolRules)
outcome = "expected final score"

COMBINATIONS = (
    "Grade 1", "Grade 2", "Grade 3", "Grade 4", "Grade 5", "Grade 6",
    "Pair", "Set", "Two pairs", "Full", "Care", "Little straight", "Big straight", "Poker", "Trash",
)
GRADES = 6  # combinations 0..5 are the grades
SCHOOL_PHASE_GRADES = 3  # grades to score before anything else opens
ALL_USED = (1 << len(COMBINATIONS)) - 1


def positive_offset(combination: int) -> int:
    """Return what scoring ``combination`` gains in the positive form of the grades: 5k for grade k, 0 for the others.

    >>> positive_offset(0), positive_offset(5), positive_offset(6)
    (5, 30, 0)
    """
    return (combination + 1) * DICE if combination < GRADES else 0


POSITIVE_GRADE_OFFSET = sum(positive_offset(c) for c in range(len(COMBINATIONS)))  # 105 added to every game


def _straights(text: str) -> tuple[int, int] | None:
    little, big = (int(part) for part in text.split(","))
    return (little, big) if 0 <= little and 0 <= big else None


def _grades(text: str) -> str | None:
    return text if text in ("negative", "positive") else None


params = (
    Param("straights", (15, 20), _straights, "points of the little and big straights",
          check=lambda value: value is not None, accepted="two whole numbers, e.g. 15,20 (the seed's table: 20,30)"),
    Param("grades", "negative", _grades, "grade k scores -k per die not showing k (negative, upstream) or +k per k (positive)",
          check=lambda value: value is not None, accepted="negative or positive"),
    Param("combinations", "all", five_dice.names_listed, "the combinations in play, comma-separated (the others "
          "used from the start), or all", accepted="all or combination names, e.g. 'Grade 6,Pair,Trash'"),
)
small_params = {"combinations": "Grade 5,Grade 6,Pair,Full,Trash"}  # past the school phase (five: the exact
# recursion in fractions, which dominates School's check, takes half the time of six)


def first_used(params: Mapping[str, Any]) -> int:
    """Return the combinations used when the game starts: those out of play (none by default).

    >>> first_used({"combinations": "all"}), first_used({"combinations": "Poker, Trash"}) == ALL_USED ^ 0b11 << 13
    (0, True)
    """
    chosen = params.get("combinations", "all")
    return 0 if chosen == "all" else ALL_USED & ~five_dice.box_mask(chosen, COMBINATIONS, "combination", "named")


def check_params(values: Mapping[str, Any]) -> None:
    """Raise BadParameter for ``combinations`` naming one School does not have, or leaving out of play a set the
    school phase never reaches (a non-grade used before three grades)."""
    used = first_used(values)
    if not is_reachable(used):
        raise BadParameter(f"the school phase never reaches {used_text(used)!r} used: with a non-grade out of play, "
                           f"at most {GRADES - SCHOOL_PHASE_GRADES} grades may be in play")
POLICIES = ("optimal", "bob")


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return no edge-level agents: Bob decides per turn state, see :mod:`dicegraph.graphs.school.rules`."""
    return ()


# --- scoring -----------------------------------------------------------------------------------------------


def combination_index(text: str) -> int:
    """Return the index of a combination named as in RULES.md (case and spaces forgiven).

    >>> combination_index("two pairs"), combination_index("Grade 6")
    (8, 5)
    """
    return five_dice.box_index(text, COMBINATIONS, "combination")


def points(combination: int, dice: Sequence[int], first_roll: bool = False,
           straights: tuple[int, int] = (15, 20), grades: str = "negative") -> int:
    """Return what ``dice`` score as ``combination`` (0 for a non-grade the dice don't make).

    >>> points(COMBINATIONS.index("Little straight"), (1, 2, 3, 4, 5), straights=(20, 30))
    20
    >>> points(COMBINATIONS.index("Grade 3"), (3, 3, 1, 1, 1), grades="positive")
    6
    """
    counts = Counter(dice)
    if combination < GRADES:
        face = combination + 1
        return face * counts[face] if grades == "positive" else -face * (DICE - counts[face])
    made = _non_grade(COMBINATIONS[combination], counts, tuple(sorted(dice)), straights)
    return 2 * made if first_roll else made


def _highest(counts: Counter[int], at_least: int) -> int:
    return max((face for face, count in counts.items() if count >= at_least), default=0)


def _non_grade(combination: str, counts: Counter[int], dice: tuple[int, ...], straights: tuple[int, int]) -> int:
    shape = sorted(counts.values())
    if combination == "Pair":
        return 2 * _highest(counts, 2)
    if combination == "Set":
        return 3 * _highest(counts, 3)
    if combination == "Care":
        return 4 * _highest(counts, 4)
    if combination == "Two pairs":
        pairs = [face for face, count in counts.items() if count >= 2]
        if len(pairs) == 2:
            return 2 * sum(pairs)
        return 4 * pairs[0] if shape == [1, 4] else 0
    if combination == "Full":
        return sum(dice) if shape in ([2, 3], [5]) else 0
    if combination == "Little straight":
        return straights[0] if dice == (1, 2, 3, 4, 5) else 0
    if combination == "Big straight":
        return straights[1] if dice == (2, 3, 4, 5, 6) else 0
    if combination == "Poker":
        return 5 * dice[0] if shape == [5] else 0
    return sum(dice)  # Trash


# --- turn states -------------------------------------------------------------------------------------------


def grades_used(used: int) -> int:
    """Return how many grades the mask ``used`` holds."""
    return bin(used & ((1 << GRADES) - 1)).count("1")


def extreme_points(params: Mapping[str, Any], extreme: Callable[[Iterable[int]], int] = max) -> tuple[int, ...]:
    """Return the most (``extreme=max``) or the least (``min``) any five dice score in each combination with
    ``params``, on the first roll (doubled) or later."""
    return tuple(extreme(points(c, dice, first, params["straights"], params["grades"]) for dice in OUTCOMES
                         for first in (False, True)) for c in range(len(COMBINATIONS)))


def unused_sum(each: Sequence[int], used: int) -> int:
    """Return the sum of ``each`` combination's points over those not in the mask ``used``: with each at its most
    (:func:`extreme_points`), a bound on the points still to come (from the first state, a score no game exceeds);
    with each at its least, the least they can be whatever is played and rolled (Trash's 5).

    >>> unused_sum((10, 20, 30), 0b010)
    40
    >>> params = {"combinations": "Pair,Poker", "straights": (15, 20), "grades": "negative"}
    >>> unused_sum(extreme_points(params), first_used(params))
    84
    >>> params = {"combinations": "Pair,Trash", "straights": (15, 20), "grades": "positive"}
    >>> unused_sum(extreme_points(params, min), first_used(params))
    5
    """
    return sum(points for c, points in enumerate(each) if not used >> c & 1)


@functools.lru_cache(maxsize=None)
def open_combinations(used: int) -> tuple[int, ...]:
    """Return the combinations that may end a turn from the used set ``used`` (the school phase applied).

    >>> open_combinations(0b11)
    (2, 3, 4, 5)
    >>> len(open_combinations(0b111))
    12
    """
    school = grades_used(used) < SCHOOL_PHASE_GRADES
    return tuple(c for c in range(len(COMBINATIONS)) if not used >> c & 1 and not (school and c >= GRADES))


def is_reachable(used: int) -> bool:
    """Return whether the school phase allows the used set ``used``: no non-grade before three grades."""
    return 0 <= used <= ALL_USED and (used >> GRADES == 0 or grades_used(used) >= SCHOOL_PHASE_GRADES)


@functools.cache
def states() -> tuple[int, ...]:
    """Return every used set the school phase allows, fewest used first (worked out when first asked: 21,526 of
    32,768, which would cost every command's start 25 ms)."""
    return tuple(sorted((used for used in range(ALL_USED + 1) if is_reachable(used)),
                        key=lambda u: (bin(u).count("1"), u)))


def state_key(used: int) -> str:
    """Return the node key of a turn state, e.g. ``'used:7'``."""
    return f"used:{used}"


def used_text(used: int) -> str:
    """Return the used combinations as text, ``'none'`` for the empty set."""
    return ", ".join([COMBINATIONS[c] for c in range(len(COMBINATIONS)) if used >> c & 1]) or "none"


def parse_used(text: str) -> int:
    """Return the mask of comma-separated combination names; raise BadParameter for an unknown or unreachable set.

    >>> parse_used("Grade 1, grade 2")
    3
    """
    used = five_dice.box_mask(text, COMBINATIONS, "combination", "used")
    if not is_reachable(used):
        raise BadParameter(f"the school phase never reaches {used_text(used)!r}: "
                           f"no other combination is scored before {SCHOOL_PHASE_GRADES} grades")
    if used == ALL_USED:
        raise BadParameter("every combination is used: the game is over")
    return used

def score_moves(params: Mapping[str, Any], dice: tuple[int, ...], roll: int) -> Iterator[tuple[str, str, float]]:
    """Yield the scoring moves after roll ``roll`` showing ``dice``: every combination, doubled on the first roll."""
    for c, combination in enumerate(COMBINATIONS):
        worth = points(c, dice, roll == 1, params["straights"], params["grades"])
        verb = "score" if c < GRADES or worth else "cross out"
        yield f"{verb} {combination}", turn_key("end", combination), float(worth)


# --- decisions, one byte each (the seed's layout) ------------------------------------------------------------

def score_byte(label: str) -> int:
    """Return the decision byte of a scoring move of the turn graph, ``'score Pair'`` or ``'cross out Poker'``.

    >>> score_byte("cross out Poker") == encode_decision(CROSS_OUT, 14)
    True
    """
    if label.startswith("cross out "):
        return encode_decision(CROSS_OUT, combination_index(label[len("cross out "):]) + 1)
    return encode_decision(SCORE, combination_index(label.removeprefix("score ")) + 1)


def describe_decision(byte: int, dice: Sequence[int]) -> str:
    """Return a decision byte in words, e.g. ``'reroll 1-4-5 (keep 2-2)'`` or ``'score Pair'``."""
    return five_dice.describe_decision(byte, dice, COMBINATIONS)


def decision_file(dice: Sequence[int], rerolls_left: int) -> str:
    """Return the name of the file holding the decisions for ``dice`` with ``rerolls_left``, e.g. ``'12245_2.bin'``."""
    return f"{dice_text(dice)}_{rerolls_left}.bin"


# --- Monte Carlo -------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def points_table(straights: tuple[int, int], grades: str) -> Any:
    """Return ``[outcome, combination, first_roll]`` points as a numpy array, from :func:`points`."""
    import numpy as np

    return np.array([[[points(c, dice, first, straights, grades) for first in (False, True)]
                      for c in range(len(COMBINATIONS))] for dice in OUTCOMES], dtype=np.float64)


def simulator(params: Mapping[str, Any], policy: Any) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` whole games with a numpy generator; their final scores.

    ``policy`` is a stored policy's decisions: a uint8 array ``[unused mask,
    outcome, rerolls left]`` of decision bytes (see :func:`encode_decision`), as
    ``dicegraph school export-decisions`` writes them. The dice, the scoring
    and the rules of a legal move are this module's; a decision the rules
    don't allow is an error.
    """
    import numpy as np

    if isinstance(policy, str):
        raise DicegraphError(f"school plays stored policies only ({', '.join(POLICIES)}), not {policy!r}")
    decisions = np.asarray(policy, dtype=np.uint8)
    table = points_table(params["straights"], params["grades"])
    legal = np.zeros((ALL_USED + 1, len(COMBINATIONS)), dtype=bool)
    for used in states():
        legal[used, list(open_combinations(used))] = True

    first = first_used(params)

    def play(games: int, rng: Any) -> Any:
        used = np.full(games, first, dtype=np.int64)
        total = np.zeros(games)

        def decide(playing: Any, outcome: Any, rerolls_left: int) -> Any:
            return decisions[ALL_USED ^ used[playing], outcome, rerolls_left]

        def score(ending: Any, outcome: Any, chosen: Any, roll: int) -> None:
            if not legal[used[ending], chosen].all():
                raise DicegraphError("the stored decisions score a combination the rules don't open")
            total[ending] += table[outcome, chosen, int(roll == 1)]
            used[ending] |= 1 << chosen

        five_dice.play_turns(games, len(COMBINATIONS) - bin(first).count("1"), rng, decide, score)
        return total

    return play


# --- the decision archive (seed 001's layout) ----------------------------------------------------------------

ARCHIVE_LAYOUT = f"""School decisions, one byte each (dicegraph school export-decisions).

One file per roll and rerolls left: <dice>_<rerolls left>.bin, e.g. 12245_2.bin
for the sorted roll 1,2,2,4,5 with two rerolls to come (the turn's first
roll); {len(OUTCOMES)} rolls x {ROLLS} = {len(OUTCOMES) * ROLLS} files.
Each file has {ALL_USED + 1} bytes: byte i is the decision when the combinations not
yet used are the bits of i (bit k: combination k+1 of {', '.join(f'{k + 1} {c}' for k, c in enumerate(COMBINATIONS))}).

A byte is kind << 6 | payload. Kind 1: reroll, the payload's bit j says die j
(of the sorted roll, lowest first) is rolled again. Kind 2: score, kind 3:
cross out, the payload is the combination's number 1..15. Kind 0: no decision
(a used set the school phase never reaches, or the game is over).
"""


def decision_archive(decisions: Any) -> tuple[bytes, int]:
    """Return a ``[unused mask, outcome, rerolls left]`` uint8 array as the seed's zip of one byte per decision,
    with the number of files in it."""
    import io
    import zipfile

    import numpy as np

    array = np.asarray(decisions, dtype=np.uint8)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("LAYOUT.txt", ARCHIVE_LAYOUT)
        for index, dice in enumerate(OUTCOMES):
            for left in range(ROLLS):
                archive.writestr(decision_file(dice, left), array[:, index, left].tobytes())
    return buffer.getvalue(), len(OUTCOMES) * ROLLS


def read_decision_archive(path: Any) -> Any:
    """Return the ``[unused mask, outcome, rerolls left]`` uint8 array a decision archive holds."""
    import zipfile

    import numpy as np

    array = np.zeros((ALL_USED + 1, len(OUTCOMES), ROLLS), dtype=np.uint8)
    with zipfile.ZipFile(path) as archive:
        for index, dice in enumerate(OUTCOMES):
            for left in range(ROLLS):
                array[:, index, left] = np.frombuffer(archive.read(decision_file(dice, left)), dtype=np.uint8)
    return array
