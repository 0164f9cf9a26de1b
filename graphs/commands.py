"""What a game's own commands use: its ``commands`` hook is a click group that ``cli.py`` mounts.

A game's command parses its own options, asks the :class:`Session` for its
graph (built, solved and evaluated on first use, with progress shown), reads
it through :class:`dicegraph.graphs.protocol.StoredGraph` and prints with :func:`emit`.
The session is the command line's (``cli.py`` puts it in the click context);
``graphs/`` never opens a database itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import click

from dicegraph.graphs.protocol import Game, StoredGraph

SESSION = "dicegraph.session"  # the key of the session in click's context meta, once opened
OPENS_SESSION = "dicegraph.opens_session"  # the key of what opens it (set by dicegraph.cli.main)

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
PARAM_OPTION = click.option(
    "-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
    help="A builder parameter (repeatable); `dicegraph games` lists them.",
)


class Session(Protocol):
    """What the command line offers a game's commands (:class:`dicegraph.Database` is the one there is)."""

    def game(self, name: str) -> Game:
        """Return the game registered as ``name`` (its declared spec): looked up when a command runs, as a game's
        module is imported while the registry is being filled."""
        ...

    def solved(self, game: Game, params: Mapping[str, Any], what: str) -> AbstractContextManager[StoredGraph]:
        """Return a context holding the game's graph for ``params``: built, solved and evaluated if missing
        (progress on stderr names ``what``), read-only inside."""
        ...

    def output_file(self, path: Path) -> Path:
        """Return ``path`` once it is known to be writable (raises a one-line error otherwise)."""
        ...

    def write_file(self, path: Path, data: bytes) -> Path:
        """Write ``data`` to ``path`` whole, through a link, never over a device or a FIFO (raises a one-line error
        otherwise); return the file written."""
        ...


def session(ctx: click.Context | None = None) -> Session:
    """Return the session of the running command (or of ``ctx``), opened the first time a command asks for it (by
    what ``dicegraph.cli.main`` set: a command that needs no database imports none of it)."""
    meta = (ctx or click.get_current_context()).meta
    if SESSION not in meta:
        meta[SESSION] = meta[OPENS_SESSION]()
    return meta[SESSION]


def parse_params(pairs: Sequence[str]) -> dict[str, str]:
    """Return ``-p NAME=VALUE`` pairs as a dict; a malformed or repeated pair is a usage error.

    >>> parse_params(["cells=9", "one_die = on"])
    {'cells': '9', 'one_die': 'on'}
    """
    given: dict[str, str] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="-p")
        if name in given:
            raise click.BadParameter(f"{name} is given twice ({given[name]!r} and {text.strip()!r})", param_hint="-p")
        given[name] = text.strip()
    return given


