"""Turn games whose turn states loop, solved exactly: the turn stored once, Newton's method per cyclic state layer.

A race is a turn game (``store/solve/turns.py``: the turn stored once, joined with
the turn states) whose state moves may hand the turn over (``sign`` -1, the
state seen from the other player) and may lead back into their own state
layer (a bust leaves the scores as they were): each such layer is a cyclic
component (:class:`dicegraph.graphs.protocol.CyclicLayers`). Layers are solved from the
last down, each exactly:

* Given a guess ``x`` of its states' values, one pass plays the turn from
  every state of the layer at once, as ``store/solve/turns.py`` does: per (turn
  node, state) the value ``v`` and its derivative ``d`` in the value of the
  state the turn loops back to (each state's moves into its own layer must
  all lead to one state: the solver checks it). A state's turn is then worth
  ``T(x) = c + d x[loop]``, exactly, for the moves taken at ``x``.
* The next guess solves ``x = c + d x[loop]`` (a small linear system, one
  unknown per state and seat): Newton's method on ``T(x) - x``, whose pieces
  are linear, so a few passes find the moves that are best at their own
  values; a layer is done when ``T(x)`` reproduces ``x`` (the *residual*).
  The first guess of a state is the (weighted) mean value of the solved
  states its game's ``first_guess`` hook names, else the mean value of the
  layer solved before.
* When the game's turn gives horizons (:class:`dicegraph.graphs.protocol.TurnStructure`),
  a pass leaves out, per state, the turn's nodes at or past its horizon, which
  play reaches only through a win at once (the race: from a turn total that
  wins when banked, half the race to 5000's combinations).
* Where statements cost more than rows (DuckDB), each pass after a layer's
  first plays the next layer too, from its first guess: when the pass proves
  the layer exact, that was the next layer's first pass.
* Where a recursive query may group each step's rows (DuckDB), a lone maximising seat plays a pass in one
  statement (:mod:`dicegraph.store.solve.turn_walk`), not a statement a turn layer.
* :func:`solve_race` is the operation ``race`` (:mod:`dicegraph.store.solve.dispatch`): Spark
  registers its own for the optimum, every pass inside rows, a statement a state layer, where each
  state's loop is a pair (``a-b`` and ``b-a``) or a state alone, as in the race.

*Seats*, as in ``store/solve/cycles.py``: seat ``i`` is "the player to move plays
seat ``i``'s way"; a pass leads to seat ``after_pass``. A seat maximises
(the optimum), ranks moves by a stored solve's values (the optimum's own
moves, played against another policy), or follows a stored agent's choices,
except that an agent takes a move that wins at once (ends the game at its
highest payoff) whenever it has one: nobody plays on past a win. Self-play
has one seat; a match of two policies two, and its passes give the exact
probability that the first wins. The report's matches are played by
:mod:`dicegraph.store.solve.race_matches`, which chooses the seats' moves with these
tables once and then plays every match from the policies' end distributions.
"""

from __future__ import annotations

import json
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from typing import Any, Protocol

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError, InvalidGraph
from dicegraph.graphs.protocol import TIE, Progress
from dicegraph.store.backends import backend_of
from dicegraph.store.solve.dispatch import dispatchable
from dicegraph.store.solve.cycles import Guess, NotConverged, components, mean_guess, named_positions
from dicegraph.store.convergence import MAX_PASSES, RESIDUAL_TOLERANCE, Convergence
from dicegraph.store.schema import EdgeId, choice, edge, graph_edge_span, node, policy, ranked_values, turn_policy
from dicegraph.store.scratch import edge_copy, temporary_table, turn_work_table
from dicegraph.store.seats import FOLLOW, MAXIMISE, RANK, Seat
from dicegraph.store.db import side_connections
from dicegraph.store.solve.parallel import solve_workers
from dicegraph.store.solve.turn_walk import TurnWalk
from dicegraph.store.solve.turns import ensure_policy
from dicegraph.store.turn_graph import TurnGraph, graph_payoffs

Guesses = dict[int, list[float]]  # state -> a value per seat
Played = dict[int, list[tuple[float, float]]]  # state -> per seat (value, derivative in its loop state's value)


def has_cyclic_states(connection: sa.Connection, graph: TurnGraph) -> bool:
    """Return whether some state layer of the turn game is a cyclic component."""
    root_layer = graph.turn_spans[0].layer
    return any(part.cyclic and part.first < root_layer for part in components(connection, graph.graph_id))


class LayerWork(Protocol):
    """What :func:`solve_layer` plays a state layer with: the seats, whether one maximises, and how to set the
    layer's values and play its turns (:class:`RaceTables`, or ``store/solve/race_matches.py``'s chain)."""

    graph: TurnGraph
    seats: list[Seat]
    maximising: bool

    def set_values(self, connection: sa.Connection, states: tuple[int, int], values: dict[int, list[float]],
                   rank: dict[int, float]) -> None:
        """Replace the values of the layer's states (node ids ``states``) by ``values`` (per seat)."""
        ...

    def play(self, connection: sa.Connection, layers: Sequence[tuple[sa.Row, tuple[int, int]]]) -> Played:
        """Return state -> per seat (value, derivative in its loop state's value) at the values set."""
        ...


