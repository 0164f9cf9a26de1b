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
from dicegraph.store.backends.record import Backend, Implementation
from dicegraph.store.solve.dispatch import OPERATIONS
from tests.guide_tables import _first_sentence

PAGE = Path(__file__).resolve().parents[1] / "docs" / "backends.md"
MARK = "<!-- the backends' records: python -m tests.backend_tables -->"
OPERATIONS_MARK = "<!-- the solve's operations: python -m tests.backend_tables -->"
END = "<!-- end of the generated table -->"
SHOWN_ELSEWHERE = ("name", "title")  # the table's columns


def _shown(value: object) -> str:
    """Return a record's value as the table shows it.

    >>> _shown(True), _shown(None), _shown((8, b"DUCK")), _shown(2048), _shown(())
    ('yes', '', "`8: b'DUCK'`", '2,048', '')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    if isinstance(value, tuple) and all(isinstance(item, Implementation) for item in value):
        return ", ".join(item.operation for item in value)
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


def operations_table() -> str:
    """Return the table of the solve's operations (:data:`dicegraph.store.solve.dispatch.OPERATIONS`): each with
    what it computes and its reference implementation, and a column per backend naming the faster implementation
    it registers (run where its ``can_run`` says it can, the reference elsewhere) or "reference"."""
    lines = ["| operation | reference, in portable SQL | " + " | ".join(backend.title for backend in BACKENDS) + " |",
             "| --- | --- |" + " --- |" * len(BACKENDS)]
    for name, operation in OPERATIONS.items():
        cells = []
        for backend in BACKENDS:
            own = [found for found in backend.faster if found.operation == name]
            cells.append(" ".join(f"`{_short(found.runs)}` where `{found.function('can_run')[1]}`" for found in own)
                         or "reference")
        lines.append(f"| {name}: {operation.computes} | `{_short(operation.reference)}` | {' | '.join(cells)} |")
    return "\n".join(lines)


def _short(function: str) -> str:
    """Return a ``"module:function"`` as the table names it.

    >>> _short("dicegraph.store.backends.spark.graph_fold:folds")
    'spark.graph_fold:folds'
    """
    return function.removeprefix("dicegraph.store.").removeprefix("backends.")


def _between(text: str, mark: str, table: str) -> str:
    """Return ``text`` with the lines between ``mark`` and the next :data:`END` replaced by ``table``."""
    before, _, rest = text.partition(mark + "\n")
    _, _, after = rest.partition(END)
    return f"{before}{mark}\n{table}\n{END}{after}"


def page() -> str:
    """Return docs/backends.md with its tables as the records say."""
    return _between(_between(PAGE.read_text(), MARK, records_table()), OPERATIONS_MARK, operations_table())


if __name__ == "__main__":
    PAGE.write_text(page())
