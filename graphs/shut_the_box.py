"""Shut The Box, classic, as seed 002 plays it (rules: shared/RULES.md).

Tiles 1..N start open. Each turn two dice are rolled and summed (2..12); the
player shuts any set of open tiles adding up to the sum. No such set: the game
ends and the score is the sum of the open tiles (lower is better; 0 means the
box is shut). Variant ``one_die``: once no tile from 7 up is open, one die is
rolled instead of two.

The graph: a *position* (the open tiles, as the index ``sum(2**(t-1))``) is a
chance node over the roll's total; each total that allows a move leads to a
decision node (position, total) whose moves shut one set of tiles; the totals
that allow none lead to the position's ``end`` terminal, whose payoff is the
score. All ``2**N`` boards are built, reachable or not, as the seed's state
space has them. A position with ``k`` tiles shut is in layer ``2k``, its
decisions and end in ``2k+1``; the shut box is a terminal in layer ``2N``.

Moves are streamed in the seed's order (``itertools.product`` over tiles 1..N,
tile 1 slowest), so the solver's tie-break (first move streamed) is the seed's.

>>> shut_sets(0b1111, 5)
((2, 3), (1, 4))
>>> greedy(shut_sets(0b111111111, 8))
(8,)
>>> score(0b101)
4
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from graphs.montecarlo import stored_move
from graphs.protocol import CHANCE, DECISION, MOVE, ROLL, TERMINAL, Edge, Node, NodeIds, Param, Row

name = "shut-the-box"
title = "Shut The Box"
summary = "Shut tiles adding up to the dice; the score is what stays open (lower is better)."
version = 1
objective = "min"
outcome = "expected score"
HIGH_TILE = 7  # the one-die variant rolls one die once no tile from here up is open


def _on_off(text: str) -> bool | None:
    return {"on": True, "off": False, "1": True, "0": False, "true": True, "false": False}.get(text.lower())


params = (
    Param("tiles", 9, int, "number of tiles", check=lambda tiles: 2 <= tiles <= 12, accepted="whole numbers 2..12"),
    Param("one_die", False, _on_off, "roll one die once the tiles from 7 up are shut",
          check=lambda value: value is not None, accepted="on or off"),
)

TWO_DICE = {total: 6 - abs(total - 7) for total in range(2, 13)}  # ways to roll each total, over 36
ONE_DIE = {face: 1 for face in range(1, 7)}  # over 6

# solves besides "optimal" (lowest expected score): the highest probability of shutting the box
solves = {"optimal-shut": ("max", "payoff = 0")}

# pictures worth drawing (dicegraph report shut-the-box --diagrams DIR)
diagrams = {"optimal-start": {"policy": "optimal", "full": True, "depth": 2}}


def tiles_of(index: int) -> list[int]:
    """Return the tiles in ``index`` (tile ``t`` is bit ``t-1``).

    >>> tiles_of(0b1000101)
    [1, 3, 7]
    """
    return [bit + 1 for bit in range(index.bit_length()) if index >> bit & 1]


def score(open_index: int) -> int:
    """Return the sum of the open tiles."""
    return sum(tiles_of(open_index))


def index_of(tiles: Sequence[int]) -> int:
    """Return the index of a set of tiles."""
    return sum(1 << (tile - 1) for tile in tiles)


def shut_sets(open_index: int, total: int) -> tuple[tuple[int, ...], ...]:
    """Return the sets of open tiles adding up to ``total``, in the seed's order."""
    return _moves_by_total(open_index).get(total, ())


@functools.lru_cache(maxsize=None)
def _moves_by_total(open_index: int) -> dict[int, tuple[tuple[int, ...], ...]]:
    """Every non-empty set of open tiles adding up to a possible roll (1..12), grouped by total.

    Within a total, the seed's order: ``itertools.product((0, 1), ...)`` over the
    open tiles, lowest tile slowest, i.e. by the membership bits read lowest tile first.
    """
    tiles = tiles_of(open_index)
    found: dict[int, list[tuple[int, ...]]] = {}
    subset = open_index
    while subset:  # every non-empty subset of the open tiles
        chosen = tiles_of(subset)
        if sum(chosen) <= max(TWO_DICE):
            found.setdefault(sum(chosen), []).append(tuple(chosen))
        subset = (subset - 1) & open_index
    return {total: tuple(sorted(moves, key=lambda move: [tile in move for tile in tiles]))
            for total, moves in found.items()}


