"""A graph of rows with cycles solved inside one row: the Newton's method of :mod:`dicegraph.store.solve.cycles` on Spark in
one statement a solve, whatever the number of components and passes, where the layer-by-layer solve takes a
statement or two a layer and pass.

The graph goes into one row as in :mod:`dicegraph.store.backends.spark.graph_fold`, its layers grouped by component, deepest first: a
cyclic component (its layers ``first .. last``, whose edges may go back to layer ``first``, its *anchors*) or an
acyclic layer alone. ``aggregate`` folds the components into the array of values; inside a component it repeats
passes, and a pass folds the component's layers:

* A pass at a guess ``x`` of the anchors' values gives each of the component's nodes an array ``[value at x,
  constant, coefficient of anchor 1, ...]``: its value as an affine function of the anchors along the moves taken,
  a child deeper than the component counting as a constant, an anchor as its variable. A decision node takes the
  best move at ``x`` (the lowest edge id within :data:`dicegraph.graphs.protocol.TIE`), or the stored one when evaluating.
* The anchors' own arrays give ``T(x) = c + M x`` for those moves; the next guess solves ``(I - M) x = c`` by
  Gauss-Jordan elimination inside the row. Where a pivot is zero (the moves never leave the component) the next
  guess is ``T(x)`` instead, a value-iteration step.
* A pass whose moves are those of the pass before it (whose solution is its guess) is exact and optimal: the
  component is done, each node worth its value at ``x``. A component without anchors is done after one pass.

A match between policies is the same fold over the graph once a *seat* (:mod:`dicegraph.store.seats`): node ``n`` of
seat ``t`` sits at position ``n * seats + t``, each seat follows its own policy, and an edge of sign -1 (the turn
handed over) leads to the seat that moves next; the root's value in seat 0 is the probability that the first
policy, moving first, wins.

Each cyclic component's first anchor carries how it converged: the passes that solved or stepped, the
value-iteration steps among them, and the residual ``max |T(x) - x|`` over its anchors at the end. A component
that has not settled in :data:`dicegraph.store.convergence.MAX_PASSES` passes fails the statement with Spark's
``raise_error``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.catalog import loop_free_components
from dicegraph.store.convergence import MAX_PASSES, Convergence
from dicegraph.store.schema import choice, layer, node, value
from dicegraph.store.scratch import keyed_pair_table
from dicegraph.store.seats import FOLLOW, Response, Seat
from dicegraph.store.backends.spark.graph_fold import (back_layers, collected_map, folds, in_order, layers_with_edges,
                                                       placed_nodes, policy_keys, store_folded, store_rows)
from dicegraph.store.backends.spark.lambdas import STORED_MOVE, SparkText, best_move, let, over_edges

RESPOND = "respond"  # the objective of a best response: the largest value, except at the nodes a key's ``given`` has
NOT_SETTLED = f"a cyclic component did not settle in {MAX_PASSES} passes"
STATS = "STRUCT<p: INT, s: INT, e: DOUBLE>"  # how a component converged: passes, value-iteration steps, residual
SOLVED = f"STRUCT<v: ARRAY<DOUBLE>, c: ARRAY<BIGINT>, h: ARRAY<{STATS}>, start: DOUBLE>"
NODE = "STRUCT<g: ARRAY<DOUBLE>, m: BIGINT>"
PASS = "STRUCT<g: ARRAY<ARRAY<DOUBLE>>, m: ARRAY<BIGINT>>"
NEWTON = ("STRUCT<x: ARRAY<DOUBLE>, g: ARRAY<ARRAY<DOUBLE>>, m: ARRAY<BIGINT>, prev: ARRAY<BIGINT>, done: BOOLEAN, "
          "passes: INT, steps: INT>")


def _components_row(graph_id: int, after_pass: Sequence[int], loop_free: set[int]) -> sa.Select:
    """Return the SELECT of one row, ``comps``: the graph's components, deepest first, each ``(anchors, layers)``:
    the number of its anchors (0 for an acyclic layer, and for one of ``loop_free``, declared but never looping:
    :func:`dicegraph.store.catalog.loop_free_components`) and its layers, deepest first, of nodes as
    :func:`dicegraph.store.backends.spark.graph_fold.back_layers` has them (a node's position ``d`` counts the nodes of every layer),
    each node once a seat (:func:`_seated`)."""
    layers = back_layers(graph_id, placed_nodes(graph_id, node.c.payoff))
    start = sa.func.coalesce(layer.c.cycle_start, layers.c.layer)
    anchoring = sa.and_(layers.c.layer == layer.c.cycle_start, layer.c.cycle_start.not_in(sorted(loop_free) or [-1]))
    anchors = sa.func.max(sa.case((anchoring, sa.func.size(layers.c.nodes)), else_=0))
    grouped = (sa.select(start.label("component"), anchors.label("anchors"),
                         in_order(layers.c.nodes, -layers.c.layer).label("layers"))
               .select_from(layers.outerjoin(layer, sa.and_(layer.c.graph_id == graph_id,
                                                            layer.c.layer == layers.c.layer)))
               .group_by(start).subquery("component"))
    item = sa.func.named_struct("anchors", grouped.c.anchors, "layers", grouped.c.layers)
    unseated = sa.select(in_order(item, -grouped.c.component).label("comps"))
    if len(after_pass) == 1:
        return unseated
    return sa.select(SparkText(_seated("unseated.comps", after_pass)).label("comps")).select_from(
        unseated.subquery("unseated"))


def _seated(comps: str, after_pass: Sequence[int]) -> str:
    """Return the text of the components ``comps`` with each node once a seat: node ``n`` of seat ``t`` becomes
    ``n * seats + t`` (its id and its position), and its edge of sign -1 leads to seat ``after_pass[t]``.

    >>> _seated("c0", [1, 0])[:60]
    "transform(c0, c -> named_struct('anchors', c.anchors * 2, 'l"
    """
    seats = len(after_pass)
    to = f"IF(n.s[k] < 0D, array({', '.join(str(seat) for seat in after_pass)})[t], t)"
    seated = (f"named_struct('id', n.id * {seats} + t, 'kind', n.kind, 'p', n.p, 'ix', n.ix, 'o', n.o, "
              f"'d', transform(n.d, (x, k) -> x * {seats} + {to}), 'w', n.w, 'r', n.r, 's', n.s)")
    layers = f"transform(c.layers, l -> flatten(transform(l, n -> transform(sequence(0, {seats - 1}), t -> {seated}))))"
    return f"transform({comps}, c -> named_struct('anchors', c.anchors * {seats}, 'layers', {layers}))"


def _child(at: str) -> str:
    """Return the text of the array ``[value at x, constant, coefficients...]`` of the child at position ``at``:
    a solved node's value (null if it has none), an anchor's variable, or a node of the component valued in this
    pass (``st.g``)."""
    solved = f"IF(vals.v[{at}] IS NULL, NULL, concat(array(vals.v[{at}], vals.v[{at}]), zeros))"
    anchor = f"concat(array(x[{at} - first], 0D), transform(zeros, (z, i) -> IF(i = {at} - first, 1D, 0D)))"
    return f"IF({at} < base, {solved}, IF({at} >= first, {anchor}, st.g[{at} - base]))"


def _node(objective: str | None) -> str:
    """Return the text of node ``n``'s ``(g, m)`` in a pass: its array (:func:`_child`) and the move taken, the best
    for ``objective`` at the guess ``x`` or (None) the one the row's ``given`` map has; :data:`RESPOND`, the
    given one where the map has the node, else the largest."""
    none = "CAST(NULL AS BIGINT)"
    total = over_edges("0D", "a + IF(cv[k] IS NULL, 0D, n.w[k])")
    share = "u + n.w[k] * (IF(i < 2, n.r[k], 0D) + n.s[k] * cv[k][i])"
    summed = over_edges("CAST(array_repeat(0D, na + 2) AS ARRAY<DOUBLE>)",
                        f"IF(cv[k] IS NULL, a, transform(a, (u, i) -> {share}))")
    chance = let(total, "t", f"IF(t = 0D, NULL, transform({summed}, u -> u / t))")
    taken = ("IF(coalesce(mi, -1) < 0, CAST(NULL AS {0}), named_struct('g', transform(cv[mi], (u, i) -> "
             "IF(i < 2, n.r[mi], 0D) + n.s[mi] * u), 'm', n.o[mi]))").format(NODE)
    if objective is None:
        decision = let(f"{STORED_MOVE} - 1", "mi", taken)
    else:
        best, first = best_move("n.r[k] + n.s[k] * cv[k][0]", "q", "max" if objective == RESPOND else objective)
        decision = let(best, "q", let(first, "mi", taken))
        if objective == RESPOND:  # a node the row's ``given`` map has follows its move
            decision = let(STORED_MOVE, "sm", f"IF(coalesce(sm, 0) > 0, {let('sm - 1', 'mi', taken)}, {decision})")
    body = (f"CASE n.kind WHEN 'terminal' THEN named_struct('g', concat(array(n.p, n.p), zeros), 'm', {none}) "
            f"WHEN 'chance' THEN named_struct('g', {chance}, 'm', {none}) ELSE {decision} END")
    return let(f"transform(n.ix, k -> {_child('n.d[k]')})", "cv", body)


def _pass(objective: str | None) -> str:
    """Return the text of a pass over the component ``comp`` at the guess ``x``: ``(g, m)``, each node's array and
    move taken, in the order of ``comp``'s layers."""
    step = let(f"transform(layer, n -> {_node(objective)})", "pl",
               "named_struct('g', concat(st.g, transform(pl, z -> z.g)), 'm', concat(st.m, transform(pl, z -> z.m)))")
    return f"aggregate(comp.layers, CAST(named_struct('g', array(), 'm', array()) AS {PASS}), (st, layer) -> {step})"


def _solution(g: str) -> str:
    """Return the text of ``x`` solving ``(I - M) x = c`` from the anchors' arrays (the last ``na`` of ``g``), by
    Gauss-Jordan elimination; null or not finite where a pivot is zero."""
    row = "concat(transform(sequence(0, na - 1), j -> IF(i = j, 1D, 0D) - {0}[nc - na + i][2 + j]), array({0}[nc - na + i][1]))"
    system = f"CAST(transform(sequence(0, na - 1), i -> {row.format(g)}) AS ARRAY<ARRAY<DOUBLE>>)"
    eliminate = ("transform(A, (row, i) -> IF(i = q, transform(row, u -> try_divide(u, A[q][q])), "
                 "transform(row, (u, j) -> u - try_divide(row[q], A[q][q]) * A[q][j])))")
    return f"transform(aggregate(sequence(0, na - 1), {system}, (A, q) -> {eliminate}), r -> r[na])"


def _newton_of_component(objective: str | None) -> str:
    """Return the text of the component ``comp`` solved: passes until one takes the moves of the pass before it
    (whose solution is its guess), or the first pass where it has no anchors; fails after the passes allowed."""
    state = "named_struct('x', {x}, 'g', p.g, 'm', p.m, 'prev', {prev}, 'done', {done}, 'passes', {passes}, 'steps', {steps})"
    done = state.format(x="s.x", prev="s.prev", done="true", passes="s.passes", steps="s.steps")
    step = state.format(x="transform(sequence(0, na - 1), a -> p.g[nc - na + a][0])", prev="CAST(NULL AS ARRAY<BIGINT>)",
                        done="false", passes="s.passes + 1", steps="s.steps + 1")
    solved = state.format(x="y", prev="p.m", done="false", passes="s.passes + 1", steps="s.steps")
    singular = "exists(y, v -> v IS NULL OR isnan(v) OR abs(v) = double('Infinity'))"
    same = "na = 0 OR (s.prev IS NOT NULL AND transform(p.m, z -> coalesce(z, -1L)) = transform(s.prev, z -> coalesce(z, -1L)))"
    body = let(let("s.x", "x", _pass(objective)), "p",
               f"IF({same}, {done}, {let(_solution('p.g'), 'y', f'IF({singular}, {step}, {solved})')})")
    start = (f"CAST(named_struct('x', array_repeat(vals.start, na), 'g', array(), 'm', array(), 'prev', NULL, "
             f"'done', false, 'passes', 0, 'steps', 0) AS {NEWTON})")
    loop = f"aggregate(sequence(1, {MAX_PASSES + 1}), {start}, (s, round) -> IF(s.done, s, {body}))"
    return let(loop, "r", f"IF(r.done, r, raise_error('{NOT_SETTLED}'))")


def _component_step(objective: str | None) -> str:
    """Return the text of one step of the fold over components: ``vals`` (values ``v``, moves ``c``, how each
    component's first anchor converged ``h``, the next first guess ``start``) with component ``comp``'s appended."""
    residual = "aggregate(sequence(0, na - 1), 0D, (e, a) -> greatest(e, abs(r.g[nc - na + a][0] - r.x[a])))"
    stats = f"IF(na > 0 AND i = nc - na, named_struct('p', r.passes, 's', r.steps, 'e', {residual}), NULL)"
    body = let(_newton_of_component(objective), "r", (
        f"named_struct('v', concat(vals.v, transform(r.g, z -> z[0])), 'c', concat(vals.c, r.m), "
        f"'h', concat(vals.h, transform(r.g, (z, i) -> {stats})), "
        f"'start', IF(na > 0, aggregate(r.x, 0D, (a, u) -> a + u) / na, vals.start))"))
    for bound, name in reversed((("size(vals.v)", "base"), ("size(flatten(comp.layers))", "nc"),
                                 ("comp.anchors", "na"), ("base + nc - na", "first"),
                                 ("CAST(array_repeat(0D, na) AS ARRAY<DOUBLE>)", "zeros"))):
        body = let(bound, name, body)
    return body


def fold_components(connection: sa.Connection, graph_id: int, objective: str | None, keys: sa.Select,
         after_pass: Sequence[int] = (0,)) -> sa.Table:
    """Solve (``objective`` ``'max'``; :data:`RESPOND`, following each key's ``given`` moves where it has them) or
    evaluate (None: each key's ``given`` moves) graph ``graph_id``, whose
    components may loop, in one row a key; return a new work table of ``(node_id, policy_id, value, edge_id,
    passes, steps, residual)``: a row per node with a value, the last three set on each cyclic component's first
    anchor (:func:`convergences`). ``keys`` selects ``(policy_id, given)`` as for
    :func:`dicegraph.store.backends.spark.graph_fold.fold_graph`. One statement, whatever the number of components and passes.

    With more than one seat (``after_pass``, a seat's next after the turn is handed over), a ``node_id`` and a key of
    ``given`` are a node's id times the number of seats plus the seat (:func:`root_values`)."""
    table = keyed_pair_table(connection, "work_cycles", "policy_id", sa.Column("value", sa.Double),
                             sa.Column("edge_id", sa.BigInteger), sa.Column("passes", sa.Integer),
                             sa.Column("steps", sa.Integer), sa.Column("residual", sa.Double), indexed=False)
    graph = _components_row(graph_id, after_pass, loop_free_components(connection, graph_id)).subquery("graph")
    keyed = keys.subquery("keyed")
    empty = f"CAST(named_struct('v', array(), 'c', array(), 'h', array(), 'start', 0D) AS {SOLVED})"
    ids = "flatten(transform(graph.comps, c -> flatten(transform(c.layers, l -> transform(l, n -> n.id)))))"
    folded = (sa.select(keyed.c.policy_id, SparkText(ids).label("ids"), SparkText(
                  f"aggregate(graph.comps, {empty}, (vals, comp) -> {_component_step(objective)})").label("vals"))
              .select_from(keyed.join(graph, sa.true())).subquery("folded"))
    store_rows(connection, table, folded, "policy_id", {
        "value": "folded.vals.v[i]", "edge_id": "folded.vals.c[i]", "passes": "folded.vals.h[i].p",
        "steps": "folded.vals.h[i].s", "residual": "folded.vals.h[i].e"})
    return table


def convergences(connection: sa.Connection, table: sa.Table, policy_ids: Sequence[int]) -> dict[int, Convergence]:
    """Return how the cyclic components of each policy of ``policy_ids`` converged in their fold (``table``, from
    :func:`fold_components`): one statement for them all."""
    found = {policy_id: Convergence() for policy_id in policy_ids}
    rows = sa.select(table.c.policy_id, table.c.passes, table.c.residual, table.c.steps).where(
        table.c.policy_id.in_(list(policy_ids)), table.c.passes.is_not(None))
    for policy_id, passes, residual, steps in connection.execute(rows):
        found[policy_id].add(passes, residual, steps)
    return found


def can_store_cyclic(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int], objective: str | None,
                     *arguments: object) -> bool:
    """Return whether :func:`store_cyclic` can run: the graph is small enough to fold, and its policies are evaluated
    or solved for the largest payoff."""
    return objective in (None, "max") and folds(connection, graph_id)


