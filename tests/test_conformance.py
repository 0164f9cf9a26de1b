"""One suite for every registered game: a game is tested the moment it is registered.

Each game is checked on its ``small_params`` (its defaults when it names
none): metadata valid, two builds identical, the streaming rules, the SQL
solve and every agent's SQL evaluation equal to an exact recursion in
fractions (over the rules for a game written at the rules level, over the
built rows otherwise; by policy iteration and exact linear solves where the
graph has cycles), every agent deciding at every decision, Monte Carlo
within 4 standard errors of the exact value, DuckDB equal to SQLite.

A game whose turn is stored once (its ``turn`` hook, ``store/solve/turns.py``: School,
Yahtzee) is solved by the turn-joined solve instead: its optimum on the last
layer of turn states is checked against an exact recursion over the built rows
(the turn played from each state, its ends worth the state's moves), and its
whole games in the game's own tests; its agents choose at every decision of
the turn. When its turn states loop (a race, ``store/solve/turn_cycles.py``), every
state's optimum is checked against policy iteration in fractions on the graph
with the turn copied into each state, on SQLite and DuckDB; when its turn gives
horizons, what lies past a state's horizon must be reached only through a win
at once (the solve leaves it out).

Every tool is then checked on every game: ``report`` (text and JSON, and the
Python API's, which builds and solves once), ``solve``, ``export`` (DOT and
PNG), the advisor where declared, and every explorer page. School's and
Yahtzee's small parameters play a few of their combinations and boxes (the
others used from the start), their whole games in their own tests.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import functools
from collections.abc import Callable

import numpy as np
import pytest
import sqlalchemy as sa

from dicegraph.graphs import GAMES
from dicegraph.graphs.check import checker_for
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.montecarlo import can_simulate, simulate
from dicegraph.graphs.protocol import (CHANCE, DECISION, TERMINAL, CyclicLayers, Edge, Game, Node, Param, Row, one_by_one, resolve_params,
                                       value_text)
from dicegraph.graphs.exact import exact_value, exact_values
from dicegraph.graphs.expand import expand
from dicegraph.graphs.playout import rules_simulator
from dicegraph.graphs.repeating import SEPARATOR
from dicegraph.store.solve import cycles, parallel, readers, turn_cycles, turns
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from dicegraph.store.solve.entry import ensure_solved
from dicegraph.store.solve.layers import solve
from dicegraph.store.schema import node, policy, turn_policy, value
from dicegraph.graphs.exact import RHS, solve_sparse

MONTE_CARLO_GAMES = 40_000
RULES_GAMES = 2_000  # games played one at a time from the rules (graphs/playout.py), for each agent
RULES_STATES = 3  # last turn states of a turn game checked from its rules (a few seconds each in fractions)


def small_params(game: Game) -> dict[str, Any]:
    """Return the game's parameters for exhaustive checks: its ``small_params`` over its defaults."""
    return resolve_params(game, {}) | dict(game.small_params or {})


@functools.cache
def built_rows(game: Game) -> list[Row]:
    """Return the rows of the game built on its small parameters (built once per test run)."""
    return list(one_by_one(game.build(small_params(game))))


def games(condition: Any = lambda game: True) -> list[Any]:
    """Return pytest parameters, one per registered game that meets ``condition``, named after it."""
    return [pytest.param(game, id=name) for name, game in sorted(GAMES.items()) if condition(game)]


SOLVED_BY_THE_STORE = games(lambda game: not game.repeating)


def loops_between_states(game: Game) -> bool:
    """Return whether the game's turn is stored once and its turn states loop (cyclic layers below the turn)."""
    return game.repeating and any(isinstance(row, CyclicLayers) for row in built_rows(game))


TURN_GAMES = games(lambda game: game.repeating and not loops_between_states(game))
CYCLIC_TURN_GAMES = games(loops_between_states)


@pytest.mark.parametrize("game", games())
def test_metadata(game: Game) -> None:
    assert GAMES[game.name] is game
    assert game.objective in ("max", "min")
    assert game.title and game.summary and game.outcome
    assert isinstance(game.version, int) and game.version >= 1
    names = [param.name for param in game.params]
    assert len(set(names)) == len(names)
    for param in game.params:
        assert isinstance(param, Param) and param.help
        assert param.check(param.default), f"{param.name}'s default fails its own check"
        assert param.parse(value_text(param.default)) == param.default, f"{param.name}'s default does not read back"
    defaults = resolve_params(game, {})
    small = small_params(game)
    resolve_params(game, {name: value_text(v) for name, v in small.items()})  # passes check_params
    agents = game.agents(defaults)
    assert len(set(agents)) == len(agents), "an agent is named twice"
    assert not set(agents) & {"optimal", *game.solves}, "an agent has the name of a solve"


@pytest.mark.parametrize("game", games())
def test_two_builds_are_identical_and_stream_by_the_rules(game: Game) -> None:
    params = small_params(game)
    rows = built_rows(game)
    assert rows == list(one_by_one(game.build(params)))
    layers, totals = checker_for(game, params).check(rows)
    first_node = next(row for row in rows if isinstance(row, Node))
    assert layers[0].nodes == 1 and first_node.id == 0  # the root, alone in the lowest layer
    assert totals["nodes"] == sum(1 for row in rows if isinstance(row, Node))