class RaceTables:
    """The temporary tables and statements of one run (seats as columns ``p_i, v_i, d_i``)."""

    def __init__(self, connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], copy_turn: bool = False,
                 prune: bool = False, record_moves: bool = False, horizons: dict[int, int] | None = None,
                 prefix: str = "tcy", merged: bool = False):
        """``copy_turn``: play the turn from a temporary copy of its edges (:func:`dicegraph.store.scratch.edge_copy`), worth
        it for a whole solve (the performance notes measure it). ``prune`` (with ``copy_turn``): leave out the
        turn's nodes at or past each state's horizon, when the game gives them
        (:class:`dicegraph.graphs.protocol.TurnStructure`). ``record_moves``: the turn table keeps each seat's move at
        each (decision node, state), column ``m<i>`` (:mod:`dicegraph.store.solve.race_matches` follows them), and
        only what ranks the moves (``p<i>``): no value or derivative. ``horizons``: the states' horizons
        (:func:`state_horizons`) where the caller has them. ``prefix`` starts the names of the run's tables (two runs
        at once name theirs apart). ``merged`` (with ``copy_turn``): read the decision nodes that offer the same moves
        as one (:func:`dicegraph.store.scratch.merge_equivalent_decisions`), for seats that choose by values (no seat
        follows an agent's choices, which name each node's own moves): a turn state's value and the probability of
        each of the turn's ends are as they are, the rows fewer, and the moves recorded those of the node kept."""
        if merged and any(seat.kind == FOLLOW for seat in seats):
            raise ValueError("a seat that follows a stored policy's choices needs the turn as stored, not merged")
        self.graph, self.seats, self.record_moves, self.prefix = graph, list(seats), record_moves, prefix
        self.parts = ("p",) if record_moves else ("p", "v", "d")  # the columns a turn row holds per seat
        structure = graph.structure
        self.pruned = copy_turn and prune and structure.progress is not None and structure.horizon is not None
        first, last = graph.turn_edges()
        progress = self._progress_table(connection) if self.pruned else None
        self.edges = (edge_copy(connection, f"{prefix}_edge", first, last, progress, (graph.root,) if merged else None)
                      if copy_turn else edge)
        if progress is not None:
            progress.drop(connection)
        self.horizons = ({} if not self.pruned else horizons if horizons is not None
                         else state_horizons(connection, graph))
        self.maximising = any(seat.kind == MAXIMISE for seat in seats)  # else the moves are fixed: one pass from any guess
        self.carried = backend_of(connection).arg_min  # the move's columns are taken where it is chosen, not joined back
        self.bare_max = backend_of(connection).bare_max
        numbers = range(len(seats))
        self.state = temporary_table(connection, f"{self.prefix}_state",
                                     *(sa.Column(f"v{i}", sa.Double) for i in numbers), sa.Column("rank", sa.Double),
                                     sa.Column("sure", sa.Double, nullable=False), *self._horizon_column())
        self.turn = turn_work_table(connection, f"{self.prefix}_turn", *self._horizon_column(),
                                    *(sa.Column(f"{name}{i}", sa.Double, nullable=False)
                                      for i in numbers for name in self.parts),
                                    *(sa.Column(f"m{i}", EdgeId) for i in numbers if record_moves))
        self.ends = graph.labelled_ends(connection, f"{self.prefix}_end")
        root_layer = graph.turn_spans[0].layer
        top = sa.select(sa.func.max(node.c.payoff)).where(node.c.graph_id == graph.graph_id, node.c.kind == "terminal",
                                                          node.c.layer < root_layer).scalar_subquery()
        over = sa.select(node.c.id, *(node.c.payoff.label(f"v{i}") for i in numbers), node.c.payoff.label("rank"),
                         sa.case((node.c.payoff >= top, 1.0), else_=0.0).label("sure")).where(
            node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < root_layer)
        connection.execute(sa.insert(self.state).from_select(
            ["node_id", *(f"v{i}" for i in numbers), "rank", "sure"], over))
        self.chance = self._chance()
        self.decide = self._decide()
        self.walk = (TurnWalk(connection, graph, self.edges, self.turn, prefix, self.pruned)
                     if copy_turn and self.carried and self._lone_maximiser() and backend_of(connection).grouped_recursion
                     else None)

    def _progress_table(self, connection: sa.Connection) -> sa.Table:
        """Return a new temporary table of the progress of each of the turn's chance and decision nodes (the
        game's ``progress`` of its key): every edge the turn's statements join leaves one of them."""
        root_layer = self.graph.turn_spans[0].layer
        table = temporary_table(connection, f"{self.prefix}_progress",
                                sa.Column("progress", sa.Integer, nullable=False))
        keys = connection.execute(sa.select(node.c.id, node.c.key).where(
            node.c.graph_id == self.graph.graph_id, node.c.layer >= root_layer, node.c.kind != "terminal"))
        progress = self.graph.structure.progress
        connection.execute(sa.insert(table), [{"node_id": node_id, "progress": progress(key)} for node_id, key in keys])
        return table

    def _horizon_column(self) -> list[sa.Column]:
        """Return the column of a state's horizon, which the state table and the turn's rows hold when pruned."""
        return [sa.Column("horizon", sa.Integer)] if self.pruned else []

    def _carried(self, after: sa.FromClause) -> list[sa.ColumnElement]:
        """Return the columns a row carries from the row it is valued from besides its values (the horizon)."""
        return [after.c.horizon] if self.pruned else []

    def _played(self, e: sa.FromClause, after: sa.FromClause) -> sa.ColumnElement[bool]:
        """Return which (edge, row it leads to) a statement joins: all, or those whose source lies short of the
        row's state's horizon."""
        return e.c.progress < after.c.horizon if self.pruned else sa.true()

    def _into(self) -> list[str]:
        """Return the turn table's columns a statement inserts, in order: the keys, the horizon, the values."""
        return ["node_id", "state", *(["horizon"] if self.pruned else []), *self._names(), *self._moves()]

    def _moves(self) -> list[str]:
        """Return the columns of the seats' moves, when recorded."""
        return [f"m{i}" for i in range(len(self.seats))] if self.record_moves else []

    def _no_moves(self) -> list[sa.ColumnElement]:
        """Return the move columns of a row that is no decision: NULL each."""
        return [sa.null() for _ in self._moves()]

    def drop(self, connection: sa.Connection) -> None:
        """Drop the tables."""
        if self.walk is not None:
            self.walk.drop(connection)
        for table in (self.state, self.turn, self.ends, self.edges):
            if table is not edge:
                table.drop(connection)

    def _profit(self, i: int, reward: sa.ColumnElement[float], after: sa.FromClause) -> sa.ColumnElement[float]:
        """Return what seat ``i`` ranks a step by: its value, the ranking solve's, or (an agent) whether it wins at once."""
        return after.c[f"p{i}"] if self.seats[i].kind == FOLLOW else reward + after.c[f"p{i}"]

    def start(self, connection: sa.Connection, which: sa.ColumnElement[bool], looping: sa.ColumnElement[bool]) -> None:
        """Put in the turn table each end of each state whose moves ``which`` selects: the state's move through it
        is worth its reward plus (``sign`` times) the value of where it leads, for the seat then to move; its
        derivative is the sign for the moves that ``looping`` selects (those leading back into their layer)."""
        st = self.state
        columns = []
        for i, seat in enumerate(self.seats):
            then = sa.case((edge.c.sign == 1, st.c[f"v{i}"]), else_=st.c[f"v{seat.after_pass}"])
            value = edge.c.reward + edge.c.sign * then
            if seat.kind == MAXIMISE:
                profit = value
            elif seat.kind == RANK:
                profit = edge.c.reward + edge.c.sign * st.c.rank
            else:
                profit = sa.case((edge.c.sign == 1, st.c.sure), else_=0.0)
            columns += self._kept([profit, value, sa.case((looping, sa.cast(edge.c.sign, sa.Double)), else_=0.0)])
        joined = edge.join(st, st.c.node_id == edge.c.dst).join(self.ends, self.ends.c.label == edge.c.label)
        mover = st.alias("mover")
        if self.pruned:
            joined = joined.join(mover, mover.c.node_id == edge.c.src)
        rows = (sa.select(self.ends.c.node_id, edge.c.src, *self._carried(mover), *columns, *self._no_moves())
                .select_from(joined)
                .where(which, edge.c.kind == "move"))
        connection.execute(sa.insert(self.turn).from_select(self._into(), rows))

    def _names(self) -> list[str]:
        return [f"{name}{i}" for i in range(len(self.seats)) for name in self.parts]

    def _kept(self, parts: Sequence[Any]) -> list[Any]:
        """Return of a seat's ``(p, v, d)`` columns (or their names) those the turn table holds (:attr:`parts`)."""
        return list(parts[:len(self.parts)])

    def _chance(self) -> sa.Insert:
        e, after = self.edges, self.turn.alias("after")
        weight = sa.func.sum(e.c.weight)
        columns = []
        for i in range(len(self.seats)):
            columns += [sa.func.sum(e.c.weight * self._profit(i, e.c.reward, after)) / weight]
            if len(self.parts) > 1:
                columns += [sa.func.sum(e.c.weight * (e.c.reward + after.c[f"v{i}"])) / weight,
                            sa.func.sum(e.c.weight * after.c[f"d{i}"]) / weight]
        rows = (sa.select(e.c.src, after.c.state, *self._carried(after), *columns, *self._no_moves())
                .select_from(e.join(after, after.c.node_id == e.c.dst))
                .where(e.c.id.between(FIRST, LAST), e.c.kind == "roll", self._played(e, after))
                .group_by(e.c.src, after.c.state, *self._carried(after)))
        return sa.insert(self.turn).from_select(self._into(), rows)

    def _decide(self) -> sa.Insert:
        """Each (decision node, state)'s move and its columns, for every seat at once."""
        return self._decide_best() if self._lone_maximiser() else self._decide_by_window()

    def _lone_maximiser(self) -> bool:
        """Return whether one seat maximises, its moves' derivatives carried by the grouping that finds the best
        (``arg_max``, or SQLite's bare column) and no move recorded: the turn's decisions are a grouping's maximum."""
        return len(self.seats) == 1 and self.seats[0].kind == MAXIMISE and (self.carried or self.bare_max) \
            and not self.record_moves

    def _decide_best(self) -> sa.Insert:
        """The lone maximising seat's best move at each (decision node, state), in a single grouping: its value
        is the greatest (the seat's profit is its value), its derivative the best move's (``arg_max``, or
        SQLite's bare column beside ``max()``).

        Among moves worth exactly as much any may give the derivative: each
        is a Newton step towards the same values. It is faster than the window
        that matches keep (the performance notes measure both).
        """
        e, after = self.edges, self.turn.alias("after")
        worth = e.c.reward + after.c.v0
        best = sa.func.max(worth)
        slope = sa.func.arg_max(after.c.d0, worth) if self.carried else after.c.d0
        rows = (sa.select(e.c.src, after.c.state, *self._carried(after), best, best, slope)
                .select_from(e.join(after, after.c.node_id == e.c.dst))
                .where(e.c.id.between(FIRST, LAST), e.c.kind == "move", self._played(e, after))
                .group_by(e.c.src, after.c.state, *self._carried(after)))
        return sa.insert(self.turn).from_select(self._into(), rows)

    def _decide_by_window(self) -> sa.Insert:
        """Each seat's move at each (decision node, state), and its columns, in one statement: the best profit by a
        window over the node's moves (the first streamed within the tolerance), or the agent's choice.

        Only the moves that some seat may take reach the grouping. With
        ``arg_min`` (DuckDB) the grouping takes the move's columns too;
        elsewhere the moves chosen are joined back to the edges and values.
        """
        e, after = self.edges, self.turn.alias("after")
        columns, joins = [], e.join(after, after.c.node_id == e.c.dst)
        for i, seat in enumerate(self.seats):
            q = self._profit(i, e.c.reward, after)
            columns += [q.label(f"q{i}"), sa.func.max(q).over(partition_by=(e.c.src, after.c.state)).label(f"best{i}")]
            if self.carried and len(self.parts) > 1:
                columns += [(e.c.reward + after.c[f"v{i}"]).label(f"v{i}"), after.c[f"d{i}"].label(f"d{i}")]
            if seat.kind == FOLLOW:
                agent = choice.alias(f"agent{i}")
                joins = joins.outerjoin(agent, sa.and_(agent.c.policy_id == seat.policy_id, agent.c.node_id == e.c.src,
                                                       agent.c.edge_id == e.c.id))
                columns.append(agent.c.edge_id.label(f"own{i}"))
        moves = (sa.select(e.c.src, after.c.state, *self._carried(after), e.c.id, *columns).select_from(joins)
                 .where(e.c.id.between(FIRST, LAST), e.c.kind == "move", self._played(e, after)).subquery("moves"))
        picks, candidates, chosen = [], [], []
        for i, seat in enumerate(self.seats):
            q, best = moves.c[f"q{i}"], moves.c[f"best{i}"]
            if seat.kind == FOLLOW:  # a move that wins at once, else the agent's own
                wins, own = sa.case((q >= 1.0, moves.c.id)), moves.c[f"own{i}"]
                candidates.append(sa.or_(q >= 1.0, own.is_not(None)))
                chosen.append(sa.case((sa.func.max(best) >= 1.0, sa.func.min(wins)), else_=sa.func.max(own)))
                if self.carried:
                    picks += [sa.case((sa.func.max(best) >= 1.0, sa.func.arg_min(moves.c[name], wins)),
                                      else_=sa.func.arg_min(moves.c[name], own)) for name in self._kept([f"q{i}", f"v{i}", f"d{i}"])]
            else:
                near = q >= best - TIE * (1 + sa.func.abs(best))
                candidates.append(near)
                taken = sa.case((near, moves.c.id))
                chosen.append(sa.func.min(taken))
                if self.carried:
                    picks += [sa.func.arg_min(moves.c[name], taken) for name in self._kept([f"q{i}", f"v{i}", f"d{i}"])]
        if self.carried:
            picks += chosen if self.record_moves else []
        else:
            picks += [move.label(f"edge{i}") for i, move in enumerate(chosen)]
        picked = (sa.select(moves.c.src, moves.c.state, *self._carried(moves), *picks).where(sa.or_(*candidates))
                  .group_by(moves.c.src, moves.c.state, *self._carried(moves)))
        if self.carried:
            return sa.insert(self.turn).from_select(self._into(), picked)
        picked = picked.subquery("picked")
        joined: sa.FromClause = picked
        columns = []
        for i in range(len(self.seats)):
            move, then = e.alias(f"move{i}"), self.turn.alias(f"then{i}")
            joined = joined.join(move, move.c.id == picked.c[f"edge{i}"]).join(
                then, sa.and_(then.c.node_id == move.c.dst, then.c.state == picked.c.state))
            columns.append(self._profit(i, move.c.reward, then))
            if len(self.parts) > 1:
                columns += [move.c.reward + then.c[f"v{i}"], then.c[f"d{i}"]]
        recorded = [picked.c[f"edge{i}"] for i in range(len(self.seats))] if self.record_moves else []
        rows = sa.select(picked.c.src, picked.c.state, *self._carried(picked), *columns, *recorded).select_from(joined)
        return sa.insert(self.turn).from_select(self._into(), rows)

    def play(self, connection: sa.Connection, layers: Sequence[tuple[sa.Row, tuple[int, int]]],
             share: tuple[int, int] = (0, 1)) -> Played:
        """Play the turn from every state of the state layers ``layers`` ((span, node ids) each) at once, at the
        values in the state table; return state -> per seat (value, derivative in its loop state's value). One
        statement walks the turn where the backend groups in a recursive query (:mod:`dicegraph.store.solve.turn_walk`),
        else a statement a turn layer and kind of node (:meth:`play_turn`). ``share`` ``(k, n)``: from the
        ``k``-th of ``n`` parts of the states only (:func:`_sources`, :class:`SharedRace`)."""
        self.start(connection, sa.or_(*(sa.and_(edge.c.id.between(span.first_edge, span.last_edge),
                                                *_sources(share)) for span, _ in layers)),
                   sa.or_(*(sa.and_(edge.c.id.between(span.first_edge, span.last_edge), edge.c.dst.between(*states))
                            for span, states in layers)))
        if self.walk is not None:
            found = self.walk.play(connection)
        else:
            self.play_turn(connection)
            columns = [self.turn.c[f"{name}{i}"] for i in range(len(self.seats)) for name in ("v", "d")]
            found = {row[0]: [(row[1 + 2 * i], row[2 + 2 * i]) for i in range(len(self.seats))]
                     for row in connection.execute(sa.select(self.turn.c.state, *columns)
                                                   .where(self.turn.c.node_id == self.graph.root))}
        connection.execute(sa.delete(self.turn))
        return found

    def play_turn(self, connection: sa.Connection) -> None:
        """Value the turn's nodes, deepest layer first, for the states whose ends are in the turn table."""
        for turn_span in reversed(self.graph.turn_spans):
            bounds = {"first_edge": turn_span.first_edge, "last_edge": turn_span.last_edge}
            if turn_span.rolls:
                connection.execute(self.chance, bounds)
            if turn_span.moves:
                connection.execute(self.decide, bounds)

    def set_values(self, connection: sa.Connection, states: tuple[int, int], values: dict[int, list[float]],
                   rank: dict[int, float]) -> None:
        """Replace the state table's rows of the layer's states (node ids ``states``) by ``values`` (per seat)."""
        connection.execute(sa.delete(self.state).where(self.state.c.node_id.between(*states)))
        connection.execute(sa.insert(self.state), [
            {"node_id": state, **{f"v{i}": float(x) for i, x in enumerate(xs)}, "rank": rank.get(state), "sure": 0.0,
             **({"horizon": self.horizons[state]} if self.pruned else {})}
            for state, xs in values.items()])


