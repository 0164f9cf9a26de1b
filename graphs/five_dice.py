"""Five dice, up to three rolls, any dice kept between rolls: the turn School and Yahtzee share.

A game of this family scores its turn in a box (a combination) chosen after
any roll. This module has the dice, the turn's rules and the decision bytes;
the game says what each box scores (``score_moves``).

**The turn graph** (:class:`StoredTurn`): the first roll (252 sorted outcomes,
multinomial weights over 7,776); after each roll a decision: score a box
(an edge to one of the game's *ends*, the points as its reward), ``stop``
(go on to the third roll's decision with the same dice, for games where a
box scores the same after any roll), or choose dice to reroll. A keep, a
sub-multiset of the dice shown, is chosen one die at a time: ``reroll a 4``
leads to a node ``h`` holding the other four, which may ``reroll a ...``
again or ``roll n`` (a chance node ``k`` over the outcomes of the n dice).
Each keep is one node per roll, reached from all the rolls containing it.

**Decision bytes** (:class:`DecisionBytes`): one byte per (outcome, rerolls
left), 756 a turn state, kind << 6 | payload (:func:`encode_decision`).

>>> len(OUTCOMES), len(KEEPS), sum(1 for _ in sub_multisets((1, 2, 2)))
(252, 210, 6)
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from dicegraph.graphs.dice import FACES, sorted_rolls
from dicegraph.graphs.rules import DiceRules, Move
from dicegraph.graphs.errors import BadParameter, DicegraphError

DICE = 5
ROLLS = 3
OUTCOMES = tuple(roll for roll, _ in sorted_rolls(DICE))  # the 252 sorted rolls of five dice
OUTCOME_INDEX = {roll: index for index, roll in enumerate(OUTCOMES)}
KEEPS = tuple(keep for size in range(DICE) for keep in itertools.combinations_with_replacement(range(1, FACES + 1), size))
FIRST_ROLL = "roll1"  # the stage of the turn's first roll, and the key of its root
POSITIONS = len(OUTCOMES) * ROLLS  # decision bytes per turn state: position ``outcome * ROLLS + rerolls left``


# --- dice --------------------------------------------------------------------------------------------------


def dice_text(dice: Sequence[int]) -> str:
    """Return dice as text, ``'12245'`` (``'-'`` for none), as seed 001 names its files."""
    return "".join(str(face) for face in dice) or "-"


def parse_roll(text: str) -> tuple[int, ...]:
    """Return five dice from ``'1,2,2,4,5'`` or ``'12245'``, sorted; raise BadParameter otherwise.

    >>> parse_roll("5,2,2,4,1")
    (1, 2, 2, 4, 5)
    """
    faces = [part for part in text.replace(",", " ").split()] if "," in text or " " in text else list(text.strip())
    if len(faces) != DICE or not all(face.isdigit() and 1 <= int(face) <= FACES for face in faces):
        raise BadParameter(f"a roll is five dice showing 1..6, e.g. 1,2,2,4,5 (not {text!r})")
    return tuple(sorted(int(face) for face in faces))


def sub_multisets(dice: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Yield every sub-multiset of the sorted ``dice`` once, largest first.

    >>> list(sub_multisets((2, 2)))
    [(2, 2), (2,), ()]
    """
    counts = sorted(Counter(dice).items())
    chosen = [
        tuple(face for face, times in zip((face for face, _ in counts), take) for _ in range(times))
        for take in itertools.product(*(range(count, -1, -1) for _, count in counts))
    ]
    yield from sorted(chosen, key=len, reverse=True)


def rerolls(keep: Sequence[int]) -> Iterator[tuple[tuple[int, ...], int]]:
    """Yield each outcome (sorted five dice) of keeping ``keep`` and rolling the rest, with its weight over ``6**rest``."""
    for rolled, weight in sorted_rolls(DICE - len(keep)):
        yield tuple(sorted(tuple(keep) + rolled)), weight


def outcome_code(dice: Sequence[int]) -> int:
    """Return five dice read as a base-6 number (faces 1..6 as digits 0..5): a simulator's index of a roll."""
    return sum((face - 1) * 6 ** (DICE - 1 - position) for position, face in enumerate(dice))


