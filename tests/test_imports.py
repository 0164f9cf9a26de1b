"""The modules import one another without cycles: no module imports, even inside a function, a module that
imports it back (a game package's modules included, which name their siblings, never the package)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dicegraph", "graphs", "store", "web")


def module_name(path: Path) -> str:
    """Return the module name of a file under the repository (a package's ``__init__`` is the package)."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def import_graph() -> nx.DiGraph:
    """Return the graph of imports among the project's modules: an edge from each module to each it imports."""
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
    return graph


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph()
    assert len(graph) > 80
    assert list(nx.simple_cycles(graph)) == []


def test_the_store_never_imports_the_games_registry() -> None:
    graph = import_graph()
    assert [edge for edge in graph.edges if edge[0].startswith("store") and edge[1] == "graphs"] == []
