"""dicegraph on Apache Spark SQL, on a real local Spark Thrift server in Spark's local mode (it runs the tasks
itself, a tenth to a third less time a statement than beside a master and workers on one machine), started here by
``dicegraph spark start --workers 0`` and stopped however the tests end; one test starts a standalone master and
a worker beside it, and builds there too.

It needs Java (Debian's openjdk-17-jre-headless) and pyspark (the test extra brings it). Where either is missing
the tests are skipped and say why; in CI (``$CI`` set) they must run. Each test works in a database of its own on
the cluster. A Spark statement costs about a quarter of a second, so the games are the small ones, on parameters of a
few hundred statements (:func:`spark_params`). ``dicegraph check`` runs on Spark for Jackpot, Shut The Box, Pig and
two test shapes in every run, for every built-in game with ``DICEGRAPH_SPARK_CHECK_ALL=1``: all of them hold, but
``.ci/run`` with all of them took 40.1 minutes on this 2-processor machine (2026-12-03; 28 without them, 35 with
the checks in a module of their own on a second server), so every other game's build and solve is checked here
against SQLite's instead.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

import dicegraph

from dicegraph.cli import main
from dicegraph.conformance import check_game
from dicegraph.database import stored_graph
from dicegraph.graphs import GAMES as ALL_GAMES
from dicegraph.graphs import get_game
from dicegraph.graphs.protocol import OPTIMAL, value_text
from dicegraph.store.catalog import find_policy, policy_convergence
from dicegraph.store.db import open_database
from dicegraph.store.report import game_report
from dicegraph.store.schema import graph
from dicegraph.store.backends.spark import compact
from dicegraph.store.backends.spark.cluster import (PARTITIONS_PER_CORE, STATEMENT_THREADS, Cluster, answers, free_port,
                                                   java_found, running, stop_when_gone)
from tests.test_backends import headline
from tests.test_conformance import TURN_GAMES, small_params
from tests.test_examples import checks_expected

if not java_found() or __import__("importlib").util.find_spec("pyspark") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must test Spark: install openjdk-17-jre-headless, and the test extra brings pyspark")
    pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless) and pyspark (the test extra)",
                allow_module_level=True)

GAMES = {"jackpot": {"cells": 3}}  # 275 edges, 7 layers: a whole report (build, solve, agents, distributions),
# as SQLite's


def _ended_pid() -> int:
    """Return the id of a process that has ended."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A running local cluster, started with the CLI and stopped after the module's tests, or by a watcher process
    when pytest is ended by a signal."""
    started = Cluster(tmp_path_factory.mktemp("spark"), free_port(), workers=0)
    watcher = stop_when_gone(started, os.getpid())  # stops it if this process is ended by a signal
    result = CliRunner().invoke(main, ["spark", "start", "--folder", str(started.folder), "--port", str(started.port),
                                       "--workers", "0"])
    try:
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == started.url
        yield started
    finally:
        CliRunner().invoke(main, ["spark", "stop", "--folder", str(started.folder)])
        watcher.terminate()
        watcher.wait()


@pytest.fixture
def spark_url(cluster: Cluster) -> Iterator[str]:
    """The URL of a database of its own on the cluster (created by dicegraph as it builds; dropped after)."""
    name = f"dicegraph_test_{uuid.uuid4().hex[:10]}"
    yield sa.make_url(cluster.url).set(database=name).render_as_string()
    engine = sa.create_engine(cluster.url)
    with engine.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")
    engine.dispose()


def run(url: str, *args: str) -> Any:
    result = CliRunner().invoke(main, ["--db", url, *args])
    assert result.exit_code == 0, result.output
    return result


SPARK_PARAMS = {  # where the conformance suite's small parameters take too many statements for Spark's half second each
    "5000-race": {"target": "100"},
    "cant-stop": {"columns": "7,8"},
    "cant-stop-board": {"board": "6:>1,7:>1,8:>1"},
    "jackpot": {"cells": "3"},
    "pig": {"target": "4", "holds": "4"},
    "shut-the-box": {"tiles": "4", "one_die": "on"},
}
TURN_NAMES = [param.id for param in TURN_GAMES]  # School and Yahtzee: their last turn states (a whole game takes
# minutes here, School's report 408.8 s: tests/bench/bench_spark.py)
COMPACTED = "5000-race"  # its commands compact every table of more than two files, so that its solve reads them so
CHECKED_IN_EVERY_RUN = {  # ``check`` (every tool) on Spark in every run, and what each must take besides
    # :func:`tests.test_examples.checks_expected`: a solitaire graph of rows, one that minimises, and a two-player race
    # whose positions recur (its picture walked a statement a step: Spark's recursive queries only UNION ALL)
    "jackpot": {"exact", "monte-carlo", "export", "positions", "compare", "play"},
    "shut-the-box": {"exact", "distribution", "monte-carlo", "export", "positions", "compare", "play"},
    "pig": {"exact", "export", "positions", "compare", "best-response", "play"},
}
CHECK_ALL = "DICEGRAPH_SPARK_CHECK_ALL"  # set (to 1): every built-in game's check, 40 minutes of CI's 2 processors
CHECKED_ON_SPARK = (sorted(game.name for game in ALL_GAMES.built_in()) if os.environ.get(CHECK_ALL)
                    else sorted(CHECKED_IN_EVERY_RUN))


def spark_params(name: str) -> dict[str, Any]:
    """Return the parameters of game ``name`` on Spark: :data:`SPARK_PARAMS`, else the conformance suite's."""
    return SPARK_PARAMS.get(name) or small_params(get_game(name))


def options(name: str) -> list[str]:
    """Return the ``-p`` options of game ``name`` on Spark (:func:`spark_params`)."""
    return [option for key, value in spark_params(name).items() for option in ("-p", f"{key}={value_text(value)}")]


def solved(url: str, name: str) -> dict[str, Any]:
    """Return ``dicegraph solve NAME --json`` on ``url``, the game built on its :func:`options`."""
    run(url, "build", name, *options(name))
    return json.loads(run(url, "solve", name, "--json").stdout)


def policy_values(url: str, name: str) -> dict[str, float]:
    """Return each listed policy of game ``name`` (on its :func:`options`) and its value, from ``dicegraph policies
    --json``."""
    listed = json.loads(run(url, "policies", name, *options(name), "--json").stdout)
    return {row["name"]: row["value"] for row in listed}


