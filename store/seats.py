"""Who plays each seat of a solve or a match: one type for every solver in :mod:`dicegraph.store.solve`.

A solve is one seat that maximises, in self-play; an evaluation one seat that follows a stored policy; a
head-to-head match two seats, each the other's ``after_pass``.

>>> Seat.maximising()
Seat(kind='max', policy_id=None, after_pass=0)
>>> [seat.kind for seat in (Seat(FOLLOW, 3, after_pass=1), Seat(FOLLOW, 4, after_pass=0))]
['follow', 'follow']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MAXIMISE, FOLLOW, RANK = "max", "follow", "rank"
SEATS = ("first", "second")  # the seats of a two-player game, the first moving first
Match = Callable[[str, str], tuple[float, float]]  # (a, b) -> P(a moving first beats b), P(b moving first beats a)


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


def seat_values(match: Match, policy: str, reference: str, opponent: str) -> dict[str, dict[str, float]]:
    """Return, for each seat, the probability that ``policy`` wins there against ``opponent`` and that
    ``reference`` does, and the ``loss`` (the reference's minus the policy's): two matches in all.

    >>> table = {("a", "o"): (0.5, 0.6), ("r", "o"): (0.7, 0.4)}
    >>> seat_values(lambda x, y: table[x, y], "a", "r", "o")["second"]
    {'policy': 0.4, 'reference': 0.6, 'loss': 0.19999999999999996}
    """
    found = {}
    for name in dict.fromkeys((policy, reference)):
        moving_first, opponent_first = match(name, opponent)
        found[name] = {"first": moving_first, "second": 1.0 - opponent_first}
    return {seat: {"policy": found[policy][seat], "reference": found[reference][seat],
                   "loss": found[reference][seat] - found[policy][seat]} for seat in SEATS}