def store_cyclic(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int], objective: str | None,
                 progress: Progress | None, first_guess: object = None) -> dict[int, str]:
    """Do what :func:`dicegraph.store.solve.layers.store_cyclic` does from the graph folded in one row a policy, in a
    statement whatever its components and passes (no ``first_guess`` needed); return how each policy's cyclic
    components converged. ``progress`` counts every layer with edges of each policy at the end."""
    folded = fold_components(connection, graph_id, objective, policy_keys(policy_ids, objective is not None))
    records = {policy_id: found.record() for policy_id, found in convergences(connection, folded, policy_ids).items()}
    store_folded(connection, folded, objective is not None, sa.null())
    if progress is not None:
        progress(layers_with_edges(connection, graph_id) * len(policy_ids))
    return records


def can_play(connection: sa.Connection, graph_id: int, seatings: Sequence[Sequence[Seat]], *arguments: object) -> bool:
    """Return whether :func:`root_values` can run: every seat follows a stored policy, each seating hands the turn
    over as the first does, on a graph small enough to fold."""
    layout = [seat.after_pass for seat in seatings[0]] if seatings else []
    return (all(seat.kind == FOLLOW for seats in seatings for seat in seats)
            and all([seat.after_pass for seat in seats] == layout for seats in seatings) and folds(connection, graph_id))