def box_index(text: str, boxes: Sequence[str], noun: str = "box") -> int:
    """Return the index of a box named ``text`` among ``boxes`` (case and spaces forgiven); raise BadParameter.

    >>> box_index("two  PAIRS", ("Pair", "Two pairs"))
    1
    >>> box_index("x", ("Pair",), "combination")
    Traceback (most recent call last):
    ...
    dicegraph.graphs.errors.BadParameter: unknown combination 'x' (known: Pair)
    """
    wanted = " ".join(text.split()).lower()
    for index, box in enumerate(boxes):
        if box.lower() == wanted:
            return index
    raise BadParameter(f"unknown {noun} {text.strip()!r} (known: {', '.join(boxes)})")


def names_listed(text: str) -> str | None:
    """Return comma-separated names with their spaces tidied, as a parameter stores them (None for none).

    >>> names_listed(" Full  house ,, Chance ")
    'Full house,Chance'
    """
    return ",".join(" ".join(part.split()) for part in text.split(",") if part.strip()) or None


def box_mask(text: str, boxes: Sequence[str], noun: str = "box", verb: str = "filled") -> int:
    """Return the mask of the comma-separated ``boxes`` named in ``text`` (bit ``i``: ``boxes[i]``); raise
    BadParameter for an unknown name or one named twice (each ``noun`` is ``verb`` once).

    >>> box_mask("Pair, two pairs", ("Pair", "Full", "Two pairs"))
    5
    """
    mask = 0
    for part in (p for p in text.split(",") if p.strip()):
        bit = 1 << box_index(part, boxes, noun)
        if mask & bit:
            raise BadParameter(f"{part.strip()!r} is named twice: each {noun} is {verb} once")
        mask |= bit
    return mask


# --- the turn graph ----------------------------------------------------------------------------------------


def turn_key(stage: str, dice: Sequence[int] | str = ()) -> str:
    """Return the key of a node of the turn.

    ``'roll1'`` (the first roll), ``'r2:12245'`` (decision after roll 2),
    ``'h3:122'`` (choosing the dice to keep for roll 3, 1-2-2 kept so far),
    ``'k3:122'`` (1-2-2 kept, the rest about to be rolled), ``'end:Pair'``.
    """
    return stage if stage == FIRST_ROLL else f"{stage}:{dice if isinstance(dice, str) else dice_text(dice)}"


def _without(dice: tuple[int, ...], face: int) -> tuple[int, ...]:
    at = dice.index(face)
    return dice[:at] + dice[at + 1:]


ScoreMoves = Callable[[tuple[int, ...], int], Iterable[tuple[str, str, float]]]


