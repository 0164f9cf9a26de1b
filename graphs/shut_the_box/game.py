"""Shut The Box, classic, as seed 002 plays it (rules: shared/RULES.md).

Tiles 1..N start open. Each turn two dice are rolled and summed (2..12); the
player shuts any set of open tiles adding up to the sum. No such set: the game
ends and the score is the sum of the open tiles (lower is better; 0 means the
box is shut). Variant ``one_die=on``, as people play and published strategy
tables compute it: once no tile from 7 up is open, the player chooses before
each roll whether to roll one die or two (``one_die=forced``: one die must be
rolled then, a variant kept for comparison).

The graph (expanded from :class:`ShutTheBoxRules` by :func:`dicegraph.graphs.expand.expand`):
a *position* (the open tiles, as the index ``sum(2**(t-1))``) is a chance
node over the roll's total; each total that allows a move leads to a
decision node (position, total) whose moves shut one set of tiles; the totals
that allow none lead to the position's ``end`` terminal, whose payoff is the
score. All ``2**N`` boards are built, reachable or not, as the seed's state
space has them. The clock is the number of tiles shut: boards with ``k`` shut
come before their decisions and end, which come before ``k+1``. With
``one_die=on`` a board where the choice is open is a decision (key ``63``:
``roll one die`` or ``roll two dice``) leading to a chance node per number of
dice (``63/1d``, ``63/2d``) whose rolls share the board's decisions and end.

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
from typing import Any, Union

from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.montecarlo import stored_move
from dicegraph.graphs.protocol import Node, Param, Row
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "shut-the-box"
title = "Shut The Box"
summary = "Shut tiles adding up to the dice; the score is what stays open (lower is better)."
version = 2  # 2: one_die is off, on (a choice before each roll) or forced
objective = "min"
outcome = "expected score"
HIGH_TILE = 7  # the one-die variant rolls one die once no tile from here up is open


ONE_DIE_RULES = ("off", "on", "forced")


def _one_die_rule(text: str) -> str | None:
    rule = {"true": "on", "1": "on", "false": "off", "0": "off"}.get(text.lower(), text.lower())
    return rule if rule in ONE_DIE_RULES else None


params = (
    Param("tiles", 9, int, "number of tiles", check=lambda tiles: 2 <= tiles <= 12, accepted="whole numbers 2..12"),
    Param("one_die", "off", _one_die_rule,
          "once the tiles from 7 up are shut: on, choose one die or two before each roll; forced, one die",
          check=lambda value: value is not None, accepted="off, on or forced"),
)
small_params = {"tiles": 6, "one_die": "on"}  # small enough for exhaustive checks (tests/test_conformance.py)
ONE, TWO = "roll one die", "roll two dice"  # the moves of the dice choice (one_die=on)

TWO_DICE = {total: 6 - abs(total - 7) for total in range(2, 13)}  # ways to roll each total, over 36
ONE_DIE = {face: 1 for face in range(1, 7)}  # over 6

# solves besides "optimal" (lowest expected score): the highest probability of shutting the box
solves = {"optimal-shut": ("max", "payoff = 0")}



@hookimpl
def diagrams() -> dict[str, dict[str, Any]]:
    """Return the pictures worth drawing (dicegraph report shut-the-box --diagrams DIR): the optimum's start."""
    return {"optimal-start": {"policy": "optimal", "full": True, "depth": 2}}


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


def greedy_dice(open_index: int) -> str:
    """Greedy's dice, where it may choose (``one_die=on``): one die when the open tiles add up to 6 or less.

    >>> greedy_dice(0b111), greedy_dice(0b100111)
    ('roll one die', 'roll two dice')
    """
    return ONE if score(open_index) <= 6 else TWO