@pytest.mark.parametrize("game", games(lambda game: game.first_guess is not None))
def test_first_guesses_name_positions_of_components_solved_before(game: Game) -> None:
    params = small_params(game)
    rows = built_rows(game)
    layer_of = {row.key: row.layer for row in rows if isinstance(row, Node)}
    components = [row for row in rows if isinstance(row, CyclicLayers)]
    anchors = [(row.key, part) for part in components for row in rows
               if isinstance(row, Node) and row.layer == part.first and row.kind != TERMINAL]
    named = {key: cycles.guess_weights(game.first_guess(params, key)) for key, _ in anchors}
    assert any(named.values())
    for key, part in anchors:
        for guessed in named[key]:  # solved before: in a component deeper down, as the solver goes
            assert layer_of[guessed] > part.last, (key, guessed)


def nodes_and_edges(rows: Iterable[Row]) -> tuple[dict[int, Node], dict[int, list[Edge]]]:
    """Return the built rows as node id -> node and node id -> the edges leaving it, in streaming order."""
    rows = list(rows)
    out: dict[int, list[Edge]] = {}
    for row in rows:
        if isinstance(row, Edge):
            out.setdefault(row.src, []).append(row)
    return {row.id: row for row in rows if isinstance(row, Node)}, out


def exact_by_rows(rows: Iterable[Row], objective: str, agent: str | None = None) -> Fraction:
    """Return the root's exact value by recursion over built rows, in fractions (deepest layer first)."""
    if any(isinstance(row, CyclicLayers) for row in rows):
        return exact_cyclic_by_rows(rows, objective, agent)
    nodes, out = nodes_and_edges(rows)
    worth: dict[int, Fraction] = {}
    best = max if objective == "max" else min
    for row in sorted(nodes.values(), key=lambda row: -row.layer):
        edges = out.get(row.id, [])
        if row.kind == TERMINAL:
            worth[row.id] = Fraction(row.payoff)
        elif row.kind == CHANCE:
            worth[row.id] = sum((Fraction(e.weight, row.denom) * (Fraction(e.reward) + worth[e.dst]) for e in edges),
                                Fraction(0))
        else:
            taken = [e for e in edges if agent in e.chosen_by] if agent else edges
            worth[row.id] = best(Fraction(e.reward) + worth[e.dst] for e in taken)
    return worth[0]


def exact_cyclic_by_rows(rows: Iterable[Row], objective: str, agent: str | None = None) -> Fraction:
    """Return the root's exact value in a graph with cycles, from the built rows, in fractions (see :func:`exact_cyclic_values`)."""
    return exact_cyclic_values(rows, objective, agent)[0]


def exact_cyclic_values(rows: Iterable[Row], objective: str, agent: str | None = None) -> dict[int, Fraction]:
    """Return every node's exact value in a graph with cycles, from the built rows, in fractions.

    A policy's values solve a linear system (each edge worth ``reward + sign *
    value(dst)``); the optimum comes from policy iteration, certified by the
    Bellman equations holding exactly.
    """
    assert objective == "max"
    rows = list(rows)
    nodes, out = nodes_and_edges(rows)
    playing = sorted((row for row in nodes.values() if row.kind != TERMINAL), key=lambda row: (-row.layer, row.id))

    def values(moves: dict[int, Edge]) -> dict[int, Fraction]:
        system = {}
        for row in playing:
            equation = {row.id: Fraction(1), RHS: Fraction(0)}
            taken = out[row.id] if row.kind == CHANCE else [moves[row.id]]
            for e in taken:
                probability = Fraction(e.weight, row.denom) if row.kind == CHANCE else Fraction(1)
                equation[RHS] += probability * Fraction(e.reward)
                if nodes[e.dst].kind == TERMINAL:
                    equation[RHS] += probability * e.sign * Fraction(nodes[e.dst].payoff)
                else:
                    equation[e.dst] = equation.get(e.dst, Fraction(0)) - probability * e.sign
            system[row.id] = equation
        solved = solve_sparse(system, [row.id for row in playing])
        return solved | {row.id: Fraction(row.payoff) for row in nodes.values() if row.kind == TERMINAL}

    def worth(e: Edge, found: dict[int, Fraction]) -> Fraction:
        return Fraction(e.reward) + e.sign * found[e.dst]

    decisions = [row.id for row in playing if row.kind == DECISION]
    if agent is not None:
        return values({n: next(e for e in out[n] if agent in e.chosen_by) for n in decisions})
    moves = {n: out[n][0] for n in decisions}
    for _ in range(100):
        found = values(moves)
        better = {n: max(out[n], key=lambda e: (worth(e, found), e is moves[n])) for n in decisions}
        if all(better[n] is moves[n] for n in decisions):
            assert all(worth(moves[n], found) == max(worth(e, found) for e in out[n]) for n in decisions)
            return found
        moves = better
    raise AssertionError("policy iteration did not settle")


BACKENDS = {"sqlite": "sqlite:///{}/game.db", "duckdb": "duckdb:///{}/game.duckdb"}


