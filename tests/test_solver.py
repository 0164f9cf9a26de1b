"""The SQL solver and propagation against an exact recursion over the builder's rows."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from dicegraph.graphs.spec import GameSpec
from dicegraph.graphs import GAMES, get_game, synthetic
from dicegraph.graphs import check
from dicegraph.graphs.check import checker_for
from dicegraph.graphs.errors import InvalidGraph
from dicegraph.graphs.protocol import Edge, EdgeColumns, Node, one_by_one, resolve_params
from dicegraph.store import catalog
from dicegraph.store.catalog import find_policy
from dicegraph.store.db import open_database
from dicegraph.store.load import BATCH_ROWS, build_graph
from dicegraph.store.schema import choice, edge, graph, node, policy, value
from dicegraph.store.solve.layers import evaluate, evaluate_all, solve

SMALL = {"layers": 6, "width": 7, "fanout": 3, "seed": 11}


def stand_in_game(name: str, build: Callable[[], Iterable[Node | Edge]], agents: tuple[str, ...] = ()) -> GameSpec:
    """Return a minimal game without parameters whose build streams ``build()``."""
    return GameSpec.declared_by(SimpleNamespace(name=name, title=name, summary=name, version=1, objective="max",
                                                outcome="payoff", params=(), agents=lambda params: agents,
                                                build=lambda params: iter(build())), origin="a test")


def exact_values(rows: list, objective: str | None) -> dict[int, Fraction]:
    """Node values from the rows alone: best move for ``objective``, else the ``first`` agent's move."""
    nodes = {row.id: row for row in rows if isinstance(row, Node)}
    out: dict[int, list[Edge]] = defaultdict(list)
    for row in rows:
        if isinstance(row, Edge):
            out[row.src].append(row)
    values: dict[int, Fraction] = {}
    for node_id in sorted(nodes, key=lambda n: -nodes[n].layer):
        here = nodes[node_id]
        worth = [Fraction(e.reward) + values[e.dst] for e in out[node_id]]
        if here.kind == "terminal":
            values[node_id] = Fraction(here.payoff)
        elif here.kind == "chance":
            values[node_id] = sum(e.weight * w for e, w in zip(out[node_id], worth)) / here.denom
        elif objective is None:
            values[node_id] = next(w for e, w in zip(out[node_id], worth) if "first" in e.chosen_by)
        else:
            values[node_id] = max(worth) if objective == "max" else min(worth)
    return values


@pytest.mark.parametrize("objective", ["max", "min", None])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_node_value_is_exact(engine: sa.Engine, objective: str | None, seed: int) -> None:
    params = {**SMALL, "seed": seed}
    rows = list(synthetic.build(params))
    expected = exact_values(rows, objective)
    graph_id = build_graph(engine, get_game("synthetic"), params).graph_id
    with engine.begin() as connection:
        if objective is None:
            policy_id = find_policy(connection, graph_id, "first").id
            evaluate(connection, policy_id)
        else:
            policy_id = solve(connection, graph_id, objective, f"best-{objective}")
        stored = dict(connection.execute(sa.select(value.c.node_id, value.c.value).where(value.c.policy_id == policy_id)).all())
        reach = dict(connection.execute(sa.select(value.c.node_id, value.c.reach).where(value.c.policy_id == policy_id)).all())
    assert stored.keys() == expected.keys()
    for node_id, exact in expected.items():
        assert math.isclose(stored[node_id], float(exact), rel_tol=1e-12, abs_tol=1e-12)
    terminals = [row.id for row in rows if isinstance(row, Node) and row.kind == "terminal"]
    assert math.isclose(sum(reach[t] for t in terminals), 1.0, rel_tol=1e-12)


