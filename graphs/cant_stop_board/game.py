"""Can't Stop, one turn on a real board: column tops, claimed columns, placing the three runners.

Beyond the notebook's model (``graphs/cant_stop/game.py``): the player's markers
stand somewhere in each column, some columns are claimed (closed to
everybody), the turn's three neutral markers (runners) may not all be placed
yet, a runner at the top of its column cannot climb further, and when a
pairing's two columns cannot both take a runner (one runner left, two new
columns) the player advances in either one of them. A roll with no legal
advance busts: the turn's climbing is lost. Stopping keeps it.

Board notation (``-p board=...``, also ``dicegraph cant-stop advise --board``):
comma-separated entries, a column at most once, columns not named being
empty:

- ``7:3``   your marker stands on step 3 of column 7 (of 13);
- ``7:3>5`` ... and this turn's runner on step 5 of it;
- ``7:>2``  a runner on step 2, no marker of yours before this turn;
- ``12:x``  column 12 is claimed (by anyone): nobody climbs it.

Objectives (``-p objective=``): ``progress``, the turn's climbing as the sum of
steps / column length (the notebook's ``progress``), or ``claim``, 1 when the
turn ends with a runner on a column's top (the column is then yours), else 0.

The graph: the root is the board's state, rolling (advice compares its value
with stopping at once); a *state* (runner positions) is a chance node over the 126 sorted
outcomes of four dice (multinomial weights over 1296), grouped by effect (the
set of states the pairings allow); each group leads to a decision: one of
those states, then stop (a terminal) or roll on: what :class:`BoardRules`
expand to (:mod:`dicegraph.graphs.expand`), their clock the steps climbed since the
given board.

Bound (``progress``): at a state of worth ``s`` with no-bust probability ``p``
and expected best one-roll gain ``g``, rolling once more then stopping is
worth ``p*s + g``. Climbing and placing runners only ever shrink the moves a
roll allows, so ``p`` and ``g`` never grow while ``s`` grows: once
``s*(1-p) >= g`` it stays so, and (the argument of ``graphs/cant_stop/game.py``)
stopping is optimal from there; such states get no "roll" move. For
``claim``, a state with a runner on a top stops (it cannot do better than 1).
``-p prune=off`` builds without the bound (tests compare).

>>> board = parse_board("7:3>5,8:>2,2:x")
>>> board.marker(7), board.runners, sorted(board.claimed)
(3, ((7, 5), (8, 2)), [2])
>>> sorted(describe_options(board, board.runners, (1, 1, 3, 4)))
['4+1', '5+1', '7+1']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dicegraph.graphs.cant_stop.game import LENGTHS, pairings
from dicegraph.graphs.dice import sorted_rolls
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.protocol import Param
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "cant-stop-board"
title = "Can't Stop (a turn on a real board)"
summary = "One turn of Can't Stop from a given board: tops, claimed columns, runners still to place."
version = 2  # 2: built from the rules (the same nodes and edges, layered by the expander)
objective = "max"
outcome = "expected value of the turn"
OBJECTIVES = ("progress", "claim")
RUNNERS = 3
ROLLS = tuple(sorted_rolls(4))  # 126 sorted outcomes of four dice, weights over 1296
UNITS = 45045  # progress counts in 1/45045 (the lengths' least common multiple)

State = tuple[tuple[int, int], ...]  # runners: (column, step), by column


@dataclass(frozen=True)
class Board:
    """Your markers (``base``), this turn's runners and the claimed columns."""

    base: tuple[tuple[int, int], ...] = ()  # (column, step) of your markers
    runners: State = ()
    claimed: frozenset[int] = frozenset()

    def marker(self, column: int) -> int:
        """Return the step your marker stands on in ``column`` (0: none)."""
        return dict(self.base).get(column, 0)

    @property
    def text(self) -> str:
        """Return the board in canonical notation."""
        entries = []
        runners = dict(self.runners)
        for column in range(2, 13):
            if column in self.claimed:
                entries.append(f"{column}:x")
            elif column in runners or self.marker(column):
                base = self.marker(column)
                entries.append(f"{column}:{base or ''}" + (f">{runners[column]}" if column in runners else ""))
        return ",".join(entries)