def plain(data: Any) -> Any:
    """Return ``data`` with what JSON cannot hold made plain: NaN and infinities become None, bytes (a BLOB) their
    hex text as PostgreSQL writes a ``bytea``; what ``--json`` and the explorer's JSON print.

    >>> plain({"x": [float("nan"), b"\\x00\\xff", 1.5]})
    {'x': [None, '\\\\x00ff', 1.5]}
    """
    if isinstance(data, dict):
        return {key: plain(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain(value) for value in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(data).hex()
    return data


NOISE = 1e-14  # a residual at or under this is rounding noise, whose digits differ from one machine to the next


def residual_text(residual: float) -> str:
    """Return how a solve's largest residual reads in a report: its size past :data:`NOISE`, else that it is under
    it (``--json`` keeps the number itself).

    >>> residual_text(1.9e-15), residual_text(3.2e-9)
    ('under 1e-14', '3.2e-09')
    """
    return f"under {NOISE:.0e}" if residual <= NOISE else f"{residual:.1e}"


def as_json(data: Any) -> Any:
    """Return ``data`` as ``--json`` prints it, read back: plain (:func:`plain`), tuples as lists, keys as text,
    anything else JSON has no type for (a date) as its text.

    >>> as_json({1: (2.5, float("inf"))})
    {'1': [2.5, None]}
    """
    return json.loads(json.dumps(plain(data), default=str, allow_nan=False))


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON (what ``--json`` prints everywhere): always valid JSON (:func:`as_json`)."""
    click.echo(json.dumps(as_json(data), indent=2))


def emit(data: Any, lines: Sequence[str], as_json: bool) -> None:
    """Print ``data`` as JSON with ``--json``, else the human-readable ``lines``."""
    if as_json:
        print_json(data)
    else:
        click.echo("\n".join(lines))


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Return rows as a plain text table with aligned columns (the headers alone when there are no rows).

    >>> print(table(["move", "value"], [["stop", 1.5], ["roll", None]]))
    move  value
    ----  -----
    stop  1.5
    roll
    """
    return "\n".join(TableWriter(headers).lines(rows))


class TableWriter:
    """A plain text table written a batch of rows at a time: the columns' widths are the first batch's (a later
    cell that is wider shifts its row, as in a stream nothing waits for the last row).

    >>> writer = TableWriter(["n", "name"])
    >>> print("\\n".join(writer.lines([[1, "one"]]) + writer.lines([[22, "twenty-two"]])))
    n  name
    -  ----
    1  one
    22  twenty-two
    """

    def __init__(self, headers: Sequence[str]) -> None:
        self.headers = [str(header) for header in headers]
        self.widths: list[int] | None = None

    def lines(self, rows: Sequence[Sequence[Any]]) -> list[str]:
        """Return the lines of the next batch of ``rows`` (the header's two lines first, with the first batch)."""
        cells = [[_cell(value) for value in row] for row in rows]
        lines = []
        if self.widths is None:
            self.widths = [max([len(header)] + [len(row[i]) for row in cells]) for i, header in enumerate(self.headers)]
            lines.append("  ".join(header.ljust(width) for header, width in zip(self.headers, self.widths)).rstrip())
            lines.append("  ".join("-" * width for width in self.widths))
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, self.widths)).rstrip() for row in cells]
        return lines


class JsonArrayWriter:
    """A JSON array of objects printed an object at a time, as :func:`print_json` prints the whole list.

    >>> writer = JsonArrayWriter()
    >>> writer.write([{"a": 1}]); writer.write([{"a": float("nan")}]); writer.close()
    [
      {
        "a": 1
      },
      {
        "a": null
      }
    ]
    """

    def __init__(self) -> None:
        self.count = 0
        self._names: dict[str, str] = {}  # an object's key -> its JSON text, worked out once

    def write(self, items: Sequence[Any]) -> None:
        """Print the next ``items`` of the array."""
        parts = []
        for item in items:
            parts.append(("[\n  " if self.count == 0 else ",\n  ") + self._text(item))
            self.count += 1
        if parts:
            click.echo("".join(parts), nl=False)

    def _text(self, item: Any) -> str:
        """Return ``item`` as :func:`print_json` indents an element of a list: a flat object of numbers, texts,
        truth values and nulls (a row of ``query``) put together field by field, as ``json`` would write it
        (its ``repr`` of numbers and its escaped texts) in a sixth of the time; anything else by ``json``."""
        if type(item) is dict:
            fields = []
            for key, value in item.items():
                cell = _scalar_json(value)
                if cell is None or type(key) is not str:
                    break
                name = self._names.get(key) or self._names.setdefault(key, json.dumps(key))
                fields.append(f"{name}: {cell}")
            else:
                return "{\n    " + ",\n    ".join(fields) + "\n  }" if fields else "{}"
        return json.dumps(plain(item), indent=2, default=str, allow_nan=False).replace("\n", "\n  ")

    def close(self) -> None:
        """Print the array's end (``[]`` when it holds nothing)."""
        click.echo("\n]" if self.count else "[]")


def _scalar_json(value: Any) -> str | None:
    """Return the JSON text of a plain number, text, truth value or None (a number that is not finite as null, as
    :func:`plain` makes it); None for a value of any other type.

    >>> [_scalar_json(value) for value in (1, 2.5, float("nan"), "é", True, None, b"")]
    ['1', '2.5', 'null', '"\\\\u00e9"', 'true', 'null', None]
    """
    kind = type(value)
    if kind is str:
        return json.dumps(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return float.__repr__(value) if math.isfinite(value) else "null"
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return None


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return plain(value)
    return str(value)


def mounted(games: Iterable[Game]) -> Iterator[click.Command]:
    """Yield the command groups the games declare (their ``commands`` hook), each once."""
    seen = set()
    for game in games:
        group = game.hooks.commands()
        if group is not None and group.name not in seen:
            seen.add(group.name)
            yield group
