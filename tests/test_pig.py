"""Pig: cyclic components solved in SQL by Newton's method, against exact rationals from the rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
import sqlalchemy as sa

from dicegraph.graphs.spec import GameSpec
from dicegraph.graphs import get_game, pig
from dicegraph.graphs.errors import InvalidGraph
from dicegraph.graphs.protocol import CHANCE, DECISION, MOVE, ROLL, TERMINAL, CyclicLayers, Edge, Node, Row
from dicegraph.store.solve import cycles, graph_matches
from dicegraph.store.catalog import find_policy, policy_convergence
from dicegraph.store.load import build_graph
from dicegraph.store.schema import choice, edge, node, policy, value
from dicegraph.store.solve.layers import evaluate, solve
from dicegraph.store.seats import FOLLOW, Seat
from tests import pig_exact


def stored_values(connection: sa.Connection, policy_id: int) -> dict[str, float]:
    query = (sa.select(node.c.key, value.c.value).select_from(value.join(node, node.c.id == value.c.node_id))
             .where(value.c.policy_id == policy_id, node.c.kind == "decision"))
    return dict(connection.execute(query).all())


def key(position: pig_exact.Position) -> str:
    return pig.decision_key(*position)


def close(x: float, exact: Fraction) -> bool:
    return abs(x - float(exact)) <= 1e-12 * max(1.0, abs(float(exact)))


@pytest.fixture(params=["sqlite", "duckdb"])
def each_engine(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> sa.Engine:
    """A new database on SQLite, which solves a component at a time, and on DuckDB, which pays per statement
    and solves runs of components together: there a window of two, so that it slides along the run."""
    from dicegraph.store.db import open_database

    if request.param == "duckdb":
        monkeypatch.setattr(cycles, "GROUPED", 2)
        return open_database(f"duckdb:///{tmp_path / 'test.duckdb'}", create=True)
    return open_database(f"sqlite:///{tmp_path / 'test.db'}", create=True)


@pytest.mark.parametrize("target", [2, 5, 8])
def test_sql_optimum_equals_exact_policy_iteration(each_engine: sa.Engine, target: int) -> None:
    engine = each_engine
    game = get_game("pig")
    graph_id = build_graph(engine, game, {"target": target, "holds": (4,)}).graph_id
    with engine.begin() as connection:
        policy_id = solve(connection, graph_id)
        found = stored_values(connection, policy_id)
        moves = dict(connection.execute(
            sa.select(node.c.key, edge.c.label).select_from(
                choice.join(node, node.c.id == choice.c.node_id).join(edge, edge.c.id == choice.c.edge_id))
            .where(choice.c.policy_id == policy_id, node.c.graph_id == graph_id)).all())
    exact, best = pig_exact.optimum(target)
    assert moves == {key(p): move for p, move in best.items()}  # a move at every decision, the turn starts too
    assert set(found) == {key(p) for p in exact}
    wrong = {key(p): (found[key(p)], float(v)) for p, v in exact.items() if not close(found[key(p)], v)}
    assert not wrong


def test_agents_and_matches_equal_exact_linear_solves(each_engine: sa.Engine) -> None:
    engine = each_engine
    target = 9
    graph_id = build_graph(engine, get_game("pig"), {"target": target, "holds": (3, 5)}).graph_id
    with engine.begin() as connection:
        for name in ("hold-at-3", "hold-at-5"):
            evaluate(connection, find_policy(connection, graph_id, name).id)
        solve(connection, graph_id)
        selfplay = stored_values(connection, find_policy(connection, graph_id, "hold-at-3").id)
        match, reverse = graph_matches.head_to_head(connection, graph_id, "hold-at-3", "hold-at-5")
        against_optimum, _ = graph_matches.head_to_head(connection, graph_id, "optimal", "hold-at-5")
    hold3, hold5 = pig.hold_at(3), pig.hold_at(5)
    exact_selfplay = pig_exact.evaluate(target, hold3, hold3)
    assert all(close(selfplay[key(p)], v) for (seat, p), v in exact_selfplay.items() if seat == 0)
    assert close(match, pig_exact.evaluate(target, hold3, hold5)[0, (0, 0, 0)])
    assert close(reverse, pig_exact.evaluate(target, hold5, hold3)[0, (0, 0, 0)])
    _, best = pig_exact.optimum(target)
    assert close(against_optimum, pig_exact.evaluate(target, best.__getitem__, hold5)[0, (0, 0, 0)])
    assert against_optimum > 0.5  # moving first and playing best beats hold-at-5


def clock_ticks(target: int) -> int:
    """Return the number of cyclic components Pig to ``target`` has: one a tick of its clock, half the score
    sum (sums 2m and 2m + 1 loop together)."""
    return len({(mine + theirs) // 2 for mine in pig.scores(target) for theirs in pig.scores(target)})


def test_solve_records_how_the_components_converged(engine: sa.Engine) -> None:
    graph_id = build_graph(engine, get_game("pig"), {"target": 12, "holds": (20,)}).graph_id
    with engine.begin() as connection:
        policy_id = solve(connection, graph_id)
        record = connection.execute(sa.select(policy.c.convergence).where(policy.c.id == policy_id)).scalar_one()
    import json

    converged = json.loads(record)
    assert converged["method"] == "newton"
    assert converged["cyclic_components"] == clock_ticks(12)
    assert converged["residual"] <= 1e-12
    assert converged["most_passes"] <= 5


def test_the_games_first_guess_saves_passes_and_changes_no_value(engine: sa.Engine) -> None:
    params = {"target": 38, "holds": (20,)}
    graph_id = build_graph(engine, get_game("pig"), params).graph_id  # (to 37 one pass does)
    solved = {}
    for hinted in (True, False):  # without: every anchor starts from the mean of the component solved before
        with engine.begin() as connection:
            policy_id = solve(connection, graph_id, first_guess=get_game("pig").guess_for(params) if hinted else None)
            solved[hinted] = stored_values(connection, policy_id), policy_convergence(connection, policy_id)["passes"]
    (guessed, fewer), (plain, more) = solved[True], solved[False]
    assert fewer < more
    assert guessed.keys() == plain.keys()
    assert all(abs(guessed[k] - plain[k]) <= 1e-12 * max(1.0, abs(plain[k])) for k in plain)


def test_on_duckdb_a_match_takes_one_pass_and_a_statement_a_depth_below_the_anchors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the engine pays per statement, the components of a run are valued together, their layers at the
    same depth below their anchors by one statement a kind of node, or the whole pass by one recursive statement
    where the engine may group a recursion's steps (DuckDB); fixed moves take one pass in all, and give the same
    values either way."""
    import dataclasses

    from dicegraph.store.backends import backend_of
    from dicegraph.store.db import open_database

    engine = open_database(f"duckdb:///{tmp_path / 'pig.duckdb'}", create=True)
    graph_id = build_graph(engine, get_game("pig"), {"target": 12, "holds": (3, 5)}).graph_id
    written: list[str] = []

    def count(conn, cursor, statement, *rest) -> None:  # noqa: ANN001
        layers_terms = ".kind =" in statement and ".dst" in statement  # a layer's (or layers') terms
        if statement.startswith(("INSERT INTO cyc_term", "INSERT INTO cyc_new")) and layers_terms or \
                statement.startswith("WITH RECURSIVE walk"):
            written.append(statement)

    solved = {}
    with engine.begin() as connection:
        parts = cycles.components(connection, graph_id)
        kinds = {(span.layer - part.first, kind) for part in parts for span in part.spans
                 for kind, count_of in (("roll", span.rolls), ("move", span.moves)) if count_of}
        seats = [Seat(FOLLOW, find_policy(connection, graph_id, name).id, after_pass=other)
                 for name, other in (("hold-at-3", 1), ("hold-at-5", 0))]
        for walked in (False, True):
            record = dataclasses.replace(backend_of(connection), grouped_recursion=walked)
            monkeypatch.setattr(cycles, "backend_of", lambda connection, record=record: record)
            written.clear()
            sa.event.listen(engine, "after_cursor_execute", count)
            steps: list[int] = []
            tables, convergence = cycles.solve_components(connection, graph_id, seats, steps.append)
            sa.event.remove(engine, "after_cursor_execute", count)
            solved[walked] = cycles.root_of(connection, tables), list(written)
            tables.drop(connection)
            assert convergence.passes == convergence.components == len(parts)
            assert steps == [len(part.spans) for part in parts]  # progress as each component is done, not once a run
    assert len(parts) == clock_ticks(12) and all(part.cyclic for part in parts)
    (by_layer, layer_statements), (by_walk, walks) = solved[False], solved[True]
    assert len(layer_statements) == len(kinds) < sum(len(part.spans) for part in parts)
    # layers valued together read their edges by depth and leave out the rows no statement below reads again
    assert any("FROM cyc_by_depth" in statement and "until <=" in statement for statement in layer_statements)
    assert len(walks) == 1 and "INSERT INTO cyc_new" in walks[0]
    assert by_walk.keys() == by_layer.keys() == {0, 1}
    assert all(abs(by_walk[seat] - by_layer[seat]) <= 1e-12 for seat in by_layer)


