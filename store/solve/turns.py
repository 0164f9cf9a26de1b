"""The turn stored once, joined with the turn states one state layer at a time (any game that declares a turn).

A game declares its turn structure (:class:`dicegraph.graphs.protocol.TurnStructure`):
the graph holds the turn states (the layers below the turn's root) and one
turn whose terminals are the *ends*; a state's move labelled like an end
leads to the state the turn leaves when it ends there. A state is worth what
its turn is worth when each end is worth (the move's reward plus) the value
of the state it leads to, and is missing when the state has no such move.
So the states are solved from the last layer down, and for each layer *all*
its states go through the turn together: every statement joins the turn's
edges of one turn layer with a work table keyed by (turn node, state). Per
state layer that is one statement for each chance layer of the turn and two
for each decision layer (the best profit, by a window over the node's moves
or, on DuckDB, a GROUP BY joined back to them, with the move chosen; then that
move's value, which DuckDB's ``arg_min`` takes in the first statement, leaving
a plain copy), whatever the number of states: no loop over states in Python,
no key read (where the backend's planner misjudges a range of the edge table,
the record's ``copies_turn_edges``, the turn's edges are read from a copy made
once a solve). Python only packs each batch's chosen moves into the game's
decision bytes, in a worker thread while the next batch is solved. A solve
committed layer by layer spreads each layer's batches over a connection per
processor (:func:`solve_workers`), whose statements the database runs at
the same time: threads, or on a large SQLite solve worker processes.

A policy chooses by a *profit* ``p`` and is worth ``v1`` (expected points
still to come) with second moment ``v2``: the optimum has ``p = v1``; a
policy with ``end_profits`` (a heuristic) ranks the ends by those, and
``v1``, ``v2`` follow its choices. Policies solved together go through the
same statements, a column of each (``p0, v1_0, v2_0, p1, ...``): one join
and one window per turn layer serve them all.

Ties: the first move streamed among those within :data:`dicegraph.graphs.protocol.TIE`
of the best. Results go to ``turn_policy``: per state ``v1``, ``v2`` and its
decisions packed by the game's :class:`dicegraph.graphs.protocol.DecisionEncoder`.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import DecisionEncoder, Progress, TurnPolicy
from dicegraph.store.backends import backend_of
from dicegraph.store.catalog import find_node
from dicegraph.store.db import process_shared_url
from dicegraph.store.errors import NotFound
from dicegraph.store.load import next_id, now
from dicegraph.store.schema import edge, edges_of, node, policy, turn_policy
from dicegraph.store.scratch import (create_afresh, edge_copy_definition, fill_edge_copy, keyed_pair_definition,
                                     temporary_definition)
from dicegraph.store.solve.dispatch import dispatchable
from dicegraph.store.solve.layers import best_move_rows
from dicegraph.store.solve.parallel import connection_solvers, even_batches, process_solvers, solve_workers
from dicegraph.store.solve.readers import state_result
from dicegraph.store.turn_ends import end_worth, moment
from dicegraph.store.turn_graph import TurnGraph, state_moves


@dataclass
class _TurnTables:
    """The temporary tables of one solve of ``policies`` policies together (columns numbered 0, 1, ...)."""

    policies: int
    state: sa.Table  # turn state -> v1_i, v2_i (solved layers)
    turn: sa.Table  # (turn node, state) -> p_i, v1_i, v2_i (the state layer being solved)
    chosen: sa.Table  # (decision node, state) -> best p_i, edge_i taken (and, carried, that move's v1_i, v2_i)
    carried: bool  # the chosen moves' values are taken in the statement that chooses them (:attr:`dicegraph.store.backends.record.Backend.arg_min`)
    ends: sa.Table  # end node -> the label of the state moves through it, each policy's own profit (or null)
    edges: sa.Table | None = None  # the turn's edges copied, where the backend reads them so (else None: ``edge``)
    joined: bool = False  # the turn and chosen tables are made (by the reference solve_batch, which joins them)
    kept: Any = None  # what a faster solve_batch keeps between batches (Spark: the turn folded in one row)
    added: list[sa.Table] = dataclasses.field(default_factory=list)  # its tables, dropped with the work

    def names(self, *prefixes: str) -> list[str]:
        """Return the column names with ``prefixes``, policy by policy: ``names("v1_", "v2_")`` is v1_0, v2_0, v1_1, ..."""
        return [f"{prefix}{i}" for i in range(self.policies) for prefix in prefixes]

    def tables(self) -> list[sa.Table]:
        """Return the work tables made: the states' and the ends', the turn's node and chosen-move tables where the
        turn is joined with the states, and those a faster implementation added."""
        joined = [self.turn, self.chosen] if self.joined else []
        copied = [self.edges] if self.edges is not None else []
        return [self.state, *joined, self.ends, *copied, *self.added]

    @property
    def turn_edges(self) -> sa.FromClause:
        """Return where the turn's statements read its edges: their copy, else the ``edge`` table."""
        return edge if self.edges is None else self.edges


