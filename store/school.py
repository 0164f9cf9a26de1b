"""School in SQL: the turn graph, stored once, joined with the turn states one game layer at a time.

A turn state ``U`` (a used set, layer ``|U|``) is worth what its turn is worth
when the turn's terminal ``end:<c>`` is worth the value of ``U + c`` (and is
missing when ``c`` is not open). So the states are solved from the last layer
down, and for each layer *all* its states go through the turn together: every
statement joins the turn's edges of one turn layer with a work table keyed by
(turn node, state). Per game layer that is one statement for each chance
layer of the turn and two for each decision layer (the best profit, by a
window over the node's moves, with the move chosen; then that move's value),
whatever the number of states: no loop over states in Python.

A policy chooses by a *profit* ``p`` and is worth ``v1`` (expected points still
to come) with second moment ``v2``:

* ``optimal``: ``p = v1``; an ``end:<c>`` is worth the value of ``U + c``.
* ``bob`` (seed 001): an ``end:<c>`` has profit ``-average(c)`` so that scoring
  ``c`` is worth its points minus its average (the table is the optimal
  values of the states where ``c`` alone is left); rerolls are worth the
  expected best profit; ``v1`` and ``v2`` follow his choices.

Ties: the first move streamed among those within :data:`store.solve.TIE_TOLERANCE`
of the best. Results go to ``turn_policy``: per state ``v1``, ``v2`` and the
decision at each of the 756 turn positions packed one byte each
(:func:`graphs.school.encode_decision`; position ``outcome * 3 + rerolls left``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from graphs import school as rules
from graphs.errors import BadParameter
from store.catalog import find_node
from store.errors import NotFound
from store.load import next_id, now
from store.schema import edge, edges_of, layer_ranges, node, policy, turn_policy
from store.scratch import plan_whole_layers, temporary_table, turn_work_table
from store.solve import best_move_rows

POSITIONS = len(rules.OUTCOMES) * rules.ROLLS  # decision bytes per turn state
STOP = 255  # the move "stop" at the second roll: its byte is the third roll's decision
StatesDone = Callable[[int], None]
FETCH_ROWS = 200_000  # chosen moves fetched at a time
EDGE_BITS = 20  # a chosen move's code: state << EDGE_BITS | edge offset in the turn (19,236 < 2**20)
# turn states solved together, per backend: SQLite sorts each GROUP BY, and
# its sorts stay in memory (and fast) for a few hundred states; DuckDB
# runs a batch in parallel, and batches bound its memory
BATCH_STATES = {"sqlite": 256, "default": 2048}


@dataclass
class _Work:
    """The temporary tables of one solve."""

    state: sa.Table  # turn state -> v1, v2 (solved layers)
    turn: sa.Table  # (turn node, state) -> p, v1, v2 (the game layer being solved)
    chosen: sa.Table  # (decision node, state) -> edge taken, best p
    ends: sa.Table  # end:<c> node -> combination label, Bob's profit


def _work_tables(connection: sa.Connection) -> _Work:
    number = sa.Double
    return _Work(
        state=temporary_table(connection, "school_state", sa.Column("v1", number, nullable=False),
                              sa.Column("v2", number, nullable=False)),
        turn=turn_work_table(connection, "school_turn", sa.Column("p", number, nullable=False),
                             sa.Column("v1", number, nullable=False), sa.Column("v2", number, nullable=False)),
        chosen=turn_work_table(connection, "school_chosen", sa.Column("edge_id", sa.BigInteger, nullable=False),
                               sa.Column("p", number, nullable=False)),
        ends=temporary_table(connection, "school_end", sa.Column("label", sa.Text, nullable=False),
                             sa.Column("profit", number)),
    )


def _policy_work(connection: sa.Connection, graph: TurnGraph, bob: bool) -> _Work:
    """Return new work tables holding the ``end:<c>`` nodes (with Bob's profits, -average, when ``bob``) and the last state."""
    averages = average_table(connection, graph.graph_id) if bob else {}
    work = _work_tables(connection)
    connection.execute(sa.insert(work.ends), [
        {"node_id": node_id, "label": combination, "profit": -averages[combination] if bob else None}
        for combination, node_id in graph.ends.items()])
    final = find_node(connection, graph.graph_id, rules.state_key(rules.ALL_USED)).id
    connection.execute(sa.insert(work.state).values(node_id=final, v1=0.0, v2=0.0))  # the game is over
    return work


def _drop(connection: sa.Connection, work: _Work) -> None:
    for table in (work.state, work.turn, work.chosen, work.ends):
        table.drop(connection)


@dataclass(frozen=True)
class TurnGraph:
    """Where the parts of a stored School graph are: layer spans and the node ids the solver needs."""

    graph_id: int
    game_spans: dict[int, sa.Row]  # game layer -> its span (moves U -> U + c)
    turn_spans: list[sa.Row]  # the turn's layers with edges, first roll first
    roll1: int
    ends: dict[str, int]  # combination -> end:<c> node id
    layer_ids: dict[int, tuple[int, int]]  # game layer -> first and last node id of its turn states (contiguous)
    turn_sources: dict[int, tuple[int, int]]  # turn layer -> lowest and highest node id its edges leave

    @classmethod
    def load(cls, connection: sa.Connection, graph_id: int) -> TurnGraph:
        """Return the parts of the School graph ``graph_id``."""
        spans = layer_ranges(connection, graph_id)
        ends = sa.select(node.c.key, node.c.id).where(node.c.graph_id == graph_id, node.c.key.like("end:%"))
        ids = (sa.select(node.c.layer, sa.func.min(node.c.id), sa.func.max(node.c.id))
               .where(node.c.graph_id == graph_id, node.c.layer < rules.TURN_LAYER).group_by(node.c.layer))
        turn_edges = edge.c.id.between(min(s.first_edge for s in spans if s.layer >= rules.TURN_LAYER), spans[-1].last_edge)
        sources = (sa.select(edge.c.src_layer, sa.func.min(edge.c.src), sa.func.max(edge.c.src))
                   .where(turn_edges).group_by(edge.c.src_layer))
        return cls(
            graph_id=graph_id,
            game_spans={span.layer: span for span in spans if span.layer < rules.TURN_LAYER},
            turn_spans=[span for span in spans if span.layer >= rules.TURN_LAYER],
            roll1=find_node(connection, graph_id, "roll1").id,
            ends={key.split(":", 1)[1]: node_id for key, node_id in connection.execute(ends)},
            layer_ids={layer: (first, last) for layer, first, last in connection.execute(ids)},
            turn_sources={layer: (first, last) for layer, first, last in connection.execute(sources)},
        )


def _turn_statements(connection: sa.Connection, graph: TurnGraph, work: _Work) -> None:
    """Solve the turn for every state whose ``end:<c>`` rows are in the turn table (deepest turn layer first)."""
    turn, chosen = work.turn, work.chosen
    after = turn.alias("after")
    for span in reversed(graph.turn_spans):
        if span.rolls:
            weight = sa.func.sum(edge.c.weight)
            rows = (
                sa.select(edge.c.src, after.c.state, sa.func.sum(edge.c.weight * after.c.p) / weight,
                          sa.func.sum(edge.c.weight * after.c.v1) / weight, sa.func.sum(edge.c.weight * after.c.v2) / weight)
                .select_from(edge.join(after, after.c.node_id == edge.c.dst))
                .where(edges_of(span, "roll")).group_by(edge.c.src, after.c.state)
            )
            connection.execute(sa.insert(turn).from_select(["node_id", "state", "p", "v1", "v2"], rows))
            continue
        picked = best_move_rows(after, "p", span, "max", keys=("state",))
        connection.execute(sa.insert(chosen).from_select(["state", "node_id", "p", "edge_id"], picked))
        reward = edge.c.reward
        values = (
            sa.select(chosen.c.node_id, chosen.c.state, chosen.c.p, reward + after.c.v1,
                      reward * reward + 2 * reward * after.c.v1 + after.c.v2)
            .select_from(
                chosen.join(edge, edge.c.id == chosen.c.edge_id)
                .join(after, sa.and_(after.c.node_id == edge.c.dst, after.c.state == chosen.c.state))
            )
            .where(chosen.c.node_id.between(*graph.turn_sources[span.layer]),
                   chosen.c.edge_id.between(span.first_edge, span.last_edge))
        )
        connection.execute(sa.insert(turn).from_select(["node_id", "state", "p", "v1", "v2"], values))


def _start_turns(connection: sa.Connection, graph: TurnGraph, work: _Work, game_layer: int,
                 states: tuple[int, int], bob: bool) -> None:
    """Put the ``end:<c>`` rows of the states of ``game_layer`` with node ids in ``states`` (first, last) in the turn table."""
    nxt, ends = work.state, work.ends
    profit = ends.c.profit if bob else nxt.c.v1
    moves = edge.join(nxt, nxt.c.node_id == edge.c.dst).join(ends, ends.c.label == edge.c.label)
    where = [edges_of(graph.game_spans[game_layer], "move"), edge.c.src.between(*states)]
    rows = sa.select(ends.c.node_id, edge.c.src, profit, nxt.c.v1, nxt.c.v2).select_from(moves).where(*where)
    connection.execute(sa.insert(work.turn).from_select(["node_id", "state", "p", "v1", "v2"], rows))


def _clear(connection: sa.Connection, work: _Work) -> None:
    for table in (work.turn, work.chosen):
        connection.execute(sa.delete(table))


class _DecisionBytes:
    """Turns the chosen moves of a solve into each state's 756 decision bytes.

    A decision's move is a score, ``stop`` (the third roll's score, after the
    second roll) or ``reroll a d``; the last is followed through the keep's
    choices (``reroll a d`` again, until ``roll n``) to the dice kept.
    """

    SCORE, STOP, PUT_BACK, ROLL_NOW = range(4)

    def __init__(self, connection: sa.Connection, graph: TurnGraph):
        import numpy as np

        choosers = sa.select(node.c.id, node.c.key).where(
            node.c.graph_id == graph.graph_id, sa.or_(node.c.key.like("r_:%"), node.c.key.like("h_:%")))
        self.local: dict[int, int] = {}
        decisions = []  # (local index, position, outcome)
        keep_index = {keep: k for k, keep in enumerate(rules.KEEPS)}
        dice_of: dict[int, tuple[int, ...]] = {}
        for node_id, key in connection.execute(choosers):
            self.local[node_id] = len(self.local)
            stage, text = key.split(":")
            dice = () if text == "-" else tuple(int(f) for f in text)
            dice_of[node_id] = dice
            if stage[0] == "r":
                outcome = rules.OUTCOME_INDEX[dice]
                decisions.append((self.local[node_id], outcome * rules.ROLLS + rules.ROLLS - int(stage[1]), outcome))
        self.decisions = np.array(sorted(decisions), dtype=np.int64).reshape(-1, 3)
        first, last = graph.turn_spans[0].first_edge, graph.turn_spans[-1].last_edge
        moves = sa.select(edge.c.id, edge.c.src, edge.c.dst, edge.c.label).where(
            edge.c.id.between(first, last), edge.c.kind == "move")
        self.first_edge = first
        size = last - first + 1
        self.kind, self.byte = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.target, self.keep = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        self.src = np.zeros(size, dtype=np.int64)
        for edge_id, src, dst, label in connection.execute(moves):
            at = edge_id - first
            self.src[at] = self.local[src]
            if label == "stop":
                self.kind[at] = self.STOP
            elif label.startswith("reroll a "):
                self.kind[at], self.target[at] = self.PUT_BACK, self.local[dst]
            elif label.startswith("roll "):
                self.kind[at], self.keep[at] = self.ROLL_NOW, keep_index[dice_of[src]]
            else:
                self.kind[at], self.byte[at] = self.SCORE, rules.score_byte(label)
        self.mask = np.zeros((len(rules.OUTCOMES), len(rules.KEEPS)), dtype=np.int64)
        for outcome, dice in enumerate(rules.OUTCOMES):
            for kept in rules.sub_multisets(dice):
                if len(kept) < rules.DICE:
                    self.mask[outcome, keep_index[kept]] = rules.reroll_mask(dice, kept)

    def pack(self, batches: Iterator[Sequence[int]]) -> dict[int, bytes]:
        """Return state -> its decision bytes, from batches of chosen moves coded by :func:`chosen_codes`."""
        import numpy as np

        rows = [np.fromiter(batch, dtype=np.int64, count=len(batch)) for batch in batches]
        if not rows:
            return {}
        code = np.concatenate(rows)
        states, state_row = np.unique(code >> EDGE_BITS, return_inverse=True)
        moves = code & ((1 << EDGE_BITS) - 1)
        chosen = np.full((len(states), len(self.local)), -1, dtype=np.int64)
        chosen[state_row, self.src[moves]] = moves
        every = np.arange(len(states))[:, None]
        moves = chosen[:, self.decisions[:, 0]]  # [state, decision]
        kinds = self.kind[moves]
        packed = np.where(kinds == self.SCORE, self.byte[moves], 0)
        current, kept = moves.copy(), np.full(moves.shape, -1, dtype=np.int64)
        for _ in range(rules.DICE + 1):  # follow the keep's choices to "roll n"
            following = (kinds == self.PUT_BACK) & (kept < 0)
            if not following.any():
                break
            current = np.where(following, chosen[every, self.target[current]], current)
            done = following & (self.kind[current] == self.ROLL_NOW)
            kept = np.where(done, self.keep[current], kept)
        rerolled = kinds == self.PUT_BACK
        outcomes = np.broadcast_to(self.decisions[:, 2], moves.shape)
        packed = np.where(rerolled, rules.encode_decision(rules.REROLL, 0) | self.mask[outcomes, np.maximum(kept, 0)], packed)
        by_position = np.zeros((len(states), POSITIONS), dtype=np.int64)
        by_position[:, self.decisions[:, 1]] = np.where(kinds == self.STOP, STOP, packed)
        second = np.arange(len(rules.OUTCOMES)) * rules.ROLLS + 1  # rerolls left 1: "stop" plays the third roll's move
        by_position[:, second] = np.where(by_position[:, second] == STOP, by_position[:, second - 1], by_position[:, second])
        return {int(state): by_position[i].astype(np.uint8).tobytes() for i, state in enumerate(states)}


def ensure_policy(connection: sa.Connection, graph_id: int, name: str) -> int:
    """Return the id of School policy ``name`` (``optimal`` or ``bob``) on the graph, creating the row if needed.

    A new row is ``unfinished_since`` now: nothing lists it as a policy
    until :func:`solve_policy` has stored every game layer.
    """
    if name not in rules.POLICIES:
        raise BadParameter(f"unknown School policy {name!r} (known: {', '.join(rules.POLICIES)})")
    row = connection.execute(sa.select(policy.c.id).where(policy.c.graph_id == graph_id, policy.c.name == name)).first()
    if row is not None:
        return row.id
    policy_id = next_id(connection, policy)
    connection.execute(sa.insert(policy).values(
        id=policy_id, graph_id=graph_id, name=name, objective="max", created_at=now(), unfinished_since=now(),
        method="solve" if name == "optimal" else "agent"))
    return policy_id


def _lowest_stored_layer(connection: sa.Connection, policy_id: int) -> int | None:
    """Return the lowest game layer whose turn states the policy has stored (None: none yet)."""
    stored = sa.select(sa.func.min(node.c.layer)).select_from(
        turn_policy.join(node, node.c.id == turn_policy.c.node_id)).where(turn_policy.c.policy_id == policy_id)
    owner = sa.select(policy.c.graph_id).where(policy.c.id == policy_id).scalar_subquery()
    return connection.execute(stored.where(node.c.graph_id == owner)).scalar_one_or_none()


def is_solved(connection: sa.Connection, policy_id: int, layers: int = 0) -> bool:
    """Return whether the policy's values are stored for every turn state from game layer ``layers`` up."""
    lowest = _lowest_stored_layer(connection, policy_id)
    return lowest is not None and lowest <= layers


def solve_policy(connection: sa.Connection, graph_id: int, name: str, down_to: int = 0,
                 progress: StatesDone | None = None, batch_states: int | None = None,
                 commit_layers: bool = False) -> int:
    """Compute and store School policy ``name`` from the last game layer down to ``down_to``; return its id.

    ``down_to=14`` solves only the states with one combination left (the
    average table); ``0`` the whole game. ``bob`` needs the average table,
    so the optimal policy is solved down to layer 14 first when it is not.
    A layer's states go through the turn in batches of ``batch_states``
    (:data:`BATCH_STATES` by default): one set of statements per batch.
    ``progress`` is called with the number of turn states done after each batch
    (and once with those already stored when resuming).

    With ``commit_layers`` each game layer is committed as it is stored, and
    a solve that was interrupted resumes after the last layer it committed;
    the policy is listed (``unfinished_since`` cleared) only when it reaches layer 0.
    Without it the caller's transaction holds everything, as it was.
    """
    graph = TurnGraph.load(connection, graph_id)
    policy_id = ensure_policy(connection, graph_id, name)
    bob = name == "bob"
    work = _policy_work(connection, graph, bob)
    top = len(rules.COMBINATIONS) - 1
    stored = _lowest_stored_layer(connection, policy_id) if commit_layers else None
    if stored is None:
        connection.execute(sa.delete(turn_policy).where(turn_policy.c.policy_id == policy_id))
        start = top
    else:  # resume: the stored layers are the next layer's values
        rows = sa.select(turn_policy.c.node_id, turn_policy.c.value, turn_policy.c.moment2).where(
            turn_policy.c.policy_id == policy_id)
        connection.execute(sa.insert(work.state).from_select(["node_id", "v1", "v2"], rows))
        start = stored - 1
        if progress is not None:
            progress(sum(last - first + 1 for layer, (first, last) in graph.layer_ids.items() if stored <= layer <= top))
    packer = _DecisionBytes(connection, graph)
    batch = batch_states or BATCH_STATES.get(connection.dialect.name, BATCH_STATES["default"])
    for game_layer in range(start, down_to - 1, -1):
        plan_whole_layers(connection)
        first, last = graph.layer_ids[game_layer]
        for start_id in range(first, last + 1, batch):
            _start_turns(connection, graph, work, game_layer, (start_id, min(start_id + batch - 1, last)), bob)
            _turn_statements(connection, graph, work)
            roots = sa.select(work.turn.c.state, work.turn.c.v1, work.turn.c.v2).where(work.turn.c.node_id == graph.roll1)
            connection.execute(sa.insert(work.state).from_select(["node_id", "v1", "v2"], roots))
            _store_batch(connection, work, packer, policy_id, graph.roll1)
            _clear(connection, work)
            if progress is not None:
                progress(min(start_id + batch - 1, last) - start_id + 1)
        if down_to == 0 and game_layer == 0:
            connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(unfinished_since=None))
        if commit_layers:
            connection.commit()
    _drop(connection, work)
    return policy_id


