"""A game's presentation: the hooks it gives (:mod:`dicegraph.graphs.hookspecs`), gathered into one object that
the tools ask, each answer with its default when the game gives none.

>>> from dicegraph.graphs import get_game
>>> hooks = get_game("pig").hooks
>>> hooks.offered()
['analyse', 'charts', 'describe']
>>> hooks.diagrams(), hooks.advisor() is None
({}, True)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from dicegraph.graphs import hookspecs

HOOK_NAMES = tuple(name for name in vars(hookspecs) if hasattr(getattr(hookspecs, name), f"{hookspecs.PROJECT}_spec"))
WITHOUT = {  # what the tools do for a game that does not give a hook (the guide's table shows it)
    "analyse": "no keys of its own",
    "describe": "no lines",
    "diagrams": "no diagrams",
    "charts": "no charts (the explorer has no charts page)",
    "report_graphs": "no further graphs",
    "simulated_runs": "a run a policy with a simulator, played by the report",
    "advisor": "no advice page",
    "commands": "no commands of its own",
    "board": "no picture of a position (its page shows its numbers and the graph around it)",
}


def hook_problem(module: ModuleType | Any) -> str | None:
    """Return what is wrong with the hooks a game module gives, in words (None: nothing): a name of a hook given
    as anything but a function marked ``@hookimpl``, a marked function that names no hook, or one asking for an
    argument its hook does not give.

    >>> import types
    >>> hook_problem(types.SimpleNamespace(diagrams={"all": {}}))
    'diagrams is a presentation hook: give it as a function marked @hookimpl (dicegraph.graphs.hookspecs)'
    >>> hook_problem(types.SimpleNamespace(describe=hookspecs.hookimpl(lambda report, colour: [])))
    'hook describe asks for colour, which it is not given (it is given: report)'
    """
    marker = f"{hookspecs.PROJECT}_impl"
    for name in HOOK_NAMES:
        given = getattr(module, name, None)
        if given is not None and not hasattr(given, marker):
            return f"{name} is a presentation hook: give it as a function marked @hookimpl (dicegraph.graphs.hookspecs)"
    for name in dir(module):
        given = getattr(module, name, None)
        if not callable(given) or not hasattr(given, marker):
            continue
        if name not in HOOK_NAMES:
            return f"unknown hook {name!r}, marked @hookimpl (the hooks: {', '.join(HOOK_NAMES)})"
        offered = list(inspect.signature(getattr(hookspecs, name)).parameters)
        asked = [argument for argument in inspect.signature(given).parameters if argument not in offered]
        if asked:
            return (f"hook {name} asks for {', '.join(asked)}, which it is not given (it is given: "
                    f"{', '.join(offered) or 'nothing'})")
    return None


class Presentation:
    """What one game adds to the tools' presentation, through its hooks; a game that gives none gets each
    hook's default (:meth:`none`)."""

    def __init__(self, *plugins: Any):
        self._manager = pluggy.PluginManager(hookspecs.PROJECT)
        self._manager.add_hookspecs(hookspecs)
        for plugin in plugins:
            self._manager.register(plugin)
        self._manager.check_pending()  # a marked function that names no hook (hook_problem says so first)
        self._hook = self._manager.hook

    @classmethod
    def none(cls) -> Presentation:
        """Return the presentation of a game that gives no hook."""
        return cls()

    def offered(self) -> list[str]:
        """Return the names of the hooks the game gives, sorted."""
        return sorted(name for name in HOOK_NAMES if getattr(self._hook, name).get_hookimpls())

    def offers(self, name: str) -> bool:
        """Return whether the game gives hook ``name``."""
        return bool(getattr(self._hook, name).get_hookimpls())

    def analyse(self, graph: Any, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
        """Return the game's keys of its report (none by default)."""
        return self._hook.analyse(graph=graph, params=params, report=report) or {}

    def describe(self, report: Mapping[str, Any]) -> list[str]:
        """Return the lines the game adds to the human-readable report (none by default)."""
        return self._hook.describe(report=report) or []

    def diagrams(self) -> dict[str, dict[str, Any]]:
        """Return the diagrams ``report --diagrams`` draws: name -> export options (none by default)."""
        return self._hook.diagrams() or {}

    def charts(self, graph: Any, params: Mapping[str, Any], directory: Path) -> list[dict[str, Any]]:
        """Return the charts the game draws from its numbers into ``directory`` (none by default)."""
        return self._hook.charts(graph=graph, params=params, directory=directory) or []

    def report_graphs(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Return the parameters of the further graphs the report reads (none by default)."""
        return self._hook.report_graphs(params=params) or []

    def simulated_runs(self, params: Mapping[str, Any], all_matches: bool = False) -> int | None:
        """Return how many runs of games the report plays, for a game that plays them itself; None by default
        (a run a policy, played by the report)."""
        return self._hook.simulated_runs(params=params, all_matches=all_matches)

    def advisor(self) -> Any:
        """Return the game's advisor (None by default: the explorer has no advice page for it)."""
        return self._hook.advisor()

    def commands(self) -> Any:
        """Return the game's click group of its own commands (None by default)."""
        return self._hook.commands()

    def board(self, key: str, params: Mapping[str, Any]) -> str | None:
        """Return the game's picture of the position ``key`` (SVG text; None by default: no picture)."""
        return self._hook.board(key=key, params=dict(params))