def root_values(connection: sa.Connection, graph_id: int, seatings: Sequence[Sequence[Seat]],
                progress: Progress | None = None) -> list[list[float]]:
    """Return what :func:`dicegraph.store.solve.cycles.root_values` does (for each seating, the root's value for each
    seat following its stored policy; for a match of two, the probability that the first seat, moving first, wins;
    nothing stored) in one fold statement for every seating, a row each. ``progress`` counts every layer with edges
    of each seat at the end."""
    count = len(seatings[0])
    seated = sa.union_all(*(
        sa.select(sa.literal(key).label("key"), (sa.cast(choice.c.node_id, sa.BigInteger) * count + number).label("k"),
                  sa.cast(choice.c.edge_id, sa.BigInteger).label("v")).where(choice.c.policy_id == seat.policy_id)
        for key, seats in enumerate(seatings) for number, seat in enumerate(seats))).subquery("seated")
    keys = (sa.select(seated.c.key.label("policy_id"), collected_map(seated.c.k, seated.c.v).label("given"))
            .group_by(seated.c.key))
    table = fold_components(connection, graph_id, None, keys, [seat.after_pass for seat in seatings[0]])
    found = {(key, node_id): worth for key, node_id, worth in connection.execute(
        sa.select(table.c.policy_id, table.c.node_id, table.c.value).where(table.c.node_id < count))}
    table.drop(connection)
    if progress is not None:
        progress(layers_with_edges(connection, graph_id) * count * len(seatings))
    return [[found[key, seat] for seat in range(count)] for key in range(len(seatings))]


