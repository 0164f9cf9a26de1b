"""The modules import one another without cycles: no module imports, even inside a function, a module that
imports it back (a game package's modules included, which name their siblings, never the package). Importing a
module runs its packages' ``__init__`` first, so a module imports those packages too (but its own, and the
package ``dicegraph`` itself, whose ``__init__`` imports nothing when it runs: it looks its names up when first
used)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dicegraph", "graphs", "store", "web")  # the folders that install under the package dicegraph


def module_name(path: Path) -> str:
    """Return the installed name of a module of the repository (a package's ``__init__`` is the package).

    >>> module_name(ROOT / "graphs" / "school" / "__init__.py"), module_name(ROOT / "cli.py")
    ('dicegraph.graphs.school', 'dicegraph.cli')
    """
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(("dicegraph", *parts) if parts[0] != "dicegraph" else parts).removesuffix(".__init__")


def import_graph(packages: bool = False) -> nx.DiGraph:
    """Return the graph of imports among the project's modules: an edge from each module to each it imports
    (with ``packages``, also to the packages whose ``__init__`` that import runs, but its own)."""
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")] + [ROOT / "cli.py"]
    modules = {module_name(path): path for path in files}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                            for alias in node.names]
            else:
                continue
            graph.add_edges_from((name, other) for other in imported if other in modules and other != name)
            if packages:
                graph.add_edges_from((name, package) for other in imported for package in _packages(other)
                                     if package in modules and not (name == package or name.startswith(package + ".")))
    return graph


def _packages(module: str) -> list[str]:
    """Return the packages whose ``__init__`` importing ``module`` runs, outermost first, but ``dicegraph``'s.

    >>> _packages("dicegraph.store.solve.turns")
    ['dicegraph.store', 'dicegraph.store.solve']
    """
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(2, len(parts))]


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph(packages=True)
    assert len(graph) > 80
    assert list(nx.simple_cycles(graph)) == []


def package_of(module: str, packages: set[str]) -> str:
    """Return the package a module stands for: itself if it is one (``packages``), else the package holding it.

    >>> package_of("dicegraph.store.solve.turns", {"dicegraph.store.solve"}), package_of("dicegraph.store", {"dicegraph.store"})
    ('dicegraph.store.solve', 'dicegraph.store')
    """
    return module if module in packages else module.rpartition(".")[0]


def test_no_package_imports_one_that_imports_it_back() -> None:
    """Packages, as well as modules, import one another without cycles: each module stands for its package, an
    import into its own package or one enclosing it (a part using what its package shares) is left out, and no
    package then reaches itself again. (``store/solve`` and Spark's folds in ``store/backends/spark`` imported
    each other; they now share only the store's plain types.)"""
    packages = {module_name(path) for package in PACKAGES for path in (ROOT / package).rglob("__init__.py")}
    graph = nx.DiGraph()
    for importer, imported in import_graph().edges:
        into, out_of = package_of(imported, packages), package_of(importer, packages)
        if into != out_of and not out_of.startswith(into + "."):
            graph.add_edge(out_of, into)
    assert {"dicegraph.store.solve", "dicegraph.store.backends.spark"} <= set(graph)
    assert list(nx.simple_cycles(graph)) == []


def test_the_front_ends_stand_on_the_session_alone() -> None:
    """The command line and the explorer import nothing of the store, nor SQLAlchemy, directly: they call the
    session (:func:`dicegraph.open`) and take the store's defaults, limits and errors from
    :mod:`dicegraph.frontends`."""
    fronts = ["dicegraph.cli", *(name for name in import_graph() if name.startswith("dicegraph.web"))]
    for front in fronts:
        path = ROOT / ("cli.py" if front == "dicegraph.cli" else f"{front.removeprefix('dicegraph.').replace('.', '/')}.py")
        if not path.exists():
            path = path.with_suffix("") / "__init__.py"
        imported = [node.module if isinstance(node, ast.ImportFrom) else alias.name
                    for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in node.names]
        below = [name for name in imported if name and (name.startswith("dicegraph.store") or name.startswith("sqlalchemy"))]
        assert below == [], (front, below)
    assert len(fronts) > 3


def test_the_store_never_imports_the_games_registry() -> None:
    graph = import_graph()
    assert [edge for edge in graph.edges if edge[0].startswith("dicegraph.store") and edge[1] == "dicegraph.graphs"] == []


def test_the_package_runs_no_import_when_it_is_imported() -> None:
    """``dicegraph/__init__.py`` imports no module of its own when it runs (importing ``dicegraph.graphs.rules``
    runs it first): its imports are inside functions."""
    tree = ast.parse((ROOT / "dicegraph" / "__init__.py").read_text())
    imported = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = [node.module if isinstance(node, ast.ImportFrom) else alias.name for node in imported
             for alias in (node.names if isinstance(node, ast.Import) else [None])]
    assert names and not [name for name in names if name.split(".")[0] == "dicegraph"], names


BACKEND_NAMES = {"sqlite", "duckdb", "postgresql", "spark"}
BACKENDS_FOLDER = ROOT / "store" / "backends"


def _names_a_backend(tree: ast.AST) -> list[int]:
    """Return the lines where ``tree`` reads a dialect's name (``x.dialect.name``, ``url.get_backend_name()``) or
    compares with a backend's name written out."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "dialect":
            lines.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "get_backend_name":
            lines.add(node.lineno)
        elif isinstance(node, ast.Compare) and any(isinstance(part, ast.Constant) and part.value in BACKEND_NAMES
                                                   for part in ast.walk(node)):
            lines.add(node.lineno)
    return sorted(lines)


def test_only_a_backends_own_folder_names_a_backend() -> None:
    """Outside ``store/backends/`` nothing reads a dialect's name or compares with a backend's: the store asks
    the backend's record (``backend_of(connection).upserts``), and what one backend does differently lives in its
    folder. The registry (``store/backends/__init__.py``) is where a name becomes a record."""
    files = [path for package in (*PACKAGES, "migrations") for path in (ROOT / package).rglob("*.py")]
    found = {f"{path.relative_to(ROOT)}:{line}" for path in files + [ROOT / "cli.py"]
             if BACKENDS_FOLDER not in path.parents and path != ROOT / "dicegraph" / "cli.py"
             for line in _names_a_backend(ast.parse(path.read_text()))}
    assert found == set()
    assert _names_a_backend(ast.parse("if connection.dialect.name == 'duckdb': pass")) == [1]
