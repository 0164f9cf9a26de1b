"""Where one of a race's policies departs from another's moves, position by position.

A race keeps no values a position (its turn is stored once, and its states loop), so a comparison plays the turn
from every turn state, a batch of states at a time, twice at once as a match does
(:class:`dicegraph.store.solve.turn_cycles.RaceTables`, recording each seat's moves): as the policy plays it, for
its move at each (decision node, state), and as the reference plays it, for what each move there is worth to the
reference (its stored values, the best response's those of the game against the policy it answers). A move is
worse where it is worth less than the reference's best beyond the solver's tie tolerance, and a position tied
where more than one move is best, as :func:`dicegraph.store.departures.compare_policies` counts them on a graph that
keeps its positions. A race has no reach probabilities (its states loop): the departures are ranked by their
loss.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import TIE, Progress
from dicegraph.store.backends import backend_of
from dicegraph.store.schema import edge, node
from dicegraph.store.scratch import temporary_table
from dicegraph.store.seats import RANK
from dicegraph.store.solve.race_matches import set_ranks, state_batches, stored_seats
from dicegraph.store.solve.turn_cycles import RaceTables
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.turn_positions import position_key


def departures(connection: sa.Connection, graph: TurnGraph, policy: str, reference: str, top: int = 10,
               progress: Progress | None = None) -> dict[str, Any] | None:
    """Return ``{"decisions", "worse", "tied", "deviations"}`` of the stored policy ``policy`` against
    ``reference`` over every position of the race (a turn state and a decision node of its turn with two moves or
    more): how many there are, at how many the policy's move is worse than the reference's best, at how many two
    moves are best, and the ``top`` worst (``key``, ``label``, ``move``, ``best_move``, ``loss``; ``reach`` and
    ``cost`` None), by loss. None where the reference is an agent (it follows its choices: it values no move).
    ``progress`` counts the batches of states played. Nothing is stored."""
    seat, _ = stored_seats(connection, graph)
    mine, theirs = seat(policy, 0), seat(reference, 0)
    if theirs.kind != RANK:
        return None
    ranked = RaceTables(connection, graph, [theirs], copy_turn=True, prune=True, record_moves=True, prefix="rdp_ref")
    works = [ranked, RaceTables(connection, graph, [mine], copy_turn=True, prune=True, record_moves=True,
                                horizons=ranked.horizons, prefix="rdp_own")]  # (the horizons worked out once)
    for work, placed in zip(works, (theirs, mine)):
        set_ranks(connection, graph, work, placed.policy_id)
    played = temporary_table(connection, "rdp_played")
    first, last = graph.state_edges()
    compared = _compared(*works)
    is_worse = compared.c.loss > compared.c.slack
    every = sa.over(sa.func.count()), sa.over(sa.func.sum(sa.case((is_worse, 1), else_=0))), sa.over(
        sa.func.sum(sa.case((compared.c.best_moves >= 2, 1), else_=0)))
    batch_worst = (  # a batch's counts beside its worst departures, in one pass
        sa.select(compared, *(count.label(name) for count, name in zip(every, ("n", "n_worse", "n_tied"))))
        .order_by(sa.case((is_worse, 0), else_=1), sa.desc(compared.c.loss), compared.c.node_id, compared.c.state)
        .limit(top or 1))
    decisions = worse = tied = 0
    found: list[sa.Row] = []
    wanted = [state for states in graph.layer_ids.values() for state in range(states[0], states[1] + 1)]
    # a backend that deletes no rows plays every state in one batch (its work tables are never emptied)
    batches = state_batches(connection, works[0], wanted) if backend_of(connection).updates else [wanted]
    for batch in batches:
        connection.execute(sa.insert(played), [{"node_id": state} for state in batch])
        for work in works:
            work.start(connection, sa.and_(edge.c.id.between(first, last), edge.c.src.in_(sa.select(played.c.node_id))),
                       sa.false())
            work.play_turn(connection)
        rows = connection.execute(batch_worst).all()
        if rows:
            decisions, worse, tied = decisions + rows[0].n, worse + int(rows[0].n_worse), tied + int(rows[0].n_tied)
        found += [row for row in rows[:top] if row.loss > row.slack]
        if len(batches) > 1:
            for work in works:
                connection.execute(sa.delete(work.turn))
            connection.execute(sa.delete(played))
        if progress is not None:
            progress(1)
    for work in works:
        work.drop(connection)
    played.drop(connection)
    worst = sorted(found, key=lambda row: (-row.loss, row.node_id, row.state))[:top]
    return {"decisions": decisions, "worse": worse, "tied": tied, "deviations": _described(connection, graph, worst)}


def _compared(reference: RaceTables, own: RaceTables) -> sa.Subquery:
    """Return the positions played in both runs where the turn offers two moves or more: ``node_id``, ``state``,
    the reference's ``best`` worth and its ``best_move``, the policy's ``move`` and its ``loss`` under the
    reference's values, the ``slack`` within which a move ties, and how many moves are ``best_moves``."""
    e, after = reference.edges, reference.turn.alias("after")
    worth = (sa.select(e.c.src, after.c.state, e.c.id, (e.c.reward + after.c.p0).label("q"))
             .select_from(e.join(after, after.c.node_id == e.c.dst)).where(e.c.kind == "move").subquery("worth"))
    best = (sa.select(worth.c.src, worth.c.state, sa.func.max(worth.c.q).label("best"))
            .group_by(worth.c.src, worth.c.state).having(sa.func.count() >= 2).subquery("top"))
    here, mine = reference.turn.alias("here"), own.turn.alias("mine")
    slack = TIE * (1 + sa.func.abs(best.c.best))
    taken = sa.func.max(sa.case((worth.c.id == mine.c.m0, worth.c.q)))
    return (sa.select(best.c.src.label("node_id"), best.c.state, best.c.best, here.c.m0.label("best_move"),
                      mine.c.m0.label("move"), (best.c.best - taken).label("loss"), slack.label("slack"),
                      sa.func.sum(sa.case((worth.c.q >= best.c.best - slack, 1), else_=0)).label("best_moves"))
            .select_from(best.join(here, sa.and_(here.c.node_id == best.c.src, here.c.state == best.c.state))
                         .join(mine, sa.and_(mine.c.node_id == best.c.src, mine.c.state == best.c.state))
                         .join(worth, sa.and_(worth.c.src == best.c.src, worth.c.state == best.c.state)))
            .where(mine.c.m0.is_not(None))
            .group_by(best.c.src, best.c.state, best.c.best, here.c.m0, mine.c.m0)
            .subquery("compared"))


def _described(connection: sa.Connection, graph: TurnGraph, rows: list[sa.Row]) -> list[dict[str, Any]]:
    """Return the departures ``rows`` as a comparison lists them: each position's key and label (the state's and
    its turn node's, :func:`dicegraph.store.turn_positions.position_key`) and both moves' labels."""
    if not rows:
        return []
    ids = {id_ for row in rows for id_ in (row.node_id, row.state)}
    nodes = {row.id: row for row in connection.execute(sa.select(node.c.id, node.c.key, node.c.label).where(
        node.c.graph_id == graph.graph_id, node.c.id.in_(ids)))}
    first, last = graph.turn_edges()
    moves = {row.id: row.label for row in connection.execute(sa.select(edge.c.id, edge.c.label).where(
        edge.c.id.between(first, last), edge.c.id.in_({id_ for row in rows for id_ in (row.move, row.best_move)})))}
    return [{"key": position_key(nodes[row.state].key, nodes[row.node_id].key),
             "label": f"{nodes[row.state].label}; {nodes[row.node_id].label}", "move": moves[row.move],
             "best_move": moves[row.best_move], "loss": row.loss, "reach": None, "cost": None} for row in rows]