class StoredTurn(DiceRules):
    """The five-dice turn as the store keeps it, at the rules level: a keep chosen one die at a time and the rest
    rolled one die at a time (13,524 edges for School where the plain turn, :class:`FiveDiceTurn`, has a move for
    every keep and a roll for every outcome; the two have the same values).

    A position is ``("roll1",)`` (the first roll), ``("r", roll, dice)`` (the decision after roll ``roll``),
    ``("h", roll, kept)`` (choosing the dice to keep for roll ``roll``: ``reroll a 4`` puts one back, ``roll
    n`` rolls the rest), ``("k", roll, kept)`` (rolling one die more: a chance node of six faces) or ``("end",
    key)``. After the rolls in ``stop_after`` the only move besides rerolling is ``stop`` (score as after the
    third roll); ``ends`` are the turn's terminals ``(key, label)``, worth 0. It has no clock: its layers are
    the longest paths from the first roll, one a die kept or rolled between two rolls' decisions.

    Counted per roll: 252 decisions after each, a put-back per distinct face shown (after the first two
    rolls), a ``roll n`` and put-backs at each of the 210 keeps, six faces at each of the 210 ``k`` nodes.

    >>> from dicegraph.graphs.expand import expand
    >>> from dicegraph.graphs.protocol import Edge, one_by_one
    >>> turn = StoredTurn(lambda dice, roll: [("score the sum", "end:sum", sum(dice))], (), [("end:sum", "scored")])
    >>> put_backs = sum(len(set(dice)) for dice in OUTCOMES)
    >>> keeps = sum(1 + len(set(keep)) for keep in KEEPS)
    >>> counted = 252 + 3 * 252 + 2 * put_backs + 2 * (keeps + 6 * len(KEEPS))
    >>> sum(1 for row in one_by_one(expand(turn)) if isinstance(row, Edge)) == counted
    True
    """

    def __init__(self, score_moves: ScoreMoves, stop_after: Collection[int], ends: Sequence[tuple[str, str]]):
        self.score_moves, self.stop_after, self.ends = score_moves, frozenset(stop_after), dict(ends)

    def starts(self) -> list[Any]:
        """Return the first roll, then the ends (every one is stored, reached or not)."""
        return [(FIRST_ROLL,), *(("end", key) for key in self.ends)]

    def key(self, position: Any) -> str:
        """Return ``'roll1'``, ``'r2:12245'``, ``'h3:122'``, ``'k3:122'`` or the end's key (:func:`turn_key`)."""
        if position[0] == "end":
            return position[1]
        return turn_key(position[0] if position[0] == FIRST_ROLL else f"{position[0]}{position[1]}", position[-1])

    def label(self, position: Any) -> str:
        """Return the position in words."""
        kind = position[0]
        if kind == FIRST_ROLL:
            return "first roll"
        if kind == "end":
            return self.ends[position[1]]
        _, roll, dice = position
        if kind == "r":
            return f"roll {roll} shows {dice_text(dice)}"
        if kind == "h":
            return f"keeping {dice_text(dice)}, choosing more to reroll"
        return f"keep {dice_text(dice)}, roll {DICE - len(dice)}"

    def payoff(self, position: Any) -> float | None:
        """Return 0 at an end (the turn state says what it is worth), else None."""
        return 0.0 if position[0] == "end" else None

    def rolls(self, position: Any) -> Any:
        """Return all five dice at the first roll, one die at a ``k`` node; None at the decisions."""
        if position[0] == FIRST_ROLL:
            return sorted_rolls(DICE)
        return [(face, 1) for face in range(1, FACES + 1)] if position[0] == "k" else None

    def moves(self, position: Any, roll: Any) -> list[Move]:
        """Return a decision's moves: scores (or ``stop``) and dice put back after a roll; more put back or ``roll
        n`` while keeping. Rolls decide alone (:meth:`ending`)."""
        kind = position[0]
        if roll is not None or kind in (FIRST_ROLL, "k"):
            return []
        _, at, dice = position
        if kind == "r":
            if at in self.stop_after:
                found = [Move(("r", ROLLS, dice), "stop")]
            else:
                found = [Move(("end", end), label, float(points)) for label, end, points in self.score_moves(dice, at)]
            return found + (self._put_backs(dice, at + 1) if at < ROLLS else [])
        return [Move(("k", at, dice), f"roll {DICE - len(dice)}"), *self._put_backs(dice, at)]

    @staticmethod
    def _put_backs(dice: tuple[int, ...], roll: int) -> list[Move]:
        return [Move(("h", roll, _without(dice, face)), f"reroll a {face}") for face in sorted(set(dice))]

    def ending(self, position: Any, roll: Any) -> Move:
        """Return where a roll leads: the first roll's decision, or one die more (the decision once five show)."""
        if position[0] == FIRST_ROLL:
            return Move(("r", 1, roll), f"roll {dice_text(roll)}")
        _, at, kept = position
        more = tuple(sorted(kept + (roll,)))
        return Move(("r" if len(more) == DICE else "k", at, more), f"roll {roll}")


# --- decisions, one byte each ------------------------------------------------------------------------------

NO_DECISION, REROLL, SCORE, CROSS_OUT = 0, 1, 2, 3
DECISION_KINDS = {REROLL: "reroll", SCORE: "score", CROSS_OUT: "cross out"}


def encode_decision(kind: int, payload: int) -> int:
    """Return the byte of a decision: ``kind`` in bits 6-7, ``payload`` in bits 0-4.

    For a reroll the payload says which of the five sorted dice are rolled
    again (bit ``j``: die ``j``, lowest first); for a score or a cross-out it is
    the box's number, from 1.

    >>> encode_decision(SCORE, 7), decode_decision(0x87)
    (135, (2, 7))
    """
    return kind << 6 | payload


def decode_decision(byte: int) -> tuple[int, int]:
    """Return ``(kind, payload)`` of a decision byte."""
    return byte >> 6, byte & 0x1F


