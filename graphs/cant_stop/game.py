"""Can't Stop, one turn, as Norvig's notebook (seed 003) models it (rules: shared/RULES.md).

Three sherpas stand on three distinct columns. Each roll of four dice can be
paired three ways; a pairing ``(a, b)`` gains ``worth(a)`` if ``a`` is a sherpa
column plus ``worth(b)`` if ``b`` is. No pairing gains anything: bust, the
turn is worth 0. Otherwise the player takes a pairing and stops (keeping the
turn's worth so far) or rolls again. ``worth`` is ``one`` (1 a step) or
``progress`` (1 / the column's length); the turn starts worth the sherpas'
first steps.

Worths are exact: ``progress`` counts in units of 1/45045 (45045 is the least
common multiple of the column lengths 3, 5, ..., 13), ``one`` in whole steps.

**Why the graph is finite.** Let ``G`` be a roll's best gain (0 on a bust),
``p = P(G > 0)`` and ``s* = E[G] / (1 - p)``. Rolling once more from worth
``s`` and then stopping is worth ``p*s + E[G]``, no more than ``s`` exactly
when ``s >= s*``; and worth never goes down while rolling. Let ``M`` be the
most that any way of playing on can add, in expectation, to a worth ``t >= s*``
(finite: at most ``E[G] / (1 - p)``). Rolling from ``s >= s*`` is worth at most
``p*s + E[G] + p*M <= s + p*M``, so ``M <= p*M``, so ``M = 0``: from ``s*`` on,
stopping is optimal. The rules therefore give a state of worth ``>= s*``
no "roll" move, which changes no value (``tests/test_cant_stop.py`` rebuilds
with room beyond ``s*`` (``slack``) and finds the same optimum, never rolling there).

The graph. The start is a decision: stop at once or roll. A *state* (worth so
far ``s < s*``) is a chance node over the 1296 ordered rolls, grouped by
identical effect (the set of gains the pairings offer) with integer weights.
Each group leads to a decision: take one of the gains, then stop (a terminal
paying the new worth) or roll on (the state of the new worth); the bust group
leads to a terminal paying 0. The graph is what :class:`CantStopRules`
expand to (:mod:`dicegraph.graphs.expand`); their clock, the worth in the triple's
smallest steps, climbs with every gain. With ``columns=all``, the root is a
chance node choosing each of the 165 triples with weight 1, so one graph
(and one set-based solve) holds every triple.

>>> pairings((2, 3, 5, 6))
((5, 11), (7, 9), (8, 8))
>>> [group for group in roll_effects((2, 3, 12), "one") if group[0] == (2,)][0][1]
24
>>> bound((6, 7, 8), "one")
Fraction(427, 26)
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import Param
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "cant-stop"
title = "Can't Stop (one turn)"
summary = "One turn of Can't Stop with three sherpas: when to stop rolling (Norvig's model)."
version = 2  # 2: built from the rules (the same nodes and edges, layered by the expander)
objective = "max"
outcome = "expected worth"

LENGTHS = {2: 3, 3: 5, 4: 7, 5: 9, 6: 11, 7: 13, 8: 11, 9: 9, 10: 7, 11: 5, 12: 3}
UNITS = {"one": 1, "progress": 45045}  # a step's worth counts in 1/UNITS
WORTHS = tuple(UNITS)
ALL = "all"
TRIPLES = tuple(itertools.combinations(range(2, 13), 3))
DICE = tuple(itertools.product(range(1, 7), repeat=4))


@hookimpl
def diagrams() -> dict[str, dict[str, Any]]:
    """Return the pictures worth drawing (dicegraph report cant-stop --diagrams DIR): one triple's whole turn."""
    return {"2-7-10-one": {"policy": "optimal", "full": True, "layers": True,
                           "params": {"columns": (2, 7, 10), "worth": "one"}}}


def parse_columns(text: str) -> tuple[int, ...] | str | None:
    """Return the sherpa columns of ``'6,7,8'`` (1 to 3 distinct columns 2..12, sorted), or ``'all'``."""
    if text.strip().lower() == ALL:
        return ALL
    try:
        columns = tuple(sorted(int(part) for part in text.split(",")))
    except ValueError:
        return None
    if not 1 <= len(columns) <= 3 or len(set(columns)) != len(columns) or not all(2 <= c <= 12 for c in columns):
        return None
    return columns