def _sources(share: tuple[int, int]) -> list[sa.ColumnElement[bool]]:
    """Return the condition that a state move leaves the ``k``-th of ``n`` parts of the states (``share`` ``(k, n)``;
    none when ``n`` is 1): every ``n``-th state, so that each part holds states of every score (a state's turn is
    longer the further its player is from the target).

    >>> [str(condition) for condition in _sources((1, 3))]
    ['edge.src % :src_1 = :param_1']
    """
    k, n = share
    return [] if n == 1 else [edge.c.src % n == k]


class SharedRace:
    """A race's passes shared out over connections (:class:`LayerWork`): each connection's :class:`RaceTables`
    plays the turn from a part of each layer's states (:func:`_sources`), all at once in threads of their own, and every
    connection's state table takes every layer's values. The first is the caller's connection."""

    def __init__(self, parts: Sequence[tuple[sa.Connection, RaceTables]], threads: ThreadPoolExecutor):
        self.parts, self.threads = list(parts), threads
        self.graph, self.seats, self.maximising = parts[0][1].graph, parts[0][1].seats, parts[0][1].maximising

    def set_values(self, connection: sa.Connection, states: tuple[int, int], values: dict[int, list[float]],
                   rank: dict[int, float]) -> None:
        """Set the values on every connection."""
        list(self.threads.map(lambda part: part[1].set_values(part[0], states, values, rank), self.parts))

    def play(self, connection: sa.Connection, layers: Sequence[tuple[sa.Row, tuple[int, int]]]) -> Played:
        """Return what :meth:`RaceTables.play` returns, each connection playing its part of the states."""
        count = len(self.parts)
        found: Played = {}
        for played in self.threads.map(lambda k: self.parts[k][1].play(self.parts[k][0], layers, (k, count)),
                                       range(count)):
            found.update(played)
        return found


