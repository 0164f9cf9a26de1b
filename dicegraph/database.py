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
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from graphs import GAMES, get_game
from graphs.commands import as_json
from graphs.errors import DicegraphError
from graphs.protocol import OPTIMAL, Game, Progress, StoredGraph, resolve_params, value_text
from store.browse import stored_graphs
from store.catalog import find_policy, is_graph_id, list_policies, policy_convergence, resolve_graph, stored_params
from store.db import DEFAULT_MEMORY, database_url, is_in_memory, open_database
from store.errors import database_failure, file_failure
from store.load import BuildResult, build_graph, expected_edges
from store.output import check_directory, check_file
from store.positions import describe_position
from store.query import DEFAULT_TIMEOUT, run_query
from store.report import (DEFAULT_SEED, draw_game_diagrams, ensure_evaluated, evaluate_stored, game_report,
                          pending_layers, policy_names, prepare_game, report_simulations, solve_steps)
from store.solve import solve_graph
from store.view import GraphView

Meter = Callable[[str, "int | None"], AbstractContextManager["Progress | None"]]
"""How long work is shown: given what it does and how many steps (None: not known), a context that yields the
callback told of the steps done, or None to show nothing (the CLI's bars and lines on stderr are one)."""

Result = TypeVar("Result")


def _quiet(label: str, length: int | None) -> AbstractContextManager[Progress | None]:
    """Return a meter that shows nothing."""
    return nullcontext(None)


def _texts(params: Mapping[str, Any] | None) -> dict[str, str]:
    """Return parameters given as values (``{"cells": 4}``) or as text (``{"cells": "4"}``) as text, as ``-p`` gives
    them, so that both are checked alike."""
    return {name: value_text(value) for name, value in (params or {}).items()}


def stored_graph(connection: sa.Connection, graph: str | int, params: Mapping[str, Any] | None = None) -> sa.Row:
    """Return the stored graph named by id or game name, ``params`` (values or text) picking among a game's graphs;
    raises NotFound or Ambiguous (:func:`store.catalog.resolve_graph`)."""
    ref = str(graph)
    if not params:
        return resolve_graph(connection, ref)
    if is_graph_id(ref) and ref not in GAMES:
        raise DicegraphError("parameters (-p) pick among a game's graphs; a graph id needs none")
    return resolve_graph(connection, ref, resolve_params(get_game(ref), _texts(params)))


def _one_line_errors(method: Callable[..., Result]) -> Callable[..., Result]:
    """Return ``method`` raising :class:`graphs.errors.DicegraphError` with the CLI's one line for the database's
    and the files' errors (a KeyboardInterrupt goes through: what was half done is rolled back)."""

    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Result:
        try:
            return method(*args, **kwargs)
        except DicegraphError:
            raise
        except sa.exc.DBAPIError as error:
            raise database_failure(error) from None
        except OSError as error:
            raise file_failure(error) from None

    return checked