def reroll_mask(dice: Sequence[int], keep: Sequence[int]) -> int:
    """Return the bits of the sorted ``dice`` rolled again when ``keep`` is kept (the first matching dice are kept).

    >>> bin(reroll_mask((1, 2, 2, 4, 5), (2, 2)))
    '0b11001'
    """
    left = Counter(keep)
    mask = 0
    for position, face in enumerate(dice):
        if left[face]:
            left[face] -= 1
        else:
            mask |= 1 << position
    return mask


def keep_byte(dice: Sequence[int], kept: Sequence[int]) -> int:
    """Return the decision byte of keeping ``kept`` of the sorted ``dice`` and rolling the rest.

    >>> keep_byte((1, 2, 2, 4, 5), (2, 2)) == encode_decision(REROLL, 0b11001)
    True
    """
    return encode_decision(REROLL, reroll_mask(dice, kept))


def describe_decision(byte: int, dice: Sequence[int], boxes: Sequence[str]) -> str:
    """Return a decision byte in words, e.g. ``'reroll 1-4-5 (keep 2-2)'`` or ``'score Pair'`` (``boxes``: names from 1)."""
    kind, payload = decode_decision(byte)
    if kind == REROLL:
        rolled = [face for position, face in enumerate(dice) if payload >> position & 1]
        kept = [face for position, face in enumerate(dice) if not payload >> position & 1]
        return f"reroll {'-'.join(map(str, rolled))} (keep {'-'.join(map(str, kept)) or 'nothing'})"
    if kind in (SCORE, CROSS_OUT):
        return f"{DECISION_KINDS[kind]} {boxes[payload - 1]}"
    return "no decision"


# --- playing turns by decision bytes (Monte Carlo) -------------------------------------------------------------

Decide = Callable[[Any, Any, int], Any]  # (games still rolling, their outcomes, rerolls left) -> their bytes
Score = Callable[[Any, Any, Any, int], None]  # (games ending their turn, their outcomes, boxes, roll) -> None


@functools.cache
def _outcome_of_code() -> Any:
    """Return :func:`outcome_code` -> index in :data:`OUTCOMES`, as a numpy array (-1 for unsorted dice)."""
    import numpy as np

    table = np.full(6**DICE, -1, dtype=np.int64)
    for index, dice in enumerate(OUTCOMES):
        table[outcome_code(dice)] = index
    return table


def play_turns(games: int, turns: int, rng: Any, decide: Decide, score: Score,
               scoring_kinds: Collection[int] = (SCORE, CROSS_OUT)) -> None:
    """Play ``turns`` turns of ``games`` games at once with the numpy generator ``rng``, by decision bytes.

    Each turn rolls five dice. After each roll ``decide(playing, outcome,
    rerolls_left)`` gives the decision byte of every game still rolling
    (``playing``: their numbers; ``outcome``: their roll's index in
    :data:`OUTCOMES`). A reroll rolls the dice its payload names again; any
    other byte ends the game's turn: ``score(ending, outcome, box, roll)``,
    ``box`` the payload minus 1, keeps the caller's score and state. A byte of
    a kind not in ``scoring_kinds``, or a reroll after the last roll, is an error.
    """
    import numpy as np

    outcome_of_code = _outcome_of_code()
    powers = 6 ** np.arange(DICE - 1, -1, -1)
    kinds = np.array(sorted(scoring_kinds))
    for _ in range(turns):
        dice = np.sort(rng.integers(1, FACES + 1, size=(games, DICE)), axis=1)
        playing = np.arange(games)
        for roll in range(1, ROLLS + 1):
            outcome = outcome_of_code[(dice[playing] - 1) @ powers]
            byte = decide(playing, outcome, ROLLS - roll)
            kind, payload = byte >> 6, (byte & 0x1F).astype(np.int64)
            again = kind == REROLL
            if not (np.isin(kind, kinds) | again).all() or (roll == ROLLS and again.any()):
                raise DicegraphError("the stored decisions leave a reachable position without a legal decision")
            score(playing[~again], outcome[~again], payload[~again] - 1, roll)
            playing, payload = playing[again], payload[again]
            bits = (payload[:, None] >> np.arange(DICE)) & 1
            fresh = rng.integers(1, FACES + 1, size=(len(playing), DICE))
            dice[playing] = np.sort(np.where(bits == 1, fresh, dice[playing]), axis=1)


STOP = 255  # the move "stop": its byte is the third roll's decision with the same dice


