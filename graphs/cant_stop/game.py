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
stopping is optimal. The builder therefore gives a state of worth ``>= s*``
no "roll" move, which changes no value (``tests/test_cant_stop.py`` rebuilds
with room beyond ``s*`` (``slack``) and finds the same optimum, never rolling there).

The graph. The start is a decision: stop at once or roll. A *state* (worth so
far ``s < s*``) is a chance node over the 1296 ordered rolls, grouped by
identical effect (the set of gains the pairings offer) with integer weights.
Each group leads to a decision: take one of the gains, then stop (a terminal
paying the new worth) or roll on (the state of the new worth); the bust group
leads to a terminal paying 0. A state of worth ``s`` is in layer ``3*(s // w)``,
``w`` the smallest sherpa worth, its decisions and bust one higher, a stop
paying ``t`` in layer ``3*(t // w) + 2``: every gain is at least ``w``, so
edges climb. With ``columns=all``, the root is a chance node choosing each of
the 165 triples with weight 1, so one graph (and one set-based solve) holds
every triple.

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
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from graphs.errors import DicegraphError
from graphs.protocol import CHANCE, DECISION, MOVE, ROLL, TERMINAL, Edge, LayeredRows, Node, NodeIds, Param, Row

name = "cant-stop"
title = "Can't Stop (one turn)"
summary = "One turn of Can't Stop with three sherpas: when to stop rolling (Norvig's model)."
version = 1
objective = "max"
outcome = "expected worth"

LENGTHS = {2: 3, 3: 5, 4: 7, 5: 9, 6: 11, 7: 13, 8: 11, 9: 9, 10: 7, 11: 5, 12: 3}
UNITS = {"one": 1, "progress": 45045}  # a step's worth counts in 1/UNITS
WORTHS = tuple(UNITS)
ALL = "all"
TRIPLES = tuple(itertools.combinations(range(2, 13), 3))
DICE = tuple(itertools.product(range(1, 7), repeat=4))


# pictures worth drawing (dicegraph report cant-stop --diagrams DIR): one triple's whole turn
diagrams = {"2-7-10-one": {"policy": "optimal", "full": True, "layers": True,
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


@functools.lru_cache(maxsize=None)
def roll_effects(columns: tuple[int, ...], worth: str) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Return the rolls grouped by effect: (the distinct positive gains the pairings offer, highest first; weight).

    The group with no gain is the bust. Weights add up to 1296.
    """
    groups: Counter[tuple[int, ...]] = Counter()
    for dice in DICE:
        gains = {sum(worth_units(s, worth) for s in pair if s in columns) for pair in pairings(dice)}
        groups[tuple(sorted((g for g in gains if g > 0), reverse=True))] += 1
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


def gain_text(units: int, worth: str) -> str:
    """Return a worth in units as an exact fraction for labels, e.g. ``'2'`` or ``'24/143'``."""
    return str(Fraction(units, UNITS[worth]))


def build(params: Mapping[str, Any]) -> Iterator[Row]:
    """Yield the turn graph of ``params['columns']`` (or of all 165 triples) for ``params['worth']``.

    >>> rows = list(build({"columns": (2, 3, 12), "worth": "one", "slack": 0}))
    >>> [row.label for row in rows if isinstance(row, Edge)]
    ['stop']
    """
    worth, slack = params["worth"], params["slack"]
    triples = TRIPLES if params["columns"] == ALL else (params["columns"],)
    ids = NodeIds()
    layered = LayeredRows()
    if params["columns"] == ALL:
        layered.add(0, Node(ids["all"], "all", 0, CHANCE, "each of the 165 triples", denom=len(TRIPLES)))
        for t in TRIPLES:
            layered.add(0, Edge(0, ids[triple_key(t)], ROLL, f"sherpas {triple_key(t)}"))
    for columns in triples:
        for layer, row in _triple_rows(ids, columns, worth, slack, first_layer=1 if params["columns"] == ALL else 0):
            layered.add(layer, row)
    yield from layered.rows()


def _triple_rows(
    ids: NodeIds, columns: tuple[int, ...], worth: str, slack: int, first_layer: int
) -> Iterator[tuple[int, Row]]:
    """(layer, row) of one triple's turn: start decision, states, decisions, stops and busts."""
    prefix, step = triple_key(columns), min(worth_units(c, worth) for c in columns)
    limit = bound(columns, worth) + slack * step  # states at or past this only stop
    effects = roll_effects(columns, worth)

    def may_roll(units: int) -> bool:
        return units < limit

    def stop(units: int) -> tuple[int, Row]:
        key = f"{prefix}:{units}/stop"
        return 3 * (units // step) + 2, Node(ids[key], key, 3 * (units // step) + 2, TERMINAL,
                                             f"stop at {gain_text(units, worth)}", payoff=to_worth(units, worth))

    start = start_units(columns, worth)
    yield first_layer, Node(ids[prefix], prefix, first_layer, DECISION, f"sherpas on {prefix}: stop or roll")
    yield first_layer, Edge(ids[prefix], ids[f"{prefix}:{start}/stop"], MOVE, "stop")
    stops = {start}
    if may_roll(start):
        yield first_layer, Edge(ids[prefix], ids[f"{prefix}:{start}"], MOVE, "roll")
    pending, seen = [start] if may_roll(start) else [], {start}
    while pending:
        units = pending.pop()
        key, layer = f"{prefix}:{units}", 3 * (units // step)
        yield layer, Node(ids[key], key, layer, CHANCE, f"{prefix}, worth {gain_text(units, worth)}", denom=len(DICE))
        bust = f"{key}/bust"
        for gains, weight in effects:
            target = bust if not gains else f"{key}/" + "+".join(map(str, gains))
            label = "bust" if not gains else "gains " + ", ".join(gain_text(g, worth) for g in gains)
            yield layer, Edge(ids[key], ids[target], ROLL, f"{weight} rolls: {label}", weight=weight)
            if not gains:
                yield layer + 1, Node(ids[bust], bust, layer + 1, TERMINAL, "bust: the turn is lost", payoff=0.0)
                continue
            yield layer + 1, Node(ids[target], target, layer + 1, DECISION, f"{prefix} at {gain_text(units, worth)}, {label}")
            for gain in gains:
                after = units + gain
                yield layer + 1, Edge(ids[target], ids[f"{prefix}:{after}/stop"], MOVE, f"take {gain_text(gain, worth)}, stop")
                stops.add(after)
                if may_roll(after):
                    yield layer + 1, Edge(ids[target], ids[f"{prefix}:{after}"], MOVE, f"take {gain_text(gain, worth)}, roll")
                    if after not in seen:
                        seen.add(after)
                        pending.append(after)
    for units in sorted(stops):
        yield stop(units)