@contextmanager
def _race_work(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat]) -> Iterator[LayerWork]:
    """Yield the tables a solve of ``seats`` plays the race with, and drop them after: the connection's own, shared
    with one more connection a processor (:func:`dicegraph.store.solve.parallel.solve_workers`) where each pass is
    one statement (:mod:`dicegraph.store.solve.turn_walk`) and connections may solve side by side, the solve then
    run on the backend's way of running many small steps (:meth:`dicegraph.store.backends.record.Backend.small_steps`)."""
    def tables(own: sa.Connection) -> RaceTables:
        return RaceTables(own, graph, seats, copy_turn=True, prune=True,
                          merged=all(seat.kind == MAXIMISE for seat in seats))

    work = tables(connection)
    walking = work.walk is not None
    with (backend_of(connection).small_steps(connection) if walking else nullcontext()), \
            side_connections(connection, solve_workers() - 1 if walking else 0) as others:
        parts = [(connection, work), *((other, tables(other)) for other in others)]
        try:
            if len(parts) == 1:
                yield work
            else:
                with ThreadPoolExecutor(max_workers=len(parts)) as threads:
                    yield SharedRace(parts, threads)
        except BaseException:
            for own, part in parts:
                with suppress(sa.exc.DBAPIError):  # a failed transaction refuses it; the solve's error is the one to see
                    part.drop(own)
            raise
        for own, part in parts:
            part.drop(own)