params = (
    Param("columns", ALL, parse_columns, "the sherpas' columns, e.g. 6,7,8; 'all' builds all 165 triples in one graph",
          check=lambda value: value is not None,
          accepted="'all' or 1 to 3 distinct columns from 2..12, e.g. 6,7,8"),
    Param("worth", "progress", str, "what a step is worth: one, or progress (1 / the column's length)",
          check=lambda value: value in WORTHS, accepted="one or progress"),
    Param("slack", 0, int, "room to explore beyond the stopping bound s*, in steps of the smallest worth (tests)",
          check=lambda value: 0 <= value <= 50, accepted="whole numbers 0..50"),
)
small_params = {"columns": (6, 7, 8)}  # small enough for exhaustive checks (tests/test_conformance.py)


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The notebook names no heuristic player: only solves."""
    return ()


def pairings(dice: tuple[int, int, int, int]) -> tuple[tuple[int, int], ...]:
    """Return the distinct ways to pair four dice into two sums, each sum pair sorted."""
    a, b, c, d = dice
    found = {tuple(sorted(pair)) for pair in ((a + b, c + d), (a + c, b + d), (a + d, b + c))}
    return tuple(sorted(found))  # type: ignore[return-value]


def worth_units(column: int, worth: str) -> int:
    """Return a step in ``column`` in units: 1 for ``one``, 45045 / length for ``progress``."""
    return 1 if worth == "one" else UNITS["progress"] // LENGTHS[column]


def to_worth(units: int, worth: str) -> float:
    """Return a worth in units as a float."""
    return units / UNITS[worth]


@functools.lru_cache(maxsize=1)
def _pairings_counted() -> tuple[tuple[tuple[tuple[int, int], ...], int], ...]:
    """Return the distinct pairings of the 1296 rolls, each with how many rolls offer it (fewer than the rolls:
    every triple's groups are counted over these)."""
    return tuple(Counter(pairings(dice) for dice in DICE).items())


@functools.lru_cache(maxsize=None)
def roll_effects(columns: tuple[int, ...], worth: str) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Return the rolls grouped by effect: (the distinct positive gains the pairings offer, highest first; weight).

    The group with no gain is the bust. Weights add up to 1296.
    """
    units = {column: worth_units(column, worth) for column in columns}
    groups: Counter[tuple[int, ...]] = Counter()
    for offered, rolls in _pairings_counted():
        gains = {units.get(first, 0) + units.get(second, 0) for first, second in offered}
        groups[tuple(sorted((g for g in gains if g > 0), reverse=True))] += rolls
    return tuple(sorted(groups.items(), key=lambda item: (-len(item[0]), item[0]), reverse=False))


def p_no_bust(columns: tuple[int, ...]) -> Fraction:
    """Return the probability that a roll gains something (exact)."""
    return Fraction(sum(w for gains, w in roll_effects(columns, "one") if gains), len(DICE))


def expected_gain(columns: tuple[int, ...], worth: str) -> Fraction:
    """Return the expected best gain of one roll, in worth (exact)."""
    units = sum(max(gains) * w for gains, w in roll_effects(columns, worth) if gains)
    return Fraction(units, len(DICE) * UNITS[worth])


def start_units(columns: tuple[int, ...], worth: str) -> int:
    """Return the turn's worth when the sherpas have made their first steps, in units."""
    return sum(worth_units(c, worth) for c in columns)


def bound(columns: tuple[int, ...], worth: str) -> Fraction:
    """Return s* = E[G] / (1 - p) in units: from there on, stopping is optimal (see the module's text)."""
    p = p_no_bust(columns)
    if p == 1:
        raise DicegraphError(f"columns {columns} never bust: the turn has no optimal stopping point")
    return expected_gain(columns, worth) * UNITS[worth] / (1 - p)


def triple_key(columns: tuple[int, ...]) -> str:
    """Return the key prefix of a triple, e.g. ``'6-7-8'``."""
    return "-".join(map(str, columns))


@functools.lru_cache(maxsize=None)
def gain_text(units: int, worth: str) -> str:
    """Return a worth in units as an exact fraction for labels, e.g. ``'2'`` or ``'24/143'``."""
    return str(Fraction(units, UNITS[worth]))


ROOT = "all"  # with columns=all: the chance node choosing each triple
START, STATE, STOP = "start", "state", "stop"  # a position: (kind, columns, worth so far in units)


class CantStopRules(DiceRules):
    """One turn of Can't Stop for a triple, or for all 165 (a first roll chooses the triple, each weight 1).

    A position is ``(kind, columns, units)``: the turn's first decision (stop or roll), a state that rolls,
    or a stop paying its worth. A roll is a group of the 1296 rolls with one effect, ``(gains, weight)``
    (:func:`roll_effects`), labelled ``'24 rolls: gains 2, 1'``. The clock counts the smallest worth of a
    step, so every gain moves it on.

    >>> rules = CantStopRules((2, 3, 12), "one", 0)
    >>> [move.label for move in rules.moves(rules.starts()[0], None)]
    ['stop']
    """

    def __init__(self, columns: tuple[int, ...] | str, worth: str, slack: int):
        self.columns, self.worth = columns, worth
        self.triples = TRIPLES if columns == ALL else (columns,)
        self.steps = {triple: min(worth_units(c, worth) for c in triple) for triple in self.triples}
        self.limits = {triple: bound(triple, worth) + slack * self.steps[triple] for triple in self.triples}

    def starts(self) -> list[Any]:
        """Return the root: the choice of a triple, or the one triple's first decision."""
        return [ROOT] if self.columns == ALL else [self._start(self.columns)]

    def _start(self, columns: tuple[int, ...]) -> Any:
        return START, columns, start_units(columns, self.worth)

    def key(self, position: Any) -> str:
        """Return ``'6-7-8'`` (the first decision), ``'6-7-8:12'`` (a state) or ``'6-7-8:12/stop'``."""
        if position == ROOT:
            return ROOT
        kind, columns, units = position
        prefix = triple_key(columns)
        return prefix if kind == START else f"{prefix}:{units}" + ("/stop" if kind == STOP else "")

    def label(self, position: Any) -> str:
        """Return the position in words."""
        if position == ROOT:
            return "each of the 165 triples"
        kind, columns, units = position
        if kind == START:
            return f"sherpas on {triple_key(columns)}: stop or roll"
        if kind == STOP:
            return f"stop at {gain_text(units, self.worth)}"
        return f"{triple_key(columns)}, worth {gain_text(units, self.worth)}"

    def clock(self, position: Any) -> int:
        """Return the worth in the triple's smallest steps; 0 at the root and the first decisions, so that the
        triples' first decisions share the layer after the root (the report reads them there)."""
        return 0 if position == ROOT or position[0] == START else position[2] // self.steps[position[1]]

    def payoff(self, position: Any) -> float | None:
        """Return the worth of a stop; None elsewhere."""
        return to_worth(position[2], self.worth) if position != ROOT and position[0] == STOP else None

    def rolls(self, position: Any) -> list[tuple[Any, int]] | None:
        """Return the triples at the root, a state's rolls grouped by effect, None at the first decision."""
        if position == ROOT:
            return [(triple, 1) for triple in TRIPLES]
        if position[0] == START:
            return None
        return [(effect, effect[1]) for effect in roll_effects(position[1], self.worth)]

    def _on(self, columns: tuple[int, ...], units: int, action: str) -> list[Move]:
        """Return stopping at ``units``, then rolling on from there when the bound allows it."""
        moves = [Move((STOP, columns, units), f"{action}stop")]
        if units < self.limits[columns]:
            moves.append(Move((STATE, columns, units), f"{action}roll"))
        return moves

    def moves(self, position: Any, roll: Any) -> list[Move]:
        """Return stop or roll at the first decision; after a roll, each gain it offers, then stop or roll."""
        if position == ROOT:
            return []
        kind, columns, units = position
        if kind == START:
            return self._on(columns, units, "")
        return [move for gain in roll[0] for move in self._on(columns, units + gain, f"take {gain_text(gain, self.worth)}, ")]

    def ending(self, position: Any, roll: Any) -> Move | Ending:
        """Return the triple a root roll chooses, or a state's bust (the turn is worth 0)."""
        if position == ROOT:
            return Move(self._start(roll), f"sherpas {triple_key(roll)}")
        return Ending(f"{self.key(position)}/bust", "bust: the turn is lost", 0.0, roll_label=f"{roll[1]} rolls: bust")

    def roll_text(self, roll: Any) -> str:
        """Return ``'24 rolls: gains 2, 1'`` for a group of rolls, ``'6-7-8'`` for a triple."""
        if isinstance(roll[0], int):
            return triple_key(roll)
        gains, weight = roll
        return f"{weight} rolls: {self._gains(gains)}"

    def _gains(self, gains: tuple[int, ...]) -> str:
        """Return ``'gains 2, 1'``: what a group of rolls offers."""
        return "gains " + ", ".join(gain_text(g, self.worth) for g in gains)

    def roll_label(self, texts: Sequence[str]) -> str:
        """Return the group's text as it is (one group leads to each decision)."""
        return " ".join(texts)

    def decision_key(self, position: Any, roll: Any) -> str:
        """Return ``'6-7-8:12/3+2'``: the state and the gains the roll offers."""
        return f"{self.key(position)}/" + "+".join(map(str, roll[0]))

    def decision_label(self, position: Any, roll: Any) -> str:
        """Return ``'6-7-8 at 12, gains 3, 2'``."""
        return f"{triple_key(position[1])} at {gain_text(position[2], self.worth)}, {self._gains(roll[0])}"


def rules(params: Mapping[str, Any]) -> CantStopRules:
    """Return the turn's rules for ``params`` (columns or all, worth, slack): the graph and its exact checks
    come from them.

    >>> from dicegraph.graphs.expand import expand
    >>> from dicegraph.graphs.protocol import Edge, one_by_one
    >>> [row.label for row in one_by_one(expand(rules({"columns": (2, 3, 12), "worth": "one", "slack": 0})))
    ...  if isinstance(row, Edge)]
    ['stop']
    """
    return CantStopRules(params["columns"], params["worth"], params["slack"])
