"""docs/backends.md's table of the backends, generated from their records (:mod:`dicegraph.store.backends`): each
fact of :class:`dicegraph.store.backends.record.Backend` with what it means and each backend's value, then each
thing a backend does its own way (a method its record overrides), with the first sentence of that method's
docstring.

    .venv/bin/python -m tests.backend_tables    # rewrite the table in docs/backends.md after changing a record

``tests/test_backend_records.py`` fails when the page's table is not what this prints.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

from dicegraph.store.backends import BACKENDS
from dicegraph.store.backends.record import Backend
from tests.guide_tables import _first_sentence

PAGE = Path(__file__).resolve().parents[1] / "docs" / "backends.md"
MARK = "<!-- the backends' records: python -m tests.backend_tables -->"
END = "<!-- end of the generated table -->"
SHOWN_ELSEWHERE = ("name", "title")  # the table's columns


def _shown(value: object) -> str:
    """Return a record's value as the table shows it.

    >>> _shown(True), _shown(None), _shown((8, b"DUCK")), _shown(2048)
    ('yes', '', "`8: b'DUCK'`", '2,048')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    if isinstance(value, tuple):
        return f"`{value[0]}: {value[1]!r}`"
    if isinstance(value, int):
        return f"{value:,}"
    return f"`{value}`" if "/" in str(value) else str(value)


def records_table() -> str:
    """Return the table: a row per fact and per method some backend does its own way, a column per backend."""
    lines = ["| | " + " | ".join(backend.title for backend in BACKENDS) + " |",
             "| --- |" + " --- |" * len(BACKENDS)]
    for fact in dataclasses.fields(Backend):
        if fact.name in SHOWN_ELSEWHERE:
            continue
        values = " | ".join(_shown(getattr(backend, fact.name)) for backend in BACKENDS)
        lines.append(f"| `{fact.name}`: {fact.metadata['means']} | {values} |")
    for name, method in vars(Backend).items():
        if not inspect.isfunction(method) or name.startswith("_"):
            continue
        own = [type(backend).__dict__.get(name) for backend in BACKENDS]
        if not any(own):
            continue
        cells = " | ".join(_first_sentence(found.__doc__) if found else "" for found in own)
        lines.append(f"| `{name}()`: {_first_sentence(method.__doc__)} | {cells} |")
    return "\n".join(lines)


def page() -> str:
    """Return docs/backends.md with its table as the records say."""
    text = PAGE.read_text()
    before, _, rest = text.partition(MARK + "\n")
    _, _, after = rest.partition(END)
    return f"{before}{MARK}\n{records_table()}\n{END}{after}"


if __name__ == "__main__":
    PAGE.write_text(page())
