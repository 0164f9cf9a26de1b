"""A pass over a window of cyclic components in one statement: a recursive query from the deepest layers up.

:func:`dicegraph.store.solve.cycles._pass` values a window's layers with a statement a depth below the anchors and
kind of node (Pig to 100's optimum sends about 1,400 of them, some 20 ms each on DuckDB, docs/performance.md).
Where a recursive query may group each step's rows
(:attr:`dicegraph.store.backends.record.Backend.grouped_recursion`) and every seat maximises, a pass is one
statement, :class:`CycleWalk`'s, over the edges the solve copied in the order of their depth
(:meth:`dicegraph.store.solve.cycles._Tables.order_by_depth`):

* Step ``s`` values what the ``s``-th of those statements valued: the chance nodes at the deepest depth ``D`` are
  step 1, its decision nodes step 2, the chance nodes at ``D - 1`` step 3, and so on to the anchors' decisions. A
  chance node's terms (its value as an affine function of the window's anchors, as in ``cycles``) are its rolls'
  weighted sums; a decision node's are those of the move it takes, the best one at the guess (the first, by edge id,
  within the tie tolerance), exactly as the statements a layer find them.
* A step's rows are its own nodes' and those a later step still reads. The rows the pass starts from, the terms
  of the nodes its edges lead to that the window does not value (the anchors' guesses, nodes solved before), are
  carried until the last step with an edge to them; a row the walk makes, until the move step at its node's
  ``until`` depth (the shallowest edge to it), or to the end where it has none.
* Every row a step makes is the pass's answer: it goes to the ``new`` table, the anchors' own with the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import sqlalchemy as sa

from dicegraph.graphs.protocol import TIE

TOP, LAYERS = sa.bindparam("top", type_=sa.Integer), sa.bindparam("layers", expanding=True)
COLUMNS = ("node_id", "seat", "anchor", "coeff", "edge_id", "until")  # the rows a walk writes to ``new``


class CycleWalk:
    """One recursive statement that values a window's layers at a guess of its anchors (every seat maximising)."""

    def __init__(self, term: sa.Table, new: sa.Table, by_depth: sa.Table, seats: sa.Table,
                 points: Callable[[sa.ColumnElement[float]], sa.ColumnElement[float]], value: int):
        """The pass reads the terms in ``term`` and the edges in ``by_depth`` and writes to ``new`` (the tables of
        ``cycles._Tables``), its seats mapped by ``seats``; ``points`` reads a reward as the solve does (negated
        where it minimises) and ``value`` is the pseudo-anchor of a node's value at the guess (``cycles.VALUE``)."""
        self.term, self.edges, self.seats, self.points, self.value = term, by_depth, seats, points, value
        self.statement = sa.insert(new).from_select(list(COLUMNS), self._walk())

    def _last_step(self, until: sa.ColumnElement[int]) -> sa.ColumnElement[int]:
        """Return the step after which a row made at a node of ``until`` depth (NULL: read to the end) is read no
        more: the decision step at that depth."""
        return sa.case((until.is_(None), 2 * TOP + 2), else_=2 * (TOP - until) + 2)

    def _walk(self) -> sa.Select:
        """Return the recursive query: every row its steps make."""
        e, seats, points = self.edges, self.seats, self.points
        inside = e.c.src_layer.in_(LAYERS)
        reader_step = 2 * (TOP - e.c.depth) + sa.case((e.c.kind == "roll", 1), else_=2)
        reads = (sa.select(e.c.dst.label("node_id"), sa.func.max(reader_step).label("read"))
                 .where(inside).group_by(e.c.dst).subquery("reads"))
        term = self.term
        start = (sa.select(sa.literal(0).label("step"), TOP.label("depth"), term.c.node_id, term.c.seat,
                           term.c.anchor, term.c.coeff, term.c.edge_id, term.c.until, reads.c.read,
                           sa.literal(0).label("fresh"))
                 .select_from(term.join(reads, reads.c.node_id == term.c.node_id))
                 .cte("walk", recursive=True))
        walk = start

        def joined(kind: str) -> sa.Join:
            return (walk.join(e, sa.and_(e.c.dst == walk.c.node_id, e.c.depth == walk.c.depth, e.c.kind == kind,
                                         inside))
                    .join(seats, sa.and_(seats.c.sign == e.c.sign, seats.c.to_seat == walk.c.seat)))

        share = sa.case((walk.c.anchor < 0, points(e.c.reward)), else_=0.0) + e.c.sign * walk.c.coeff
        rolled = (sa.select(walk.c.step + 1, walk.c.depth, e.c.src, seats.c.node_id, walk.c.anchor,
                            sa.func.sum(e.c.share * share), sa.null(), e.c.until, self._last_step(e.c.until),
                            sa.literal(1))
                  .select_from(joined("roll")).where(walk.c.step % 2 == 0)
                  .group_by(walk.c.step, walk.c.depth, e.c.src, seats.c.node_id, walk.c.anchor, e.c.until))
        q = points(e.c.reward) + e.c.sign * walk.c.coeff
        moves = (sa.select(walk.c.step, walk.c.depth, e.c.src, seats.c.node_id.label("seat"), e.c.id, q.label("q"),
                           sa.func.max(q).over(partition_by=(e.c.src, seats.c.node_id)).label("best"))
                 .select_from(joined("move")).where(walk.c.step % 2 == 1, walk.c.anchor == self.value)
                 .subquery("moves"))
        near = moves.c.q >= moves.c.best - TIE * (1 + sa.func.abs(moves.c.best))
        chosen = (sa.select(moves.c.step, moves.c.depth, moves.c.src, moves.c.seat, sa.func.min(moves.c.id).label("id"))
                  .where(near).group_by(moves.c.step, moves.c.depth, moves.c.src, moves.c.seat).subquery("chosen"))
        taken, to, after = e.alias("taken"), seats.alias("to"), walk.alias("after")
        share = sa.case((after.c.anchor < 0, points(taken.c.reward)), else_=0.0) + taken.c.sign * after.c.coeff
        decided = (sa.select(chosen.c.step + 1, chosen.c.depth - 1, chosen.c.src, chosen.c.seat, after.c.anchor, share,
                             chosen.c.id, taken.c.until, self._last_step(taken.c.until), sa.literal(1))
                   .select_from(chosen.join(taken, sa.and_(taken.c.id == chosen.c.id, taken.c.depth == chosen.c.depth,
                                                         taken.c.src_layer.in_(LAYERS)))
                                .join(to, sa.and_(to.c.node_id == chosen.c.seat, to.c.sign == taken.c.sign))
                                .join(after, sa.and_(after.c.node_id == taken.c.dst, after.c.seat == to.c.to_seat))))
        carried = (sa.select(walk.c.step + 1, walk.c.depth - walk.c.step % 2, walk.c.node_id, walk.c.seat,
                             walk.c.anchor, walk.c.coeff, walk.c.edge_id, walk.c.until, walk.c.read, sa.literal(0))
                   .where(walk.c.read > walk.c.step + 1))
        walked = start.union_all(sa.union_all(rolled, decided, carried))
        return sa.select(*(walked.c[name] for name in COLUMNS)).where(walked.c.fresh == 1)

    def run(self, connection: sa.Connection, depths: Mapping[int, Sequence[int]]) -> None:
        """Value a window's layers at the anchors' guesses in ``term`` (``depths``: each depth below the anchors ->
        the window's layers at that depth): every node's terms go to ``new``."""
        connection.execute(self.statement, {"top": max(depths), "layers": [layer for layers in depths.values()
                                                                            for layer in layers]})
