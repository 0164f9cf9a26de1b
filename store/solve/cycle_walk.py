"""A pass over a window of cyclic components in one statement: a recursive query from the deepest layers up.

:func:`dicegraph.store.solve.cycles._pass` values a window's layers with a statement a depth below the anchors and
kind of node (Pig to 100's optimum sends about 1,400 of them, some 20 ms each on DuckDB, docs/performance.md).
Where a recursive query may group each step's rows
(:attr:`dicegraph.store.backends.record.Backend.grouped_recursion`), a pass is one statement, :class:`CycleWalk`'s,
over the edges the solve copied in the order of their depth
(:meth:`dicegraph.store.solve.cycles._Tables.order_by_depth`):

* Each step values the window's nodes at one depth below their anchors, the deepest first: its chance nodes'
  terms (each node's value as an affine function of the window's anchors, as in ``cycles``) are their rolls' weighted
  sums, made once a step (a materialized part of the step), and its decision nodes' those of the move each seat takes
  (a maximising seat's best at the guess, the first by edge id within the tie tolerance; a following seat's its
  policy's), read from the chance nodes just made or from the rows of the step before, exactly as the statements a
  layer find them.
* A step's rows are its own nodes' and those a later step still reads. The rows the pass starts from, the terms
  of the nodes its edges lead to that the window does not value (the anchors' guesses, nodes solved before), are
  carried down to the shallowest depth with an edge to them; a row the walk makes, down to its node's ``until``
  depth (the shallowest edge to it), or to the end where it has none.
* Every row a step makes is the pass's answer: it goes to the ``new`` table, the anchors' own with the rest.

A step a depth, not a kind of node, halves the rows carried (a decision's rows wait for the chance nodes a few depths
up that roll into it); each step costs DuckDB a few milliseconds whatever its rows (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import sqlalchemy as sa

from dicegraph.graphs.protocol import TIE

TOP, LAYERS = sa.bindparam("top", type_=sa.Integer), sa.bindparam("layers", expanding=True)
COLUMNS = ("node_id", "seat", "anchor", "coeff", "edge_id", "until")  # the rows a walk writes to ``new``


def edge_term(points: Callable[[sa.ColumnElement[float]], sa.ColumnElement[float]], edge: sa.FromClause,
              dst: sa.FromClause) -> sa.ColumnElement[float]:
    """Return an edge's share of a term of its destination (a row of ``dst``): the edge's reward, read by
    ``points``, goes to the value and the constant (the negative pseudo-anchors), its sign to every term."""
    return sa.case((dst.c.anchor < 0, points(edge.c.reward)), else_=0.0) + edge.c.sign * dst.c.coeff


class CycleWalk:
    """One recursive statement that values a window's layers at a guess of its anchors, for seats that maximise or
    follow a stored policy."""

    def __init__(self, term: sa.Table, new: sa.Table, by_depth: sa.Table, seats: sa.Table,
                 points: Callable[[sa.ColumnElement[float]], sa.ColumnElement[float]], value: int,
                 maximising: bool, followed: sa.Table | None):
        """The pass reads the terms in ``term`` and the edges in ``by_depth`` and writes to ``new`` (the tables of
        ``cycles._Tables``), its seats mapped by ``seats``; ``points`` reads a reward as the solve does (negated
        where it minimises) and ``value`` is the pseudo-anchor of a node's value at the guess (``cycles.VALUE``).
        ``maximising``: some seat takes the best moves; ``followed``: the moves of the seats that follow a policy
        (``edge_id, seat``), None where none does."""
        self.term, self.edges, self.seats, self.points, self.value = term, by_depth, seats, points, value
        self.maximising, self.followed = maximising, followed
        self.statement = sa.insert(new).from_select(list(COLUMNS), self._walk())

    def _walk(self) -> sa.Select:
        """Return the recursive query: every row its steps make."""
        e, seats = self.edges, self.seats
        inside = e.c.src_layer.in_(LAYERS)
        reads = (sa.select(e.c.dst.label("node_id"), sa.func.min(e.c.depth).label("read"))
                 .where(inside).group_by(e.c.dst).subquery("reads"))
        term = self.term
        start = (sa.select(TOP.label("depth"), term.c.node_id, term.c.seat, term.c.anchor, term.c.coeff,
                           term.c.edge_id, term.c.until, reads.c.read, sa.literal(0).label("fresh"))
                 .select_from(term.join(reads, reads.c.node_id == term.c.node_id))
                 .cte("walk", recursive=True))
        walk = start
        read = sa.func.coalesce(e.c.until, 0)  # a row made here is read down to its node's until depth, or to the end
        rolled = (sa.select(walk.c.depth, e.c.src.label("node_id"), seats.c.node_id.label("seat"), walk.c.anchor,
                            sa.func.sum(e.c.share * edge_term(self.points, e, walk)).label("coeff"), e.c.until,
                            read.label("read"))
                  .select_from(walk.join(e, self._into(e, "roll", walk))
                               .join(seats, sa.and_(seats.c.sign == e.c.sign, seats.c.to_seat == walk.c.seat)))
                  .group_by(walk.c.depth, e.c.src, seats.c.node_id, walk.c.anchor, e.c.until)
                  .cte("rolled", nesting=True).prefix_with("MATERIALIZED"))
        known = sa.union_all(*(sa.select(table.c.depth, table.c.node_id, table.c.seat, table.c.anchor, table.c.coeff)
                               for table in (walk, rolled))).subquery("known")
        made = sa.select(rolled.c.depth - 1, rolled.c.node_id, rolled.c.seat, rolled.c.anchor, rolled.c.coeff,
                         sa.null(), rolled.c.until, rolled.c.read, sa.literal(1))
        decided = [*([self._best(known)] if self.maximising else []),
                   *([self._followed(known, self.followed)] if self.followed is not None else [])]
        carried = (sa.select(walk.c.depth - 1, walk.c.node_id, walk.c.seat, walk.c.anchor, walk.c.coeff,
                             walk.c.edge_id, walk.c.until, walk.c.read, sa.literal(0))
                   .where(walk.c.read < walk.c.depth))
        walked = start.union_all(sa.union_all(made, *decided, carried).add_cte(rolled, nest_here=True))
        return sa.select(*(walked.c[name] for name in COLUMNS)).where(walked.c.fresh == 1)

    def _into(self, table: sa.Table | sa.Alias, kind: str, to: sa.FromClause) -> sa.ColumnElement[bool]:
        """Return the condition that an edge of ``table`` is a ``kind`` edge of the window's layers into a row of
        ``to`` at the step's depth."""
        return sa.and_(table.c.dst == to.c.node_id, table.c.depth == to.c.depth, table.c.kind == kind,
                       table.c.src_layer.in_(LAYERS))

    def _move_columns(self, edge: sa.Table | sa.Alias) -> list[sa.ColumnElement]:
        """Return the last columns of a row a decision makes: its move, its node's ``until``, how far it is read,
        and that it is the walk's answer."""
        return [edge.c.id, edge.c.until, sa.func.coalesce(edge.c.until, 0), sa.literal(1)]

    def _best(self, known: sa.Subquery) -> sa.Select:
        """Return the decisions of the maximising seats: the terms of each one's best move at the guess (the first,
        by edge id, within the tie tolerance), from the step's ``known`` rows."""
        seats = self.seats
        moving = self.edges.alias("moving")
        q = self.points(moving.c.reward) + moving.c.sign * known.c.coeff
        moves = (sa.select(known.c.depth, moving.c.src, seats.c.node_id.label("seat"), moving.c.id, q.label("q"),
                           sa.func.max(q).over(partition_by=(moving.c.src, seats.c.node_id)).label("best"))
                 .select_from(known.join(moving, self._into(moving, "move", known))
                              .join(seats, sa.and_(seats.c.sign == moving.c.sign, seats.c.to_seat == known.c.seat,
                                                   seats.c.policy_id.is_(None))))
                 .where(known.c.anchor == self.value).subquery("moves"))
        near = moves.c.q >= moves.c.best - TIE * (1 + sa.func.abs(moves.c.best))
        chosen = (sa.select(moves.c.depth, moves.c.src, moves.c.seat, sa.func.min(moves.c.id).label("id"))
                  .where(near).group_by(moves.c.depth, moves.c.src, moves.c.seat).subquery("chosen"))
        taken, to, after = self.edges.alias("taken"), seats.alias("to"), known.alias("after")
        return (sa.select(chosen.c.depth - 1, chosen.c.src, chosen.c.seat, after.c.anchor,
                          edge_term(self.points, taken, after),
                          *self._move_columns(taken))
                .select_from(chosen.join(taken, sa.and_(taken.c.id == chosen.c.id, taken.c.depth == chosen.c.depth,
                                                        taken.c.src_layer.in_(LAYERS)))
                             .join(to, sa.and_(to.c.node_id == chosen.c.seat, to.c.sign == taken.c.sign))
                             .join(after, sa.and_(after.c.node_id == taken.c.dst, after.c.seat == to.c.to_seat))))

    def _followed(self, known: sa.Subquery, followed: sa.Table) -> sa.Select:
        """Return the decisions of the seats that follow a policy: the terms of its move, from the step's ``known``
        rows."""
        seats, taken = self.seats, self.edges.alias("followed_move")
        return (sa.select(known.c.depth - 1, taken.c.src, followed.c.seat, known.c.anchor,
                          edge_term(self.points, taken, known),
                          *self._move_columns(taken))
                .select_from(known.join(taken, self._into(taken, "move", known))
                             .join(followed, followed.c.edge_id == taken.c.id)
                             .join(seats, sa.and_(seats.c.node_id == followed.c.seat, seats.c.sign == taken.c.sign,
                                                  seats.c.to_seat == known.c.seat))))

    def run(self, connection: sa.Connection, depths: Mapping[int, Sequence[int]]) -> None:
        """Value a window's layers at the anchors' guesses in ``term`` (``depths``: each depth below the anchors ->
        the window's layers at that depth): every node's terms go to ``new``."""
        connection.execute(self.statement, {"top": max(depths), "layers": [layer for layers in depths.values()
                                                                            for layer in layers]})