def _work_tables(connection: sa.Connection, graph: TurnGraph, policies: int) -> _TurnTables:
    work = _work_definitions(connection, policies)
    _create_work(connection, graph, work, joined=False)
    return work


def _work_definitions(connection: sa.Connection, policies: int) -> _TurnTables:
    """Return the work tables of ``policies`` policies solved together on ``connection``'s backend, not created
    (:func:`_create_work`): keyed except where joins hash, the chosen moves' values carried where it has
    ``arg_min``, the turn's edges copied where it reads them so (:attr:`dicegraph.store.backends.record.Backend.copies_turn_edges`)."""
    carried, keyed = backend_of(connection).arg_min, not backend_of(connection).hashed_joins
    def numbers(*names: str, nullable: bool = False) -> list[sa.Column]:
        return [sa.Column(f"{name}{i}", sa.Double, nullable=nullable) for i in range(policies) for name in names]

    edges = [sa.Column(f"edge{i}", sa.BigInteger, nullable=False) for i in range(policies)]
    return _TurnTables(
        policies=policies,
        state=temporary_definition("turn_state", *numbers("v1_", "v2_")),
        turn=keyed_pair_definition("turn_value", "state", *numbers("p", "v1_", "v2_"), indexed=keyed),
        chosen=keyed_pair_definition("turn_chosen", "state", *edges,
                                     *numbers("p", *(("v1_", "v2_") if carried else ())), indexed=keyed),
        carried=carried,
        ends=temporary_definition("turn_end", sa.Column("label", sa.Text, nullable=False),
                                  *numbers("profit", nullable=True)),
        edges=edge_copy_definition(connection, "turn_edge") if backend_of(connection).copies_turn_edges else None,
    )


def _create_work(connection: sa.Connection, graph: TurnGraph, work: _TurnTables, joined: bool = True) -> None:
    """Create the work's tables afresh on ``connection``: the turn's and chosen moves' tables too where ``joined``,
    and the copy of ``graph``'s turn edges where the work reads them so."""
    work.joined = joined
    for table in work.tables():
        create_afresh(connection, table)
    if work.edges is not None:
        fill_edge_copy(connection, work.edges, *graph.turn_edges())


def _policy_work(connection: sa.Connection, graph: TurnGraph, profits: Sequence[dict[str, float] | None]) -> _TurnTables:
    """Return new work tables for the policies whose own end profits (None: none) are ``profits``: the turn's ends
    with those profits, and the terminal states."""
    work = _work_tables(connection, graph, len(profits))
    connection.execute(sa.insert(work.ends), _end_rows(graph, profits))
    connection.execute(sa.insert(work.state).from_select(["node_id", *work.names("v1_", "v2_")],
                                                         _terminal_states(graph, len(profits))))
    return work


def _end_rows(graph: TurnGraph, profits: Sequence[dict[str, float] | None]) -> list[dict]:
    """Return the rows of the work's ends table: each end's node, the label of the state moves through it, and
    each policy's own profit there (None for none)."""
    return [{"node_id": node_id, "label": graph.end_labels[key],
             **{f"profit{i}": None if own is None else own[key] for i, own in enumerate(profits)}}
            for key, node_id in graph.ends.items()]


def _terminal_states(graph: TurnGraph, policies: int) -> sa.Select:
    """Return the SELECT of the states where the game is over, worth their payoff under every policy:
    ``(node_id, v1_0, v2_0, v1_1, ...)``."""
    payoff = node.c.payoff
    return sa.select(node.c.id, *[column for _ in range(policies) for column in (payoff, payoff * payoff)]).where(
        node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < graph.turn_spans[0].layer)


def _drop(connection: sa.Connection, work: _TurnTables) -> None:
    for table in work.tables():
        table.drop(connection)


def _turn_statements(connection: sa.Connection, graph: TurnGraph, work: _TurnTables) -> None:
    """Solve the turn for every state whose end rows are in the turn table (deepest turn layer first), all policies at once."""
    for statement in _turn_plan(graph, work, grouped=backend_of(connection).hashed_joins):
        connection.execute(statement)


