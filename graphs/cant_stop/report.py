"""Can't Stop: the notebook's tables and top lists, for all 165 triples and both worths, from stored graphs.

The one-roll figures (``p``, expected gains) are exact fractions from the
rules (``graphs/cant_stop/game.py``). ``optimal`` and ``stopping_point`` come from
the two stored all-triples graphs (one per worth), solved in one set-based
pass each: ``optimal`` is the value of a triple's start, ``stopping_point``
the smallest worth at which the optimal policy stops among those it reaches
(the notebook's smallest ``sofar`` whose value is ``sofar``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import dicegraph.graphs.cant_stop.game as cant_stop
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import TIE, StoredGraph

TOP = 30


def _all_triples(worth: str) -> dict[str, Any]:
    return {"columns": cant_stop.ALL, "worth": worth, "slack": 0}


@hookimpl
def report_graphs(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return the parameters of the two all-triples graphs (one per worth) the report reads."""
    return [_all_triples(worth) for worth in cant_stop.WORTHS]


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``columns`` (the notebook's first table), ``triples`` and ``top`` (its lists)."""
    solved = {worth: _solved_triples(graph.other(_all_triples(worth)), worth) for worth in cant_stop.WORTHS}
    triples = []
    for columns in cant_stop.TRIPLES:
        for worth in cant_stop.WORTHS:
            optimal, stopping = solved[worth][cant_stop.triple_key(columns)]
            triples.append({
                "columns": list(columns), "worth": worth,
                "p_no_bust": _exact(cant_stop.p_no_bust(columns)),
                "expected_gain": _exact(cant_stop.expected_gain(columns, worth)),
                "optimal": optimal, "stopping_point": _exact(stopping),
            })
    return {"columns": _column_table(), "triples": triples, "top": _top_lists(triples)}


def _exact(value: Fraction) -> dict[str, Any]:
    return {"fraction": str(value), "float": float(value)}


def _column_table() -> list[dict[str, Any]]:
    return [
        {"column": c, "p": _exact(cant_stop.p_no_bust((c,))), "e_one": _exact(cant_stop.expected_gain((c,), "one")),
         "e_progress": _exact(cant_stop.expected_gain((c,), "progress")), "length": cant_stop.LENGTHS[c]}
        for c in range(2, 13)
    ]


def _solved_triples(graph: StoredGraph, worth: str) -> dict[str, tuple[float, Fraction]]:
    """Triple key -> (optimal value, stopping point) from the stored all-triples graph of ``worth``.

    The triples' starts are layer 1; the stopping point is the smallest worth
    of a ``.../stop`` terminal the optimal policy reaches.
    """
    lowest: dict[str, int] = {}
    for key in graph.reaches("optimal", kind="terminal"):
        if key.endswith("/stop"):
            prefix, units = key.split(":")[0], int(key.split(":")[1].split("/")[0])
            lowest[prefix] = min(units, lowest.get(prefix, units))
    return {key: (v, Fraction(lowest[key], cant_stop.UNITS[worth])) for key, v in graph.values("optimal", layer=1).items()}


def _top_lists(triples: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The notebook's five lists, best first, equal values (exact, or within 1e-12 for solves) as one entry."""
    by = {
        "p_no_bust": ("one", lambda t: Fraction(t["p_no_bust"]["fraction"])),
        "expected_gain_one": ("one", lambda t: Fraction(t["expected_gain"]["fraction"])),
        "expected_gain_progress": ("progress", lambda t: Fraction(t["expected_gain"]["fraction"])),
        "optimal": ("progress", lambda t: t["optimal"]),
        "stopping_point": ("progress", lambda t: Fraction(t["stopping_point"]["fraction"])),
    }
    return {name: _ranked([t for t in triples if t["worth"] == worth], key) for name, (worth, key) in by.items()}


def _ranked(triples: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for triple in sorted(triples, key=lambda t: (-key(t), t["columns"])):
        score = key(triple)
        if entries and _same(entries[-1]["key"], score):
            entries[-1]["triples"].append(triple["columns"])
        elif sum(len(e["triples"]) for e in entries) >= TOP:
            break
        else:
            entries.append({"key": score, "triples": [triple["columns"]]})
    return [{"value": float(e["key"]), **({"fraction": str(e["key"])} if isinstance(e["key"], Fraction) else {}),
             "triples": e["triples"]} for e in entries]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    return abs(a - b) <= TIE * max(abs(a), abs(b))


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the notebook's column table and the heads of its lists, exact."""
    lines = ["", " c  P(c)   E(c) one  E(c) progress  length"]
    for row in report["columns"]:
        lines.append(f"{row['column']:2}  {row['p']['float']:5.3f}  {row['e_one']['float']:8.4f}  "
                     f"{row['e_progress']['float']:13.5f}  {row['length']:6}")
    names = {"p_no_bust": "P(no bust)", "expected_gain_one": "E(one-roll gain), one",
             "expected_gain_progress": "E(one-roll gain), progress", "optimal": "optimal turn, progress",
             "stopping_point": "stopping point, progress"}
    for key, title in names.items():
        heads = report["top"][key][:5]
        text = "; ".join(f"{entry['value']:.6f} " + " = ".join("(" + ",".join(map(str, t)) + ")" for t in entry["triples"])
                         for entry in heads)
        lines.append(f"top by {title}: {text}")
    return lines