def parse_board(text: str) -> Board:
    """Return the board ``text`` describes; raise BadParameter saying what is wrong."""
    base: dict[int, int] = {}
    runners: dict[int, int] = {}
    claimed: set[int] = set()
    for entry in filter(None, (part.strip() for part in text.replace(" ", ",").split(","))):
        column_text, sep, rest = entry.partition(":")
        try:
            column = int(column_text)
        except ValueError:
            raise BadParameter(f"board entry {entry!r}: write COLUMN:STEP, COLUMN:STEP>RUNNER, COLUMN:>RUNNER or COLUMN:x") from None
        if not sep or column not in LENGTHS:
            raise BadParameter(f"board entry {entry!r}: columns are 2..12, written COLUMN:...")
        if column in base or column in runners or column in claimed:
            raise BadParameter(f"board: column {column} is named twice")
        if rest.lower() == "x":
            claimed.add(column)
            continue
        step_text, _, runner_text = rest.partition(">")
        try:
            step = int(step_text) if step_text else 0
            runner = int(runner_text) if runner_text else None
        except ValueError:
            raise BadParameter(f"board entry {entry!r}: steps are whole numbers") from None
        top = LENGTHS[column]
        if not 0 <= step < top:
            raise BadParameter(f"board: your marker in column {column} must be on a step 0..{top - 1} "
                               f"(on {top} the column would be claimed: write {column}:x)")
        base[column] = step
        if runner is not None:
            if not step < runner <= top:
                raise BadParameter(f"board: the runner in column {column} must be above your marker and at most "
                                   f"on the top, step {top}")
            runners[column] = runner
    if len(runners) > RUNNERS:
        raise BadParameter(f"board: {len(runners)} runners, but a turn has only {RUNNERS}")
    return Board(tuple(sorted(base.items())), tuple(sorted(runners.items())), frozenset(claimed))


params = (
    Param("board", "6:>1,7:>1,8:>1", lambda text: parse_board(text).text, "the board, e.g. '7:3>5,8:>2,12:x' (notation: docs/games/cant-stop.md)",
          accepted="see the board notation in docs/games/cant-stop.md"),
    Param("objective", "progress", str, "what the turn is worth: progress (steps / column length) or claim",
          check=lambda value: value in OBJECTIVES, accepted="progress or claim"),
    Param("prune", True, lambda text: {"on": True, "off": False}.get(text.lower()),
          "stop without a roll move where stopping is provably optimal", check=lambda v: v is not None,
          accepted="on or off"),
)
small_params = {"board": "6:>4,7:>6,8:>4"}  # small enough for exhaustive checks (tests/test_conformance.py)


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """No heuristic player: only solves."""
    return ()


def state_key(state: State) -> str:
    """Return a state's key: its runners, e.g. ``'7>5,8>2'`` (``'-'`` for none)."""
    return ",".join(f"{c}>{s}" for c, s in state) or "-"


def _advance(board: Board, state: State, columns: tuple[int, ...]) -> State | None:
    """The state after climbing one step in each of ``columns`` (a column may repeat), or None if illegal."""
    runners = dict(state)
    for column in columns:
        if column in board.claimed:
            return None
        step = runners.get(column, board.marker(column))
        if column not in runners and len(runners) >= RUNNERS:
            return None
        if step >= LENGTHS[column]:
            return None
        runners[column] = step + 1
    return tuple(sorted(runners.items()))


def _climb(board: Board, state: State, columns: tuple[int, ...]) -> State | None:
    """Climb as far as allowed: a doubled column climbs two steps, or one at its top."""
    if len(columns) == 2 and columns[0] == columns[1]:
        return _advance(board, state, columns) or _advance(board, state, columns[:1])
    return _advance(board, state, columns)


def options(board: Board, state: State, dice: tuple[int, ...]) -> frozenset[State]:
    """Return the states the roll ``dice`` allows from ``state`` (empty: bust)."""
    found = set()
    for a, b in pairings(dice):  # type: ignore[arg-type]
        both = _climb(board, state, (a, b))
        if both is not None:
            found.add(both)
            continue
        for single in (a, b):  # only one of the pair can climb: the player picks which
            after = _climb(board, state, (single,))
            if after is not None:
                found.add(after)
    return frozenset(found)