def state_horizons(connection: sa.Connection, graph: TurnGraph) -> dict[int, int]:
    """Return turn state -> its horizon (the game's ``horizon`` of its key; the game must give one)."""
    root_layer = graph.turn_spans[0].layer
    horizon = graph.structure.horizon
    return {node_id: horizon(key) for node_id, key in connection.execute(sa.select(node.c.id, node.c.key).where(
        node.c.graph_id == graph.graph_id, node.c.layer < root_layer, node.c.kind != "terminal"))}


FIRST, LAST = sa.bindparam("first_edge", type_=EdgeId), sa.bindparam("last_edge", type_=EdgeId)


def _loops(connection: sa.Connection, span: sa.Row, states: tuple[int, int]) -> dict[int, tuple[int, int]]:
    """Return state -> (the state of its own layer its moves lead back to, the sign of those moves); raise
    InvalidGraph when a state's moves lead back to two states (the solver needs one)."""
    rows = connection.execute(sa.select(edge.c.src, edge.c.dst, edge.c.sign).distinct().where(
        edge.c.id.between(span.first_edge, span.last_edge), edge.c.kind == "move", edge.c.dst.between(*states))).all()
    found: dict[int, tuple[int, int]] = {}
    for src, dst, sign in rows:
        if src in found and found[src] != (dst, sign):
            raise InvalidGraph(f"turn state {src} loops back to two states of its layer ({found[src][0]} and {dst}): "
                               "the cyclic turn solve needs one")
        found[src] = (dst, sign)
    return found


