"""The session: one database, and what can be done with it (build, solve, report, look, query).

The command line is thin over :class:`Database`: each ``dicegraph`` command that these
methods cover parses its arguments, calls one method and prints what it returns (``--json`` prints it as is).

>>> import dicegraph
>>> db = dicegraph.open("sqlite://")  # in memory; a file by default, as ``--db``
>>> report = db.report("jackpot", {"cells": 4})
>>> [(row["name"], round(row["value"], 4)) for row in report["policies"]][-1]
('optimal', 0.1461)
>>> db.position("jackpot", "0")["kind"]
'chance'
>>> db.query("SELECT count(*) AS graphs FROM graph")
[{'graphs': 1}]
"""

from __future__ import annotations

import functools
import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from dicegraph.arguments import check_call
from dicegraph.play import Look, NotSolved, Table, autoplay, seats_for, summary
from dicegraph.record import PERSON, Record
from dicegraph.graphs import GAMES, get_game
from dicegraph.graphs.commands import as_json
from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import (OPTIMAL, Game, Progress, StoredGraph, mean_and_spread, resolve_params,
                                       value_text)
from dicegraph.store.backends import backend_of
from dicegraph.graphs.listing import game_listing
from dicegraph.store.browse import graph_layers, largest_payoff, root_key, search_positions, stored_graphs
from dicegraph.store.catalog import (evaluated_policy, graph_by_id, has_cycles, is_graph_id, list_policies,
                                     list_policy_names, policy_convergence, policy_ids, resolve_graph, stored_params,
                                     value_unit)
from dicegraph.store.compare import policy_comparison
from dicegraph.store.seats import SEATS
from dicegraph.store.defaults import DEFAULT_DPI, DEFAULT_SEED, DEFAULT_TIMEOUT, MAX_NODES
from dicegraph.store.db import database_url, is_in_memory, open_database, schema_revision, shown_url
from dicegraph.store.errors import NoDatabase, NotFound, database_failure, file_failure
from dicegraph.store.load import BuildResult, build_count, build_graph
from dicegraph.store.memory import DEFAULT_MEMORY
from dicegraph.store.output import check_directory, check_file, drawn_into, write_file
from dicegraph.store.propagate import outcome_distributions
from dicegraph.store.query import RowsTaker, run_query
from dicegraph.store.render import Style, diagram_format, render, to_dot
from dicegraph.store.report import (ReportGraphs, diagram_file, draw_game_diagrams, game_report,
                                    report_simulations)
from dicegraph.store.simulation import monte_carlo
from dicegraph.store.schema import policy
from dicegraph.store.solve.objectives import answered_policy
from dicegraph.store.solve.entry import (declared_target_refusal, ensure_solved, evaluate_agents, pending_work,
                                        solve_graph, solve_steps)
from dicegraph.store.view import GraphView

Meter = Callable[[str, "int | None"], AbstractContextManager["Progress | None"]]
"""How long work is shown: given what it does and how many steps (None: not known), a context that yields the
callback told of the steps done, or None to show nothing (the CLI's bars and lines on stderr are one)."""

Result = TypeVar("Result")
POSITIONS_KEPT = 20_000  # positions of a graph a session keeps once a game has read them (a few kB each)
PROPAGATING_STATES = "propagating the policies, states"  # what the meter shows while distributions are worked out


def _quiet(label: str, length: int | None) -> AbstractContextManager[Progress | None]:
    """Return a meter that shows nothing."""
    return nullcontext(None)


def stored_graph(connection: sa.Connection, graph: str | int, params: Mapping[str, Any] | None = None) -> sa.Row:
    """Return the stored graph named by id or game name, ``params`` (values or text) picking among a game's graphs;
    raises NotFound or Ambiguous (:func:`dicegraph.store.catalog.resolve_graph`). A number (an ``int``) is an id only; text
    is read as the command line reads it (digits name the game 5000 where no graph has that id)."""
    if isinstance(graph, int) and not params:  # an id, never a game's name (the explorer's addresses)
        return graph_by_id(connection, graph)
    ref = str(graph)
    if not params:
        return resolve_graph(connection, ref)
    if is_graph_id(ref) and ref not in GAMES:
        raise DicegraphError("parameters (-p) pick among a game's graphs; a graph id needs none")
    return resolve_graph(connection, ref, resolve_params(get_game(ref), params or {}))


def _one_line_errors(method: Callable[..., Result]) -> Callable[..., Result]:
    """Return ``method`` raising :class:`dicegraph.graphs.errors.DicegraphError` with the CLI's one line for the database's
    and the files' errors (a KeyboardInterrupt goes through: what was half done is rolled back)."""

    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Result:
        check_call(method, args, kwargs)  # before any work: a wrong argument is one line, not a traceback later
        try:
            return method(*args, **kwargs)
        except (DicegraphError, BrokenPipeError):  # a pipe's reader gone is the caller's to handle
            raise
        except sa.exc.DBAPIError as error:
            raise database_failure(error) from None
        except OSError as error:
            raise file_failure(error) from None

    return checked


