"""School's report: the average table, Bob and the optimum over whole games, and where they part.

School is solved by the store's turn-joined solve (its ``turn`` hook), not by
the generic layered solver, so it has a report of its own (``turn_report``)
rather than an analysis added to the generic one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.montecarlo import simulate, z_text
from dicegraph.graphs.protocol import Progress, StoredGraph
import dicegraph.graphs.school.game as rules
from dicegraph.graphs.school.rules import LAST_STATES
from dicegraph.graphs.school.stored import average_table, decision_array

CONVENTION = {
    "negative": "upstream: grade k scores -k per die not showing k (totals are 105 below the positive form)",
    "positive": "positive: grade k scores +k per die showing k (totals are 105 above the upstream form)",
}


def turn_report(graph: StoredGraph, params: Mapping[str, Any], simulated_games: int = 0, seed: int = 1,
                progress: Progress | None = None) -> dict[str, Any]:
    """Return School's report: rules, ``average_table``, ``policies`` (expected score, sd), ``graph`` sizes.

    ``simulated_games`` whole games per policy are played from the rules with
    the stored decisions.
    """
    averages = average_table({key: graph.turn.state("optimal", key)[0]
                              for key in LAST_STATES})
    policies, decisions = [], {}
    for name in rules.POLICIES:
        expected, moment2, _ = graph.turn.state(name, rules.state_key(0))
        row: dict[str, Any] = {"name": name, "expected_score": expected, "sd": math.sqrt(max(moment2 - expected**2, 0.0))}
        decisions[name] = decision_array(graph.turn.decisions(name))
        if simulated_games:
            estimate = simulate(rules, params, decisions[name], simulated_games, seed, progress)
            row["monte_carlo"] = estimate.against(expected)
        policies.append(row)
    optimal, bob = decisions["optimal"], decisions["bob"]
    decided = optimal > 0
    return {
        "game": rules.name,
        "graph": graph.graph_id,
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
        "graph_size": graph.turn.sizes(),
    }


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
            line += f"   Monte Carlo ({mc['games']:,}) {mc['estimate']:.4f} +- {mc['stderr']:.4f}, z {z_text(mc['z'])}"
        lines.append(line)
    disagree = data["disagreements"]
    lines += [
        f"  Bob loses {data['bob_loss']:.6f} points a game against the optimum; he decides otherwise at "
        f"{disagree['positions']:,} of {disagree['of']:,} turn positions ({100 * disagree['positions'] / disagree['of']:.2f} %).",
        "",
        f"graph: {data['graph_size']['turn_states']:,} turn states ({data['graph_size']['state_edges']:,} edges), one turn of "
        f"{data['graph_size']['turn_nodes']:,} nodes and {data['graph_size']['turn_edges']:,} edges joined with them "
        f"(copied into every state it would be {data['graph_size']['copied_edges']:,} edges)",
    ]
    return lines
