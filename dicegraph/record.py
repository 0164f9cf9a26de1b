"""A game record: the game, its parameters, who played which seat, and the steps in order.

A record is JSON (``dicegraph play --record FILE`` writes one after every step)::

    {"dicegraph_record": 1, "game": "pig", "params": {"target": 8, "holds": [4]},
     "seats": {"first": "optimal", "second": "hold-at-4"}, "seed": 7,
     "steps": [{"move": "roll"}, {"roll": "3"}, {"move": "hold"}, ...]}

``seats`` names the policy each seat played (``first`` and ``second`` in a two-player game, ``solo`` in a
one-player game; ``you`` for a person). Each step is a roll or a move by its label as ``dicegraph show`` and the
explorer print it (a roll may also be named by one of the rolls its label lists: ``5-6`` for the edge
``roll 5-5 5-6 6-5 6-6``). ``seed`` is the dice's seed when dicegraph rolled them (None: typed from real dice).

>>> record = Record.parse('{"game": "jackpot", "params": {"cells": 4}, "seats": {"solo": "hilo"}, '
...                       '"steps": [{"roll": "1-2"}, {"move": "flip 3"}]}')
>>> record.game, record.steps[1]
('jackpot', {'move': 'flip 3'})
>>> Record.parse('{"game": "jackpot", "steps": [{"jump": "3"}]}')
Traceback (most recent call last):
...
dicegraph.record.BadRecord: not a dicegraph record: step 1 is {"jump": "3"}; each step is {"roll": LABEL} or {"move": LABEL}
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.errors import DicegraphError
from store.compare import SEATS

VERSION = 1  # the record format's version, the first key of a record
STEP_KINDS = ("roll", "move")  # a step is a roll of the dice or a move of a player
SEATS_OF = {1: ("solo",), 2: SEATS}  # the seats of a game, by its number of players
PERSON = "you"  # the seat's name in a record when a person played it
TYPED_DICE = "manual"  # dice typed from real dice (--dice manual, dice=manual in a play page's address)


class BadRecord(DicegraphError):
    """A record that is not JSON of a record's form, or that does not fit its game."""


@dataclass
class Record:
    """A game as played: the game and its parameters, each seat's policy, the steps in order, the dice's seed."""

    game: str
    params: dict[str, Any] = field(default_factory=dict)
    seats: dict[str, str] = field(default_factory=dict)
    steps: list[dict[str, str]] = field(default_factory=list)
    seed: int | None = None

    @classmethod
    def parse(cls, text: str) -> Record:
        """Return the record ``text`` holds; raise BadRecord saying what is wrong with its form."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise BadRecord(f"not a dicegraph record: not JSON ({error.msg} at line {error.lineno}, "
                            f"column {error.colno}; a record the play command was writing when it was stopped "
                            "is whole: it writes each step anew)") from None
        return cls.of(data)

    @classmethod
    def of(cls, data: Any) -> Record:
        """Return the record the JSON data ``data`` holds; raise BadRecord saying what is wrong with its form."""
        if not isinstance(data, Mapping) or not isinstance(data.get("game"), str):
            raise BadRecord("not a dicegraph record: a JSON object with the game's name as \"game\" is expected")
        version = data.get("dicegraph_record", VERSION)
        if version != VERSION:
            raise BadRecord(f"a record of format {version!r}: this dicegraph reads format {VERSION} "
                            "(upgrade dicegraph to read it)")
        params, seats, steps, seed = (data.get("params") or {}, data.get("seats") or {}, data.get("steps") or [],
                                      data.get("seed"))
        if not isinstance(params, Mapping) or not isinstance(seats, Mapping) \
                or not all(isinstance(name, str) for name in seats.values()):
            raise BadRecord("not a dicegraph record: \"params\" and \"seats\" are JSON objects (seats name policies)")
        if not isinstance(steps, list):
            raise BadRecord("not a dicegraph record: \"steps\" is a list of steps")
        for number, step in enumerate(steps, 1):
            if not (isinstance(step, Mapping) and len(step) == 1 and next(iter(step)) in STEP_KINDS
                    and isinstance(next(iter(step.values())), str)):
                raise BadRecord(f"not a dicegraph record: step {number} is {json.dumps(step)}; each step is "
                                "{\"roll\": LABEL} or {\"move\": LABEL}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise BadRecord("not a dicegraph record: \"seed\" is a whole number (or null for typed dice)")
        return cls(data["game"], dict(params), dict(seats), [dict(step) for step in steps], seed)

    @classmethod
    def read(cls, path: str | Path) -> Record:
        """Return the record in the file ``path``; raise BadRecord (or OSError for a file that cannot be read)."""
        return cls.parse(Path(path).read_text(encoding="utf-8"))

    def as_json(self) -> dict[str, Any]:
        """Return the record as JSON data (what :meth:`write` writes)."""
        return {"dicegraph_record": VERSION, "game": self.game, "params": self.params, "seats": self.seats,
                "seed": self.seed, "steps": self.steps}

    def write(self, path: str | Path) -> None:
        """Write the record to ``path`` whole: to a file beside it first, then moved over it, so that a process
        killed meanwhile leaves the record before this step, never half a file."""
        target = Path(path)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(self.as_json(), out, indent=1)
                out.write("\n")
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
