"""School's report: the average table, Bob and the optimum over whole games, and where they part.

School is solved by :mod:`store.school` (its turn is joined with its states),
not by the generic solver, so it has a report of its own rather than an
analysis added to the generic one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from graphs import school as rules
from graphs.montecarlo import Progress, simulate
from graphs.protocol import Game
from store import school
from store.catalog import find_policy
from store.errors import NotFound
from store.load import BuildResult
from store.schema import layer, node

CONVENTION = {
    "negative": "upstream: grade k scores -k per die not showing k (totals are 105 below the positive form)",
    "positive": "positive: grade k scores +k per die showing k (totals are 105 above the upstream form)",
}

POLICIES = rules.POLICIES
SOLVE_STEPS = len(rules.POLICIES) * len(rules.STATES)  # progress: turn states solved, per policy
ensure_solved = school.ensure_solved


def report(
    engine: sa.Engine,
    game: Game,
    params: Mapping[str, Any],
    built: BuildResult,
    simulated_games: int = 0,
    seed: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Return School's report: rules, ``average_table``, ``policies`` (expected score, sd), ``graph`` sizes.

    ``built`` is the graph :func:`ensure_solved` has solved (``store.report.prepare_game``
    does both). ``simulated_games`` whole games per policy are played from the
    rules with the stored decisions.
    """
    with engine.connect() as connection:
        averages = school.average_table(connection, built.graph_id)
        policies, decisions = [], {}
        for name in rules.POLICIES:
            policy_id = school.ensure_policy(connection, built.graph_id, name)
            expected, sd = school.game_score(connection, built.graph_id, policy_id)
            row: dict[str, Any] = {"name": name, "expected_score": expected, "sd": sd}
            decisions[name] = school.decision_array(connection, built.graph_id, policy_id)
            if simulated_games:
                estimate = simulate(game, params, decisions[name], simulated_games, seed, progress)
                row["monte_carlo"] = {"games": simulated_games, "estimate": estimate.mean, "stderr": estimate.stderr,
                                      "z": estimate.z(expected)}
            policies.append(row)
        sizes = _graph_sizes(connection, built.graph_id)
    optimal, bob = decisions["optimal"], decisions["bob"]
    decided = optimal > 0
    return {
        "game": game.name,
        "graph_id": built.graph_id,
        "params": json.loads(json.dumps(dict(params))),
        "rules": {
            "straights": list(params["straights"]),
            "grades": params["grades"],
            "scores": CONVENTION[params["grades"]],
            "combinations": list(rules.COMBINATIONS),
        },
        "average_table": averages,
        "average_table_positive_grades": {
            name: value + (rules.positive_offset(c) if params["grades"] == "negative" else 0)
            for c, (name, value) in enumerate(averages.items())
        },
        "policies": policies,
        "bob_loss": policies[0]["expected_score"] - policies[1]["expected_score"],
        "disagreements": {"positions": int((decided & (optimal != bob)).sum()), "of": int(decided.sum())},
        "graph": sizes,
    }


def policy_to_play(connection: sa.Connection, graph_id: int, name: str) -> tuple[Any, float]:
    """Return policy ``name``'s decision array for the simulator and its exact expected score.

    Raises NotFound when the policy is not solved over the whole game.
    """
    policy_id = find_policy(connection, graph_id, name).id
    if not school.is_solved(connection, policy_id):
        raise NotFound(f"policy {name!r} of school is not solved over the whole game (run: dicegraph report school)")
    return school.decision_array(connection, graph_id, policy_id), school.game_score(connection, graph_id, policy_id)[0]


def _graph_sizes(connection: sa.Connection, graph_id: int) -> dict[str, int]:
    def count(table: sa.Table, condition: sa.ColumnElement[bool]) -> int:
        return connection.execute(sa.select(sa.func.count()).select_from(table).where(condition)).scalar_one()

    turn = node.c.layer >= rules.TURN_LAYER
    states = count(node, sa.and_(node.c.graph_id == graph_id, ~turn))
    turn_nodes = count(node, sa.and_(node.c.graph_id == graph_id, turn))
    spans = sa.select(layer.c.layer, layer.c.rolls + layer.c.moves).where(layer.c.graph_id == graph_id)
    by_layer = dict(connection.execute(spans).all())
    turn_edges = sum(n for layer_number, n in by_layer.items() if layer_number >= rules.TURN_LAYER)
    state_edges = sum(n for layer_number, n in by_layer.items() if layer_number < rules.TURN_LAYER)
    return {"turn_states": states, "state_edges": state_edges, "turn_nodes": turn_nodes, "turn_edges": turn_edges,
            "copied_edges": (states - 1) * turn_edges}


def describe(data: Mapping[str, Any]) -> list[str]:
    """Return the human-readable report's lines."""
    lines = [f"scores: {data['rules']['scores']}; straights {data['rules']['straights'][0]}/{data['rules']['straights'][1]}",
             "", "average score of each combination alone (the seed's method), upstream and with positive grades:"]
    for name, value in data["average_table"].items():
        lines.append(f"  {name:<16} {value:>15.10f}  {data['average_table_positive_grades'][name]:>15.10f}")
    lines += ["", "whole games, exact:"]
    for row in data["policies"]:
        line = f"  {row['name']:<8} expected {row['expected_score']:>12.6f}  sd {row['sd']:>10.6f}"
        if "monte_carlo" in row:
            mc = row["monte_carlo"]
            line += f"   Monte Carlo ({mc['games']:,}) {mc['estimate']:.4f} +- {mc['stderr']:.4f}, z {mc['z']:+.2f}"
        lines.append(line)
    disagree = data["disagreements"]
    lines += [
        f"  Bob loses {data['bob_loss']:.6f} points a game against the optimum; he decides otherwise at "
        f"{disagree['positions']:,} of {disagree['of']:,} turn positions ({100 * disagree['positions'] / disagree['of']:.2f} %).",
        "",
        f"graph: {data['graph']['turn_states']:,} turn states ({data['graph']['state_edges']:,} edges), one turn of "
        f"{data['graph']['turn_nodes']:,} nodes and {data['graph']['turn_edges']:,} edges joined with them "
        f"(copied into every state it would be {data['graph']['copied_edges']:,} edges)",
    ]
    return lines