@dataclass(frozen=True)
class _Ahead:
    """The layer solved next, played along with each pass of this one after the first: when this one's values
    then prove exact, that was the next one's first pass. ``guesses`` gives its first guesses from this
    layer's values."""

    layer: int
    guesses: Callable[[Guesses], Guesses]


@dataclass(frozen=True)
class _FirstPass:
    """A layer's first pass, played along with the last pass of the layer above: the guesses and what it gave."""

    guesses: Guesses
    played: Played


def _named(connection: sa.Connection, graph: TurnGraph, states: tuple[int, int],
           guess: Guess | None) -> dict[int, dict[int, float]]:
    """Return, for the states of a layer (node ids ``states``), the solved states ``guess`` names and their weights."""
    return {} if guess is None else named_positions(connection, graph.graph_id, guess, node.c.id.between(*states))


def _first_guesses(states: tuple[int, int], named: dict[int, dict[int, float]], solved: Mapping[int, list[float]],
                   start: list[float]) -> Guesses:
    """Return the first guess of each state of a layer (node ids ``states``), per seat: the weighted mean value of
    the solved states ``named`` for it, else ``start``."""
    return {state: mean_guess(named.get(state, {}), solved, start) for state in range(states[0], states[1] + 1)}


def _mean_values(found: Guesses, seats: int) -> list[float]:
    """Return the mean value per seat of a layer's states."""
    return [sum(xs[i] for xs in found.values()) / len(found) for i in range(seats)]