@pytest.mark.parametrize("name", CHECKED_ON_SPARK)
def test_every_tool_holds_on_spark(name: str, spark_url: str, tmp_path: Path) -> None:
    """``dicegraph check GAME --here`` on the server, on the game's Spark parameters: build, report, solve, the exact
    recursion, Monte Carlo or matches and best responses, export, show and query, compare, play and analyse, the
    explorer's pages, each holding on Spark, every check the game takes on the other backends among them
    (:func:`tests.test_examples.checks_expected`); then the value of every policy a solve lists there (the check's
    best responses besides) and how the optimum's solve converged (its cyclic components) as SQLite's, to 1e-12; and Jackpot's report there (build, solve, every agent
    evaluated, propagated), read again, gives every value and the optimal outcome distribution as SQLite's."""
    game = get_game(name)
    findings = check_game(game, spark_params(name), url=spark_url)
    assert findings and all(found.holds for found in findings), [found.line() for found in findings]
    assert checks_expected(game) | CHECKED_IN_EVERY_RUN.get(name, set()) <= {found.check for found in findings}
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    expected_solve = solved(reference, name)
    expected_values, values = policy_values(reference, name), policy_values(spark_url, name)
    assert values.keys() >= expected_values.keys() and OPTIMAL in values
    for policy, value in expected_values.items():
        assert (values[policy] is None if value is None else
                math.isclose(values[policy], value, rel_tol=1e-12, abs_tol=1e-15)), policy
    engine = open_database(spark_url)
    with engine.connect() as connection:
        graph_id = stored_graph(connection, name, spark_params(name)).id  # beside check's neighbour
        convergence = policy_convergence(connection, find_policy(connection, graph_id, OPTIMAL).id)
    engine.dispose()
    assert (convergence or {}).get("cyclic_components") == \
        (expected_solve["convergence"] or {}).get("cyclic_components")
    if name in GAMES:  # the report the check made, read again: every value and the distribution as on SQLite's
        params = GAMES[name]
        expected = headline(game_report(open_database(f"sqlite:///{tmp_path / 'report.db'}", create=True), game,
                                        params))
        got = headline(dicegraph.open(spark_url).report(name, params))
        assert got.keys() == expected.keys() and len(expected) > 3
        for key, value in expected.items():
            assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-15), key


SHAPES_CHECKED_ON_SPARK = {  # the test shapes (tests/shapes.py) no game above has: a repeating turn stored once (about
    # 550 statements, 61 s on a warm server), and points paid on moves, whose outcome distributions carry the points
    # won through the layers (about 360 statements, 51 s)
    "tally": {"exact", "distribution", "monte-carlo", "export", "positions", "play", "explorer"},
    "yachtlet": {"exact", "distribution", "monte-carlo", "export", "positions", "compare", "play", "explorer"},
}


@pytest.mark.parametrize("name", sorted(SHAPES_CHECKED_ON_SPARK))
def test_every_tool_holds_on_spark_on_a_test_shape(name: str, spark_url: str) -> None:
    """``dicegraph check GAME --here`` on the server for a game of a shape a user may write (a model alone, as
    ``tests/test_examples.py`` checks it on the other backends): every check holds, each of those named."""
    from tests.shapes import registered

    with registered() as specs:
        findings = check_game(specs[name], url=spark_url)
    assert findings and all(found.holds for found in findings), [found.line() for found in findings]
    assert SHAPES_CHECKED_ON_SPARK[name] <= {found.check for found in findings}


