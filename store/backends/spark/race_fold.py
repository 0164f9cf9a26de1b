"""A race's turn states solved inside rows: the Newton's method of :mod:`dicegraph.store.solve.turn_cycles` on Spark in one
statement a state layer, whatever the turn's depth and the passes, where the layer-by-layer solve takes two
statements a turn layer a pass.

In a race a state's turn loops back into its own layer only through one other state, which loops back to it (a
bust hands the turn over with the scores as they were: ``a-b`` to ``b-a``), so the layer falls apart into pairs
(or a state alone, ``a-a``), each solvable by itself. A pair goes into one row, each of its states with its
turn's ends (what each is worth, as ``c + g * y``: ``y`` the value of the other state of the pair, ``g`` the sign
where the end leads back to it, 0 elsewhere), and the row repeats passes, as the layered solve does for the whole
layer:

* A pass at a guess ``x`` folds the turn once from each state of the pair (the turn as one row of arrays,
  :mod:`dicegraph.store.backends.spark.turn_fold`), each node carrying its value ``v`` at ``x`` and its derivative ``g`` in the other
  state's value along the moves taken (a decision node's best move, the lowest edge id within
  :data:`dicegraph.graphs.protocol.TIE`): the state is worth ``T(x) = c + g y`` for those moves.
* A pass whose ``T(x)`` reproduces ``x`` (residual ``max |T(x) - x|`` within
  :data:`dicegraph.store.convergence.RESIDUAL_TOLERANCE`, relative) ends the pair, its values ``T(x)``. Otherwise the next
  guess solves the two equations ``x = c + g y`` in the row (a zero determinant: ``T(x)`` instead, a
  value-iteration step). A pair that has not settled in :data:`dicegraph.store.convergence.MAX_PASSES` passes fails the
  statement (``raise_error``).

The first guess of a layer's states is the mean value of the layer solved before (the game's ``first_guess``
hook, which only saves passes, is not used here). Where a layer's loops are not pairs, the layered solve is kept
(:func:`paired_loops`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.convergence import MAX_PASSES, RESIDUAL_TOLERANCE, Convergence
from dicegraph.store.schema import edge, node
from dicegraph.store.scratch import temporary_table
from dicegraph.store.seats import MAXIMISE, Seat
from dicegraph.store.turn_graph import TurnGraph, graph_payoffs
from dicegraph.store.backends.spark.graph_fold import collected_map
from dicegraph.store.backends.spark.lambdas import SparkText, best_move, let, over_edges, with_layer_moves
from dicegraph.store.backends.spark import turn_fold

NOT_SETTLED = f"two turn states of a race did not settle in {MAX_PASSES} passes"
VALUED = "STRUCT<v: ARRAY<DOUBLE>, g: ARRAY<DOUBLE>>"  # a turn's nodes: value at the guess, derivative
NEWTON = "STRUCT<x: ARRAY<DOUBLE>, v: ARRAY<DOUBLE>, done: BOOLEAN, passes: INT, steps: INT, e: DOUBLE>"


def paired_loops(connection: sa.Connection, graph: TurnGraph) -> bool:
    """Return whether every turn state whose moves lead back into its own layer leads back to one state only,
    and that one back to it (a pair, or a state alone): what :func:`solve_race` needs. One statement."""
    target = node.alias("target")
    rows = connection.execute(sa.select(edge.c.src, edge.c.dst).distinct().select_from(
        edge.join(target, sa.and_(target.c.graph_id == edge.c.graph_id, target.c.id == edge.c.dst))).where(
        edge.c.graph_id == graph.graph_id, edge.c.kind == "move", edge.c.src_layer < graph.turn_spans[0].layer,
        target.c.layer == edge.c.src_layer)).all()
    loops: dict[int, set[int]] = {}
    for src, dst in rows:
        loops.setdefault(src, set()).add(dst)
    return all(len(dsts) == 1 and loops.get(next(iter(dsts))) == {src} for src, dsts in loops.items())


def _turn_step() -> str:
    """Return the text of one step of a pass's turn fold: ``vals`` (:data:`VALUED`) with the values and
    derivatives of ``layer``'s nodes appended (chance: the weighted means over the children with a value; decision:
    the best move's)."""
    child = "vals.v[n.d[k]]"
    best, first = best_move(f"n.r[k] + {child}", "b[j]")

    def mean(of: str) -> str:
        return over_edges("0D", f"a + IF({child} IS NULL, 0D, n.w[k] * ({of}))") + " / t[j]"

    chosen = "n.d[m[j]]"
    values = f"transform(layer, (n, j) -> IF(n.chance, {mean(f'n.r[k] + {child}')}, b[j]))"
    slopes = f"transform(layer, (n, j) -> IF(n.chance, {mean('vals.g[n.d[k]]')}, vals.g[{chosen}]))"
    body = f"named_struct('v', concat(vals.v, {values}), 'g', concat(vals.g, {slopes}))"
    return with_layer_moves(child, best, f"IF(b[j] IS NULL, NULL, {first})", body)