def chosen_codes(work: _Work, first_edge: int) -> sa.Select:
    """Return the SELECT of the chosen moves as one integer each, ``state << EDGE_BITS | (edge - first_edge)``.

    One column rather than three: fetching is most of the cost of reading a
    batch's 300,000 moves (the move's node is the edge's source).
    """
    state = sa.cast(work.chosen.c.state, sa.BigInteger)  # the product outgrows 32 bits
    return sa.select(state * (1 << EDGE_BITS) + (work.chosen.c.edge_id - first_edge))


def _store_batch(connection: sa.Connection, work: _Work, packer: _DecisionBytes, policy_id: int, roll1: int) -> None:
    packed = packer.pack(connection.execute(chosen_codes(work, packer.first_edge)).scalars().partitions(FETCH_ROWS))
    values = sa.select(work.turn.c.state, work.turn.c.v1, work.turn.c.v2).where(work.turn.c.node_id == roll1)
    rows = [{"policy_id": policy_id, "node_id": state, "value": v1, "moment2": v2, "decisions": packed[state]}
            for state, v1, v2 in connection.execute(values)]
    if rows:
        connection.execute(sa.insert(turn_policy), rows)


def ensure_solved(connection: sa.Connection, graph_id: int, progress: Callable[[int], None] | None = None) -> None:
    """Solve ``optimal`` and evaluate ``bob`` over the whole game unless stored (``progress``: turn states done).

    Each game layer is committed as it is stored, so an interrupted solve
    resumes where it stopped; ``connection`` must not be inside a ``begin()`` block.
    """
    for name in rules.POLICIES:
        policy_id = ensure_policy(connection, graph_id, name)
        connection.commit()
        if not is_solved(connection, policy_id):
            solve_policy(connection, graph_id, name, progress=progress, commit_layers=True)
        elif progress is not None:
            progress(len(rules.STATES))


