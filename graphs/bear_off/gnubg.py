"""GNU Backgammon's one-sided bear-off database read as gnubg reads it: for each position, P(off in n rolls).

Debian's ``gnubg-data`` ships ``gnubg_os0.bd`` (every position of up to 15 checkers on 6 points), and
gnubg's ``makebearoff -o P`` writes others. A file starts with a 40-byte header
(``gnubg-OS-06-15-1-1-0``: one-sided, points, checkers, gammon distributions, compressed, normal
approximation), then, compressed, an index of 8 bytes a position (where its numbers start, in 16-bit
words after the index; how many rolls are stored and from which) and the numbers themselves: each
P(off in exactly n rolls) as a little-endian 16-bit whole number of 65,535ths (the precision gnubg
stores). Positions are numbered by :func:`dicegraph.graphs.bear_off.game.gnubg_index`.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import NamedTuple

from dicegraph.graphs.bear_off.game import Position, gnubg_index, position_count
from dicegraph.graphs.errors import DicegraphError

DEBIAN_DATABASE = Path("/usr/share/gnubg/gnubg_os0.bd")  # where Debian's gnubg-data installs the 15-checker one
HEADER = 40
SCALE = 65535  # a stored probability is a whole number of 65,535ths
ROLLS = 32  # the rolls a one-sided entry may hold


class OneSided(NamedTuple):
    """A one-sided database: its points, checkers, and the file's bytes."""

    points: int
    checkers: int
    gammons: bool
    compressed: bool
    data: bytes

    def rolls_to_bear_off(self, position: Position) -> list[float]:
        """Return P(every checker off in exactly n rolls) for n = 0, 1, ..., as gnubg stores them (65,535ths)."""
        if len(position) != self.points or sum(position) > self.checkers:
            raise DicegraphError(f"{position} is not a position of {self.checkers} checkers on {self.points} points")
        index = gnubg_index(position)
        if not self.compressed:
            per_position = 2 * ROLLS * (2 if self.gammons else 1)
            start = HEADER + index * per_position
            words = struct.unpack_from(f"<{ROLLS}H", self.data, start)
            return _trimmed([word / SCALE for word in words])
        offset, count, first = struct.unpack_from("<IBB", self.data, HEADER + 8 * index)
        start = HEADER + 8 * self.positions + 2 * offset
        words = struct.unpack_from(f"<{count}H", self.data, start)
        return [0.0] * first + [word / SCALE for word in words]

    @property
    def positions(self) -> int:
        """Return how many positions the file holds."""
        return position_count(self.points, self.checkers)


class TwoSided(NamedTuple):
    """A two-sided database (``makebearoff -t PxN``): its points, checkers a side, and the file's bytes."""

    points: int
    checkers: int
    cubeful: bool
    data: bytes

    def mover_wins(self, mine: Position, theirs: Position) -> float:
        """Return the probability that the player to move with ``mine`` wins against ``theirs``, cubeless, as
        gnubg stores it: a 16-bit whole number ``u`` for the equity ``u / 32767.5 - 1``, so the chance is
        ``u / 65535``. Positions are numbered mover first, ``index(mine) * positions + index(theirs)``."""
        count = position_count(self.points, self.checkers)
        index = gnubg_index(mine) * count + gnubg_index(theirs)
        (word,) = struct.unpack_from("<H", self.data, HEADER + index * (8 if self.cubeful else 2))
        return word / SCALE


def _trimmed(probabilities: list[float]) -> list[float]:
    while probabilities and probabilities[-1] == 0:
        probabilities.pop()
    return probabilities


def read_two_sided(path: Path) -> TwoSided:
    """Return the two-sided database at ``path`` (``gnubg-TS-PP-NN-C``); DicegraphError (one line) when it is
    missing, not one, or shorter than its header says."""
    data = _read(path)
    header = data[:HEADER].decode("ascii", "replace")
    fields = header.split("-")
    if not header.startswith("gnubg-TS-") or len(fields) < 5:
        raise DicegraphError(f"{path} is not a two-sided gnubg bear-off database (its header says {header[:20]!r})")
    found = TwoSided(int(fields[2]), int(fields[3]), fields[4][:1] == "1", data)
    pairs = position_count(found.points, found.checkers) ** 2
    if len(data) < HEADER + pairs * (8 if found.cubeful else 2):
        raise DicegraphError(f"{path} is shorter than its header's {pairs:,} pairs of positions")
    return found


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        raise DicegraphError(f"no gnubg bear-off database at {path} (Debian's gnubg-data installs {DEBIAN_DATABASE}; "
                             "gnubg's makebearoff writes others)") from None


def read_one_sided(path: Path) -> OneSided:
    """Return the one-sided database at ``path``; DicegraphError (one line) when it is missing or not one.

    >>> read_one_sided(Path("/no/such.bd"))
    Traceback (most recent call last):
    ...
    dicegraph.graphs.errors.DicegraphError: no gnubg bear-off database at /no/such.bd (Debian's gnubg-data installs /usr/share/gnubg/gnubg_os0.bd; gnubg's makebearoff writes others)
    """
    data = _read(path)
    header = data[:HEADER].decode("ascii", "replace")
    fields = header.split("-")
    if not header.startswith("gnubg-OS-") or len(fields) < 7:
        raise DicegraphError(f"{path} is not a one-sided gnubg bear-off database (its header says {header[:20]!r})")
    points, checkers, gammons, compressed = int(fields[2]), int(fields[3]), fields[4] == "1", fields[5] == "1"
    found = OneSided(points, checkers, gammons, compressed, data)
    if compressed and len(data) < HEADER + 8 * found.positions:
        raise DicegraphError(f"{path} is shorter than its header's {found.positions:,} positions")
    return found
