"""5000 as a race (seed 004): two players take turns of 5000 until one banks the target (rules: shared/RULES.md).

Each turn is the one-turn game of :mod:`dicegraph.graphs.five_thousand` (same scoring,
set-aside and hot-dice rules); banking adds the turn total to the mover's
score, a bust leaves the scores and passes the turn, and the first to bank
the target wins at once. Scores are multiples of 50; positions are seen from
the player to move and are worth the probability that this player wins.

The turn is the same for every pair of scores but for what its ends are
worth, so it is stored once and joined with the score pairs when solving
(``store/solve/turns.py`` and, for the cycles, ``store/solve/turn_cycles.py``). The
game is written at the rules level (:class:`RaceRules`, the turn
:class:`RaceTurn` and the score pairs that value its ends); the stored
graph is what they expand to (:func:`dicegraph.graphs.expand.expand_repeating`):

* **Turn states** (layers ``0 .. 2s - 2`` for ``s = target / 50``): the score
  pairs ``(a, b)``, key ``'1500-350'`` (mine, then the opponent's), layer
  ``(a + b) / 50``. Their moves are labelled like the turn's ends: ``bust``
  leads to ``(b, a)``, ``bank t`` to ``(b, a + t)`` (both hand the turn over:
  ``sign`` -1, reward 1, as the mover wins when the opponent does not), or
  to the terminal ``won`` when ``a + t`` reaches the target. A bust keeps the
  score sum, the states' clock, so each layer is a cyclic component (a
  ``CyclicLayers`` row); a bank raises the sum, so the components come in order.
* **The turn** (from layer ``2s`` on): rolling ``n`` dice at turn total
  ``t`` (key ``'3d/250'``), the decision after a roll (``'3d/250/1-5-6'``),
  and the ends ``bust``, ``bank/<t>`` and ``bank/win`` (a total of the target
  or more, a win from any score). Turn totals go up to ``target - 50``.

Agents: the seed's ``threshold-1`` .. ``threshold-6`` and ``turn-optimal``
(the move that maximises the turn's expected points, ties towards banking),
recorded on the turn's moves; in a game every one of them banks whenever
banking reaches the target (the solver's rule for agents: a move that wins
at once is taken).

>>> sizes(150)
{'pairs': 9, 'state_edges': 36, 'turn_nodes': 498, 'turn_edges': 1875}
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dicegraph.graphs.dice import sorted_rolls
from dicegraph.graphs.five_thousand.game import DICE, STEP, bank_bound, kept_options, roll_text, threshold_move
from dicegraph.graphs.protocol import TERMINAL, TIE, Edge, Node, Param, one_by_one
from dicegraph.graphs.repeating import RepeatingTurn, TurnsInFull
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "5000-race"
title = "5000 (race)"
summary = "Two players take turns of 5000 until one banks the target (default 5000): the probability of winning."
version = 1
objective = "max"
outcome = "probability that the player to move wins"
players = 2  # two players, zero-sum, each position seen from the player to move
loops = True  # a bust hands the turn over with the scores unchanged
repeating = True  # the turn is stored once, joined with the score pairs (RaceRules)
params = (
    Param("target", 5000, int, "the score that wins (a multiple of 50)",
          check=lambda target: 100 <= target <= 10000 and target % STEP == 0, accepted="multiples of 50, 100..10000"),
)
small_params = {"target": 150}
THRESHOLDS = tuple(range(1, 7))
TURN_OPTIMAL = "turn-optimal"
WON = "won"
ROOT = f"{DICE}d/0"
BUST_END, WIN_END = "bust", "bank/win"


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the fixed strategies stored with the graph: ``threshold-1`` .. ``threshold-6`` and ``turn-optimal``."""
    return (*(f"threshold-{t}" for t in THRESHOLDS), TURN_OPTIMAL)


def state_key(mine: int, theirs: int) -> str:
    """Return a turn state's key from scores in points, e.g. ``'1500-350'``."""
    return f"{mine}-{theirs}"


def first_guess(params: Mapping[str, Any], key: str) -> dict[str, float]:
    """Return the score pairs whose weighted mean value guesses the pair ``key``'s best, from the two score sums
    solved before: me 50 points further on plus my opponent 50 further on, minus both (a bilinear
    extrapolation); only those below the target, so near it the one pair left, and none at the top.

    Newton passes for the race to 5000 (numpy reference, ``tests/race_numpy.py``):
    576 this way, 643 with the mean of the first two, 774 with the opponent's alone.

    >>> [first_guess({"target": 5000}, key) for key in ("1500-350", "1500-4950", "4950-4950")]
    [{'1550-350': 1.0, '1500-400': 1.0, '1550-400': -1.0}, {'1550-4950': 1.0}, {}]
    """
    mine, theirs = (int(score) for score in key.split("-"))
    target = params["target"]
    if mine + STEP < target and theirs + STEP < target:
        return {state_key(mine + STEP, theirs): 1.0, state_key(mine, theirs + STEP): 1.0,
                state_key(mine + STEP, theirs + STEP): -1.0}
    return {state_key(a, b): 1.0 for a, b in ((mine + STEP, theirs), (mine, theirs + STEP)) if a < target and b < target}


