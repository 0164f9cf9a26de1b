"""Can't Stop: the notebook's printed values, an independent recursion, and the stopping bound."""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections import Counter
from fractions import Fraction

import pytest
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.graphs import cant_stop, get_game
from dicegraph.graphs.errors import DicegraphError
from dicegraph.store.catalog import find_policy
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from dicegraph.store.report import game_report
from dicegraph.store.schema import node, value
from dicegraph.store.solve.layers import solve

GAME = get_game("cant-stop")
LENGTH = [0, 0, 3, 5, 7, 9, 11, 13, 11, 9, 7, 5, 3]


def notebook_gain(columns: tuple[int, ...], dice: tuple[int, ...], worth) -> Fraction:  # noqa: ANN001
    """The notebook's best_pairing, written again from its text."""
    a, b, c, d = dice
    return max(worth(x) * (x in columns) + worth(y) * (y in columns)
               for x, y in ((a + b, c + d), (a + c, b + d), (a + d, b + c)))


ONE = lambda column: Fraction(1)  # noqa: E731
PROGRESS = lambda column: Fraction(1, LENGTH[column])  # noqa: E731
ROLLS = list(itertools.product(range(1, 7), repeat=4))


def notebook_optimal(columns: tuple[int, ...], worth, cap: Fraction) -> tuple[Fraction, Fraction]:  # noqa: ANN001
    """Optimal turn worth and stopping point by plain recursion over the notebook's states, in fractions.

    No stopping bound from the theory: worths from ``cap`` on are simply banked, with ``cap``
    far past any stopping point (5 columns of progress, 60 steps).
    """
    gains = Counter(notebook_gain(columns, dice, worth) for dice in ROLLS)
    explored: dict[Fraction, Fraction] = {}

    @functools.cache
    def best(sofar: Fraction) -> Fraction:
        if sofar >= cap:
            result = sofar
        else:
            rolled = sum((best(sofar + g) * n for g, n in gains.items() if g), Fraction(0)) / len(ROLLS)
            result = max(sofar, rolled)
        explored[sofar] = result
        return result

    start = sum(worth(c) for c in columns)
    value = best(start)
    return value, min(s for s, v in explored.items() if v == s)


@pytest.fixture(scope="module")
def report() -> dict:
    return game_report(open_database("sqlite://", create=True), GAME, {"columns": "all", "worth": "progress", "slack": 0})


def test_the_notebooks_column_table_and_probabilities(report: dict) -> None:
    columns = {row["column"]: row for row in report["columns"]}
    printed = {  # the notebook's outputs
        (7, "p"): 0.6435185185185185, (7, "e_one"): 0.7129629629629629, (2, "p"): 0.13194444444444445,
        (2, "e_one"): 0.13271604938271606, (7, "e_progress"): 0.05484330484330481, (2, "e_progress"): 0.04423868312757201,
    }
    for (column, key), number in printed.items():
        assert math.isclose(columns[column][key]["float"], number, rel_tol=1e-12)
        assert float(Fraction(columns[column][key]["fraction"])) == columns[column][key]["float"]
    assert [columns[c]["length"] for c in range(2, 13)] == LENGTH[2:]
    assert float(cant_stop.p_no_bust((6, 7, 8))) == pytest.approx(0.9197530864197531, rel=1e-12)
    assert float(cant_stop.p_no_bust((2, 11, 12))) == pytest.approx(0.4382716049382716, rel=1e-12)
    assert float(cant_stop.p_no_bust((3, 5, 7, 9, 11)[:3])) < 1
    for c in range(2, 13):
        exact = Fraction(sum(1 for dice in ROLLS if notebook_gain((c,), dice, ONE) > 0), 1296)
        assert Fraction(columns[c]["p"]["fraction"]) == exact


def by_columns(report: dict, columns: tuple[int, ...], worth: str) -> dict:
    return next(t for t in report["triples"] if tuple(t["columns"]) == columns and t["worth"] == worth)


@pytest.mark.parametrize(
    ("columns", "worth", "optimal", "stopping"),
    [((6, 7, 8), "progress", 0.6579805166909175, 1.44055944055944),
     ((2, 3, 12), "one", 3, 3),
     ((2, 7, 10), "progress", 0.6134923445225983, 0.8388278388278387)],
)
def test_the_notebooks_printed_turns(report: dict, columns, worth, optimal, stopping) -> None:  # noqa: ANN001
    triple = by_columns(report, columns, worth)
    assert math.isclose(triple["optimal"], optimal, rel_tol=1e-12)
    assert math.isclose(triple["stopping_point"]["float"], stopping, rel_tol=1e-12)


