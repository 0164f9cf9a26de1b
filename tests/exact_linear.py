"""Exact linear systems in fractions, sparse: what the cyclic games' independent checks solve.

A system is a row per unknown: ``{unknown: coefficient, ..., RHS: constant}``
meaning ``sum(coefficient * unknown) = constant``. Gauss-Jordan elimination
in the order given keeps rows short when each unknown depends on few others
that come before it in that order (a game's deepest positions first).

>>> from fractions import Fraction as F
>>> solve_sparse({"x": {"x": F(1), "y": F(-1, 2), RHS: F(1)}, "y": {"y": F(1), "x": F(-1, 2), RHS: F(1)}}, ["x", "y"])
{'x': Fraction(2, 1), 'y': Fraction(2, 1)}
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from fractions import Fraction

RHS = "rhs"


def solve_sparse(rows: dict[Hashable, dict[Hashable, Fraction]], order: Iterable[Hashable]) -> dict[Hashable, Fraction]:
    """Return unknown -> its exact value; ``rows`` (changed in place) as in the module's docstring."""
    users: dict[Hashable, set[Hashable]] = {}
    for unknown, row in rows.items():
        for column in row:
            users.setdefault(column, set()).add(unknown)
    for pivot in order:
        row = rows[pivot]
        lead = row[pivot]
        for column in row:
            row[column] /= lead
        for other in users.pop(pivot, set()) - {pivot}:
            changed = rows[other]
            factor = changed.pop(pivot)
            for column, x in row.items():
                if column != pivot:
                    changed[column] = changed.get(column, Fraction(0)) - factor * x
                    users.setdefault(column, set()).add(other)
    return {unknown: row[RHS] for unknown, row in rows.items()}
