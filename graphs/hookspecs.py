"""The hooks through which a game adds to the tools' presentation: one page, as Datasette's ``hookspecs.py``.

A game module declares its model (:class:`dicegraph.graphs.spec.GameSpec`: name, parameters, players, loops,
objective, rules, agents); a game that declares only that gets every tool. What it adds to reports, pages,
charts, diagrams, advisors and commands it gives as functions named after the hooks below, each marked with
:data:`hookimpl`, defined in (or imported into) the game's module::

    from dicegraph.graphs.hookspecs import hookimpl

    @hookimpl
    def describe(report):
        return [f"the optimum scores {report['policies'][-1]['value']:.3f}"]

A hook takes any of its arguments, by name (pluggy calls it with those it asks for). Registration checks each
one against its specification here; a function of a hook's name that is not marked, or one asking for an
argument its hook does not give, refuses the game in one line. docs/hooks.md lists them, generated from this
module (``python -m tests.guide_tables``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy

PROJECT = "dicegraph"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec(firstresult=True)
def analyse(graph: Any, params: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """Return the report's keys of the game's own, asked of the stored graph.

    ``graph`` is a :class:`dicegraph.graphs.protocol.StoredGraph` (values, reaches, choices, distributions and
    matches by key; a turn stored once through its ``turn``; the report's Monte Carlo as ``graph.simulation``),
    ``report`` the generic report so far. Pig's matches, School's averages and Bob's loss come from here.
    """


@hookspec(firstresult=True)
def describe(report: dict[str, Any]) -> list[str]:
    """Return the lines the human-readable report prints after its table of policies, from the report's JSON."""


@hookspec(firstresult=True)
def diagrams() -> dict[str, dict[str, Any]]:
    """Return the pictures ``report --diagrams DIR`` draws of the graph: name -> export options (``view``,
    ``layers``, ``params`` for a graph with other parameters), drawn as ``<game>-<name>.png``."""


@hookspec(firstresult=True)
def charts(graph: Any, params: dict[str, Any], directory: Path) -> list[dict[str, Any]]:
    """Return the charts drawn from the game's numbers into ``directory`` (PNGs), each ``{"file", "title"}``:
    ``report --diagrams`` and the explorer's charts page draw them (Pig's hold boundary)."""


@hookspec(firstresult=True)
def report_graphs(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the parameters of further graphs of the game its report reads (built and solved before
    ``analyse``, which reaches them through ``graph.other(params)``)."""


@hookspec(firstresult=True)
def simulated_runs(params: dict[str, Any], all_matches: bool) -> int:
    """Return how many runs of ``-n`` games the report plays, for its progress; a game giving it plays them
    itself, in ``analyse`` (``graph.simulation``), instead of one run a policy (the race's matches)."""


@hookspec(firstresult=True)
def advisor() -> Any:
    """Return the game's :class:`dicegraph.graphs.advice.Advisor`: what the explorer's advice page asks about a
    moment of play and how the game answers from a solved graph."""


@hookspec(firstresult=True)
def commands() -> Any:
    """Return a click group of the game's own commands (advisors, exports), mounted by the CLI under the
    game's name; they reach the store through :mod:`dicegraph.graphs.commands`."""


@hookspec(firstresult=True)
def board(key: str, params: dict[str, Any]) -> str | None:
    """Return a picture of the position ``key`` as the game's players see it (an SVG document as text: the
    bear-off's points and checkers), or None where the game draws none; the explorer's position page shows it
    above the position's numbers."""
