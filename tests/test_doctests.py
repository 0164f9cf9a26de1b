"""Every example in the package's docstrings, run as the module its users import (``dicegraph.graphs.spec``).

pytest's ``--doctest-modules`` names a module by its file's place in the repository (``graphs/spec.py`` becomes
``dicegraph.graphs.spec``) and would load a second copy of each beside the installed ``dicegraph.graphs.spec``, with
registries and classes of its own. Here each module is imported by its installed name, and its docstrings'
examples run with doctest (``ELLIPSIS`` on, as pytest has it): one test a docstring.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from collections.abc import Iterator

import pytest

import dicegraph

# the package's parts; the migrations run inside Alembic only (tests/test_db.py runs them)
PARTS = ("dicegraph", "dicegraph.graphs", "dicegraph.store", "dicegraph.web")


def module_names() -> list[str]:
    """Return the name of every module of the package's parts, each once, sorted.

    >>> "dicegraph.graphs.spec" in module_names() and "dicegraph.cli" in module_names()
    True
    """
    names: set[str] = set()
    for part in PARTS:
        package = importlib.import_module(part)
        names.add(part)
        names.update(found.name for found in pkgutil.walk_packages(package.__path__, prefix=f"{part}.")
                     if not found.name.startswith("dicegraph.migrations"))
    return sorted(names)


def docstring_tests() -> Iterator[doctest.DocTest]:
    """Yield every docstring of the package that holds an example, its module imported by its installed name."""
    finder = doctest.DocTestFinder()
    for name in module_names():
        for test in finder.find(importlib.import_module(name), name):
            if test.examples:
                yield test


DOCTESTS = sorted(docstring_tests(), key=lambda test: test.name)


def test_the_package_has_its_examples() -> None:
    assert dicegraph.__name__ == "dicegraph" and len(DOCTESTS) > 100, len(DOCTESTS)


@pytest.mark.parametrize("test", DOCTESTS, ids=[test.name for test in DOCTESTS])
def test_docstring_examples(test: doctest.DocTest) -> None:
    """The docstring's examples print what it shows."""
    said: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    results = runner.run(test, out=said.append, clear_globs=True)
    assert results.failed == 0, "".join(said)