def average_table(connection: sa.Connection, graph_id: int) -> dict[str, float]:
    """Return each combination's average score: the optimal value of the state where it alone is left.

    Solves the optimal policy's last game layer when it is not stored.
    """
    optimal = ensure_policy(connection, graph_id, "optimal")
    if not is_solved(connection, optimal, len(rules.COMBINATIONS) - 1):
        solve_policy(connection, graph_id, "optimal", down_to=len(rules.COMBINATIONS) - 1)
    table = {}
    for c, combination in enumerate(rules.COMBINATIONS):
        key = rules.state_key(rules.ALL_USED ^ 1 << c)
        table[combination] = state_result(connection, graph_id, optimal, key).value
    return table


def state_result(connection: sa.Connection, graph_id: int, policy_id: int, key: str) -> sa.Row:
    """Return the ``turn_policy`` row (value, moment2, decisions) of the turn state ``key``; raise NotFound if unsolved."""
    query = (sa.select(turn_policy.c.value, turn_policy.c.moment2, turn_policy.c.decisions)
             .select_from(turn_policy.join(node, sa.and_(node.c.id == turn_policy.c.node_id, node.c.graph_id == graph_id)))
             .where(turn_policy.c.policy_id == policy_id, node.c.key == key))
    row = connection.execute(query).first()
    if row is None:
        raise NotFound(f"no stored value for {key} (solve the game first: dicegraph report school)")
    return row