def _two_loops(into_the_deeper: int) -> Iterator[Row]:
    """Two cyclic components, layers 0..1 and 2..3; the first's node 0 moves into the second at node
    ``into_the_deeper`` (2: its anchor, 3: a node below it)."""
    yield CyclicLayers(0, 1)
    yield Node(0, "a", 0, DECISION, "a")
    yield Edge(0, 1, MOVE, "go")
    yield Edge(0, into_the_deeper, MOVE, "on")
    yield Node(1, "a roll", 1, CHANCE, "a roll", denom=3)
    yield Edge(1, 0, ROLL, "back", weight=1)
    yield Edge(1, 5, ROLL, "lose", weight=2)
    yield CyclicLayers(2, 3)
    yield Node(2, "b", 2, DECISION, "b")
    yield Edge(2, 3, MOVE, "go")
    yield Edge(2, 5, MOVE, "stop")
    yield Node(3, "b roll", 3, CHANCE, "b roll", denom=4)
    yield Edge(3, 2, ROLL, "back", weight=3)
    yield Edge(3, 4, ROLL, "win", weight=1)
    yield Node(4, "win", 4, TERMINAL, "win", payoff=1.0)
    yield Node(5, "lose", 4, TERMINAL, "lose", payoff=0.25)


@pytest.mark.parametrize("window", [1, 4])
def test_on_duckdb_a_window_walked_in_one_statement_gives_the_values_moves_and_passes_of_a_statement_a_depth(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int) -> None:
    """Where a recursive query may group its steps' rows (DuckDB), the optimum's pass over a window of components is
    one statement (``store/solve/cycle_walk.py``) where it was a statement a depth and kind of node: every node's
    value and move, and the Newton passes, are the same; a match (fixed moves) keeps its statements."""
    import dataclasses

    from dicegraph.store.backends import backend_of
    from dicegraph.store.db import open_database

    monkeypatch.setattr(cycles, "GROUPED", window)
    engine = open_database(f"duckdb:///{tmp_path / 'pig.duckdb'}", create=True)
    graph_id = build_graph(engine, get_game("pig"), {"target": 20, "holds": (4,)}).graph_id
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: statements.append(statement))
    solved = {}
    with engine.connect() as connection:
        assert backend_of(connection).grouped_recursion
        for walked in (False, True):
            record = dataclasses.replace(backend_of(connection), grouped_recursion=walked)
            monkeypatch.setattr(cycles, "backend_of", lambda connection, record=record: record)
            statements.clear()
            tables, convergence = cycles.solve_components(connection, graph_id, [Seat.maximising()])
            values = dict(connection.execute(cycles.values_of(tables)).all())
            moves = dict(connection.execute(cycles.moves_of(tables)).all())
            tables.drop(connection)
            walks = sum(statement.startswith("WITH RECURSIVE walk") for statement in statements)
            layer_statements = sum(statement.startswith(("INSERT INTO cyc_term", "INSERT INTO cyc_new"))
                           and ".kind =" in statement and ".dst" in statement for statement in statements)
            passes = sum(statement.startswith("SELECT cyc_new.node_id") for statement in statements)  # T(x) read
            solved[walked] = values, moves, convergence, walks, layer_statements, passes
    engine.dispose()
    (layered, layered_moves, by_layer, none, layer_statements, passes), (walked, walked_moves, by_walk, walks, left, same) = (
        solved[False], solved[True])
    assert none == 0 and layer_statements > 2 * passes and left == 0
    assert walks == passes == same > 1
    assert by_walk.passes == by_layer.passes and by_walk.components == by_layer.components
    assert walked.keys() == layered.keys() and len(layered) > 1000
    assert all(abs(walked[node_id] - value) <= 1e-12 * max(1.0, abs(value)) for node_id, value in layered.items())
    assert walked_moves == layered_moves


