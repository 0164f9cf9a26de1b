"""Diagrams: DOT that parses back with the rules' counts and weights, PNG through both routes."""

from __future__ import annotations

import json
import os
import struct
from collections import Counter
from pathlib import Path

import pydot
import pytest
from click.testing import CliRunner

import dicegraph.store.render as render
from dicegraph.cli import main
from dicegraph.graphs.jackpot import AGENTS, ROLLS, cell_bit, offered_cells
from dicegraph.store.render import Style, available_renderers, to_dot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def export(runner: CliRunner, db: str, *args: str):  # noqa: ANN201
    return runner.invoke(main, ["--db", db, "export", *args])


def parsed(path: Path) -> tuple[dict[str, pydot.Node], list[pydot.Edge]]:
    """Nodes (also those inside layer clusters) and edges of a DOT file, read back with pydot."""
    (graph,) = pydot.graph_from_dot_file(str(path))
    nodes: dict[str, pydot.Node] = {}
    pending = [graph]
    while pending:
        current = pending.pop()
        nodes.update((n.get_name().strip('"'), n) for n in current.get_nodes() if n.get_name() not in ("node", "edge", "graph"))
        pending += current.get_subgraphs()
    return nodes, graph.get_edges()


def hilo_moves_from_the_rules(cells: int) -> Counter[tuple[int, int]]:
    """(position, next position) -> how many of the 36 rolls HiLo turns into that move, from the rules."""
    counts: Counter[tuple[int, int]] = Counter()
    for index in range((1 << cells) - 1):
        for roll in ROLLS:
            choices = offered_cells(roll, index, cells)
            if choices:
                counts[index, index | cell_bit(AGENTS["hilo"](choices, cells))] += 1
    return counts


def require(renderer: str) -> None:
    """Skip (saying why) when a renderer is missing here, but fail in CI, which installs both."""
    if renderer not in available_renderers():
        message = f"the {renderer!r} renderer is not installed (see README: PNG)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, but CI must run this test")
        pytest.skip(message)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_policy_view_parses_back_with_the_rules_weights(runner: CliRunner, jackpot_db: str, tmp_path: Path) -> None:
    out = tmp_path / "hilo.dot"
    result = export(runner, jackpot_db, "jackpot", "--policy", "hilo", "--layers", "--move-labels", "-o", str(out))
    assert result.exit_code == 0, result.output
    nodes, edges = parsed(out)
    expected = hilo_moves_from_the_rules(9)
    assert len(nodes) == 512  # HiLo reaches every position
    assert len(edges) == len(expected) == 2304
    drawn = {(int(e.get_source().strip('"')), int(e.get_destination().strip('"'))): int(e.get("weight")) for e in edges}
    assert drawn == dict(expected)
    cell_four = drawn[0, cell_bit(4)]
    assert cell_four == sum(1 for roll in ROLLS if AGENTS["hilo"](offered_cells(roll, 0, 9), 9) == 4)
    label = next(e.get("label") for e in edges if (e.get_source(), e.get_destination()) == ("0", str(cell_bit(4))))
    assert label.strip('"').startswith(f"flip 4 ({cell_four})")


def test_busts_make_every_position_account_for_all_36_rolls(runner: CliRunner, db_url: str, tmp_path: Path) -> None:
    cells, out = 6, tmp_path / "busts.dot"
    built = json.loads(runner.invoke(main, ["--db", db_url, "build", "jackpot", "-p", f"cells={cells}", "--json"]).stdout)
    assert runner.invoke(main, ["--db", db_url, "solve", str(built["graph_id"])]).exit_code == 0  # evaluates hilo too
    result = export(runner, db_url, str(built["graph_id"]), "--policy", "hilo", "--busts", "-o", str(out))
    assert result.exit_code == 0, result.output
    nodes, edges = parsed(out)
    out_weight: Counter[str] = Counter()
    for e in edges:
        out_weight[e.get_source().strip('"')] += int(e.get("weight"))
    full = (1 << cells) - 1
    positions = [name for name, n in nodes.items() if "payoff" not in n.get("label")]
    assert len(positions) == full and all(out_weight[name] == len(ROLLS) for name in positions)
    assert sum(1 for name in nodes if name.endswith("/lost")) == sum(
        1 for index in range(full) if any(not offered_cells(roll, index, cells) for roll in ROLLS)
    )