@pytest.mark.parametrize("name", sorted(set(ALL_GAMES) - set(TURN_NAMES) - set(CHECKED_ON_SPARK)))
def test_every_game_solves_on_spark_as_on_sqlite(name: str, spark_url: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``dicegraph build`` and ``solve``, the method the store picks for the graph (layers, cyclic components, a
    turn stored once with loops): every policy's value, the optimum's and each agent's, and how the optimum
    converged, as on SQLite to 1e-12, for every game whose check (every tool) this run does not take on Spark
    (:data:`CHECKED_ON_SPARK`)."""
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    expected = solved(reference, name)
    if name == COMPACTED:
        monkeypatch.setattr(compact, "FILES_PER_TABLE", 2)
    got = solved(spark_url, name)
    assert (got["convergence"] or {}).get("cyclic_components") == (expected["convergence"] or {}).get("cyclic_components")
    values, expected_values = policy_values(spark_url, name), policy_values(reference, name)
    assert values.keys() == expected_values.keys() and OPTIMAL in values
    for policy, value in expected_values.items():
        if value is None:  # a race's fixed strategy: no value of its own, it is played in matches
            assert values[policy] is None, policy
        else:
            assert math.isclose(values[policy], value, rel_tol=1e-12, abs_tol=1e-15), policy
    if name == COMPACTED:
        engine = open_database(spark_url)
        with engine.connect() as connection:
            files = compact.table_files(connection)
        engine.dispose()
        assert max(files.values()) <= 2 and files["turn_policy"] > 0, files


def test_a_races_matches_on_spark_as_on_sqlite(spark_url: str, tmp_path: Path) -> None:
    """The race's matches (``store/solve/race_matches.py``: the optimum's and an agent's end distributions, then the
    state layers), both orders of two pairs, as on SQLite to 1e-12."""
    import dicegraph

    name = "5000-race"
    pairs = [("threshold-2", OPTIMAL), ("threshold-5", "turn-optimal")]
    played = []
    for url in (f"sqlite:///{tmp_path / 'reference.db'}", spark_url):
        solved(url, name)
        played.append(dicegraph.open(url).matches(name, pairs=pairs))
    expected, got = played
    assert [(row["first"], row["second"]) for row in got] == [(row["first"], row["second"]) for row in expected]
    assert len(expected) == 4
    for row, expected_row in zip(got, expected):
        assert math.isclose(row["p_first_wins"], expected_row["p_first_wins"], rel_tol=1e-12), row


@pytest.mark.parametrize("name", TURN_NAMES)
def test_a_turn_games_last_states_solve_on_spark_as_on_sqlite(name: str, spark_url: str, tmp_path: Path) -> None:
    """A turn stored once, without loops (School, Yahtzee): the optimum's values and decisions at the states of the
    last layer (one category or combination left), as on SQLite to 1e-12 (the whole games, with their reference
    numbers, are measured by tests/bench/bench_spark.py), and as Spark's reference (``reference_only()``) gives.
    """
    from dicegraph.store.load import build_graph
    from dicegraph.store.solve import readers, turns
    from dicegraph.store.solve.dispatch import reference_only
    from dicegraph.store.turn_graph import TurnGraph

    game, stored, sent = get_game(name), [], []
    params = small_params(game)
    folded_sent: list[str] = []
    for url, reference in ((f"sqlite:///{tmp_path / 'turns.db'}", False), (spark_url, False), (spark_url, True)):
        engine = open_database(url, create=True)
        built = build_graph(engine, game, params)
        with engine.connect() as connection, reference_only() if reference else contextlib.nullcontext():
            graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
            folded_sent = list(sent)
            sent.clear()
            sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
            policy_id = turns.solve_policy(connection, graph, OPTIMAL, down_to=max(graph.layer_ids))
            stored.append((readers.stored_values(connection, built.graph_id, policy_id),
                           readers.stored_decisions(connection, built.graph_id, policy_id)))
        engine.dispose()
    (expected, expected_decisions), (got, decisions), (joined, joined_decisions) = stored
    assert len(expected) >= 5 and got.keys() == expected.keys() and decisions == expected_decisions  # a state a box
    # on Spark the turn's layers cost no statement: one fold for the state layer, nothing written a turn layer
    assert len(graph.turn_spans) > 3 and sum("aggregate(turn.layers" in text for text in folded_sent) == 1
    assert not [text for text in folded_sent if "turn_value" in text or "turn_chosen" in text]
    for key, value in expected.items():
        assert math.isclose(got[key], value, rel_tol=1e-12), key
    # the reference (the turn joined with the states, reference_only()) runs on Spark too, with the fold's answers
    assert not [text for text in sent if "aggregate(turn.layers" in text] and joined_decisions == decisions
    assert joined.keys() == got.keys() and all(math.isclose(joined[key], got[key], rel_tol=1e-12) for key in got)


def test_a_turn_games_turns_and_distribution_on_spark_are_a_statement_each(spark_url: str, tmp_path: Path) -> None:
    """A game played, analysed or shown asks for the turns of the states it reaches (``store/solve/turns.py``
    ``play_turns``), and its outcome distribution for where the turns of each state layer's states end
    (``store/solve/turn_outcomes.py`` ``reach_ends``): on Spark one statement plays all the states asked for, and one
    a batch of states spreads their turns (the turn folded in each state's row, backward then forward), with no work
    table made for either; every turn node's profit and value, and every outcome's probability, as SQLite's and as
    the references' (``reference_only()``) on Spark, to 1e-12 (``tally`` of two rounds, a repeating turn whose ends
    pay what they keep: the references send about 30 statements a state layer here)."""
    from dicegraph.store.load import build_graph
    from dicegraph.store.schema import node
    from dicegraph.store.solve import turns
    from dicegraph.store.solve.dispatch import reference_only
    from dicegraph.store.solve.turn_outcomes import turn_outcomes
    from dicegraph.store.turn_graph import TurnGraph
    from tests.shapes import registered

    played, outcomes, sent = {}, {}, []
    with registered() as specs:
        game, params = specs["tally"], {"rounds": 2}
        for url in (f"sqlite:///{tmp_path / 'tally.db'}", spark_url):
            engine = open_database(url, create=True)
            built = build_graph(engine, game, params)
            sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
            with engine.connect() as connection:
                graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
                turns.solve_policy(connection, graph, OPTIMAL, commit_layers=True)
                first, last = min(graph.layer_ids.values())[0], max(graph.layer_ids.values())[1]
                states = connection.execute(sa.select(node.c.id).where(
                    node.c.graph_id == built.graph_id, node.c.id.between(first, last),
                    node.c.kind != "terminal")).scalars().all()
                for reference in ((False, True) if url == spark_url else (False,)):
                    with reference_only() if reference else contextlib.nullcontext():
                        sent.clear()
                        played[url, reference] = turns.turns_played(connection, graph, OPTIMAL, states, solved=True)
                        plays = list(sent)
                        sent.clear()
                        outcomes[url, reference] = turn_outcomes(connection, graph, OPTIMAL)
                        spreads = list(sent)
                    if url == spark_url:  # the references play and spread a statement a turn layer, in work tables
                        folds = [sum("aggregate(turn.layers" in text for text in texts) for texts in (plays, spreads)]
                        made = any(text.lstrip().upper().startswith(("CREATE", "DROP")) for text in plays)
                        spread = [text for text in spreads if "INSERT INTO" in text and ("to_reach" in text or
                                                                                          "turn_value" in text)]
                        assert (folds, made, bool(spread)) == (([0, 0], True, True) if reference else  # a batch a layer
                                                              ([1, len(graph.layer_ids)], False, False)), folds
            engine.dispose()
    expected = played[f"sqlite:///{tmp_path / 'tally.db'}", False]
    assert len(expected) == params["rounds"] and all(len(worths) > 3 for worths in expected.values())
    for got in (played[spark_url, False], played[spark_url, True]):
        assert got.keys() == expected.keys()
        for state, worths in expected.items():
            assert got[state].keys() == worths.keys(), state
            for node_id, pair in worths.items():
                assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) for a, b in zip(got[state][node_id], pair))
    distribution = outcomes[f"sqlite:///{tmp_path / 'tally.db'}", False]
    assert len(distribution) > 5 and math.isclose(sum(distribution.values()), 1.0, rel_tol=1e-12)
    for got in (outcomes[spark_url, False], outcomes[spark_url, True]):
        assert got.keys() == distribution.keys()
        assert all(math.isclose(got[score], p, rel_tol=1e-12, abs_tol=1e-15) for score, p in distribution.items())


DEPTHS = {  # a game of rows on parameters of two depths: Jackpot a layer more a cell; Pig, with cycles, a component
    # more a point of the target (the same agent on both)
    "jackpot": ({"cells": 2}, {"cells": 4}),
    "pig": ({"target": 4, "holds": (4,)}, {"target": 8, "holds": (4,)}),
}


@pytest.mark.parametrize("name", sorted(DEPTHS))
def test_a_graph_of_rows_solves_in_as_many_statements_whatever_its_depth(name: str, spark_url: str,
                                                                         tmp_path: Path) -> None:
    """A graph of rows on parameters of two depths (:data:`DEPTHS`): on Spark the solve and the agents' evaluation
    send as many statements for either, the optimum folded in one statement and the agents in one more, and every
    node's value, reach (none where the graph has cycles) and move taken are SQLite's to 1e-12. A two-player
    game's matches (the optimum against its agent and the agent against itself, both ways) are one fold more, their
    chances SQLite's to 1e-12, and the best response to the agent one more, its wins, values and moves SQLite's.
    Run again on Spark by the reference implementations (``reference_only()``: no fold), the shallower parameters
    give the folds' values, reaches, moves, matches and best response to 1e-12."""
    from dicegraph.store.load import build_graph
    from dicegraph.store.schema import choice, edge, layer_ranges, policy, value
    from dicegraph.store.solve.dispatch import reference_only
    from dicegraph.store.solve.graph_matches import head_to_heads, solve_response
    from dicegraph.store.solve.layers import evaluate_all, solve

    game, sent, counts, matches, responses = get_game(name), [], {}, {}, {}

    def solved(url: str, params: dict[str, Any], pairs: int = 2
               ) -> tuple[dict[tuple[str, int], tuple[float, float]], dict[int, int]]:
        engine = open_database(url, create=True)
        built = build_graph(engine, game, params)
        sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
        with engine.begin() as connection:
            sent.clear()
            agents = connection.execute(sa.select(policy.c.id).where(policy.c.graph_id == built.graph_id)).scalars().all()
            policy_id = solve(connection, built.graph_id)
            evaluate_all(connection, built.graph_id, agents)
            counts[url, str(params)] = (len(layer_ranges(connection, built.graph_id)), len(sent),
                                        sum("aggregate(graph." in text for text in sent))
            rows = sa.select(policy.c.name, value.c.node_id, value.c.value, value.c.reach).select_from(
                value.join(policy, policy.c.id == value.c.policy_id)).where(policy.c.graph_id == built.graph_id,
                                                                            policy.c.responds_to.is_(None))
            values = {(row.name, row.node_id): (row.value, row.reach) for row in connection.execute(rows)}
            moves: dict[Any, int] = dict(connection.execute(  # node -> the node its move leads to (edge ids differ)
                sa.select(choice.c.node_id, edge.c.dst).select_from(choice.join(edge, edge.c.id == choice.c.edge_id))
                .where(choice.c.policy_id == policy_id)).all())
            if game.players == 2:
                sent.clear()
                played = [("optimal", "hold-at-4"), ("hold-at-4", "hold-at-4")][:pairs]
                matches[url, str(params)] = head_to_heads(connection, built.graph_id, played), len(sent), sum(
                    "aggregate(graph." in text for text in sent)
                sent.clear()
                response_id, response = solve_response(connection, built.graph_id, "hold-at-4")
                responses[url, str(params)] = response, len(sent), sum("aggregate(graph." in text for text in sent)
                values |= {("response", row.node_id): (row.value, row.reach) for row in connection.execute(
                    sa.select(value.c.node_id, value.c.value, value.c.reach).where(value.c.policy_id == response_id))}
                moves |= {("response", node_id): dst for node_id, dst in connection.execute(
                    sa.select(choice.c.node_id, edge.c.dst).select_from(choice.join(edge, edge.c.id == choice.c.edge_id))
                    .where(choice.c.policy_id == response_id))}
        engine.dispose()
        return values, moves

    folded = {}
    for params in DEPTHS[name]:
        sqlite_url = f"sqlite:///{tmp_path / f'{len(counts)}.db'}"
        expected, expected_moves = solved(sqlite_url, params)
        got, moves = folded[str(params)] = solved(spark_url, params)
        assert sorted(got) == sorted(expected) and len({name for name, _ in got}) > 1, "not the same nodes valued"
        assert moves == expected_moves and len(moves) > 3, "not the same moves taken"
        for key, (value_, reach) in expected.items():
            assert math.isclose(got[key][0], value_, rel_tol=1e-12, abs_tol=1e-15), key
            assert (got[key][1] is None) == (reach is None), key
            assert reach is None or math.isclose(got[key][1], reach, rel_tol=1e-12, abs_tol=1e-15), key
        if game.players == 2:  # two matches in one fold; a best response in one more
            (expected_match, _, _), (match, _, match_folds) = (matches[url, str(params)] for url in (sqlite_url,
                                                                                                  spark_url))
            optimum_first, value_first = expected_match[0]  # the optimum wins at least the game's value (to 1e-12)
            assert match_folds == 1 and optimum_first >= value_first - 1e-12 * abs(value_first)
            assert all(math.isclose(a, b, rel_tol=1e-12) for pair, expected_pair in zip(match, expected_match)
                       for a, b in zip(pair, expected_pair)), (match, expected_match)
            (expected_response, _, _), (response, _, response_folds) = (responses[url, str(params)]
                                                                        for url in (sqlite_url, spark_url))
            assert response_folds == 1 and response.first >= expected_match[0][0] - 1e-12  # as the optimum at least
            assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(response, expected_response))
    (short, short_sent, short_folds), (deep, deep_sent, deep_folds) = (counts[spark_url, str(params)]
                                                                       for params in DEPTHS[name])
    assert deep > short and deep_sent == short_sent and short_folds == deep_folds == 2  # the optimum, the agents
    if game.players == 2:  # the matches' statements, and the best response's
        assert len({matches[spark_url, str(params)][1] for params in DEPTHS[name]}) == 1
        assert len({responses[spark_url, str(params)][1] for params in DEPTHS[name]}) == 1
    # the reference implementations (store/solve/dispatch.py) run on Spark too, and agree with its folds
    params = DEPTHS[name][0]
    (folded_values, folded_moves), folded_match = folded[str(params)], matches.get((spark_url, str(params)))
    if folded_match is not None:
        responses["folded"] = responses[spark_url, str(params)][0]
    with reference_only():  # a pair (the reference plays a run a pair)
        values, moves = solved(spark_url, params, pairs=1)
    assert counts[spark_url, str(params)][2] == 0 and moves == folded_moves and values.keys() == folded_values.keys()
    for key, (value_, reach) in folded_values.items():
        assert math.isclose(values[key][0], value_, rel_tol=1e-12, abs_tol=1e-15), key
        assert reach is None or math.isclose(values[key][1], reach, rel_tol=1e-12, abs_tol=1e-15), key
    if folded_match is not None:
        match, _, match_folds = matches[spark_url, str(params)]
        assert match_folds == 0 and all(math.isclose(a, b, rel_tol=1e-12) for pair, folded_pair in zip(match, folded_match[0])
                                        for a, b in zip(pair, folded_pair))
        response, _, response_folds = responses[spark_url, str(params)]
        assert response_folds == 0 and all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(response, responses[
            "folded"]))
        assert any(key[0] == "response" for key in values)  # the best response's values and moves, compared above