def game_score(connection: sa.Connection, graph_id: int, policy_id: int) -> tuple[float, float]:
    """Return the policy's expected final score and its standard deviation, from the start of the game."""
    row = state_result(connection, graph_id, policy_id, rules.state_key(0))
    return row.value, math.sqrt(max(row.moment2 - row.value**2, 0.0))


def decision_array(connection: sa.Connection, graph_id: int, policy_id: int) -> Any:
    """Return the policy's decisions as a uint8 array ``[unused mask, outcome, rerolls left]`` (0: no decision)."""
    import numpy as np

    array = np.zeros((rules.ALL_USED + 1, len(rules.OUTCOMES), rules.ROLLS), dtype=np.uint8)
    query = (sa.select(node.c.key, turn_policy.c.decisions)
             .select_from(turn_policy.join(node, sa.and_(node.c.id == turn_policy.c.node_id, node.c.graph_id == graph_id)))
             .where(turn_policy.c.policy_id == policy_id))
    for key, decisions in connection.execute(query):
        used = int(key.split(":")[1])
        array[rules.ALL_USED ^ used] = np.frombuffer(decisions, dtype=np.uint8).reshape(len(rules.OUTCOMES), rules.ROLLS)
    return array


@dataclass(frozen=True)
class Alternative:
    """One thing the player may do at a turn position, with what it is worth."""

    move: str  # e.g. "keep 22", "score Pair", "cross out Poker"
    byte: int  # its decision byte
    value: float  # expected points still to come (this turn's included) under the policy
    profit: float  # what the policy ranks moves by (the value for optimal; Bob's profit for bob)