def _played(turn: turn_fold.FoldedTurn) -> str:
    """Return the text of the turn played from side ``side`` of the pair at the guess ``s.x``: its root's
    ``(v, g)``, from the side's ends ``pair.ends[side]`` (each ``(c, g)``, or null) at the other side's guess."""
    y = "s.x[pmod(side + 1, ns)]"
    start = (f"CAST(named_struct('v', transform(pair.ends[side], en -> en.c + en.g * {y}), "
             f"'g', transform(pair.ends[side], en -> en.g)) AS {VALUED})")
    folded = f"aggregate(turn.layers, {start}, (vals, layer) -> {_turn_step()})"
    return let(folded, "f", f"named_struct('v', f.v[{turn.root_at}], 'g', f.g[{turn.root_at}])")


def _newton_of_pair(turn: turn_fold.FoldedTurn) -> str:
    """Return the text of the pair solved: ``(x, v, done, passes, steps, e)``, its values ``v`` from the pass that
    reproduced its guess ``x`` within the tolerance, ``e`` that pass's residual; fails after the passes allowed."""
    state = "named_struct('x', {x}, 'v', p.v, 'done', {done}, 'passes', s.passes + 1, 'steps', {steps}, 'e', e)"
    exact = state.format(x="s.x", done="true", steps="s.steps")
    stepped = state.format(x="p.v", done="false", steps="s.steps + 1")
    solved = state.format(x="y", done="false", steps="s.steps")
    constant = "(p.v[{0}] - p.g[{0}] * s.x[pmod({0} + 1, ns)])"
    c0, c1 = constant.format(0), constant.format(1)
    alone = f"array(try_divide({c0}, 1D - p.g[0]))"
    paired = let(f"try_divide({c0} + p.g[0] * {c1}, 1D - p.g[0] * p.g[1])", "y0", f"array(y0, {c1} + p.g[1] * y0)")
    singular = "exists(y, u -> u IS NULL OR isnan(u) OR abs(u) = double('Infinity'))"
    newton = let(f"IF(ns = 1, {alone}, {paired})", "y", f"IF({singular}, {stepped}, {solved})")
    scale = "aggregate(s.x, 0D, (a, u) -> greatest(a, abs(u)))"
    residual = "aggregate(sequence(0, ns - 1), 0D, (a, j) -> greatest(a, abs(p.v[j] - s.x[j])))"
    body = let(residual, "e", f"IF(e <= {RESIDUAL_TOLERANCE!r}D * (1D + {scale}), {exact}, {newton})")
    pass_ = f"transform(sequence(0, ns - 1), side -> {_played(turn)})"
    body = let(let(pass_, "q", "named_struct('v', transform(q, z -> z.v), 'g', transform(q, z -> z.g))"), "p", body)
    start = (f"CAST(named_struct('x', array_repeat(pair.start, ns), 'v', array(), 'done', false, 'passes', 0, "
             f"'steps', 0, 'e', 0D) AS {NEWTON})")
    loop = f"aggregate(sequence(1, {MAX_PASSES}), {start}, (s, round) -> IF(s.done, s, {body}))"
    return let(loop, "r", f"IF(r.done, r, raise_error('{NOT_SETTLED}'))")