def describe_options(board: Board, state: State, dice: tuple[int, ...]) -> list[str]:
    """Return each option of a roll as the climbing it does, e.g. ``'7+1, 9+1'``."""
    return [climb_text(board, state, after) for after in options(board, state, dice)]


def climb_text(board: Board, state: State, after: State) -> str:
    """Return the climbing from ``state`` to ``after``, e.g. ``'7+1, 8+2'``."""
    before = dict(state)
    return ", ".join(f"{c}+{s - before.get(c, board.marker(c))}" for c, s in after if before.get(c) != s)


def worth_units(board: Board, state: State) -> int:
    """Return the turn's progress so far in 1/45045 units: steps above your markers / column length."""
    return sum((step - board.marker(c)) * (UNITS // LENGTHS[c]) for c, step in state)


def steps(board: Board, state: State) -> int:
    """Return the steps climbed this turn (above your markers)."""
    return sum(step - board.marker(c) for c, step in state)


def payoff(board: Board, state: State, objective: str) -> float:
    """Return what stopping in ``state`` is worth for ``objective``."""
    if objective == "claim":
        return float(any(step == LENGTHS[c] for c, step in state))
    return worth_units(board, state) / UNITS


Climb = tuple[tuple[int, int], ...]  # (column, steps) climbed by one option


def _signature(board: Board, state: State) -> tuple[int, tuple[tuple[bool, int], ...]]:
    """What decides which climbs a roll allows: free runners, and per column runner-or-not and steps left (0..2)."""
    runners = dict(state)
    return RUNNERS - len(runners), tuple(
        (c in runners, 0 if c in board.claimed else min(2, LENGTHS[c] - runners.get(c, board.marker(c))))
        for c in range(2, 13)
    )


def _climb_groups(board: Board, state: State) -> tuple[tuple[frozenset[Climb], int], ...]:
    """The rolls grouped by the climbs they allow at ``state``: the same for every state of its signature."""
    groups: dict[frozenset[Climb], int] = {}
    before = dict(state)
    for dice, weight in ROLLS:
        climbs = frozenset(tuple((c, s - before.get(c, board.marker(c))) for c, s in after if before.get(c) != s)
                           for after in options(board, state, dice))
        groups[climbs] = groups.get(climbs, 0) + weight
    return tuple(groups.items())


def roll_groups(
    board: Board, state: State, known: dict[tuple, tuple[tuple[frozenset[Climb], int], ...]] | None = None
) -> list[tuple[frozenset[State], int]]:
    """The 1296 rolls grouped by effect at ``state``: (states allowed, weight), in a fixed order.

    States with the same :func:`_signature` allow the same climbs, so with a
    ``known`` dict the 126 outcomes are examined once per signature.
    """
    signature = _signature(board, state)
    if known is None:
        groups = _climb_groups(board, state)
    else:
        groups = known.get(signature) or known.setdefault(signature, _climb_groups(board, state))
    runners = dict(state)
    found = []
    for climbs, weight in groups:
        allowed = frozenset(
            tuple(sorted({**runners, **{c: runners.get(c, board.marker(c)) + n for c, n in climb}}.items()))
            for climb in climbs
        )
        found.append((allowed, weight))
    return sorted(found, key=lambda item: sorted(state_key(s) for s in item[0]))


def stops_for_sure(board: Board, state: State, objective: str, groups: list[tuple[frozenset[State], int]]) -> bool:
    """Whether stopping is provably optimal at ``state`` (see the module's text)."""
    if objective == "claim":
        return payoff(board, state, objective) == 1.0
    here = worth_units(board, state)
    p_bust = Fraction(sum(w for allowed, w in groups if not allowed), 1296)
    gain = Fraction(sum(w * max(worth_units(board, s) - here for s in allowed) for allowed, w in groups if allowed), 1296)
    return here * p_bust >= gain


STATE, STOP = "state", "stop"  # a position: (STATE, runners) rolls; (STOP, runners) is the turn's end there


class BoardRules(DiceRules):
    """A turn from a board, for an objective: a position is ``(STATE or STOP, runners)``; a roll is a group of
    the 1296 with one effect, ``(the states it allows, best first; its label)``, e.g. ``'7+1 or 8+1'``. The
    clock counts the steps climbed since the board.

    >>> rules = BoardRules(parse_board("2:>2,3:>4,12:>2"), "claim", True)
    >>> [rules.roll_text(roll) for roll, weight in rules.rolls(rules.starts()[0])][:2]
    ['bust', '12+1']
    """

    def __init__(self, board: Board, objective: str, prune: bool):
        self.board, self.objective, self.prune = board, objective, prune
        self.first_steps = steps(board, board.runners)
        self.known: dict[tuple, tuple] = {}  # signature -> climbs by roll (see roll_groups)
        self.groups: dict[State, list[tuple[frozenset[State], int]]] = {}

    def _groups(self, state: State) -> list[tuple[frozenset[State], int]]:
        found = self.groups.get(state)
        if found is None:
            found = self.groups[state] = roll_groups(self.board, state, self.known)
        return found

    def starts(self) -> list[Any]:
        """Return the board's state, rolling (advice compares its value with stopping at once)."""
        return [(STATE, self.board.runners)]

    def key(self, position: Any) -> str:
        """Return the runners, e.g. ``'7>5,8>2'``, with ``'/stop'`` for stopping there."""
        return state_key(position[1]) + ("/stop" if position[0] == STOP else "")

    def label(self, position: Any) -> str:
        """Return ``'runners 7>5,8>2'`` or ``'stop with 7>5,8>2'``."""
        return ("stop with " if position[0] == STOP else "runners ") + state_key(position[1])

    def clock(self, position: Any) -> int:
        """Return the steps climbed since the board."""
        return steps(self.board, position[1]) - self.first_steps

    def payoff(self, position: Any) -> float | None:
        """Return what stopping is worth for the objective; None while rolling."""
        return payoff(self.board, position[1], self.objective) if position[0] == STOP else None

    def rolls(self, position: Any) -> list[tuple[Any, int]]:
        """Return the rolls grouped by the states they allow, each labelled with the climbing it offers."""
        state = position[1]
        found = []
        for allowed, weight in self._groups(state):
            choices = tuple(sorted(allowed, key=lambda s: (-worth_units(self.board, s), state_key(s))))
            text = " or ".join(climb_text(self.board, state, after) for after in choices) or "bust"
            found.append(((choices, text), weight))
        return found

    def moves(self, position: Any, roll: Any) -> list[Move]:
        """Return each state the roll allows, then stop or (unless stopping is provably optimal there) roll on."""
        state, found = position[1], []
        for after in roll[0]:
            climbed = climb_text(self.board, state, after)
            found.append(Move((STOP, after), f"{climbed}, stop"))
            if not (self.prune and stops_for_sure(self.board, after, self.objective, self._groups(after))):
                found.append(Move((STATE, after), f"{climbed}, roll"))
        return found

    def ending(self, position: Any, roll: Any) -> Ending:
        """Return the bust: the turn's climbing is lost."""
        return Ending(f"{self.key(position)}/bust", "bust: the climbing is lost", 0.0, roll_label="bust")

    def roll_text(self, roll: Any) -> str:
        """Return the climbing a roll offers, e.g. ``'7+1 or 8+1'``."""
        return roll[1]

    def roll_label(self, texts: Sequence[str]) -> str:
        """Return the group's text as it is (one group leads to each decision)."""
        return " ".join(texts)

    def decision_key(self, position: Any, roll: Any) -> str:
        """Return ``'7>5,8>2/7>6,8>2|7>5,8>3'``: the state and the states the roll allows."""
        return f"{self.key(position)}/" + "|".join(state_key(after) for after in roll[0])

    def decision_label(self, position: Any, roll: Any) -> str:
        """Return ``'runners 7>5,8>2, rolled'``."""
        return f"runners {self.key(position)}, rolled"


def rules(params: Mapping[str, Any]) -> BoardRules:
    """Return the turn's rules for ``params`` (board, objective, prune): the graph and its exact checks come
    from them."""
    return BoardRules(parse_board(params["board"]), params["objective"], params["prune"])