class DecisionBytes:
    """Turns the chosen moves of a turn solve into each state's 756 decision bytes (a :class:`DecisionEncoder`).

    A decision's move is a score (its byte from ``score_byte(label)``, which
    each game of the family gives: ``functools.partial(DecisionBytes, score_byte)``
    is its encoder), ``stop`` (the third roll's decision with the same dice) or
    ``reroll a d``; the last is followed through the keep's choices
    (``reroll a d`` again, until ``roll n``) to the dice kept.
    """

    SCORE, STOP, PUT_BACK, ROLL_NOW = range(4)

    def __init__(self, score_byte: Callable[[str], int], nodes: Sequence[tuple[int, str]],
                 moves: Sequence[tuple[int, int, int, str]]):
        import numpy as np

        self.local: dict[int, int] = {}
        decisions = []  # (local index, position, outcome)
        keep_index = {keep: k for k, keep in enumerate(KEEPS)}
        dice_of: dict[int, tuple[int, ...]] = {}
        for node_id, key in nodes:
            if key[0] not in "rh" or key == FIRST_ROLL:
                continue
            self.local[node_id] = len(self.local)
            stage, text = key.split(":")
            dice = () if text == "-" else tuple(int(f) for f in text)
            dice_of[node_id] = dice
            if stage[0] == "r":
                outcome = OUTCOME_INDEX[dice]
                decisions.append((self.local[node_id], outcome * ROLLS + ROLLS - int(stage[1]), outcome))
        self.decisions = np.array(sorted(decisions), dtype=np.int64).reshape(-1, 3)
        size = max(offset for offset, *_ in moves) + 1
        self.kind, self.byte = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.target, self.keep = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.src = np.zeros(size, dtype=np.int64)
        for at, src, dst, label in moves:
            if src not in self.local:
                continue
            self.src[at] = self.local[src]
            if label == "stop":
                self.kind[at] = self.STOP
            elif label.startswith("reroll a "):
                self.kind[at], self.target[at] = self.PUT_BACK, self.local[dst]
            elif label.startswith("roll "):
                self.kind[at], self.keep[at] = self.ROLL_NOW, keep_index[dice_of[src]]
            else:
                self.kind[at], self.byte[at] = self.SCORE, score_byte(label)
        self.mask = np.zeros((len(OUTCOMES), len(KEEPS)), dtype=np.int64)
        for outcome, dice in enumerate(OUTCOMES):
            for kept in sub_multisets(dice):
                if len(kept) < DICE:
                    self.mask[outcome, keep_index[kept]] = reroll_mask(dice, kept)

    def pack(self, states: Any, moves: Any) -> dict[int, bytes]:
        """Return state -> its decision bytes, from arrays of (state, chosen move's offset)."""
        import numpy as np

        states, state_row = np.unique(states, return_inverse=True)
        chosen = np.full((len(states), len(self.local)), -1, dtype=np.int64)
        chosen[state_row, self.src[moves]] = moves
        every = np.arange(len(states))[:, None]
        moves = chosen[:, self.decisions[:, 0]]  # [state, decision]
        kinds = self.kind[moves]
        packed = np.where(kinds == self.SCORE, self.byte[moves], 0)
        current, kept = moves.copy(), np.full(moves.shape, -1, dtype=np.int64)
        for _ in range(DICE + 1):  # follow the keep's choices to "roll n"
            following = (kinds == self.PUT_BACK) & (kept < 0)
            if not following.any():
                break
            current = np.where(following, chosen[every, self.target[current]], current)
            done = following & (self.kind[current] == self.ROLL_NOW)
            kept = np.where(done, self.keep[current], kept)
        rerolled = kinds == self.PUT_BACK
        outcomes = np.broadcast_to(self.decisions[:, 2], moves.shape)
        packed = np.where(rerolled, encode_decision(REROLL, 0) | self.mask[outcomes, np.maximum(kept, 0)], packed)
        by_position = np.zeros((len(states), POSITIONS), dtype=np.int64)
        by_position[:, self.decisions[:, 1]] = np.where(kinds == self.STOP, STOP, packed)
        last = np.arange(len(OUTCOMES)) * ROLLS  # rerolls left 0: the third roll's decision
        for left in range(1, ROLLS):  # "stop" plays the third roll's move
            at = last + left
            by_position[:, at] = np.where(by_position[:, at] == STOP, by_position[:, last], by_position[:, at])
        return {int(state): by_position[i].astype(np.uint8).tobytes() for i, state in enumerate(states)}


