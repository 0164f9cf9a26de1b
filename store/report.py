"""A game's headline numbers: build if needed, solve, evaluate every policy; and its charts and diagrams.

One report is one pass: the graphs it reads (the game's, those its ``report_graphs`` and its diagrams name) are
built where missing and solved once each (:class:`ReportGraphs`), and the table, the charts and the diagrams read
the same solved graph.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.montecarlo import can_simulate
from dicegraph.graphs.paired import Target
from dicegraph.graphs.protocol import OPTIMAL, Game, Progress, Simulation
from dicegraph.graphs.spec import policy_names
from dicegraph.store.catalog import find_policy, graph_by_id, has_cycles, list_policies
from dicegraph.store.load import BuildResult, build_graph, canonical_params
from dicegraph.store.propagate import mean_payoff, outcome_distribution
from dicegraph.store.output import check_directory, drawn_into
from dicegraph.store.simulation import monte_carlo
from dicegraph.store.solve.entry import ensure_solved, keeps_reaches, response_names, target_refusal
from dicegraph.store.sweep import target_chances
from dicegraph.store.view import GraphView
from dicegraph.store.defaults import DEFAULT_SEED



def game_report(
    engine: sa.Engine,
    game: Game,
    params: Mapping[str, Any],
    on_build: Callable[[BuildResult], None] | None = None,
    simulated_games: int = 0,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
    layers: Progress | None = None,
    matches: Progress | None = None,
    graphs: ReportGraphs | None = None,
    all_matches: bool = False,
    targets: bool = False,
    distributions: bool = False,
) -> dict[str, Any]:
    """Return the game's report: every policy's value, and the optimal outcome distribution.

    Builds the graph and solves it when the database does not have them yet
    (:func:`prepare_game`). Where the solve keeps it, each policy has its ``sd`` (a repeating game's turn
    policies); a repeating game has no outcome distribution (its solve keeps no reach a position), and its
    ``graph_size`` adds the turn's (:meth:`dicegraph.store.view.GraphView.stored_sizes`). A game for two stored
    as rows has its agents' best ``responses`` (:meth:`dicegraph.store.view.GraphView.response`), which the
    ``policies`` leave out. The game's ``analyse``
    adds its own keys. With ``simulated_games``, and a simulator for the game, each policy also
    gets a ``monte_carlo`` estimate (``dicegraph.store.simulation.monte_carlo``) played
    from the rules with ``seed``, unless the game plays its runs itself (it declares ``simulated_runs``, and
    its ``analyse`` reads ``graph.simulation``); ``progress`` counts the games played,
    ``layers`` the steps that the solves and evaluations have done
    (:func:`dicegraph.store.solve.entry.pending_work` says how many there are), and ``matches`` those
    that a two-player game's matches have played. ``graphs`` are the graphs of the report's pass (by default
    a pass of its own): a graph it has prepared is not built or solved again. ``all_matches`` asks a two-player
    game to play every pair of its policies where it would play fewer (the race beyond a target of 1000).
    ``targets`` adds the ``targets`` table: for each target the outcome may reach, the chance of reaching it
    under the optimum and under the policy best for it (:func:`dicegraph.store.sweep.target_chances`; DicegraphError,
    in one line, for a graph that takes no target). ``distributions`` gives each policy its whole ``distribution``
    of outcomes (:meth:`dicegraph.store.view.GraphView.distribution`; a turn stored once: its turns played forward,
    ``layers`` counting the states; a race: how many turns the policy against itself plays), where the graph has
    one (a turn stored once, or a game for one without cycles). A paired game
    (:mod:`dicegraph.graphs.paired`) has its ``average_optimum``: its game's optimum of the average (built and
    solved with the same parameters), how often that reaches the target, beside the best chance.

    >>> from dicegraph.graphs import get_game
    >>> from dicegraph.store.db import open_database
    >>> report = game_report(open_database("sqlite://", create=True), get_game("jackpot"), {"cells": 4})
    >>> [row["name"] for row in report["policies"]]
    ['min', 'max', 'first', 'last', 'hilo', 'hilo2', 'optimal']
    """
    graphs = graphs or ReportGraphs(engine, game)
    built = graphs.get(params, on_build=on_build)
    for other in game.hooks.report_graphs(params):
        graphs.get(other, progress=layers)
    base = game.pairing.game if game.pairing is not None else None
    base_built = graphs.get(params, game=base, progress=layers) if base is not None else None
    with engine.connect() as connection:
        simulation = Simulation(simulated_games, seed, progress) if simulated_games else None
        view = GraphView(connection, built.graph_id, game, matches, all_matches, simulation)
        evaluated = set(policy_names(game, params))  # not a race's stored agents: they play in its matches alone
        policies = [row for row in list_policies(connection, built.graph_id)
                    if (row["value"] is not None or row["name"] in evaluated) and row["answers"] is None]
        for row in policies:
            spread = view.sd(row["name"])
            if spread is not None:
                row["sd"] = spread
            if row["goal"] is not None:  # report the payoff it expects; its value is the goal's probability
                row["goal_value"] = row["value"]
                row["value"] = mean_payoff(connection, find_policy(connection, built.graph_id, row["name"]).id,
                                           built.graph_id)
        optimal = find_policy(connection, built.graph_id, OPTIMAL)
        distribution = outcome_distribution(connection, optimal.id, built.graph_id) if keeps_reaches(game) and \
            not has_cycles(connection, built.graph_id) else {}
        if simulated_games and can_simulate(game) and not game.hooks.offers("simulated_runs"):
            for row in policies:
                estimate = monte_carlo(connection, game, params, row["name"], simulated_games, seed, progress)
                row["monte_carlo"] = {key: estimate[key] for key in ("games", "estimate", "stderr", "z")}
        report = _generic_report(game, params, built, policies, distribution)
        if base_built is not None and not has_cycles(connection, base_built.graph_id):
            report["average_optimum"] = _average_optimum(GraphView(connection, base_built.graph_id, base, layers),
                                                         game.pairing.target, report["policies"])
        if distributions and (not view.keeps_positions  # a turn stored once; a race's: its numbers of turns
                              or game.players == 1 and not has_cycles(connection, built.graph_id)):
            spread = GraphView(connection, built.graph_id, game, layers)
            report["distributed"] = spread.counted
            for row in report["policies"]:
                row["distribution"] = [{"payoff": payoff, "probability": p}
                                       for payoff, p in spread.distribution(row["name"]).items()]
        if targets:
            refused = target_refusal(connection, built.graph_id, game)
            if refused is not None:
                raise DicegraphError(refused)
            report["targets"] = target_chances(connection, built.graph_id, game.objective, optimal.id)
        responses = response_names(game, params)
        if responses:  # each agent's best response beside the optimum: what it gives away
            report["responses"] = [view.response(answered) for answered in responses.values()]
        report["graph_size"] |= view.stored_sizes()
        report |= game.hooks.analyse(view, params, report)
    return report


class Prepare(Protocol):
    """How a report pass prepares a game's graph: :func:`prepare_game` on its engine, or the session's own (which
    shows its progress)."""

    def __call__(self, game: Game, params: Mapping[str, Any], *,
                 on_build: Callable[[BuildResult], None] | None = None,
                 progress: Progress | None = None) -> BuildResult: ...


class ReportGraphs:
    """The graphs one report pass reads, each built where missing and solved once: :meth:`get` prepares a graph
    the first time its game (the report's, or a paired game's own game) and parameters are asked for
    (``prepare``, by default :func:`prepare_game`) and returns the same build after.

    >>> from dicegraph.graphs import get_game
    >>> from dicegraph.store.db import open_database
    >>> graphs = ReportGraphs(open_database("sqlite://", create=True), get_game("jackpot"))
    >>> graphs.get({"cells": 3}) is graphs.get({"cells": 3})
    True
    """

    def __init__(self, engine: sa.Engine, game: Game, prepare: Prepare | None = None):
        self._game = game
        self._prepare = prepare or functools.partial(prepare_game, engine)
        self._built: dict[tuple[str, str], BuildResult] = {}

    def get(self, params: Mapping[str, Any], *, game: Game | None = None,
            on_build: Callable[[BuildResult], None] | None = None, progress: Progress | None = None) -> BuildResult:
        """Return the build of the graph of ``game`` (by default the report's) for ``params``, built and solved
        first (``on_build`` told of the build, ``progress`` of the solve's steps) unless this pass has done it
        already."""
        game = game or self._game
        key = game.name, canonical_params(params)
        if key not in self._built:
            self._built[key] = self._prepare(game, params, on_build=on_build, progress=progress)
        return self._built[key]


def prepare_game(engine: sa.Engine, game: Game, params: Mapping[str, Any],
                 on_build: Callable[[BuildResult], None] | None = None, progress: Progress | None = None,
                 building: Progress | None = None) -> BuildResult:
    """Build the game's graph if needed and solve what its report reads
    (:func:`dicegraph.store.solve.entry.ensure_solved`); return the build.

    ``on_build`` is told of the build before the solve; ``progress`` counts the solve's steps,
    :func:`dicegraph.store.solve.entry.pending_work` of them; ``building`` what is loaded while building
    (:func:`dicegraph.store.load.build_count`).
    """
    built = build_graph(engine, game, params, progress=building)
    if on_build is not None:
        on_build(built)
    with engine.connect() as connection:  # a turn stored once commits as it goes: an interrupted solve resumes
        ensure_solved(connection, built.graph_id, game, progress)
        connection.commit()
    return built


def report_simulations(game: Game, params: Mapping[str, Any], all_matches: bool = False) -> int:
    """Return how many runs of ``simulated_games`` games the game's report plays: its ``simulated_runs`` hook,
    else one per policy when it has a simulator, else 0."""
    runs = game.hooks.simulated_runs(params, all_matches)
    if runs is not None:
        return runs
    return len(policy_names(game, params)) if can_simulate(game) else 0


def _average_optimum(base: GraphView, target: Target, policies: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the chance that the optimum of the average of a paired game's game (``base``, solved) reaches the
    ``target``, beside the best chance (the paired game's ``optimal``): ``{"game", "value", "chance", "best"}``,
    ``value`` the average it plays for."""
    best = next(row["value"] for row in policies if row["name"] == OPTIMAL)
    average = next(row["value"] for row in list_policies(base.connection, base.graph_id) if row["name"] == OPTIMAL)
    return {"game": base.game, "value": average, "chance": target.chance(base.distribution(OPTIMAL)),
            "best": best}


def _generic_report(
    game: Game, params: Mapping[str, Any], built: BuildResult, policies: list[dict[str, Any]],
    distribution: Mapping[float, float],
) -> dict[str, Any]:
    return {
        "game": game.name,
        "graph": built.graph_id,
        "params": json.loads(json.dumps(dict(params))),
        "outcome": game.outcome,
        "objective": game.objective,
        "graph_size": {"nodes": built.nodes, "edges": built.edges, "layers": built.layers},
        "policies": policies,
        "optimal_distribution": [{"payoff": payoff, "probability": p} for payoff, p in distribution.items()],
    }


def diagram_file(game: str, diagram: str) -> str:
    """Return the file name a report gives a game's diagram (both names checked when the game registered).

    >>> diagram_file("jackpot", "hilo-layers")
    'jackpot-hilo-layers.png'
    """
    return f"{game}-{diagram}.png"


def draw_game_diagrams(
    engine: sa.Engine, game: Game, params: Mapping[str, Any], directory: Path, renderer: str = "auto",
    graphs: ReportGraphs | None = None,
) -> list[dict[str, Any]]:
    """Draw the game's charts (its ``charts`` hook) and the diagrams it names (its ``diagrams`` dict) as PNGs in
    ``directory``; return what was drawn.

    Files are called ``<game>-<name>.png``. A diagram drawn from a graph with
    other parameters names them (``"params": {...}``); that graph is built and
    solved when missing. ``graphs`` are the graphs of the report's pass (by default a pass of its own).
    """
    from dicegraph.store.diagram import Diagram, draw_diagram  # networkx and pydot load only when drawing

    check_directory(directory)
    graphs = graphs or ReportGraphs(engine, game)
    drawn = []
    if game.hooks.offers("charts"):  # drawn from the game's own numbers
        built = graphs.get(params)
        with engine.connect() as connection:
            view = GraphView(connection, built.graph_id, game)
            drawn += drawn_into(directory, lambda folder: game.hooks.charts(view, params, folder))
    for name, options in game.hooks.diagrams().items():
        options = dict(options)
        graph_params = {**params, **options.pop("params", {})}
        built = graphs.get(graph_params)
        with engine.connect() as connection:
            stored = graph_by_id(connection, built.graph_id)
            path = directory / diagram_file(game.name, name)
            drawn.append(draw_diagram(connection, stored, Diagram.of(options), path, max_nodes=None, renderer=renderer))
    return drawn