def _turn_plan(graph: TurnGraph, work: _TurnTables, grouped: bool, keep_chosen: bool = True) -> list[sa.Executable]:
    """Return :func:`_turn_statements`' statements in order (a decision's best move taken by a grouping joined back
    when ``grouped``, else by a window; see :func:`best_move_rows`), over ``work``'s tables whatever rows they hold.

    Without ``keep_chosen`` (one policy, whose moves are not stored: a game played) a decision layer's values go
    straight to the turn table, in one statement rather than two through the chosen moves' table.
    """
    statements: list[sa.Executable] = []
    turn, chosen, turn_edge = work.turn, work.chosen, work.turn_edges  # copied, or the edge table
    after = turn.alias("after")
    numbered = work.names("p", "v1_", "v2_")
    for span in reversed(graph.turn_spans):
        if not span.rolls and not keep_chosen:
            statements.append(_played_decisions(work, after, span, grouped))
            continue
        if span.rolls:
            weight = sa.func.sum(turn_edge.c.weight)
            means = [sa.func.sum(turn_edge.c.weight * after.c[name]) / weight for name in numbered]
            rows = (
                sa.select(turn_edge.c.src, after.c.state, *means)
                .select_from(turn_edge.join(after, after.c.node_id == turn_edge.c.dst))
                .where(edges_of(span, "roll", turn_edge)).group_by(turn_edge.c.src, after.c.state)
            )
            statements.append(sa.insert(turn).from_select(["node_id", "state", *numbered], rows))
            continue
        this_layer = (chosen.c.node_id.between(*graph.turn_sources[span.layer]),
                      chosen.c.edge0.between(span.first_edge, span.last_edge))
        if work.carried:  # the move's values come with it: copy them
            carried = [(turn_edge.c.reward + after.c[f"v1_{i}"], moment(turn_edge.c.reward, after.c[f"v1_{i}"], after.c[f"v2_{i}"]))
                       for i in range(work.policies)]
            picked = best_move_rows(after, work.names("p"), span, "max", keys=("state",), grouped=True, carried=carried,
                                    edges=turn_edge)
            statements.append(sa.insert(chosen).from_select(
                ["state", "node_id", *work.names("p", "edge"), *work.names("v1_", "v2_")], picked))
            copied = sa.select(chosen.c.node_id, chosen.c.state, *(chosen.c[name] for name in numbered)).where(*this_layer)
            statements.append(sa.insert(turn).from_select(["node_id", "state", *numbered], copied))
            continue
        picked = best_move_rows(after, work.names("p"), span, "max", keys=("state",), grouped=grouped, edges=turn_edge)
        statements.append(sa.insert(chosen).from_select(["state", "node_id", *work.names("p", "edge")], picked))
        joined: sa.FromClause = chosen
        columns = []
        for i in range(work.policies):  # each policy's move and the values it leads to, on the chosen row
            joined, taken = _taken_values(joined, chosen.c[f"edge{i}"], chosen.c.state, turn_edge, turn, i)
            columns += [chosen.c[f"p{i}"], *taken]
        rows = sa.select(chosen.c.node_id, chosen.c.state, *columns).select_from(joined).where(*this_layer)
        statements.append(sa.insert(turn).from_select(["node_id", "state", *numbered], rows))
    return statements


def _played_decisions(work: _TurnTables, after: sa.FromClause, span: sa.Row, grouped: bool) -> sa.Executable:
    """Return the statement putting in the turn table the values of the decision layer ``span`` under the work's
    one policy: each node's best profit, and the value and second moment of the move taken (the tie rule of
    :func:`best_move_rows`)."""
    if work.policies != 1:
        raise ValueError("a decision layer goes straight to the turn table for one policy only")
    turn_edge = work.turn_edges
    reward, numbered = turn_edge.c.reward, work.names("p", "v1_", "v2_")
    if work.carried:
        carried = [(reward + after.c.v1_0, moment(reward, after.c.v1_0, after.c.v2_0))]
        picked = best_move_rows(after, ["p0"], span, "max", keys=("state",), grouped=True, carried=carried,
                                edges=turn_edge).subquery()
        state, src, best, _, v1, v2 = picked.c  # the edge taken, then the values carried from it
        return sa.insert(work.turn).from_select(["node_id", "state", *numbered], sa.select(src, state, best, v1, v2))
    picked = best_move_rows(after, ["p0"], span, "max", keys=("state",), grouped=grouped, edges=turn_edge).subquery()
    state, src, best, edge_taken = picked.c
    joined, taken = _taken_values(picked, edge_taken, state, turn_edge, work.turn, 0)
    rows = sa.select(src, state, best, *taken).select_from(joined)
    return sa.insert(work.turn).from_select(["node_id", "state", *numbered], rows)


def _taken_values(joined: sa.FromClause, edge_taken: sa.ColumnElement[int], state: sa.ColumnElement[int],
                  turn_edge: sa.FromClause, turn: sa.Table, i: int) -> tuple[sa.FromClause, list[sa.ColumnElement]]:
    """Return ``joined`` joined with the move ``edge_taken`` (an edge id) and the turn node it leads to for
    ``state`` (a row of ``turn``), and the move's value and second moment under policy ``i``: ``reward + v1_i`` and
    :func:`dicegraph.store.turn_ends.moment`."""
    move, then = turn_edge.alias(f"move{i}"), turn.alias(f"then{i}")
    joined = (joined.join(move, move.c.id == edge_taken)
              .join(then, sa.and_(then.c.node_id == move.c.dst, then.c.state == state)))
    reward, then_v1, then_v2 = move.c.reward, then.c[f"v1_{i}"], then.c[f"v2_{i}"]
    return joined, [reward + then_v1, moment(reward, then_v1, then_v2)]