@functools.cache
def exact(game: Game, agent: str | None = None) -> Fraction:
    """Return the exact value of the game on its small parameters (optimal, or ``agent``'s), from its rules
    when it has them, else from its rows."""
    params = small_params(game)
    if game.rules is not None:
        return exact_value(game.rules(params), game.objective, agent, loops=game.loops)
    return exact_by_rows(built_rows(game), game.objective, agent)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Game, str], dict[tuple[str, str], float]]:
    """Return a function giving (policy, key) -> value of the game solved on a backend; each built once (on DuckDB, the optimum alone)."""
    done: dict[tuple[str, str], dict[tuple[str, str], float]] = {}

    def solved(game: Game, backend: str) -> dict[tuple[str, str], float]:
        if (game.name, backend) not in done:
            url = BACKENDS[backend].format(tmp_path_factory.mktemp(backend))
            engine = open_database(url, create=True)
            built = build_graph(engine, game, small_params(game))
            with engine.begin() as connection:
                if backend == "sqlite":  # every policy, to check against the recursion
                    ensure_solved(connection, built.graph_id, game)
                else:  # the optimum alone: test_backends.py compares every policy's report across backends
                    solve(connection, built.graph_id, game.objective, "optimal")
                query = (sa.select(policy.c.name, node.c.key, value.c.value)
                         .select_from(value.join(policy, policy.c.id == value.c.policy_id)
                                      .join(node, sa.and_(node.c.graph_id == policy.c.graph_id,
                                                          node.c.id == value.c.node_id)))
                         .where(policy.c.goal.is_(None)))
                done[game.name, backend] = {(name, key): v for name, key, v in connection.execute(query)}
            engine.dispose()
        return done[game.name, backend]

    return solved


@pytest.mark.parametrize("game", SOLVED_BY_THE_STORE)
def test_sql_solve_and_agents_equal_an_exact_recursion(game: Game, stored: Any) -> None:
    params = small_params(game)
    root = next(row.key for row in built_rows(game) if isinstance(row, Node))
    values = stored(game, "sqlite")
    for name in ["optimal", *game.agents(params)]:
        expected = exact(game, None if name == "optimal" else name)
        assert values[name, root] == pytest.approx(float(expected), rel=1e-12, abs=1e-12), name


@pytest.mark.parametrize("game", games())
def test_every_agent_decides_at_every_decision(game: Game) -> None:
    params = small_params(game)
    rows = built_rows(game)
    lowest = 0  # a turn game's agents choose in its turn
    if game.repeating:
        root = game.turn(params).root  # type: ignore[attr-defined]
        lowest = next(row.layer for row in rows if isinstance(row, Node) and row.key == root)
    decisions = {row.id for row in rows if isinstance(row, Node) and row.kind == DECISION and row.layer >= lowest}
    for agent in game.agents(params):
        chosen = [row.src for row in rows if isinstance(row, Edge) and agent in row.chosen_by]
        assert sorted(chosen) == sorted(decisions), agent


def same_graph(rows: Iterable[Row]) -> tuple[list[tuple], list[tuple], int]:
    """Return a graph's nodes and edges by key, sorted (ids and layers left out), and its cyclic components' count."""
    rows = list(one_by_one(rows))
    keys = {row.id: row.key for row in rows if isinstance(row, Node)}
    nodes = sorted((row.key, row.kind, row.label, row.denom, row.payoff) for row in rows if isinstance(row, Node))
    edges = sorted((keys[row.src], keys[row.dst], row.kind, row.label, row.weight, row.reward, row.chosen_by, row.sign)
                   for row in rows if isinstance(row, Edge))
    return nodes, edges, sum(isinstance(row, CyclicLayers) for row in rows)


@pytest.mark.parametrize("game", games(lambda game: game.rules is not None and not game.repeating))
def test_a_game_with_rules_builds_the_graph_its_rules_expand_to(game: Game) -> None:
    """A game may stream its graph by hand (Pig, for speed), but it must be the graph its rules describe."""
    params = small_params(game)
    assert game.agents(params) == tuple(game.rules(params).agents)
    expanded = list(one_by_one(expand(game.rules(params), players=game.players, loops=game.loops)))
    assert same_graph(built_rows(game)) == same_graph(expanded)


@pytest.mark.parametrize("game", games(lambda game: game.rules is not None and game.agents(small_params(game))))
def test_games_played_from_the_rules_agree_with_the_exact_values(game: Game) -> None:
    """The generic player (graphs/playout.py), independent of the game's own simulator where it has one (School's
    and Yahtzee's policies are stored decisions: their own tests play them from the rules)."""
    params = small_params(game)
    play = rules_simulator(game.rules)
    for agent in game.agents(params):
        results = np.array(play(params, agent)(RULES_GAMES, np.random.default_rng(11)))
        error = results.std() / np.sqrt(len(results))
        assert abs(results.mean() - float(exact(game, agent))) < 4 * max(error, 1e-12), agent


@pytest.mark.parametrize("game", games(lambda game: can_simulate(game) and not game.repeating))
def test_monte_carlo_within_four_standard_errors(game: Game) -> None:
    params = small_params(game)
    for agent in game.agents(params):
        estimate = simulate(game, params, agent, games=MONTE_CARLO_GAMES, seed=7)
        assert abs(estimate.z(float(exact(game, agent)))) < 4, agent


