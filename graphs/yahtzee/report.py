"""Yahtzee's additions to its report: what the simple policies lose, the published optimum, each box's average.

The generic report (:func:`dicegraph.store.report.game_report`) gives each policy's expected score over whole
games, its spread and its Monte Carlo check; :func:`analyse` adds the rest, read from the turn states' results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import OPTIMAL, StoredGraph
import dicegraph.graphs.yahtzee.boxes as boxes
from dicegraph.graphs.yahtzee.rules import last_state
from dicegraph.graphs.yahtzee.stored import average_table

PUBLISHED = {  # the published optimal expected scores (none is published for the game without any bonus)
    "on": {"value": 254.5896, "source": "Verhoeff 1999; Glenn 2006"},
    "upper": {"value": 245.87, "source": "Glenn 2006 (no Yahtzee bonus, no joker)"},
}
RULES_TEXT = {
    "on": "upper bonus, Yahtzee bonus and free-choice joker",
    "upper": "the upper bonus alone: no Yahtzee bonus, no joker",
    "off": "no bonuses, no joker",
}


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return Yahtzee's keys: ``rules``, ``losses`` (policy -> what it loses a game against the optimum),
    ``published_optimum`` (None where nothing is published) and ``average_table`` (each box's average alone)."""
    bonuses = params["bonuses"]
    values = {row["name"]: row["value"] for row in report["policies"]}
    lasts = (last_state(box, bonuses) for box in range(len(boxes.BOXES)))
    return {
        "rules": {"bonuses": bonuses, "boxes": list(boxes.BOXES)},
        "losses": {name: values[OPTIMAL] - value for name, value in values.items()},
        "published_optimum": PUBLISHED.get(bonuses),
        "average_table": average_table({key: graph.turn.state(OPTIMAL, key)[0] for key in lasts}, bonuses),
    }


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the lines Yahtzee adds to the human-readable report."""
    lines = ["", f"rules: {RULES_TEXT[report['rules']['bonuses']]}"]
    lines += [f"  {name} loses {loss:.4f} a game against the optimum"
              for name, loss in report["losses"].items() if name != OPTIMAL]
    published = report["published_optimum"]
    if published:
        lines.append(f"  published optimum {published['value']} ({published['source']})")
    lines += ["", "average score of each box alone (the optimum with that box alone open):"]
    lines += [f"  {box:<16} {value:>12.6f}" for box, value in report["average_table"].items()]
    sizes = report["graph_size"]
    lines += ["", f"graph: {sizes['turn_states']:,} turn states ({sizes['state_edges']:,} edges), one turn of "
              f"{sizes['turn_nodes']:,} nodes and {sizes['turn_edges']:,} edges joined with them "
              f"(copied into every state it would be {sizes['copied_edges']:,} edges)"]
    return lines