class Database:
    """A dicegraph database (``--db URL``): every method opens what it needs and closes it again.

    Reading methods open it read-only and never write; ``build``, ``solve`` and ``report`` write, each in
    transactions that leave nothing half done. Errors are :class:`dicegraph.graphs.errors.DicegraphError` (``dicegraph.Error``)
    with the one line the CLI prints. ``meter`` shows long work (:data:`Meter`; none by default), ``on_wait``
    is told when another process holds the database.
    """

    def __init__(self, url: str | None = None, *, memory: str = DEFAULT_MEMORY, meter: Meter = _quiet,
                 on_wait: Callable[[str], None] | None = None):
        self.url = database_url(url)
        self.memory, self.meter, self.on_wait = memory, meter, on_wait
        self._kept: sa.Engine | None = None  # the one engine of an in-memory database, which lives as long as it
        self._schema_seen = False  # the schema read at the head revision once: a session checks it when it first opens
        self._one_at_a_time = threading.RLock()  # an in-memory database's one connection serves one thread at a time
        self._kept_positions: dict[tuple[int, str], dict[str, Any]] = {}  # (graph, created): what its view keeps
        self._positions: dict[tuple[int, str, tuple[str, ...]], dict[str, dict[str, Any]]] = {}  # and policies: read

    @classmethod
    def over(cls, engine: sa.Engine, **options: Any) -> Database:
        """Return a session over an engine already open, kept for every call and never disposed of here (the
        explorer's, opened read-only once for the server's life; the caller closes it)."""
        session = cls(engine.url.render_as_string(hide_password=False), **options)
        session._kept = engine
        return session

    @classmethod
    def kept_open(cls, url: str, *, read_only: bool = False, **options: Any) -> Database:
        """Return a session on the database at ``url`` whose one engine (read-only where asked) stays open for
        every call until :meth:`close`: the explorer's, for the server's life. ``options`` as for the session."""
        session = cls(url, **options)
        session._kept = open_database(session.url, read_only=read_only, on_wait=session.on_wait,
                                      memory=session.memory)
        return session

    @_one_line_errors
    def close(self) -> None:
        """Let go of the engine a session :meth:`kept_open` (or :meth:`over`) holds, and of its file."""
        if self._kept is not None:
            self._kept.dispose()

    def __repr__(self) -> str:
        return f"<dicegraph.Database {shown_url(self.url)}>"

    @contextmanager
    def _engine(self, *, create: bool = False, read_only: bool = False) -> Iterator[sa.Engine]:
        """Yield an engine on the database, disposed of afterwards (its pooled connections let go of the file); an
        in-memory database's is kept for the next call."""
        if is_in_memory(self.url):  # one connection, one thread in it at a time (the others wait their turn)
            with self._one_at_a_time:
                if self._kept is None:
                    self._kept = open_database(self.url, create=True, memory=self.memory)
                yield self._kept
            return
        if self._kept is not None:
            yield self._kept
            return
        engine = open_database(self.url, create=create, read_only=read_only, on_wait=self.on_wait, memory=self.memory,
                               schema_seen=self._schema_seen)
        self._schema_seen = True
        try:
            if read_only:
                yield engine
            else:
                with backend_of(engine).writing(engine, self.on_wait):  # Spark's writer lock; nothing elsewhere
                    yield engine
        finally:
            engine.dispose()

    @staticmethod
    def _game(game: str | Game, params: Mapping[str, Any] | None) -> tuple[Game, dict[str, Any]]:
        """Return the game named (or given) and its parameters resolved (text or values, defaults filled in)."""
        chosen = get_game(game) if isinstance(game, str) else game
        return chosen, resolve_params(chosen, params or {})

    @_one_line_errors
    def build(self, game: str | Game, params: Mapping[str, Any] | None = None, *, replace: bool = False,
              force: bool = False) -> dict[str, Any]:
        """Build the game's graph unless stored (``replace`` rebuilds it); return what ``build --json`` prints:
        ``graph_id``, ``action`` (built, reused or replaced), ``nodes``, ``edges``, ``layers``, ``game``,
        ``params``, ``seconds``."""
        chosen, values = self._game(game, params)
        started = time.perf_counter()
        counted, expected = build_count(chosen, values)
        with self._engine(create=True) as engine, \
                self.meter(f"building {chosen.name}, {counted}", expected) as building:
            result = build_graph(engine, chosen, values, replace=replace, force=force, progress=building)
        return as_json({**vars(result), "game": chosen.name, "params": values,
                        "seconds": time.perf_counter() - started})

    @_one_line_errors
    def solve(self, graph: str | int, params: Mapping[str, Any] | None = None, *, objective: str | None = None,
              name: str | None = None) -> dict[str, Any]:
        """Solve a stored graph (id or game name) for ``objective`` (the game's by default; ``best-response:POLICY``
        in a game for two: the best response to a stored policy), store the policy as ``name`` (by default
        ``optimal``, or the best response's objective) and evaluate the stored agents; return what ``solve
        --json`` prints. The method is the store's pick for the graph
        (:func:`dicegraph.store.solve.entry.solve_graph`); a game whose turn is stored once solves its declared
        turn policies, a state layer committed at a time.

        >>> import dicegraph
        >>> db = dicegraph.open("sqlite://")
        >>> _ = db.build("pig", {"target": 8, "holds": "4"})
        >>> solved = db.solve("pig", objective="best-response:hold-at-4")
        >>> solved["policy"], round(solved["value"], 6), round(solved["response"]["exploitability"]["mean"], 6)
        ('best-response:hold-at-4', 0.885485, 0.281426)
        """
        with self._engine() as engine, engine.connect() as connection:
            row = stored_graph(connection, graph, params)
            game = get_game(row.game)
            params_stored = stored_params(connection, row.id)
            started = time.perf_counter()
            with self.meter(f"solving {row.game}", solve_steps(game, params_stored) or row.layers) as progress:
                policy_id = solve_graph(connection, row.id, game, objective=objective, name=name, progress=progress)
            with self.meter("evaluating the agents, layers", None) as evaluating:
                evaluated = evaluate_agents(connection, row.id, game, name, evaluating)
            connection.commit()
            return self._solved(connection, row, policy_id, objective or game.objective, evaluated,
                                time.perf_counter() - started)

    @staticmethod
    def _solved(connection: sa.Connection, row: sa.Row, policy_id: int, objective: str, evaluated: list[str],
                seconds: float) -> dict[str, Any]:
        """Return what ``solve --json`` prints of the policy ``policy_id`` of a graph just solved (a best
        response's ``response``: :func:`dicegraph.store.solve.graph_matches.response_wins`)."""
        name = connection.execute(sa.select(policy.c.name).where(policy.c.id == policy_id)).scalar_one()
        value = next(p["value"] for p in list_policies(connection, row.id) if p["name"] == name)
        answered = answered_policy(objective)
        response = {} if answered is None else {
            "response": GraphView(connection, row.id, get_game(row.game), row=row).response(answered)}
        return as_json({"graph": row.id, "game": row.game, "policy": name, "policy_id": policy_id,
                        "objective": objective, "value": value, "evaluated": evaluated, "seconds": seconds,
                        "edges_per_second": row.edges / seconds if seconds else None,
                        "convergence": policy_convergence(connection, policy_id), **response})

    @_one_line_errors
    def report(self, game: str | Game, params: Mapping[str, Any] | None = None, games: int = 0, *,
               seed: int = DEFAULT_SEED, diagrams: str | Path | None = None, all_matches: bool = False,
               targets: bool = False, distributions: bool = False,
               on_build: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Build and solve what is missing, evaluate every policy and return what ``report --json`` prints; with
        ``games``, each policy's Monte Carlo estimate too (``seed``), with ``diagrams`` (a folder) the game's
        diagrams drawn there as PNGs; ``all_matches`` plays every pair of a two-player game's policies where the
        report would play fewer (the race beyond a target of 1000); ``targets`` adds, for a game for one whose
        terminals pay its outcome, the chance of reaching each target under the optimum and under the policy best
        for it (one sweep); ``distributions`` each policy's whole outcome ``distribution`` (a game for one without
        cycles; a turn stored once is played forward, a solve's time a policy). ``on_build`` is told of the build
        (``build``'s dict) before the solve."""
        chosen, values = self._game(game, params)
        refused = declared_target_refusal(chosen) if targets else None
        if refused is not None:
            raise DicegraphError(refused)
        folder = check_directory(Path(diagrams)) if diagrams is not None else None
        for name in chosen.hooks.diagrams() if folder is not None else ():  # each named file too, before any work
            check_file(folder / diagram_file(chosen.name, name))

        def announce(built: Game) -> Callable[[BuildResult], None]:
            def told(result: BuildResult) -> None:
                if on_build is not None:
                    on_build(as_json({**vars(result), "game": built.name, "params": values}))
            return told

        with self._engine(create=True) as engine:
            def prepare(built: Game, graph_params: Mapping[str, Any], *,
                        on_build: Callable[[BuildResult], None] | None = None,
                        progress: Progress | None = None) -> BuildResult:
                return self._prepared(engine, built, graph_params, f"solving and evaluating {built.name}", on_build)

            graphs = ReportGraphs(engine, chosen, prepare)  # each graph the report reads built and solved once
            graphs.get(values, on_build=announce(chosen))
            if chosen.pairing is not None:  # its game too, whose optimum of the average the report sets beside it
                graphs.get(values, game=chosen.pairing.game, on_build=announce(chosen.pairing.game))
            with self.meter("playing the matches, layers", None) as matches, \
                    self.meter("simulating", games * report_simulations(chosen, values, all_matches)) as simulating, \
                    self.meter("propagating the policies, steps", None) as propagating:
                data = game_report(engine, chosen, values, simulated_games=games, seed=seed, progress=simulating,
                                   layers=propagating, matches=matches, graphs=graphs, all_matches=all_matches,
                                   targets=targets, distributions=distributions)
            if folder is not None:
                data["diagrams"] = draw_game_diagrams(engine, chosen, values, folder, graphs=graphs)
        return as_json(data)

    def _prepared(self, engine: sa.Engine, game: Game, params: Mapping[str, Any], solving: str,
                  on_build: Callable[[BuildResult], None] | None = None) -> BuildResult:
        """Return the game's graph built, solved and its agents evaluated where missing
        (:func:`dicegraph.store.solve.entry.ensure_solved`), the edges built and the solve's steps (labelled
        ``solving``) shown as they go; ``on_build`` is told of the build before the solve."""
        counted, expected = build_count(game, params)
        with self.meter(f"building {game.name}, {counted}", expected) as building:
            built = build_graph(engine, game, params, progress=building)
        if on_build is not None:
            on_build(built)
        with engine.connect() as connection:  # a turn stored once commits as it goes: an interrupted solve resumes
            work = pending_work(connection, built.graph_id, game)
            with self.meter(f"{solving}, {work.unit}", work.count) as steps:
                ensure_solved(connection, built.graph_id, game, steps)
            connection.commit()
        return built

    @contextmanager
    def solved(self, game: Game, params: Mapping[str, Any], what: str) -> Iterator[StoredGraph]:
        """Yield the game's graph for ``params``, built, solved and evaluated first where missing (what a game's
        own commands use: :class:`dicegraph.graphs.commands.Session`); nothing done through it is committed."""
        with self._engine(create=True) as engine:
            built = self._prepared(engine, game, params, f"solving {what} (first use only)")
            with engine.connect() as connection:
                yield GraphView(connection, built.graph_id, game)

    @contextmanager
    def _reading(self) -> Iterator[sa.Connection]:
        """Yield a connection that only reads (the database opened read-only; nothing through it is committed)."""
        with self._engine(read_only=True) as engine, engine.connect() as connection:
            yield connection

    @_one_line_errors
    def catalog(self) -> dict[str, Any]:
        """Return what there is: ``games`` that can be built (:func:`dicegraph.store.browse.game_listing`) and ``graphs``
        stored (:meth:`graph`'s ``graph`` row each), each with its ``policies``, their root values and the values'
        ``unit`` (the ``outcome`` of a game no longer registered is "outcome")."""
        with self._reading() as connection:
            graphs = [_readable(connection, row) for row in stored_graphs(connection, with_policies=True)]
        for row in graphs:
            game = GAMES.get(row["game"])
            outcome = game.outcome if game is not None else "outcome"
            for listed in row["policies"]:
                listed["unit"] = value_unit(listed["goal"], outcome)
        return {"games": game_listing(GAMES.values()), "graphs": graphs}

    @_one_line_errors
    def graph(self, graph: str | int, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Return a stored graph's row as ``graphs --json`` gives it (``id``, ``game``, ``params``, ``nodes``,
        ``edges``, ``layers``, ``created_at`` as text), with its first position's key as ``root``."""
        with self._reading() as connection:
            return _readable(connection, dict(stored_graph(connection, graph, params)._mapping))

    @_one_line_errors
    def layers(self, graph: str | int, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Return a stored graph's layers in order: ``layer``, ``nodes``, ``rolls``, ``moves`` (edges leaving it)
        and ``cycle_start`` (the first layer of its cyclic component, None outside cycles)."""
        with self._reading() as connection:
            return graph_layers(connection, stored_graph(connection, graph, params).id)

    @_one_line_errors
    def distributions(self, graph: str | int, params: Mapping[str, Any] | None = None, *,
                      turns: bool = False) -> dict[str, list[dict]]:
        """Return each evaluated policy's exact outcome distribution: policy -> ``[{"payoff", "probability"}]``;
        empty for a graph with cycles, or, unless ``turns``, one whose turn is stored once (its turns played
        forward through every state layer: a solve's time a policy, :meth:`propagate`; a race's, how many turns
        each policy against itself plays, :meth:`counted`)."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            policies = list_policies(connection, row.id)
            with self.meter(PROPAGATING_STATES, None) as states:
                view = GraphView(connection, row.id, get_game(row.game), progress=states, row=row)
                return _policy_distributions(connection, view, policies, turns)

    @_one_line_errors
    def overview(self, graph: str | int, params: Mapping[str, Any] | None = None, *,
                 turns: bool = False) -> dict[str, Any]:
        """Return what the explorer's page of a graph shows, read over one connection with the graph looked up
        once: its ``graph`` row (:meth:`graph`), ``layers`` (:meth:`layers`), ``policies`` (:meth:`policies`),
        whether its distributions are played on request (``turn_distributions``, :meth:`distributions_on_request`),
        what they count (``counted``, :meth:`counted`) and the ``distributions`` (:meth:`distributions`, with
        ``turns``)."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            game = get_game(row.game)
            policies = list_policies(connection, row.id, game.outcome)
            with self.meter(PROPAGATING_STATES, None) as states:
                view = GraphView(connection, row.id, game, progress=states, row=row)
                return as_json({"graph": _readable(connection, dict(row._mapping)),
                                "layers": graph_layers(connection, row.id), "policies": policies,
                                "turn_distributions": not view.keeps_positions, "counted": view.counted,
                                "distributions": _policy_distributions(connection, view, policies, turns)})

    @_one_line_errors
    def distributions_on_request(self, graph: str | int, params: Mapping[str, Any] | None = None) -> bool:
        """Return whether the graph's outcome distributions are played on request (:meth:`distributions` with
        ``turns``): a game whose turn is stored once."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            return not GraphView(connection, row.id, get_game(row.game), row=row).keeps_positions

    @_one_line_errors
    def counted(self, graph: str | int, params: Mapping[str, Any] | None = None) -> str:
        """Return what the graph's outcome distributions count: ``payoff``, or, in a game for two (a race, whose
        outcome is who wins), ``turns``."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            return GraphView(connection, row.id, get_game(row.game), row=row).counted

    @_one_line_errors
    def propagate(self, graph: str | int, policy: str = OPTIMAL, params: Mapping[str, Any] | None = None, *,
                  start: str | None = None) -> dict[str, Any]:
        """Return the exact outcome distribution under ``policy`` as ``propagate --json`` prints it: ``graph``,
        ``policy``, ``from`` (the position's key, None for the start), ``outcome`` (what a ``payoff`` counts:
        ``payoff``, or ``turns`` in a race), ``expected_payoff``, ``sd`` and ``distribution``
        (``[{"payoff", "probability"}]``): propagated through the graph's layers (from the
        position keyed ``start`` where given: what is still to come from there), or for a game whose turn is
        stored once through its state layers, the turns chosen and spread from each state play reaches (a solve's
        time: progress shows the states played); for a race (its outcome is who wins), how many turns a match of
        the policy against itself lasts, both players' turns counted."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            game = get_game(row.game)
            with self.meter(f"propagating {policy}, states", None) as states:
                view = GraphView(connection, row.id, game, progress=states, row=row)
                if view.keeps_positions:
                    evaluated_policy(connection, row, policy)
                distribution = view.distribution(policy, start)
        return {"graph": row.id, "policy": policy, "from": start,
                "outcome": view.counted, **_moments(distribution),
                "distribution": [{"payoff": k, "probability": v} for k, v in distribution.items()]}

    @_one_line_errors
    def position_outcomes(self, graph: str | int, policy: str = OPTIMAL, params: Mapping[str, Any] | None = None
                          ) -> dict[str, dict[str, Any]]:
        """Return, for every position of a graph stored as rows, by key, what :meth:`propagate` from there gives:
        ``expected_payoff``, ``sd`` and ``distribution``, worked out backwards in one pass over the layers
        (:func:`dicegraph.store.propagate.outcomes_from_every_position`; backgammon's bear-off database is this)."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            view = GraphView(connection, row.id, get_game(row.game), row=row)
            if view.keeps_positions:
                evaluated_policy(connection, row, policy)
            found = view.position_outcomes(policy)
        return {key: {**_moments(outcomes), "distribution": [{"payoff": k, "probability": v} for k, v in outcomes.items()]}
                for key, outcomes in found.items()}

    @_one_line_errors
    def compare(self, graph: str | int, policy: str, reference: str = OPTIMAL, params: Mapping[str, Any] | None = None,
                *, opponent: str | None = None, seat: str = SEATS[0], top: int = 10) -> dict[str, Any]:
        """Return how ``policy`` compares with ``reference`` (:func:`dicegraph.store.compare.policy_comparison`: ``unit``,
        ``expected_loss``, position by position ``decisions``, ``worse``, ``tied`` and the costliest
        ``deviations``; in a two-player game the matches against ``opponent`` in ``seat``), with the ``graph``'s id
        and its ``game``."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            with self.meter("comparing, passes (a state layer or a batch of states)", None) as layers:
                view = GraphView(connection, row.id, get_game(row.game), progress=layers, row=row)
                result = policy_comparison(view, policy, reference, opponent=opponent, seat=seat, top=top)
        return {"graph": row.id, "game": row.game, **result}

    @_one_line_errors
    def matches(self, graph: str | int, params: Mapping[str, Any] | None = None,
                pairs: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
        """Return a two-player game's matches, each pair both ways (``[{"first", "second", "p_first_wins"}]``):
        ``pairs`` of policy names, every pair of its stored policies by default."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            game = get_game(row.game)
            if game.players != 2:
                raise DicegraphError(f"{row.game} is a one-player game: it plays no matches")
            if pairs is None:
                names = [p["name"] for p in list_policies(connection, row.id)]
                pairs = [(first, second) for at, first in enumerate(names) for second in names[at + 1:]]
            with self.meter("playing the matches, layers", None) as layers:
                return GraphView(connection, row.id, game, progress=layers, row=row).matches(pairs)

    @_one_line_errors
    def responses(self, graph: str | int, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Return, for each stored best response of a two-player graph, how it and the optimum do against the
        policy it answers, in each seat, and that policy's exploitability
        (:meth:`dicegraph.store.view.GraphView.response`); [] where none is stored."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            answered = [p["answers"] for p in list_policies(connection, row.id) if p["answers"] is not None]
            if not answered:
                return []
            with self.meter("playing the best responses' matches, layers", None) as layers:
                view = GraphView(connection, row.id, get_game(row.game), progress=layers, row=row)
                return [view.response(name) for name in answered]

    @_one_line_errors
    def search(self, graph: str | int, text: str, params: Mapping[str, Any] | None = None,
               limit: int = 50) -> list[dict[str, Any]]:
        """Return up to ``limit`` positions whose key or label contains ``text``, the exact key first: ``key``,
        ``label``, ``kind``, ``layer``."""
        with self._reading() as connection:
            return search_positions(connection, stored_graph(connection, graph, params).id, text, limit)

    @_one_line_errors
    def advise(self, graph: str | int, answers: Mapping[str, str], params: Mapping[str, Any] | None = None
               ) -> dict[str, Any]:
        """Return the game's advisor on a graph (:mod:`dicegraph.graphs.advice`): its ``title``, the ``questions`` it asks
        of this graph, what its ``values`` mean, the ``answers`` as given (defaults filled in), and, once anything
        is asked, the ``advice`` or the ``error`` that says what to type instead. NotFound for a game without
        an advisor."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            advisor = get_game(row.game).hooks.advisor()
            if advisor is None:
                raise NotFound(f"{row.game} has no advisor (the games with one: "
                               f"{', '.join(game.name for game in GAMES.values() if game.hooks.offers('advisor'))})")
            view = GraphView(connection, row.id, get_game(row.game), row=row)
            questions = advisor.questions_for(view.params)
            advised: dict[str, Any] = {
                "title": advisor.title, "values": advisor.values,
                "questions": [{"name": q.name, "label": q.label, "example": q.example, "help": q.help,
                               "required": q.required, "choices": list(q.choices)} for q in questions],
                "answers": {q.name: answers.get(q.name) or q.default for q in questions},
                "advice": None, "error": None,
            }
            if advisor.asked(answers):
                try:
                    advised["advice"] = advisor.answer(view, answers).as_dict()
                except DicegraphError as error:
                    advised["error"] = str(error)
            return advised

    @_one_line_errors
    def charts(self, graph: str | int, directory: str | Path, params: Mapping[str, Any] | None = None
               ) -> dict[str, Any]:
        """Return the pictures the game's report draws from this graph (its ``charts``, PNGs written to
        ``directory``, never to the database): ``{"pictures": [{"file", "title"}], "error"}``, ``error`` saying
        why none could be drawn (a game without charts)."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            game = get_game(row.game)
            if not game.hooks.offers("charts"):
                return {"pictures": [], "error": f"{row.game} draws no charts of its own"}
            view = GraphView(connection, row.id, game, row=row)
            drawn = drawn_into(Path(directory), lambda folder: game.hooks.charts(view, view.params, folder))
        return {"pictures": [{"file": Path(found["file"]).name, "title": found["title"]} for found in drawn],
                "error": None}

    @_one_line_errors
    def diagram(self, graph: str | int, key: str, link: Callable[[str], str] | None = None, *, depth: int = 1,
                max_nodes: int | None = None, params: Mapping[str, Any] | None = None) -> bytes:
        """Return an SVG of the position ``key`` and the positions ``depth`` steps from it
        (:meth:`dicegraph.store.view.GraphView.neighbourhood`, the optimum's moves drawn bold when it is solved), each
        node linking to ``link(its key)`` when given; TooLarge past ``max_nodes`` nodes."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            view = GraphView(connection, row.id, get_game(row.game), row=row).neighbourhood(key, depth, max_nodes)
        svg, _ = render(to_dot(view, Style(link=link)), "svg")
        return svg

    @_one_line_errors
    def export(self, graph: str | int, output: str | Path, params: Mapping[str, Any] | None = None, *,
               max_nodes: int | None = MAX_NODES, renderer: str = "auto", dpi: int = DEFAULT_DPI,
               **view: Any) -> dict[str, Any]:
        """Draw the stored graph to ``output`` (DOT, SVG or PNG by its suffix) and return what ``export --json``
        prints (``file``, ``view``, ``policy``, ``nodes``, ``edges``, ``renderer``, ``seconds``); ``view`` holds
        :class:`dicegraph.store.diagram.Diagram`'s fields (``policy``, ``full``, ``root``, ``depth``, ``to_layer``,
        ``busts``, ``layers``, ``move_labels``, ``values``); refused past ``max_nodes`` nodes (None: any size)."""
        from dicegraph.store.diagram import Diagram, draw_diagram  # networkx loads only when drawing

        path = Path(output)
        diagram_format(path)  # refuse a name that says no format before any work
        check_file(path)
        diagram = Diagram.of(view)
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            evaluated_policy(connection, row, diagram.policy)
            return draw_diagram(connection, row, diagram, path, max_nodes=max_nodes, renderer=renderer, dpi=dpi)

    @_one_line_errors
    def simulate(self, game: str | Game, params: Mapping[str, Any] | None = None, policy: str = OPTIMAL,
                 games: int = 100_000, seed: int = DEFAULT_SEED) -> dict[str, Any]:
        """Play ``games`` games from the rules with ``policy`` (an agent, or a policy stored with the game's graph)
        and return what ``simulate --json`` prints: ``game``, ``policy``, ``games``, ``estimate``, ``stderr``, and
        the stored ``exact`` value with the estimate's ``z`` (None where the database has none)."""
        chosen, values = self._game(game, params)
        with self.meter("simulating", games) as progress, ExitStack() as opened:
            try:
                connection = opened.enter_context(self._reading())
            except NoDatabase:  # no file, or nothing stored yet (an empty server database): an agent plays anyway
                connection = None
            return monte_carlo(connection, chosen, values, policy, games, seed, progress)

    @_one_line_errors
    def upgrade(self) -> dict[str, Any]:
        """Bring the database's schema up to this dicegraph's (one transaction; nothing is lost); return
        ``{"revision"}``, the revision it is at now."""
        with self._engine() as engine:
            return {"revision": schema_revision(engine)}

    @contextmanager
    def table(self, record: Record, *, policies: bool = False) -> Iterator[Table]:
        """Yield the game ``record`` describes in progress on its stored, solved graph, its steps taken (a record
        with a ``seed`` draws its rolls again, so that the dice go on as they would have); with ``policies``, the
        seats' policies must be stored with the graph. Read-only: the game lives in the record. NotSolved for a
        graph without its optimum, BadRecord for a step that does not fit the game."""
        game, values = self._game(record.game, record.params)
        with self._reading() as connection:
            row = stored_graph(connection, game.name, values)
            hint = f"dicegraph report {game.name}" + "".join(f" -p {name}={value_text(value)}" for name, value in
                                                           values.items())
            stored = list_policy_names(connection, row.id)
            if OPTIMAL not in stored:
                raise NotSolved(f"graph {row.id} ({game.name}) is not solved: solve it first with: {hint} -n 0")
            if policies:
                unknown = [name for name in record.seats.values() if name != PERSON and name not in stored]
                if unknown:
                    raise DicegraphError(f"no policy {unknown[0]!r} stored with graph {row.id} (stored: "
                                         f"{', '.join(stored)}; a report evaluates every agent: {hint} -n 0)")
            started = Record(game.name, as_json(values), dict(record.seats), [], record.seed)
            root = root_key(connection, row.id) or ""
            kept = self._kept_positions.setdefault((row.id, str(row.created_at)), {})
            look, named, shown_at = GraphView(connection, row.id, game, row=row).play_positions(
                stored, [name for name in record.seats.values() if name in stored and policies], root,
                record.steps, kept)
            look = self._positions_kept(row, named, look)
            table = Table(look, started, root, game.players == 2, game.objective, 1.0, row.id, shown_at)
            table.scale = (1.0 if "probability" in game.outcome
                           else largest_payoff(connection, row.id) or abs(table.start_value) or 1.0)
            table.rng = None if record.seed is None else random.Random(record.seed)
            table.replay(record.steps)
            yield table

    def _positions_kept(self, row: sa.Row, policies: Sequence[str], describe: Look) -> Look:
        """Return ``describe`` (a graph's positions one level deep, as :func:`dicegraph.store.positions.describe_position`
        or :meth:`dicegraph.store.turn_positions.TurnPositions.look` gives them) with each position kept once read (up to
        :data:`POSITIONS_KEPT` a graph, while its policies are these), so that the explorer's play page, which
        replays a game at each click, reads each position once."""
        kept = self._positions.setdefault((row.id, str(row.created_at), tuple(policies)), {})

        def look(key: str) -> dict[str, Any]:
            found = kept.get(key)
            if found is None:
                found = kept[key] = describe(key)
                while len(kept) > POSITIONS_KEPT:
                    kept.pop(next(iter(kept), None), None)
            return found

        return look

    @_one_line_errors
    def analyse(self, record: Record | Mapping[str, Any] | str | Path) -> dict[str, Any]:
        """Return the analysis of a game record (:mod:`dicegraph.play`): as ``analyse --json`` prints it,
        ``start_value``, ``outcome``, ``steps`` (each ``kind``, ``label``, ``player``, ``value_before``,
        ``value_after``; a move's ``best``, ``loss`` and ``grade``; a roll's ``luck``) and ``players`` (each
        one's ``loss`` and ``luck``), with the ``graph`` and the ``identity`` the values keep. ``record`` is a
        :class:`dicegraph.record.Record`, its JSON data, or a file holding it."""
        given = (record if isinstance(record, Record) else Record.of(record) if isinstance(record, Mapping)
                 else Record.read(record))
        with self.table(given) as table:
            return as_json(summary(table))

    @_one_line_errors
    def playing(self, record: Record | Mapping[str, Any]) -> dict[str, Any]:
        """Return a game a person plays, as it stands after its ``record``'s steps and those that are no person's
        (the dice drawn from its seed, the stored policies' moves): the ``record`` so far, the ``position``
        (``key``, ``label``, ``kind``, and ``stored``: the stored position whose page shows it), who is
        ``to_move``, what it ``expects`` (a ``move``, a ``roll`` to type, or None at the end), ``value_now``,
        the person's ``options`` (each ``label``, ``value``, ``gives_up``) when it is the person's move, and the
        ``analysis`` so far (:meth:`analyse`'s dict)."""
        given = record if isinstance(record, Record) else Record.of(record)
        with self.table(given, policies=True) as table:
            table.advance(given.seats)
            yours = table.expects == "roll" or given.seats.get(table.to_move) == PERSON
            position = {name: table.position[name] for name in ("key", "label", "kind")}
            position["stored"] = table.stored_key(position["key"])
            return as_json({"record": table.record.as_json(), "position": position, "to_move": table.to_move,
                            "expects": table.expects, "finished": table.finished, "value_now": table.value_now,
                            "options": table.options() if yours and not table.finished else [],
                            "analysis": summary(table)})

    @_one_line_errors
    def ready_to_play(self) -> list[int]:
        """Work out now what a new game of each stored, solved game reads first (for a turn stored once, the
        turn's statements built and compiled and the first state's turn valued), kept by the session as a game's
        steps are, so that the first game the explorer shows answers as its later clicks do; return the graphs
        readied. ``dicegraph serve`` calls it in the background as it starts."""
        with self._reading() as connection:
            stored = stored_graphs(connection)
        readied = []
        for row in stored:
            game = GAMES.get(row["game"])
            if game is None:
                continue
            seats = seats_for(game.players == 2, [OPTIMAL])
            try:
                with self.table(Record(game.name, json.loads(row["params"]), seats, [])):
                    readied.append(row["id"])
            except DicegraphError:  # not solved, or built with other rules: its first game pays as it comes
                continue
        return readied

    @_one_line_errors
    def play(self, game: str | Game, params: Mapping[str, Any] | None = None, policies: Sequence[str] = (OPTIMAL,),
             *, seed: int | None = None, record: str | Path | None = None,
             on_step: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Play a whole game between stored policies (the first named takes the first seat; one alone plays every
        seat), the dice drawn with ``seed`` (a new one when None); return its analysis (:meth:`analyse`) with the
        ``record``. With ``record`` (a file) the record is written after every step; ``on_step`` is told of each
        step's analysis as it is taken."""
        chosen, values = self._game(game, params)
        seats = seats_for(chosen.players == 2, list(policies))
        drawn = random.SystemRandom().randrange(2**31) if seed is None else seed
        started = Record(chosen.name, values, seats, [], drawn)
        if record is not None:
            started.check_new_file(record)  # a record is a new file: nothing is written over
        with self.table(started, policies=True) as table:
            def taken(row: dict[str, Any]) -> None:
                if record is not None:
                    table.record.write(record, new=len(table.record.steps) == 1)
                if on_step is not None:
                    on_step(row)

            autoplay(table, seats, taken)
            return as_json({**summary(table), "record": table.record.as_json()})

    @staticmethod
    def game(name: str) -> Game:
        """Return the game registered as ``name`` (:class:`dicegraph.graphs.commands.Session`); raises UnknownGame."""
        return get_game(name)

    def output_file(self, path: Path) -> Path:
        """Return ``path`` once a file can be written there (:class:`dicegraph.graphs.commands.Session`)."""
        return check_file(path)

    def write_file(self, path: Path, data: bytes) -> Path:
        """Write ``data`` to ``path`` (:func:`dicegraph.store.output.write_file`; :class:`dicegraph.graphs.commands.Session`)."""
        return write_file(path, data)

    @_one_line_errors
    def graphs(self) -> list[dict[str, Any]]:
        """Return the stored graphs, as ``graphs --json`` prints them (id, game, params, nodes, edges, layers,
        created_at)."""
        with self._engine(read_only=True) as engine, engine.connect() as connection:
            return as_json(stored_graphs(connection))

    @_one_line_errors
    def policies(self, graph: str | int, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Return a stored graph's policies with their values, as ``policies --json`` prints them."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            return as_json(list_policies(connection, row.id, get_game(row.game).outcome))

    @_one_line_errors
    def position(self, graph: str | int, key: str, params: Mapping[str, Any] | None = None, *,
                 depth: int = 2) -> dict[str, Any]:
        """Return the position ``key`` of a stored graph as ``show --json`` prints it: its kind, label, layer, each
        policy's value and reach, its rolls or moves (``depth`` levels deep; a position inside a turn stored once,
        ``STATE @ TURN-NODE``, one level, :meth:`dicegraph.store.view.TurnGraphView.position`), and ``not_evaluated``
        (the policies without values that a solve would give them: not a race's agents, played in its matches)."""
        with self._reading() as connection:
            row = stored_graph(connection, graph, params)
            view = GraphView(connection, row.id, get_game(row.game), row=row)
            described = view.position(key, depth)
            unevaluated = [p["name"] for p in list_policies(connection, row.id)
                           if p["value"] is None and (view.values_agents or p["method"] != "agent")]
        return as_json({**described, "graph": row.id, "game": row.game, "not_evaluated": unevaluated})

    @_one_line_errors
    def query(self, sql: str, *, write: bool = False, limit: int | None = None,
              timeout: float | None = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
        """Run one SQL statement and return its rows as dicts, as ``query --json`` prints them: read-only and
        stopped after ``timeout`` seconds (None: no limit) unless told otherwise, files out of reach."""
        columns, rows = self.query_table(sql, write=write, limit=limit, timeout=timeout)
        return as_json([dict(zip(columns, row)) for row in rows])

    @_one_line_errors
    def query_table(self, sql: str, *, write: bool = False, limit: int | None = None,
                    timeout: float | None = DEFAULT_TIMEOUT, on_rows: RowsTaker | None = None
                    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Return :meth:`query`'s columns and rows as the driver gives them (the columns even of no rows); with
        ``on_rows``, hand it the rows a batch at a time as they are read, in bounded memory, and return the
        columns alone (:func:`dicegraph.store.query.run_query`)."""
        if not isinstance(sql, str) or not sql.strip():
            raise DicegraphError("no SQL statement given (a text)")
        with self._engine(read_only=not write) as engine:
            return run_query(engine, sql, write=write, limit=limit, timeout=timeout or None, on_rows=on_rows)


def _readable(connection: sa.Connection, row: dict[str, Any]) -> dict[str, Any]:
    """Return a stored graph's row with its creation time as text and its first position's key (``root``, read
    unless the row has it already: :func:`dicegraph.store.browse.stored_graphs` reads every graph's at once)."""
    root = row["root"] if "root" in row else root_key(connection, row["id"])
    return {**row, "created_at": str(row["created_at"]), "root": root}


def _policy_distributions(connection: sa.Connection, view: GraphView, policies: list[dict[str, Any]],
                          turns: bool) -> dict[str, list[dict[str, float]]]:
    """Return :meth:`Database.distributions` of the graph ``view`` reads, its ``policies`` listed."""
    if view.keeps_positions:
        return _distributions(connection, view.graph_id, policies)
    if not turns:
        return {}
    return {p["name"]: [{"payoff": payoff, "probability": chance}
                        for payoff, chance in view.distribution(p["name"]).items()] for p in policies}


def _distributions(connection: sa.Connection, graph_id: int,
                   policies: list[dict[str, Any]]) -> dict[str, list[dict[str, float]]]:
    """Return each evaluated policy's exact outcome distribution (:func:`dicegraph.store.propagate.outcome_distributions`):
    policy -> ``[{"payoff", "probability"}]``; empty for a graph with cycles, or whose turn is stored once."""
    if has_cycles(connection, graph_id):
        return {}
    ids = policy_ids(connection, graph_id)
    evaluated = [row["name"] for row in policies if row["value"] is not None]
    spreads = outcome_distributions(connection, graph_id, [ids[name] for name in evaluated])
    return {name: [{"payoff": payoff, "probability": p} for payoff, p in spreads[ids[name]].items()]
            for name in evaluated if spreads[ids[name]]}


def open(url: str | None = None, **options: Any) -> Database:  # noqa: A001 (the library's verb, as sqlite-utils')
    """Return the database at ``url`` (the URLs of ``--db``: ``sqlite:///FILE``, ``duckdb:///FILE``,
    ``postgresql://...``; ``$DICEGRAPH_DB`` or ``sqlite:///dicegraph.db`` when None). Nothing is opened until a
    method runs; ``options`` are :class:`Database`'s (``memory``, ``meter``, ``on_wait``)."""
    return Database(url, **options)


def _moments(distribution: Mapping[float, float]) -> dict[str, float]:
    """Return a distribution's ``expected_payoff`` and ``sd``."""
    expected, spread = mean_and_spread(distribution)
    return {"expected_payoff": expected, "sd": spread}
