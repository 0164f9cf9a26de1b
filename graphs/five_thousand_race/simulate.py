"""Monte Carlo of whole races from the rules: two strategies play each other, numpy, seeded.

A strategy is a :class:`MoveTable`: for each score pair it may depend on,
turn total and roll, the points it sets aside and the dice it rolls next (0:
it banks). The fixed strategies' tables come from the game's agents; the
optimum's from its turn values under the stored solve (one per score pair, so
its table grows with the square of the target). Whoever can bank the target
does so and wins, as the rules' strategies all do.

>>> import numpy as np
>>> tables = {name: agent_table(300, name) for name in ("threshold-1", "threshold-6")}
>>> wins = play(300, tables["threshold-1"], tables["threshold-6"], 2000, np.random.default_rng(1))
>>> len(wins), bool(0.0 < wins.mean() < 1.0)
(2000, True)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dicegraph.graphs.five_thousand.game import DICE, STEP, roller
from dicegraph.graphs.five_thousand_race.game import TURN_OPTIMAL, agent_move, bank_end, chance_key, roll_options, turn_points
from dicegraph.graphs.protocol import TIE



@dataclass(frozen=True)
class MoveTable:
    """A strategy's moves: ``gain[pair, total / 50, outcome]`` points set aside and ``then[...]`` dice rolled next
    (0: bank); ``pair`` is ``mine / 50 * steps + theirs / 50`` when the table has a row per score pair, else 0."""

    gain: Any
    then: Any

    @property
    def by_pair(self) -> bool:
        """Return whether the moves depend on the scores."""
        return self.gain.shape[0] > 1


@functools.lru_cache(maxsize=None)
def _outcomes() -> tuple[list[tuple[int, tuple[int, ...]]], Any, list[Any]]:
    """Return the outcomes (:func:`roller`), the rolling function, and each outcome's options (kept, points, dice next)."""
    outcomes, roll_dice = roller()
    options = [found for dice in range(1, DICE + 1) for _, _, found in roll_options(dice)]
    return outcomes, roll_dice, options


def agent_table(target: int, agent: str) -> MoveTable:
    """Return the moves of the fixed strategy ``agent`` (``threshold-N`` or ``turn-optimal``), the same at every score."""
    import numpy as np

    outcomes, _, options = _outcomes()
    rows = target // STEP
    gain = np.zeros((1, rows, len(outcomes)), dtype=np.int32)
    then = np.zeros((1, rows, len(outcomes)), dtype=np.int8)
    worth = turn_points(target) if agent == TURN_OPTIMAL else {}
    for index, (dice, _) in enumerate(outcomes):
        if not options[index]:
            continue
        for row in range(rows):
            pick, rolls_on = agent_move(agent, dice, row * STEP, options[index], target, worth)
            _, points, after = options[index][pick]
            gain[0, row, index], then[0, row, index] = points, after if rolls_on else 0
    return MoveTable(gain, then)


def optimal_table(target: int, turn_values: Mapping[str, Mapping[str, float]]) -> MoveTable:
    """Return the optimum's moves from its turn values: score pair key (``'mine-theirs'``) -> the turn's rolling
    nodes and ends -> their values (``StoredTurn.node_values``). At each roll it takes the best option
    by those values, the first (banking before rolling on) within :data:`TIE` of the best."""
    import numpy as np

    outcomes, _, options = _outcomes()
    steps = target // STEP
    gain = np.zeros((steps * steps, steps, len(outcomes)), dtype=np.int32)
    then = np.zeros((steps * steps, steps, len(outcomes)), dtype=np.int8)
    for key, values in turn_values.items():
        mine, theirs = (int(points) // STEP for points in key.split("-"))
        pair = mine * steps + theirs
        for index, (dice, _) in enumerate(outcomes):
            for row in range(steps):
                if not options[index] or chance_key(dice, row * STEP) not in values:
                    continue  # a bust, or the turn never rolls that many dice at that total
                choices = []
                for _, points, after in options[index]:
                    reached = row * STEP + points
                    choices.append((values[bank_end(reached, target)], points, 0))
                    if reached < target:
                        choices.append((values[chance_key(after, reached)], points, after))
                best = max(value for value, _, _ in choices)
                _, gain[pair, row, index], then[pair, row, index] = next(
                    choice for choice in choices if choice[0] >= best - TIE * (1 + abs(best)))
    return MoveTable(gain, then)


def play(target: int, first: MoveTable, second: MoveTable, games: int, rng: Any) -> Any:
    """Play ``games`` races to ``target`` from 0-0, ``first`` moving first; return 1.0 where the first player won, else 0.0."""
    import numpy as np

    outcomes, roll_dice, options = _outcomes()
    most = np.array([max((points for _, points, _ in found), default=0) for found in options])
    steps = target // STEP
    tables = (first, second)
    scores = np.zeros((games, 2), dtype=np.int64)
    mover = np.zeros(games, dtype=np.int64)
    dice = np.full(games, DICE)
    total = np.zeros(games, dtype=np.int64)
    winner = np.full(games, -1)
    active = np.arange(games)
    while active.size:
        me = mover[active]
        mine, theirs = scores[active, me], scores[active, 1 - me]
        outcome = roll_dice(rng, dice[active])
        row = total[active] // STEP
        gain = np.zeros(active.size, dtype=np.int64)
        then = np.zeros(active.size, dtype=np.int64)
        for seat, table in enumerate(tables):
            here = me == seat
            pair = (mine[here] // STEP) * steps + theirs[here] // STEP if table.by_pair else 0
            gain[here] = table.gain[pair, row[here], outcome[here]]
            then[here] = table.then[pair, row[here], outcome[here]]
        won = mine + total[active] + most[outcome] >= target  # a bank that reaches the target: taken, and wins
        busted = most[outcome] == 0
        banked = ~won & ~busted & (then == 0)
        winner[active[won]] = me[won]
        scores[active[banked], me[banked]] += total[active[banked]] + gain[banked]
        passing = active[busted | banked]
        mover[passing] = 1 - mover[passing]
        dice[passing], total[passing] = DICE, 0
        going = ~won & ~busted & ~banked
        total[active[going]] += gain[going]
        dice[active[going]] = then[going]
        active = active[~won]
    return (winner == 0).astype(np.float64)
