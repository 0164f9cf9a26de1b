"""Who plays each seat of a solve or a match: one type for every solver in :mod:`dicegraph.store.solve`.

A solve is one seat that maximises, in self-play; an evaluation one seat that follows a stored policy; a
head-to-head match two seats, each the other's ``after_pass``.

>>> Seat.maximising()
Seat(kind='max', policy_id=None, after_pass=0)
>>> [seat.kind for seat in (Seat(FOLLOW, 3, after_pass=1), Seat(FOLLOW, 4, after_pass=0))]
['follow', 'follow']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

MAXIMISE, FOLLOW, RANK = "max", "follow", "rank"
SEATS = ("first", "second")  # the seats of a two-player game, the first moving first
Matches = Callable[[Sequence[tuple[str, str]]], list[tuple[float, float]]]  # pairs (a, b), played together -> for
# each, P(a moving first beats b) and P(b moving first beats a)


@dataclass(frozen=True)
class Seat:
    """One seat: ``kind`` :data:`MAXIMISE` (the best move, its values solved with it), :data:`FOLLOW` (the stored
    policy ``policy_id``'s choices) or :data:`RANK` (the moves best for the stored solve ``policy_id``'s values,
    where a turn stored once keeps values, not choices); ``after_pass`` is the seat that moves after an edge of
    sign -1 (the seat itself in self-play)."""

    kind: str
    policy_id: int | None
    after_pass: int = 0

    @classmethod
    def maximising(cls, after_pass: int = 0) -> Seat:
        """Return the seat that plays the best move."""
        return cls(MAXIMISE, None, after_pass)


class Response(NamedTuple):
    """A best response's wins against the policy it answers: moving ``first``, and moving ``second`` (one minus
    what the answered policy wins moving first against it)."""

    first: float
    second: float


def seat_values(matches: Matches, policy: str, reference: str, opponent: str) -> dict[str, dict[str, float]]:
    """Return, for each seat, the probability that ``policy`` wins there against ``opponent`` and that
    ``reference`` does, and the ``loss`` (the reference's minus the policy's): two matches, asked of ``matches``
    together.

    >>> table = {("a", "o"): (0.5, 0.6), ("r", "o"): (0.7, 0.4)}
    >>> seat_values(lambda pairs: [table[pair] for pair in pairs], "a", "r", "o")["second"]
    {'policy': 0.4, 'reference': 0.6, 'loss': 0.19999999999999996}
    """
    names = list(dict.fromkeys((policy, reference)))
    found = {name: {"first": moving_first, "second": 1.0 - opponent_first}
             for name, (moving_first, opponent_first) in zip(names, matches([(name, opponent) for name in names]))}
    return {seat: {"policy": found[policy][seat], "reference": found[reference][seat],
                   "loss": found[reference][seat] - found[policy][seat]} for seat in SEATS}
