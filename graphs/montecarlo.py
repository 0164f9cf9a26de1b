"""Monte Carlo: plays random games from a game's rules with a policy (numpy, seeded).

The games are played from the rules in ``graphs/<game>.py``, never from a
stored graph, so an estimate checks the builder and the solver independently.
A game that can be simulated offers ``simulator(params, policy)``: ``policy`` is
an agent's name or a stored policy's choices (decision key -> move label), and
the simulator returns a function playing ``games`` games at once with a numpy
generator and returning their payoffs.

Games are played in fixed-size chunks from one generator, so the same seed and
number of games give the same estimate whatever reports the progress.

>>> from dicegraph.graphs import get_game
>>> estimate = simulate(get_game("jackpot"), {"cells": 9}, "hilo", games=20_000, seed=1)
>>> estimate.games, abs(estimate.z(0.0798553)) < 4
(20000, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, Union

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import Game, Progress

CHUNK = 1 << 18  # games played per numpy pass; part of what makes a seed reproducible
Policy = Union[str, Mapping[str, str]]
M = TypeVar("M")

MIN_GAMES = 2  # the fewest games whose spread gives a standard error


@dataclass(frozen=True)
class Estimate:
    """The mean payoff of ``games`` simulated games and its standard error."""

    games: int
    mean: float
    stderr: float

    @classmethod
    def of(cls, payoffs: Any) -> Estimate:
        """Return the estimate from the payoffs of the games played (a numpy array).

        >>> import numpy as np
        >>> estimate = Estimate.of(np.array([0.0, 1.0, 1.0, 0.0]))
        >>> estimate.games, estimate.mean, round(estimate.stderr, 6)
        (4, 0.5, 0.288675)
        """
        return cls(len(payoffs), float(payoffs.mean()), float(payoffs.std(ddof=1)) / len(payoffs) ** 0.5)

    def against(self, exact: float) -> dict[str, float]:
        """Return ``{"games", "estimate", "stderr", "z"}``: the estimate as a report gives it beside ``exact``."""
        return {"games": self.games, "estimate": self.mean, "stderr": self.stderr, "z": self.z(exact)}

    def z(self, exact: float) -> float:
        """Return the z-score of the estimate against ``exact`` (0 when both agree exactly).

        >>> Estimate(100, 0.5, 0.25).z(0.0)
        2.0
        """
        if self.stderr == 0:
            return 0.0 if self.mean == exact else math.copysign(math.inf, self.mean - exact)
        return (self.mean - exact) / self.stderr


def z_text(z: float | None) -> str:
    """Return a z-score as reports print it: signed, two decimals; ``n/a`` where it is not a number (``--json``'s
    null: games that all paid alike, not the exact value).

    >>> z_text(1.234), z_text(None), z_text(float("inf"))
    ('+1.23', 'n/a', 'n/a')
    """
    return f"{z:+.2f}" if z is not None and math.isfinite(z) else "n/a"


def stored_move(choices: Mapping[str, str], key: str, moves: Sequence[M], label: Callable[[M], str]) -> M:
    """Return the move among ``moves`` (those the rules allow) that a stored policy plays at decision ``key``.

    Raises DicegraphError when the stored move is not one of them, so a
    simulation never plays a graph's mistake.

    >>> stored_move({"0/1-2": "flip 3"}, "0/1-2", [1, 2, 3], lambda cell: f"flip {cell}")
    3
    """
    played = choices.get(key)
    move = next((m for m in moves if label(m) == played), None)
    if move is None:
        offered = ", ".join(dict.fromkeys(label(m) for m in moves))
        raise DicegraphError(f"the stored policy plays {played!r} at {key}, where the rules offer {offered}")
    return move


def can_simulate(game: Game) -> bool:
    """Return whether ``game`` has a simulator."""
    return game.simulator is not None


def require_simulator(game: Game) -> None:
    """Raise DicegraphError, saying where the game's games are played instead, when ``game`` has no simulator."""
    if not can_simulate(game):
        raise DicegraphError(f"game {game.name!r} has no simulator: its report plays its games where it can "
                             f"(dicegraph report {game.name} -n GAMES)")


def simulate(
    game: Game,
    params: Mapping[str, Any],
    policy: Policy,
    games: int,
    seed: int,
    progress: Progress | None = None,
) -> Estimate:
    """Return the estimate of ``policy``'s expected payoff over ``games`` random games.

    ``progress`` is called with 0 as play begins, then with the number of games played after each chunk.
    Raises DicegraphError when the game has no simulator or ``games`` < 2.
    """
    require_simulator(game)
    if games < MIN_GAMES:
        raise DicegraphError(f"simulate at least {MIN_GAMES} games (not {games})")
    import numpy as np

    play = game.simulator(params, policy)  # type: ignore[attr-defined]
    rng = np.random.default_rng(seed)
    count, mean, squares = 0, 0.0, 0.0  # running mean and sum of squared deviations (Chan et al.)
    if progress is not None:
        progress(0)
    for start in range(0, games, CHUNK):
        size = min(CHUNK, games - start)
        payoffs = np.asarray(play(size, rng), dtype=np.float64)
        chunk_mean = float(payoffs.mean())
        chunk_squares = float(((payoffs - chunk_mean) ** 2).sum())
        total = count + size
        delta = chunk_mean - mean
        mean += delta * size / total
        squares += chunk_squares + delta * delta * count * size / total
        count = total
        if progress is not None:
            progress(size)
    return Estimate(games, mean, math.sqrt(squares / (games - 1) / games))
