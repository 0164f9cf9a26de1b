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
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dicegraph.graphs.errors import DicegraphError
from dicegraph.store.seats import SEATS
from dicegraph.store.output import OutputError, target_of, write_file

VERSION = 1  # the record format's version, the first key of a record
STEP_KINDS = ("roll", "move")  # a step is a roll of the dice or a move of a player
SEATS_OF = {1: ("solo",), 2: SEATS}  # the seats of a game, by its number of players
PERSON = "you"  # the seat's name in a record when a person played it
TYPED_DICE = "manual"  # dice typed from real dice (--dice manual, dice=manual in a play page's address)
MAX_BYTES = 8 * 2**20  # the largest record read (8 MiB: about 300,000 steps); docs/play.md says so
MAX_DEPTH = 8  # the deepest nesting of lists and objects a record holds (a parameter's list in an object in one)


def load_json(data: str | bytes, what: str = "a dicegraph record") -> Any:
    """Return the JSON data of ``data`` (text, or bytes in UTF-8) of at most :data:`MAX_BYTES`; raise BadRecord in
    one line for anything else: too large, not UTF-8, not JSON, nested deeper than :data:`MAX_DEPTH`, a number
    past what a float holds or of thousands of digits, NaN or an infinity.

    >>> load_json('{"steps": [{"roll": "1-2"}]}')
    {'steps': [{'roll': '1-2'}]}
    >>> load_json(b"\\xff")
    Traceback (most recent call last):
    ...
    dicegraph.record.BadRecord: not a dicegraph record: not UTF-8 text (byte 0xff at 0)
    >>> load_json("[" * 100_000)
    Traceback (most recent call last):
    ...
    dicegraph.record.BadRecord: not a dicegraph record: nested deeper than 8 levels
    >>> load_json('{"seed": 1' + "0" * 5000 + "}")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dicegraph.record.BadRecord: not a dicegraph record: a number of 5001 digits...
    """
    if len(data) > MAX_BYTES:
        raise BadRecord(f"not {what}: larger than {MAX_BYTES // 2**20} MiB (a record holds at most that)")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadRecord(f"not {what}: not UTF-8 text (byte 0x{error.object[error.start]:02x} at "
                            f"{error.start})") from None
    too_deep = BadRecord(f"not {what}: nested deeper than {MAX_DEPTH} levels")
    try:
        loaded = json.loads(data, parse_int=_whole_number, parse_float=_finite_number, parse_constant=_no_constant)
    except RecursionError:  # nested past what the parser follows
        raise too_deep from None
    except json.JSONDecodeError as error:
        raise BadRecord(f"not {what}: not JSON ({error.msg} at line {error.lineno}, column {error.colno}; a "
                        "record the play command was writing when it was stopped is whole: it writes each step "
                        "anew)") from None
    except ValueError as error:  # what the number parsers below refuse
        raise BadRecord(f"not {what}: {error}") from None
    if nesting(loaded) > MAX_DEPTH:
        raise too_deep
    return loaded


def nesting(data: Any) -> int:
    """Return how deep lists and objects nest in the JSON data ``data`` (0 for a number or a text).

    >>> nesting({"a": [1, {"b": "[[["}]}), nesting(3)
    (3, 0)
    """
    deepest, todo = 0, [(data, 1)]
    while todo:
        item, depth = todo.pop()
        inner = item.values() if isinstance(item, Mapping) else item if isinstance(item, list) else None
        if inner is not None:
            deepest = max(deepest, depth)
            todo.extend((value, depth + 1) for value in inner)
    return deepest


def _whole_number(text: str) -> int:
    """Return a JSON whole number; refuse one of thousands of digits (ValueError)."""
    if len(text.lstrip("-")) > 30:
        raise ValueError(f"a number of {len(text.lstrip('-'))} digits (whole numbers here have at most 30)")
    return int(text)


def _finite_number(text: str) -> float:
    """Return a JSON number with a fraction or exponent; refuse one past what a float holds (ValueError)."""
    if len(text) > 100:
        raise ValueError(f"a number of {len(text)} characters")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is past what a float holds")
    return value


def _no_constant(text: str) -> float:
    """Refuse NaN and the infinities, which are not JSON (ValueError)."""
    raise ValueError(f"{text} is not a JSON number")


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
    def parse(cls, text: str | bytes) -> Record:
        """Return the record ``text`` (or bytes in UTF-8) holds; raise BadRecord saying what is wrong with it
        (:func:`load_json`)."""
        return cls.of(load_json(text))

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
        """Return the record in the file ``path``, read as bytes up to :data:`MAX_BYTES` (an endless file such as
        ``/dev/zero`` too); raise BadRecord (or OSError for a file that cannot be read)."""
        with open(path, "rb") as source:
            return cls.parse(source.read(MAX_BYTES + 1))

    def as_json(self) -> dict[str, Any]:
        """Return the record as JSON data (what :meth:`write` writes)."""
        return {"dicegraph_record": VERSION, "game": self.game, "params": self.params, "seats": self.seats,
                "seed": self.seed, "steps": self.steps}

    def write(self, path: str | Path, *, new: bool = False) -> None:
        """Write the record to ``path`` whole (:func:`dicegraph.store.output.write_file`: a process killed meanwhile leaves
        the record before this step, never half a file; through a link to its target; never over a device, a
        FIFO or a folder); with ``new``, only where no file is yet (a game's first step)."""
        write_file(Path(path), json.dumps(self.as_json(), indent=1) + "\n", new=new)

    def check_new_file(self, path: str | Path) -> None:
        """Make sure ``path`` can take this game's record as a new file; raise OutputError when it cannot, saying
        when it holds this game's record already (to be gone on with by resuming it) or something else."""
        target = target_of(Path(path))
        if not target.exists():
            return
        try:
            held = Record.read(target).game
        except (DicegraphError, OSError):
            held = None
        if held == self.game:
            raise OutputError(f"{path} holds a record of {self.game} already: go on with it (--resume {path}), "
                              "or name a new file")
        raise OutputError(f"{path} exists and is not a record of {self.game}: name a new file for the record")