def _start_turns(connection: sa.Connection, graph: TurnGraph, work: _TurnTables, which: sa.ColumnElement[bool],
                 own_profits: Sequence[bool]) -> None:
    """Put the end rows of the states whose moves ``which`` selects (:func:`state_moves`) in the turn table.

    An end is worth the state move's reward plus the value of the state it
    leads to; a policy with its own profits ranks it by its profit instead.
    """
    nxt, ends = work.state, work.ends
    reward = edge.c.reward
    columns = []
    for i, own in enumerate(own_profits):
        columns += end_worth(reward, nxt.c[f"v1_{i}"], nxt.c[f"v2_{i}"], ends.c[f"profit{i}"] if own else None)
    moves = edge.join(nxt, nxt.c.node_id == edge.c.dst).join(ends, ends.c.label == edge.c.label)
    rows = sa.select(ends.c.node_id, edge.c.src, *columns).select_from(moves).where(which)
    numbered = work.names("p", "v1_", "v2_")
    connection.execute(sa.insert(work.turn).from_select(["node_id", "state", *numbered], rows))


def _clear(connection: sa.Connection, work: _TurnTables) -> None:
    for table in (work.turn, work.chosen):
        connection.execute(sa.delete(table))


def _encoder(connection: sa.Connection, graph: TurnGraph) -> tuple[DecisionEncoder, int]:
    """Return the game's decision encoder for this graph's turn and the turn's first edge id."""
    first, last = graph.turn_edges()
    nodes = sa.select(node.c.id, node.c.key).where(node.c.graph_id == graph.graph_id, node.c.kind == "decision",
                                                   node.c.layer >= graph.turn_spans[0].layer)
    moves = sa.select(edge.c.id - first, edge.c.src, edge.c.dst, edge.c.label).where(
        edge.c.graph_id == graph.graph_id, edge.c.id.between(first, last), edge.c.kind == "move")
    encoder = graph.structure.encoder(connection.execute(nodes).all(), connection.execute(moves).all())
    return encoder, first


def ensure_policy(connection: sa.Connection, graph: TurnGraph, name: str) -> int:
    """Return the id of turn policy ``name`` on the graph, creating the row if needed.

    A new row is ``unfinished_since`` now: nothing lists it as a policy
    until :func:`solve_policy` has stored every state layer.
    """
    declared = graph.policy(name)
    row = connection.execute(sa.select(policy.c.id).where(policy.c.graph_id == graph.graph_id,
                                                          policy.c.name == name)).first()
    if row is not None:
        return row.id
    policy_id = next_id(connection, policy)
    connection.execute(sa.insert(policy).values(
        id=policy_id, graph_id=graph.graph_id, name=name, objective="max", created_at=now(), unfinished_since=now(),
        method=declared.method))
    return policy_id


def _lowest_stored_layer(connection: sa.Connection, policy_id: int) -> int | None:
    """Return the lowest state layer whose turn states the policy has stored (None: none yet)."""
    stored = sa.select(sa.func.min(node.c.layer)).select_from(
        turn_policy.join(node, node.c.id == turn_policy.c.node_id)).where(turn_policy.c.policy_id == policy_id)
    owner = sa.select(policy.c.graph_id).where(policy.c.id == policy_id).scalar_subquery()
    return connection.execute(stored.where(node.c.graph_id == owner)).scalar_one_or_none()


def is_solved(connection: sa.Connection, policy_id: int, layers: int = 0) -> bool:
    """Return whether the policy's values are stored for every turn state from state layer ``layers`` up."""
    lowest = _lowest_stored_layer(connection, policy_id)
    return lowest is not None and lowest <= layers


def _profits(connection: sa.Connection, graph: TurnGraph, declared: TurnPolicy) -> dict[str, float] | None:
    """Return the policy's own end profits (None: it maximises value), solving what they need of the optimum."""
    if declared.end_profits is None:
        return None
    optimal = graph.optimal
    optimal_id = ensure_policy(connection, graph, optimal)
    needed = {key: find_node(connection, graph.graph_id, key) for key in declared.needs}
    if needed:
        lowest = min(row.layer for row in needed.values())
        if not is_solved(connection, optimal_id, lowest):
            solve_policies(connection, graph, [optimal], down_to=lowest)
    return dict(declared.end_profits({key: state_result(connection, graph.graph_id, optimal_id, key).value
                                      for key in needed}))


def solve_policy(connection: sa.Connection, graph: TurnGraph, name: str, down_to: int = 0,
                 progress: Progress | None = None, batch_states: int | None = None,
                 commit_layers: bool = False, workers: int | None = None) -> int:
    """Compute and store turn policy ``name`` (see :func:`solve_policies`); return its id."""
    return solve_policies(connection, graph, [name], down_to, progress, batch_states, commit_layers, workers)[name]


