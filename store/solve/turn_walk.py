"""A turn valued in one statement: a recursive query that walks the turn's layers from the deepest up.

:class:`dicegraph.store.solve.turn_cycles.RaceTables` plays the turn from every state of a layer with a statement a
turn layer and kind of node (the race to 5000's turn has 200: a statement costs DuckDB about 4 ms whatever its
rows, docs/performance.md). Where a recursive query may group each step's rows
(:attr:`dicegraph.store.backends.record.Backend.grouped_recursion`) and one seat maximises, a pass sends one
statement instead, :class:`TurnWalk`'s:

* Step ``s`` of the recursion values the nodes of the ``s``-th of those statements (the deepest turn layer's
  chance nodes are step 1), from the rows of the step before: a chance node's value is the mean of its rolls'
  (weighted), a decision's the best of its moves', and its derivative in the value of the state the turn loops back
  to follows the same rolls and that best move, exactly as the statements a layer compute them.
* A step's rows are only those of its own nodes, the turn's ends (the rows ``start`` puts in the turn table) and
  the rows a later step still reads: every node's *last reader*, the step of the shallowest edge into it, is noted
  once, and a row is carried from step to step until then. The turn's root is read by no edge: its rows, from
  the last step, are each state's value and derivative.

The steps' edges are the turn's edges copied (pruned and merged as the pass's), each with its step and its
source's last reader, once a solve.
"""

from __future__ import annotations

import sqlalchemy as sa

from dicegraph.store.schema import edge
from dicegraph.store.scratch import create_afresh
from dicegraph.store.turn_graph import TurnGraph


class TurnWalk:
    """One recursive statement that values the turn from the ends in a turn table, for a lone maximising seat."""

    def __init__(self, connection: sa.Connection, graph: TurnGraph, edges: sa.Table, turn: sa.Table, prefix: str,
                 pruned: bool):
        """Copy the turn's edges ``edges`` (those the pass joins, with ``progress`` where ``pruned``) with their
        steps; ``turn`` is the pass's turn table (``node_id, state, [horizon,] p0, v0, d0``), which holds the ends."""
        self.pruned = pruned
        steps = [(span.first_edge, span.last_edge, kind)
                 for span in reversed(graph.turn_spans)
                 for kind, count in (("roll", span.rolls), ("move", span.moves)) if count]
        listed = sa.values(sa.column("step", sa.Integer), sa.column("first", edge.c.id.type),
                           sa.column("last", edge.c.id.type), sa.column("kind", edge.c.kind.type),
                           name="steps").data([(number, *step) for number, step in enumerate(steps, start=1)])
        progress = [edges.c.progress] if self.pruned else []
        stepped = (sa.select(listed.c.step, edges.c.src, edges.c.dst, edges.c.kind, edges.c.weight, edges.c.reward,
                             *progress)
                   .select_from(edges.join(listed, sa.and_(edges.c.id.between(listed.c.first, listed.c.last),
                                                           edges.c.kind == listed.c.kind)))
                   .subquery("stepped"))
        metadata = sa.MetaData()
        self.read = create_afresh(connection, sa.Table(
            f"{prefix}_read", metadata, sa.Column("node_id", edge.c.dst.type, nullable=False),
            sa.Column("last_step", sa.Integer, nullable=False), prefixes=["TEMPORARY"]))
        self.edges = create_afresh(connection, sa.Table(
            f"{prefix}_step_edge", metadata, sa.Column("step", sa.Integer, nullable=False),
            *(sa.Column(column.name, column.type) for column in stepped.c if column.name != "step"),
            sa.Column("src_read", sa.Integer), prefixes=["TEMPORARY"]))
        connection.execute(sa.insert(self.read).from_select(
            ["node_id", "last_step"], sa.select(stepped.c.dst, sa.func.max(stepped.c.step)).group_by(stepped.c.dst)))
        connection.execute(sa.insert(self.edges).from_select(
            [column.name for column in self.edges.c],
            sa.select(*stepped.c, self.read.c.last_step)
            .select_from(stepped.outerjoin(self.read, self.read.c.node_id == stepped.c.src))
            .order_by(stepped.c.step)))
        self.statement = self._statement(turn, graph.root)

    def _statement(self, turn: sa.Table, root: int) -> sa.Select:
        """Return the recursive query: per state, the root's value and derivative."""
        horizon = (lambda table: [table.c.horizon]) if self.pruned else (lambda table: [])
        ends = (sa.select(sa.literal(0).label("step"), turn.c.node_id, turn.c.state, *horizon(turn), turn.c.v0,
                          turn.c.d0, self.read.c.last_step.label("read"))
                .select_from(turn.join(self.read, self.read.c.node_id == turn.c.node_id))
                .cte("walk", recursive=True))
        walk, e = ends, self.edges
        played = [e.c.progress < walk.c.horizon] if self.pruned else []
        joined = walk.join(e, sa.and_(e.c.dst == walk.c.node_id, e.c.step == walk.c.step + 1, *played))
        worth, weight = e.c.reward + walk.c.v0, sa.func.sum(e.c.weight)
        rolls = sa.func.min(e.c.kind) == "roll"  # a step is one kind of node
        value = sa.case((rolls, sa.func.sum(e.c.weight * worth) / weight), else_=sa.func.max(worth))
        slope = sa.case((rolls, sa.func.sum(e.c.weight * walk.c.d0) / weight),
                        else_=sa.func.arg_max(walk.c.d0, worth))
        valued = (sa.select(walk.c.step + 1, e.c.src, walk.c.state, *horizon(walk), value, slope, e.c.src_read)
                  .select_from(joined)
                  .group_by(walk.c.step, e.c.src, walk.c.state, *horizon(walk), e.c.src_read))
        carried = (sa.select(walk.c.step + 1, walk.c.node_id, walk.c.state, *horizon(walk), walk.c.v0, walk.c.d0,
                             walk.c.read)
                   .where(walk.c.read > walk.c.step + 1))
        walked = ends.union_all(sa.union_all(valued, carried))
        return sa.select(walked.c.state, walked.c.v0, walked.c.d0).where(walked.c.node_id == root)

    def play(self, connection: sa.Connection) -> dict[int, list[tuple[float, float]]]:
        """Return state -> [(its value, its derivative)] from the ends in the turn table. The solve runs it on the
        backend's way of running many small steps (:meth:`dicegraph.store.backends.record.Backend.small_steps`)."""
        return {state: [(value, slope)] for state, value, slope in connection.execute(self.statement)}

    def drop(self, connection: sa.Connection) -> None:
        """Drop the walk's tables."""
        for table in (self.edges, self.read):
            table.drop(connection)
