"""Yahtzee's additions to its report: what the simple policies lose, the published optimum, each box's average.

The generic report (:func:`dicegraph.store.report.game_report`) gives each policy's expected score over whole
games, its spread and its Monte Carlo check; :func:`analyse` adds the rest, read from the turn states' results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import OPTIMAL, StoredGraph
from dicegraph.graphs.yahtzee.boxes import sheet_of
from dicegraph.graphs.yahtzee.rules import last_states
from dicegraph.graphs.yahtzee.stored import average_table

PUBLISHED = {  # the published optimal expected scores of whole games (none for Yahtzee without any bonus, or Yatzy)
    ("yahtzee", "on"): {"value": 254.5896, "source": "Verhoeff 1999; Glenn 2006"},
    ("yahtzee", "upper"): {"value": 245.87, "source": "Glenn 2006 (no Yahtzee bonus, no joker)"},
}
RULES_TEXT = {
    ("yahtzee", "on"): "upper bonus, Yahtzee bonus and free-choice joker",
    ("yahtzee", "upper"): "the upper bonus alone: no Yahtzee bonus, no joker",
    ("yahtzee", "off"): "no bonuses, no joker",
    ("yatzy", "on"): "Scandinavian Yatzy: the upper bonus of 50, no joker",
    ("yatzy", "off"): "Scandinavian Yatzy without the upper bonus",
}


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return Yahtzee's keys: ``rules``, ``losses`` (policy -> what it loses a game against the optimum),
    ``published_optimum`` (None where nothing is published) and ``average_table`` (each box's average alone)."""
    sheet = sheet_of(params)
    values = {row["name"]: row["value"] for row in report["policies"]}
    lasts = last_states(sheet).values()
    in_play = [sheet.boxes[box] for box in last_states(sheet)]
    return {
        "rules": {"rules": sheet.rules, "bonuses": sheet.bonuses, "boxes": in_play},
        "losses": {name: values[OPTIMAL] - value for name, value in values.items()},
        "published_optimum": PUBLISHED.get((sheet.rules, sheet.bonuses)) if sheet.playing is None else None,
        "average_table": average_table({key: graph.turn.state(OPTIMAL, key)[0] for key in lasts}, sheet),
    }


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the lines Yahtzee adds to the human-readable report."""
    rules = report["rules"]
    lines = ["", f"rules: {RULES_TEXT[rules.get('rules', 'yahtzee'), rules['bonuses']]}"]
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