@pytest.mark.parametrize(("columns", "worth"), [((6, 7, 8), "one"), ((2, 7, 10), "progress"), ((4, 6, 11), "progress"),
                                                ((3, 5, 9), "one")])
def test_an_independent_recursion_finds_the_same_optimum(report: dict, columns, worth) -> None:  # noqa: ANN001
    value, stopping = notebook_optimal(columns, *((ONE, Fraction(60)) if worth == "one" else (PROGRESS, Fraction(5))))
    triple = by_columns(report, columns, worth)
    assert math.isclose(triple["optimal"], float(value), rel_tol=1e-12)
    assert Fraction(triple["stopping_point"]["fraction"]) == stopping


@pytest.mark.parametrize(("columns", "worth"), [((6, 7, 8), "progress"), ((2, 7, 10), "one")])
def test_room_past_the_bound_changes_nothing(columns, worth) -> None:  # noqa: ANN001
    """With slack past s*, the optimum is the same and it never rolls from s* on."""
    engine = open_database("sqlite://", create=True)
    values, graphs = {}, {}
    for slack in (0, 20):
        built = build_graph(engine, GAME, {"columns": columns, "worth": worth, "slack": slack})
        with engine.begin() as connection:
            policy_id = solve(connection, built.graph_id, "max")
            root = connection.execute(sa_value(policy_id)).scalar_one()
        values[slack], graphs[slack] = root, built
    assert graphs[20].nodes > graphs[0].nodes
    assert math.isclose(values[0], values[20], rel_tol=1e-12)
    limit = cant_stop.bound(columns, worth)
    with engine.connect() as connection:
        graph_id = graphs[20].graph_id
        optimal = find_policy(connection, graph_id, "optimal").id
        rows = connection.execute(
            node.select().with_only_columns(node.c.key, value.c.value)
            .join_from(node, value, (value.c.node_id == node.c.id) & (value.c.policy_id == optimal))
            .where(node.c.graph_id == graph_id, node.c.kind == "chance")
        ).all()
    beyond = [(int(key.split(":")[1]), v) for key, v in rows if int(key.split(":")[1]) >= limit]
    assert beyond  # the slack graph has states past s*, and rolling there never beats stopping
    assert all(v <= units / cant_stop.UNITS[worth] * (1 + 1e-12) for units, v in beyond)


def sa_value(policy_id: int):  # noqa: ANN201
    return value.select().with_only_columns(value.c.value).where(value.c.policy_id == policy_id, value.c.node_id == 0)


def test_top_lists_show_exact_ties(report: dict) -> None:
    top = report["top"]
    assert top["p_no_bust"][0]["triples"] == [[6, 7, 8]]
    assert top["p_no_bust"][1]["triples"] == [[5, 7, 8], [6, 7, 9]]
    assert top["optimal"][0]["triples"] == [[2, 3, 12], [2, 11, 12]]  # mirror columns: equal up to rounding
    assert top["stopping_point"][0]["triples"] == [[6, 7, 8]]
    assert all(sum(len(e["triples"]) for e in entries) >= 30 for entries in top.values())
    assert len(report["triples"]) == 2 * 165


def test_a_column_set_that_never_busts_has_no_stopping_point() -> None:
    with pytest.raises(DicegraphError, match="never bust"):
        cant_stop.bound((2, 4, 6, 8, 10, 12), "one")


@pytest.mark.parametrize("bad", ["1,2,3", "6,6,7", "2,3,4,5", "six", ""])
def test_bad_columns_are_refused(bad: str, db_url: str) -> None:
    result = CliRunner().invoke(main, ["--db", db_url, "build", "cant-stop", "-p", f"columns={bad}"])
    assert result.exit_code == 1 and "1 to 3 distinct columns from 2..12" in result.stderr


def test_per_triple_build_solve_show(db_url: str) -> None:
    runner = CliRunner()
    built = json.loads(runner.invoke(main, ["--db", db_url, "build", "cant-stop", "-p", "columns=6,7,8",
                                            "-p", "worth=progress", "--json"]).stdout)
    solved = json.loads(runner.invoke(main, ["--db", db_url, "solve", str(built["graph_id"]), "--json"]).stdout)
    assert math.isclose(solved["value"], 0.6579805166909175, rel_tol=1e-12)
    shown = runner.invoke(main, ["--db", db_url, "show", str(built["graph_id"]), "6-7-8", "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["kind"] == "decision"