def solve_policies(connection: sa.Connection, graph: TurnGraph, names: Sequence[str], down_to: int = 0,
                   progress: Progress | None = None, batch_states: int | None = None,
                   commit_layers: bool = False, workers: int | None = None) -> dict[str, int]:
    """Compute and store the turn policies ``names`` from the last state layer down to ``down_to``; return their ids.

    The policies go through the turn together: every statement carries a
    column per policy, so a join and a window serve them all. A policy with
    its own end profits needs the optimum's values of some states first
    (solved when missing). A layer's states go through the turn in batches of
    ``batch_states`` (:data:`BATCH_STATES` by default): one set of statements
    per batch. ``progress`` is called with the number of (policy, turn state)
    solves done after each batch (and once with those already stored when resuming).

    With ``commit_layers`` each state layer is committed as it is stored, and
    a solve that was interrupted resumes after the last layer it committed
    (policies stored down to different layers catch up one by one, then go
    on together); a policy is listed (``unfinished_since`` cleared) only when
    it reaches layer 0. Without it the caller's transaction holds everything.
    Committed layer by layer, a layer's batches are solved ``workers``
    (:func:`solve_workers` by default) at a time, each on a connection of
    its own; the caller's transaction is solved on alone.
    """
    ids = {name: ensure_policy(connection, graph, name) for name in names}
    profits = {name: _profits(connection, graph, graph.policy(name)) for name in names}
    top = max(graph.layer_ids)
    next_layer = {}
    for name in names:
        stored = _lowest_stored_layer(connection, ids[name]) if commit_layers else None
        if stored is None:
            connection.execute(sa.delete(turn_policy).where(turn_policy.c.policy_id == ids[name]))
            next_layer[name] = top
        else:
            next_layer[name] = stored - 1
            if progress is not None:
                progress(sum(last - first + 1 for layer, (first, last) in graph.layer_ids.items() if layer >= stored))
    while pending := [name for name in names if next_layer[name] >= down_to]:
        start = max(next_layer[name] for name in pending)
        group = [name for name in pending if next_layer[name] == start]
        stop = max([down_to, *(next_layer[name] + 1 for name in pending if next_layer[name] < start)])
        _solve_together(connection, graph, [(ids[name], profits[name]) for name in group], start, stop, progress,
                        batch_states, commit_layers, workers)
        for name in group:
            next_layer[name] = stop - 1
    return ids


def _load_solved(connection: sa.Connection, work: _TurnTables, policy_ids: Sequence[int],
                 states: tuple[int, int] | None = None) -> None:
    """Put the policies' stored values in the work's state table: of every stored state, or of the node ids in
    ``states`` (first, last) not read yet (a worker that started after the layer was committed read it then)."""
    stored = [turn_policy.alias(f"stored{i}") for i in range(len(policy_ids))]
    joined: sa.FromClause = stored[0]
    for other in stored[1:]:
        joined = joined.join(other, other.c.node_id == stored[0].c.node_id)
    rows = (sa.select(stored[0].c.node_id, *[column for table in stored for column in (table.c.value, table.c.moment2)])
            .select_from(joined).where(*[table.c.policy_id == policy_id for table, policy_id in zip(stored, policy_ids)]))
    if states is not None:
        rows = rows.where(stored[0].c.node_id.between(*states),
                          stored[0].c.node_id.not_in(sa.select(work.state.c.node_id)))
    connection.execute(sa.insert(work.state).from_select(["node_id", *work.names("v1_", "v2_")], rows))


class TurnChoices:
    """The moves turn policy ``name`` takes in the turns of any turn states, chosen in SQL as its solve chooses
    them (from the stored values of the states the turn leads to; a heuristic by its own end profits): after
    :meth:`choose`, the ``chosen`` table holds each (decision node, state)'s move, ``edge0``."""

    def __init__(self, connection: sa.Connection, graph: TurnGraph, name: str):
        self.graph = graph
        profits = _profits(connection, graph, graph.policy(name))
        self.own_profits = (profits is not None,)
        self.work = _policy_work(connection, graph, [profits])
        _load_solved(connection, self.work, [ensure_policy(connection, graph, name)])
        self.chosen, self.ends = self.work.chosen, self.work.ends

    def choose(self, connection: sa.Connection, which: sa.ColumnElement[bool]) -> None:
        """Choose the moves of the turns of the states whose state moves ``which`` selects (emptying the last
        choice first; the turn's and chosen moves' tables are made at the first)."""
        if self.work.joined:
            _clear(connection, self.work)
        else:
            for table in (self.work.turn, self.work.chosen):
                create_afresh(connection, table)
            self.work.joined = True
        _start_turns(connection, self.graph, self.work, which, self.own_profits)
        _turn_statements(connection, self.graph, self.work)

    def drop(self, connection: sa.Connection) -> None:
        """Drop the work tables."""
        _drop(connection, self.work)


@dataclass(frozen=True)
class _Batch:
    """What one batch of turn states needs to go through the turn: its state layer and node ids (first, last)."""

    graph: TurnGraph
    layer: int
    states: tuple[int, int]
    own_profits: tuple[bool, ...]
    first_edge: int

    @property
    def size(self) -> int:
        """Return the number of turn states in the batch."""
        return self.states[1] - self.states[0] + 1