def test_full_view_of_a_small_board_has_every_node_and_edge(runner: CliRunner, db_url: str, tmp_path: Path) -> None:
    built = json.loads(runner.invoke(main, ["--db", db_url, "build", "jackpot", "-p", "cells=3", "--json"]).stdout)
    assert runner.invoke(main, ["--db", db_url, "solve", str(built["graph_id"])]).exit_code == 0
    out = tmp_path / "full.dot"
    result = export(runner, db_url, str(built["graph_id"]), "--full", "--values", "-o", str(out), "--json")
    assert result.exit_code == 0, result.output
    nodes, edges = parsed(out)
    assert len(nodes) == built["nodes"] and len(edges) == built["edges"]
    shapes = Counter(n.get("shape") for n in nodes.values())
    assert set(shapes) == {"ellipse", "diamond", "box"}
    rolls_out: Counter[str] = Counter()
    for e in edges:
        if e.get("style") == "dashed":
            numerator, denominator = e.get("label").strip('"').split("\\n")[-1].split("/")
            assert denominator == "36"
            rolls_out[e.get_source()] += int(numerator)
    assert set(rolls_out.values()) == {36} and len(rolls_out) == shapes["ellipse"]
    chosen = [e for e in edges if e.get("color") == "blue"]
    assert len(chosen) == shapes["diamond"]  # the policy's one move at each decision


def test_neighbourhood_depth_and_layers(runner: CliRunner, jackpot_db: str, tmp_path: Path) -> None:
    out = tmp_path / "around.dot"
    assert export(runner, jackpot_db, "jackpot", "--root", "0", "--depth", "2", "-o", str(out)).exit_code == 0
    nodes, edges = parsed(out)
    decisions = [roll for roll in ROLLS if offered_cells(roll, 0, 9)]
    positions = {cell_bit(c) for roll in decisions for c in offered_cells(roll, 0, 9)}
    assert len(nodes) == 1 + len(decisions) + len(positions)  # nothing is lost from the start position
    assert len(edges) == len(decisions) + sum(len(set(offered_cells(roll, 0, 9))) for roll in decisions)
    top = tmp_path / "top.dot"
    assert export(runner, jackpot_db, "jackpot", "--to-layer", "2", "-o", str(top)).exit_code == 0
    assert len(parsed(top)[0]) == 10


def test_size_guard_names_the_ways_out(runner: CliRunner, jackpot_db: str, tmp_path: Path) -> None:
    out = tmp_path / "big.dot"
    result = export(runner, jackpot_db, "jackpot", "--max-nodes", "100", "-o", str(out))
    assert result.exit_code == 1 and not out.exists()
    assert "512 nodes, over the limit of 100" in result.stderr and "--to-layer" in result.stderr
    assert "--force" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = export(runner, jackpot_db, "jackpot", "--full", "-o", str(out))
    assert result.exit_code == 1 and "--depth" in result.stderr
    assert export(runner, jackpot_db, "jackpot", "--max-nodes", "100", "--force", "-o", str(out)).exit_code == 0


