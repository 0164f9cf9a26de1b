"""A game played on a stored, solved graph, and a game record analysed on it: skill and luck, step by step.

The stored optimum says what every position is worth under best play from there on (as GNU Backgammon's
equities do for backgammon). A game in progress (:class:`Table`) walks the graph from its first position along
the record's steps; values are counted in one *frame*: the first player's probability of winning in a two-player
game, the solo player's final outcome in a one-player game (points already won included). In that frame:

* a roll's *luck* is the value after it minus the value before it;
* a move's *loss* is the best move's value minus the chosen move's, from the mover's view (never negative), and
  its *grade* compares the loss with the game's scale (:data:`GRADES`);
* the steps' changes (value after minus value before) add up to the outcome minus the start value, exactly as
  the values themselves do: each step starts where the one before it ended.

Nothing here reads the database: the session hands a :class:`Table` a ``look(key)`` that returns a position
(:meth:`dicegraph.Database.position` one level deep, on one connection).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dicegraph.record import PERSON, SEATS_OF, BadRecord, Record
from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import OPTIMAL

GRADES = ((0.16, "very bad"), (0.08, "bad"), (0.04, "doubtful"))  # a move's loss over the game's scale, at least
MOST_STEPS = 1_000_000  # a game longer than this is not played out (a loop no policy leaves)
SHOWN = 8  # the most labels an error lists of what was expected

Look = Callable[[str], dict[str, Any]]  # a position's key -> the position, its edges one level deep


class NotSolved(DicegraphError):
    """The graph has no stored optimum to analyse or play against."""


def grade(loss: float, scale: float) -> str | None:
    """Return the grade of a move that gives up ``loss`` in a game whose values span ``scale`` (None: a good move).

    >>> grade(0.0, 1.0), grade(0.05, 1.0), grade(0.1, 1.0), grade(3.0, 10.0)
    (None, 'doubtful', 'bad', 'very bad')
    """
    for threshold, name in GRADES:
        if loss >= threshold * scale:
            return name
    return None


@dataclass(frozen=True)
class Frame:
    """How a value from the mover's view at a position is counted in the record's frame: ``offset + factor * v``
    (``factor`` -1 where the second player moves; ``offset`` the points won on the way, or 1 for 1 - v)."""

    offset: float = 0.0
    factor: float = 1.0

    def of(self, value: float) -> float:
        """Return a value from the mover's view in the record's frame."""
        return self.offset + self.factor * value

    def through(self, edge: Mapping[str, Any]) -> Frame:
        """Return the frame after ``edge``, worth ``reward + sign * value(next)`` to the mover."""
        return Frame(self.offset + self.factor * edge["reward"], self.factor * edge["sign"])


def matching_edge(position: Mapping[str, Any], step: Mapping[str, str], number: int) -> dict[str, Any]:
    """Return the edge of ``position`` that step ``number`` takes; raise BadRecord saying what was expected."""
    kind, text = next(iter(step.items()))
    expected = {"chance": "roll", "decision": "move"}.get(position["kind"])
    where = f"{position['label']} (position {position['key']})"
    if expected is None:
        raise BadRecord(f"step {number}: the game is over at {where}; the record has steps after it")
    labels = [edge["label"] for edge in position["edges"]]
    offered = ", ".join(repr(label) for label in labels[:SHOWN]) + (", ..." if len(labels) > SHOWN else "")
    if kind != expected:
        raise BadRecord(f"step {number}: a {expected} is expected at {where}, not a {kind} ({expected}s there: {offered})")
    named = [edge for edge in position["edges"] if edge["label"] == text] or [
        edge for edge in position["edges"]  # one roll of those a roll edge lists ("roll 5-5 5-6 6-5 6-6")
        if kind == "roll" and edge["label"].startswith("roll ") and text in edge["label"].split()[1:]]
    if len(named) > 1:
        raise BadRecord(f"step {number}: {len(named)} {expected}s at {where} are labelled {text!r}: a record cannot "
                        "tell them apart")
    if named:
        return named[0]
    raise BadRecord(f"step {number}: {kind} {text!r} is not offered at {where} ({expected}s there: {offered})")


@dataclass
class Table:
    """A game in progress on a solved graph: where it is, in which frame, and the record so far.

    ``look`` reads a position; ``two_player`` and ``objective`` are the game's; ``scale`` is what a loss is
    graded against (1 for a probability, the largest payoff's size for a score); ``stored_key`` names the stored
    position whose page shows a position played (itself, or a repeating game's turn state).
    """

    look: Look
    record: Record
    root: str
    two_player: bool
    objective: str
    scale: float
    graph_id: int = 0  # the stored graph played on
    stored_key: Callable[[str], str] = str  # a position's key -> the key of the stored position that shows it
    position: dict[str, Any] = field(init=False)
    frame: Frame = field(default_factory=Frame)
    start_value: float = field(init=False)
    rng: random.Random | None = None  # the dice, when dicegraph rolls them (None: typed from real dice)
    rows: list[dict[str, Any]] = field(default_factory=list)  # each step's analysis, in order

    def __post_init__(self) -> None:
        self.position = self.look(self.root)
        if OPTIMAL not in self.position["policies"]:
            raise NotSolved("the graph has no stored optimum to play against or analyse by")
        self.start_value = self.value_now

    @property
    def finished(self) -> bool:
        """Whether the game is over (a terminal position)."""
        return self.position["kind"] == "terminal"

    @property
    def to_move(self) -> str:
        """Return the seat whose turn it is: ``solo``, or ``first`` / ``second``."""
        if not self.two_player:
            return SEATS_OF[1][0]
        return SEATS_OF[2][0] if self.frame.factor > 0 else SEATS_OF[2][1]

    @property
    def expects(self) -> str | None:
        """Return what the next step is: ``roll``, ``move``, or None when the game is over."""
        return {"chance": "roll", "decision": "move"}.get(self.position["kind"])

    @property
    def value_now(self) -> float:
        """Return what the position is worth under best play from here, in the record's frame."""
        position = self.position
        if position["kind"] == "terminal":
            return self.frame.of(position["payoff"])
        return self.frame.of(position["policies"][OPTIMAL]["value"])

    def options(self) -> list[dict[str, Any]]:
        """Return the rolls or moves offered here: each edge's ``label``, ``probability`` (rolls), ``value`` (in
        the record's frame), ``gives_up`` (moves: the loss against the best, from the mover's view) and
        ``chosen_by`` (the stored policies that take it)."""
        best = self._best()
        shown = []
        for edge in self.position["edges"]:
            worth = edge["values"][OPTIMAL]
            option = {"label": edge["label"], "probability": edge["probability"], "value": self.frame.of(worth),
                      "gives_up": None, "chosen_by": edge["chosen_by"]}
            if best is not None:
                option["gives_up"] = self._loss(best["values"][OPTIMAL], worth)
            shown.append(option)
        return shown

    def _best(self) -> dict[str, Any] | None:
        """Return the stored optimum's move here (None at a roll or at the end)."""
        if self.position["kind"] != "decision":
            return None
        return next(edge for edge in self.position["edges"] if OPTIMAL in edge["chosen_by"])

    def _loss(self, best: float, worth: float) -> float:
        """Return what a move worth ``worth`` gives up against ``best``, from the mover's view (never negative)."""
        return max(0.0, (best - worth) if self.objective == "max" else (worth - best))

    def take(self, step: Mapping[str, str]) -> dict[str, Any]:
        """Take ``step`` (``{"roll": LABEL}`` or ``{"move": LABEL}``), add it to the record and return its analysis:
        ``kind``, ``label``, ``position`` (the key it was taken at), ``stored`` (the stored position showing it),
        ``player``, ``value_before``, ``value_after``,
        for a move ``best``, ``best_value``, ``loss`` and ``grade``, for a roll ``probability`` and ``luck``."""
        number = len(self.record.steps) + 1
        if number > MOST_STEPS:
            raise BadRecord(f"step {number}: a game of more than {MOST_STEPS:,} steps is not played out")
        edge = matching_edge(self.position, step, number)
        kind = next(iter(step))
        before = self.value_now
        worth = edge["values"][OPTIMAL]
        row: dict[str, Any] = {"kind": kind, "label": edge["label"], "position": self.position["key"],
                               "stored": self.stored_key(self.position["key"]), "player": self.to_move,
                               "value_before": before, "value_after": self.frame.of(worth)}
        if kind == "move":
            best = self._best()
            assert best is not None
            row["best"] = best["label"]
            row["best_value"] = self.frame.of(best["values"][OPTIMAL])
            row["loss"] = self._loss(best["values"][OPTIMAL], worth)
            row["grade"] = grade(row["loss"], self.scale)
        else:
            row["probability"] = edge["probability"]
            row["luck"] = row["value_after"] - before
        self.record.steps.append({kind: edge["label"]})
        self.frame = self.frame.through(edge)
        self.position = self.look(edge["to"])
        self.rows.append(row)
        return row

    def replay(self, steps: list[dict[str, str]]) -> None:
        """Take ``steps`` in turn (:meth:`take`), the dice drawing each roll again (so that with a seed the next
        rolls follow them as they would have)."""
        for step in steps:
            if self.rng is not None and self.expects == "roll":
                self.roll(self.rng)
            self.take(step)

    def advance(self, seats: Mapping[str, str]) -> None:
        """Take the steps that are no person's: the dice's rolls (when dicegraph rolls them) and the moves of the
        seats' stored policies, until a person is to move, a roll is to be typed, or the game is over."""
        while not self.finished:
            if self.expects == "roll":
                if self.rng is None:
                    return
                self.take(self.roll(self.rng))
            elif seats.get(self.to_move, PERSON) == PERSON:
                return
            else:
                self.take(self.move_of(seats[self.to_move]))

    def roll(self, rng: random.Random) -> dict[str, str]:
        """Return the step of a roll of the dice here, drawn by ``rng`` with the rolls' exact probabilities."""
        edges = self.position["edges"]
        return {"roll": rng.choices(edges, weights=[edge["weight"] for edge in edges])[0]["label"]}

    def move_of(self, policy: str) -> dict[str, str]:
        """Return the step of the move the stored policy ``policy`` takes here."""
        for edge in self.position["edges"]:
            if policy in edge["chosen_by"]:
                return {"move": edge["label"]}
        raise BadRecord(f"policy {policy!r} makes no move at {self.position['label']} "
                        f"(position {self.position['key']}): it is not a policy stored with this graph")


def summary(table: Table) -> dict[str, Any]:
    """Return a record's analysis: the ``graph`` played on, ``game``, ``params``, ``start_value``, ``outcome`` (None for a game not finished), ``value_now``,
    ``finished``, the ``steps`` and ``players`` (each seat's ``policy``, total ``loss`` and total ``luck``, each from
    that player's own view: good luck positive, in a game that minimises too), with ``identity``: the outcome (or the value now) minus the start value, and the sum
    of the steps' changes, equal but for rounding."""
    seats = SEATS_OF[2 if table.two_player else 1]
    players = {seat: {"policy": table.record.seats.get(seat), "loss": 0.0, "luck": 0.0} for seat in seats}
    rows = table.rows
    for row in rows:
        own = 1.0 if row["player"] != SEATS_OF[2][1] else -1.0  # the second player counts the frame's values negated
        if table.objective == "min":
            own = -own  # a lower outcome is the better one: a roll that raises it is bad luck
        if row["kind"] == "move":
            players[row["player"]]["loss"] += row["loss"]
        else:
            players[row["player"]]["luck"] += own * row["luck"]
    end = table.value_now
    return {"graph": table.graph_id, "game": table.record.game, "params": table.record.params,
            "start_value": table.start_value,
            "outcome": end if table.finished else None, "value_now": end, "finished": table.finished,
            "steps": rows, "players": players,
            "identity": {"change": end - table.start_value,
                         "sum_of_steps": sum(row["value_after"] - row["value_before"] for row in rows)}}


def autoplay(table: Table, seats: Mapping[str, str], on_step: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Play the game out at ``table`` (its dice drawn by its ``rng``), each seat's moves its stored policy's
    (``seats``: seat -> policy), ``on_step`` told of each step's analysis as it is taken."""
    while not table.finished:
        step = table.roll(table.rng) if table.expects == "roll" else table.move_of(seats[table.to_move])
        table.take(step)
        if on_step is not None:
            on_step(table.rows[-1])


def seats_for(two_player: bool, policies: list[str]) -> dict[str, str]:
    """Return the seats of a game played by ``policies`` (the first named takes the first seat; one alone plays
    both seats of a two-player game); raise DicegraphError for too many.

    >>> seats_for(True, ["optimal", "hold-at-20"]), seats_for(False, ["hilo"])
    ({'first': 'optimal', 'second': 'hold-at-20'}, {'solo': 'hilo'})
    """
    names = SEATS_OF[2 if two_player else 1]
    if not 1 <= len(policies) <= len(names):
        raise DicegraphError(f"a {'two' if two_player else 'one'}-player game takes {' or '.join(map(str, range(1, len(names) + 1)))} "
                             f"polic{'ies' if len(names) > 1 else 'y'} (the first named takes the first seat), not {len(policies)}")
    chosen = list(policies) * len(names) if len(policies) == 1 else list(policies)
    return dict(zip(names, chosen))


def person_seats(two_player: bool, seat: str, against: str) -> dict[str, str]:
    """Return the seats of a game a person plays in ``seat`` against the policy ``against``.

    >>> person_seats(True, "second", "optimal"), person_seats(False, "first", "optimal")
    ({'first': 'optimal', 'second': 'you'}, {'solo': 'you'})
    """
    if not two_player:
        return {SEATS_OF[1][0]: PERSON}
    return {name: PERSON if name == seat else against for name in SEATS_OF[2]}