def test_a_race_sends_as_many_statements_for_every_state_layer(spark_url: str, tmp_path: Path) -> None:
    """The race to 150 (5 state layers, each of states whose busts loop into one another, a pair or one alone): on
    Spark its solve sends as many statements for every state layer, fewer than the turn has layers (the layered
    solve sends two a turn layer and pass), and every state's value is SQLite's to 1e-12; each database holds
    another graph first (``check``'s neighbour), so that the fold's statements must each pick the race's rows."""
    from dicegraph.conformance import NEIGHBOUR
    from dicegraph.store.load import build_graph
    from dicegraph.store.solve import turn_cycles
    from dicegraph.store.turn_graph import TurnGraph
    from dicegraph.store.seats import Seat

    game, params = get_game("5000-race"), {"target": 150}
    sent: list[str] = []
    solved, per_layer = {}, {}
    for url in (f"sqlite:///{tmp_path / 'race.db'}", spark_url):
        engine = open_database(url, create=True)
        build_graph(engine, get_game(NEIGHBOUR[0]), NEIGHBOUR[1])
        built = build_graph(engine, game, params)
        sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
        marks: list[int] = []
        with engine.connect() as connection:
            race = TurnGraph.load(connection, built.graph_id, game.turn(params))
            sent.clear()
            solved[url] = turn_cycles.solve_race(connection, race, [Seat.maximising()],
                                                 progress=lambda done: marks.append(len(sent)))
        engine.dispose()
        per_layer[url] = [after - before for before, after in zip(marks, marks[1:])]
    (expected, expected_convergence), (got, convergence) = solved.values()
    assert len(per_layer[spark_url]) == len(race.layer_ids) - 1 > 2
    assert len(set(per_layer[spark_url])) == 1 and per_layer[spark_url][0] < len(race.turn_spans), per_layer
    assert convergence.components == expected_convergence.components == len(race.layer_ids)
    assert convergence.residual <= 1e-12
    assert got.keys() == expected.keys() and len(got) > 8
    for state, values in expected.items():
        assert math.isclose(got[state][0], values[0], rel_tol=1e-12, abs_tol=1e-15), state