def _layer_rows(graph: TurnGraph, layer: int, turn: turn_fold.FoldedTurn, values: sa.Table, start: float) -> sa.Select:
    """Return the SELECT of the layer's states solved: ``(node_id, value, passes, steps, residual)``, a row a
    state; ``values`` holds the value of every state its moves leave the layer for."""
    span, states = graph.game_spans[layer], graph.layer_ids[layer]
    ends = turn.ends
    end_at = sa.select(ends.c.label, (sa.func.row_number().over(order_by=ends.c.node_id) - 1).label("at")
                       ).subquery("end_at")
    inside = edge.c.dst.between(*states)
    worth = sa.case((inside, edge.c.reward), else_=edge.c.reward + edge.c.sign * values.c.value)
    slope = sa.case((inside, sa.cast(edge.c.sign, sa.Double)), else_=0.0)
    moves = (sa.select(edge.c.src.label("state"), sa.func.max(sa.case((inside, edge.c.dst))).label("loop"),
                       collected_map(end_at.c.at, sa.func.named_struct("c", sa.cast(worth, sa.Double), "g", slope)
                                     ).label("worth"))
             .select_from(edge.join(end_at, end_at.c.label == edge.c.label)
                          .outerjoin(values, values.c.node_id == edge.c.dst))
             .where(edge.c.id.between(span.first_edge, span.last_edge), edge.c.kind == "move",
                    sa.or_(inside, values.c.value.is_not(None)))
             .group_by(edge.c.src).cte("state_moves"))
    ends_array = "transform(sequence(0, {0}), k -> try_element_at({1}.worth, k))"
    first, second = moves.alias("first_side"), moves.alias("second_side")
    paired = sa.and_(first.c.loop.is_not(None), first.c.loop != first.c.state)
    sides = sa.case((paired, sa.func.array(first.c.state, second.c.state)), else_=sa.func.array(first.c.state))
    both = sa.func.array(SparkText(ends_array.format(turn.end_count - 1, "first_side")),
                         SparkText(ends_array.format(turn.end_count - 1, "second_side")))
    alone = sa.func.array(SparkText(ends_array.format(turn.end_count - 1, "first_side")))
    pair = (sa.select(sides.label("states"), sa.case((paired, both), else_=alone).label("ends"),
                      sa.cast(sa.literal(start), sa.Double).label("start"))
            .select_from(first.outerjoin(second, sa.and_(paired, second.c.state == first.c.loop)))
            .where(sa.or_(~paired, first.c.state < first.c.loop)).subquery("pair"))
    arrays = turn.table.alias("turn")
    solved = let("size(pair.states)", "ns", let(_newton_of_pair(turn), "r", (
        "transform(pair.states, (x, i) -> named_struct('node_id', x, 'value', r.v[i], 'passes', r.passes, "
        "'steps', r.steps, 'residual', r.e))")))
    exploded = (sa.select(sa.func.explode(SparkText(solved)).label("z"))
                .select_from(pair.join(arrays, sa.true())).subquery("exploded"))
    return sa.select(*(SparkText(f"exploded.z.{name}").label(name)
                       for name in ("node_id", "value", "passes", "steps", "residual"))).select_from(exploded)


def can_solve(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat], *arguments: object,
              **options: object) -> bool:
    """Return whether :func:`solve_race` can run: one seat, maximising, in a race whose states loop at most in
    pairs (:func:`paired_loops`)."""
    return [seat.kind for seat in seats] == [MAXIMISE] and paired_loops(connection, graph)


def solve_race(connection: sa.Connection, graph: TurnGraph, seats: Sequence[Seat],
               keep: Callable[[int, dict[int, list[float]], Convergence], None] | None = None, down_to: int = 0,
               solved: Mapping[int, list[float]] | None = None,
               progress: Progress | None = None) -> tuple[dict[int, list[float]], Convergence]:
    """Do what :func:`dicegraph.store.solve.turn_cycles.solve_race` does for its one maximising seat (the arguments
    are its), from the last state layer down to ``down_to``, a statement a layer (and one reading it back); return
    state -> ``[value]``, and how the layers converged (a layer's passes and residual the most of its pairs'). The
    first layer solved starts from the mean payoff, each next one from the mean of the layer before."""
    payoffs = graph_payoffs(connection, graph)
    start = sum(payoffs) / max(len(payoffs), 1)
    ends = graph.labelled_ends(connection, "rfo_end")
    edges = graph.turn_edges()
    turn = turn_fold.fold_turn(connection, graph.graph_id, graph.turn_spans[0].layer, edges, graph.root, ends, len(graph.ends))
    values = temporary_table(connection, "rfo_state", sa.Column("value", sa.Double), sa.Column("passes", sa.Integer),
                             sa.Column("steps", sa.Integer), sa.Column("residual", sa.Double), indexed=False)
    root_layer = graph.turn_spans[0].layer
    connection.execute(sa.insert(values).from_select(["node_id", "value"], sa.select(node.c.id, node.c.payoff).where(
        node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < root_layer)))
    found: dict[int, list[float]] = dict(solved or {})
    if found:
        connection.execute(sa.insert(values), [{"node_id": state, "value": xs[0]} for state, xs in found.items()])
    convergence = Convergence()
    for layer in sorted((layer for layer in graph.layer_ids if layer >= down_to), reverse=True):
        states = graph.layer_ids[layer]
        if states[0] in found:
            continue
        names = ["node_id", "value", "passes", "steps", "residual"]
        connection.execute(sa.insert(values).from_select(names, _layer_rows(graph, layer, turn, values, start)))
        rows = connection.execute(sa.select(*(values.c[name] for name in names)).where(
            values.c.node_id.between(*states))).all()
        layer_values = {row.node_id: [row.value] for row in rows}
        convergence.add(max(row.passes for row in rows), max(row.residual for row in rows),
                        max(row.steps for row in rows))
        found.update(layer_values)
        start = sum(xs[0] for xs in layer_values.values()) / len(layer_values)
        if keep is not None:
            keep(layer, layer_values, convergence)
        if progress is not None:
            progress(1)
    for table in (turn.table, values, ends):
        table.drop(connection)
    return found, convergence