@dataclass(frozen=True)
class _TurnSolver:
    """How a connection solves batches of turn states (:class:`dicegraph.store.solve.parallel.BatchSolver`) for the policies
    ``policy_ids`` with their own end ``profits``: plain data, pickled for a worker process (its graph then
    without the game's policies and encoder, functions that may not pickle and that a worker needs not)."""

    graph: TurnGraph
    policy_ids: tuple[int, ...]
    profits: tuple[dict[str, float] | None, ...]

    def prepare(self, connection: sa.Connection) -> _TurnTables:
        """Return new work tables holding the values of the layers stored above."""
        work = _policy_work(connection, self.graph, self.profits)
        _load_solved(connection, work, self.policy_ids)
        return work

    def solve(self, connection: sa.Connection, work: _TurnTables, batch: _Batch) -> list[tuple[list, list]]:
        """Solve a batch with ``work``'s tables (emptied after); return each policy's chosen moves and root values
        (:func:`solve_batch`)."""
        return solve_batch(connection, work, batch)

    def catch_up(self, connection: sa.Connection, work: _TurnTables, layer: int) -> None:
        """Read the values of the state layer ``layer`` into the work's state table."""
        _load_solved(connection, work, self.policy_ids, self.graph.layer_ids[layer])

    def drop(self, connection: sa.Connection, work: _TurnTables) -> None:
        """Drop the work tables."""
        _drop(connection, work)

    def bare(self) -> _TurnSolver:
        """Return this solver with the graph a worker process gets, which it is sent pickled: no policies, encoder,
        end labels (the graph has them) or first guesses, none of which a worker needs, nor the game's rules."""
        structure = dataclasses.replace(self.graph.structure, policies=(), encoder=None, end_label=None,
                                        first_guess=None, count_states=functools.partial(_counted,
                                                                                         self.graph.structure.states))
        return dataclasses.replace(self, graph=dataclasses.replace(self.graph, structure=structure))


def _counted(states: int | None) -> int | None:
    """Return ``states``: a worker's count of the turn states, counted once by the parent (the game's own count,
    a method of its rules, does not go to a worker)."""
    return states


@dispatchable("turn batch")
def solve_batch(connection: sa.Connection, work: _TurnTables, batch: _Batch) -> list[tuple[list, list]]:
    """Play the batch's turn states through the turn with ``work``'s tables (its turn and chosen tables made on the
    first batch, emptied after each); return, for each policy, its chosen moves ``(decision node, state, edge)`` and
    the states' values ``(state, v1, v2)`` (:func:`_fetch_batch`), as tuples."""
    if not work.joined:
        for table in (work.turn, work.chosen):
            create_afresh(connection, table)
        work.joined = True
    backend_of(connection).plan_whole_layers(connection)
    _start_turns(connection, batch.graph, work, state_moves(batch.graph, batch.layer, batch.states),
                 batch.own_profits)
    _turn_statements(connection, batch.graph, work)
    fetched = [_fetch_batch(connection, work, i, batch.first_edge, batch.graph.root) for i in range(work.policies)]
    _clear(connection, work)
    return [([tuple(row) for row in chosen], [tuple(row) for row in values]) for chosen, values in fetched]


def _solve_together(connection: sa.Connection, graph: TurnGraph, policies: Sequence[tuple[int, dict[str, float] | None]],
                    start: int, stop: int, progress: Progress | None, batch_states: int | None,
                    commit_layers: bool, workers: int | None = None) -> None:
    """Solve the policies ``(id, own profits)``, stored above state layer ``start``, from ``start`` down to ``stop``.

    With ``commit_layers`` the batches of a layer are spread over ``workers``
    connections (:func:`solve_workers` by default), each with its own work
    tables, so the database runs their statements at the same time; each
    reads a layer's values from ``turn_policy`` once it is committed. The
    connections are used by threads, except on a SQLite file with more than
    a batch of states a worker in some layer: there by worker processes
    (:mod:`dicegraph.store.solve.parallel`).
    """
    if commit_layers:
        connection.commit()  # what the other connections read
    policy_ids = [policy_id for policy_id, _ in policies]
    own_profits = tuple(own is not None for _, own in policies)
    encoder, first_edge = _encoder(connection, graph)
    batch = batch_states or backend_of(connection).turn_batch_states
    spread = (workers or solve_workers()) if commit_layers else 1
    largest = max(last - first + 1 for layer, (first, last) in graph.layer_ids.items() if stop <= layer <= start)
    url = process_shared_url(connection)
    solver = _TurnSolver(graph, tuple(policy_ids), tuple(own for _, own in policies))
    if url is not None and spread > 1 and largest > batch * spread:
        solver = solver.bare()
        solvers = process_solvers(url, solver, spread, start)
    else:
        solvers = connection_solvers(connection, solver, spread)
    with solvers as solving, ThreadPoolExecutor(max_workers=1) as packer:
        for game_layer in range(start, stop - 1, -1):
            first, last = graph.layer_ids[game_layer]
            batches = [_Batch(solver.graph, game_layer, ids, own_profits, first_edge)
                       for ids in even_batches(first, last, batch, solving.count)]
            packing = []
            with closing(solving.solved(batches)) as solved:
                for one, fetched in solved:
                    for policy_id, results in zip(policy_ids, fetched):
                        packing.append(packer.submit(_policy_rows, policy_id, encoder, *results))
                    if progress is not None:
                        progress(len(policies) * one.size)
            for packed in packing:  # stored in the layer's transaction, before it commits
                if rows := packed.result():
                    connection.execute(sa.insert(turn_policy), rows)
            if game_layer == 0:
                connection.execute(sa.update(policy).where(policy.c.id.in_(policy_ids)).values(unfinished_since=None))
            if commit_layers:
                connection.commit()
            if game_layer == stop:
                break
            solving.layer_done(game_layer)