def test_a_goal_sweep_on_spark_is_one_fold_and_equals_sqlites(spark_url: str, tmp_path: Path) -> None:
    """Shut The Box's sweep (the optimum for shutting under each score, as its report has it): on Spark one fold
    statement for every goal, and each goal's outcome distribution as on SQLite to 1e-12, and as the reference on
    Spark (``reference_only()``) gives."""
    from dicegraph.store.load import build_graph
    from dicegraph.store.solve.dispatch import reference_only
    from dicegraph.store.solve.layers import Goal
    from dicegraph.store.sweep import sweep_outcomes

    game, params, found, sent = get_game("shut-the-box"), {"tiles": 4, "one_die": "on"}, [], []
    goals = [Goal("<", threshold) for threshold in (1, 3, 5, 8)]
    for url, reference in ((f"sqlite:///{tmp_path / 'sweep.db'}", False), (spark_url, False), (spark_url, True)):
        engine = open_database(url, create=True)
        built = build_graph(engine, game, params)
        sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
        with engine.begin() as connection, reference_only() if reference else contextlib.nullcontext():
            found.append(sweep_outcomes(connection, built.graph_id, "max", goals))
        engine.dispose()
    expected, got, joined = found
    assert sum("aggregate(graph.back" in text for text in sent) == 1  # the fold's; the reference sends none
    assert len(got) == len(goals) and [outcome.keys() for outcome in got] == [outcome.keys() for outcome in expected]
    assert len({tuple(outcome.values()) for outcome in expected}) > 1  # the goals ask for different play
    for outcome, expected_outcome in zip(got, expected):
        for payoff, probability in expected_outcome.items():
            assert math.isclose(outcome[payoff], probability, rel_tol=1e-12, abs_tol=1e-15), payoff
    assert [outcome.keys() for outcome in joined] == [outcome.keys() for outcome in got]
    for outcome, folded in zip(joined, got):  # Spark's reference (reference_only()) gives the fold's outcomes
        assert all(math.isclose(outcome[payoff], p, rel_tol=1e-12, abs_tol=1e-15) for payoff, p in folded.items())