def test_reach_follows_the_policy_exactly(engine: sa.Engine) -> None:
    rows = list(synthetic.build(SMALL))
    nodes = {row.id: row for row in rows if isinstance(row, Node)}
    edges = [row for row in rows if isinstance(row, Edge)]
    graph_id = build_graph(engine, get_game("synthetic"), SMALL).graph_id
    with engine.begin() as connection:
        policy_id = solve(connection, graph_id, "max")
        taken = set(connection.execute(sa.select(choice.c.edge_id).where(choice.c.policy_id == policy_id)).scalars())
        stored = dict(connection.execute(sa.select(value.c.node_id, value.c.reach).where(value.c.policy_id == policy_id)).all())
        first_id = connection.execute(sa.text("SELECT MIN(id) FROM edge WHERE graph_id = :g"), {"g": graph_id}).scalar()
    reach: defaultdict[int, Fraction] = defaultdict(Fraction, {0: Fraction(1)})
    for edge_id, row in enumerate(edges, first_id):  # streamed layer by layer: sources are final
        if row.kind == "roll":
            reach[row.dst] += reach[row.src] * row.weight / nodes[row.src].denom
        elif edge_id in taken:
            reach[row.dst] += reach[row.src]
    assert len(taken) == sum(1 for n in nodes.values() if n.kind == "decision")
    for node_id in nodes:
        assert math.isclose(stored[node_id], float(reach[node_id]), rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_agents_evaluated_together_equal_each_evaluated_alone(backend: str, tmp_path: Path) -> None:
    """A report's agents go through the layers in one pass, the policy as a key column: every node's value and
    reach under each of Jackpot's six agents as when each is evaluated alone."""
    found = []
    for together in (False, True):
        engine = open_database(f"{backend}:///{tmp_path / f'{together}.db'}", create=True)
        graph_id = build_graph(engine, get_game("jackpot"), {"cells": 5}).graph_id
        with engine.begin() as connection:
            agents = list(connection.execute(sa.select(policy.c.id).where(policy.c.graph_id == graph_id)).scalars())
            if together:
                evaluate_all(connection, graph_id, agents)
            else:
                for policy_id in agents:
                    evaluate(connection, policy_id)
            found.append({(policy_id, node_id): (worth, reach) for policy_id, node_id, worth, reach in connection.execute(
                sa.select(value.c.policy_id, value.c.node_id, value.c.value, value.c.reach))})
        engine.dispose()
    alone, together_ = found
    assert len({policy_id for policy_id, _ in alone}) == 6 and alone.keys() == together_.keys()
    for key, (worth, reach) in alone.items():
        assert math.isclose(together_[key][0], worth, rel_tol=1e-12, abs_tol=1e-15), key
        assert math.isclose(together_[key][1], reach, rel_tol=1e-12, abs_tol=1e-15), key


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_node_ids_finds_every_key_the_graph_holds_in_statements_of_any_size(backend: str, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    engine = open_database(f"{backend}:///{tmp_path / 'keys.db'}", create=True)
    graph_id = build_graph(engine, get_game("synthetic"), SMALL).graph_id
    with engine.connect() as connection:
        stored = dict(connection.execute(sa.select(node.c.key, node.c.id).where(node.c.graph_id == graph_id)).all())
        monkeypatch.setattr(catalog, "KEYS_A_STATEMENT", 3)  # on SQLite several statements, the last one short
        assert len(stored) > 7
        asked = [*stored, "no such key", next(iter(stored))]
        assert catalog.node_ids(connection, graph_id, asked) == stored
        assert catalog.node_ids(connection, graph_id, []) == {}
    engine.dispose()


def test_ties_go_to_the_first_streamed_move(engine: sa.Engine) -> None:
    """A decision between two moves of equal worth takes the first one."""

    rows = [
        Node(0, "root", 0, "decision", ""),
        Edge(0, 2, "move", "second-id-but-first-streamed"),
        Edge(0, 1, "move", "other"),
        Node(1, "a", 1, "terminal", "", payoff=0.3),
        Node(2, "b", 1, "terminal", "", payoff=0.1 + 0.2),  # 0.30000000000000004
    ]
    graph_id = build_graph(engine, stand_in_game("tie", lambda: rows), {}).graph_id
    with engine.begin() as connection:
        policy_id = solve(connection, graph_id, "max")
        picked = connection.execute(sa.select(choice.c.edge_id).where(choice.c.policy_id == policy_id)).scalar_one()
        first = connection.execute(sa.text("SELECT MIN(id) FROM edge WHERE graph_id = :g"), {"g": graph_id}).scalar()
    assert picked == first


STREAMED_EDGES = 2_000_000  # a default build larger than this is checked on its small parameters here


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_streams_a_valid_graph(name: str) -> None:
    """Conformance: each game's default build passes the model's checks without a database.

    A default over :data:`STREAMED_EDGES` edges (Yahtzee with bonuses: 17 million,
    7 minutes here) is checked on the game's small parameters instead; the
    loader runs the same checks on every build, tests/bench/bench_yahtzee.py's included.
    """
    game = get_game(name)
    params = resolve_params(game, {})
    estimate = game.estimated_edges
    if estimate is not None and estimate(params) > STREAMED_EDGES:
        params = params | dict(game.small_params)  # type: ignore[attr-defined]
    layers, totals = checker_for(game, params).check(game.build(params))
    assert totals["nodes"] > 0
    assert layers[0].nodes == 1


@pytest.mark.parametrize("name", ["pig", "5000-race", "cant-stop-board", "shut-the-box"])
def test_edge_blocks_are_checked_as_the_same_edges_one_by_one(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The expander streams each layer's edges as one block; the checker's per-layer counts and totals are
    those of the same edges streamed one by one (checked seven at a time, so that a layer spans blocks), and
    those the rows themselves count."""
    monkeypatch.setattr(check, "CHECKED_AT_ONCE", 7)
    game = get_game(name)
    params = resolve_params(game, {}) | dict(game.small_params or {})
    rows = list(game.build(params))
    assert any(isinstance(row, EdgeColumns) for row in rows)
    single = list(one_by_one(rows))
    by_block = checker_for(game, params).check(rows)
    assert by_block == checker_for(game, params).check(single)
    layer_of = {row.id: row.layer for row in single if isinstance(row, Node)}
    edges = [row for row in single if isinstance(row, Edge)]
    counted: dict[int, list[int]] = defaultdict(lambda: [0, 0, len(edges), -1])  # rolls, moves, first id, last id
    for edge_id, row in enumerate(edges):
        counts = counted[layer_of[row.src]]
        counts[row.kind == "move"] += 1
        counts[2], counts[3] = min(counts[2], edge_id), edge_id
    layers, totals = by_block
    assert {stats.layer: [stats.rolls, stats.moves, stats.first_edge, stats.last_edge]
            for stats in layers if stats.first_edge is not None} == counted
    assert totals["edges"] == len(edges) and totals["nodes"] == len(layer_of)


def test_failed_build_leaves_the_database_as_it_was(engine: sa.Engine) -> None:
    build_graph(engine, get_game("jackpot"), {"cells": 3})

    big = {**SMALL, "width": 2 * BATCH_ROWS // SMALL["fanout"]}  # enough edges to flush batches before the end

    def interrupted() -> Iterable[Node | Edge]:
        yield from synthetic.build(big)
        raise KeyboardInterrupt  # as if the user pressed Ctrl-C at the very end

    def snapshot() -> tuple:
        with engine.connect() as connection:
            tables = (graph, node, edge, choice, value)
            return tuple(connection.execute(sa.select(sa.func.count()).select_from(t)).scalar() for t in tables)

    before = snapshot()
    with pytest.raises(KeyboardInterrupt):
        build_graph(engine, stand_in_game("broken", interrupted, ("first",)), {})
    assert snapshot() == before


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([Node(0, "r", 0, "chance", "", denom=3), Node(1, "t", 1, "terminal", "", payoff=0.0), Edge(0, 1, "roll", "", weight=2)],
         "add up to 2, not its denom 3"),
        ([Node(0, "r", 1, "decision", ""), Node(1, "t", 0, "terminal", "", payoff=0.0), Edge(0, 1, "move", "")],
         "edges must go to higher layers"),
        ([Node(0, "r", 0, "decision", ""), Node(1, "t", 1, "terminal", "", payoff=0.0), Edge(0, 1, "roll", "", weight=1)],
         "rolls of positive weight leave chance nodes"),
        ([Node(0, "r", 0, "decision", ""), Node(1, "t", 1, "terminal", "", payoff=0.0)], "has no move"),
    ],
)
def test_invalid_graphs_are_refused(engine: sa.Engine, rows: list, message: str) -> None:
    with pytest.raises(InvalidGraph, match=message):
        build_graph(engine, stand_in_game("bad", lambda: rows), {})
    with engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(graph)).scalar() == 0
