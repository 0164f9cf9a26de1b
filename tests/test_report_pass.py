"""One report pass: ``report --diagrams`` of every game builds each graph it reads once, solves it once and
evaluates each policy once; its table, its charts and its diagrams read the same solved graphs
(:class:`dicegraph.store.report.ReportGraphs`)."""

from __future__ import annotations

import collections
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import dicegraph.database
from dicegraph.database import Database
from dicegraph.graphs import GAMES, get_game
from dicegraph.store import report
from dicegraph.store.load import canonical_params
from dicegraph.store.solve import entry
from tests.test_conformance import small_params


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> collections.Counter:
    """Count, through the functions a report calls, each build of a graph (by game and parameters), each solve of
    a graph (``ensure_solved``, by graph), each policy solved (by graph and name) and each policy evaluated."""
    counted: collections.Counter = collections.Counter()

    def count(module: Any, name: str, keys: Callable[..., list[tuple]]) -> None:
        original = getattr(module, name)

        def counting(*args: Any, **kwargs: Any) -> Any:
            counted.update(keys(*args, **kwargs))
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)

    for module in (dicegraph.database, report):
        count(module, "build_graph", lambda engine, game, params, **_: [("built", game.name, canonical_params(params))])
        count(module, "ensure_solved", lambda connection, graph_id, *_, **__: [("solved", graph_id)])
    count(entry, "solve_graph", lambda connection, graph_id, game, **kwargs: [
        ("solved policy", graph_id, kwargs.get("name", "its turn policies"))])
    count(entry, "evaluate_all", lambda connection, graph_id, ids, *_: [("evaluated", graph_id, i) for i in ids])
    return counted


@pytest.mark.parametrize("name", [*sorted(GAMES), "shut-the-box-at-most-3"])  # a paired game reads its game too
def test_a_report_with_its_diagrams_builds_solves_and_evaluates_each_graph_once(
        name: str, counts: collections.Counter, tmp_path: Path) -> None:
    game = get_game(name)
    url = f"sqlite:///{tmp_path / 'game.db'}"
    params = small_params(game)
    data = Database(url).report(name, params, diagrams=tmp_path / "diagrams")
    drawn = {Path(found["file"]).name for found in data.get("diagrams", [])}
    assert data["policies"] and {report.diagram_file(name, diagram) for diagram in game.hooks.diagrams()} <= drawn
    assert counts and set(counts.values()) == {1}, {key: n for key, n in counts.items() if n != 1}
    graphs = {key[1] for key in counts if key[0] == "solved"}
    assert len(graphs) == len([key for key in counts if key[0] == "built"])  # a solve for each graph built