def test_distributions_carrying_points_on_spark_are_one_fold_and_equal_sqlites(spark_url: str, tmp_path: Path) -> None:
    """A graph of rows whose edges pay points (the synthetic game's rewards), every second move handing the turn over
    (its sign -1, so that points and payoffs count with a sign): on Spark each policy's outcome distribution, from
    the root and from a chance node halfway, is one fold statement for all policies, and equals SQLite's and the
    reference's run on Spark (``reference_only()``: a statement a layer) to 1e-12."""
    from dicegraph.store.load import build_graph
    from dicegraph.store.propagate import carried_distributions
    from dicegraph.store.schema import edge, node, policy
    from dicegraph.store.solve.dispatch import reference_only
    from dicegraph.store.solve.layers import evaluate_all, solve

    game, params, found, sent = get_game("synthetic"), spark_params("synthetic"), [], []
    for url, reference in ((f"sqlite:///{tmp_path / 'carried.db'}", False), (spark_url, False), (spark_url, True)):
        engine = open_database(url, create=True)
        if not reference:
            build_graph(engine, game, params)
        with engine.begin() as connection:
            graph_id = connection.execute(sa.select(sa.func.max(node.c.graph_id))).scalar_one()
            if not reference:
                connection.execute(sa.update(edge).where(edge.c.graph_id == graph_id, edge.c.kind == "move",
                                                         edge.c.id % 2 == 1).values(sign=-1))
                agents = connection.execute(sa.select(policy.c.id).where(policy.c.graph_id == graph_id)).scalars().all()
                evaluate_all(connection, graph_id, agents)
                solve(connection, graph_id)
            ids = connection.execute(sa.select(policy.c.id).where(policy.c.graph_id == graph_id)
                                     .order_by(policy.c.id)).scalars().all()
            halfway = connection.execute(sa.select(sa.func.min(node.c.id)).where(
                node.c.graph_id == graph_id, node.c.kind == "chance", node.c.layer == params["layers"] // 2)).scalar_one()
            sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append((url, reference, args[2])))
            with reference_only() if reference else contextlib.nullcontext():
                found.append([list(carried_distributions(connection, ids, graph_id, start).values())
                              for start in (0, halfway)])
        engine.dispose()
    expected, got, joined = found
    fold = "aggregate(forward.layers"
    assert sum(fold in text for url, reference, text in sent if url == spark_url and not reference) == 2  # one a call
    assert not any(fold in text for url, reference, text in sent if reference)  # the reference: a statement a layer
    assert len(expected[0]) >= 2 and any(len(outcomes) > 1 for outcomes in expected[0])
    assert any(outcome < 0 for outcomes in expected[0] for outcome in outcomes)  # the signs count
    for spark_found in (got, joined):
        for starts, expected_starts in zip(spark_found, expected):
            for outcomes, expected_outcomes in zip(starts, expected_starts):
                assert outcomes.keys() == expected_outcomes.keys()
                assert all(math.isclose(outcomes[payoff], p, rel_tol=1e-12, abs_tol=1e-15)
                           for payoff, p in expected_outcomes.items())


@pytest.fixture
def dispatched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Each operation dispatched from here on, and whether a registered implementation ran it."""
    from dicegraph.store.solve import dispatch

    found: list[tuple[str, bool]] = []
    registered = dispatch.registered

    def noted(operation: str, *arguments: Any, **options: Any) -> Any:
        chosen = registered(operation, *arguments, **options)
        found.append((operation, chosen is not None))
        return chosen

    monkeypatch.setattr(dispatch, "registered", noted)
    return found


def test_a_races_fold_and_end_distributions_equal_the_reference_run_on_spark(spark_url: str,
                                                                              dispatched: list[tuple[str, bool]]) -> None:
    """The race to 100's last state layer solved (``race``) and an agent's end distributions from its states
    (``end distributions``), on Spark by the reference and as dispatched (to Spark's folds): the states' values
    and every (end, state) probability agree to 1e-12 (the reference also keeps the ends it reaches with
    probability 0, the fold leaves them out). (The whole race, its matches included, is folded and
    compared with SQLite's above.)"""
    from dicegraph.store.catalog import find_policy
    from dicegraph.store.load import build_graph
    from dicegraph.store.scratch import turn_work_table
    from dicegraph.store.seats import FOLLOW, Seat
    from dicegraph.store.solve import race_matches, turn_cycles
    from dicegraph.store.solve.dispatch import reference_only
    from dicegraph.store.turn_graph import TurnGraph

    game, params = get_game("5000-race"), {"target": 100}
    engine = open_database(spark_url, create=True)
    built = build_graph(engine, game, params)
    with engine.connect() as connection:  # as a match has it: the optimum, whose values rank the ends, solved first
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))  # type: ignore[attr-defined]
        turn_cycles.ensure_race_solved(connection, graph)
        optimal = find_policy(connection, built.graph_id, OPTIMAL).id
    answers = []
    for forced in (True, False):
        dispatched.clear()
        with reference_only() if forced else contextlib.nullcontext(), engine.connect() as connection:
            top = max(graph.layer_ids)
            values, _ = turn_cycles.solve_race(connection, graph, [Seat.maximising()], down_to=top)
            agent = Seat(FOLLOW, find_policy(connection, built.graph_id, "threshold-2").id)
            found = turn_work_table(connection, "ends_played", sa.Column("r0", sa.Double, nullable=False))
            first, last = graph.layer_ids[top]
            race_matches.play_ends(connection, graph, [agent], optimal, list(range(first, last + 1)), found, None,
                                   None)
            ends = {(row.node_id, row.state): row.r0 for row in connection.execute(sa.select(found)) if row.r0 > 0}
            found.drop(connection)
            answers.append((values, ends))
        assert {operation for operation, folded in dispatched if folded} == \
            (set() if forced else {"race", "end distributions"})
    engine.dispose()
    (expected, expected_ends), (values, ends) = answers
    assert values.keys() == expected.keys() and len(ends) > 1
    assert ends.keys() == expected_ends.keys(), (ends, expected_ends)
    for state, value in expected.items():
        assert math.isclose(values[state][0], value[0], rel_tol=1e-12), state
    for key, probability in expected_ends.items():
        assert math.isclose(ends[key], probability, rel_tol=1e-12, abs_tol=1e-15), key


def test_compaction_keeps_every_row_in_fewer_files(spark_url: str) -> None:
    """A table written by three INSERTs (three files) is rewritten into fewer, with the same rows; a table within
    the limit is left alone."""
    engine = open_database(spark_url, create=True)
    with engine.connect() as connection:
        rows = [dict(id=number, game="jackpot", params=f'{{"cells": {number}}}', builder_version=1,
                     created_at=dt.datetime.now(dt.UTC), nodes=1, edges=0, layers=1) for number in (3, 4, 5)]
        for row in rows:
            connection.execute(sa.insert(graph), row)
        kept = sorted(connection.execute(sa.select(graph)).all())
        before = compact.table_files(connection)
        done = compact.compact(connection, at_least=2)
        after = compact.table_files(connection)
        again = sorted(connection.execute(sa.select(graph)).all())
    engine.dispose()
    assert before["graph"] == 3 and done == {"graph": (3, after["graph"])} and after["graph"] < 3
    assert again == kept and len(kept) == 3


def test_a_command_counts_the_files_of_the_tables_it_inserted_into_and_no_others(spark_url: str) -> None:
    """The end of a command that wrote (the backend's ``writing``) counts the files of the tables it inserted into
    (here ``graph``), in one statement that reads no other table and without listing the tables, and none when it
    inserted nothing; a block within a block of the same process sends nothing about the writer table, which the
    outer block takes (CREATE), checks and lets go of (DROP) in three statements."""
    from dicegraph.store.backends.spark.backend import BACKEND

    engine = open_database(spark_url, create=True)
    sent: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
    row = dict(id=1, game="jackpot", params='{"cells": 2}', builder_version=1, created_at=dt.datetime.now(dt.UTC),
               nodes=1, edges=0, layers=1)
    counted = []
    for inserts in ([row], []):
        sent.clear()
        with BACKEND.writing(engine, None), engine.connect() as connection:
            with BACKEND.writing(engine, None):  # a command within a command
                for each in inserts:
                    connection.execute(sa.insert(graph), each)
        counted.append([text for text in sent if "_metadata.file_path" in text])
        assert not [text for text in sent if text.startswith("SHOW TABLES")]
        assert len([text for text in sent if "dicegraph_writer" in text]) == 3, sent
    engine.dispose()
    (written,), nothing = counted
    assert "FROM `graph`" in written and written.count(" FROM ") == 1 and nothing == []


def test_many_rows_go_in_as_json_texts_and_come_back_exactly(spark_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An INSERT of many rows (``store/backends/spark/bulk.py``) goes as a few statements of JSON text, each within
    ``MAX_CHARS``, and every value comes back as it went: the last bit of a double, a signed zero, the
    non-finite ones, bytes, quotes, backslashes, ``%`` and text beyond ASCII."""
    from dicegraph.store.schema import edge, turn_policy
    from dicegraph.store.backends.spark import bulk, dialect

    doubles = [0.1, 1 / 3, 5e-324, 1.7976931348623157e308, -0.0, math.inf, -math.inf, 2.0 ** 0.5]
    moves = [dict(policy_id=7, node_id=number, value=double, moment2=None if number % 2 else double / 3,
                  decisions=bytes([number, 255, 0, 39, 92])) for number, double in enumerate(doubles)]
    edges = [dict(id=2**40 + number, graph_id=3, src=number, dst=number + 1, kind="roll", src_layer=number % 7,
                  label=f"it's \\ é {number} %s %% \"quoted\"", weight=1 + number % 5,
                  reward=doubles[number % len(doubles)], sign=-1 if number % 2 else 1) for number in range(6000)]
    sent: list[str] = []
    monkeypatch.setattr(dialect, "_sent", lambda cursor, statement, send=dialect._sent: (
        sent.append(statement), send(cursor, statement))[-1])
    monkeypatch.setattr(bulk, "MAX_CHARS", 100_000)
    engine = open_database(spark_url, create=True)
    with engine.connect() as connection:
        connection.execute(sa.insert(turn_policy), moves)
        connection.execute(sa.insert(edge), edges)
        inserts = [statement for statement in sent if statement.startswith(("INSERT INTO `edge`",
                                                                             "INSERT INTO `turn_policy`"))]
        moves_back = {row.node_id: row._asdict() for row in connection.execute(sa.select(turn_policy))}
        edges_back = {row.id: row._asdict() for row in connection.execute(sa.select(edge))}
    engine.dispose()
    assert len(inserts) > 3  # the moves in one, the edges' 6,000 rows (about 250,000 characters of JSON) in three
    assert all("from_json(" in statement and len(statement) < 110_000 for statement in inserts)  # the JSON escaped
    assert edges_back == {row["id"]: row for row in edges}
    for row in moves:
        back = moves_back[row["node_id"]]
        assert bytes(back.pop("decisions")) == row["decisions"] and back["moment2"] == row["moment2"]
        assert math.copysign(1, back["value"]) == math.copysign(1, row["value"]) and back["value"] == row["value"]


def test_a_solve_killed_on_spark_is_not_listed_and_the_next_one_starts_again(spark_url: str, tmp_path: Path) -> None:
    """No transaction takes a killed solve back on Spark: its policy is listed only once its last statement
    marks it finished, so the kill leaves none listed, and the next solve starts again and equals SQLite's
    (Pig to 4: Newton's method over cyclic components of a graph of rows, and its agent evaluated)."""
    from tests.processes import dicegraph

    run(spark_url, "build", "pig", *options("pig"))
    process = subprocess.Popen(dicegraph("--db", spark_url, "solve", "pig"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    engine = sa.create_engine(spark_url)
    with engine.connect() as connection:
        started = "SELECT count(*) FROM policy WHERE name = 'optimal'"
        while process.poll() is None and not connection.exec_driver_sql(started).scalar_one():
            time.sleep(1)
    engine.dispose()
    process.kill()
    assert process.wait() == -9, "the solve ended before it could be killed"
    listed = json.loads(run(spark_url, "policies", "pig", "--json").stdout)
    assert [row["name"] for row in listed] == ["hold-at-4"]
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    expected = solved(reference, "pig")
    again = json.loads(run(spark_url, "solve", "pig", "--json").stdout)
    assert math.isclose(again["value"], expected["value"], rel_tol=1e-12) and 0.5 < expected["value"] < 1
    assert again["convergence"]["cyclic_components"] == expected["convergence"]["cyclic_components"] > 1
    agent, expected_agent = policy_values(spark_url, "pig")["hold-at-4"], policy_values(reference, "pig")["hold-at-4"]
    assert math.isclose(agent, expected_agent, rel_tol=1e-12)


def test_two_writers_take_turns_and_a_killed_writers_lock_is_let_go(spark_url: str) -> None:
    """Spark has no transactions, so a writing command holds the database's writer table: a second one waits,
    says so in one line, and goes on once the first lets go; the table a killed process of this machine left is
    let go of by the next writer."""
    from dicegraph.store.backends.spark import writer
    from dicegraph.store.backends.spark.dialect import host_mark
    from tests.processes import spawn

    engine = open_database(spark_url, create=True)
    with engine.connect() as connection:
        with writer.writing(connection):
            second = spawn("--db", spark_url, "build", "jackpot", "-p", "cells=2")
            said = second.stderr.readline()  # type: ignore[union-attr]
            assert "is writing to" in said and "waiting for it to finish" in said and second.poll() is None
        out, err = second.communicate(timeout=600)
        assert second.returncode == 0, err
        connection.exec_driver_sql(f"CREATE TABLE `{writer.WRITER}` (held INT) USING parquet TBLPROPERTIES "
                                   f"('pid'='{_ended_pid()}', 'host'='{host_mark()}')")
    engine.dispose()
    run(spark_url, "build", "jackpot", "-p", "cells=3")
    assert [json.loads(row["params"])["cells"] for row in json.loads(run(spark_url, "graphs", "--json").stdout)] == [2, 3]


def test_query_on_spark_reads_and_refuses_writes_files_and_java(spark_url: str) -> None:
    run(spark_url, "build", "jackpot", "-p", "cells=4")
    listed = json.loads(run(spark_url, "query", "--json", "SELECT kind, count(*) AS n FROM node GROUP BY kind "
                                                          "ORDER BY kind").output)
    counts = {row["kind"]: row["n"] for row in listed}
    assert counts.keys() == {"chance", "decision", "terminal"}
    assert sum(counts.values()) == json.loads(run(spark_url, "graphs", "--json").output)[0]["nodes"]
    for statement in ("DROP TABLE edge", "INSERT INTO graph SELECT * FROM graph", "CREATE TABLE x AS SELECT 1",
                      "WITH x AS (SELECT 1) INSERT INTO graph SELECT * FROM graph", "SELECT * FROM csv.`/etc/passwd`",
                      "SELECT reflect('java.lang.System', 'getenv', 'HOME')", "SELECT 1; DROP TABLE edge"):
        result = CliRunner().invoke(main, ["--db", spark_url, "query", statement])
        assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1, (statement, result.output)
    assert json.loads(run(spark_url, "query", "--json", "SELECT count(*) AS n FROM edge").output)[0]["n"] > 0
    bad = CliRunner().invoke(main, ["--db", spark_url, "query", "SELECT * FROM nothere"])
    assert bad.exit_code == 1 and "nothere" in bad.output and len(bad.output.strip().splitlines()) == 1


def _logged(cluster: Cluster, pattern: str, process: subprocess.Popen | None = None, limit: float = 300) -> str:
    """Return the first match of regular expression ``pattern``'s group 1 in the Thrift server's log, waiting for it
    (while ``process`` runs, if given; at most ``limit`` seconds); an empty text if it never shows."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and (process is None or process.poll() is None):
        found = re.search(pattern, cluster.log_file("thrift").read_text(errors="replace"))
        if found:
            return found.group(1)
        time.sleep(0.5)
    return ""


def test_ctrl_c_stops_a_query_on_the_server_too(cluster: Cluster, spark_url: str) -> None:
    """Ctrl-C during ``query``: one line, exit 1, and the statement cancelled on the Thrift server (its log says so)
    and its tasks killed, not left running on the cluster after the process has gone (a runaway left there took
    both processors from the rest of a test run)."""
    from tests.processes import spawn

    run(spark_url, "build", "jackpot", "-p", "cells=2")
    marker = f"runaway_{uuid.uuid4().hex[:8]}"
    # a trillion pairs, each tested: no sum that can overflow (Spark's ANSI mode ended the last runaway with an
    # error before the Ctrl-C on a fast machine), no answer for hours however fast the machine
    process = spawn("--db", spark_url, "query", "--timeout", "0",
                    f"SELECT count(*) AS {marker} FROM range(1000000) a, range(1000000) b "
                    "WHERE (a.id * 7 + b.id) % 13 <> 99")
    statement = _logged(cluster, rf"Submitting query 'SELECT [^']*{marker}[^']*' with ([0-9a-f-]+)", process)
    assert statement, process.communicate()[1]
    time.sleep(1)  # running on the executors
    process.send_signal(__import__("signal").SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and stderr.count("\n") == 1 and "Ctrl-C" in stderr, stderr
    assert _logged(cluster, rf"(Cancel query with {statement})"), "the statement was not cancelled on the server"
    assert _logged(cluster, rf"(?s)Cancel query with {statement}.*?(Executor killed task)", limit=60), \
        "the statement's tasks run on"


def test_work_tables_a_killed_process_left_are_dropped_by_the_next_writer(spark_url: str) -> None:
    """No transaction takes a killed solve's work tables back on Spark: the next process that opens the database
    to write drops those of this machine's processes that no longer run, and no other. A rewrite's copy (an
    UPDATE or DELETE that was under way) is first written over its table: the statement is finished."""
    from dicegraph.store.backends.spark.dialect import work_mark

    open_database(spark_url, create=True).dispose()
    dead = _ended_pid()
    left, running = f"work_value__{work_mark(dead)}", f"work_value__{work_mark(os.getpid())}"
    rewrite = f"graph__rewrite_{work_mark(dead)}"  # a DELETE of graph 2 of two, killed as it overwrote the table
    engine = sa.create_engine(spark_url)
    with engine.connect() as connection:
        for name in (left, running):
            connection.exec_driver_sql(f"CREATE TABLE {name} (node_id INT) USING parquet")
        rows = [dict(id=number, game="jackpot", params=f'{{"cells": {number + 2}}}', builder_version=1, created_at=dt.datetime.now(dt.UTC),
                     nodes=1, edges=0, layers=1) for number in (1, 2)]
        connection.execute(sa.insert(graph), rows)
        connection.exec_driver_sql(f"CREATE TABLE {rewrite} USING parquet AS SELECT * FROM graph WHERE id = 1")
        connection.exec_driver_sql("TRUNCATE TABLE graph")  # the overwrite had begun
    open_database(spark_url).dispose()
    with engine.connect() as connection:
        names = {row[1] for row in connection.exec_driver_sql("SHOW TABLES").all()}
        ids = [row[0] for row in connection.exec_driver_sql("SELECT id FROM graph")]
        connection.exec_driver_sql(f"DROP TABLE {running}")
    engine.dispose()
    assert left.lower() not in names and rewrite.lower() not in names and running.lower() in names
    assert ids == [1]


def test_the_servers_log_says_what_runs_and_what_went_wrong_and_no_more(cluster: Cluster, spark_url: str) -> None:
    """The Thrift server logs its warnings and errors and, at INFO, only the statements it runs and the executor's
    tasks (the cluster's ``log4j2.properties``): a build logs its statements and nothing of Spark's planning."""
    run(spark_url, "build", "jackpot", "-p", "cells=2")
    levels = re.findall(r"(?m)^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (\w+) (\w+):", cluster.log_file("thrift").read_text())
    assert {"SparkExecuteStatementOperation", "Executor"} <= {name for level, name in levels if level == "INFO"}
    assert {name for level, name in levels if level in ("INFO", "DEBUG", "TRACE")} <= {
        "SparkExecuteStatementOperation", "Executor"}, "Spark's own INFO lines are logged"


def test_start_again_reuses_the_running_cluster_and_status_says_so(cluster: Cluster) -> None:
    again = run(cluster.url, "spark", "start", "--folder", str(cluster.folder), "--port", str(cluster.port),
                "--workers", "0")
    assert again.stdout.strip() == cluster.url and "running already" in again.stderr
    status = json.loads(run(cluster.url, "spark", "status", "--folder", str(cluster.folder), "--port",
                            str(cluster.port), "--json").output)
    assert status["answers"] and set(status["processes"]) == {"thrift"}
    assert status["processes"] == running(cluster) and answers(cluster.port)


def test_the_server_runs_with_the_settings_start_gives_it(cluster: Cluster) -> None:
    """The Thrift server ``spark start`` launched answers with the settings it was given (a misspelt name would be
    taken without a word and leave Spark's default): four shuffle partitions for two cores, no paths read in SQL, no
    adaptive execution, table file lists read afresh, and statements run on a pool of :data:`STATEMENT_THREADS`."""
    expected = {"spark.sql.shuffle.partitions": str(PARTITIONS_PER_CORE * cluster.cores),
                "spark.sql.runSQLOnFiles": "false", "spark.sql.adaptive.enabled": "false",
                "spark.sql.filesourceTableRelationCacheSize": "0",
                "hive.server2.async.exec.threads": str(STATEMENT_THREADS)}
    engine = open_database(cluster.url)
    with engine.connect() as connection:
        found = {name: connection.exec_driver_sql(f"SET {name}").one()[1] for name in expected}
    engine.dispose()
    assert found == expected


def test_a_standalone_master_and_worker_build_as_sqlite(tmp_path_factory: pytest.TempPathFactory,
                                                         tmp_path: Path) -> None:
    """``spark start --workers 1``: a standalone master and a worker beside the Thrift server, which status names;
    Jackpot built there (its INSERT ... SELECT statements run on the worker's executor) has the nodes, edges and
    layers it has on SQLite; started again with no workers, it stops them and runs the Thrift server alone. The
    cluster's folder has a space in its name (each Java process is told paths in it), and its logging, edited,
    is kept when it starts again."""
    standalone = Cluster(tmp_path_factory.mktemp("standalone cluster"), free_port(), workers=1)
    watcher = stop_when_gone(standalone, os.getpid())
    folder, port = ("--folder", str(standalone.folder)), ("--port", str(standalone.port))
    try:
        assert run(standalone.url, "spark", "start", *folder, *port, "--workers", "1").stdout.strip() == standalone.url
        status = json.loads(run(standalone.url, "spark", "status", *folder, *port, "--json").output)
        assert status["answers"] and set(status["processes"]) == {"master", "worker1", "thrift"}
        built = []
        for url in (sa.make_url(standalone.url).set(database="standalone").render_as_string(),
                    f"sqlite:///{tmp_path / 'reference.db'}"):
            built.append(json.loads(run(url, "build", "jackpot", *options("jackpot"), "--json").stdout))
        got, expected = built
        assert [got[key] for key in ("nodes", "edges", "layers")] == [expected[key] for key in ("nodes", "edges",
                                                                                              "layers")]
        assert expected["edges"] > 100
        logging = standalone.folder / "log4j2.properties"
        logging.write_text(logging.read_text() + "# edited\n")  # the folder's logging is the user's once written
        local = run(standalone.url, "spark", "start", *folder, *port, "--workers", "0")  # asked otherwise: restarted
        assert "runs otherwise" in local.stderr and set(running(standalone)) == {"thrift"}
        assert logging.read_text().endswith("# edited\n")
    finally:
        stopped = run(standalone.url, "spark", "stop", *folder)
        watcher.terminate()
        watcher.wait()
    assert "stopped 1 process: thrift" in stopped.output and not running(standalone)


def test_no_server_and_no_database_are_one_line_errors(cluster: Cluster) -> None:
    for url, words in ((f"spark://127.0.0.1:{free_port()}/default", "dicegraph spark start"),
                       (sa.make_url(cluster.url).set(database="not_there").render_as_string(), "no database")):
        result = CliRunner().invoke(main, ["--db", url, "graphs"])
        assert result.exit_code == 1 and words in result.output and len(result.output.strip().splitlines()) == 1


def test_a_server_that_keeps_table_file_lists_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Thrift server with Spark's default relation cache would let a connection miss what others write: it is
    refused before anything runs, saying which setting to start it with (no cluster needed: a stand-in server)."""
    from dicegraph.store.errors import DatabaseError
    from dicegraph.store.backends.spark import dialect

    class Server:
        def cursor(self) -> "Server":
            return self

        def execute(self, statement: str) -> None:
            self.said = statement

        def fetchall(self) -> list[tuple[str, str]]:
            return [(dialect.RELATION_CACHE, "1000")] if self.said.startswith("SET") else [("default",)]

        def close(self) -> None:
            pass

    monkeypatch.setattr(dialect.hive, "connect", lambda **options: Server())
    with pytest.raises(DatabaseError) as refused:
        dialect.reachable(sa.make_url("spark://127.0.0.1:10000/default"), create=False)
    assert "spark.sql.filesourceTableRelationCacheSize=0" in str(refused.value) and "\n" not in str(refused.value)