AGENTS: dict[str, Callable[[Sequence[tuple[int, ...]]], tuple[int, ...]]] = {"greedy": greedy}
DICE_AGENTS: dict[str, Callable[[int], str]] = {"greedy": greedy_dice}


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the names of the builder's agents: the seed's greedy player."""
    return tuple(AGENTS)


def low_only(open_index: int) -> bool:
    """Return whether no tile from 7 up is open (where the one-die rules apply)."""
    return open_index < 1 << (HIGH_TILE - 1)


def dice_choice(open_index: int, params: Mapping[str, Any]) -> bool:
    """Return whether the player chooses one die or two before rolling at this board (``one_die=on``)."""
    return params["one_die"] == "on" and open_index != 0 and low_only(open_index)


def roll_totals(open_index: int, params: Mapping[str, Any], dice: int | None = None) -> dict[int, int]:
    """Return the totals the next roll can show at this board, with their weights.

    ``dice`` (1 or 2) is the player's choice where :func:`dice_choice` allows one.
    """
    if dice is not None:
        return ONE_DIE if dice == 1 else TWO_DICE
    if params["one_die"] == "forced" and low_only(open_index):
        return ONE_DIE
    return TWO_DICE


def possible_totals(open_index: int, params: Mapping[str, Any]) -> list[int]:
    """Return every total a roll can show at this board, whatever the dice chosen."""
    if dice_choice(open_index, params):
        return sorted({*ONE_DIE, *TWO_DICE})
    return list(roll_totals(open_index, params))


def board_label(open_index: int) -> str:
    """Return a board's label, e.g. ``'open 1,2,3'`` or ``'shut'``."""
    return "open " + ",".join(map(str, tiles_of(open_index))) if open_index else "shut"


def move_label(move: Sequence[int]) -> str:
    """Return the label of the move shutting ``move``, e.g. ``'shut 2,5'``."""
    return "shut " + ",".join(map(str, move))


def decision_key(open_index: int, total: int) -> str:
    """Return the key of the decision after rolling ``total`` at board ``open_index``."""
    return f"{open_index}/{total}"


Board = Union[int, tuple[int, int]]  # a board's open tiles, or (open tiles, dice chosen) under one_die=on


class ShutTheBoxRules(DiceRules):
    """Shut The Box at the rules level: a position is a board (its open tiles), the clock the tiles shut.

    Every board is a start, reachable or not, as the seed's state space has
    them. Under ``one_die=on`` a board where the player chooses one die or
    two is a decision whose moves lead to ``(board, dice)``, which rolls.
    """

    def __init__(self, params: Mapping[str, Any]):
        self.params, self.tiles = params, params["tiles"]
        self.agents = {"greedy": self._greedy}
        self.highest_outcome = float(sum(range(1, self.tiles + 1)))  # every tile left open

    def _greedy(self, board: Board, total: int | None, moves: Sequence[Move]) -> Move:
        index = board if isinstance(board, int) else board[0]
        label = greedy_dice(index) if total is None else move_label(greedy(shut_sets(index, total)))
        return next(move for move in moves if move.label == label)

    def starts(self) -> list[int]:
        """Return every board, all tiles open first, then by tiles shut."""
        full = (1 << self.tiles) - 1
        return sorted(range(full + 1), key=lambda index: (-index.bit_count(), -index))

    def key(self, board: Board) -> str:
        """Return ``'<index>'``, or ``'<index>/<n>d'`` for a board where n dice were chosen."""
        return str(board) if isinstance(board, int) else f"{board[0]}/{board[1]}d"

    def label(self, board: Board) -> str:
        """Return ``'open 1,2,3'`` (with the dice chosen, or the question of them)."""
        if isinstance(board, tuple):
            return f"{board_label(board[0])}; {'one die' if board[1] == 1 else 'two dice'}"
        if board == 0:
            return "shut: score 0"
        return f"{board_label(board)}: one die or two?" if dice_choice(board, self.params) else board_label(board)

    def clock(self, board: Board) -> int:
        """Return the number of tiles shut."""
        return self.tiles - (board if isinstance(board, int) else board[0]).bit_count()

    def payoff(self, board: Board) -> float | None:
        """Return 0 when the box is shut, else None."""
        return 0.0 if board == 0 else None

    def rolls(self, board: Board) -> list[tuple[int, int]] | None:
        """Return the totals of the dice with their weights; None where the player first chooses the dice."""
        if isinstance(board, tuple):
            return list(roll_totals(board[0], self.params, board[1]).items())
        return None if dice_choice(board, self.params) else list(roll_totals(board, self.params).items())

    def moves(self, board: Board, total: int | None) -> list[Move]:
        """Return the sets of open tiles adding up to ``total`` (the dice choice when ``total`` is None)."""
        if total is None:
            return [Move((board, 1), ONE), Move((board, 2), TWO)]
        index = board if isinstance(board, int) else board[0]
        return [Move(index & ~index_of(move), move_label(move)) for move in shut_sets(index, total)]

    def ending(self, board: Board, total: int) -> Ending:
        """Return the board's end: stuck, scoring its open tiles."""
        index = board if isinstance(board, int) else board[0]
        return Ending(f"{index}/end", f"stuck, {board_label(index)}: score {score(index)}", float(score(index)))

    def decision_key(self, board: Board, total: int) -> str:
        """Return ``'<index>/<total>'``: both dice choices lead to the same decisions."""
        return decision_key(board if isinstance(board, int) else board[0], total)

    def decision_label(self, board: Board, total: int) -> str:
        """Return ``'open 1,2,3; rolled 5'``."""
        return f"{board_label(board if isinstance(board, int) else board[0])}; rolled {total}"


