"""Jackpot, the Thai-style Shut the Box of seed 000 (rules: shared/RULES.md).

Cells 1..N start down. Each turn two dice are rolled; the player flips up one
down cell among ``[i, j, i+j]`` (in that order, ``i+j`` only when it is a cell).
No such cell: the game is lost. All cells up: JACKPOT, the game is won.

The graph, expanded from :class:`JackpotRules` by :func:`dicegraph.graphs.expand.expand`: a *position* (cells up, as the index sum of ``2**(c-1)``) is a chance
node over the 36 ordered rolls; each roll that offers a cell leads to a decision
node (position, roll) whose moves flip one offered cell; the rolls that offer
none lead to the position's ``lost`` terminal. The clock counts the cells up,
so a position with ``k`` cells up is in layer ``2k``, its decisions and loss
in layer ``2k+1``; the won position is a terminal with payoff 1 in layer ``2N``.

>>> offered_cells((2, 2), up=0, cells=9)
(2, 2, 4)
>>> offered_cells((3, 4), up=cell_bit(7), cells=9)
(3, 4)
>>> AGENTS["hilo"]([3, 4, 7], 9), AGENTS["hilo2"]([1, 5, 6], 9)
(7, 1)

The simulator plays the same rules with numpy: a table gives the next position
for every position and roll under the policy, and every game takes one lookup
a turn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from dicegraph.graphs.dice import ordered_rolls
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.montecarlo import stored_move
from dicegraph.graphs.protocol import Node, Param, Row
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "jackpot"
title = "Jackpot"
summary = "Thai-style Shut the Box: flip a die's cell or the sum's; win by flipping all nine."
version = 1
objective = "max"
outcome = "win probability"
params = (
    Param(
        "cells",
        9,
        int,
        "number of cells on the board",
        check=lambda cells: 2 <= cells <= 12,
        accepted="whole numbers 2..12",
    ),
)
small_params = {"cells": 5}  # small enough for exhaustive checks (tests/test_conformance.py)



@hookimpl
def diagrams() -> dict[str, dict[str, Any]]:
    """Return the pictures worth drawing (dicegraph report jackpot --diagrams DIR): the seed's two HiLo graphs."""
    return {
        "hilo-layers": {"policy": "hilo", "layers": True},
        "hilo-move-labels": {"policy": "hilo", "layers": True, "move_labels": True, "to_layer": 4},
    }


ROLLS: tuple[tuple[int, int], ...] = tuple(ordered_rolls(2))  # type: ignore[arg-type]


def cell_bit(cell: int) -> int:
    """Return the index bit of ``cell`` (cell 1 is the least significant bit)."""
    return 1 << (cell - 1)


def cells_up(index: int) -> list[int]:
    """Return the cells that are up in position ``index``.

    >>> cells_up(12)
    [3, 4]
    """
    return [bit + 1 for bit in range(index.bit_length()) if index >> bit & 1]


@functools.lru_cache(maxsize=None)
def offered_cells(roll: tuple[int, int], up: int, cells: int) -> tuple[int, ...]:
    """Return the cells a roll lets the player flip, in the rules' order, duplicates kept."""
    first, second = roll
    return tuple(c for c in (first, second, first + second) if c <= cells and not up & cell_bit(c))


def hilo_priority(cells: int) -> list[int]:
    """Return HiLo's order: the cells only a sum reaches (high first), then 1 upwards.

    >>> hilo_priority(9)
    [9, 8, 7, 1, 2, 3, 4, 5, 6]
    """
    return list(range(cells, 6, -1)) + list(range(1, min(cells, 6) + 1))


def _hilo(choices: Sequence[int], cells: int) -> int:
    return next(cell for cell in hilo_priority(cells) if cell in choices)


def _hilo2(choices: Sequence[int], cells: int) -> int:
    return max(choices) if max(choices) > 6 else min(choices)


Agent = Callable[[Sequence[int], int], int]
AGENTS: dict[str, Agent] = {
    "min": lambda choices, cells: min(choices),
    "max": lambda choices, cells: max(choices),
    "first": lambda choices, cells: choices[0],
    "last": lambda choices, cells: choices[-1],
    "hilo": _hilo,
    "hilo2": _hilo2,
}


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the names of the seed's six agents."""
    return tuple(AGENTS)


def position_label(index: int) -> str:
    """Return a position's label, e.g. ``'up 3,4'`` or ``'none up'``."""
    up = cells_up(index)
    return "up " + ",".join(map(str, up)) if up else "none up"


