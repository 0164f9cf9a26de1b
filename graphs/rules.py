"""The rules-level game API: a game says what the rules are, not how rows stream.

A game written at this level gives a :class:`Rules` object for its
parameters (``rules(params)``). It says

* what a position is: ``key(position)`` (unique text) and ``label(position)``;
* when the game is over and what it pays: ``payoff(position)`` (None: not over);
* which dice are rolled there: ``rolls(position)`` yields ``(roll, weight)``
  with integer weights (None: no dice, the player chooses first, see below);
* which moves each outcome allows: ``moves(position, roll)`` returns
  :class:`Move` (next position, label, reward, whether it hands the turn
  over). No move: the roll decides alone, at ``ending(position, roll)``: an
  :class:`Ending` (the game is over there: key, label, payoff) or a
  :class:`Move` (the game goes on there without a choice: Pig's bust);
* optionally ``clock(position)``: the game's own clock (cells flipped, tiles
  shut, the score sum), never decreasing along a move; the layers follow it;
* its agents, plain functions ``agent(position, roll, moves) -> Move``.

A position whose ``rolls`` is None is a decision before any roll: its moves
are ``moves(position, None)`` (Shut The Box's choice of one die or two).

**Two players.** In a game for two (the game declares ``players = 2``)
positions are seen from the player to move and worth what that player gets;
a move with ``passes=True`` hands the turn to the opponent, who then moves
from the position it leads to. The two players' values add up to
``constant_sum`` (1 where the value is a probability of winning), so such a
move is worth its reward plus ``constant_sum`` minus the value where it
leads: the expander derives that, nobody writes signs.

**Loops.** A game whose positions can repeat (a bust hands the turn back and
forth with the scores unchanged) declares ``loops = True``; the expander
finds the loops and the store solves them exactly. Its clock still orders
what it can (the score sum): the finer the clock, the smaller each loop. A game
for two whose turn passes but whose positions never recur (the bear-off race)
declares loops too: each layer whose moves hand the turn over is then a
component of one layer, which the store values in one pass.

:mod:`dicegraph.graphs.expand` turns rules into rows, :mod:`dicegraph.graphs.exact` values them
exactly in fractions, and :mod:`dicegraph.graphs.playout` plays them for Monte Carlo:
a game gets all three from its rules.

>>> from dicegraph.graphs.exact import exact_value
>>> class Coin(DiceRules):
...     "Toss a coin: tails adds a point, then toss again or stop; heads loses all; 2 points end it."
...     def starts(self): return [(0, False)]
...     def key(self, position): return f"{position[0]}" + ("/banked" if position[1] else "")
...     def label(self, position): return f"{position[0]} points"
...     def clock(self, position): return position[0]
...     def payoff(self, position):
...         points, banked = position
...         return float(points) if banked or points == 2 else None
...     def rolls(self, position): return [("heads", 1), ("tails", 1)]
...     def moves(self, position, roll):
...         points = position[0] + 1
...         return [] if roll == "heads" else [Move((points, False), "toss again"), Move((points, True), "stop")]
...     def ending(self, position, roll): return Ending(f"{position[0]}/lost", "lost", 0.0)
>>> exact_value(Coin(), "max")
Fraction(1, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from dicegraph.graphs.errors import InvalidGraph

Position = Hashable
Roll = Hashable


class Move(NamedTuple):
    """A move: the position it leads to, its label, the points it earns on the way, and whether it hands the
    turn to the opponent (a game for two players).

    As what a roll leads to without a choice (``Rules.ending``), its label may hold ``{rolls}``: the rolls
    that lead there, comma-separated (``Move(start, "{rolls}: bust", passes=True)``).
    """

    next: Position
    label: str
    reward: float = 0.0
    passes: bool = False


class Ending(NamedTuple):
    """Where a roll that allows no move ends the game: the terminal's key, label and payoff.

    ``roll_label`` names the rolls that lead there (default: ``'roll'`` and their texts); ``{rolls}`` in it
    stands for those rolls, comma-separated (``'{rolls}: wins'``).
    """

    key: str
    label: str
    payoff: float
    roll_label: str | None = None


Agent = Callable[[Position, Roll, Sequence[Move]], Move]

ATTRIBUTES = {  # what the attributes of a rules object mean (its methods say it in their docstrings)
    "agents": "the agents by name, each `agent(position, roll, moves)` returning the move it takes",
    "constant_sum": "a game for two: what the two players' values add up to",
    "highest_outcome": "a bound no outcome of the game exceeds, points paid on moves included (None: not declared); "
                       "a target beyond it is refused as the parameters are read (`dicegraph.graphs.paired`)",
    "points_fall": "whether a move or an end may pay points below 0 (a target then pairs positions with every "
                   "total, never settled early: `dicegraph.graphs.paired`)",
}


class Rules(Protocol):
    """What a game says at the rules level, for one set of parameters (see the module's docstring)."""

    agents: Mapping[str, Agent]  # see ATTRIBUTES
    constant_sum: float
    highest_outcome: float | None
    points_fall: bool

    def starts(self) -> Sequence[Position]:
        """Return the positions to expand from: the root first, then any others the graph must hold."""
        ...

    def key(self, position: Position) -> str:
        """Return the position's key, unique in the graph."""
        ...

    def label(self, position: Position) -> str:
        """Return the position's readable label."""
        ...

    def clock(self, position: Position) -> int:
        """Return the game's clock at the position (never decreasing along a move)."""
        ...

    def payoff(self, position: Position) -> float | None:
        """Return what the game pays when it is over at the position, else None."""
        ...

    def rolls(self, position: Position) -> Iterable[tuple[Roll, int]] | None:
        """Return the roll outcomes at the position with integer weights, or None when the player moves first."""
        ...

    def moves(self, position: Position, roll: Roll | None) -> Sequence[Move]:
        """Return the moves the roll allows (``roll`` None: the moves of a decision before rolling)."""
        ...

    def ending(self, position: Position, roll: Roll) -> Ending | Move:
        """Return where a roll without moves leads: an Ending (the game is over), or a Move taken without a choice."""
        ...

    def roll_text(self, roll: Roll) -> str:
        """Return a roll as text, e.g. ``'3-4'``."""
        ...

    def roll_label(self, texts: Sequence[str]) -> str:
        """Return the label of the edge that the rolls ``texts`` (their :meth:`roll_text`) take to one decision."""
        ...

    def decision_key(self, position: Position, roll: Roll) -> str:
        """Return the key of the decision after ``roll`` at the position."""
        ...

    def decision_label(self, position: Position, roll: Roll) -> str:
        """Return the label of that decision."""
        ...


class DiceRules:
    """Defaults for :class:`Rules`: no clock, no agents, no ending (every roll must allow a move), decisions
    keyed ``'<position key>/<roll>'`` and reached by an edge labelled ``'roll <rolls>'``, and the values of a
    game for two are probabilities of winning (``constant_sum`` 1)."""

    agents: Mapping[str, Agent] = {}
    constant_sum: float = 1.0
    highest_outcome: float | None = None
    points_fall: bool = False

    def clock(self, position: Position) -> int:
        """Return 0: without a clock the layers are the longest paths from the root."""
        return 0

    def ending(self, position: Position, roll: Roll) -> Ending | Move:
        """Raise InvalidGraph: rules whose every roll allows a move need no ending, and a roll that allows none
        where the rules give no ending is a broken promise, named in one line."""
        where = self.key(position)  # type: ignore[attr-defined]
        raise InvalidGraph(f"roll {self.roll_text(roll)!r} allows no move at {where!r} and the rules give no "
                           "ending (define ending(position, roll))")

    def roll_text(self, roll: Roll) -> str:
        """Return ``'3-4'`` for a tuple of dice, the roll's text otherwise."""
        return "-".join(map(str, roll)) if isinstance(roll, tuple) else str(roll)

    def roll_label(self, texts: Sequence[str]) -> str:
        """Return ``'roll 2-5 5-2'``: the rolls' texts after ``'roll'``."""
        return "roll " + " ".join(texts)

    def decision_key(self, position: Position, roll: Roll) -> str:
        """Return ``'<key>/<roll text>'``."""
        return f"{self.key(position)}/{self.roll_text(roll)}"  # type: ignore[attr-defined]

    def decision_label(self, position: Position, roll: Roll) -> str:
        """Return ``'<label>; roll <roll text>'``."""
        return f"{self.label(position)}; roll {self.roll_text(roll)}"  # type: ignore[attr-defined]