def alternatives(connection: sa.Connection, graph_id: int, name: str, used: int, dice: tuple[int, ...],
                 rerolls_left: int) -> list[Alternative]:
    """Return every alternative at a turn position under policy ``name``, best (by its profit) first.

    Solves the turn of the one state ``used`` in SQL from the stored values
    of the states after it; raises NotFound when those are not stored.
    """
    if not 0 <= rerolls_left < rules.ROLLS:
        raise BadParameter(f"--rolls-left must be 0..{rules.ROLLS - 1} (not {rerolls_left})")
    graph = TurnGraph.load(connection, graph_id)
    policy_id = ensure_policy(connection, graph_id, name)
    layer = bin(used).count("1")
    if not is_solved(connection, policy_id, layer + 1):
        raise NotFound(f"policy {name!r} is not solved for {rules.used_text(used)} (run: dicegraph report school)")
    bob = name == "bob"
    work = _policy_work(connection, graph, bob)
    following = (sa.select(turn_policy.c.node_id, turn_policy.c.value, turn_policy.c.moment2)
                 .select_from(turn_policy.join(node, node.c.id == turn_policy.c.node_id))
                 .where(turn_policy.c.policy_id == policy_id, node.c.graph_id == graph_id, node.c.layer == layer + 1))
    connection.execute(sa.insert(work.state).from_select(["node_id", "v1", "v2"], following))
    state = find_node(connection, graph_id, rules.state_key(used)).id
    _start_turns(connection, graph, work, layer, (state, state), bob)
    _turn_statements(connection, graph, work)
    roll = rules.ROLLS - rerolls_left
    worth = {node_id: (p, v1) for node_id, p, v1 in connection.execute(
        sa.select(work.turn.c.node_id, work.turn.c.p, work.turn.c.v1).where(work.turn.c.state == state))}
    scoring = find_node(connection, graph_id, rules.turn_key(f"r{3 if roll == 2 else roll}", dice)).id
    scores = sa.select(edge.c.label, edge.c.reward, edge.c.dst).where(
        edge.c.graph_id == graph_id, edge.c.src == scoring, ~edge.c.label.like("reroll a %")).order_by(edge.c.id)
    found = [Alternative(label, rules.score_byte(label), reward + worth[dst][1], reward + worth[dst][0])
             for label, reward, dst in connection.execute(scores) if dst in worth]
    if roll < rules.ROLLS:
        keeps = {rules.turn_key(f"k{roll + 1}", kept): kept for kept in rules.sub_multisets(dice) if len(kept) < rules.DICE}
        ids = dict(connection.execute(sa.select(node.c.key, node.c.id).where(
            node.c.graph_id == graph_id, node.c.key.in_(list(keeps)))).all())
        for key, kept in keeps.items():
            profit, value = worth[ids[key]]
            found.append(Alternative(f"keep {rules.dice_text(kept)}", rules.keep_byte(dice, kept), value, profit))
    _drop(connection, work)
    return sorted(found, key=lambda a: -a.profit)  # stable: the first streamed among equals stays first