def solve_layer(connection: sa.Connection, work: LayerWork, layer: int, first: Guesses | _FirstPass, rank: dict[int, float],
                 convergence: Convergence, ahead: _Ahead | None = None) -> tuple[Guesses, _FirstPass | None]:
    """Solve the cyclic state layer ``layer`` exactly from ``first``, its first guesses (state -> a value per
    seat) or its first pass played already; return state -> its value per seat, and the first pass of the
    layer ``ahead`` when it was played along with the last pass (else None)."""
    import numpy as np

    graph, seats = work.graph, work.seats
    span, states = graph.game_spans[layer], graph.layer_ids[layer]
    loops = _loops(connection, span, states)
    ids = list(range(states[0], states[1] + 1))
    size = len(ids) * len(seats)
    index = {(state, i): k * len(seats) + i for k, state in enumerate(ids) for i in range(len(seats))}
    first_pass = first if isinstance(first, _FirstPass) else None
    first_guesses = first.guesses if isinstance(first, _FirstPass) else first
    guess = np.array([first_guesses[state][i] for state in ids for i in range(len(seats))])
    maximising = work.maximising
    next_pass = None
    for passes in range(1, MAX_PASSES + 1):
        current = {state: [float(guess[index[state, i]]) for i in range(len(seats))] for state in ids}
        along = None
        if passes == 1 and first_pass is not None:
            played = first_pass.played
        else:
            work.set_values(connection, states, current, rank)
            layers = [(span, states)]
            if ahead is not None and passes > 1:  # a Newton solution, which may prove exact: play the next layer too
                along = ahead.guesses(current)
                work.set_values(connection, graph.layer_ids[ahead.layer], along, rank)
                layers.append((graph.game_spans[ahead.layer], graph.layer_ids[ahead.layer]))
            played = work.play(connection, layers)
        values, matrix, constants = np.zeros(size), np.zeros((size, size)), np.zeros(size)
        for state in ids:
            loop = loops.get(state)
            for i, (v, d) in enumerate(played[state]):
                row = index[state, i]
                values[row] = v
                constants[row] = v
                if loop is not None and d:
                    column = index[loop[0], i if loop[1] == 1 else seats[i].after_pass]
                    matrix[row, column] += d
                    constants[row] -= d * guess[column]
        residual = float(np.max(np.abs(values - guess)))
        if maximising and residual <= RESIDUAL_TOLERANCE * (1 + float(np.max(np.abs(guess)))):
            solution = values
            if along is not None:
                next_pass = _FirstPass(along, {state: played[state] for state in along})
            break
        solution = np.linalg.solve(np.eye(size) - matrix, constants)
        if not maximising:  # the moves do not depend on the values: the linear solution is exact
            residual = float(np.max(np.abs(constants + matrix @ solution - solution)))
            break
        guess = solution
    else:
        raise NotConverged(f"turn states of layer {layer} did not settle in {MAX_PASSES} passes")
    convergence.add(passes, residual, 0)
    return {state: [float(solution[index[state, i]]) for i in range(len(seats))] for state in ids}, next_pass


@dispatchable("race")
def solve_race(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat],
        keep: Callable[[int, dict[int, list[float]], Convergence], None] | None = None, down_to: int = 0,
        solved: dict[int, list[float]] | None = None,
        progress: Progress | None = None) -> tuple[dict[int, list[float]], Convergence]:
    """Value every turn state from the last state layer down to ``down_to`` for each seat; return state ->
    values per seat, and how the layers converged.

    A seat maximises or follows a stored policy (matches, where a seat ranks moves by the optimum's stored
    values, are :mod:`dicegraph.store.solve.race_matches`'s). ``keep(layer, values, convergence)`` is called after each layer (to store and commit it); ``solved``
    gives the values of layers solved before (resuming), which are not solved again. ``progress`` counts the
    state layers done.

    Where a statement costs more than its rows (:attr:`dicegraph.store.backends.record.Backend.pays_per_statement`), a maximising
    solve plays the next layer along with each pass after the first: the pass that proves a layer's
    values exact is then also the next layer's first (its first guess made from those values). A pass
    that does not prove them exact wastes the next layer's rows, not statements.
    """
    if any(seat.kind == RANK for seat in seats):
        raise DicegraphError("a seat that ranks moves by a stored solve plays in race_matches, not in solve_race")
    backend_of(connection).plan_whole_layers(connection)
    with _race_work(connection, graph, seats) as work:
        return _solve_layers(connection, graph, seats, work, keep, down_to, solved, progress)


def _solve_layers(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], work: LayerWork,
                  keep: Callable[[int, dict[int, list[float]], Convergence], None] | None, down_to: int,
                  solved: dict[int, list[float]] | None,
                  progress: Progress | None) -> tuple[dict[int, list[float]], Convergence]:
    """Return :func:`solve_race`'s answer, played with ``work``."""
    rank: dict[int, float] = {}  # no seat ranks by a stored solve
    values: dict[int, list[float]] = dict(solved or {})
    convergence = Convergence()
    payoffs = graph_payoffs(connection, graph)
    start = [sum(payoffs) / max(len(payoffs), 1)] * len(seats)
    guess = graph.structure.first_guess if work.maximising else None
    speculate = work.maximising and backend_of(connection).pays_per_statement
    order = [layer for layer in sorted(graph.layer_ids, reverse=True) if layer >= down_to]
    first_pass: _FirstPass | None = None
    named_next: dict[int, dict[int, float]] | None = None
    for position, layer in enumerate(order):
        states = graph.layer_ids[layer]
        if states[0] in values:
            work.set_values(connection, states, {s: values[s] for s in range(states[0], states[1] + 1)}, rank)
            continue
        first: Guesses | _FirstPass
        if first_pass is not None:
            first = first_pass
        else:
            named = named_next if named_next is not None else _named(connection, graph, states, guess)
            first = _first_guesses(states, named, values, start)
        ahead = named_next = None
        if speculate and position + 1 < len(order):
            next_states = graph.layer_ids[order[position + 1]]
            named_next = _named(connection, graph, next_states, guess)
            ahead = _Ahead(order[position + 1], lambda tentative, next_states=next_states, named_next=named_next:
                           _first_guesses(next_states, named_next, ChainMap(tentative, values),
                                          _mean_values(tentative, len(seats))))
        found, first_pass = solve_layer(connection, work, layer, first, rank, convergence, ahead)
        work.set_values(connection, states, found, rank)
        values.update(found)
        start = _mean_values(found, len(seats))
        if keep is not None:
            keep(layer, found, convergence)
        if progress is not None:
            progress(1)
    return values, convergence