def chance_key(dice: int, total: int) -> str:
    """Return the key of rolling ``dice`` dice at turn total ``total`` (points), e.g. ``'3d/250'``."""
    return f"{dice}d/{total}"


def bank_end(total: int, target: int) -> str:
    """Return the key of the turn's end banking ``total`` points (``bank/win`` from the target on)."""
    return WIN_END if total >= target else f"bank/{total}"


def end_label(end: str) -> str:
    """Return the label of the state moves through the end ``end``: ``'bust'``, ``'bank 350'`` or ``'win'``."""
    if end == BUST_END:
        return "bust"
    return "win" if end == WIN_END else "bank " + end.removeprefix("bank/")


@functools.lru_cache(maxsize=None)
def roll_options(dice: int) -> tuple[tuple[tuple[int, ...], int, tuple[tuple[tuple[int, ...], int, int], ...]], ...]:
    """Return each roll of ``dice`` dice: (roll, weight, ((kept, points, dice rolled next), ...)); a bust has none."""
    return tuple((roll, weight, tuple((kept, points, (dice - len(kept)) or DICE) for kept, points in kept_options(roll)))
                 for roll, weight in sorted_rolls(dice))


@functools.lru_cache(maxsize=None)
def turn_points(highest: int) -> dict[tuple[int, int], float]:
    """Return (dice, total) -> the expected points of the turn played to maximise them, rolling ``dice`` at ``total``,
    for totals up to ``highest`` (the one-turn optimum; past the bank bound banking is best).

    >>> round(turn_points(0)[5, 0], 4)
    293.6009
    """
    top = max(highest, int(bank_bound()) // STEP * STEP + STEP)
    worth: dict[tuple[int, int], float] = {}
    for total in range(top, -1, -STEP):
        for dice in range(1, DICE + 1):
            expected = 0.0
            for _, weight, options in roll_options(dice):
                best = 0.0
                for _, points, after in options:
                    reached = total + points
                    best = max(best, reached, worth.get((after, reached), 0.0))
                expected += weight * best
            worth[dice, total] = expected / 6**dice
    return worth


def _rolls_on(worth: Mapping[tuple[int, int], float], after: int, reached: int) -> bool:
    """Return whether the one-turn optimum rolls ``after`` dice on at ``reached`` rather than bank (ties: bank)."""
    on = worth.get((after, reached))
    return on is not None and on > reached * (1 + TIE)


def agent_move(agent: str, dice: int, total: int, options: Sequence[tuple[tuple[int, ...], int, int]], target: int,
               worth: Mapping[tuple[int, int], float]) -> tuple[int, bool]:
    """Return (index of the kept dice in ``options``, rolls on): what the fixed strategy ``agent`` does after a roll
    at turn total ``total`` (``worth``: :func:`turn_points`, which ``turn-optimal`` needs)."""
    if agent == TURN_OPTIMAL:
        best, pick = -1.0, (0, False)
        for index, (_, points, after) in enumerate(options):
            reached = total + points
            for rolls_on in (False, True):
                if rolls_on and (reached >= target or not _rolls_on(worth, after, reached)):
                    continue
                value = worth[after, reached] if rolls_on else float(reached)
                if value > best * (1 + TIE) + TIE:
                    best, pick = value, (index, rolls_on)
        return pick
    kept, points, _ = options[0]  # a threshold agent keeps every scoring die
    rolls_on = threshold_move(int(agent.split("-")[1]), dice, len(kept)) == "roll"
    return 0, rolls_on and total + points < target


def _reachable(target: int) -> list[tuple[int, int]]:
    """Return the (dice, total) pairs the turn rolls from, totals below ``target``, in order of total (five dice first)."""
    found = {(DICE, 0)}
    for total in range(0, target, STEP):
        for dice in range(DICE, 0, -1):
            if (dice, total) in found:
                found.update((after, total + points) for _, _, options in roll_options(dice)
                             for _, points, after in options if total + points < target)
    return sorted(found, key=lambda at: (at[1], -at[0]))


@functools.lru_cache(maxsize=None)
def choices(total: int, options: tuple[tuple[tuple[int, ...], int, int], ...], target: int) -> tuple[tuple[int, bool, str, int, int], ...]:
    """Return a decision's moves in order, rolling at turn total ``total`` with ``options`` (of
    :func:`roll_options`): ``(option index, rolls on, label, total reached, dice rolled next)``; per choice of
    dice kept, bank (a win from the target on), then roll on below the target.

    >>> choices(0, options_of(2, (1, 5)), 300)[:3]  # 1-5 rolled at a turn total of 0
    ((0, False, 'keep 1-5, bank 150', 150, 5), (0, True, 'keep 1-5, roll 5', 150, 5), (1, False, 'keep 1, bank 100', 100, 1))
    """
    found = []
    for index, (kept, points, after) in enumerate(options):
        reached, keep = total + points, f"keep {roll_text(kept)}"
        if reached >= target:
            found.append((index, False, f"{keep}, bank {reached} (wins)", reached, after))
            continue
        found.append((index, False, f"{keep}, bank {reached}", reached, after))
        found.append((index, True, f"{keep}, roll {after}", reached, after))
    return tuple(found)


@functools.lru_cache(maxsize=None)
def _move_number(total: int, options: tuple[tuple[tuple[int, ...], int, int], ...], target: int) -> dict[tuple[int, bool], int]:
    """Return where each move of :func:`choices` stands among a decision's moves: (option index, rolls on) -> number."""
    return {(index, rolls_on): number for number, (index, rolls_on, *_) in enumerate(choices(total, options, target))}


@functools.lru_cache(maxsize=None)
def options_of(dice: int, roll: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], int, int], ...]:
    """Return the choices of dice kept after ``roll`` of ``dice`` dice (:func:`roll_options`; none: a bust)."""
    return next(options for rolled, _, options in roll_options(dice) if rolled == roll)