def chosen_moves(work: _TurnTables, policy: int, first_edge: int) -> sa.Select:
    """Return the SELECT of each state's chosen moves under the solve's policy number ``policy``:
    ``(state, 'offset,offset,...')``, offsets from ``first_edge``.

    One row and one string per state rather than a row per move: fetching a
    batch's million moves row by row costs more than solving them.
    """
    offsets = sa.cast(work.chosen.c[f"edge{policy}"] - first_edge, sa.Text)
    return sa.select(work.chosen.c.state, sa.func.aggregate_strings(offsets, ",")).group_by(work.chosen.c.state)


def _decoded(rows: Sequence[tuple[int, str]]) -> tuple[object, object] | None:
    """Return the arrays (state, chosen move's offset) of :func:`chosen_moves`'s rows; None for no rows.

    The offsets are parsed by numpy in one call over the joined text, three
    times faster than a list of numbers per state (a batch holds about a
    million offsets).

    >>> _decoded([(7, "0,5"), (9, "2")])
    (array([7, 7, 9]), array([0, 5, 2]))
    """
    import numpy as np

    if not rows:
        return None
    texts = [text for _, text in rows]
    moves = np.fromstring(",".join(texts), dtype=np.int64, sep=",")
    states = np.repeat(np.array([state for state, _ in rows], dtype=np.int64), [text.count(",") + 1 for text in texts])
    return states, moves


def _fetch_batch(connection: sa.Connection, work: _TurnTables, number: int, first_edge: int,
                 root: int) -> tuple[list[sa.Row], list[sa.Row]]:
    """Return the batch's chosen moves (:func:`chosen_moves`) and root values ``(state, v1, v2)`` of the solve's
    policy ``number``."""
    chosen = connection.execute(chosen_moves(work, number, first_edge)).all()
    values = sa.select(work.turn.c.state, work.turn.c[f"v1_{number}"], work.turn.c[f"v2_{number}"]).where(
        work.turn.c.node_id == root)
    return chosen, connection.execute(values).all()


def _policy_rows(policy_id: int, encoder: DecisionEncoder, chosen: Sequence[tuple[int, str]],
                 values: Sequence[tuple[int, float, float]]) -> list[dict]:
    """Return the ``turn_policy`` rows of a batch: each state's value, second moment and packed decisions.

    Pure computation (no database), so it runs beside the next batch's statements.
    """
    decoded = _decoded(chosen)
    packed = {} if decoded is None else encoder.pack(*decoded)
    return [{"policy_id": policy_id, "node_id": state, "value": v1, "moment2": v2, "decisions": packed.get(state, b"")}
            for state, v1, v2 in values]


def ensure_turns_solved(connection: sa.Connection, graph: TurnGraph, progress: Progress | None = None) -> None:
    """Solve every turn policy over the whole game unless stored, together (``progress``: policy-states done).

    Each state layer is committed as it is stored, so an interrupted solve
    resumes where it stopped; ``connection`` must not be inside a ``begin()`` block.
    """
    missing = []
    for declared in graph.structure.policies:
        policy_id = ensure_policy(connection, graph, declared.name)
        connection.commit()
        if not is_solved(connection, policy_id):
            missing.append(declared.name)
        elif progress is not None:
            progress(graph.structure.states or 0)
    if missing:
        solve_policies(connection, graph, missing, progress=progress, commit_layers=True)


def turn_worths(connection: sa.Connection, graph: TurnGraph, name: str, key: str) -> dict[str, tuple[float, float]]:
    """Return, for the turn state ``key``, every turn node's key -> (profit, value) under policy ``name``
    (:func:`turns_played`; raises NotFound when the states after it are not solved)."""
    state = find_node(connection, graph.graph_id, key)
    worths = turns_played(connection, graph, name, [state.id])[state.id]
    keys = dict(connection.execute(sa.select(node.c.id, node.c.key).where(
        node.c.graph_id == graph.graph_id, node.c.id.in_(list(worths)))).all())
    return {keys[node_id]: worth for node_id, worth in worths.items()}


def turns_played(connection: sa.Connection, graph: TurnGraph, name: str, states: Sequence[int],
                 solved: bool = False) -> dict[int, dict[int, tuple[float, float]]]:
    """Return :meth:`TurnPlayer.played` of a new player (statements built for this call alone)."""
    return TurnPlayer(graph, name).played(connection, states, solved)


@dataclass(frozen=True)
class _Prepared:
    """What a :class:`TurnPlayer` builds once a backend: the policy's id, the rows of the turn's ends (with the
    policy's own profits), whether it has its own, the work's tables (not created) and the turn's statements."""

    policy_id: int
    ends: list[dict]
    own_profits: bool
    work: _TurnTables
    plan: list[sa.Executable]


