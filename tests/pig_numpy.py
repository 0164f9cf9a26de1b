"""Pig solved in memory with numpy, from the rules: the reference the SQL solve is timed and checked against.

Positions are seen from the player to move: ``win[a, b, k]`` is the
probability that the player with score ``a`` against ``b`` and turn total
``k`` wins, playing best (both players). Score sums are solved from the
highest down; within one, the turns of every pair ``(a, b)`` are valued
together, turn total from the highest down, as functions of the opponent's
turn-start value ``x = win[b, a, 0]`` (a bust or a hold at 0 hands the turn
over to it): each is worth ``c + d * (1 - x)`` along the moves taken. Newton's
method on the pairs ``(a, b), (b, a)`` then takes a few passes a sum, as in
``store/solve/cycles.py``, but written again from the rules with arrays.

    python tests/pig_numpy.py [TARGET]    # prints P(first player wins) and the time
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import numpy as np

FACES = range(2, 7)


def solve(target: int = 100, tolerance: float = 1e-15) -> tuple[np.ndarray, int]:
    """Return ``win`` (shape ``target x target x target``; entries with ``a + k >= target`` are 1) and the
    largest number of Newton passes a score sum took."""
    win = np.ones((target, target, target))
    most = 0
    for a, b, opponent in _score_sums(target):
        x = np.full(len(a), 0.5)  # the guess of win[a, b, 0] for each pair
        for passes in range(1, 60):
            y = x[opponent]  # the opponent's turn-start value
            value, slope = _turns(a, b, y, win, target, None)
            new, d = value[:, 0], slope[:, 0]
            if np.max(np.abs(new - x)) <= tolerance:
                break
            c = new - d * y  # x_ab = c_ab + d_ab * x_ba
            x = (c + d * c[opponent]) / (1 - d * d[opponent])
        most = max(most, passes)
        for k in [0, *range(2, target)]:
            alive = a + k < target
            win[a[alive], b[alive], k] = value[alive, k]
    return win, most


def _score_sums(target: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield each score sum's pairs, the highest sum first: the mover's scores ``a``, the opponent's ``b``, and
    for each pair the index of the pair ``(b, a)``."""
    scores = np.array([0, *range(2, target)])
    for total in range(2 * target - 2, -1, -1):
        a = scores[(total - scores >= 0) & np.isin(total - scores, scores)]
        if len(a):
            b = total - a
            yield a, b, np.array([np.nonzero(a == bb)[0][0] for bb in b])


def _turns(a: np.ndarray, b: np.ndarray, y: np.ndarray, other: np.ndarray, target: int,
           hold_at: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Return ``value[i, k]`` and ``slope[i, k]``: the turn of the mover at ``(a[i], b[i], k)`` valued as
    ``c + slope * y[i]``, ``y`` the opponent's turn-start value after a bust (``other[b, a, 0]``, guessed), a
    hold at ``k > 0`` reading ``other[b, a + k, 0]`` (solved before); the mover holds where that is best
    (``hold_at`` None) or once ``k >= hold_at`` (the agent)."""
    value = np.ones((len(a), target + 6))
    slope = np.zeros((len(a), target + 6))
    for k in range(target - 1, -1, -1):
        alive = a + k < target
        if k == 1 or not alive.any():
            continue
        roll = (1 - y) / 6 + value[:, k + 2:k + 7].sum(axis=1) / 6
        roll_slope = -1 / 6 + slope[:, k + 2:k + 7].sum(axis=1) / 6
        if k == 0:
            hold, hold_slope = 1 - y, -np.ones(len(a))
        else:
            hold = np.where(alive, 1 - other[b, np.minimum(a + k, target - 1), 0], 1.0)
            hold_slope = np.zeros(len(a))
        if hold_at is None:
            holds = hold > roll + 1e-12 * (1 + np.abs(roll))
        else:
            holds = np.full(len(a), k >= hold_at)
        value[:, k] = np.where(alive, np.where(holds, hold, roll), 1.0)
        slope[:, k] = np.where(alive, np.where(holds, hold_slope, roll_slope), 0.0)
    return value, slope


def best_response(target: int = 100, hold_at: int = 20, tolerance: float = 1e-15) -> tuple[np.ndarray, np.ndarray, int]:
    """Return ``response[a, b, k]``, the probability that the player to move wins playing the best response to
    the hold-at-``hold_at`` agent, ``agent[a, b, k]`` the agent's, to move, against it, and the largest number of
    Newton passes a score sum took. Score sums from the highest down; within one, the agent's turns are linear in
    the responder's turn-start values ``x`` (fixed moves) and the responder's piecewise linear in the agent's:
    Newton's method on ``x`` as :func:`solve` does."""
    response = np.ones((target, target, target))
    agent = np.ones((target, target, target))
    most = 0
    for a, b, opponent in _score_sums(target):
        fixed, fixed_slope = _turns(a, b, np.zeros(len(a)), response, target, hold_at)  # at y = 0: constants
        c_agent, d_agent = fixed[:, 0], fixed_slope[:, 0]  # agent[a, b, 0] = c + d * response[b, a, 0]
        x = np.full(len(a), 0.5)  # the guess of response[a, b, 0]
        for passes in range(1, 60):
            y = c_agent[opponent] + d_agent[opponent] * x  # agent[b, a, 0]
            value, slope = _turns(a, b, y, agent, target, None)
            new, d = value[:, 0], slope[:, 0]
            if np.max(np.abs(new - x)) <= tolerance:
                break
            c = new - d * y
            x = (c + d * c_agent[opponent]) / (1 - d * d_agent[opponent])
        most = max(most, passes)
        played = fixed + fixed_slope * x[opponent][:, None]  # the agent's turns at the responder's values
        for k in [0, *range(2, target)]:
            alive = a + k < target
            response[a[alive], b[alive], k] = value[alive, k]
            agent[a[alive], b[alive], k] = played[alive, k]
    return response, agent, most


if __name__ == "__main__":
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    started = time.perf_counter()
    win, most = solve(target)
    print(f"Pig to {target}: P(first player wins) = {win[0, 0, 0]:.12f}, at most {most} Newton passes a score sum, "
          f"{time.perf_counter() - started:.2f} s")