@pytest.mark.parametrize("game", SOLVED_BY_THE_STORE)
def test_duckdb_equals_sqlite(game: Game, stored: Any) -> None:
    """The optimal solve on DuckDB has SQLite's value at every node."""
    sqlite = {key: v for key, v in stored(game, "sqlite").items() if key[0] == "optimal"}
    duckdb = stored(game, "duckdb")
    assert sqlite.keys() == duckdb.keys()
    for key, expected in sqlite.items():
        assert duckdb[key] == pytest.approx(expected, rel=1e-12, abs=1e-12), key


def exact_last_turns(game: Game) -> dict[str, Fraction]:
    """Return, for each state of the last layer of turn states, its optimal value in fractions, from the built rows.

    The turn (the nodes from the turn's root on) is played from each state:
    an end is worth the reward of the state's move labelled like it plus the
    payoff of the terminal state that move reaches, and is missing when the
    state has no such move (a decision then goes without the moves to it).
    """
    params = small_params(game)
    structure = game.turn(params)  # type: ignore[attr-defined]
    rows = built_rows(game)
    nodes, out = nodes_and_edges(rows)
    root = next(row for row in nodes.values() if row.key == structure.root)
    end_of_label = {structure.end_label(row.key): row.key for row in nodes.values()
                    if row.layer >= root.layer and row.kind == TERMINAL}
    turn = sorted((row for row in nodes.values() if row.layer >= root.layer), key=lambda row: -row.layer)
    last = max(row.layer for row in nodes.values() if row.layer < root.layer and row.kind != TERMINAL)
    results = {}
    for state in (row for row in nodes.values() if row.layer == last and row.kind != TERMINAL):
        ends = {end_of_label[e.label]: Fraction(e.reward) + Fraction(nodes[e.dst].payoff) for e in out[state.id]}
        worth: dict[int, Fraction | None] = {}
        for row in turn:
            if row.kind == TERMINAL:
                worth[row.id] = ends.get(row.key)
            elif row.kind == CHANCE:
                worth[row.id] = sum((Fraction(e.weight, row.denom) * (Fraction(e.reward) + worth[e.dst])
                                     for e in out[row.id]), Fraction(0))
            else:
                open_moves = [Fraction(e.reward) + worth[e.dst] for e in out[row.id] if worth[e.dst] is not None]
                worth[row.id] = max(open_moves) if open_moves else None
        results[state.key] = worth[root.id]
    return results


