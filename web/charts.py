"""The explorer's charts, drawn on the server with matplotlib as SVG (text kept as text, so it can be searched).

>>> svg = values_chart([{"name": "hilo", "value": 0.08}, {"name": "optimal", "value": 0.0799}], "win probability")
>>> svg.startswith(b"<?xml") and b"optimal" in svg
True
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any


def _figure(width: float, height: float) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"
    return plt.subplots(figsize=(width, height))


def _svg(figure: Any, kind: str = "svg") -> bytes:
    """Return the figure drawn as ``kind`` (``svg``, or ``png``), and close it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format=kind, bbox_inches="tight", dpi=120)
    plt.close(figure)
    return buffer.getvalue()


def values_chart(policies: Sequence[Mapping[str, Any]], outcome: str) -> bytes:
    """Return an SVG bar chart of each evaluated policy's value at the start (``{"name", "value"}`` rows)."""
    shown = [row for row in policies if row["value"] is not None]
    figure, axes = _figure(6.5, 0.45 * len(shown) + 1.2)
    names = [row["name"] for row in shown]
    values = [row["value"] for row in shown]
    bars = axes.barh(names, values, color=["#2b7a2b" if name == "optimal" else "#7a9cc6" for name in names])
    axes.bar_label(bars, labels=[f"{value:.6g}" for value in values], padding=3, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel(outcome)
    axes.margins(x=0.2)
    return _svg(figure)


FEW_OUTCOMES = 12  # up to this many distinct payoffs, a distribution is drawn as bars side by side


def distribution_chart(distributions: Mapping[str, Sequence[Mapping[str, float]]],
                       counted: str = "payoff at the end") -> bytes:
    """Return an SVG of each policy's exact outcome distribution (policy -> ``[{"payoff", "probability"}]``): bars
    side by side, a group a payoff, when there are at most :data:`FEW_OUTCOMES` payoffs (a game won or lost has
    two), else one line of markers a policy; ``counted`` names the horizontal axis.

    >>> svg = distribution_chart({"hilo": [{"payoff": 0.0, "probability": 0.9}, {"payoff": 1.0, "probability": 0.1}]})
    >>> b"hilo" in svg and b"payoff at the end" in svg
    True
    """
    figure, axes = _figure(7.5, 3.8)
    payoffs = sorted({row["payoff"] for rows in distributions.values() for row in rows})
    if len(payoffs) <= FEW_OUTCOMES:
        width = 0.8 / max(1, len(distributions))
        for index, (name, rows) in enumerate(distributions.items()):
            chance = {row["payoff"]: row["probability"] for row in rows}
            axes.bar([at + index * width for at in range(len(payoffs))], [chance.get(p, 0.0) for p in payoffs],
                     width=width, label=name, edgecolor="black" if name == "optimal" else None)
        axes.set_xticks([at + 0.4 - width / 2 for at in range(len(payoffs))], [f"{p:g}" for p in payoffs])
    else:
        for name, rows in distributions.items():
            axes.plot([row["payoff"] for row in rows], [row["probability"] for row in rows], marker="o", markersize=3,
                      linewidth=2.2 if name == "optimal" else 1, label=name)
    axes.set_xlabel(counted)
    axes.set_ylabel("probability")
    axes.legend(fontsize=8)
    return _svg(figure)


def analysis_chart(analysis: Mapping[str, Any], kind: str = "svg") -> bytes:
    """Return a game's value over its steps (:meth:`dicegraph.Database.analyse`: the start, then each step's value
    after it), its graded moves marked and named, drawn as ``kind`` (``svg`` or ``png``).

    >>> svg = analysis_chart({"game": "pig", "start_value": 0.6, "steps": [
    ...     {"kind": "move", "label": "hold", "value_after": 0.4, "grade": "bad", "player": "first"}]})
    >>> svg.startswith(b"<?xml") and b"hold (bad)" in svg
    True
    """
    steps = analysis["steps"]
    values = [analysis["start_value"], *(step["value_after"] for step in steps)]
    figure, axes = _figure(8.0, 3.6)
    axes.plot(range(len(values)), values, color="#2b5c8a", linewidth=1.4, drawstyle="steps-post")
    for number, step in enumerate(steps, 1):
        if step["kind"] == "move" and step.get("grade"):
            axes.plot([number], [step["value_after"]], marker="o", color="#c0392b", markersize=6)
            axes.annotate(f"{step['label']} ({step['grade']})", (number, step["value_after"]), fontsize=7,
                          xytext=(4, 6), textcoords="offset points", color="#c0392b")
    axes.set_xlabel("step")
    axes.set_ylabel("value under best play (first player's view)" if "second" in {s.get("player") for s in steps}
                    else "value under best play")
    axes.set_title(f"{analysis['game']}: the value over the game, mistakes marked", fontsize=10)
    axes.margins(x=0.02)
    return _svg(figure, kind)
