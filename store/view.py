"""A stored, solved graph as a game's hooks see it: values, reaches, choices and outcomes by key.

This is the store's side of :class:`dicegraph.graphs.protocol.StoredGraph`. A game's
report (``analyse``) asks it questions in the game's own terms (node keys,
policy names) and reads the keys itself; the store runs the SQL and never
reads a key.

>>> from dicegraph.graphs import get_game
>>> from dicegraph.store.db import open_database
>>> from dicegraph.store.report import game_report
>>> engine = open_database("sqlite://", create=True)
>>> report = game_report(engine, get_game("jackpot"), {"cells": 3})
>>> with engine.connect() as connection:
...     graph = GraphView(connection, report["graph"], get_game("jackpot"))
...     round(graph.values("optimal")["0"], 6), graph.choices("optimal")["0/1-2"]
(0.143583, ChosenMove(label='flip 1', dst='1'))
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import OPTIMAL, ChosenMove, Progress, Simulation, spread, with_defaults
from dicegraph.graphs.repeating import valued_agent
from dicegraph.graphs.spec import GameSpec
from dicegraph.store.solve import (graph_matches, objectives, race_departures, race_matches, readers, turn_cycles,
                                   turns)
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.catalog import (evaluated_policy, find_node, find_policy, list_policies, list_policy_names,
                                     policy_convergence, root_value, stored_choices)
from dicegraph.store.departures import compare_policies
from dicegraph.store.errors import NotFound
from dicegraph.store.load import canonical_params, find_graph
from dicegraph.store.positions import describe_position
from dicegraph.store.propagate import mean_payoff, outcome_distribution, outcomes_from_every_position
from dicegraph.store.schema import choice, edge, graph, node, policy, value
from dicegraph.store.solve.layers import Goal
from dicegraph.store.solve.turn_outcomes import turn_outcomes
from dicegraph.store.sweep import sweep_outcomes
from dicegraph.store.turn_positions import SEPARATOR, TurnPositions, state_of


class GraphView:
    """One stored graph, read through ``connection`` (see :class:`dicegraph.graphs.protocol.StoredGraph`).

    ``game`` is the graph's game as it declared itself (the caller looks it up: the store reads no registry);
    ``progress``, when given, counts the layers that :meth:`match` has played on a graph with cycles;
    ``all_matches`` and ``simulation`` are what the report was asked (``report --all-matches``, ``-n`` games
    with a seed). A repeating game's graph, its turn
    stored once, is a :class:`TurnGraphView` (made here, the one place that asks).
    """

    keeps_positions = True  # each position keeps its policies' values, reaches and choices (compared one by one)
    values_agents = True  # an agent is evaluated on its own (a race's are played in its matches alone)

    def __new__(cls, connection: sa.Connection, graph_id: int, game: GameSpec, *args: Any, **options: Any
                ) -> GraphView:
        """Return a new view of the graph: a :class:`TurnGraphView` for a game whose turn is stored once."""
        chosen = TurnGraphView if cls is GraphView and game.repeating else cls
        return super().__new__(chosen)

    def __init__(self, connection: sa.Connection, graph_id: int, game: GameSpec,
                 progress: Progress | None = None, all_matches: bool = False, simulation: Simulation | None = None,
                 row: sa.Row | None = None):
        """``row``: the graph's row where the caller has read it, not read again (kept as :attr:`row`)."""
        self.connection, self.graph_id, self.spec, self.progress = connection, graph_id, game, progress
        self.all_matches, self.simulation = all_matches, simulation
        if row is None or row.id != graph_id:
            row = connection.execute(sa.select(graph).where(graph.c.id == graph_id)).one()
        if row.game != game.name:
            raise ValueError(f"graph {graph_id} is a graph of {row.game!r}, not of {game.name!r}")
        self.game, self.params, self.row = row.game, json.loads(row.params), row
        self._turn_graph: TurnGraph | None = None
        self._matched: dict[tuple[str, str], tuple[float, float]] = {}

    def _policy(self, name: str) -> int:
        return find_policy(self.connection, self.graph_id, name).id

    @property
    def counted(self) -> str:
        """Return what :meth:`distribution` counts: ``payoff`` (a race whose turn is stored once counts turns,
        :attr:`TurnGraphView.counted`)."""
        return "payoff"

    def _by_key(self, column: sa.ColumnElement, policy: str, kind: str | None, layer: int | None,
                reached: bool = False) -> dict[str, float]:
        query = (sa.select(node.c.key, column)
                 .select_from(node.join(value, sa.and_(value.c.node_id == node.c.id,
                                                       value.c.policy_id == self._policy(policy))))
                 .where(node.c.graph_id == self.graph_id))
        if kind is not None:
            query = query.where(node.c.kind == kind)
        if layer is not None:
            query = query.where(node.c.layer == layer)
        if reached:
            query = query.where(value.c.reach > 0)
        return dict(self.connection.execute(query).all())

    def values(self, policy: str, kind: str | None = None, layer: int | None = None) -> dict[str, float]:
        """Return node key -> the policy's value there (only nodes of ``kind`` / ``layer`` when given)."""
        return self._by_key(value.c.value, policy, kind, layer)

    def reaches(self, policy: str, kind: str | None = None) -> dict[str, float]:
        """Return node key -> the probability that the policy reaches it, for the nodes it reaches."""
        return self._by_key(value.c.reach, policy, kind, None, reached=True)

    def choices(self, policy: str) -> dict[str, ChosenMove]:
        """Return decision key -> the move the policy takes there (its label and the key it leads to)."""
        source, target = node.alias("source"), node.alias("target")
        query = (
            sa.select(source.c.key, edge.c.label, target.c.key.label("dst"))
            .select_from(choice.join(edge, edge.c.id == choice.c.edge_id)
                         .join(source, sa.and_(source.c.graph_id == self.graph_id, source.c.id == choice.c.node_id))
                         .join(target, sa.and_(target.c.graph_id == self.graph_id, target.c.id == edge.c.dst)))
            .where(choice.c.policy_id == self._policy(policy))
        )
        return {key: ChosenMove(label, dst) for key, label, dst in self.connection.execute(query)}

    def position(self, key: str, depth: int = 1) -> dict[str, Any]:
        """Return the node ``key``: label, kind, each policy's value, its edges ``depth`` levels deep
        (:func:`dicegraph.store.positions.describe_position`)."""
        return describe_position(self.connection, self.graph_id, key, depth)

    def neighbourhood(self, key: str, depth: int = 1, max_nodes: int | None = None) -> Any:
        """Return the position ``key`` and those ``depth`` steps from it as a networkx graph to draw
        (:func:`dicegraph.store.export.neighbourhood`, the optimum's moves marked chosen once it is solved);
        TooLarge past ``max_nodes`` nodes."""
        from dicegraph.store.export import neighbourhood  # networkx loads only when drawing

        solved = OPTIMAL in list_policy_names(self.connection, self.graph_id)
        return neighbourhood(self.connection, self.graph_id, key, depth=depth,
                             policy_id=self._policy(OPTIMAL) if solved else None, max_nodes=max_nodes)

    def play_positions(self, stored: Sequence[str], policies: Sequence[str], root: str, steps: list[dict[str, str]],
                       kept: dict[str, Any]) -> tuple[Callable[[str], dict[str, Any]], list[str], Callable[[str], str]]:
        """Return what a game in play reads of the graph: ``look`` (a position's key -> its description one level
        deep, :func:`dicegraph.store.positions.describe_position`), the policies whose moves it names (all those
        ``stored``), and the stored key that shows a position (here, its own). A repeating game's view reads its
        positions over the turn (:class:`dicegraph.store.turn_positions.TurnPositions`, naming ``policies``
        besides the optimum, the turns of the states along ``steps`` from ``root`` worked out at once), kept in
        ``kept``, which the caller holds a graph."""
        return functools.partial(describe_position, self.connection, self.graph_id, depth=1), list(stored), str

    def sd(self, policy: str) -> float | None:
        """Return the standard deviation of the payoff under the policy over whole games where the solve keeps
        it (a turn stored once keeps each state's second moment); None here."""
        return None

    def stored_sizes(self) -> dict[str, int]:
        """Return the sizes the graph's storage adds to its nodes, edges and layers (a turn stored once: its
        turn states and turn, :meth:`TurnView.sizes`); none here."""
        return {}

    def policy_to_play(self, name: str) -> tuple[Any, float]:
        """Return what the game's simulator plays for the stored policy ``name`` (its choices, position key ->
        the key its move leads to; a best response's, with the policy it answers in the other seat) and its exact
        value at the root (for a policy solved for a goal, the payoff it expects, which games score); NotFound when
        it is not stored."""
        row = find_policy(self.connection, self.graph_id, name)
        exact = root_value(self.connection, row.id)
        if exact is not None and row.goal is not None:  # the value is the goal's probability; games score payoffs
            exact = mean_payoff(self.connection, row.id, self.graph_id)
        played = stored_choices(self.connection, row.id)
        answered = self._answered(row.id)
        if answered is None:
            return played, exact
        return (played, answered.name if answered.method == "agent" else stored_choices(self.connection, answered.id)), exact

    def _answered(self, policy_id: int) -> sa.Row | None:
        """Return the policy row that the stored policy ``policy_id`` is the best response to (None: it is none)."""
        answers = sa.select(policy.c.responds_to).where(policy.c.id == policy_id).scalar_subquery()
        return self.connection.execute(sa.select(policy).where(policy.c.id == answers)).first()

    def distribution(self, policy: str, start: str | None = None) -> dict[float, float]:
        """Return payoff -> probability of ending with it under the policy (from the position keyed ``start``: what
        is still to come from there)."""
        at = 0 if start is None else find_node(self.connection, self.graph_id, start).id
        return outcome_distribution(self.connection, self._policy(policy), self.graph_id, at)

    def position_outcomes(self, policy: str) -> dict[str, dict[float, float]]:
        """Return :meth:`distribution` from every position at once, by key (:func:`dicegraph.store.propagate.outcomes_from_every_position`)."""
        return outcomes_from_every_position(self.connection, self._policy(policy), self.graph_id)

    def goal_sweep(self, objective: str, goals: Sequence[str]) -> list[dict[float, float]]:
        """Return, per goal text (``'payoff < 7'``), the outcome distribution of the policy best for it."""
        return sweep_outcomes(self.connection, self.graph_id, objective, [Goal.parse(text) for text in goals])

    @property
    def turn(self) -> TurnView:
        """Return the turn of a game that stores it once (:class:`TurnView`); NotFound here, for another game."""
        raise NotFound(f"{self.game} does not store its turn once: its graph has no turn states")

    def match(self, first: str, second: str) -> tuple[float, float]:
        """Return the probabilities that policy ``first``, moving first, beats ``second``, and the other way
        round (:meth:`played`)."""
        return self.played([(first, second)])[0]

    def played(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float]]:
        """Return each pair's :meth:`match`: the pairs this view has not played yet (in either order) played
        together (:meth:`_play`), each kept."""
        missing = [pair for pair in dict.fromkeys(pairs) if pair not in self._matched and pair[::-1] not in self._matched]
        if missing:
            self._matched.update(zip(missing, self._play(missing)))
        return [self._matched[pair] if pair in self._matched else self._matched[pair[::-1]][::-1] for pair in pairs]

    def _play(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float]]:
        """Return each pair's two probabilities, played together (``store/solve/graph_matches.py``)."""
        return graph_matches.head_to_heads(self.connection, self.graph_id, pairs, self.progress)

    def response(self, answered: str) -> dict[str, Any]:
        """Return how the stored best response to policy ``answered`` and the optimum do against it, and its
        exploitability (:func:`dicegraph.store.solve.graph_matches.response_figures`)."""
        return graph_matches.response_figures(self.played, self.game_value(), answered,
                                              objectives.response_name(answered), OPTIMAL)

    def game_value(self) -> float:
        """Return the game's value: what the optimum wins at the root, moving first in self-play."""
        return root_value(self.connection, self._policy(OPTIMAL))

    def responses(self, answered: Sequence[str]) -> list[dict[str, Any]]:
        """Return :meth:`response` of each policy ``answered`` (their matches played together)."""
        self.played([(first, name) for name in answered for first in (objectives.response_name(name), OPTIMAL)])
        return [self.response(name) for name in answered]

    def matches(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """Return each pair of policies played both ways: ``[{"first", "second", "p_first_wins"}]``, a pair's two
        orders side by side."""
        results = self.played(pairs)
        played = []
        for (first, second), (one_way, other_way) in zip(pairs, results):
            played += [{"first": first, "second": second, "p_first_wins": one_way},
                       {"first": second, "second": first, "p_first_wins": other_way}]
        return played

    def departures(self, policy: str, reference: str, top: int = 10) -> dict[str, Any] | None:
        """Return where the stored policy ``policy`` departs from ``reference``, position by position:
        ``{"decisions", "worse", "tied", "expected_loss", "deviations"}``
        (:func:`dicegraph.store.departures.compare_policies`; NotFound for a policy not evaluated)."""
        rows = [evaluated_policy(self.connection, self.row, name) for name in (policy, reference)]
        return compare_policies(self.connection, self.graph_id, *rows, top)

    def convergence(self, policy: str) -> dict[str, Any] | None:
        """Return the policy's record of how its cyclic components converged (None without cycles)."""
        return policy_convergence(self.connection, self._policy(policy))

    def other(self, params: Mapping[str, Any]) -> GraphView:
        """Return the same game's stored graph for ``params`` (built by the report first: ``report_graphs``)."""
        stored = find_graph(self.connection, self.game, canonical_params(with_defaults(self.spec, params)))
        if stored is None:
            raise NotFound(f"no stored {self.game} graph with {dict(params)} (the game's report_graphs names it)")
        return GraphView(self.connection, stored.id, self.spec)


class TurnGraphView(GraphView):
    """A stored graph whose turn is stored once: its solve keeps each turn state's results, read through
    :attr:`turn`; it keeps no values, reaches or choices a node (asking for them is refused: an empty answer would
    say the policy is nowhere), and a race plays its matches over the turn (``store/solve/race_matches.py``, every
    pair in one run)."""

    keeps_positions = False

    @property
    def values_agents(self) -> bool:
        """Return whether an agent is evaluated on its own: not in a race, whose agents follow their stored choices
        in its matches alone."""
        return self.spec.players != 2

    @property
    def counted(self) -> str:
        """Return what :meth:`distribution` counts: ``payoff``, or ``turns`` in a game for two (a race, whose
        outcome is who wins: how many turns the policy against itself plays)."""
        return "turns" if self.spec.players == 2 else "payoff"

    def game_value(self) -> float:
        """Return :meth:`GraphView.game_value`, from the optimum's stored turn states."""
        return readers.game_score(self.connection, self.graph_id, self._policy(OPTIMAL), self._root_key())[0]

    def _turn(self) -> TurnGraph:
        if self._turn_graph is None:
            self._turn_graph = TurnGraph.load(self.connection, self.graph_id, self.spec.turn(self.params))
        return self._turn_graph

    def play_positions(self, stored: Sequence[str], policies: Sequence[str], root: str, steps: list[dict[str, str]],
                       kept: dict[str, Any]) -> tuple[Callable[[str], dict[str, Any]], list[str], Callable[[str], str]]:
        """Return :meth:`GraphView.play_positions`: a position is a turn state and a node of its turn, valued as it
        is reached, and shown at its turn state."""
        known = kept.get("turn")
        if known is None:
            known = kept["turn"] = TurnPositions(self.connection, self.graph_id, self.spec.turn(self.params))
        positions = known.bound(self.connection, policies)
        positions.prefetch(positions.states_along(root, steps))
        return positions.look, positions.policies, state_of

    def position(self, key: str, depth: int = 1) -> dict[str, Any]:
        """Return :meth:`GraphView.position`; a position inside a turn (``STATE @ TURN-NODE``,
        :func:`dicegraph.store.turn_positions.position_key`) one level deep, as the turn played from its state shows
        it (:meth:`dicegraph.store.turn_positions.TurnPositions.look`), naming the moves of every stored policy
        that has values and of a race's agents (they follow their stored choices)."""
        if SEPARATOR not in key:
            return super().position(key, depth)
        named = [row["name"] for row in list_policies(self.connection, self.graph_id)
                 if row["value"] is not None or (not self.values_agents and row["method"] == "agent")]
        positions = TurnPositions(self.connection, self.graph_id, self.spec.turn(self.params))
        return positions.bound(self.connection, named).look(key)

    def neighbourhood(self, key: str, depth: int = 1, max_nodes: int | None = None) -> Any:
        """Return :meth:`GraphView.neighbourhood`; for a position inside a turn (``STATE @ TURN-NODE``), it and the
        positions one step on, as :meth:`position` shows them (its own graph of rows holds no such node)."""
        if SEPARATOR not in key:
            return super().neighbourhood(key, depth, max_nodes)
        import networkx as nx  # loaded when drawing, not when the command line starts

        positions = TurnPositions(self.connection, self.graph_id, self.spec.turn(self.params))
        seen = positions.look(key)
        drawn = nx.DiGraph()
        drawn.add_node(seen["key"], key=seen["key"], label=seen["label"], layer=seen["layer"], kind=seen["kind"],
                       denom=seen["denom"], payoff=None, value=None, reach=None)
        for move in seen["edges"]:
            drawn.add_node(move["to"], key=move["to"], **positions.node_of(move["to"]), value=None, reach=None)
            drawn.add_edge(seen["key"], move["to"], kind=move["kind"], label=move["label"], weight=move["weight"],
                           denom=seen["denom"], reward=move["reward"], chosen=OPTIMAL in move["chosen_by"])
        return drawn

    def distribution(self, policy: str, start: str | None = None) -> dict[float, float]:
        """Return :meth:`GraphView.distribution` of whole games played by the solved turn policy ``policy`` (its
        turns chosen and spread a state layer at a time, :func:`dicegraph.store.solve.turn_outcomes.turn_outcomes`;
        ``progress`` counts the states played); for a race, whose outcome is who wins, the number of turns a
        match of the policy against itself lasts (:func:`dicegraph.store.solve.race_matches.match_lengths`,
        ``progress`` counting the turns). NotFound for a policy not solved."""
        if start is not None:
            raise NotFound(f"{self.game} stores its turn once: its outcomes are propagated from the start only")
        graph = self._turn()
        find_policy(self.connection, self.graph_id, policy)  # listed: solved whole
        if self.counted == "turns":  # a race: how many turns its matches last
            lengths = race_matches.match_lengths(self.connection, graph, policy, policy, self.progress)
            return {float(turns): p for turns, p in lengths.items()}
        return turn_outcomes(self.connection, graph, policy, self.progress)

    def position_outcomes(self, policy: str) -> dict[str, dict[float, float]]:
        """Raise NotFound: a turn stored once is played forward from the start (:meth:`distribution`)."""
        raise NotFound(f"{self.game} stores its turn once: its outcomes are propagated from the start only")

    def sd(self, policy: str) -> float | None:
        """Return :meth:`GraphView.sd`: from the first turn state's value and second moment (None for a policy
        the turn solve does not play, a race's stored agent)."""
        if policy not in {declared.name for declared in self._turn().structure.policies}:
            return None
        expected, moment2, _ = self.turn.state(policy, self._root_key())
        return spread(expected, moment2)

    def stored_sizes(self) -> dict[str, int]:
        """Return :meth:`TurnView.sizes`."""
        return self.turn.sizes()

    def _root_key(self) -> str:
        return self.connection.execute(sa.select(node.c.key).where(node.c.graph_id == self.graph_id,
                                                                  node.c.id == 0)).scalar_one()

    def policy_to_play(self, name: str) -> tuple[Any, float]:
        """Return :meth:`GraphView.policy_to_play` of a turn stored once: the game's ``play_turns`` of the policy's
        decisions or, for a game for one player without it, its rules played from the stored states' values;
        NotFound when the policy is not solved over the whole game."""
        policy_id = self._policy(name)
        if not turns.is_solved(self.connection, policy_id):
            raise NotFound(f"policy {name!r} of {self.game} is not solved over the whole game "
                           f"(run: dicegraph report {self.game})")
        exact = readers.game_score(self.connection, self.graph_id, policy_id, self._root_key())[0]
        play_turns = self.spec.play_turns
        if play_turns is not None:
            return play_turns(readers.stored_decisions(self.connection, self.graph_id, policy_id)), exact
        answered = self._answered(policy_id)
        if self.spec.rules is None or (self.spec.players == 2 and answered is None):
            raise DicegraphError(f"{self.game} plays its stored policy {name!r} only in its report's matches "
                                 f"(dicegraph report {self.game} -n GAMES); simulate plays its agents")
        rules = self.spec.rules(self.params)
        values = readers.stored_values(self.connection, self.graph_id, policy_id)
        if answered is None:
            return valued_agent(rules, values, self.spec.objective), exact
        opponent = readers.stored_values(self.connection, self.graph_id, policy_id, ranked=True)
        played = answered.name if answered.method == "agent" else valued_agent(rules, opponent, "max", values)
        return (valued_agent(rules, values, self.spec.objective, opponent), played), exact

    def _refused(self, what: str) -> NotFound:
        return NotFound(f"{self.game} stores its turn once, so no {what} are kept a node: read its turn states' "
                        "results through the stored graph's turn")

    def _by_key(self, column: sa.ColumnElement, policy: str, kind: str | None, layer: int | None,
                reached: bool = False) -> dict[str, float]:
        raise self._refused("reaches" if reached else "values")

    def choices(self, policy: str) -> dict[str, ChosenMove]:
        """Refuse: the turn's choices are kept as each state's decisions (:attr:`turn`)."""
        raise self._refused("choices")

    @property
    def turn(self) -> TurnView:
        """Return the turn (:class:`TurnView`)."""
        return TurnView(self.connection, self._turn())

    def _play(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float]]:
        """Return each pair's two probabilities, played together over the turn (its two orders one run's)."""
        return race_matches.matches(self.connection, self._turn(), pairs, self.progress)

    def departures(self, policy: str, reference: str, top: int = 10) -> dict[str, Any] | None:
        """Return :meth:`GraphView.departures` of a race, its turn played from every state under both policies
        (:func:`dicegraph.store.solve.race_departures.departures`; ``progress`` counts its batches of states); None
        for a game for one (its positions are not compared one by one) or a reference that values no move (an
        agent's)."""
        if self.spec.players != 2:
            return None
        return race_departures.departures(self.connection, self._turn(), policy, reference, top, self.progress)

    def responses(self, answered: Sequence[str]) -> list[dict[str, Any]]:
        """Return :meth:`GraphView.responses` of a race: every best response worked out in one run over the turn
        (:func:`dicegraph.store.solve.race_matches.best_responses`), not stored; the optimum's matches against the
        policies in one more."""
        found = race_matches.best_responses(self.connection, self._turn(), answered, self.progress)
        for name, response in zip(answered, found):  # the answered policy moving first wins 1 - response.second
            self._matched[objectives.response_name(name), name] = (response.first, 1.0 - response.second)
        game_value = self.game_value()
        self._matched[OPTIMAL, OPTIMAL] = (game_value, game_value)  # the optimum against itself: no run
        self.played([(OPTIMAL, name) for name in answered])
        return [graph_matches.response_figures(self.played, game_value, name, objectives.response_name(name), OPTIMAL)
                for name in answered]