@pytest.mark.parametrize("into_the_deeper", [2, 3])
def test_components_go_together_only_where_their_edges_meet_at_anchors(tmp_path: Path, into_the_deeper: int) -> None:
    from dicegraph.store.db import open_database

    class Loops:
        name, title, summary, version, objective, outcome, params = "loops", "Loops", "loops", 1, "max", "payoff", ()

        def agents(self, params):  # noqa: ANN001, ANN201
            return ()

        def build(self, params):  # noqa: ANN001, ANN201
            return _two_loops(into_the_deeper)

    loops = GameSpec.declared_by(Loops(), origin="a test")
    solved = {}
    for url in (f"sqlite:///{tmp_path / 'loops.db'}", f"duckdb:///{tmp_path / 'loops.duckdb'}"):
        engine = open_database(url, create=True)
        graph_id = build_graph(engine, loops, {}).graph_id
        with engine.begin() as connection:
            runs = cycles._runs(connection, graph_id, cycles.components(connection, graph_id))
            solved[engine.dialect.name] = stored_values(connection, solve(connection, graph_id)), runs
    (on_sqlite, alone), (on_duckdb, grouped) = solved["sqlite"], solved["duckdb"]
    assert [len(group) for group in alone] == [1, 1]
    assert [len(group) for group in grouped] == ([2] if into_the_deeper == 2 else [1, 1])
    assert on_sqlite.keys() == on_duckdb.keys() == {"a", "b"}
    assert all(abs(on_sqlite[k] - on_duckdb[k]) <= 1e-12 for k in on_sqlite)
    assert on_sqlite["a"] == on_sqlite["b"] == pytest.approx(1.0)  # b's loop ends in a win; a moves on to it


