"""Matches in a race whose turn is stored once, played through each policy's distribution of the turn's ends, and
the best response to each of its policies (:func:`best_responses`).

In a match no seat maximises: the optimum plays its own moves (ranked by its
stored values), an agent its stored choices. From a turn state, a policy's
turn then ends at each of the turn's ends with a probability that depends on
no value: the policy's *end distribution* at that state. A match is played in
two steps:

* **The end distributions.** For each policy, the turn is played from each
  state: backward once, to choose the moves as the seat would
  (:class:`dicegraph.store.solve.turn_cycles.RaceTables`, which records them), then
  forward, spreading the probability of reaching each turn node from the root
  along the moves chosen, one statement a turn layer (:func:`play_ends`, the
  operation ``end distributions``; Spark's registered one does both in one statement, the turn folded in each
  state's row). An agent knows of the
  state only which of its moves win at once (and the horizon, which leaves
  out nothing it reaches), so states alike in those share one distribution,
  played once: the race to 5000's 10,000 score pairs have 100 (the player's
  own score). The states are played in batches of about :data:`BATCH_ROWS`
  (turn node, state) rows.
* **The state layers**, last first, as in :mod:`dicegraph.store.solve.turn_cycles`:
  each seat's value at a state is, over the ends, the end's probability times
  what the state's move through it is worth (its reward plus, with its sign,
  the value of where it leads for the seat then to move), one statement a
  layer for every seat at once; a layer's loops (a bust leaves the scores
  and hands the turn over) make it a small linear system, solved exactly.

The turn's own edges carry no reward or sign in a race; a graph whose turn
edges do is refused (InvalidGraph), since their expected sum would be a
column of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError, InvalidGraph
from dicegraph.graphs.protocol import Progress
from dicegraph.store.backends import backend_of
from dicegraph.store.catalog import find_policy
from dicegraph.store.schema import edge, node, ranked_values, turn_policy
from dicegraph.store.convergence import Convergence
from dicegraph.store.scratch import create_afresh, keyed_pair_table, temporary_table, turn_work_table
from dicegraph.store.seats import FOLLOW, RANK, Response, Seat
from dicegraph.store.solve.dispatch import dispatchable
from dicegraph.store.solve.layers import finish_solve, forget, record_solve
from dicegraph.store.solve.objectives import response_name
from dicegraph.store.solve.turn_cycles import Played, RaceTables, solve_layer, solve_race, state_horizons
from dicegraph.store.solve.turns import ensure_policy
from dicegraph.store.turn_graph import TurnGraph

BATCH_ROWS = 8_000_000  # (turn node, state) rows a batch of the end distributions plays at most (one state at least)


def matches(connection: sa.Connection, graph: TurnGraph, pairs: Sequence[tuple[str, str]],
            progress: Progress | None = None) -> list[tuple[float, float]]:
    """Return, for each pair of policies ``(first, second)``, the exact probabilities that a player of ``first``,
    moving first, beats one of ``second``, and the other way round (nothing stored). The optimum plays its own
    moves (ranked by its stored values); an agent its stored choices.

    Every pair is played in one run, two seats a pair (each the other's ``after_pass``); each policy's end
    distributions are worked out once for all of them. ``progress`` counts the state layers played (the
    distributions' and the matches').
    """
    seat, optimal_id = stored_seats(connection, graph)
    seats = [placed for k, (first, second) in enumerate(pairs) for placed in (seat(first, 2 * k + 1), seat(second, 2 * k))]
    values = play(connection, graph, seats, optimal_id, progress)
    root = values[0]  # node 0, the root, is the first turn state
    return [(root[2 * k], root[2 * k + 1]) for k in range(len(pairs))]


def stored_seats(connection: sa.Connection, graph: TurnGraph) -> tuple[Callable[[str, int], Seat], int]:
    """Return how a match seats a stored policy by name (``seat(name, after_pass)``: the optimum and a stored best
    response rank moves by their stored values, an agent follows its choices) and the optimum's id (solved first
    where it is not stored)."""
    optimal = graph.optimal
    optimal_id = ensure_policy(connection, graph, optimal)

    def seat(name: str, after_pass: int) -> Seat:
        if name == optimal:
            return Seat(RANK, optimal_id, after_pass)
        row = find_policy(connection, graph.graph_id, name)
        return Seat(RANK if row.responds_to is not None else FOLLOW, row.id, after_pass)

    return seat, optimal_id


UNFINISHED = 1e-15  # a match's length is followed until less than this share of its games is still being played
MOST_TURNS = 100_000  # and for at most this many turns (both players' turns counted)


def match_lengths(connection: sa.Connection, graph: TurnGraph, first: str, second: str,
                  progress: Progress | None = None) -> dict[int, float]:
    """Return turns -> the probability that a match of the stored policy ``first``, moving first, against
    ``second`` ends with a win after that many turns (both players' turns counted).

    From each policy's end distributions (as :func:`matches` plays), the share of games still being played is
    carried from score pair to score pair a turn at a time, one statement a turn, the seat to move beside it
    (a move that hands the turn over hands it to the other seat), until less than :data:`UNFINISHED` of it is
    left or :data:`MOST_TURNS` turns; what is left then is not in the distribution. ``progress`` counts the
    policies' distributions' layers, then the turns."""
    seat, optimal_id = stored_seats(connection, graph)
    seats = [seat(first, 1), seat(second, 0)]
    ends, policy_of = _end_distributions(connection, graph, seats, optimal_id, progress)
    labels = graph.labelled_ends(connection, "rl_label")
    indexed = not backend_of(connection).hashed_joins
    playing, following = (keyed_pair_table(connection, name, "seat", sa.Column("p", sa.Double, nullable=False),
                                           indexed=indexed) for name in ("rl_playing", "rl_next"))
    connection.execute(sa.insert(playing).values(node_id=0, seat=0, p=1.0))  # the root: seat 0 to move
    first_edge, last_edge = graph.state_edges()
    chance = sa.case(*((playing.c.seat == i, ends.c[f"q{policy_of[i]}"]) for i in range(len(seats))))
    moved = sa.case((edge.c.sign == 1, playing.c.seat), else_=1 - playing.c.seat)
    step = (sa.select(edge.c.dst, moved, sa.func.sum(playing.c.p * chance))
            .select_from(playing.join(edge, edge.c.src == playing.c.node_id)
                         .join(labels, labels.c.label == edge.c.label)
                         .join(ends, sa.and_(ends.c.node_id == labels.c.node_id, ends.c.state == edge.c.src)))
            .where(edge.c.id.between(first_edge, last_edge), edge.c.kind == "move")
            .group_by(edge.c.dst, moved))
    terminal = sa.select(node.c.id).where(node.c.graph_id == graph.graph_id, node.c.kind == "terminal")
    lengths: dict[int, float] = {}
    for turns in range(1, MOST_TURNS + 1):
        connection.execute(sa.insert(following).from_select(["node_id", "seat", "p"], step))
        won = following.c.node_id.in_(terminal)
        ended, left = connection.execute(sa.select(
            sa.func.sum(sa.case((won, following.c.p), else_=0.0)),
            sa.func.sum(sa.case((won, 0.0), else_=following.c.p)))).one()
        ended, left = ended or 0.0, left or 0.0
        if ended > 0:
            lengths[turns] = ended
        connection.execute(sa.delete(playing))
        connection.execute(sa.insert(playing).from_select(
            ["node_id", "seat", "p"], sa.select(following.c.node_id, following.c.seat, following.c.p)
            .where(following.c.node_id.not_in(terminal))))
        connection.execute(sa.delete(following))
        if progress is not None:
            progress(1)
        if left < UNFINISHED:
            break
    for table in (playing, following, labels, ends):
        table.drop(connection)
    return lengths


def store_response(connection: sa.Connection, graph: TurnGraph, answered: str, name: str | None = None,
                   progress: Progress | None = None) -> tuple[int, Response]:
    """Solve and store the best response to the stored policy ``answered`` of the race as ``name`` (default
    :func:`dicegraph.store.solve.objectives.response_name`); return its id and its wins against ``answered`` in
    each seat.

    One run of :func:`dicegraph.store.solve.turn_cycles.solve_race` values both seats (one maximises, one follows
    ``answered``, each the other's after a pass); each turn state keeps the best response's value and, as its
    ``opponent_value``, the answered policy's there, which its moves are ranked by when it is played
    (:func:`dicegraph.store.schema.ranked_values`). ``progress`` counts the state layers done. The policy is
    listed once every state is stored."""
    policy_id = record_solve(connection, graph.graph_id, name or response_name(answered), "max",
                             responds_to=find_policy(connection, graph.graph_id, answered).id)
    forget(connection, [policy_id], (turn_policy,))
    seats = [Seat.maximising(after_pass=1), _answered_seat(connection, graph, answered, after_pass=0)]
    values, convergence = solve_race(connection, graph, seats, progress=progress)
    connection.execute(sa.insert(turn_policy), [
        {"policy_id": policy_id, "node_id": state, "value": own, "moment2": own, "decisions": b"",
         "opponent_value": theirs} for state, (own, theirs) in values.items()])
    finish_solve(connection, policy_id, convergence.record())
    root = values[0]  # node 0, the root, is the first turn state
    return policy_id, Response(root[0], 1.0 - root[1])


def best_responses(connection: sa.Connection, graph: TurnGraph, answered: Sequence[str],
                   progress: Progress | None = None) -> list[Response]:
    """Return, for each stored policy ``answered`` (the race's agents, or its optimum), what the best response to
    it wins against it moving first and moving second (nothing stored).

    One run of :func:`dicegraph.store.solve.turn_cycles.solve_race` values every pair of seats at once: a seat that
    maximises, and one that follows the answered agent (maximises too, for the optimum), each the other's after a
    pass. ``progress`` counts the state layers done."""
    seats = []
    for k, name in enumerate(answered):
        seats += [Seat.maximising(after_pass=2 * k + 1), _answered_seat(connection, graph, name, after_pass=2 * k)]
    values, _ = solve_race(connection, graph, seats, progress=progress)
    root = values[0]  # node 0, the root, is the first turn state
    return [Response(root[2 * k], 1.0 - root[2 * k + 1]) for k in range(len(answered))]


def _answered_seat(connection: sa.Connection, graph: TurnGraph, name: str, after_pass: int) -> Seat:
    """Return the seat of the stored policy ``name`` that a best response answers in the race's solve: the optimum
    maximises (self-play's equilibrium), an agent follows its stored choices."""
    if name == graph.optimal:
        return Seat.maximising(after_pass=after_pass)
    return Seat(FOLLOW, find_policy(connection, graph.graph_id, name).id, after_pass)


def play(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], optimal_id: int,
         progress: Progress | None = None) -> dict[int, list[float]]:
    """Return every turn state's value per seat (``FOLLOW`` seats, or ``RANK`` seats ranking by their policy's stored
    values; ``optimal_id``, the stored optimum, as :func:`_end_distributions` takes it): the end distributions of the
    seats' policies, then the state layers, last first."""
    if any(seat.kind not in (FOLLOW, RANK) for seat in seats):
        raise DicegraphError("a match's seats follow a policy or rank moves by a stored solve: none maximises")
    _refuse_turn_rewards(connection, graph)
    backend_of(connection).plan_whole_layers(connection)
    ends, policy_of = _end_distributions(connection, graph, seats, optimal_id, progress)
    chain = _Chain(connection, graph, seats, policy_of, ends)
    values: dict[int, list[float]] = {}
    convergence = Convergence()
    for layer in sorted(graph.layer_ids, reverse=True):
        states = graph.layer_ids[layer]
        first = {state: [0.0] * len(seats) for state in range(states[0], states[1] + 1)}
        found, _ = solve_layer(connection, chain, layer, first, {}, convergence)
        chain.set_values(connection, states, found, {})
        values.update(found)
        if progress is not None:
            progress(1)
    chain.drop(connection)
    ends.drop(connection)
    return values


def _end_distributions(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], optimal_id: int,
                       progress: Progress | None) -> tuple[sa.Table, list[int]]:
    """Return the end distributions of the seats' policies (each policy once, :func:`_end_table`) and, per seat, the
    number of its policy's column ``q<n>``: a run for each policy that ranks moves by its stored values, one for
    the agents together (played by class), which read the optimum's (``optimal_id``) only where a backend's own
    run asks for stored values."""
    policies = list(dict.fromkeys((seat.kind, seat.policy_id) for seat in seats))
    runs = []  # (the policies' numbers, their distributions)
    for n, (kind, policy_id) in enumerate(policies):
        if kind == RANK:
            runs.append(([n], _distributions(connection, graph, [Seat(RANK, policy_id)], policy_id, False,
                                              f"rm_dist_{kind}{n}", progress)))
    agents = [n for n, (kind, _) in enumerate(policies) if kind == FOLLOW]
    if agents:
        runs.append((agents, _distributions(connection, graph, [Seat(*policies[n]) for n in agents], optimal_id,
                                            True, f"rm_dist_{FOLLOW}", progress)))
    return _end_table(connection, len(policies), runs), [policies.index((seat.kind, seat.policy_id)) for seat in seats]


def _end_table(connection: sa.Connection, policies: int, runs: list[tuple[list[int], sa.Table]]) -> sa.Table:
    """Return a new table ``rm_end(node_id, state, q0 ..)``: an end's probability from a state per policy, from the
    distribution tables of ``runs`` (the policies' numbers each gives, in its columns ``r0 ..``), which it drops."""
    names = [f"q{n}" for n in range(policies)]
    table = turn_work_table(connection, "rm_end", *(sa.Column(name, sa.Double, nullable=False) for name in names))
    parts = []
    for numbers, found in runs:
        given = {n: found.c[f"r{i}"] for i, n in enumerate(numbers)}
        parts.append(sa.select(found.c.node_id, found.c.state,
                               *(given.get(n, sa.literal(0.0, sa.Double)).label(name) for n, name in enumerate(names))))
    together = sa.union_all(*parts).subquery("together")
    grouped = (sa.select(together.c.node_id, together.c.state, *(sa.func.sum(together.c[name]) for name in names))
               .group_by(together.c.node_id, together.c.state))
    connection.execute(sa.insert(table).from_select(["node_id", "state", *names], grouped))
    for _, found in runs:
        found.drop(connection)
    return table


def _refuse_turn_rewards(connection: sa.Connection, graph: TurnGraph) -> None:
    """Raise InvalidGraph when an edge of the turn carries a reward or hands the turn over."""
    first, last = graph.turn_edges()
    odd = connection.execute(sa.select(sa.func.count()).select_from(edge).where(
        edge.c.id.between(first, last), sa.or_(edge.c.reward != 0, edge.c.sign != 1))).scalar_one()
    if odd:
        raise InvalidGraph(f"{odd} edges of the turn carry a reward or a sign: a match through end distributions "
                           "needs a turn whose edges carry neither")


def _agent_classes(connection: sa.Connection, graph: TurnGraph, horizons: dict[int, int]) -> dict[int, int]:
    """Return state -> the state whose end distribution an agent's is (the first state alike: the same horizon,
    of ``horizons``, and the same ends through which its moves win at once, the only things an agent's turn knows
    of the state)."""
    first, last = graph.state_edges()
    root_layer = graph.turn_spans[0].layer
    top = sa.select(sa.func.max(node.c.payoff)).where(node.c.graph_id == graph.graph_id, node.c.kind == "terminal",
                                                      node.c.layer < root_layer).scalar_subquery()
    winning = (sa.select(edge.c.src, edge.c.label)
               .select_from(edge.join(node, sa.and_(node.c.graph_id == graph.graph_id, node.c.id == edge.c.dst)))
               .where(edge.c.id.between(first, last), edge.c.kind == "move", edge.c.sign == 1,
                      node.c.kind == "terminal", node.c.payoff >= top))
    wins: dict[int, set[str]] = {}
    for src, label in connection.execute(winning):
        wins.setdefault(src, set()).add(label)
    alike: dict[tuple, int] = {}
    classes = {}
    for states in graph.layer_ids.values():
        for state in range(states[0], states[1] + 1):
            signature = (horizons.get(state), frozenset(wins.get(state, ())))
            classes[state] = alike.setdefault(signature, state)
    return classes


def _distributions(connection: sa.Connection, graph: TurnGraph, seats: list[Seat], rank_policy: int,
                   by_class: bool, name: str, progress: Progress | None) -> sa.Table:
    """Return a new table ``name(node_id, state, r0 ..)``: each state's end distribution for each of ``seats`` (a
    policy each, a seat that ranks moves ranking by the values of the stored solve ``rank_policy``),
    played from every state, or with ``by_class`` from one state of each of the agents' classes
    (:func:`_agent_classes`) and copied to the others (:func:`play_ends`)."""
    numbers = range(len(seats))
    found = turn_work_table(connection, name, *(sa.Column(f"r{i}", sa.Double, nullable=False) for i in numbers))
    horizons = state_horizons(connection, graph) if by_class and graph.structure.horizon is not None else None
    classes = _agent_classes(connection, graph, horizons or {}) if by_class else None
    wanted = sorted(set(classes.values())) if classes is not None else [
        state for states in graph.layer_ids.values() for state in range(states[0], states[1] + 1)]
    play_ends(connection, graph, seats, rank_policy, wanted, found, horizons, progress)
    if classes is not None:
        alike = temporary_table(connection, "rm_class", sa.Column("rep", sa.Integer, nullable=False))
        copies = [{"node_id": state, "rep": rep} for state, rep in classes.items() if state != rep]
        if copies:  # (an executemany of no rows would insert one row of defaults)
            connection.execute(sa.insert(alike), copies)
        copied = (sa.select(found.c.node_id, alike.c.node_id, *(found.c[f"r{i}"] for i in numbers))
                  .select_from(found.join(alike, alike.c.rep == found.c.state)))
        connection.execute(sa.insert(found).from_select(["node_id", "state", *(f"r{i}" for i in numbers)], copied))
        alike.drop(connection)
    return found


@dispatchable("end distributions")
def play_ends(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], rank_policy: int,
              wanted: list[int], found: sa.Table, horizons: dict[int, int] | None,
              progress: Progress | None) -> None:
    """Add to ``found`` (``node_id, state, r0 ..``) the end distribution of each of the states ``wanted`` for each of
    ``seats`` (a seat that ranks moves ranking by the values of the stored solve ``rank_policy``): a row an end with
    a value and a state, played a batch of states at a time (:func:`_played_in_batches`). ``horizons``: the
    states' horizons where the caller has them. Returns nothing."""
    work = RaceTables(connection, graph, seats, copy_turn=True, prune=True, record_moves=True, horizons=horizons,
                      merged=not any(seat.kind == FOLLOW for seat in seats))
    _played_in_batches(connection, graph, work, rank_policy, wanted, found, progress)


def _played_in_batches(connection: sa.Connection, graph: TurnGraph, work: RaceTables, rank_policy: int,
                       wanted: list[int], found: sa.Table, progress: Progress | None) -> None:
    """Add to ``found`` the end distributions of the states ``wanted`` for ``work``'s seats, played a batch of
    states at a time (:func:`state_batches`): the moves chosen backward, then the reach spread forward, a statement or
    two a turn layer each; drop ``work``. A seat that ranks moves ranks by the values of the stored solve
    ``rank_policy``, read here when one does."""
    set_ranks(connection, graph, work, rank_policy)
    played = temporary_table(connection, "rm_played")
    spread = _Spread(connection, work)
    first, last = graph.state_edges()
    for batch in state_batches(connection, work, wanted):
        connection.execute(sa.insert(played), [{"node_id": state} for state in batch])
        work.start(connection, sa.and_(edge.c.id.between(first, last), edge.c.src.in_(sa.select(played.c.node_id))),
                   sa.false())
        work.play_turn(connection)
        spread.run(connection, found)
        connection.execute(sa.delete(work.turn))
        connection.execute(sa.delete(played))
        if progress is not None:
            progress(1)
    played.drop(connection)
    spread.drop(connection)
    work.drop(connection)


def set_ranks(connection: sa.Connection, graph: TurnGraph, work: RaceTables, rank_policy: int) -> None:
    """Put every turn state in ``work``'s state table, ranked by the values of the stored solve ``rank_policy`` where
    a seat ranks moves (its values 0: a turn played for its moves alone needs none). Returns nothing."""
    rank = dict(connection.execute(ranked_values(rank_policy)).all()) if any(
        seat.kind == RANK for seat in work.seats) else {}
    for states in graph.layer_ids.values():
        work.set_values(connection, states, {state: [0.0] * len(work.seats) for state in range(states[0], states[1] + 1)},
                        rank)


def state_batches(connection: sa.Connection, work: RaceTables, states: list[int]) -> list[list[int]]:
    """Return ``states`` in batches of at most :data:`BATCH_ROWS` (turn node, state) rows (one state at least): a
    state's rows are the turn's nodes short of its horizon where the solve leaves out the rest, else all."""
    e = work.edges
    counted = sa.select(sa.func.count(sa.distinct(e.c.src)))
    if not work.pruned:
        every = connection.execute(counted).scalar_one()
        rows = dict.fromkeys(states, every)
    else:
        by_progress = dict(connection.execute(sa.select(e.c.progress, sa.func.count(sa.distinct(e.c.src)))
                                              .group_by(e.c.progress)).all())
        rows = {state: sum(n for progress, n in by_progress.items() if progress is None or progress < work.horizons[state])
                for state in states}
    batches: list[list[int]] = [[]]
    held = 0
    for state in states:
        if batches[-1] and held + rows[state] > BATCH_ROWS:
            batches.append([])
            held = 0
        batches[-1].append(state)
        held += rows[state]
    return batches


class _Spread:
    """The forward pass: the probability of reaching each turn node from the root, per state and seat, along the
    moves the turn table records; rows ``(node_id, state, r0 ..)`` of a reach table, insert-only (a node's
    rows, one from each edge into it, are summed when its layer is spread)."""

    def __init__(self, connection: sa.Connection, work: RaceTables):
        self.work, self.graph = work, work.graph
        self.names = [f"r{i}" for i in range(len(work.seats))]
        self.reach = create_afresh(connection, sa.Table(
            "rm_reach", sa.MetaData(), sa.Column("node_id", sa.Integer, nullable=False, index=not backend_of(connection).hashed_joins),
            sa.Column("state", sa.Integer, nullable=False), *(sa.Column(name, sa.Double, nullable=False) for name in self.names),
            prefixes=["TEMPORARY"]))  # several rows a (node, state): one from each edge into it
        e = work.edges
        self.totals = temporary_table(connection, "rm_total", sa.Column("weight", sa.Double, nullable=False))
        connection.execute(sa.insert(self.totals).from_select(
            ["node_id", "weight"], sa.select(e.c.src, sa.func.sum(e.c.weight)).where(e.c.kind == "roll").group_by(e.c.src)))

    def _here(self, span: sa.Row) -> sa.Subquery:
        """Return the summed reach rows of the nodes the edges of turn layer ``span`` leave."""
        r = self.reach
        low, high = self.graph.turn_sources[span.layer]
        return (sa.select(r.c.node_id, r.c.state, *(sa.func.sum(r.c[name]).label(name) for name in self.names))
                .where(r.c.node_id.between(low, high)).group_by(r.c.node_id, r.c.state).subquery("here"))

    def run(self, connection: sa.Connection, into: sa.Table) -> None:
        """Spread the states of the turn table from the root, layer by layer, and add to ``into`` each (end,
        state)'s probability per seat; empty the reach table."""
        r, e, turn = self.reach, self.work.edges, self.work.turn
        connection.execute(sa.insert(r).from_select(
            ["node_id", "state", *self.names],
            sa.select(turn.c.node_id, turn.c.state, *(sa.literal(1.0, sa.Double) for _ in self.names))
            .where(turn.c.node_id == self.graph.root)))
        for span in self.graph.turn_spans:
            in_span = e.c.id.between(span.first_edge, span.last_edge)
            if span.rolls:
                here = self._here(span)
                rolled = (sa.select(e.c.dst, here.c.state,
                                    *(here.c[name] * e.c.weight / self.totals.c.weight for name in self.names))
                          .select_from(here.join(e, e.c.src == here.c.node_id)
                                       .join(self.totals, self.totals.c.node_id == e.c.src))
                          .where(in_span, e.c.kind == "roll"))
                connection.execute(sa.insert(r).from_select(["node_id", "state", *self.names], rolled))
            if span.moves:
                here = self._here(span)
                moved = (sa.select(e.c.dst, here.c.state,
                                   *(sa.case((turn.c[f"m{i}"] == e.c.id, here.c[name]), else_=0.0)
                                     for i, name in enumerate(self.names)))
                         .select_from(here.join(turn, sa.and_(turn.c.node_id == here.c.node_id,
                                                               turn.c.state == here.c.state))
                                      .join(e, e.c.src == here.c.node_id))
                         .where(in_span, e.c.kind == "move",
                                sa.or_(*(turn.c[f"m{i}"] == e.c.id for i in range(len(self.names))))))
                connection.execute(sa.insert(r).from_select(["node_id", "state", *self.names], moved))
        ended = (sa.select(r.c.node_id, r.c.state, *(sa.func.sum(r.c[name]) for name in self.names))
                 .where(r.c.node_id.in_(list(self.graph.ends.values()))).group_by(r.c.node_id, r.c.state))
        connection.execute(sa.insert(into).from_select(["node_id", "state", *self.names], ended))
        connection.execute(sa.delete(r))

    def drop(self, connection: sa.Connection) -> None:
        """Drop the tables."""
        self.reach.drop(connection)
        self.totals.drop(connection)


class _Chain:
    """The state layers of a match, played from the end distributions: the work object
    :func:`dicegraph.store.solve.turn_cycles.solve_layer` drives (``play`` and ``set_values``)."""

    maximising = False

    def __init__(self, connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], policy_of: list[int],
                 ends: sa.Table):
        self.graph, self.seats, self.policy_of, self.ends_table = graph, list(seats), policy_of, ends
        numbers = range(len(seats))
        self.state = temporary_table(connection, "rm_state", *(sa.Column(f"v{i}", sa.Double) for i in numbers))
        root_layer = graph.turn_spans[0].layer
        over = sa.select(node.c.id, *(node.c.payoff.label(f"v{i}") for i in numbers)).where(
            node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < root_layer)
        connection.execute(sa.insert(self.state).from_select(["node_id", *(f"v{i}" for i in numbers)], over))
        self.labels = graph.labelled_ends(connection, "rm_label")

    def play(self, connection: sa.Connection, layers: Sequence[tuple[sa.Row, tuple[int, int]]]) -> Played:
        """Return state -> per seat (value, derivative in its loop state's value) for the states of ``layers``, at
        the values in the state table: over the ends, the end's probability times the move through it."""
        (span, states), = layers
        st, q, labels = self.state, self.ends_table, self.labels
        looping = sa.case((edge.c.dst.between(*states), sa.cast(edge.c.sign, sa.Double)), else_=0.0)
        columns = []
        for i, seat in enumerate(self.seats):
            chance = sa.func.coalesce(q.c[f"q{self.policy_of[i]}"], 0.0)
            then = sa.case((edge.c.sign == 1, st.c[f"v{i}"]), else_=st.c[f"v{seat.after_pass}"])
            columns += [sa.func.sum(chance * (edge.c.reward + edge.c.sign * then)), sa.func.sum(chance * looping)]
        rows = (sa.select(edge.c.src, *columns)
                .select_from(edge.join(labels, labels.c.label == edge.c.label)
                             .join(q, sa.and_(q.c.node_id == labels.c.node_id, q.c.state == edge.c.src))
                             .join(st, st.c.node_id == edge.c.dst))
                .where(edge.c.id.between(span.first_edge, span.last_edge), edge.c.kind == "move")
                .group_by(edge.c.src))
        return {row[0]: [(row[1 + 2 * i], row[2 + 2 * i]) for i in range(len(self.seats))]
                for row in connection.execute(rows)}

    def set_values(self, connection: sa.Connection, states: tuple[int, int], values: dict[int, list[float]],
                   rank: dict[int, float]) -> None:
        """Replace the state table's rows of the layer's states (node ids ``states``) by ``values`` (per seat)."""
        connection.execute(sa.delete(self.state).where(self.state.c.node_id.between(*states)))
        connection.execute(sa.insert(self.state), [
            {"node_id": state, **{f"v{i}": float(x) for i, x in enumerate(xs)}} for state, xs in values.items()])

    def drop(self, connection: sa.Connection) -> None:
        """Drop the tables."""
        for table in (self.state, self.labels):
            table.drop(connection)