def ensure_race_solved(connection: sa.Connection, graph: TurnGraph, progress: Progress | None = None) -> None:
    """Solve and store the optimum (the game's one maximising turn policy) unless stored, a state layer at a time.

    Each layer is committed as it is stored, with the convergence so far in
    the policy's record, so an interrupted solve resumes at the next layer;
    ``connection`` must not be inside a ``begin()`` block.
    """
    optimal = graph.optimal
    policy_id = ensure_policy(connection, graph, optimal)
    connection.commit()
    stored = dict(connection.execute(sa.select(turn_policy.c.node_id, turn_policy.c.value)
                                     .where(turn_policy.c.policy_id == policy_id)).all())
    if progress is not None and stored:
        progress(len(stored))
    if not connection.execute(sa.select(policy.c.unfinished_since).where(policy.c.id == policy_id)).scalar_one():
        return
    record = connection.execute(sa.select(policy.c.convergence).where(policy.c.id == policy_id)).scalar_one()
    earlier = json.loads(record) if record else None

    def keep(layer: int, found: dict[int, list[float]], convergence: Convergence) -> None:
        connection.execute(sa.insert(turn_policy), [
            {"policy_id": policy_id, "node_id": state, "value": xs[0], "moment2": xs[0], "decisions": b""}
            for state, xs in found.items()])
        done = layer == min(graph.layer_ids)
        connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(
            convergence=_merged(earlier, convergence), **({"unfinished_since": None} if done else {})))
        connection.commit()
        if progress is not None:
            progress(len(found))

    solve_race(connection, graph, [Seat.maximising()], keep=keep,
        solved={state: [value] for state, value in stored.items()})


def _merged(earlier: dict | None, convergence: Convergence) -> str:
    """Return the convergence record of a solve resumed after ``earlier`` (its record before the interruption)."""
    if not earlier:
        return convergence.record()
    total = Convergence(components=earlier["cyclic_components"] + convergence.components,
                        passes=earlier["passes"] + convergence.passes,
                        most_passes=max(earlier["most_passes"], convergence.most_passes),
                        residual=max(earlier["residual"], convergence.residual),
                        fallbacks=earlier["value_iteration_steps"] + convergence.fallbacks)
    return total.record()


def turn_node_values(connection: sa.Connection, graph: TurnGraph, states: Sequence[int],
                     kinds: Sequence[str] = ("chance", "terminal"), policy_id: int | None = None
                     ) -> dict[int, dict[int, float]]:
    """Return, for each turn state of ``states`` (node ids), its turn's nodes of ``kinds`` -> their value under
    the stored policy ``policy_id`` (default: the optimum; a best response plays against the policy it answers), the
    turn played once from each, all together; nothing stored. The ends' values are what the state's moves through
    them are worth."""
    if policy_id is None:
        policy_id = ensure_policy(connection, graph, graph.optimal)
    work = RaceTables(connection, graph, [Seat.maximising()])
    ranked = ranked_values(policy_id).subquery("ranked")
    stored = sa.select(ranked.c.node_id, ranked.c.rank.label("v0"), ranked.c.rank, sa.literal(0.0).label("sure"))
    connection.execute(sa.insert(work.state).from_select(["node_id", "v0", "rank", "sure"], stored))
    root_layer = graph.turn_spans[0].layer
    wanted = temporary_table(connection, "tcy_wanted")
    connection.execute(sa.insert(wanted), [{"node_id": state} for state in states])
    first, last = graph_edge_span(connection, graph.graph_id)  # node ids are the graph's own: so must its edges be
    work.start(connection, sa.and_(edge.c.id.between(first, last), edge.c.src.in_(sa.select(wanted.c.node_id)),
                                   edge.c.src_layer < root_layer),
               sa.false())
    work.play_turn(connection)
    rows = (sa.select(work.turn.c.state, work.turn.c.node_id, work.turn.c.v0)
            .select_from(work.turn.join(node, sa.and_(node.c.graph_id == graph.graph_id, node.c.id == work.turn.c.node_id)))
            .where(node.c.kind.in_(list(kinds))))
    found: dict[int, dict[int, float]] = {state: {} for state in states}
    for state, node_id, v in connection.execute(rows):
        found[state][node_id] = v
    work.drop(connection)
    wanted.drop(connection)
    return found