@pytest.mark.parametrize("game", TURN_GAMES)
def test_turn_solve_of_the_last_states_equals_an_exact_recursion(game: Game, tmp_path_factory: pytest.TempPathFactory) -> None:
    params = small_params(game)
    exact = exact_last_turns(game)
    engine = open_database(f"sqlite:///{tmp_path_factory.mktemp('turns') / 'turns.db'}", create=True)
    built = build_graph(engine, game, params)
    with engine.begin() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
        policy_id = turns.solve_policy(connection, graph, "optimal", down_to=max(graph.layer_ids))
        for key, expected in exact.items():
            stored = readers.state_result(connection, built.graph_id, policy_id, key).value
            assert stored == pytest.approx(float(expected), rel=1e-12), key
        if game.rules is not None:  # and, for a few of them, from the game's rules (graphs/repeating.py)
            rules = game.rules(params)
            for key in sorted(exact)[::max(1, len(exact) // RULES_STATES)]:
                worth = exact_value(rules, game.objective, position=(rules.game.state_of(key), rules.root))
                stored = readers.state_result(connection, built.graph_id, policy_id, key).value
                assert stored == pytest.approx(float(worth), rel=1e-12), key
    assert len(exact) >= 5  # the last layer: a state at least for each of the five or more boxes in play


def _recorded_process_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Return the list to which each pool of worker processes that ``turns`` starts adds its first state layer
    (the pools run as they are)."""
    pools: list[int] = []
    spawning = turns.process_solvers  # (url, solver, spread, start), as turns calls it
    monkeypatch.setattr(turns, "process_solvers", lambda *setup: pools.append(setup[3]) or spawning(*setup))
    return pools


def _assert_stores_the_same(solved: tuple[dict, dict], alone: tuple[dict, dict], name: str) -> None:
    """Assert that ``solved``, a solve's (values, decisions) as stored, holds the decision bytes of one connection's
    solve ``alone`` and its values to 1e-12."""
    (values, decisions), (alone_values, alone_decisions) = solved, alone
    assert decisions == alone_decisions, name
    assert values.keys() == alone_values.keys(), name
    for key, expected in alone_values.items():
        assert values[key] == pytest.approx(expected, rel=1e-12), (name, key)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("game", TURN_GAMES)
def test_a_solve_spread_over_connections_stores_what_one_connection_stores(game: Game, backend: str,
                                                                          tmp_path_factory: pytest.TempPathFactory,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Committed layer by layer, a layer's batches go to two connections at once: threads, or on a SQLite file
    with more than a batch of states a worker, processes; each stores what one connection stores alone."""
    params = small_params(game)
    engine = open_database(BACKENDS[backend].format(tmp_path_factory.mktemp(backend)), create=True)
    built = build_graph(engine, game, params)
    in_processes = _recorded_process_pools(monkeypatch)
    spreads = [{"commit_layers": True, "workers": 2, "batch_states": 4}]  # processes on a SQLite file
    if backend == "sqlite":
        spreads.append({"commit_layers": True, "workers": 2, "batch_states": 10**6})  # threads: two batches a layer
    solved = []
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
        names = [declared.name for declared in graph.structure.policies]
        sizes = {layer: last - first + 1 for layer, (first, last) in graph.layer_ids.items()}
        top = max(layer for layer, size in sizes.items() if size > 8)  # the last layer of several batches a worker
        for options in [*spreads, {}]:  # the last solves afresh in one transaction
            connection.execute(sa.delete(turn_policy))
            connection.commit()
            ids = turns.solve_policies(connection, graph, names, down_to=top, **options)
            solved.append({name: (readers.stored_values(connection, built.graph_id, ids[name]),
                                  readers.stored_decisions(connection, built.graph_id, ids[name])) for name in names})
    engine.dispose()
    assert bool(in_processes) == (backend == "sqlite")
    *spread, alone = solved
    for name, (values, decisions) in alone.items():
        assert len(values) == sum(size for layer, size in sizes.items() if layer >= top)
        for other in spread:
            _assert_stores_the_same(other[name], (values, decisions), name)


@pytest.mark.parametrize("game", TURN_GAMES)
def test_worker_processes_read_each_layer_as_it_is_committed(game: Game, tmp_path: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """On a SQLite file, one pool of worker processes solves two layers of the optimum, the second reading the
    first once committed: what one connection stores alone."""
    params = small_params(game)
    engine = open_database(f"sqlite:///{tmp_path / 'game.db'}", create=True)
    built = build_graph(engine, game, params)
    pools = _recorded_process_pools(monkeypatch)
    solved = []
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
        top = max(graph.layer_ids)
        for options in ({"commit_layers": True, "workers": 2, "batch_states": 4}, {}):
            connection.execute(sa.delete(turn_policy))
            connection.commit()
            policy_id = turns.solve_policy(connection, graph, "optimal", down_to=top - 1, **options)
            solved.append((readers.stored_values(connection, built.graph_id, policy_id),
                           readers.stored_decisions(connection, built.graph_id, policy_id)))
    engine.dispose()
    assert pools == [top]
    _assert_stores_the_same(*solved, "optimal")


def test_dicegraph_workers_must_be_a_positive_whole_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.WORKERS_VARIABLE, "3")
    assert parallel.solve_workers() == 3
    for wrong in ("0", "two", "-1"):
        monkeypatch.setenv(parallel.WORKERS_VARIABLE, wrong)
        with pytest.raises(BadParameter, match="whole number from 1"):
            parallel.solve_workers()


def copied_turns(game: Game, params: dict[str, Any]) -> tuple[list[Row], dict[str, int]]:
    """Return the rows of the game with its turn copied into each turn state, and state key -> node id there.

    A state becomes a decision with one move, to its copy of the turn's root;
    each copied end a decision with one move, the state's move labelled like
    it (its reward and sign). Nothing of the store's is used.
    """
    structure = game.turn(params)  # type: ignore[attr-defined]
    rows = built_rows(game)
    nodes, out = nodes_and_edges(rows)
    root = next(row for row in nodes.values() if row.key == structure.root)
    states = [row for row in nodes.values() if row.layer < root.layer]
    turn = [row for row in nodes.values() if row.layer >= root.layer]
    ids: dict[tuple[int, int], int] = {}
    copied: list[Row] = []
    for row in states:
        ids[row.id, -1] = len(ids)
    for state in states:
        if state.kind == TERMINAL:
            continue
        for row in turn:
            ids[row.id, state.id] = len(ids)
    for state in states:
        copied.append(state._replace(id=ids[state.id, -1]))
        if state.kind == TERMINAL:
            continue
        copied.append(Edge(ids[state.id, -1], ids[root.id, state.id], "move", "play the turn"))
        by_label = {e.label: e for e in out[state.id]}
        for row in turn:
            me = ids[row.id, state.id]
            if row.kind == TERMINAL:
                move = by_label[structure.end_label(row.key)]
                copied.append(Node(me, f"{state.key}|{row.key}", row.layer, DECISION, row.label))
                copied.append(Edge(me, ids[move.dst, -1], "move", move.label, reward=move.reward, sign=move.sign))
                continue
            copied.append(row._replace(id=me, key=f"{state.key}|{row.key}"))
            copied.extend(e._replace(src=me, dst=ids[e.dst, state.id]) for e in out.get(row.id, []))
    return copied, {row.key: ids[row.id, -1] for row in states}


def has_horizons(game: Game) -> bool:
    """Return whether the game's turn gives its nodes a progress and its states a horizon (both are needed)."""
    if not game.repeating:
        return False
    structure = game.turn(small_params(game))  # type: ignore[attr-defined]
    assert (structure.progress is None) == (structure.horizon is None), "progress and horizon come together"
    return structure.progress is not None


@pytest.mark.parametrize("game", games(has_horizons))
def test_what_lies_past_a_states_horizon_is_reached_only_through_a_win_at_once(game: Game) -> None:
    """The promise a turn's horizons make (``TurnStructure``): from each state, a node short of its horizon is
    reached (the root is), a roll short of it leads only to nodes short of it, and a decision short of it that
    leads past it has a move to an end through which the state wins at once (a move of sign 1 to a terminal
    of the top payoff, which every player takes)."""
    params = small_params(game)
    structure = game.turn(params)  # type: ignore[attr-defined]
    nodes, out = nodes_and_edges(built_rows(game))
    root = next(row for row in nodes.values() if row.key == structure.root)
    states = [row for row in nodes.values() if row.layer < root.layer and row.kind != TERMINAL]
    top = max(row.payoff for row in nodes.values() if row.layer < root.layer and row.kind == TERMINAL)
    played = [row for row in nodes.values() if row.layer >= root.layer and row.kind != TERMINAL]
    progress = {row.id: structure.progress(row.key) for row in played}
    label_of_end = {row.id: structure.end_label(row.key) for row in nodes.values()
                    if row.layer >= root.layer and row.kind == TERMINAL}
    left_out = 0
    for state in states:
        horizon = structure.horizon(state.key)
        assert progress[root.id] < horizon, state.key
        winning = {e.label for e in out[state.id] if e.sign == 1 and nodes[e.dst].kind == TERMINAL
                   and nodes[e.dst].payoff >= top}
        for row in played:
            if progress[row.id] >= horizon:
                left_out += 1
                continue
            past = [e for e in out[row.id] if e.dst in progress and progress[e.dst] >= horizon]
            if past:
                assert row.kind == DECISION, (state.key, row.key)
                assert any(label_of_end.get(e.dst) in winning for e in out[row.id]), (state.key, row.key)
    assert left_out > 0  # the horizons leave something out on the small parameters


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("game", CYCLIC_TURN_GAMES)
def test_cyclic_turn_solve_equals_policy_iteration_on_the_copied_turns(game: Game, backend: str,
                                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    params = small_params(game)
    rows, state_ids = copied_turns(game, params)
    exact_values = exact_cyclic_values(rows, game.objective)
    engine = open_database(BACKENDS[backend].format(tmp_path_factory.mktemp(backend)), create=True)
    built = build_graph(engine, game, params)
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
        assert turn_cycles.has_cyclic_states(connection, graph)
        turn_cycles.ensure_race_solved(connection, graph)
        policy_id = turns.ensure_policy(connection, graph, "optimal")
        kinds = {row.id: row.kind for row in rows if isinstance(row, Node)}
        playing = {key: node_id for key, node_id in state_ids.items() if kinds[node_id] != TERMINAL}
        for key, node_id in playing.items():
            stored = readers.state_result(connection, built.graph_id, policy_id, key).value
            assert stored == pytest.approx(float(exact_values[node_id]), rel=1e-12, abs=1e-15), key
    engine.dispose()
    assert len(playing) >= 4


@pytest.mark.parametrize("game", games(lambda game: loops_between_states(game) and game.rules is not None))
def test_a_turn_stored_once_solves_to_the_exact_values_of_the_games_rules(game: Game,
                                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    """The turn solve of every turn state equals the exact value of the game's rules (graphs/repeating.py: the turn
    copied into each state, policy iteration in fractions), at the state's turn start: a race, whose small
    parameters make a small whole game (School's and Yahtzee's are checked on their last states, above)."""
    params = small_params(game)
    rules = game.rules(params)
    values = exact_values(rules, game.objective)
    start = SEPARATOR + rules.turn.key(rules.root)
    engine = open_database(BACKENDS["sqlite"].format(tmp_path_factory.mktemp("sqlite")), create=True)
    built = build_graph(engine, game, params)
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
        turn_cycles.ensure_race_solved(connection, graph)
        policy_id = turns.ensure_policy(connection, graph, "optimal")
        states = {key.removesuffix(start): worth for key, worth in values.items() if key.endswith(start)}
        for key, worth in states.items():
            stored = readers.state_result(connection, built.graph_id, policy_id, key).value
            assert stored == pytest.approx(float(worth), rel=1e-12, abs=1e-15), key
    engine.dispose()
    assert len(states) >= 4


# --- every tool on every game ---------------------------------------------------------------------------------

TOOLED = games()


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Game], tuple[str, dict[str, Any]]]:
    """Return a function giving (database URL, report --json) of the game on its small parameters, each once."""
    from tests.commands import run

    done: dict[str, tuple[str, dict[str, Any]]] = {}

    def report(game: Game) -> tuple[str, dict[str, Any]]:
        if game.name not in done:
            url = f"sqlite:///{tmp_path_factory.mktemp(game.name) / 'game.db'}"
            options = [item for name, v in small_params(game).items() for item in ("-p", f"{name}={value_text(v)}")]
            result = run(url, "report", game.name, *options, "-n", "0", "--json")
            assert result.exit_code == 0, (game.name, result.stderr)
            done[game.name] = url, json.loads(result.stdout)
        return done[game.name]

    return report


@pytest.mark.parametrize("game", TOOLED)
def test_report_text_and_json_describe_every_policy(game: Game, reported: Any) -> None:
    from tests.commands import run

    url, data = reported(game)
    names = {row["name"] for row in data["policies"]} if "policies" in data else set()
    assert "optimal" in names or game.players == 2, data.keys()
    options = [item for name, v in small_params(game).items() for item in ("-p", f"{name}={value_text(v)}")]
    text = run(url, "report", game.name, *options, "-n", "0")
    assert text.exit_code == 0 and game.title in text.stdout and "Traceback" not in text.output


@pytest.mark.parametrize("game", TOOLED)
def test_export_draws_dot_and_png(game: Game, reported: Any, tmp_path: Any) -> None:
    from dicegraph.store.render import available_renderers
    from tests.commands import run

    url, _ = reported(game)
    for name in ("graph.dot", "graph.png"):
        if name.endswith(".png") and not available_renderers():
            if os.environ.get("CI"):
                raise RuntimeError("CI must draw PNGs")
            continue
        target = tmp_path / name
        drawn = run(url, "export", "1", "--full", "--depth", "2", "-o", str(target))
        assert drawn.exit_code == 0, (game.name, drawn.stderr)
        assert target.stat().st_size > 0
    default = run(url, "export", "1", "-o", str(tmp_path / "default.dot"), "--json")  # the default view draws edges
    assert default.exit_code == 0 and json.loads(default.stdout)["edges"] > 0, (game.name, default.output)
    assert "->" in (tmp_path / "default.dot").read_text()


@pytest.mark.parametrize("game", [case for case in TOOLED if case.values[0].hooks.offers("advisor")])
def test_the_advisors_best_move_is_the_solves(game: Game, reported: Any) -> None:
    """Asked its questions' examples, the advisor's decision is a best alternative, and at the position it names
    the alternatives' best value is the stored optimum's value and the optimum's stored choice is that move."""
    from dicegraph.store.view import GraphView

    url, _ = reported(game)
    engine = open_database(url, read_only=True)
    with engine.connect() as connection:
        view = GraphView(connection, 1, game)
        advisor = game.hooks.advisor()
        advice = advisor.answer(view, {question.name: question.example for question in advisor.questions_for(view.params)})
        ranked = advice.ranked()
        assert ranked, advice.situation
        tolerance = 1e-12 * max(1.0, abs(ranked[0].value))
        assert advice.decision in [item.move for item in ranked if item.gives_up <= tolerance]
        if advice.position is not None:
            stored = view.position(advice.position, depth=1)
            assert stored["policies"]["optimal"]["value"] == pytest.approx(ranked[0].value, rel=1e-12, abs=1e-12)
            chosen = [edge["label"] for edge in stored["edges"] if "optimal" in edge["chosen_by"]]
            assert stored["kind"] == DECISION and len(chosen) == 1, (advice.position, stored["kind"], chosen)
            assert chosen[0] in {item.move for item in ranked if item.gives_up <= tolerance}
    engine.dispose()


@pytest.mark.parametrize("game", TOOLED)
def test_every_explorer_page_answers_in_html_and_json(game: Game, reported: Any) -> None:
    """Home, the graph (with a comparison, and a two-player game's matches), a position of each kind, a search,
    the charts and the advisor where the game declares them: 200, HTML and JSON, with no traceback."""
    from urllib.parse import quote

    from dicegraph.database import Database
    from dicegraph.web.app import create_app

    url, _ = reported(game)
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    with engine.connect() as connection:
        keys = dict(connection.execute(sa.select(node.c.kind, sa.func.min(node.c.key)).where(node.c.graph_id == 1)
                                       .group_by(node.c.kind)).all())
        agents = [name for name in game.agents(small_params(game))]
    addresses = ["/", "/graphs/1", f"/graphs/1/search?q={quote(keys[TERMINAL][:2])}"]
    addresses += [f"/graphs/1/positions/{quote(key, safe='/')}" for key in keys.values()]
    if agents:
        addresses.append(f"/graphs/1?policy={quote(agents[0])}&reference=optimal")
    if game.players == 2:
        addresses += ["/graphs/1?matches=all", "/graphs/1?responses=all"]
    if game.hooks.offers("charts"):
        addresses.append("/graphs/1/charts")
    if game.hooks.offers("advisor"):
        addresses.append("/graphs/1/advise")
    for address in addresses:
        path, _, query = address.partition("?")
        for asked in (address, f"{path}.json" + (f"?{query}" if query else "")):
            answer = client.get(asked)
            assert answer.status_code == 200, (asked, answer.status_code, answer.get_data(as_text=True)[:300])
            assert "Traceback" not in answer.get_data(as_text=True)
    engine.dispose()


@pytest.mark.parametrize("game", TOOLED)
def test_the_python_apis_report_is_report_json_built_and_solved_once(game: Game, reported: Any, tmp_path: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``dicegraph.open(url).report(game, params)`` returns what ``report --json`` prints; it builds each graph
    the report needs once and solves each policy once, and a second report reuses them all."""
    import dataclasses

    import dicegraph
    from dicegraph.store.solve import layers

    _, printed = reported(game)
    counted = {"builds": 0, "solves": 0}

    def counting(name: str, work: Callable[..., Any]) -> Callable[..., Any]:
        def counted_work(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return work(*args, **kwargs)
        return counted_work

    def counting_optimum(work: Callable[..., Any]) -> Callable[..., Any]:  # a race's run that stores the optimum
        def counted_work(*args: Any, **kwargs: Any) -> Any:
            counted["solves"] += "keep" in kwargs
            return work(*args, **kwargs)
        return counted_work

    monkeypatch.setattr(layers, "solve", counting("solves", layers.solve))
    monkeypatch.setattr(turns, "solve_policies", counting("solves", turns.solve_policies))
    monkeypatch.setattr(turn_cycles, "solve_race", counting_optimum(turn_cycles.solve_race))
    counting_game = dataclasses.replace(game, build=counting("builds", game.build))
    db = dicegraph.open(f"sqlite:///{tmp_path / 'api.db'}")
    params = small_params(game)
    assert db.report(counting_game, params) == printed
    graphs = 1 + len(game.hooks.report_graphs(params))
    # a turn stored once: one solve of every policy, after the optimum's last layers where a policy needs their values
    needs = game.repeating and any(policy.needs for policy in game.turn(params).policies)  # type: ignore[attr-defined]
    solves = (1 + needs) if game.repeating else graphs * (1 + len(game.solves))
    assert counted == {"builds": graphs, "solves": solves}
    assert db.report(counting_game, params) == printed
    assert counted == {"builds": graphs, "solves": solves}


@pytest.mark.parametrize("game", TOOLED)
def test_solve_works_on_every_game_and_gives_the_reports_optimum(game: Game, reported: Any, tmp_path: Any) -> None:
    """``dicegraph build`` then ``dicegraph solve``, in a fresh database, store the optimum the report gives."""
    from tests.commands import run

    report_url, _ = reported(game)
    options = [item for name, v in small_params(game).items() for item in ("-p", f"{name}={value_text(v)}")]
    url = f"sqlite:///{tmp_path / 'solve.db'}"
    assert run(url, "build", game.name, *options).exit_code == 0
    solved = run(url, "solve", game.name, "--json")
    assert solved.exit_code == 0, solved.stderr
    wanted = json.loads(json.dumps(small_params(game)))
    graph_id = next(row["id"] for row in json.loads(run(report_url, "graphs", "--json").stdout)
                    if row["game"] == game.name and json.loads(row["params"]) == wanted)
    listed = run(report_url, "policies", str(graph_id), "--json")
    reported_optimum = next(row["value"] for row in json.loads(listed.stdout) if row["name"] == "optimal")
    assert json.loads(solved.stdout)["value"] == pytest.approx(reported_optimum, rel=1e-12)


@pytest.mark.parametrize("game", TOOLED)
def test_a_game_played_by_its_policies_analyses_with_the_values_identity(game: Game, reported: Any,
                                                                         tmp_path: Any) -> None:
    """``play --auto`` of the optimum and of up to two other policies stored (in a two-player game each against the
    optimum, in both seats) writes a
    record that ``analyse`` reads back to the same analysis; the steps' changes add up to the outcome minus the
    start value, the optimum's moves lose nothing, and every loss is what its move's value gives up."""
    from tests.commands import assert_close, assert_one_line_error, run

    url, _ = reported(game)
    options = [item for name, v in small_params(game).items() for item in ("-p", f"{name}={value_text(v)}")]
    listed = json.loads(run(url, "policies", game.name, *options, "--json").stdout)
    others = [row["name"] for row in listed if row["name"] != "optimal" and row.get("goal") is None]
    if game.players == 2:
        pairs = [["optimal", other] for other in others[:2]] or [["optimal"]]
        pairs += [list(reversed(pair)) for pair in pairs]
    else:
        pairs = [["optimal"], *[[other] for other in others[:2]]]
    for seed, policies in enumerate(pairs):
        record = tmp_path / f"{seed}.json"
        played = run(url, "play", game.name, *policies, *options, "--auto", "--seed", str(seed), "--record", str(record),
                     "--json")
        assert played.exit_code == 0, (game.name, policies, played.output)
        analysis = json.loads(played.stdout)
        assert analysis.pop("record") == json.loads(record.read_text())
        # a turn game's analysis sums its turns' values in another order when it works several states out at once
        assert_close(json.loads(run(url, "analyse", str(record), "--json").stdout), analysis, absolute=1e-12)
        assert analysis["finished"] and analysis["outcome"] == analysis["value_now"]
        scale = max(1.0, abs(analysis["start_value"]), abs(analysis["outcome"]))
        assert analysis["identity"]["sum_of_steps"] == pytest.approx(analysis["outcome"] - analysis["start_value"],
                                                                      abs=1e-12 * scale)
        seats = dict(zip(["first", "second"] if game.players == 2 else ["solo"], policies * 2))
        for step in analysis["steps"]:
            if step["kind"] == "move":
                assert step["loss"] >= 0 and (step["loss"] == 0 or seats[step["player"]] != "optimal"), step
            else:
                assert step["luck"] == pytest.approx(step["value_after"] - step["value_before"], abs=1e-12 * scale)
    broken = json.loads(record.read_text())  # its last step not one the game offers there: refused, saying which
    kind = next(iter(broken["steps"][-1]))
    broken["steps"][-1] = {kind: "no such label"}
    record.write_text(json.dumps(broken))
    assert_one_line_error(run(url, "analyse", str(record)), f"step {len(broken['steps'])}: {kind} 'no such label' is not offered")
