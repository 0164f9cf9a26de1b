"""School's additions to its report: the average table, where Bob and the optimum part, and how far he is from it.

The generic report (:func:`dicegraph.store.report.game_report`) gives each policy's expected score over whole
games, its spread and its Monte Carlo check; :func:`analyse` adds the seed's table and Bob's comparison, read
from the turn states' results (``graph.turn``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import OPTIMAL, StoredGraph
import dicegraph.graphs.school.game as rules
from dicegraph.graphs.school.rules import last_states
from dicegraph.graphs.school.stored import average_table, decision_array

CONVENTION = {
    "negative": "upstream: grade k scores -k per die not showing k (totals are {offset} below the positive form)",
    "positive": "positive: grade k scores +k per die showing k (totals are {offset} above the upstream form)",
}


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return School's keys: ``rules``, ``average_table`` (each combination's average alone, the seed's method),
    ``average_table_positive_grades``, ``bob_loss`` (what Bob loses a game against the optimum) and
    ``disagreements`` (the turn positions where he decides otherwise, of those decided)."""
    first = rules.first_used(params)
    averages = average_table({key: graph.turn.state(OPTIMAL, key)[0] for key in last_states(first).values()}, first)
    values = {row["name"]: row["value"] for row in report["policies"]}
    optimal, bob = (decision_array(graph.turn.decisions(name)) for name in rules.POLICIES)
    decided = optimal > 0
    return {
        "rules": {
            "straights": list(params["straights"]),
            "grades": params["grades"],
            "scores": CONVENTION[params["grades"]].format(offset=sum(
                rules.positive_offset(c) for c in range(len(rules.COMBINATIONS)) if not first >> c & 1)),
            "combinations": [c for i, c in enumerate(rules.COMBINATIONS) if not first >> i & 1],
        },
        "average_table": averages,
        "average_table_positive_grades": {
            name: value + (rules.positive_offset(rules.COMBINATIONS.index(name)) if params["grades"] == "negative"
                           else 0)
            for name, value in averages.items()
        },
        "bob_loss": values[OPTIMAL] - values["bob"],
        "disagreements": {"positions": int((decided & (optimal != bob)).sum()), "of": int(decided.sum())},
    }


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the lines School adds to the human-readable report."""
    lines = ["", f"scores: {report['rules']['scores']}; straights {report['rules']['straights'][0]}/"
             f"{report['rules']['straights'][1]}",
             "", "average score of each combination alone (the seed's method), upstream and with positive grades:"]
    for name, value in report["average_table"].items():
        lines.append(f"  {name:<16} {value:>15.10f}  {report['average_table_positive_grades'][name]:>15.10f}")
    disagree = report["disagreements"]
    sizes = report["graph_size"]
    lines += [
        "",
        f"Bob loses {report['bob_loss']:.6f} points a game against the optimum; he decides otherwise at "
        f"{disagree['positions']:,} of {disagree['of']:,} turn positions "
        f"({100 * disagree['positions'] / disagree['of']:.2f} %).",
        "",
        f"graph: {sizes['turn_states']:,} turn states ({sizes['state_edges']:,} edges), one turn of "
        f"{sizes['turn_nodes']:,} nodes and {sizes['turn_edges']:,} edges joined with them "
        f"(copied into every state it would be {sizes['copied_edges']:,} edges)",
    ]
    return lines