class TurnPlayer:
    """The turns of a stored turn game played under policy ``name`` from the states a game reaches, in SQL from the
    stored values of the states their moves lead to (nothing stored).

    Its work tables and statements are built once, at the first call, and run again at each: SQLAlchemy compiles a
    statement over the same table objects once, and compiling had cost more than running them (measured in
    docs/performance.md). A decision layer takes
    one statement (:func:`_played_decisions`), as no chosen move is stored. Safe to share between threads: a
    connection's temporary tables are its own.
    """

    def __init__(self, graph: TurnGraph, name: str):
        self.graph, self.name = graph, name
        self._prepared: dict[str, _Prepared] = {}  # backend -> what its statements need
        self._lock = threading.Lock()

    def _prepare(self, connection: sa.Connection) -> _Prepared:
        """Return the policy's id, its ends' rows, the work's tables and its turn's statements (built once a
        backend)."""
        backend = backend_of(connection)
        with self._lock:
            if backend not in self._prepared:
                profits = _profits(connection, self.graph, self.graph.policy(self.name))
                work = _work_definitions(connection, 1)
                self._prepared[backend] = _Prepared(
                    policy_id=ensure_policy(connection, self.graph, self.name),
                    ends=_end_rows(self.graph, [profits]), own_profits=profits is not None, work=work,
                    plan=_turn_plan(self.graph, work, grouped=backend_of(connection).hashed_joins, keep_chosen=False))
            return self._prepared[backend]

    def played(self, connection: sa.Connection, states: Sequence[int],
               solved: bool = False) -> dict[int, dict[int, tuple[float, float]]]:
        """Return, for each turn state of ``states`` (node ids), every node of its turn (id) -> (profit, value):
        the turns of all of them played at once. Ends a state has no move through are left out. Raises NotFound
        when the policy is not solved past the states (not looked at when ``solved``: its whole solve is known
        stored).

        A game visits one state a state layer, and an analysis asks for all of them at once.
        """
        graph = self.graph
        prepared = self._prepare(connection)
        policy_id = prepared.policy_id
        rows = connection.execute(sa.select(node.c.id, node.c.layer).where(
            node.c.graph_id == graph.graph_id, node.c.id.in_(list(states)))).all()
        if len(rows) < len(set(states)) or any(layer not in graph.game_spans for _, layer in rows):
            raise NotFound(f"not every node of {sorted(set(states))} is a turn state of graph {graph.graph_id}")
        if rows and not solved and not is_solved(connection, policy_id, min(layer for _, layer in rows) + 1):
            raise NotFound(f"policy {self.name!r} is not solved past the states asked for (run: dicegraph report GAME)")
        return play_turns(connection, graph, policy_id, prepared.ends, prepared.own_profits, rows, prepared)


@dispatchable("turn play")
def play_turns(connection: sa.Connection, graph: TurnGraph, policy_id: int, ends: Sequence[dict], own_profits: bool,
               states: Sequence[tuple[int, int]],
               prepared: _Prepared | None = None) -> dict[int, dict[int, tuple[float, float]]]:
    """Return, for each turn state of ``states`` (``(node id, state layer)``), every node of its turn (id) ->
    (profit, value) under the stored policy ``policy_id`` whose ends' rows are ``ends`` (with its own profits where
    ``own_profits``): the turns of all of them played at once, from the stored values of the states their moves lead
    to. Ends a state has no move through, and nodes none of whose children has a value, are left out.

    ``prepared`` (a :class:`TurnPlayer`'s, built once) gives the work's tables and statements; without it they are
    built for this call."""
    if prepared is None:
        work = _work_definitions(connection, 1)
        plan = _turn_plan(graph, work, grouped=backend_of(connection).hashed_joins, keep_chosen=False)
    else:
        work, plan = prepared.work, prepared.plan
    _create_work(connection, graph, work)
    connection.execute(sa.insert(work.ends), list(ends))
    which = sa.or_(sa.false(), *(state_moves(graph, layer, (state, state)) for state, layer in states))
    leads_to = sa.select(edge.c.dst).where(which)
    ended = _terminal_states(graph, 1).where(node.c.id.in_(leads_to))
    connection.execute(sa.insert(work.state).from_select(["node_id", "v1_0", "v2_0"], ended))
    following = (sa.select(turn_policy.c.node_id, turn_policy.c.value, turn_policy.c.moment2)
                 .where(turn_policy.c.policy_id == policy_id, turn_policy.c.node_id.in_(leads_to),
                        turn_policy.c.node_id.not_in(sa.select(work.state.c.node_id))))
    connection.execute(sa.insert(work.state).from_select(["node_id", "v1_0", "v2_0"], following))
    _start_turns(connection, graph, work, which, [own_profits])
    for statement in plan:
        connection.execute(statement)
    found: dict[int, dict[int, tuple[float, float]]] = {state: {} for state, _ in states}
    fetched = connection.execute(sa.select(work.turn.c.state, work.turn.c.node_id, work.turn.c.p0,
                                           work.turn.c.v1_0)).all()
    for state, node_id, p, v1 in fetched:  # fetched at once: a row at a time cost more than the statements
        found[state][node_id] = (p, v1)
    _drop(connection, work)
    return found
