"""Who plays each seat of a solve or a match: one type for every solver in :mod:`dicegraph.store.solve`.

A solve is one seat that maximises, in self-play; an evaluation one seat that follows a stored policy; a
head-to-head match two seats, each the other's ``after_pass``.

>>> Seat.maximising()
Seat(kind='max', policy_id=None, after_pass=0)
>>> [seat.kind for seat in (Seat(FOLLOW, 3, after_pass=1), Seat(FOLLOW, 4, after_pass=0))]
['follow', 'follow']
"""

from __future__ import annotations

from dataclasses import dataclass

MAXIMISE, FOLLOW, RANK = "max", "follow", "rank"


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