def _rows(back_from_layer: int, declare: bool, sign: int = 1) -> Iterator[Row]:
    if declare:
        yield CyclicLayers(0, 1)
    yield Node(0, "start", 0, DECISION, "start")
    yield Edge(0, 1, MOVE, "go")
    yield Edge(0, 2, MOVE, "stop", sign=sign, reward=1.0 if sign < 0 else 0.0)
    yield Node(1, "roll", 1, CHANCE, "roll", denom=2)
    yield Edge(1, 0 if back_from_layer == 1 else 2, ROLL, "back", weight=1)
    yield Edge(1, 2, ROLL, "end", weight=1)
    yield Node(2, "end", 2, TERMINAL, "end", payoff=1.0)


def test_edges_back_and_passes_need_a_declared_cyclic_component(engine: sa.Engine) -> None:
    class Tiny:
        name, title, summary, version, objective, outcome, params = "tiny", "Tiny", "tiny", 1, "max", "payoff", ()
        rows = None

        def agents(self, params):  # noqa: ANN001, ANN201
            return ()

        def build(self, params):  # noqa: ANN001, ANN201
            return self.rows

    declared = Tiny()
    tiny = GameSpec.declared_by(declared, origin="a test")  # its build reads declared.rows when it is called
    declared.rows = _rows(back_from_layer=1, declare=False)
    with pytest.raises(InvalidGraph, match="back to the first layer of their cyclic component"):
        build_graph(engine, tiny, {})
    declared.rows = _rows(back_from_layer=2, declare=False, sign=-1)
    with pytest.raises(InvalidGraph, match="declare the layers with CyclicLayers"):
        build_graph(engine, tiny, {}, replace=True)
    declared.rows = _rows(back_from_layer=1, declare=True)
    graph_id = build_graph(engine, tiny, {}, replace=True).graph_id
    with engine.begin() as connection:
        policy_id = solve(connection, graph_id)
        assert stored_values(connection, policy_id) == {"start": 1.0}