class RaceTurn(DiceRules):
    """One turn of the race, at the rules level: a position is ``(dice to roll, turn total)``, or ``("end", key)``
    for the turn's ends (``bust``, ``bank/<t>``, ``bank/win``), keyed as the stored turn's nodes are."""

    def __init__(self, target: int):
        self.target = target
        self.worth = turn_points(target)
        self.agents = {name: self._plays(name) for name in agents({"target": target})}

    def _plays(self, name: str) -> Callable[..., Move]:
        """Return the fixed strategy ``name`` in the turn (:func:`agent_move`; it does not know the scores)."""

        def choose(at: Any, roll: tuple[int, ...], moves: Sequence[Move]) -> Move:
            dice, total = at
            options = options_of(dice, roll)
            return moves[_move_number(total, options, self.target)[agent_move(name, dice, total, options, self.target,
                                                                              self.worth)]]

        return choose

    def starts(self) -> list[Any]:
        """Return five dice to roll at a total of 0."""
        return [(DICE, 0)]

    def key(self, position: Any) -> str:
        """Return ``'3d/250'``, or the end's key."""
        return position[1] if position[0] == "end" else chance_key(*position)

    def label(self, position: Any) -> str:
        """Return ``'total 250, rolling 3'``, or the end in words."""
        return f"the turn ends: {end_label(position[1])}" if position[0] == "end" else \
            f"total {position[1]}, rolling {position[0]}"

    def payoff(self, position: Any) -> float | None:
        """Return 0 at an end (what an end is worth is the turn state's business), else None."""
        return 0.0 if position[0] == "end" else None

    def rolls(self, position: Any) -> Any:
        """Return the sorted rolls of the dice with their weights."""
        return sorted_rolls(position[0])

    def moves(self, position: Any, roll: tuple[int, ...]) -> list[Move]:
        """Return, per choice of scoring dice, bank (a win from the target on), then roll on below the target."""
        dice, total = position
        return [Move((after, reached) if rolls_on else ("end", bank_end(reached, self.target)), label)
                for _, rolls_on, label, reached, after in choices(total, options_of(dice, roll), self.target)]

    def decision_label(self, position: Any, roll: tuple[int, ...]) -> str:
        """Return ``'total 250, rolled 1-5-6'``."""
        return f"total {position[1]}, rolled {roll_text(roll)}"

    def clock(self, position: Any) -> int:
        """Return the turn total in steps of 50; the ends at the end of the turn's time (the target's)."""
        return self.target // STEP if position[0] == "end" else position[1] // STEP

    def ending(self, position: Any, roll: tuple[int, ...]) -> Move:
        """Return the bust: nothing scores, the turn ends."""
        return Move(("end", BUST_END), "roll nothing that scores")


def turn_total(key: str) -> int:
    """Return the turn total before the roll of a turn node (a roll, or the decision after it), in points.

    >>> turn_total("3d/250"), turn_total("3d/250/1-5-6")
    (250, 250)
    """
    return int(key.split("/")[1])


def winning_total(target: int, key: str) -> int:
    """Return the turn total from which banking wins the race from the score pair ``key``: from there on
    every decision banks to win (every player does), so the turn's nodes there are never played.

    >>> winning_total(5000, "1500-350")
    3500
    """
    return target - int(key.split("-")[0])


