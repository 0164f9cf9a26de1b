"""5000: the seed's roll distributions, every policy's exact turn, and what the optimum does differently."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import dicegraph.graphs.five_thousand.game as rules
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import TIE, StoredGraph, mean_and_spread

EXAMPLES = 10


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``distributions``, ``policies`` (expected, p_zero, sd), ``bank_thresholds`` and ``partial_keeps``."""
    return {
        "distributions": {
            str(n): {"counts": {str(k): v for k, v in rules.distribution(n).items()}, "total": 6**n,
                     "mean": float(rules.mean(n))}
            for n in range(1, rules.DICE + 1)
        },
        "policies": [{**row, **_policy(graph, row)} for row in report["policies"]],
        "bank_thresholds": _bank_thresholds(graph),
        "partial_keeps": _partial_keeps(graph),
    }


def _policy(graph: StoredGraph, row: Mapping[str, Any]) -> dict[str, Any]:
    """Expected score (the root value), P(score 0) and standard deviation from the exact outcome distribution."""
    distribution = graph.distribution(row["name"])
    return {"name": row["name"], "expected": row["value"], "p_zero": distribution.get(0.0, 0.0),
            "sd": mean_and_spread(distribution)[1]}


def _bank_thresholds(graph: StoredGraph) -> dict[str, int]:
    """Per number of dice about to be rolled: the smallest total at which the optimal policy banks instead.

    Banking at total ``t`` rather than rolling ``n`` dice is right where the
    state (``n`` dice, ``t``) is worth no more than ``t``; past the bank bound
    every state banks.
    """
    lowest = {n: math.ceil(rules.bank_bound() / rules.STEP) * rules.STEP for n in range(1, rules.DICE + 1)}
    for key, worth in graph.values("optimal", kind="chance").items():
        dice, total = int(key.split("d/")[0]), int(key.split("/")[1])
        if worth <= total * (1 + TIE) and total > 0:
            lowest[dice] = min(lowest[dice], total)
    return {str(n): t for n, t in sorted(lowest.items())}


def _partial_keeps(graph: StoredGraph) -> dict[str, Any]:
    """First-roll outcomes where the optimal policy sets aside fewer than all its scoring dice."""
    found = []
    first_roll = f"{rules.DICE}d/0/"
    for key, move in sorted(graph.choices("optimal").items()):
        if not key.startswith(first_roll):
            continue
        roll = tuple(int(d) for d in key.split("/")[2].split("-"))
        kept, _ = rules.parse_move(move.label)
        if kept != rules.selections(roll)[0]:
            found.append({"roll": rules.roll_text(roll), "move": move.label,
                          "all_scoring": rules.roll_text(rules.selections(roll)[0])})
    return {"count": len(found), "examples": found[:EXAMPLES]}


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the answer to the seed's TODO: how much better the optimum is, and what it does differently."""
    policies = {row["name"]: row for row in report["policies"]}
    best = max((row for name, row in policies.items() if name != "optimal"), key=lambda row: row["expected"])
    optimal = policies["optimal"]
    gain = optimal["expected"] - best["expected"]
    keeps, thresholds = report["partial_keeps"], report["bank_thresholds"]
    lines = ["", "policy       expected    P(score 0)  sd"]
    lines += [f"{row['name']:<12} {row['expected']:10.4f}  {row['p_zero']:10.6f}  {row['sd']:8.3f}" for row in policies.values()]
    lines.append("")
    lines.append(f"The optimum expects {optimal['expected']:.4f} points a turn, {gain:.4f} more than the best threshold "
                 f"strategy ({best['name']}, {best['expected']:.4f}): {100 * gain / best['expected']:.1f} % more.")
    lines.append("It banks according to the total and the dice left, not the dice alone: with n dice to roll it banks "
                 "from a total of " + ", ".join(f"{t} (n={n})" for n, t in thresholds.items()) + ".")
    examples = "; ".join(f"{e['roll']}: {e['move']}" for e in keeps["examples"][:4])
    lines.append(f"On {keeps['count']} of the 252 first-roll outcomes it sets aside fewer than all its scoring dice "
                 f"(the seed's question: yes), e.g. {examples}.")
    lines.append("Exact distributions of one roll (X_1..X_5) are in --json; the seed's sampled threshold results "
                 "(7.0, 230.5, 298.5, 290.0, 250.1, 233.4) came from a faulty random source.")
    return lines