def rules(params: Mapping[str, Any]) -> ShutTheBoxRules:
    """Return the rules for ``params`` (tiles, one_die)."""
    return ShutTheBoxRules(params)


def build(params: Mapping[str, Any]) -> Iterator[Row]:
    """Yield the graph of every board of ``params['tiles']`` tiles, expanded from :func:`rules`.

    >>> rows = list(build({"tiles": 3, "one_die": "off"}))
    >>> sum(1 for row in rows if isinstance(row, Node) and row.kind == "chance")
    7
    >>> rows = list(build({"tiles": 3, "one_die": "on"}))
    >>> sorted(row.key for row in rows if isinstance(row, Node) and row.kind == "chance")[:3]
    ['1/1d', '1/2d', '2/1d']
    """
    from dicegraph.graphs.expand import expand  # the expander (numpy) when a graph is made, not when listed

    return expand(rules(params))


def next_boards(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> list[list[int]]:
    """Return, for every board and roll total 0..12, the board the policy leaves (-1: no move, the game ends).

    ``policy`` is an agent's name or a stored policy's choices (decision key -> move label).

    >>> table = next_boards({"tiles": 9, "one_die": "off"}, "greedy")
    >>> table[511][12], table[1][5]
    (251, -1)
    """
    tiles = params["tiles"]
    table = [[-1] * 13 for _ in range(1 << tiles)]
    for index in range(1, 1 << tiles):
        for total in possible_totals(index, params):
            moves = shut_sets(index, total)
            if not moves:
                continue
            if isinstance(policy, str):
                move = AGENTS[policy](moves)
            else:
                move = stored_move(policy, decision_key(index, total), moves, move_label)
            table[index][total] = index & ~index_of(move)
    return table


def dice_rolled(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> list[int]:
    """Return, for every board, how many dice the policy rolls there (its choice where ``one_die=on`` gives one).

    >>> rolled = dice_rolled({"tiles": 4, "one_die": "on"}, "greedy")
    >>> rolled[0b0111], rolled[0b1111]  # open 1,2,3 adds up to 6: one die; open 1..4: two
    (1, 2)
    """
    rolled = []
    for index in range(1 << params["tiles"]):
        if dice_choice(index, params):
            move = DICE_AGENTS[policy](index) if isinstance(policy, str) else stored_move(
                policy, str(index), (ONE, TWO), lambda label: label)
            rolled.append(1 if move == ONE else 2)
        else:
            rolled.append(1 if roll_totals(index, params) is ONE_DIE else 2)
    return rolled


def simulator(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` random games with a numpy generator; their scores."""
    import numpy as np

    tiles = params["tiles"]
    table = np.array(next_boards(params, policy), dtype=np.int32)
    scores = np.array([score(index) for index in range(1 << tiles)], dtype=np.float64)
    one_die = np.array(dice_rolled(params, policy)) == 1

    def play(games: int, rng: Any) -> Any:
        board = np.full(games, (1 << tiles) - 1, dtype=np.int32)
        final = np.full(games, -1.0)
        for _ in range(tiles + 1):  # each turn shuts a tile or ends the game
            playing = final < 0
            if not playing.any():
                break
            first = rng.integers(1, 7, size=games)
            total = np.where(one_die[board], first, first + rng.integers(1, 7, size=games))
            after = table[board, total]
            ended = playing & (after < 0)
            final[ended] = scores[board[ended]]
            board = np.where(playing & ~ended, after, board)
            shut = playing & ~ended & (board == 0)
            final[shut] = 0.0
        return final

    return play