def test_report_gives_the_matches_exactly(runner, tmp_path) -> None:  # noqa: ANN001
    from dicegraph.cli import main

    target = 10
    db = f"sqlite:///{tmp_path / 'pig.db'}"
    result = runner.invoke(main, ["--db", db, "report", "pig", "-p", f"target={target}", "-p", "holds=4", "-n", "4000",
                                  "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    _, best = pig_exact.optimum(target)
    seats = {"optimal": best.__getitem__, "hold-at-4": pig.hold_at(4)}
    assert close(report["p_first_wins"], pig_exact.evaluate(target, best.__getitem__, best.__getitem__)[0, (0, 0, 0)])
    assert {(m["first"], m["second"]) for m in report["matches"]} == {("optimal", "hold-at-4"), ("hold-at-4", "optimal")}
    for match in report["matches"]:
        exact = pig_exact.evaluate(target, seats[match["first"]], seats[match["second"]])[0, (0, 0, 0)]
        assert close(match["p_first_wins"], exact), match
        assert match["monte_carlo"]["games"] == 4000 and abs(match["monte_carlo"]["z"]) < 4
    assert report["published"] is None and report["convergence"]["residual"] <= 1e-12
    text = runner.invoke(main, ["--db", db, "report", "pig", "-p", f"target={target}", "-p", "holds=4"])
    assert f"{report['p_first_wins']:.10f}" in text.output


def test_numpy_reference_reproduces_neller_and_presser() -> None:
    """The in-memory reference (tests/pig_numpy.py) equals the exact rationals at a small target and gives
    Neller and Presser's 0.5306 (UMAP Journal 2004) for the race to 100; the SQL solve of that race is timed
    and compared with it in tests/bench/bench_pig.py."""
    from tests import pig_numpy

    win, _ = pig_numpy.solve(9)
    exact, _ = pig_exact.optimum(9)
    assert all(close(float(win[p]), v) for p, v in exact.items())
    win, most = pig_numpy.solve(100)
    assert round(float(win[0, 0, 0]), 4) == pig.PUBLISHED_P_FIRST_WINS[100]
    assert most <= 5


def test_monte_carlo_of_whole_matches_agrees_with_the_exact_numbers() -> None:
    """Games played from the rules (pig.play_matches), optimal against hold-at-4, within 4 standard errors."""
    import numpy as np

    target, games = 10, 40_000
    params = {"target": target, "holds": (4,)}
    _, best = pig_exact.optimum(target)
    optimal = pig.hold_table(params, {key(p): move for p, move in best.items()})
    agent = pig.hold_table(params, "hold-at-4")
    for first, second, play_first, play_second in ((optimal, agent, best.__getitem__, pig.hold_at(4)),
                                                   (agent, optimal, pig.hold_at(4), best.__getitem__)):
        wins = pig.play_matches(params, first, second, games, np.random.default_rng(3))
        exact = float(pig_exact.evaluate(target, play_first, play_second)[0, (0, 0, 0)])
        assert abs(wins.mean() - exact) < 4 * wins.std(ddof=1) / np.sqrt(games)


def test_solve_prints_how_the_cycles_converged(runner, tmp_path) -> None:  # noqa: ANN001
    from dicegraph.cli import main

    db = f"sqlite:///{tmp_path / 'pig.db'}"
    assert runner.invoke(main, ["--db", db, "build", "pig", "-p", "target=6"]).exit_code == 0
    printed = runner.invoke(main, ["--db", db, "solve", "pig", "-p", "target=6"])
    assert printed.exit_code == 0 and "cyclic components by Newton's method" in printed.stdout
    result = json.loads(runner.invoke(main, ["--db", db, "solve", "pig", "-p", "target=6", "--json"]).stdout)
    assert result["convergence"]["cyclic_components"] == clock_ticks(6)
    assert result["convergence"]["residual"] <= 1e-12


def test_viewing_a_graph_with_cycles(runner, tmp_path) -> None:  # noqa: ANN001
    """show values a move that hands the turn over as 1 - the opponent's value; propagate says why it cannot."""
    from dicegraph.cli import main

    db = f"sqlite:///{tmp_path / 'pig.db'}"
    assert runner.invoke(main, ["--db", db, "report", "pig", "-p", "target=6", "-n", "0"]).exit_code == 0
    shown = json.loads(runner.invoke(main, ["--db", db, "show", "pig", "2-0 +0", "-p", "target=6", "--json"]).stdout)
    hold = next(e for e in shown["edges"] if e["label"] == "hold")
    exact, _ = pig_exact.optimum(6)
    assert close(hold["values"]["optimal"], 1 - exact[0, 2, 0])
    refused = runner.invoke(main, ["--db", db, "propagate", "pig", "-p", "target=6"])
    assert refused.exit_code == 1 and "has cycles" in refused.stderr


def test_report_draws_the_hold_boundary(runner, tmp_path) -> None:  # noqa: ANN001
    """report --diagrams draws the optimum's hold boundary as a PNG heat map (matplotlib, the png extra)."""
    from dicegraph.cli import main

    db = f"sqlite:///{tmp_path / 'pig.db'}"
    result = runner.invoke(main, ["--db", db, "report", "pig", "-p", "target=12", "-n", "0", "--diagrams",
                                  str(tmp_path / "charts"), "--json"])
    assert result.exit_code == 0, result.output
    drawn = json.loads(result.stdout)["diagrams"]
    assert [Path(d["file"]).name for d in drawn] == ["pig-hold-boundary.png"]
    assert Path(drawn[0]["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