class JackpotRules(DiceRules):
    """Jackpot at the rules level: a position is the index of the cells up; the clock counts them."""

    highest_outcome = 1.0  # the jackpot won

    def __init__(self, cells: int):
        self.cells, self.full = cells, (1 << cells) - 1
        self.agents = {agent: self._agent(choose) for agent, choose in AGENTS.items()}

    def _agent(self, choose: Agent) -> Callable[[int, tuple[int, int], Sequence[Move]], Move]:
        def pick(index: int, roll: tuple[int, int], moves: Sequence[Move]) -> Move:
            label = move_label(choose(offered_cells(roll, index, self.cells), self.cells))
            return next(move for move in moves if move.label == label)
        return pick

    def starts(self) -> list[int]:
        """Return the start: no cell up."""
        return [0]

    def key(self, index: int) -> str:
        """Return the index as text."""
        return str(index)

    def label(self, index: int) -> str:
        """Return ``'up 3,4'``, or the jackpot's label."""
        return "JACKPOT: all up" if index == self.full else position_label(index)

    def clock(self, index: int) -> int:
        """Return the number of cells up."""
        return index.bit_count()

    def payoff(self, index: int) -> float | None:
        """Return 1 when every cell is up (won), else None."""
        return 1.0 if index == self.full else None

    def rolls(self, index: int) -> list[tuple[tuple[int, int], int]]:
        """Return the 36 ordered rolls of two dice, weight 1 each."""
        return [(roll, 1) for roll in ROLLS]

    def moves(self, index: int, roll: tuple[int, int]) -> list[Move]:
        """Return a flip of each offered cell, lowest first."""
        return [Move(index | cell_bit(cell), move_label(cell)) for cell in sorted(set(offered_cells(roll, index, self.cells)))]

    def ending(self, index: int, roll: tuple[int, int]) -> Ending:
        """Return the position's loss: no cell offered."""
        return Ending(f"{index}/lost", f"lost, {position_label(index)}", 0.0)


def rules(params: Mapping[str, Any]) -> JackpotRules:
    """Return Jackpot's rules for ``params['cells']`` cells."""
    return JackpotRules(params["cells"])


def build(params: Mapping[str, Any]) -> Iterator[Row]:
    """Yield the Jackpot graph for ``params['cells']`` cells, expanded from :func:`rules`.

    >>> rows = list(build({"cells": 3}))
    >>> sum(1 for row in rows if isinstance(row, Node) and row.kind == "chance")
    7
    """
    from dicegraph.graphs.expand import expand  # the expander (numpy) when a graph is made, not when listed

    return expand(rules(params))


def move_label(cell: int) -> str:
    """Return the label of the move flipping ``cell``, e.g. ``'flip 4'``."""
    return f"flip {cell}"


def decision_key(index: int, roll: tuple[int, int]) -> str:
    """Return the key of the decision after ``roll`` at position ``index``, e.g. ``'12/3-4'``."""
    return f"{index}/{roll[0]}-{roll[1]}"


def next_positions(cells: int, policy: str | Mapping[str, str]) -> list[list[int]]:
    """Return the position each roll leads to from each position under ``policy``.

    ``policy`` is an agent's name or a stored policy's choices (decision key ->
    move label). Row ``2**cells`` is the lost state; the won position and the
    lost state lead to themselves.

    >>> table = next_positions(2, "max")
    >>> table[0][ROLLS.index((1, 1))], table[0][ROLLS.index((6, 6))], table[3][0]
    (2, 4, 3)
    """
    full, lost = (1 << cells) - 1, 1 << cells
    if isinstance(policy, str):
        agent = AGENTS[policy]
    table = [[lost] * len(ROLLS) for _ in range(lost + 1)]
    table[full] = [full] * len(ROLLS)
    for index in range(full):
        for column, roll in enumerate(ROLLS):
            choices = offered_cells(roll, index, cells)
            if not choices:
                continue
            if isinstance(policy, str):
                cell = agent(choices, cells)
            else:
                cell = stored_move(policy, decision_key(index, roll), sorted(set(choices)), move_label)
            table[index][column] = index | cell_bit(cell)
    return table


def simulator(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` random games with a numpy generator; 1.0 marks a win."""
    import numpy as np

    cells = params["cells"]
    table = np.array(next_positions(cells, policy), dtype=np.int16)
    full = (1 << cells) - 1

    def play(games: int, rng: Any) -> Any:
        position = np.zeros(games, dtype=np.int16)
        for _ in range(cells):
            position = table[position, rng.integers(0, len(ROLLS), size=games)]
        return (position == full).astype(np.float64)

    return play