class FiveDiceTurn(DiceRules):
    """The five-dice turn at the rules level (:mod:`dicegraph.graphs.rules`): roll, keep any dice, roll the rest, up to
    :data:`ROLLS` times, and end the turn by scoring, as the game's ``score_moves(dice, roll)`` says (the same
    callable :class:`StoredTurn` takes: ``(label, end key, points)`` for each way to end it after roll ``roll``,
    1 the first, showing ``dice``).

    A position is ``("rolling", roll, kept)`` (the dice kept, the rest about to be rolled for roll ``roll``)
    or ``("end", key)``, one of the turn's ends. Scoring is offered after every roll: the stored turn's
    ``stop`` (score as after the third roll) is the same move, and its decision byte is that score's.

    >>> turn = FiveDiceTurn(lambda dice, roll: [("score the sum", "end:sum", sum(dice))])
    >>> from dicegraph.graphs.exact import exact_value
    >>> exact_value(turn, "max")  # per die: keep a 5 or 6 first, then a 4 or more: 14/3
    Fraction(70, 3)
    """

    def __init__(self, score_moves: ScoreMoves):
        self.score_moves = score_moves

    def starts(self) -> list[Any]:
        """Return the first roll of all five dice."""
        return [("rolling", 1, ())]

    def key(self, position: Any) -> str:
        """Return ``'roll2/keep1-1'``, or the end's key."""
        if position[0] == "end":
            return position[1]
        return f"roll{position[1]}/keep{'-'.join(map(str, position[2]))}"

    def label(self, position: Any) -> str:
        """Return the position in words."""
        if position[0] == "end":
            return f"the turn ends: {position[1]}"
        return f"roll {position[1]}, keeping {dice_text(position[2]) if position[2] else 'nothing'}"

    def payoff(self, position: Any) -> float | None:
        """Return 0 at an end (the turn state says what it is worth), else None."""
        return 0.0 if position[0] == "end" else None

    def rolls(self, position: Any) -> Any:
        """Return the sorted rolls of the dice not kept."""
        return sorted_rolls(DICE - len(position[2]))

    def moves(self, position: Any, rolled: tuple[int, ...]) -> list[Move]:
        """Return the ways to end the turn with the dice showing, then, with a roll left, every keep of fewer than
        five dice."""
        _, roll, kept = position
        dice = tuple(sorted(kept + rolled))
        found = [Move(("end", key), label, float(points)) for label, key, points in self.score_moves(dice, roll)]
        if roll < ROLLS:
            found += [Move(("rolling", roll + 1, keep), f"keep {dice_text(keep)}")
                      for keep in sub_multisets(dice) if len(keep) < DICE]
        return found

    def decision_key(self, position: Any, rolled: tuple[int, ...]) -> str:
        """Return ``'roll2/1-1-3-5-6'``: the decision after roll 2 showing those dice, however it was reached."""
        return f"roll{position[1]}/{'-'.join(map(str, sorted(position[2] + rolled)))}"


def stored_turn_agent(decisions: Mapping[str, bytes], state_key: Callable[[Any], str],
                      end_key: Callable[[int, int, tuple[int, ...]], str]) -> Callable[..., Move]:
    """Return a turn agent (:mod:`dicegraph.graphs.repeating`) playing a stored policy's decision bytes over
    :class:`FiveDiceTurn`: ``decisions`` by state key (``state_key(state)``), a score or cross-out byte ending the
    turn at ``end_key(kind, payload, dice)``.

    It plays what the store solved, move by move from the rules, so games played with it check the stored
    decisions independently of the numpy player.
    """

    def choose(state: Any, position: Any, rolled: tuple[int, ...], moves: Sequence[Move]) -> Move:
        _, roll, kept = position
        dice = tuple(sorted(kept + rolled))
        byte = decisions[state_key(state)][OUTCOME_INDEX[dice] * ROLLS + ROLLS - roll]
        kind, payload = decode_decision(byte)
        if kind == REROLL:
            keep = tuple(face for place, face in enumerate(dice) if not payload >> place & 1)
            wanted: Any = ("rolling", roll + 1, keep)
        else:
            wanted = ("end", end_key(kind, payload, dice))
        return next(move for move in moves if move.next == wanted)

    return choose