def advise(connection: sa.Connection, graph_id: int, name: str, used: int, dice: tuple[int, ...],
           rerolls_left: int) -> dict[str, Any]:
    """Return the decision of policy ``name`` at a turn position, every alternative's worth, and the other policy's.

    ``{"used", "roll", "rerolls_left", "policy", "decision", "alternatives": [{"move", "value", "profit"}],
    "others": {policy: decision}, "agree"}``. Values are expected points still to come, this turn's
    included, in the graph's scoring convention; ``profit`` is what the policy ranks moves by.
    """
    position = rules.OUTCOME_INDEX[dice] * rules.ROLLS + rerolls_left
    key = rules.state_key(used)
    decided = {}
    for policy_name in rules.POLICIES:
        policy_id = ensure_policy(connection, graph_id, policy_name)
        decided[policy_name] = state_result(connection, graph_id, policy_id, key).decisions[position]
    found = alternatives(connection, graph_id, name, used, dice, rerolls_left)
    return {
        "used": [c for i, c in enumerate(rules.COMBINATIONS) if used >> i & 1],
        "roll": list(dice),
        "rerolls_left": rerolls_left,
        "policy": name,
        "decision": rules.describe_decision(decided[name], dice),
        "alternatives": [{"move": rules.describe_decision(a.byte, dice), "value": a.value, "profit": a.profit}
                         for a in found],
        "others": {other: rules.describe_decision(byte, dice) for other, byte in decided.items() if other != name},
        "agree": len(set(decided.values())) == 1,
    }
