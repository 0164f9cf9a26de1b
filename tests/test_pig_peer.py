"""Pig against a peer implementation: OpenSpiel's ``pig`` game (PyPI ``open_spiel``, the ``peers`` extra).

OpenSpiel's states are seen from the seats (both scores, the turn total, the
player to move); dicegraph's from the mover. Where a roll brings the turn total
to the target, OpenSpiel's player has one move left, stop, and wins with it;
dicegraph's roll wins at once. So those decisions of OpenSpiel's are dicegraph's
``win``, and every other decision is one of dicegraph's, once per seat. Its value iteration returns seat
0's expected return, +1 for a win and -1 for a loss: ``2P - 1`` for seat 0 to
move, ``1 - 2P`` for seat 1, with ``P`` dicegraph's value of the position.
"""

from __future__ import annotations

import importlib.util
import os
from collections import defaultdict
from fractions import Fraction
from typing import Any

import pytest
import sqlalchemy as sa

from dicegraph.graphs import get_game, pig
from dicegraph.store.load import build_graph
from dicegraph.store.schema import edge, node, value
from dicegraph.store.solve.layers import solve

if importlib.util.find_spec("pyspiel") is None:  # CI installs the extra: there, a missing one fails
    if os.environ.get("CI"):
        raise RuntimeError("CI must compare with OpenSpiel: the test extra brings the peers extra")
    pytest.skip("the OpenSpiel peer tests need the peers extra: pip install -e '.[peers]'", allow_module_level=True)

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import get_all_states, value_iteration  # noqa: E402

TARGETS = [6, 20]
ROLL, STOP = "roll", "stop"  # OpenSpiel's action names; dicegraph says roll and hold


def openspiel_game(target: int) -> Any:
    """Return OpenSpiel's two-player Pig to ``target`` (a horizon far beyond any game the tests reach)."""
    return pyspiel.load_game("pig", {"winscore": target, "players": 2, "horizon": 100_000})


def openspiel_states(target: int) -> dict[str, Any]:
    """Return every state OpenSpiel reaches (decisions, rolls and ends), by its text."""
    return get_all_states.get_all_states(openspiel_game(target), depth_limit=-1, include_terminals=True,
                                         include_chance_states=True, to_string=str, stop_if_encountered=True)


def mover_view(state: Any) -> tuple[int, int, int]:
    """Return an OpenSpiel decision or roll as dicegraph sees it: (my score, the opponent's, turn total)."""
    me = state.current_player() if not state.is_chance_node() else _roller(state)
    scores = [int(points) for points in str(state).split("Scores: ")[1].split(",")[0].split()]
    total = int(str(state).split("Turn total: ")[1].split()[0])
    return scores[me], scores[1 - me], total


def _roller(state: Any) -> int:
    return int(str(state).split("Current player: ")[1].split()[0])


def stored(engine: sa.Engine, target: int) -> tuple[dict[str, str], dict[str, list[tuple[str, str, int]]], dict[str, float]]:
    """Build and solve dicegraph's Pig; return key -> kind, key -> its edges (label, where to, weight) and the
    optimum's value of each decision."""
    graph_id = build_graph(engine, get_game("pig"), {"target": target, "holds": (4,)}).graph_id
    src, dst = node.alias("src"), node.alias("dst")
    with engine.begin() as connection:
        policy_id = solve(connection, graph_id)
        kinds = dict(connection.execute(sa.select(node.c.key, node.c.kind).where(node.c.graph_id == graph_id)).all())
        edges: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
        rows = connection.execute(
            sa.select(src.c.key, edge.c.label, dst.c.key, edge.c.weight)
            .join_from(edge, src, sa.and_(src.c.graph_id == graph_id, src.c.id == edge.c.src))
            .join(dst, sa.and_(dst.c.graph_id == graph_id, dst.c.id == edge.c.dst)).where(edge.c.graph_id == graph_id))
        for key, label, to, weight in rows:
            edges[key].append((label, to, weight))
        values = dict(connection.execute(
            sa.select(node.c.key, value.c.value).join_from(value, node, sa.and_(node.c.graph_id == graph_id,
                                                                               node.c.id == value.c.node_id))
            .where(value.c.policy_id == policy_id, node.c.kind == "decision")).all())
    return kinds, edges, values


@pytest.mark.parametrize("target", TARGETS)
def test_positions_moves_and_rolls_are_openspiels(engine: sa.Engine, target: int) -> None:
    kinds, edges, _ = stored(engine, target)
    states = openspiel_states(target)
    decisions = [state for state in states.values() if not state.is_terminal() and not state.is_chance_node()]
    ours = {key for key, kind in kinds.items() if kind == "decision"}
    theirs: dict[str, int] = defaultdict(int)
    for state in decisions:
        mine, other, total = mover_view(state)
        if mine + total < target:
            theirs[pig.decision_key(mine, other, total)] += 1
            assert [state.action_to_string(a) for a in state.legal_actions()] == [ROLL, STOP]
            assert sorted(label for label, _, _ in edges[pig.decision_key(mine, other, total)]) == ["hold", "roll"]
        else:  # OpenSpiel's player can then only stop, and wins
            assert [state.action_to_string(a) for a in state.legal_actions()] == [STOP]
            assert state.child(state.legal_actions()[0]).is_terminal()
    assert set(theirs) == ours and set(theirs.values()) == {2}  # every position of ours, once for each seat
    for state in states.values():
        if not state.is_chance_node():
            continue
        mine, other, total = mover_view(state)
        where: dict[str, Fraction] = defaultdict(Fraction)
        for outcome, probability in state.chance_outcomes():
            after = state.child(outcome)
            if after.is_terminal() or (not after.is_chance_node() and sum(mover_view(after)[::2]) >= target
                                       and after.current_player() == _roller(state)):
                where[pig.WIN] += Fraction(probability).limit_denominator(6)
            else:
                seen = mover_view(after)
                where[pig.decision_key(*seen)] += Fraction(probability).limit_denominator(6)
        key = pig.decision_key(mine, other, total) + " roll"
        assert where == {to: Fraction(weight, 6) for _, to, weight in edges[key]}, key


@pytest.mark.parametrize("target", TARGETS)
def test_value_iteration_agrees_with_the_sql_optimum(engine: sa.Engine, target: int) -> None:
    """OpenSpiel's value iteration (run to a change below 1e-13) against the SQL solve, position by position."""
    _, _, values = stored(engine, target)
    found = value_iteration.value_iteration(openspiel_game(target), depth_limit=-1, threshold=1e-13, cyclic_game=True)
    states = openspiel_states(target)
    compared = 0
    for text, state in states.items():
        if state.is_terminal() or state.is_chance_node():
            continue
        mine, other, total = mover_view(state)
        if mine + total >= target:
            continue
        seat_zero = found[text]
        expected = 2 * values[pig.decision_key(mine, other, total)] - 1
        assert seat_zero == pytest.approx(expected if state.current_player() == 0 else -expected, abs=1e-9), text
        compared += 1
    assert compared == 2 * len(values)
    initial = openspiel_game(target).new_initial_state()
    assert (found[str(initial)] + 1) / 2 == pytest.approx(values[pig.decision_key(0, 0, 0)], abs=1e-9)
