"""dicegraph as a library: ``import dicegraph``, then ``db = dicegraph.open(url)`` (the manual: docs/python.md).

>>> import dicegraph
>>> db = dicegraph.open("sqlite://")
>>> db.build("jackpot", {"cells": 3})["action"]
'built'
>>> sorted(dicegraph.games())[:3]
['5000', '5000-race', 'bear-off']
>>> try:
...     db.build("jackpot", {"cells": 99})
... except dicegraph.Error as error:
...     print(error)
invalid value '99' for parameter 'cells' (accepted: whole numbers 2..12)

Every part of dicegraph installs under this package (``dicegraph.graphs``, ``dicegraph.store``,
``dicegraph.web``, ``dicegraph.cli``, ``dicegraph.migrations``). Importing one of them runs this module first,
so it imports nothing itself: the names below are looked up when first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Database", "Error", "GameSpec", "Meter", "__version__", "games", "open"]

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it here; ``dicegraph --version`` prints it)

# each name this module offers: (the module that defines it, its name there)
EXPORTS = {
    "Database": ("dicegraph.database", "Database"),
    "Meter": ("dicegraph.database", "Meter"),
    "open": ("dicegraph.database", "open"),
    "Error": ("dicegraph.graphs.errors", "DicegraphError"),
    "GameSpec": ("dicegraph.graphs.spec", "GameSpec"),
}


def names_on_first_use(module: str, exports: Mapping[str, tuple[str, str]],
                       namespace: dict[str, Any]) -> Callable[[str], Any]:
    """Return the ``__getattr__`` of ``module`` (PEP 562) that imports each of ``exports`` (a name -> the module
    that defines it, its name there) when first read and keeps it in ``namespace`` (the module's globals), so
    that importing the module imports none of them.

    >>> lookup = names_on_first_use("m", {"sqrt": ("math", "sqrt")}, {})
    >>> lookup("sqrt")(9.0)
    3.0
    """
    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home, defined = exports[name]
        value = getattr(importlib.import_module(home), defined)
        namespace[name] = value
        return value

    return __getattr__


__getattr__ = names_on_first_use("dicegraph", EXPORTS, globals())


def __dir__() -> list[str]:
    """Return the module's names, the ones imported on first use included."""
    return sorted(set(globals()) | set(EXPORTS))


def games() -> dict[str, Any]:
    """Return the games dicegraph can build by name (built in and installed plugins), each its declared spec
    (:class:`dicegraph.graphs.spec.GameSpec`)."""
    from dicegraph.graphs import GAMES

    return dict(GAMES)
