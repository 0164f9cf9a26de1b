"""Yahtzee's report: the optimum, the simple policies and what they lose, each box's average, Monte Carlo checks."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.montecarlo import simulate, z_text
from dicegraph.graphs.protocol import Progress, StoredGraph
import dicegraph.graphs.yahtzee.boxes as boxes
import dicegraph.graphs.yahtzee.game as game
from dicegraph.graphs.yahtzee.rules import last_state
from dicegraph.graphs.yahtzee.stored import average_table, decision_array

PUBLISHED = {  # the published optimal expected scores (none is published for the game without any bonus)
    "on": {"expected_score": 254.5896, "source": "Verhoeff 1999; Glenn 2006"},
    "upper": {"expected_score": 245.87, "source": "Glenn 2006 (no Yahtzee bonus, no joker)"},
}
RULES_TEXT = {
    "on": "upper bonus, Yahtzee bonus and free-choice joker",
    "upper": "the upper bonus alone: no Yahtzee bonus, no joker",
    "off": "no bonuses, no joker",
}


def turn_report(graph: StoredGraph, params: Mapping[str, Any], simulated_games: int = 0, seed: int = 1,
                progress: Progress | None = None) -> dict[str, Any]:
    """Return Yahtzee's report: ``policies`` (expected score, sd, loss against the optimum), ``average_table``, sizes.

    ``simulated_games`` whole games per policy are played from the rules with
    the stored decisions (``monte_carlo`` of each policy).
    """
    bonuses = params["bonuses"]
    start = boxes.state_key(boxes.states(bonuses)[0], bonuses)
    averages = average_table({key: graph.turn.state("optimal", key)[0]
                              for key in (last_state(box, bonuses) for box in range(len(boxes.BOXES)))}, bonuses)
    policies: list[dict[str, Any]] = []
    for name in game.POLICIES:
        expected, moment2, _ = graph.turn.state(name, start)
        row: dict[str, Any] = {"name": name, "expected_score": expected,
                               "sd": math.sqrt(max(moment2 - expected**2, 0.0))}
        row["loss"] = policies[0]["expected_score"] - expected if policies else 0.0
        if simulated_games:
            decisions = decision_array(graph.turn.decisions(name))
            estimate = simulate(game, params, decisions, simulated_games, seed, progress)
            row["monte_carlo"] = estimate.against(expected)
        policies.append(row)
    return {
        "game": game.name,
        "graph": graph.graph_id,
        "params": json.loads(json.dumps(dict(params))),
        "rules": {"bonuses": bonuses, "boxes": list(boxes.BOXES)},
        "policies": policies,
        "published_optimum": PUBLISHED.get(bonuses),
        "average_table": averages,
        "graph_size": graph.turn.sizes(),
    }


def describe(data: Mapping[str, Any]) -> list[str]:
    """Return the human-readable report's lines."""
    bonuses = data["rules"]["bonuses"]
    lines = [f"rules: {RULES_TEXT[bonuses]}",
             "", "whole games, exact:"]
    for row in data["policies"]:
        line = f"  {row['name']:<14} expected {row['expected_score']:>12.7f}  sd {row['sd']:>10.6f}"
        if row["loss"]:
            line += f"  loses {row['loss']:.4f}"
        if "monte_carlo" in row:
            mc = row["monte_carlo"]
            line += f"   Monte Carlo ({mc['games']:,}) {mc['estimate']:.4f} +- {mc['stderr']:.4f}, z {z_text(mc['z'])}"
        lines.append(line)
    published = data["published_optimum"]
    if published:
        lines.append(f"  published optimum {published['expected_score']} ({published['source']})")
    lines += ["",
              "average score of each box alone (the optimum with that box alone open):"]
    lines += [f"  {box:<16} {value:>12.6f}" for box, value in data["average_table"].items()]
    sizes = data["graph_size"]
    lines += ["", f"graph: {sizes['turn_states']:,} turn states ({sizes['state_edges']:,} edges), one turn of "
              f"{sizes['turn_nodes']:,} nodes and {sizes['turn_edges']:,} edges joined with them "
              f"(copied into every state it would be {sizes['copied_edges']:,} edges)"]
    return lines