def can_store_response(connection: sa.Connection, graph_id: int, *arguments: object) -> bool:
    """Return whether :func:`store_response` can run: the graph is small enough to fold."""
    return folds(connection, graph_id)


def store_response(connection: sa.Connection, graph_id: int, policy_id: int, answered_id: int,
                   progress: Progress | None = None, first_guess: object = None) -> tuple[Response, Convergence]:
    """Do what :func:`dicegraph.store.solve.graph_matches.store_response` does (store, as policy ``policy_id``, the
    best response to the stored policy ``answered_id``; return its wins against it in each seat and how its cyclic
    components converged) in one fold statement over the graph once a seat: seat 0 takes the largest value, seat 1
    follows ``answered_id``'s moves (no ``first_guess`` needed). ``progress`` counts every layer with edges of both
    seats at the end."""
    given = collected_map(sa.cast(choice.c.node_id, sa.BigInteger) * 2 + 1, sa.cast(choice.c.edge_id, sa.BigInteger))
    keys = sa.select(sa.literal(policy_id).label("policy_id"), given.label("given")).where(
        choice.c.policy_id == answered_id)
    table = fold_components(connection, graph_id, RESPOND, keys, [1, 0])
    convergence = convergences(connection, table, [policy_id])[policy_id]
    mine = table.c.node_id % 2 == 0  # seat 0's nodes, ``2 * node``
    node_id = sa.cast(sa.func.floor(table.c.node_id / 2), sa.Integer)
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value", "reach"], sa.select(
        table.c.policy_id, node_id, table.c.value, sa.null()).where(mine)))
    connection.execute(sa.insert(choice).from_select(["policy_id", "node_id", "edge_id"], sa.select(
        table.c.policy_id, node_id, table.c.edge_id).where(mine, table.c.edge_id.is_not(None))))
    roots = dict(connection.execute(sa.select(table.c.node_id, table.c.value).where(table.c.node_id < 2)).all())
    table.drop(connection)
    if progress is not None:
        progress(layers_with_edges(connection, graph_id) * 2)
    return Response(roots[0], 1.0 - roots[1]), convergence
