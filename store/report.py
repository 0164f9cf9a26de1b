"""A game's headline numbers: build if needed, solve, evaluate every policy."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.montecarlo import can_simulate
from dicegraph.graphs.protocol import OPTIMAL, Game, Progress, Simulation
from dicegraph.store.catalog import find_policy, has_cycles, list_policies
from dicegraph.store.load import BuildResult, build_graph, canonical_params, find_graph
from dicegraph.store.propagate import mean_payoff, outcome_distribution
from dicegraph.store.output import check_directory, drawn_into
from dicegraph.store.simulation import monte_carlo
from dicegraph.store.solve.entry import ensure_solved, keeps_reaches, policy_names
from dicegraph.store.view import GraphView

DEFAULT_SEED = 1


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
    built: BuildResult | None = None,
    all_matches: bool = False,
) -> dict[str, Any]:
    """Return the game's report: every policy's value, and the optimal outcome distribution.

    Builds the graph and solves it when the database does not have them yet
    (:func:`prepare_game`). Where the solve keeps it, each policy has its ``sd`` (a repeating game's turn
    policies); a repeating game has no outcome distribution (its solve keeps no reach a position), and its
    ``graph_size`` adds the turn's (:meth:`dicegraph.store.view.GraphView.stored_sizes`). The game's ``analyse``
    adds its own keys. With ``simulated_games``, and a simulator for the game, each policy also
    gets a ``monte_carlo`` estimate (``dicegraph.store.simulation.monte_carlo``) played
    from the rules with ``seed``, unless the game plays its runs itself (it declares ``simulated_runs``, and
    its ``analyse`` reads ``graph.simulation``); ``progress`` counts the games played,
    ``layers`` the steps that the solves and evaluations have done
    (:func:`dicegraph.store.solve.entry.pending_work` says how many there are), and ``matches`` those
    that a two-player game's matches have played. ``built`` is the game's graph where :func:`prepare_game`
    has already built (and for a turn game, solved) it. ``all_matches`` asks a two-player game to play every
    pair of its policies where it would play fewer (the race beyond a target of 1000).

    >>> from dicegraph.graphs import get_game
    >>> from dicegraph.store.db import open_database
    >>> report = game_report(open_database("sqlite://", create=True), get_game("jackpot"), {"cells": 4})
    >>> [row["name"] for row in report["policies"]]
    ['min', 'max', 'first', 'last', 'hilo', 'hilo2', 'optimal']
    """
    if built is None:
        built = prepare_game(engine, game, params, on_build)
    further = [build_graph(engine, game, other).graph_id for other in game.hooks.report_graphs(params)]
    with engine.connect() as connection:
        ensure_solved(connection, built.graph_id, game)  # nothing is left where prepare_game has solved it
        for graph_id in further:
            ensure_solved(connection, graph_id, game, layers)
        connection.commit()
        simulation = Simulation(simulated_games, seed, progress) if simulated_games else None
        view = GraphView(connection, built.graph_id, game, matches, all_matches, simulation)
        evaluated = set(policy_names(game, params))  # not a race's stored agents: they play in its matches alone
        policies = [row for row in list_policies(connection, built.graph_id)
                    if row["value"] is not None or row["name"] in evaluated]
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
        report["graph_size"] |= view.stored_sizes()
        report |= game.hooks.analyse(view, params, report)
    return report


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
    engine: sa.Engine, game: Game, params: Mapping[str, Any], directory: Path, renderer: str = "auto"
) -> list[dict[str, Any]]:
    """Draw the game's charts (its ``charts`` hook) and the diagrams it names (its ``diagrams`` dict) as PNGs in
    ``directory``; return what was drawn.

    Files are called ``<game>-<name>.png``. A diagram drawn from a graph with
    other parameters names them (``"params": {...}``); that graph is built and
    solved when missing.
    """
    from dicegraph.store.diagram import Diagram, draw_diagram  # networkx and pydot load only when drawing

    check_directory(directory)
    drawn = []
    if game.hooks.offers("charts"):  # drawn from the game's own numbers
        built = prepare_game(engine, game, params)
        with engine.connect() as connection:
            view = GraphView(connection, built.graph_id, game)
            drawn += drawn_into(directory, lambda folder: game.hooks.charts(view, params, folder))
    for name, options in game.hooks.diagrams().items():
        options = dict(options)
        graph_params = {**params, **options.pop("params", {})}
        built = prepare_game(engine, game, graph_params)
        with engine.connect() as connection:
            stored = find_graph(connection, game.name, canonical_params(graph_params))
            path = directory / diagram_file(game.name, name)
            drawn.append(draw_diagram(connection, stored, Diagram.of(options), path, max_nodes=None, renderer=renderer))
    return drawn
