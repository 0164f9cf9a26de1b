"""``dicegraph check`` on a real local Spark Thrift server (Spark's local mode, started here as ``tests/test_spark.py``
starts its own: the two modules run beside each other on two of the test run's workers): in every run, Jackpot,
Shut The Box and Pig (:data:`tests.test_spark.CHECKED_IN_EVERY_RUN`) and the test shapes no built-in game has; with
``DICEGRAPH_SPARK_CHECK_ALL=1``, every built-in game. Each check works in a database of its own on the server, on
the game's Spark parameters (:func:`tests.test_spark.spark_params`).

Every built-in game's check is not in every run for want of processors: on a warm local server they took 45 to
135 s a game (736.5 s for the nine others, 2026-12-03), and ``.ci/run`` with all of them took 40.1 minutes on this
2-processor machine (every test passed), against 28 without them. ``tests/test_spark.py`` solves each of the other
games on Spark against SQLite instead.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import dicegraph
from dicegraph.conformance import check_game
from dicegraph.database import stored_graph
from dicegraph.graphs import get_game
from dicegraph.graphs.protocol import OPTIMAL
from dicegraph.store.catalog import find_policy, policy_convergence
from dicegraph.store.db import open_database
from dicegraph.store.report import game_report
from tests.test_backends import headline
from tests.test_examples import checks_expected
from tests.test_spark import CHECKED_ON_SPARK, policy_values, solved, spark_params  # skips where Spark cannot run

GAMES = {"jackpot": {"cells": 3}}  # 275 edges, 7 layers: a whole report (build, solve, agents, distributions),
# as SQLite's


@pytest.mark.parametrize("name", CHECKED_ON_SPARK)
def test_every_tool_holds_on_spark(name: str, spark_url: str, tmp_path: Path) -> None:
    """``dicegraph check GAME --here`` on the server, on the game's Spark parameters: build, report, solve, the exact
    recursion, Monte Carlo or matches and best responses, export, show and query, compare, play and analyse, the
    explorer's pages, each holding on Spark, every check the game takes on the other backends among them
    (:func:`tests.test_examples.checks_expected`); then the
    value of every policy a solve lists there (the check's best responses besides) and how the optimum's solve
    converged (its cyclic components) as SQLite's, to 1e-12; and Jackpot's report there (build, solve, every agent
    evaluated, propagated), read again, gives every value and the optimal outcome distribution as SQLite's."""
    game = get_game(name)
    findings = check_game(game, spark_params(name), url=spark_url)
    assert findings and all(found.holds for found in findings), [found.line() for found in findings]
    assert checks_expected(game) <= {found.check for found in findings}
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