@pytest.mark.parametrize("renderer", ["dot", "python"])
def test_png_through_each_renderer(runner: CliRunner, jackpot_db: str, tmp_path: Path, renderer: str) -> None:
    require(renderer)
    sizes = {}
    for dpi in (96, 192):
        out = tmp_path / f"{renderer}-{dpi}.png"
        result = export(runner, jackpot_db, "jackpot", "--policy", "hilo", "--to-layer", "4", "--layers",
                        "--renderer", renderer, "--dpi", str(dpi), "-o", str(out), "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["renderer"] == renderer
        sizes[dpi] = png_size(out)
    width, height = sizes[96]
    assert 500 < width < 20_000 and 200 < height < 5_000  # 36 positions side by side, three layers
    assert all(abs(big - 2 * small) <= 4 for big, small in zip(sizes[192], sizes[96]))


@pytest.mark.parametrize("renderer", ["dot", "python"])
def test_svg_through_each_renderer(runner: CliRunner, jackpot_db: str, tmp_path: Path, renderer: str) -> None:
    require(renderer)
    out = tmp_path / "start.svg"
    assert export(runner, jackpot_db, "jackpot", "--to-layer", "2", "--renderer", renderer, "-o", str(out)).exit_code == 0
    svg = out.read_text()
    assert "<svg" in svg and svg.count('class="node"') == 10


def test_the_python_route_draws_labels_with_its_own_font() -> None:
    require("python")
    import networkx as nx

    def picture(text: str) -> bytes:
        view = nx.DiGraph()
        view.add_node(text, key=text, label=text, layer=0, kind="chance", denom=1, payoff=None, value=None, reach=1)
        dot = to_dot(view, Style())
        dot.get_node(pydot.quote_id_if_necessary(text))[0].set("fixedsize", "true")
        dot.get_node(pydot.quote_id_if_necessary(text))[0].set("width", "3")
        return render.render(dot, "png", "python")[0]

    assert picture("WWWWWW") != picture("i")  # same box, different glyphs: the text is drawn


def test_without_any_renderer_the_dot_is_still_written(
    runner: CliRunner, jackpot_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "available_renderers", lambda: [])
    out = tmp_path / "hilo.png"
    result = export(runner, jackpot_db, "jackpot", "--to-layer", "2", "-o", str(out))
    assert result.exit_code == 1 and not out.exists()
    assert "apt-get install graphviz" in result.stderr and "dicegraph[png]" in result.stderr
    assert len(parsed(tmp_path / "hilo.dot")[0]) == 10


def test_unknown_extension_is_refused(runner: CliRunner, jackpot_db: str, tmp_path: Path) -> None:
    result = export(runner, jackpot_db, "jackpot", "-o", str(tmp_path / "hilo.jpg"))
    assert result.exit_code == 1 and "name the file .dot, .svg or .png" in result.stderr


@pytest.mark.parametrize("name, params", [("pig", {"target": 6, "holds": (2, 4)}), ("pig", {"target": 12, "holds": (3,)})])
def test_a_graph_with_loops_is_walked_alike_with_and_without_a_recursive_union(
        name: str, params: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The positions a policy reaches in a graph whose positions recur: found by a recursive UNION where the backend
    has one, else a statement a step (Spark's recursive queries only UNION ALL); both views the same, every policy."""
    import dataclasses

    import networkx as nx

    import dicegraph
    from dicegraph.store import export
    from dicegraph.store.backends import backend_of
    from dicegraph.store.db import open_database

    url = f"sqlite:///{tmp_path / 'loops.db'}"
    dicegraph.open(url).report(name, params=params, games=0)
    engine = open_database(url)
    with engine.connect() as connection:
        policies = connection.exec_driver_sql("SELECT id FROM policy WHERE graph_id = 1").scalars().all()
        views = [export.policy_view(connection, 1, policy) for policy in policies]
        stepwise = dataclasses.replace(backend_of(connection), recursive_union=False)
        monkeypatch.setattr(export, "backend_of", lambda bind: stepwise)
        for policy, view in zip(policies, views):
            walked = export.policy_view(connection, 1, policy)
            assert view.number_of_edges() > 1 and nx.utils.graphs_equal(view, walked)
    engine.dispose()


def test_on_sqlite_the_policy_views_walk_reads_each_move_from_the_walked_rows(jackpot_db: str) -> None:
    """Built and solved, the database carries the planner's statistics, and the policy view's walk looks each
    walked row's move up in ``choice``: SQLite 3.51, planning with none, made the policy's choices the outer
    loop and scanned the walk once a choice (60 s instead of 1.5 s for this view)."""
    import sqlalchemy as sa

    from dicegraph.store.catalog import find_policy
    from dicegraph.store.db import open_database
    from dicegraph.store.export import policy_view

    engine = open_database(jackpot_db, read_only=True)
    walks: list[tuple[str, tuple]] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def keep(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if "RECURSIVE walk" in statement:
            walks.append((statement, tuple(parameters)))

    with engine.connect() as connection:
        view = policy_view(connection, 1, find_policy(connection, 1, "hilo").id)
        assert view.number_of_edges() == 2304 and len(walks) == 1
        statement, parameters = walks[0]
        plan = [row[3] for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)]
    engine.dispose()
    step = plan[plan.index("RECURSIVE STEP") + 1:]
    reads = [line for line in step if "walk" in line.split(" USING")[0] or "choice" in line]
    assert reads[0] == "SCAN walk" and "choice" in reads[1] and "node_id=?" in reads[1], plan