class RaceRules(RepeatingTurn):
    """The race at the rules level: the turn (:class:`RaceTurn`) repeats; a turn state is the score pair
    ``(mine, theirs)`` in points, seen from the player to move, and the turn's ends hand the turn over."""

    turn_progress = staticmethod(turn_total)  # a turn node's total: banking from a state's horizon on wins

    def __init__(self, target: int):
        self.target = target
        self.turn = RaceTurn(target)
        self.agents = {name: self._plays(choose) for name, choose in self.turn.agents.items()}
        self.state_horizon = functools.partial(winning_total, target)

    def state_count(self) -> int:
        """Return how many score pairs there are: each score below the target, for either player."""
        return (self.target // STEP) ** 2

    def _plays(self, choose: Callable[..., Move]) -> Callable[..., Move]:
        """Return a fixed strategy of the turn as a turn agent of the race: a bank that wins at once, else its move."""

        def play(state: Any, at: Any, roll: tuple[int, ...], moves: Sequence[Move]) -> Move:
            winning = [move for move in moves if move.next[0] == "end" and self._wins(state, move.next[1])]
            return winning[0] if winning else choose(at, roll, moves)

        return play

    def _wins(self, state: Any, end: str) -> bool:
        """Return whether banking through ``end`` from ``state`` wins the race."""
        return state[0] + _banked(end, self.target) >= self.target

    def first_state(self) -> Any:
        """Return 0-0."""
        return (0, 0)

    def state_key(self, state: Any) -> str:
        """Return ``'1500-350'``."""
        return state_key(*state)

    def state_of(self, key: str) -> Any:
        """Return the score pair of ``'1500-350'``."""
        mine, theirs = key.split("-")
        return (int(mine), int(theirs))

    def state_label(self, state: Any) -> str:
        """Return ``'me 1500, opponent 350'``."""
        return f"me {state[0]}, opponent {state[1]}"

    def state_clock(self, state: Any) -> int:
        """Return the score sum in steps of 50: a bust keeps it, so each sum's pairs loop among themselves."""
        return (state[0] + state[1]) // STEP

    def end_label(self, end: str) -> str:
        """Return ``'bust'``, ``'bank 250'`` or ``'win'``: how a score pair's moves name the turn's ends."""
        return end_label(end)

    def through(self, state: Any, end: str) -> Move | Ending:
        """Return where the turn's end leads: a bust or a bank hands the turn over, a bank to the target wins."""
        mine, theirs = state
        banked = _banked(end, self.target)
        if mine + banked >= self.target:
            return WINS
        return Move((theirs, mine + banked), end_label(end), passes=True)


WINS = Ending(WON, "the player to move has won", 1.0)


@functools.lru_cache(maxsize=None)
def _banked(end: str, target: int) -> int:
    """Return the points the turn's end banks: 0 on a bust, the target for ``bank/win``."""
    return 0 if end == BUST_END else target if end == WIN_END else int(end.removeprefix("bank/"))


def rules(params: Mapping[str, Any]) -> TurnsInFull:
    """Return the race's rules, the turn copied into each score pair (:class:`RaceRules`): its exact check and its
    games from the rules. The graph stores the turn once (:func:`dicegraph.graphs.expand.expand_repeating` of them)."""
    return TurnsInFull(RaceRules(params["target"]))


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return the number of edges the graph has: ``steps + 1`` moves per score pair, and the turn's.

    >>> estimated_edges({"target": 300}) == sum(sizes(300)[k] for k in ("state_edges", "turn_edges"))
    True
    """
    target = params["target"]
    steps = target // STEP
    turn_edges = sum(1 + sum(1 + sum(1 if total + points >= target else 2 for _, points, _ in options)
                             for _, _, options in roll_options(dice) if options)
                     for dice, total in _reachable(target))
    return steps * steps * (steps + 1) + turn_edges


def sizes(target: int) -> dict[str, int]:
    """Return the graph's counts for ``target``: score pairs, their edges, the turn's nodes and edges."""
    from dicegraph.graphs.expand import expand_repeating

    rows = list(one_by_one(expand_repeating(RaceRules(target), players=players, loops=loops)))
    root = next(row.layer for row in rows if isinstance(row, Node) and row.key == ROOT)
    nodes = [row for row in rows if isinstance(row, Node)]
    layer_of = {row.id: row.layer for row in nodes}
    edges = [row for row in rows if isinstance(row, Edge)]
    return {"pairs": sum(row.layer < root and row.kind != TERMINAL for row in nodes),
            "state_edges": sum(layer_of[row.src] < root for row in edges),
            "turn_nodes": sum(row.layer >= root for row in nodes),
            "turn_edges": sum(layer_of[row.src] >= root for row in edges)}
