"""A race's end distributions folded inside rows: the first step of :mod:`dicegraph.store.solve.race_matches` on Spark in one
statement for a run of policies, where the layered version takes four statements a turn layer.

A row is a (state, seat): the turn, one row of arrays (:mod:`dicegraph.store.backends.spark.turn_fold`), is folded from the state's
ends, deepest layer first, each node carrying what the seat ranks it by (``p``) and the probability of ending at
each of the turn's ends from it (``q``, an array over the ends). An end is worth, to rank by, its move's reward
plus, with its sign, the stored optimum's value of where it leads (a seat that ranks moves by the stored solve),
or 1 when its move wins at once and 0 otherwise (an agent, which takes a win at once whenever it has one and
otherwise its stored move); its ``q`` is 1 for itself. A chance node's ``p`` and ``q`` are the weighted means over
its children with a value; a decision node's are those of the move the seat takes: the lowest edge id within
:data:`dicegraph.graphs.protocol.TIE` of the best (ranking), or the first that wins at once, else the agent's stored one.
The root's ``q`` is the state's end distribution for the seat, which the statement writes as rows
``(end, state, r0 ..)``, a column a seat, as :func:`dicegraph.store.solve.race_matches._distributions` does.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.schema import choice, edge, node, ranked_values, turn_policy
from dicegraph.store.scratch import temporary_table
from dicegraph.store.seats import RANK, Seat
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.backends.spark import turn_fold
from dicegraph.store.backends.spark.graph_fold import collected_map
from dicegraph.store.backends.spark.lambdas import SparkText, best_move, let, over_edges, with_layer_moves

PLAYED = "STRUCT<p: ARRAY<DOUBLE>, q: ARRAY<ARRAY<DOUBLE>>>"  # a turn's nodes: rank, end distribution


def _step() -> str:
    """Return the text of one step of the fold: ``vals`` (:data:`PLAYED`) with ``layer``'s nodes appended, for the
    row's seat (``keyed.ranks``: it ranks by the stored solve; else an agent, its moves ``keyed.given``)."""
    child = "vals.p[n.d[k]]"
    best, first = best_move(f"n.r[k] + {child}", "b[j]")
    wins = over_edges("-1", f"IF(a >= 0 OR NOT coalesce(n.r[k] + {child} >= 1D, false), a, k)")
    own = "array_position(transform(n.o, x -> try_element_at(keyed.given, x) IS NOT NULL), true) - 1"
    taken = f"IF(b[j] IS NULL, NULL, IF(keyed.ranks, {first}, IF(b[j] >= 1D, {wins}, {own})))"
    spread = over_edges("CAST(array_repeat(0D, ne) AS ARRAY<DOUBLE>)",
                        f"IF({child} IS NULL, a, transform(a, (u, e) -> u + n.w[k] * vals.q[n.d[k]][e]))")
    chance_p = over_edges("0D", f"a + IF({child} IS NULL, 0D, n.w[k] * (n.r[k] + {child}))")
    chosen = "IF(coalesce(m[j], -1) < 0, NULL, {0})"
    p = (f"transform(layer, (n, j) -> IF(n.chance, {chance_p} / t[j], "
         f"{chosen.format('n.r[m[j]] + vals.p[n.d[m[j]]]')}))")
    q = (f"transform(layer, (n, j) -> IF(n.chance, IF(t[j] IS NULL, NULL, transform({spread}, u -> u / t[j])), "
         f"{chosen.format('vals.q[n.d[m[j]]]')}))")
    return with_layer_moves(child, best, taken, f"named_struct('p', concat(vals.p, {p}), 'q', concat(vals.q, {q}))")


def can_play_ends(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], rank_policy: int,
                  *arguments: object) -> bool:
    """Return whether :func:`play_ends` can run: the stored solve ``rank_policy`` has its states' values (as a
    match has them: its optimum is solved first), which the fold reads for every end's state, an agent's too."""
    return connection.execute(sa.select(turn_policy.c.node_id).where(turn_policy.c.policy_id == rank_policy)
                              .limit(1)).first() is not None