class Database:
    """A dicegraph database (``--db URL``): every method opens what it needs and closes it again.

    Reading methods open it read-only and never write; ``build``, ``solve`` and ``report`` write, each in
    transactions that leave nothing half done. Errors are :class:`graphs.errors.DicegraphError` (``dicegraph.Error``)
    with the one line the CLI prints. ``meter`` shows long work (:data:`Meter`; none by default), ``on_wait``
    is told when another process holds the database.
    """

    def __init__(self, url: str | None = None, *, memory: str = DEFAULT_MEMORY, meter: Meter = _quiet,
                 on_wait: Callable[[str], None] | None = None):
        self.url = database_url(url)
        self.memory, self.meter, self.on_wait = memory, meter, on_wait
        self._kept: sa.Engine | None = None  # the one engine of an in-memory database, which lives as long as it

    def __repr__(self) -> str:
        return f"<dicegraph.Database {self.url}>"

    @contextmanager
    def _engine(self, *, create: bool = False, read_only: bool = False) -> Iterator[sa.Engine]:
        """Yield an engine on the database, disposed of afterwards (its pooled connections let go of the file); an
        in-memory database's is kept for the next call."""
        if is_in_memory(self.url):
            if self._kept is None:
                self._kept = open_database(self.url, create=True, memory=self.memory)
            yield self._kept
            return
        engine = open_database(self.url, create=create, read_only=read_only, on_wait=self.on_wait, memory=self.memory)
        try:
            yield engine
        finally:
            engine.dispose()

    @staticmethod
    def _game(game: str | Game, params: Mapping[str, Any] | None) -> tuple[Game, dict[str, Any]]:
        """Return the game named (or given) and its parameters resolved (text or values, defaults filled in)."""
        chosen = get_game(game) if isinstance(game, str) else game
        return chosen, resolve_params(chosen, _texts(params))

    @_one_line_errors
    def build(self, game: str | Game, params: Mapping[str, Any] | None = None, *, replace: bool = False,
              force: bool = False) -> dict[str, Any]:
        """Build the game's graph unless stored (``replace`` rebuilds it); return what ``build --json`` prints:
        ``graph_id``, ``action`` (built, reused or replaced), ``nodes``, ``edges``, ``layers``, ``game``,
        ``params``, ``seconds``."""
        chosen, values = self._game(game, params)
        started = time.perf_counter()
        with self._engine(create=True) as engine, \
                self.meter(f"building {chosen.name}, edges", expected_edges(chosen, values)) as building:
            result = build_graph(engine, chosen, values, replace=replace, force=force, progress=building)
        return as_json({**vars(result), "game": chosen.name, "params": values,
                        "seconds": time.perf_counter() - started})

    @_one_line_errors
    def solve(self, graph: str | int, params: Mapping[str, Any] | None = None, *, objective: str | None = None,
              name: str = OPTIMAL) -> dict[str, Any]:
        """Solve a stored graph (id or game name) for ``objective`` (the game's by default), store the policy as
        ``name`` and evaluate the stored agents; return what ``solve --json`` prints. The method is the store's
        pick for the graph (:func:`store.solve.solve_graph`); a game whose turn is stored once solves its
        declared turn policies, a state layer committed at a time."""
        with self._engine() as engine, engine.connect() as connection:
            row = stored_graph(connection, graph, params)
            game = get_game(row.game)
            params_stored = stored_params(connection, row.id)
            started = time.perf_counter()
            with self.meter(f"solving {row.game}", solve_steps(game, params_stored) or row.layers) as progress:
                solve_graph(connection, row.id, game, objective=objective, name=name, progress=progress)
            if game.stores_turn_once:  # its turn policies are solved together
                evaluated = [other for other in policy_names(game, params_stored) if other != name]
            else:
                with self.meter("evaluating the agents, layers", None) as evaluating:
                    evaluated = evaluate_stored(connection, row.id, evaluating)
            connection.commit()
            return self._solved(connection, row, name, objective or game.objective, evaluated,
                                time.perf_counter() - started)

    @staticmethod
    def _solved(connection: sa.Connection, row: sa.Row, name: str, objective: str, evaluated: list[str],
                seconds: float) -> dict[str, Any]:
        """Return what ``solve --json`` prints of the policy ``name`` of a graph just solved."""
        policy_id = find_policy(connection, row.id, name).id
        value = next(p["value"] for p in list_policies(connection, row.id) if p["name"] == name)
        return as_json({"graph": row.id, "game": row.game, "policy": name, "policy_id": policy_id,
                        "objective": objective, "value": value, "evaluated": evaluated, "seconds": seconds,
                        "edges_per_second": row.edges / seconds if seconds else None,
                        "convergence": policy_convergence(connection, policy_id)})

    @_one_line_errors
    def report(self, game: str | Game, params: Mapping[str, Any] | None = None, games: int = 0, *,
               seed: int = DEFAULT_SEED, diagrams: str | Path | None = None, all_matches: bool = False,
               on_build: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Build and solve what is missing, evaluate every policy and return what ``report --json`` prints; with
        ``games``, each policy's Monte Carlo estimate too (``seed``), with ``diagrams`` (a folder) the game's
        diagrams drawn there as PNGs; ``all_matches`` plays every pair of a two-player game's policies where the
        report would play fewer (the race beyond a target of 1000). ``on_build`` is told of the build
        (``build``'s dict) before the solve."""
        chosen, values = self._game(game, params)
        folder = check_directory(Path(diagrams)) if diagrams is not None else None

        def announce(result: BuildResult) -> None:
            if on_build is not None:
                on_build(as_json({**vars(result), "game": chosen.name, "params": values}))

        with self._engine(create=True) as engine:
            built = self._prepared(engine, chosen, values, "solving", announce)
            with engine.connect() as connection:
                solving = pending_layers(connection, built.graph_id, chosen)
            with self.meter(f"solving and evaluating {chosen.name}, layers", solving) as layers, \
                    self.meter("playing the matches, layers", None) as matches, \
                    self.meter("simulating", games * report_simulations(chosen, values, all_matches)) as simulating:
                data = game_report(engine, chosen, values, simulated_games=games, seed=seed, progress=simulating,
                                   layers=layers, matches=matches, built=built, all_matches=all_matches)
            if folder is not None:
                data["diagrams"] = draw_game_diagrams(engine, chosen, values, folder)
        return as_json(data)

    def _prepared(self, engine: sa.Engine, game: Game, params: Mapping[str, Any], solving: str,
                  on_build: Callable[[BuildResult], None] | None = None) -> BuildResult:
        """Return :func:`store.report.prepare_game`'s build, its edges and a turn game's solve steps (labelled
        ``solving``) shown as they go."""
        with self.meter(f"building {game.name}, edges", expected_edges(game, params)) as building, \
                self.meter(solving, solve_steps(game, params)) as steps:
            return prepare_game(engine, game, params, on_build=on_build, progress=steps, building=building)

    @contextmanager
    def solved(self, game: Game, params: Mapping[str, Any], what: str) -> Iterator[StoredGraph]:
        """Yield the game's graph for ``params``, built, solved and evaluated first where missing (what a game's
        own commands use: :class:`graphs.commands.Session`); nothing done through it is committed."""
        with self._engine(create=True) as engine:
            built = self._prepared(engine, game, params, f"solving {what} (first use only), steps")
            with self.meter(f"solving {what}, layers", None) as solving, engine.begin() as connection:
                ensure_evaluated(connection, built.graph_id, game, solving)
            with engine.connect() as connection:
                yield GraphView(connection, built.graph_id, game)

    @staticmethod
    def game(name: str) -> Game:
        """Return the game registered as ``name`` (:class:`graphs.commands.Session`); raises UnknownGame."""
        return get_game(name)

    def output_file(self, path: Path) -> Path:
        """Return ``path`` once a file can be written there (:class:`graphs.commands.Session`)."""
        return check_file(path)

    @_one_line_errors
    def graphs(self) -> list[dict[str, Any]]:
        """Return the stored graphs, as ``graphs --json`` prints them (id, game, params, nodes, edges, layers,
        created_at)."""
        with self._engine(read_only=True) as engine, engine.connect() as connection:
            return as_json(stored_graphs(connection))

    @_one_line_errors
    def policies(self, graph: str | int, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Return a stored graph's policies with their values, as ``policies --json`` prints them."""
        with self._engine(read_only=True) as engine, engine.connect() as connection:
            row = stored_graph(connection, graph, params)
            return as_json(list_policies(connection, row.id, get_game(row.game).outcome))

    @_one_line_errors
    def position(self, graph: str | int, key: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Return the position ``key`` of a stored graph as ``show --json`` prints it: its kind, label, layer, each
        policy's value and reach, its rolls or moves, and ``not_evaluated`` (the policies without values)."""
        with self._engine(read_only=True) as engine, engine.connect() as connection:
            row = stored_graph(connection, graph, params)
            described = describe_position(connection, row.id, key)
            unevaluated = [p["name"] for p in list_policies(connection, row.id) if p["value"] is None]
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
                    timeout: float | None = DEFAULT_TIMEOUT) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Return :meth:`query`'s columns and rows as the driver gives them (the columns even of no rows)."""
        if not sql.strip():
            raise DicegraphError("no SQL statement given")
        with self._engine(read_only=not write) as engine:
            return run_query(engine, sql, write=write, limit=limit, timeout=timeout or None)


def open(url: str | None = None, **options: Any) -> Database:  # noqa: A001 (the library's verb, as sqlite-utils')
    """Return the database at ``url`` (the URLs of ``--db``: ``sqlite:///FILE``, ``duckdb:///FILE``,
    ``postgresql://...``; ``$DICEGRAPH_DB`` or ``sqlite:///dicegraph.db`` when None). Nothing is opened until a
    method runs; ``options`` are :class:`Database`'s (``memory``, ``meter``, ``on_wait``)."""
    return Database(url, **options)
