"""Jackpot: the stored graph and the SQL solver against the seed and exact fractions."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest
import sqlalchemy as sa

from dicegraph.graphs import jackpot
from dicegraph.store.catalog import find_policy, list_policies, resolve_graph, stored_choices
from dicegraph.store.db import open_database
from dicegraph.store.propagate import outcome_distribution
from dicegraph.store.schema import layer, node, value

SEED_CALCULATED_PERCENT = {  # the seed's CALCULATED table (win %), to 4 decimals
    "min": 1.3306, "max": 4.7706, "first": 1.3105, "last": 5.2248, "hilo": 7.9855, "hilo2": 7.9855,
}
ROLLS = [(i, j) for i in range(1, 7) for j in range(1, 7)]


def exact_win(agent: str | None, cells: int = 9) -> Fraction:
    """Win probability as a Fraction, straight from the rules (no graph, no SQL).

    ``agent`` None means the best choice at every roll.
    """
    full = (1 << cells) - 1

    @functools.cache
    def win(up: int) -> Fraction:
        if up == full:
            return Fraction(1)
        total = Fraction(0)
        for i, j in ROLLS:
            offered = [c for c in (i, j, i + j) if c <= cells and not up >> (c - 1) & 1]
            if not offered:
                continue
            if agent is None:
                total += max(win(up | 1 << (c - 1)) for c in offered)
            else:
                total += win(up | 1 << (jackpot.AGENTS[agent](offered, cells) - 1))
        return total / 36

    return win(0)


def stored_values(url: str) -> dict[str, float]:
    with open_database(url).connect() as connection:
        return {row["name"]: row["value"] for row in list_policies(connection, 1)}


def test_seed_calculated_table(jackpot_db: str) -> None:
    values = stored_values(jackpot_db)
    for agent, percent in SEED_CALCULATED_PERCENT.items():
        assert round(100 * values[agent], 4) == percent


@pytest.mark.parametrize("agent", [*jackpot.AGENTS, None])
def test_win_probability_matches_exact_fraction(jackpot_db: str, agent: str | None) -> None:
    stored = stored_values(jackpot_db)["optimal" if agent is None else agent]
    assert math.isclose(stored, float(exact_win(agent)), rel_tol=1e-12)


def test_optimal_beats_hilo_only_slightly(jackpot_db: str) -> None:
    """The seed calls HiLo optimal; the exact numbers say it is close but not."""
    optimal, hilo = exact_win(None), exact_win("hilo")
    assert optimal > hilo
    values = stored_values(jackpot_db)
    assert math.isclose(values["optimal"] - values["hilo"], float(optimal - hilo), rel_tol=1e-9)


def test_layer_sizes_are_binomial(jackpot_db: str) -> None:
    positions = sa.select(node.c.layer, sa.func.count()).where(
        node.c.graph_id == 1, node.c.kind != "decision", ~node.c.key.contains("/")
    ).group_by(node.c.layer).order_by(node.c.layer)
    with open_database(jackpot_db).connect() as connection:
        sizes = [count for _, count in connection.execute(positions)]
        layers = connection.execute(sa.select(sa.func.count()).select_from(layer).where(layer.c.graph_id == 1)).scalar()
    assert sizes == [math.comb(9, k) for k in range(10)]
    assert sum(sizes) == 512
    assert layers == 19


def test_optimal_at_least_as_good_as_every_agent_everywhere(jackpot_db: str) -> None:
    with open_database(jackpot_db).connect() as connection:
        best = find_policy(connection, 1, "optimal").id
        agent_value, optimal_value = value.alias("agent"), value.alias("best")
        worse_than_agent = connection.execute(
            sa.select(sa.func.count())
            .select_from(agent_value.join(optimal_value, optimal_value.c.node_id == agent_value.c.node_id))
            .where(optimal_value.c.policy_id == best, agent_value.c.policy_id != best,
                   optimal_value.c.value < agent_value.c.value - 1e-12)
        ).scalar()
        compared = connection.execute(sa.select(sa.func.count()).select_from(value).where(value.c.policy_id != best)).scalar()
    assert compared == 6 * 16197
    assert worse_than_agent == 0


@pytest.mark.parametrize("policy", ["hilo", "optimal"])
def test_distribution_is_the_win_probability(jackpot_db: str, policy: str) -> None:
    with open_database(jackpot_db).connect() as connection:
        chosen = find_policy(connection, 1, policy)
        distribution = outcome_distribution(connection, chosen.id, 1)
    assert set(distribution) == {0.0, 1.0}
    assert math.isclose(sum(distribution.values()), 1.0, rel_tol=1e-12)
    assert math.isclose(distribution[1.0], float(exact_win(None if policy == "optimal" else policy)), rel_tol=1e-12)


def test_first_rolls_offering_cell_four(jackpot_db: str) -> None:
    """The seed says 15 rolls offer cell 4: its table's 6 + 6 + 3, which counts 4-4 twice. 14 do."""
    offering = [roll for roll in jackpot.ROLLS if 4 in jackpot.offered_cells(roll, 0, 9)]
    table_column = sum((i == 4) + (j == 4) + (i + j == 4) for i, j in jackpot.ROLLS)
    assert table_column == 15 and len(offering) == table_column - 1
    hilo_flips = [roll for roll in offering if jackpot.AGENTS["hilo"](jackpot.offered_cells(roll, 0, 9), 9) == 4]
    with open_database(jackpot_db).connect() as connection:
        stored_offers = connection.execute(
            sa.text("SELECT COUNT(*) FROM moves WHERE graph = 1 AND from_key LIKE '0/%' AND move = 'flip 4'")
        ).scalar()
        hilo = find_policy(connection, 1, "hilo").id
        reach = connection.execute(
            sa.select(value.c.reach).select_from(value.join(node, sa.and_(node.c.graph_id == 1, node.c.id == value.c.node_id)))
            .where(value.c.policy_id == hilo, node.c.key == str(jackpot.cell_bit(4)))
        ).scalar_one()
    assert stored_offers == len(offering)
    assert math.isclose(reach, len(hilo_flips) / 36, rel_tol=1e-12)


@pytest.mark.parametrize("cells", [2, 5, 12])
def test_other_board_sizes(engine: sa.Engine, cells: int) -> None:
    from dicegraph.graphs import get_game
    from dicegraph.store.report import game_report

    report = game_report(engine, get_game("jackpot"), {"cells": cells})
    values = {row["name"]: row["value"] for row in report["policies"]}
    assert math.isclose(values["optimal"], float(exact_win(None, cells)), rel_tol=1e-12)
    assert math.isclose(values["hilo"], float(exact_win("hilo", cells)), rel_tol=1e-12)


def test_hilo_and_hilo2_choose_alike_everywhere(jackpot_db: str) -> None:
    """The seed's two HiLo agents are one policy: a roll offers at most one cell above 6 (the sum)."""
    with open_database(jackpot_db, read_only=True).connect() as connection:
        graph = resolve_graph(connection, "jackpot")
        hilo, hilo2 = (stored_choices(connection, find_policy(connection, graph.id, name).id) for name in ("hilo", "hilo2"))
    decisions = sum(1 for index in range(511) for roll in jackpot.ROLLS if jackpot.offered_cells(roll, index, 9))
    assert len(hilo) == decisions and hilo == hilo2
