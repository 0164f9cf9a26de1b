"""5000's scoring rules against the seed's exact distributions (groundwork for the turn graph)."""

from __future__ import annotations

import itertools

import pytest

from dicegraph.graphs.five_thousand import distribution, score

SEED = {  # the seed's X_1..X_3, counts over 6**n
    1: {0: 4, 50: 1, 100: 1},
    2: {0: 16, 50: 8, 100: 9, 150: 2, 200: 1},
    3: {0: 60, 50: 48, 100: 60, 150: 24, 200: 16, 250: 3, 300: 1, 400: 1, 500: 1, 600: 1, 1000: 1},
}


@pytest.mark.parametrize("dice", [1, 2, 3])
def test_the_seeds_distributions(dice: int) -> None:
    assert distribution(dice) == SEED[dice]


@pytest.mark.parametrize("dice", [1, 2, 3, 4, 5])
def test_distributions_count_every_ordered_roll(dice: int) -> None:
    counts = distribution(dice)
    assert sum(counts.values()) == 6**dice
    brute: dict[int, int] = {}
    for roll in itertools.product(range(1, 7), repeat=dice):
        brute[score(roll)] = brute.get(score(roll), 0) + 1
    assert counts == dict(sorted(brute.items()))


def test_the_rules_examples() -> None:
    assert score((1, 1, 1, 1)) == 1100 and score((2, 2, 2, 2)) == 200 and score((5, 5, 5, 5, 1)) == 650


import math  # noqa: E402
from fractions import Fraction  # noqa: E402

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.dice import sorted_rolls  # noqa: E402
from dicegraph.graphs.five_thousand import DICE, bank_bound, mean, scoring_units  # noqa: E402
from dicegraph.store.catalog import root_value  # noqa: E402
from dicegraph.store.db import open_database  # noqa: E402
from dicegraph.store.load import build_graph  # noqa: E402
from dicegraph.store.report import game_report  # noqa: E402
from dicegraph.store.schema import node, value  # noqa: E402
from dicegraph.store.solve.layers import solve  # noqa: E402

GAME = get_game("5000")


@pytest.fixture(scope="module")
def report() -> dict:
    return game_report(open_database("sqlite://", create=True), GAME, {"slack": 0}, simulated_games=200_000, seed=3)


def threshold_value(threshold: int) -> Fraction:
    """Threshold agent's expected turn, from the rules, in fractions: hot dice make the only loop (back to 5 dice).

    With its moves independent of the total, the final score from (n dice, total t) is A_n t + B_n.
    Fewer dice only lead to fewer dice or to 5 (hot dice), so A_n, B_n are affine in (A_5, B_5), solved last.
    """
    coefficients: dict[int, tuple[tuple[Fraction, Fraction], tuple[Fraction, Fraction, Fraction]]] = {}
    for n in range(1, DICE + 1):  # A_n = a0 + a5 A_5 ; B_n = b0 + b5a A_5 + b5 B_5
        a0 = a5 = b0 = b5a = b5 = Fraction(0)
        for roll, weight in sorted_rolls(n):
            units = scoring_units(roll)
            points = score(roll)
            if not points:
                continue
            p = Fraction(weight, 6**n)
            left = n - sum(len(u) for u in units)
            rolls = (threshold <= DICE) if left == 0 else (left >= threshold)
            if not rolls:
                a0 += p
                b0 += p * points
                continue
            after = left or DICE
            if after == DICE:
                a5 += p
                b5a += p * points
                b5 += p
            else:
                (pa0, pa5), (pb0, pb5a, pb5) = coefficients[after]
                a0 += p * pa0
                a5 += p * pa5
                b0 += p * (pa0 * points + pb0)
                b5a += p * (pa5 * points + pb5a)
                b5 += p * pb5
        coefficients[n] = ((a0, a5), (b0, b5a, b5))
    (a0, a5), (b0, b5a, b5) = coefficients[DICE]
    a_five = a0 / (1 - a5) if a5 != 1 else Fraction(0)
    return (b0 + b5a * a_five) / (1 - b5) if b5 != 1 else Fraction(0)


@pytest.mark.parametrize("threshold", [2, 3, 6])
def test_threshold_policies_against_fractions(report: dict, threshold: int) -> None:
    policies = {row["name"]: row for row in report["policies"]}
    exact = threshold_value(threshold)
    assert math.isclose(policies[f"threshold-{threshold}"]["expected"], float(exact), rel_tol=1e-12)
    if threshold == 6:
        assert exact == mean(5)  # never rolls again: one roll of five dice


def test_monte_carlo_within_four_standard_errors(report: dict) -> None:
    for row in report["policies"]:
        assert abs(row["monte_carlo"]["z"]) < 4, row["name"]


def test_the_optimum_beats_every_threshold_and_keeps_partially(report: dict) -> None:
    policies = {row["name"]: row for row in report["policies"]}
    assert all(policies["optimal"]["expected"] > row["expected"] for name, row in policies.items() if name != "optimal")
    assert report["partial_keeps"]["count"] > 0
    assert all(0 <= row["p_zero"] <= 1 and row["sd"] >= 0 for row in report["policies"])
    assert set(report["bank_thresholds"]) == {"1", "2", "3", "4", "5"}
    assert all(sum(map(int, d["counts"].values())) == d["total"] for d in report["distributions"].values())


def test_room_past_the_bank_bound_changes_nothing() -> None:
    engine = open_database("sqlite://", create=True)
    roots = {}
    for slack in (0, 6):
        built = build_graph(engine, GAME, {"slack": slack})
        with engine.begin() as connection:
            policy_id = solve(connection, built.graph_id, "max")
            roots[slack] = (root_value(connection, policy_id), built.graph_id, policy_id)
    assert math.isclose(roots[0][0], roots[6][0], rel_tol=1e-12)
    _, graph_id, policy_id = roots[6]
    with engine.connect() as connection:
        states = connection.execute(
            node.select().with_only_columns(node.c.key, value.c.value)
            .join_from(node, value, (value.c.node_id == node.c.id) & (value.c.policy_id == policy_id))
            .where(node.c.graph_id == graph_id, node.c.kind == "chance")
        ).all()
    past = [(int(key.split("/")[1]), worth) for key, worth in states if int(key.split("/")[1]) >= bank_bound()]
    assert past and all(worth <= total * (1 + 1e-12) for total, worth in past)  # rolling there never beats banking


def test_unknown_policy_is_refused(db_url: str) -> None:
    from click.testing import CliRunner

    from dicegraph.cli import main

    runner = CliRunner()
    assert runner.invoke(main, ["--db", db_url, "build", "5000"]).exit_code == 0
    result = runner.invoke(main, ["--db", db_url, "simulate", "5000", "--policy", "threshold-7", "-n", "10"])
    assert result.exit_code == 1 and "no policy 'threshold-7'" in result.stderr and "threshold-6" in result.stderr