def play_ends(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], rank_policy: int,
              wanted: Sequence[int], found: sa.Table, horizons: object, progress: Progress | None) -> None:
    """Do what :func:`dicegraph.store.solve.race_matches.play_ends` does: insert into ``found`` (``node_id, state, r0
    ..``) each of the states ``wanted``' end distribution for each of ``seats`` (``RANK``, ranking by the stored solve
    ``rank_policy``, or an agent following its stored moves), a row an end with a value and a state, in one statement
    for all (after the turn and the states are written; no ``horizons`` needed). ``progress`` is called once, at the
    end. Returns nothing."""
    ends = graph.labelled_ends(connection, "efo_end")
    asked = temporary_table(connection, "efo_state")
    connection.execute(sa.insert(asked), [{"node_id": state} for state in wanted])
    edges = graph.turn_edges()
    first_edge = edges[0]
    turn = turn_fold.fold_turn(connection, graph.graph_id, graph.turn_spans[0].layer, edges, graph.root, ends,
                               len(graph.ends))
    root_layer = graph.turn_spans[0].layer
    over = sa.and_(node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < root_layer)
    top = sa.select(sa.func.max(node.c.payoff)).where(over).scalar_subquery()
    ranked = ranked_values(rank_policy).subquery("ranked")
    worth = sa.union_all(
        sa.select(ranked.c.node_id, ranked.c.rank, sa.literal(0.0).label("sure")),
        sa.select(node.c.id, node.c.payoff, sa.case((node.c.payoff >= top, 1.0), else_=0.0)).where(over)
    ).subquery("worth")
    end_at = sa.select(ends.c.node_id, ends.c.label,
                       (sa.func.row_number().over(order_by=ends.c.node_id) - 1).label("at")).subquery("end_at")
    by_state = (sa.select(edge.c.src.label("state"), collected_map(end_at.c.at, sa.func.named_struct(
                    "rank", sa.cast(edge.c.reward + edge.c.sign * worth.c.rank, sa.Double),
                    "sure", sa.cast(sa.case((edge.c.sign == 1, worth.c.sure), else_=0.0), sa.Double))).label("worth"))
                .select_from(edge.join(asked, asked.c.node_id == edge.c.src)
                             .join(end_at, end_at.c.label == edge.c.label)
                             .join(worth, worth.c.node_id == edge.c.dst))
                .where(edge.c.id.between(*graph.state_edges()), edge.c.kind == "move")
                .group_by(edge.c.src).subquery("by_state"))
    keyed = sa.union_all(*(
        sa.select(sa.literal(number).label("seat"), sa.literal(True).label("ranks"),
                  SparkText("CAST(NULL AS MAP<BIGINT, INT>)").label("given"))
        if seat.kind == RANK else
        sa.select(sa.literal(number).label("seat"), sa.literal(False).label("ranks"),
                  collected_map(sa.cast(choice.c.edge_id - first_edge, sa.BigInteger), sa.literal(1)).label("given"))
        .where(choice.c.policy_id == seat.policy_id)
        for number, seat in enumerate(seats))).subquery("keyed")
    count = turn.end_count
    start = (f"CAST(named_struct('p', transform(sequence(0, {count - 1}), e -> IF(keyed.ranks, "
             f"try_element_at(by_state.worth, e).rank, try_element_at(by_state.worth, e).sure)), "
             f"'q', transform(sequence(0, {count - 1}), e -> IF(try_element_at(by_state.worth, e) IS NULL, NULL, "
             f"transform(sequence(0, {count - 1}), x -> IF(x = e, 1D, 0D))))) AS {PLAYED})")
    folded = let(str(count), "ne", f"aggregate(turn.layers, {start}, (vals, layer) -> {_step()}).q[{turn.root_at}]")
    arrays = turn.table.alias("turn")
    played = (sa.select(by_state.c.state, keyed.c.seat, SparkText(folded).label("q"))
              .select_from(by_state.join(keyed, sa.true()).join(arrays, sa.true())).subquery("played"))
    exploded = sa.select(played.c.state, played.c.seat, sa.func.explode(SparkText(
        "transform(played.q, (x, i) -> named_struct('at', i, 'q', x))")).label("z")).subquery("exploded")
    rows = sa.select(SparkText("exploded.z.at").label("at"), exploded.c.state, exploded.c.seat,
                     SparkText("exploded.z.q").label("q")).select_from(exploded).subquery("rows")
    columns = [sa.func.sum(sa.case((rows.c.seat == number, rows.c.q), else_=0.0)) for number in range(len(seats))]
    grouped = (sa.select(end_at.c.node_id, rows.c.state, *columns)
               .select_from(rows.join(end_at, end_at.c.at == rows.c.at)).where(rows.c.q.is_not(None))
               .group_by(end_at.c.node_id, rows.c.state))
    connection.execute(sa.insert(found).from_select(["node_id", "state", *(f"r{i}" for i in range(len(seats)))],
                                                   grouped))
    for table in (turn.table, ends, asked):
        table.drop(connection)
    if progress is not None:
        progress(1)