def greedy(moves: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The seed's greedy agent: the move whose tiles, read as bits with the highest tile first, are largest."""
    return max(moves, key=index_of)


AGENTS: dict[str, Callable[[Sequence[tuple[int, ...]]], tuple[int, ...]]] = {"greedy": greedy}


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the names of the builder's agents: the seed's greedy player."""
    return tuple(AGENTS)


def roll_totals(open_index: int, params: Mapping[str, Any]) -> dict[int, int]:
    """Return the totals the next roll can show at this board, with their weights."""
    if params["one_die"] and open_index < 1 << (HIGH_TILE - 1):
        return ONE_DIE
    return TWO_DICE


def board_label(open_index: int) -> str:
    """Return a board's label, e.g. ``'open 1,2,3'`` or ``'shut'``."""
    return "open " + ",".join(map(str, tiles_of(open_index))) if open_index else "shut"


def move_label(move: Sequence[int]) -> str:
    """Return the label of the move shutting ``move``, e.g. ``'shut 2,5'``."""
    return "shut " + ",".join(map(str, move))


def decision_key(open_index: int, total: int) -> str:
    """Return the key of the decision after rolling ``total`` at board ``open_index``."""
    return f"{open_index}/{total}"


def build(params: Mapping[str, Any]) -> Iterator[Row]:
    """Yield the graph of every board of ``params['tiles']`` tiles, layer by layer.

    >>> rows = list(build({"tiles": 3, "one_die": False}))
    >>> sum(1 for row in rows if isinstance(row, Node) and row.kind == "chance")
    7
    """
    tiles = params["tiles"]
    full = (1 << tiles) - 1
    ids = NodeIds()
    ids[str(full)]  # the root: all tiles open
    for shut_count in range(tiles + 1):
        boards = sorted((index for index in range(full + 1) if tiles - index.bit_count() == shut_count), reverse=True)
        for index in boards:
            yield from _board_rows(ids, index, 2 * shut_count, params)
        for index in boards:
            if index:
                yield from _decision_rows(ids, index, 2 * shut_count + 1, params)


def _board_rows(ids: NodeIds, index: int, layer: int, params: Mapping[str, Any]) -> Iterator[Row]:
    key = str(index)
    if index == 0:
        yield Node(ids[key], key, layer, TERMINAL, "shut: score 0", payoff=0.0)
        return
    totals = roll_totals(index, params)
    yield Node(ids[key], key, layer, CHANCE, board_label(index), denom=sum(totals.values()))
    stuck = [total for total in totals if not shut_sets(index, total)]
    if stuck:
        weight = sum(totals[total] for total in stuck)
        yield Edge(ids[key], ids[f"{key}/end"], ROLL, "roll " + " ".join(map(str, stuck)), weight=weight)
    for total, weight in totals.items():
        if shut_sets(index, total):
            yield Edge(ids[key], ids[decision_key(index, total)], ROLL, f"roll {total}", weight=weight)


def _decision_rows(ids: NodeIds, index: int, layer: int, params: Mapping[str, Any]) -> Iterator[Row]:
    key = str(index)
    totals = roll_totals(index, params)
    if f"{key}/end" in ids:
        yield Node(ids[f"{key}/end"], f"{key}/end", layer, TERMINAL, f"stuck, {board_label(index)}: score {score(index)}",
                   payoff=float(score(index)))
    for total in totals:
        moves = shut_sets(index, total)
        if not moves:
            continue
        decision = decision_key(index, total)
        yield Node(ids[decision], decision, layer, DECISION, f"{board_label(index)}; rolled {total}")
        picks = {agent: choose(moves) for agent, choose in AGENTS.items()}
        for move in moves:
            chosen_by = tuple(agent for agent, pick in picks.items() if pick == move)
            yield Edge(ids[decision], ids[str(index & ~index_of(move))], MOVE, move_label(move), chosen_by=chosen_by)


def next_boards(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> list[list[int]]:
    """Return, for every board and roll total 0..12, the board the policy leaves (-1: no move, the game ends).

    ``policy`` is an agent's name or a stored policy's choices (decision key -> move label).

    >>> table = next_boards({"tiles": 9, "one_die": False}, "greedy")
    >>> table[511][12], table[1][5]
    (251, -1)
    """
    tiles = params["tiles"]
    table = [[-1] * 13 for _ in range(1 << tiles)]
    for index in range(1, 1 << tiles):
        for total in roll_totals(index, params):
            moves = shut_sets(index, total)
            if not moves:
                continue
            if isinstance(policy, str):
                move = AGENTS[policy](moves)
            else:
                move = stored_move(policy, decision_key(index, total), moves, move_label)
            table[index][total] = index & ~index_of(move)
    return table


def simulator(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` random games with a numpy generator; their scores."""
    import numpy as np

    tiles = params["tiles"]
    table = np.array(next_boards(params, policy), dtype=np.int32)
    scores = np.array([score(index) for index in range(1 << tiles)], dtype=np.float64)
    low_only = np.array([params["one_die"] and index < 1 << (HIGH_TILE - 1) for index in range(1 << tiles)])

    def play(games: int, rng: Any) -> Any:
        board = np.full(games, (1 << tiles) - 1, dtype=np.int32)
        final = np.full(games, -1.0)
        for _ in range(tiles + 1):  # each turn shuts a tile or ends the game
            playing = final < 0
            if not playing.any():
                break
            first = rng.integers(1, 7, size=games)
            total = np.where(low_only[board], first, first + rng.integers(1, 7, size=games))
            after = table[board, total]
            ended = playing & (after < 0)
            final[ended] = scores[board[ended]]
            board = np.where(playing & ~ended, after, board)
            shut = playing & ~ended & (board == 0)
            final[shut] = 0.0
        return final

    return play