class TurnView:
    """The turn of a game that stores it once, read through ``connection`` (see :class:`dicegraph.graphs.protocol.StoredTurn`).

    >>> from dicegraph.graphs import get_game
    >>> from dicegraph.store.db import open_database
    >>> from dicegraph.store.report import game_report
    >>> engine = open_database("sqlite://", create=True)
    >>> report = game_report(engine, get_game("5000-race"), {"target": 100})
    >>> with engine.connect() as connection:
    ...     turn = GraphView(connection, report["graph"], get_game("5000-race")).turn
    ...     turn.values("optimal")["0-0"] == report["p_first_wins"], turn.sizes()["turn_states"]
    (True, 5)
    """

    def __init__(self, connection: sa.Connection, graph: TurnGraph):
        self.connection, self.graph, self.graph_id = connection, graph, graph.graph_id

    def _policy(self, name: str) -> int:
        return turns.ensure_policy(self.connection, self.graph, name)

    def values(self, policy: str) -> dict[str, float]:
        """Return turn state key -> the policy's value there."""
        return readers.stored_values(self.connection, self.graph_id, self._policy(policy))

    def state(self, policy: str, key: str) -> tuple[float, float, bytes]:
        """Return the policy's value, second moment and decision bytes at turn state ``key``."""
        row = readers.state_result(self.connection, self.graph_id, self._policy(policy), key)
        return row.value, row.moment2, row.decisions

    def decisions(self, policy: str) -> dict[str, bytes]:
        """Return turn state key -> the policy's decision bytes there."""
        return readers.stored_decisions(self.connection, self.graph_id, self._policy(policy))

    def worths(self, policy: str, key: str) -> dict[str, tuple[float, float]]:
        """Return, for turn state ``key``, each turn node's key -> (profit, value) under the policy."""
        return turns.turn_worths(self.connection, self.graph, policy, key)

    def node_values(self, keys: Sequence[str]) -> dict[str, dict[str, float]]:
        """Return, for each turn state ``keys`` of a race, its turn's rolling nodes and ends (keys) -> their value
        under the optimum (``store/solve/turn_cycles.py``)."""
        ids = {key: find_node(self.connection, self.graph_id, key).id for key in keys}
        found = turn_cycles.turn_node_values(self.connection, self.graph, list(ids.values()))
        names = dict(self.connection.execute(sa.select(node.c.id, node.c.key).where(
            node.c.graph_id == self.graph_id, node.c.layer >= self.graph.turn_spans[0].layer)).all())
        return {key: {names[node_id]: v for node_id, v in found[state].items()} for key, state in ids.items()}

    def sizes(self) -> dict[str, int]:
        """Return the sizes: turn_states, state_edges, turn_nodes, turn_edges, copied_edges."""
        return readers.turn_sizes(self.connection, self.graph_id, self.graph.turn_spans[0].layer)
