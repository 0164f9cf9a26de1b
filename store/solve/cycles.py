"""Graphs with cycles solved exactly: each cyclic component by Newton's method on its anchors' values.

A game whose rules loop declares cyclic layers (:class:`dicegraph.graphs.protocol.CyclicLayers`):
edges leaving layers ``first .. last`` may also go back to layer ``first``,
whose nodes are the component's *anchors* (a race's turn starts). Components
are solved from the deepest layer up, like acyclic layers, and each one
exactly:

* Given a guess ``x`` of the anchors' values, the component is acyclic: one
  pass of set-based statements, deepest layer first, gives every node's move
  and its value as an affine function of ``x`` along the moves taken: rows
  ``(node, anchor, coefficient)``, with the constant and the value at ``x``
  as two more pseudo-anchors, carried through the same statements.
* The anchors' own rows give ``T(x) = c + M x``, exact for the moves taken
  at ``x``. The next guess solves ``x = c + M x`` (a small dense system, one
  unknown per anchor): Newton's method on ``T(x) - x``, whose pieces are
  linear. At that solution every node's value follows from its coefficients
  in one statement, and one more checks that no move beats the one taken;
  if none does, the solution is exact and the component is done (the
  *residual* records the largest gap and the linear system's error).
  Otherwise it is the next pass's guess. The first guess of an anchor is the
  (weighted) mean value of the solved positions that the ``first_guess`` handed
  to the solve names (the game's hook on the graph's parameters, passed in by
  whoever asks for the solve: the store never looks a game up), else the mean
  of the anchors' values in the component solved before.

A node's value is per *seat*: in a two-player zero-sum game stored from the
mover's view (edges of ``sign`` -1 hand the turn over), seat ``i`` is "the
mover plays policy ``i``", and a pass leads to the seat of the other player.
Self-play has one seat; a head-to-head match has two, each following its own
policy, and the same passes give the exact probability that the first wins.
A seat either follows a stored policy (its ``choice`` rows) or maximises.

Acyclic layers are components without anchors: one pass each.

Where the engine pays per statement (DuckDB, Spark: :attr:`dicegraph.store.backends.record.Backend.pays_per_statement`), a run of
cyclic components, one after another, whose edges between them lead only to anchors (Pig's: a bank starts
the opponent's turn), is solved by a window of up to :data:`GROUPED` of them at once: every anchor of the
window is a variable, a pass values the layers at the same depth below the anchors of all of them by one
statement a kind of node, and the linear system is solved a component at a time, deepest first (a
component leads only to deeper ones). After each pass the deepest components whose moves are best, with
those below them, are done and leave the window, the next ones come in, and the rest start again from the
solution. Fixed moves (an evaluation, a match) need one pass, so their window is the whole run. An anchor
that the ``first_guess`` hook guesses from another anchor of the window takes that one's guess.

Where a join hashes the whole table it reads and rows can be deleted (DuckDB: the record's ``hashed_joins`` and
``updates``), each statement would read every solved node's rows. Once the layers from some layer on are solved,
the rows of the nodes that only edges leaving those layers lead to (each node's shallowest incoming edge, noted
once) move to a table of their own, and the work table is made again from the rest; the values and moves are
read from both at the end. A window's statements read their edges from a copy of the cyclic layers' edges
ordered by depth below the anchors (made once a solve), and leave out of their joins the rows of the nodes whose
shallowest incoming edge is deeper than the depth they value: no statement of the pass reads those again. Where
moreover a recursive query may group its steps' rows (the record's ``grouped_recursion``), a window's pass is one
recursive statement whose steps are those statements (:mod:`.cycle_walk`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import TIE, Progress
from dicegraph.store.backends import backend_of
from dicegraph.store.catalog import node_ids
from dicegraph.store.convergence import MAX_PASSES, RESIDUAL_TOLERANCE, Convergence
from dicegraph.store.catalog import loop_free_components
from dicegraph.store.schema import EdgeId, choice, edge, layer, node
from dicegraph.store.load import BulkInserter
from dicegraph.store.scratch import create_afresh, keyed_pair_table, temporary_table
from dicegraph.store.seats import FOLLOW, MAXIMISE, Seat
from dicegraph.store.solve.cycle_walk import CycleWalk, edge_term
from dicegraph.store.solve.dispatch import dispatchable

GROUPED = 16  # cyclic components solved together, at most, where the engine pays per statement
Named = "str | tuple[str, ...] | Mapping[str, float] | None"  # what a first_guess hook names
Guess = Callable[[str], Named]  # an anchor's key -> the solved positions whose (weighted) mean value guesses its own


class NotConverged(DicegraphError):
    """A cyclic component did not settle within :data:`MAX_PASSES` passes."""


@dataclass(frozen=True)
class Component:
    """Layers ``first .. last`` (a lone acyclic layer has ``cyclic`` False) and the id range of their edges."""

    first: int
    last: int
    cyclic: bool
    spans: tuple[sa.Row, ...]  # its layers with edges, lowest first


def components(connection: sa.Connection, graph_id: int) -> list[Component]:
    """Return the graph's components with edges, deepest first: cyclic ones, and each other layer alone."""
    rows = connection.execute(
        sa.select(layer.c.layer, layer.c.rolls, layer.c.moves, layer.c.first_edge, layer.c.last_edge, layer.c.cycle_start)
        .where(layer.c.graph_id == graph_id).order_by(layer.c.layer)).all()
    found: dict[int, list[sa.Row]] = {}
    last: dict[int, int] = {}
    cyclic: set[int] = set()
    for row in rows:
        start = row.layer if row.cycle_start is None else row.cycle_start
        found.setdefault(start, [])
        last[start] = row.layer
        if row.cycle_start is not None:
            cyclic.add(start)
        if row.rolls + row.moves:
            found[start].append(row)
    cyclic -= loop_free_components(connection, graph_id)
    parts = [Component(start, last[start], start in cyclic, tuple(spans)) for start, spans in found.items() if spans]
    return sorted(parts, key=lambda part: -part.first)


VALUE, ONE = -1, -2  # the pseudo-anchors of a node's terms: its value at the guess, and its constant
TERM_COLUMNS = ["node_id", "seat", "anchor", "coeff", "edge_id"]  # a term table's columns, in order


class _Tables:
    """The temporary tables of one run.

    ``term(node_id, seat, anchor, coeff)``: a node's value as an affine
    function of its component's anchors: ``anchor`` :data:`ONE` holds the
    constant, ``anchor_node * seats + anchor_seat`` a coefficient, and
    :data:`VALUE` the value at the current guess (the sum, kept so that
    moves can be compared in one join). A solved node keeps VALUE and ONE.
    A decision node's rows carry the move taken (``edge_id``).
    """

    def __init__(self, connection: sa.Connection, seats: Sequence[Seat], direction: int = 1):
        backend = backend_of(connection)
        keyed = not backend.hashed_joins
        self.direction = direction  # -1: the game with every payoff and reward negated (a minimum as a maximum)
        # where a join hashes the whole table it reads, rows no statement to come reads are left out of its joins
        tracked = backend.hashed_joins and backend.updates

        def terms(name: str) -> sa.Table:
            table = sa.Table(name, sa.MetaData(),
                             *(sa.Column(column, sa.Integer, primary_key=keyed, autoincrement=False, nullable=False)
                               for column in ("node_id", "seat", "anchor")),
                             sa.Column("coeff", sa.Double, nullable=False), sa.Column("edge_id", EdgeId),
                             # a window's node: the depth of its shallowest incoming edge (:meth:`order_by_depth`)
                             *((sa.Column("until", sa.Integer),) if tracked else ()),
                             prefixes=["TEMPORARY"],
                             sqlite_with_rowid=not keyed)
            return create_afresh(connection, table)

        self.term = terms("cyc_term")
        self.new = terms("cyc_new")
        self.columns = [column.name for column in self.term.columns]
        # the rows of nodes no edge still to be valued leads to move out of ``term`` to ``done`` (:meth:`trim`)
        self.done = terms("cyc_done") if tracked else None
        self.kept = terms("cyc_kept") if self.done is not None else None
        self.solved = keyed_pair_table(connection, "cyc_solved", "seat", sa.Column("value", sa.Double, nullable=False),
                                       sa.Column("edge_id", EdgeId), indexed=keyed)
        self.guess = temporary_table(connection, "cyc_guess", sa.Column("x", sa.Double, nullable=False))  # node_id: anchor
        self.seat_map = temporary_table(connection, "cyc_seat_map", sa.Column("sign", sa.Integer, nullable=False),
                                        sa.Column("to_seat", sa.Integer, nullable=False),
                                        sa.Column("policy_id", sa.Integer), indexed=False)
        # node_id of the seat map is the seat a row is valued for; to_seat the seat its edge leads to
        connection.execute(sa.insert(self.seat_map), [
            {"node_id": number, "sign": sign, "to_seat": number if sign == 1 else seat.after_pass,
             "policy_id": seat.policy_id}
            for number, seat in enumerate(seats) for sign in (1, -1)])
        self.seats = len(seats)
        if any(seat.kind not in (MAXIMISE, FOLLOW) for seat in seats):
            raise ValueError("a graph of rows is played by seats that maximise or follow a stored policy")
        self.maximising = any(seat.kind == MAXIMISE for seat in seats)
        self.following = any(seat.kind == FOLLOW for seat in seats)
        # the moves of the seats that follow a policy, by edge: a layer's statement finds them from its edges
        self.followed = create_afresh(connection, sa.Table(
            "cyc_followed", sa.MetaData(),
            sa.Column("edge_id", EdgeId, primary_key=keyed, autoincrement=False, nullable=False),
            sa.Column("seat", sa.Integer, primary_key=keyed, autoincrement=False, nullable=False),
            prefixes=["TEMPORARY"]))
        connection.execute(sa.insert(self.followed).from_select(["edge_id", "seat"], sa.select(
            choice.c.edge_id, self.seat_map.c.node_id).select_from(choice.join(self.seat_map, sa.and_(
                self.seat_map.c.policy_id == choice.c.policy_id, self.seat_map.c.sign == 1)))))
        self.all = (self.term, self.new, self.solved, self.guess, self.seat_map, self.followed,
                    *(() if self.done is None else (self.done, self.kept)))
        self.last_use: sa.Table | None = None  # node -> the shallowest layer an edge to it leaves (when trimming)
        self.by_depth: sa.Table | None = None  # the edges of cyclic layers by depth in their component (windows)
        self.trimmed_below: int | None = None  # the layers from which on the rows are trimmed already

    def finished(self) -> sa.FromClause:
        """Return the terms of every node, those moved to ``done`` too."""
        if self.done is None:
            return self.term
        return sa.union_all(*(sa.select(*(table.c[name] for name in TERM_COLUMNS))
                              for table in (self.term, self.done))).subquery("finished")

    def start_trimming(self, connection: sa.Connection, graph_id: int) -> None:
        """Where rows are trimmed, note for each node the shallowest layer an edge to it leaves (in that order, so
        that a range of those layers is read from a few blocks)."""
        if self.done is None:
            return
        self.last_use = temporary_table(connection, "cyc_last_use", sa.Column("layer", sa.Integer, nullable=False),
                                        indexed=False)
        self.all = (*self.all, self.last_use)
        used = (sa.select(edge.c.dst, sa.func.min(edge.c.src_layer).label("layer")).where(edge.c.graph_id == graph_id)
                .group_by(edge.c.dst).order_by(sa.text("layer")))
        connection.execute(sa.insert(self.last_use).from_select(["node_id", "layer"], used))

    def order_by_depth(self, connection: sa.Connection, graph_id: int) -> None:
        """Where rows are trimmed, copy the edges of the cyclic layers, in the order of their depth below their
        component's anchors, for the statements of a window (:func:`_pass`) to read a depth from a few blocks.
        Each edge carries its source's ``until``: the depth of the shallowest edge to it, within its component
        (NULL for an anchor, or a node an edge from elsewhere leads to). A row of a node whose ``until`` is
        deeper than the statement's depth is read by no statement of the pass to come, and its joins leave it
        out. A roll carries its ``share``, its weight over its source's total."""
        if self.last_use is None or self.by_depth is not None:
            return
        self.by_depth = create_afresh(connection, sa.Table(
            "cyc_by_depth", sa.MetaData(), sa.Column("id", EdgeId, nullable=False),
            *(sa.Column(name, sa.Integer, nullable=False) for name in ("src", "dst", "src_layer", "weight", "depth")),
            sa.Column("kind", sa.String(8), nullable=False), sa.Column("reward", sa.Double, nullable=False),
            sa.Column("sign", sa.SmallInteger, nullable=False), sa.Column("until", sa.Integer),
            sa.Column("share", sa.Double), prefixes=["TEMPORARY"]))
        self.all = (*self.all, self.by_depth)
        source, entered = layer.alias("source"), layer.alias("entered")
        depth = edge.c.src_layer - source.c.cycle_start
        inner = sa.and_(entered.c.cycle_start == source.c.cycle_start, edge.c.src_layer != source.c.cycle_start)
        until = sa.case((inner, self.last_use.c.layer - source.c.cycle_start), else_=sa.null())
        share = sa.cast(edge.c.weight, sa.Double) / node.c.denom
        joined = (edge.join(source, sa.and_(source.c.graph_id == edge.c.graph_id, source.c.layer == edge.c.src_layer))
                  .join(node, sa.and_(node.c.graph_id == edge.c.graph_id, node.c.id == edge.c.src))
                  .outerjoin(self.last_use, self.last_use.c.node_id == edge.c.src)
                  .outerjoin(entered, sa.and_(entered.c.graph_id == edge.c.graph_id,
                                              entered.c.layer == self.last_use.c.layer)))
        rows = (sa.select(edge.c.id, edge.c.src, edge.c.dst, edge.c.src_layer, edge.c.weight, depth, edge.c.kind,
                          edge.c.reward, edge.c.sign, until, sa.case((edge.c.kind == "roll", share)))
                .select_from(joined)
                .where(edge.c.graph_id == graph_id, source.c.cycle_start.is_not(None))
                .order_by(depth))
        connection.execute(sa.insert(self.by_depth).from_select(
            ["id", "src", "dst", "src_layer", "weight", "depth", "kind", "reward", "sign", "until", "share"], rows))

    def trim(self, connection: sa.Connection, frontier: int) -> None:
        """Every layer from ``frontier`` on being solved, move out of ``term`` the rows of the nodes that only
        edges leaving those layers lead to: no statement to come reads them but :meth:`finished`'s. ``term`` is
        made again from the rows it keeps (a table's deleted rows would still be scanned)."""
        if self.last_use is None or (self.trimmed_below is not None and frontier >= self.trimmed_below):
            return
        used = self.last_use.c.layer >= frontier
        if self.trimmed_below is not None:
            used = sa.and_(used, self.last_use.c.layer < self.trimmed_below)
        unused = self.term.c.node_id.in_(sa.select(self.last_use.c.node_id).where(used))
        connection.execute(sa.insert(self.done).from_select(self.columns, sa.select(self.term).where(unused)))
        create_afresh(connection, self.kept)
        connection.execute(sa.insert(self.kept).from_select(self.columns, sa.select(self.term).where(~unused)))
        create_afresh(connection, self.term)
        connection.execute(sa.insert(self.term).from_select(self.columns, sa.select(self.kept)))
        self.trimmed_below = frontier

    def points(self, column: sa.ColumnElement[float]) -> sa.ColumnElement[float]:
        """Return a payoff or reward column as the solve reads it: negated when it minimises."""
        return column if self.direction == 1 else -column

    def drop(self, connection: sa.Connection) -> None:
        """Drop the tables."""
        for table in self.all:
            table.drop(connection)


FIRST, LAST = sa.bindparam("first_edge", type_=EdgeId), sa.bindparam("last_edge", type_=EdgeId)


LAYERS, GRAPH = sa.bindparam("layers", expanding=True), sa.bindparam("graph_id")
DEPTH = sa.bindparam("depth", type_=sa.Integer)


def _by_depth(table: sa.Table | sa.Alias) -> bool:
    """Return whether ``table`` (or an alias of it) holds the edges by depth (:meth:`_Tables.order_by_depth`)."""
    return "depth" in table.c


def _leaving(table: sa.Table | sa.Alias, many: bool = False) -> sa.ColumnElement[bool]:
    """Return the condition that an edge of ``table`` leaves the layer the statement is given: by its id range
    (``first_edge``, ``last_edge``), or, for ``many`` layers, by its graph and layer (``graph_id``, ``layers``;
    DuckDB prunes a scan by a list of layers far better than by as many id ranges), or by its depth and layer
    where ``table`` holds the edges by depth (``depth``, ``layers``: :meth:`_Tables.order_by_depth`)."""
    if _by_depth(table):
        return sa.and_(table.c.depth == DEPTH, table.c.src_layer.in_(LAYERS))
    if many:
        return sa.and_(table.c.graph_id == GRAPH, table.c.src_layer.in_(LAYERS))
    return table.c.id.between(FIRST, LAST)


def _leaving_values(spans: Sequence[sa.Row], graph_id: int, depth: int | None = None) -> dict[str, object]:
    """Return the bound values of a statement over the edges leaving the layers ``spans`` describe (at ``depth``
    below their anchors, where the statement reads the edges by depth)."""
    if len(spans) == 1:
        return {"first_edge": spans[0].first_edge, "last_edge": spans[0].last_edge}
    if depth is not None:
        return {"depth": depth, "layers": [span.layer for span in spans]}
    return {"graph_id": graph_id, "layers": [span.layer for span in spans]}


def _edge_range(parts: Sequence[Component]) -> tuple[int, int]:
    """Return the first and last id of the edges leaving the components ``parts`` (layers in a row)."""
    return (min(span.first_edge for part in parts for span in part.spans),
            max(span.last_edge for part in parts for span in part.spans))


def _sources(parts: Sequence[Component]) -> sa.Select:
    """Return the SELECT of the nodes the edges leaving the components ``parts`` leave (:func:`_edge_range`)."""
    return sa.select(edge.c.src).where(edge.c.id.between(*_edge_range(parts)))


def _spanned(spans: Sequence[sa.Row]) -> sa.ColumnElement[bool]:
    """Return the condition selecting the edges leaving the layers ``spans`` describe (their values inline)."""
    return sa.or_(*(edge.c.id.between(span.first_edge, span.last_edge) for span in spans))


def _edges(kind: str | None = None, many: bool = False, table: sa.Table = edge) -> sa.ColumnElement[bool]:
    """Return the condition selecting the (``kind``) edges of ``table`` leaving the layers the statement is given."""
    in_range = _leaving(table, many)
    return in_range if kind is None else sa.and_(in_range, table.c.kind == kind)


class _Statements:
    """The statements of a run, each built once and executed with each layer's edge range (or layers').

    Built once because building a statement costs SQLAlchemy more than
    SQLite takes to run one of a small layer.
    """

    def __init__(self, t: _Tables, graph_id: int):
        self.t, self.graph_id = t, graph_id
        self.built: dict[tuple[str, str, bool], sa.Insert] = {}
        self.walk: CycleWalk | None = None  # a cyclic window's pass as one statement, where the solve may walk

    def statement(self, kind: str, into: sa.Table, many: bool) -> sa.Insert:
        """Return the statement valuing ``kind`` nodes (``roll``: chance, ``move``: decision) of one layer (or
        ``many``) into ``into``, built the first time it is asked for."""
        found = self.built.get((kind, into.name, many))
        if found is None:
            found = (self._chance if kind == "roll" else self._decide)(into, many)
            self.built[kind, into.name, many] = found
        return found

    def _read(self, many: bool) -> sa.Table:
        """Return the table a statement reads the edges from: for ``many`` layers, the edges by depth where the
        run has them (:meth:`_Tables.order_by_depth`)."""
        return self.t.by_depth if many and self.t.by_depth is not None else edge

    @staticmethod
    def _live(term: sa.Table | sa.Alias, edges: sa.Table) -> sa.ColumnElement[bool]:
        """Return the condition that a row of ``term`` may be read at the statement's depth: where ``edges`` are
        by depth, a node whose shallowest incoming edge is deeper is left out."""
        if not _by_depth(edges):
            return sa.true()
        return sa.or_(term.c.until.is_(None), term.c.until <= DEPTH)

    def _written(self, columns: list[str], edges: sa.Table) -> list[str]:
        """Return the columns a statement over ``edges`` writes: ``columns``, with ``until`` where it is kept."""
        return [*columns, "until"] if _by_depth(edges) else columns

    def _after(self, seats: sa.Table, edges: sa.Table) -> sa.ColumnElement[bool]:
        """Return the join condition of an edge's destination terms, in the seat the edge leads to."""
        term = self.t.term
        return sa.and_(term.c.node_id == edges.c.dst, term.c.seat == seats.c.to_seat, self._live(term, edges))

    def _chance(self, into: sa.Table, many: bool) -> sa.Insert:
        """A chance node's terms: the weighted sums over its rolls, divided by its total weight (the weight
        of its constant's terms, which every destination has), taken by a window over the grouped rows; where
        the edges are read by depth, the sums of their shares."""
        seats, term, edges = self.t.seat_map, self.t.term, self._read(many)
        joined = edges.join(seats, seats.c.sign == edges.c.sign).join(term, self._after(seats, edges))
        grouped = [edges.c.src, seats.c.node_id, term.c.anchor]
        if not _by_depth(edges):
            total = sa.func.sum(sa.case((term.c.anchor == ONE, edges.c.weight), else_=0))
            denom = sa.func.max(total).over(partition_by=(edges.c.src, seats.c.node_id))
            coeff = sa.func.sum(edges.c.weight * edge_term(self.t.points, edges, term)) / denom
        else:
            grouped.append(edges.c.until)
            coeff = sa.func.sum(edges.c.share * edge_term(self.t.points, edges, term))
        rows = (sa.select(*grouped[:3], coeff, *grouped[3:])
                .select_from(joined).where(_edges("roll", many, edges)).group_by(*grouped))
        return sa.insert(into).from_select(self._written(["node_id", "seat", "anchor", "coeff"], edges), rows)

    def _decide(self, into: sa.Table, many: bool) -> sa.Insert:
        """A decision node's terms: those of the move each seat takes (the best for a maximising seat, the
        first streamed within the tolerance; its policy's otherwise), with the move, in one statement."""
        seats, term, edges = self.t.seat_map, self.t.term, self._read(many)
        q = self.t.points(edges.c.reward) + edges.c.sign * term.c.coeff
        moves = (sa.select(edges.c.src, seats.c.node_id.label("seat"), edges.c.id, q.label("q"),
                           sa.func.max(q).over(partition_by=(edges.c.src, seats.c.node_id)).label("best"))
                 .select_from(edges.join(seats, sa.and_(seats.c.sign == edges.c.sign, seats.c.policy_id.is_(None)))
                              .join(term, sa.and_(self._after(seats, edges), term.c.anchor == VALUE)))
                 .where(_edges("move", many, edges)).subquery("moves"))
        near = moves.c.q >= moves.c.best - TIE * (1 + sa.func.abs(moves.c.best))
        best = (sa.select(moves.c.src, moves.c.seat, sa.func.min(moves.c.id).label("edge_id")).where(near)
                .group_by(moves.c.src, moves.c.seat))
        follows = self.t.followed
        followed = (sa.select(edges.c.src, follows.c.seat, edges.c.id.label("edge_id"))
                    .select_from(edges.join(follows, follows.c.edge_id == edges.c.id))
                    .where(_edges("move", many, edges)))
        parts = [part for part, wanted in ((best, self.t.maximising), (followed, self.t.following)) if wanted]
        picked = (sa.union_all(*parts) if len(parts) > 1 else parts[0]).subquery("picked")
        taken, to = edges.alias("taken"), seats.alias("to")
        after = term.alias("after")
        share = edge_term(self.t.points, taken, after)
        joined = (picked.join(taken, sa.and_(taken.c.id == picked.c.edge_id, _leaving(taken, many)))
                  .join(to, sa.and_(to.c.node_id == picked.c.seat, to.c.sign == taken.c.sign))
                  .join(after, sa.and_(after.c.node_id == taken.c.dst, after.c.seat == to.c.to_seat,
                                       self._live(after, edges))))
        rows = sa.select(picked.c.src, picked.c.seat, after.c.anchor, share, picked.c.edge_id,
                         *([taken.c.until] if _by_depth(edges) else [])).select_from(joined)
        return sa.insert(into).from_select(self._written(TERM_COLUMNS, edges), rows)

    def layer(self, connection: sa.Connection, spans: Sequence[sa.Row], anchors: bool, depth: int) -> None:
        """Value the layers ``spans``, ``depth`` below their anchors (one statement a kind of node, whatever
        their number); anchor layers' rows go to the ``new`` table."""
        into = self.t.new if anchors else self.t.term
        for kind, column in (("roll", "rolls"), ("move", "moves")):
            having = [span for span in spans if getattr(span, column)]
            if having:
                many = len(having) > 1
                by_depth = depth if _by_depth(self._read(many)) else None
                connection.execute(self.statement(kind, into, many), _leaving_values(having, self.graph_id, by_depth))


def _pass(connection: sa.Connection, statements: _Statements, group: Sequence[Component]) -> None:
    """Value the components' layers, deepest first, their layers at the same depth below their first (their
    anchors) together; the anchors' rows go to the ``new`` table (every row, where the pass is walked)."""
    depths: dict[int, list[sa.Row]] = {}
    for part in group:
        for span in part.spans:
            depths.setdefault(span.layer - part.first, []).append(span)
    if statements.walk is not None and group[0].cyclic:
        statements.walk.run(connection, {depth: [span.layer for span in spans] for depth, spans in depths.items()})
        return
    for depth in sorted(depths, reverse=True):
        statements.layer(connection, depths[depth], depth == 0 and group[0].cyclic, depth)


class _Group:
    """The statements that solve cyclic components together around their passes: Newton's method on all
    their anchors at once (one component, or several in a row where the engine pays per statement)."""

    def __init__(self, connection: sa.Connection, statements: _Statements, group: Sequence[Component],
                 graph_id: int):
        self.connection, self.statements, self.group, self.t = connection, statements, group, statements.t
        self.graph_id = graph_id
        first, last = _edge_range(group)
        self.bounds = {"first_edge": first, "last_edge": last}
        self.inside = _sources(group)
        self.anchor_spans = [part.spans[0] for part in group]
        depth = {span.layer: number for number, span in enumerate(self.anchor_spans)}
        found = connection.execute(sa.select(edge.c.src, edge.c.src_layer).where(_spanned(self.anchor_spans))
                                   .distinct()).all()
        self.anchors = [src for _, src in sorted((depth[layer], src) for src, layer in found)]
        self.anchor_layers = {src: layer for src, layer in found}
        seats = self.t.seats
        self.variables = [anchor * seats + seat for anchor in self.anchors for seat in range(seats)]
        self.index = {variable: i for i, variable in enumerate(self.variables)}
        sizes = Counter(depth[layer] for _, layer in found)
        ends = list(itertools.accumulate(sizes[number] * seats for number in range(len(group))))
        self.blocks = list(zip([0, *ends[:-1]], ends))  # each component's variables, deepest first

    def first_guess(self, start: float, guess: Guess | None, carried: Mapping[int, list[float]]) -> object:
        """Return the first guess of each variable: its value at the last pass's solution where ``carried`` has
        it (anchor id -> a value a seat), else the (weighted) mean value, for the same seat, of the positions
        that ``guess`` names for its anchor, solved or guessed already (a deeper component's anchor of the
        group), else ``start``."""
        import numpy as np

        seats = self.t.seats
        found = np.full(len(self.variables), start)
        for number, anchor in enumerate(self.anchors):
            if anchor in carried:
                found[number * seats:(number + 1) * seats] = carried[anchor]
        if guess is None or not self.anchors or all(anchor in carried for anchor in self.anchors):
            return found
        entering = {self.anchor_layers[anchor] for anchor in self.anchors if anchor not in carried}
        named = named_positions(self.connection, self.graph_id, guess, node.c.id.in_(sa.select(edge.c.src).where(
            _spanned([span for span in self.anchor_spans if span.layer in entering]))))
        term = self.t.finished()
        wanted = sorted({node_id for ids in named.values() for node_id in ids})
        solved = sa.select(term.c.node_id, term.c.seat, term.c.coeff).where(term.c.node_id.in_(wanted),
                                                                            term.c.anchor == VALUE)
        values: dict[int, list[float]] = {}
        for node_id, seat, value in self.connection.execute(solved):
            values.setdefault(node_id, [start] * seats)[seat] = value
        for number, anchor in enumerate(self.anchors):
            values[anchor] = carried.get(anchor) or mean_guess(named.get(anchor, {}), values, [start] * seats)
            found[number * seats:(number + 1) * seats] = values[anchor]
        return found

    def start_pass(self, guess: Sequence[float]) -> None:
        """Forget the components' terms and moves; put the anchors' guesses in."""
        t, seats = self.t, self.t.seats
        self.connection.execute(sa.delete(t.term).where(t.term.c.node_id.in_(self.inside)))
        self.connection.execute(sa.delete(t.new))
        rows = BulkInserter(self.connection, t.term, ("node_id", "seat", "anchor", "coeff"))
        for variable, x in zip(self.variables, guess):
            anchor, seat = divmod(variable, seats)
            rows.extend([(anchor, seat, VALUE, float(x)), (anchor, seat, ONE, 0.0), (anchor, seat, variable, 1.0)])
        rows.flush()

    def anchor_map(self) -> tuple[object, object, _Matrix]:
        """Return the pass's ``T(x)``, ``c`` and ``M`` (``T(x) = c + M x`` along the moves taken)."""
        import numpy as np

        size, seats = len(self.variables), self.t.seats
        values, constants = np.zeros(size), np.zeros(size)
        rows: list[int] = []
        columns: list[int] = []
        entries: list[float] = []
        new = self.t.new
        anchors = new.c.node_id.in_(sa.select(edge.c.src).where(_spanned(self.anchor_spans)))
        for node_id, seat, anchor, coeff in self.connection.execute(
                sa.select(new.c.node_id, new.c.seat, new.c.anchor, new.c.coeff).where(anchors)):
            row = self.index[node_id * seats + seat]
            if anchor == VALUE:
                values[row] = coeff
            elif anchor == ONE:
                constants[row] = coeff
            else:
                rows.append(row)
                columns.append(self.index[anchor])
                entries.append(coeff)
        return values, constants, _Matrix(size, np.array(rows, dtype=np.int64), np.array(columns, dtype=np.int64),
                                          np.array(entries, dtype=float))

    def value_at(self, solution: Sequence[float]) -> None:
        """Put in ``solved`` each node's value when the anchors are worth ``solution`` (from ``new`` alone where the
        pass was walked: every node's terms are there)."""
        t = self.t
        self.connection.execute(sa.delete(t.guess))
        rows = BulkInserter(self.connection, t.guess, ("node_id", "x"))
        rows.extend([(ONE, 1.0), *((variable, float(x)) for variable, x in zip(self.variables, solution))])
        rows.flush()
        self.connection.execute(sa.delete(t.solved))
        anchors = sa.select(t.new.c.node_id)  # the anchors' own terms, with their moves, are in ``new``
        inner = t.term, t.term.c.node_id.in_(self.inside) & t.term.c.node_id.not_in(anchors)
        for terms, which in ((inner,) if self.statements.walk is None else ()) + ((t.new, sa.true()),):
            rows = (sa.select(terms.c.node_id, terms.c.seat, sa.func.sum(terms.c.coeff * t.guess.c.x),
                              sa.func.max(terms.c.edge_id))
                    .select_from(terms.join(t.guess, t.guess.c.node_id == terms.c.anchor))
                    .where(which).group_by(terms.c.node_id, terms.c.seat))
            self.connection.execute(sa.insert(t.solved).from_select(["node_id", "seat", "value", "edge_id"], rows))

    def gaps(self) -> list[float]:
        """Return, for each component (deepest first), by how much the best move beats the one taken, at most,
        at the solved values (0 where the moves taken are best: with the components below it, the solved
        values are then its exact solution)."""
        found = [0.0] * len(self.group)
        if not self.t.maximising:
            return found
        t = self.t
        seats, solved, term = t.seat_map, t.solved, t.term
        worth = sa.func.coalesce(solved.c.value, term.c.coeff)
        q = t.points(edge.c.reward) + edge.c.sign * worth
        moves = (sa.select(edge.c.src, edge.c.src_layer, seats.c.node_id.label("seat"), edge.c.id, q.label("q"),
                           sa.func.max(q).over(partition_by=(edge.c.src, seats.c.node_id)).label("best"))
                 .select_from(edge.join(seats, sa.and_(seats.c.sign == edge.c.sign, seats.c.policy_id.is_(None)))
                              .outerjoin(solved, sa.and_(solved.c.node_id == edge.c.dst, solved.c.seat == seats.c.to_seat))
                              .outerjoin(term, sa.and_(term.c.node_id == edge.c.dst, term.c.seat == seats.c.to_seat,
                                                       term.c.anchor == VALUE)))
                 .where(_edges("move")).subquery())
        taken = moves.join(solved, sa.and_(solved.c.node_id == moves.c.src, solved.c.seat == moves.c.seat,
                                           solved.c.edge_id == moves.c.id))
        by_layer = (sa.select(moves.c.src_layer, sa.func.max(moves.c.best - moves.c.q)).select_from(taken)
                    .group_by(moves.c.src_layer))
        for layer_number, gap in self.connection.execute(by_layer, self.bounds):
            number = next(i for i, part in enumerate(self.group) if part.first <= layer_number <= part.last)
            found[number] = max(found[number], float(gap or 0.0))
        return found

    def keep_solved(self, count: int) -> None:
        """Replace the terms of the ``count`` deepest components by their solved values (VALUE and ONE, as any
        solved node)."""
        t = self.t
        inside = _sources(self.group[:count])
        self.connection.execute(sa.delete(t.term).where(t.term.c.node_id.in_(inside)))
        for anchor in (VALUE, ONE):
            rows = sa.select(t.solved.c.node_id, t.solved.c.seat, sa.literal(anchor), t.solved.c.value,
                             t.solved.c.edge_id if anchor == VALUE else sa.null()).where(t.solved.c.node_id.in_(inside))
            self.connection.execute(sa.insert(t.term).from_select(TERM_COLUMNS, rows))
        t.trim(self.connection, self.group[count - 1].first)

    def guesses(self, solution: Sequence[float]) -> dict[int, list[float]]:
        """Return anchor id -> its value for each seat, from ``solution`` (a value per variable)."""
        seats = self.t.seats
        return {anchor: [float(x) for x in solution[number * seats:(number + 1) * seats]]
                for number, anchor in enumerate(self.anchors)}


@dataclass(frozen=True)
class _Matrix:
    """A square matrix by its nonzero entries (a pass's ``M``: few entries a row, many rows in a group)."""

    size: int
    rows: object  # numpy integer arrays, and the entries' values
    columns: object
    entries: object

    def times(self, x: object) -> object:
        """Return ``M x``."""
        import numpy as np

        weights = self.entries * x[self.columns]  # type: ignore[index, operator]
        return np.bincount(self.rows, weights=weights, minlength=self.size)


def _solve_anchors(constants: object, matrix: _Matrix, blocks: Sequence[tuple[int, int]]) -> object:
    """Return ``x`` solving ``x = c + M x``, a block of variables (a component's anchors) at a time where each
    block's rows lead only to its own variables and to blocks before it (deeper components): as one system
    otherwise. Raises numpy's ``LinAlgError`` where a block's system is singular."""
    import numpy as np

    block_of = np.zeros(matrix.size, dtype=np.int64)
    for number, (low, high) in enumerate(blocks):
        block_of[low:high] = number
    rows, columns, entries = matrix.rows, matrix.columns, matrix.entries
    if np.any(block_of[columns] > block_of[rows]):  # type: ignore[index]
        blocks = [(0, matrix.size)]
        block_of[:] = 0
    x = np.zeros(matrix.size)
    for number, (low, high) in enumerate(blocks):
        mine = block_of[rows] == number  # type: ignore[index]
        row, column, entry = rows[mine] - low, columns[mine], entries[mine]  # type: ignore[index, operator]
        inner = column >= low
        right = np.array(constants[low:high], dtype=float)  # type: ignore[index]
        np.add.at(right, row[~inner], entry[~inner] * x[column[~inner]])
        system = np.eye(high - low)
        np.add.at(system, (row[inner], column[inner] - low), -entry[inner])
        x[low:high] = np.linalg.solve(system, right)
    return x


def _solve_run(connection: sa.Connection, statements: _Statements, run: Sequence[Component], start: float,
               convergence: Convergence, graph_id: int, first_guess: Guess | None, window: int,
               progress: Progress | None) -> float:
    """Solve a run of cyclic components exactly, deepest first, up to ``window`` of them together; return the
    mean of the last ones' anchors' values (the next run's first guess). ``progress`` counts each component's
    layers when it is done.

    Each pass values the window's components at the guess; the next guess
    solves the anchors' linear system for the moves taken. When, at that
    solution, no move of a component beats the one taken, nor of any
    component below it in the window, it is their exact solution (the values
    are the moves' own, linear in the anchors): those components are done and
    leave the window, the next ones of the run come in, and the others start
    the next pass from the solution.
    """
    import numpy as np

    queue, group = list(run), []
    carried: dict[int, list[float]] = {}  # anchor -> the last solution's value a seat: the next guess
    taken: dict[int, int] = {}  # passes each component in the window has taken, by its first layer
    fallbacks = 0
    while queue or group:
        while queue and len(group) < window:
            group.append(queue.pop(0))
        if taken.get(group[0].first, 0) >= MAX_PASSES:
            raise NotConverged(f"cyclic layers {group[0].first}..{group[0].last} did not settle in {MAX_PASSES} passes")
        work = _Group(connection, statements, group, graph_id)
        work.start_pass(work.first_guess(start, first_guess, carried))
        _pass(connection, statements, group)
        for part in group:
            taken[part.first] = taken.get(part.first, 0) + 1
        values, constants, matrix = work.anchor_map()
        try:
            solution = _solve_anchors(constants, matrix, work.blocks)
            if not np.all(np.isfinite(solution)):
                raise np.linalg.LinAlgError("not finite")
        except np.linalg.LinAlgError:  # the moves taken never leave a component: a value-iteration step
            carried = work.guesses(values)
            fallbacks += 1
            continue
        carried = work.guesses(solution)
        work.value_at(solution)
        linear = np.abs(constants + matrix.times(solution) - solution)
        scale = 1 + float(np.max(np.abs(solution), initial=0.0))
        residuals = [max(gap, float(np.max(linear[low:high], initial=0.0)))
                     for gap, (low, high) in zip(work.gaps(), work.blocks)]
        done = next((number for number, residual in enumerate(residuals)
                     if residual > RESIDUAL_TOLERANCE * scale), len(group))
        if done:
            work.keep_solved(done)
            for part, residual in zip(group[:done], residuals):
                convergence.add(taken.pop(part.first), residual, fallbacks)
                fallbacks = 0
                if progress is not None:
                    progress(len(part.spans))
            start = float(np.mean(solution[:work.blocks[done - 1][1]])) if work.blocks[done - 1][1] else start
            group = group[done:]
    return start


def _runs(connection: sa.Connection, graph_id: int, parts: Sequence[Component]) -> list[list[Component]]:
    """Return the components in the order they are solved, in runs that :func:`_solve_run` may solve together:
    each alone where the engine pays per row; where it pays per statement
    (:attr:`dicegraph.store.backends.record.Backend.pays_per_statement`), cyclic components in a row, as long as no edge between two of
    them leads past the other's anchors (their layers at the same depth below the anchors are then valued by
    one statement)."""
    if not backend_of(connection).pays_per_statement:
        return [[part] for part in parts]
    crossing = _crossings(connection, graph_id)
    runs: list[list[Component]] = []
    for part in parts:
        last = runs[-1] if runs else []
        if (part.cyclic and last and last[-1].cyclic and last[-1].first == part.last + 1
                and not any((part.first, other.first) in crossing for other in last)):
            last.append(part)
        else:
            runs.append([part])
    return runs


def _crossings(connection: sa.Connection, graph_id: int) -> set[tuple[int, int]]:
    """Return the pairs (first layer of a cyclic component, first layer of another) with an edge from the
    one to a node of the other that is not an anchor."""
    source, target = layer.alias("source"), layer.alias("target")
    joined = (edge.join(node, sa.and_(node.c.graph_id == edge.c.graph_id, node.c.id == edge.c.dst))
              .join(source, sa.and_(source.c.graph_id == edge.c.graph_id, source.c.layer == edge.c.src_layer))
              .join(target, sa.and_(target.c.graph_id == node.c.graph_id, target.c.layer == node.c.layer)))
    found = (sa.select(source.c.cycle_start, target.c.cycle_start).select_from(joined)
             .where(edge.c.graph_id == graph_id, source.c.cycle_start.is_not(None), target.c.cycle_start.is_not(None),
                    source.c.cycle_start != target.c.cycle_start, node.c.layer != target.c.cycle_start).distinct())
    return {(row[0], row[1]) for row in connection.execute(found)}


def named_positions(connection: sa.Connection, graph_id: int, guess: Guess,
                    which: sa.ColumnElement[bool]) -> dict[int, dict[int, float]]:
    """Return node id -> {id of a position ``guess`` names for it: its weight} (see :func:`guess_weights`), for
    the graph's nodes that ``which`` selects; a node left out has none that the graph holds."""
    keys = connection.execute(sa.select(node.c.id, node.c.key).where(node.c.graph_id == graph_id, which)).all()
    named = {node_id: guess_weights(guess(key)) for node_id, key in keys}
    ids = node_ids(connection, graph_id, (key for weights in named.values() for key in weights))
    found = {node_id: {ids[key]: weight for key, weight in weights.items() if key in ids}
             for node_id, weights in named.items()}
    return {node_id: held for node_id, held in found.items() if held}


def guess_weights(named: str | tuple[str, ...] | Mapping[str, float] | None) -> dict[str, float]:
    """Return a ``first_guess`` hook's answer as key -> weight: one key, several (equal weights) or a mapping
    of keys to weights (which may be negative, to extrapolate), or none.

    >>> guess_weights("1-2"), guess_weights(("1-2", "2-1")), guess_weights(None)
    ({'1-2': 1.0}, {'1-2': 1.0, '2-1': 1.0}, {})
    >>> guess_weights({"1-2": 1, "2-1": 1, "2-2": -1})
    {'1-2': 1.0, '2-1': 1.0, '2-2': -1.0}
    """
    if named is None:
        return {}
    if isinstance(named, str):
        return {named: 1.0}
    if isinstance(named, Mapping):
        return {key: float(weight) for key, weight in named.items()}
    return {key: 1.0 for key in named}


def mean_guess(weights: Mapping[int, float], solved: Mapping[int, Sequence[float]], start: list[float]) -> list[float]:
    """Return, per seat, the weighted mean of the values ``solved`` holds for the positions ``weights`` names
    (id -> weight), over those it holds; ``start`` when it holds none, or their weights add up to nothing.

    >>> mean_guess({7: 1.0, 8: 1.0, 9: 1.0}, {7: [0.25, 1.0], 8: [0.75, 0.0]}, [0.0, 0.0])
    [0.5, 0.5]
    >>> mean_guess({7: 1.0, 8: 1.0, 9: -1.0}, {7: [0.5], 8: [0.25], 9: [0.125]}, [0.0])
    [0.625]
    >>> mean_guess({9: 1.0}, {}, [0.5])
    [0.5]
    """
    known = {node_id: weight for node_id, weight in weights.items() if node_id in solved}
    total = sum(known.values())
    if total <= 0:
        return start
    return [sum(weight * solved[node_id][seat] for node_id, weight in known.items()) / total
            for seat in range(len(start))]


def solve_components(connection: sa.Connection, graph_id: int, seats: Sequence[Seat],
        progress: Progress | None = None, first_guess: Guess | None = None,
        objective: str = "max") -> tuple[_Tables, Convergence]:
    """Value every node of the graph for each seat; return the tables (``term`` rows of anchor
    :data:`VALUE` hold the values and, at decision nodes, the moves taken) and how the components converged.
    ``first_guess`` names, for a position a component loops back to, the positions solved before whose
    (weighted) mean value starts Newton's method there (:func:`guess_weights`); it only saves passes. With
    ``objective`` ``min``, a maximising seat minimises: the game with every payoff and reward negated is
    maximised (a zero-sum game's signs carry over), and :func:`values_of` negates its values back."""
    t = _Tables(connection, seats, -1 if objective == "min" else 1)
    guess = first_guess if t.maximising else None  # fixed moves: one pass from any guess
    for anchor in (VALUE, ONE):
        terminals = sa.select(node.c.id, t.seat_map.c.node_id, sa.literal(anchor), t.points(node.c.payoff)).select_from(
            node.join(t.seat_map, t.seat_map.c.sign == 1)).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
        connection.execute(sa.insert(t.term).from_select(["node_id", "seat", "anchor", "coeff"], terminals))
    average = sa.select(sa.func.avg(t.points(node.c.payoff))).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
    start = connection.execute(average).scalar_one() or 0.0
    t.start_trimming(connection, graph_id)
    convergence = Convergence()
    statements = _Statements(t, graph_id)
    runs = _runs(connection, graph_id, components(connection, graph_id))
    if any(len(run) > 1 for run in runs):
        t.order_by_depth(connection, graph_id)
        if backend_of(connection).grouped_recursion and t.by_depth is not None:
            statements.walk = CycleWalk(t.term, t.new, t.by_depth, t.seat_map, t.points, VALUE, t.maximising,
                                        t.followed if t.following else None)
    for run in runs:
        if run[0].cyclic:
            window = GROUPED if t.maximising else len(run)  # fixed moves: one pass, however many
            start = _solve_run(connection, statements, run, start, convergence, graph_id, guess, window, progress)
        else:
            _pass(connection, statements, run)
            if progress is not None:
                progress(len(run[0].spans))
    return t, convergence


def values_of(t: _Tables, seat: int = 0) -> sa.Select:
    """Return the SELECT of ``(node_id, value)`` for ``seat`` after :func:`solve_components`."""
    terms = t.finished()
    return sa.select(terms.c.node_id, t.points(terms.c.coeff).label("coeff")).where(terms.c.seat == seat,
                                                                                 terms.c.anchor == VALUE)


def moves_of(t: _Tables, seat: int = 0) -> sa.Select:
    """Return the SELECT of ``(node_id, edge_id)``, the moves ``seat`` takes, after :func:`solve_components`."""
    terms = t.finished()
    return sa.select(terms.c.node_id, terms.c.edge_id).where(terms.c.seat == seat, terms.c.anchor == VALUE,
                                                            terms.c.edge_id.is_not(None))


def root_of(connection: sa.Connection, t: _Tables) -> dict[int, float]:
    """Return seat -> the root's value after :func:`solve_components`, as the solve holds it (negated back only by
    :func:`values_of`)."""
    terms = t.finished()
    return dict(connection.execute(sa.select(terms.c.seat, terms.c.coeff)
                                   .where(terms.c.node_id == 0, terms.c.anchor == VALUE)).all())


@dispatchable("match")
def root_values(connection: sa.Connection, graph_id: int, seatings: Sequence[Sequence[Seat]],
                progress: Progress | None = None) -> list[list[float]]:
    """Return, for each seating, the root's value for each of its seats (nothing is stored): for a match of two
    policies, the first entry is the probability that the first seat, moving first, wins. A run a seating;
    ``progress`` counts the layers done."""
    found = []
    for seats in seatings:
        t, _ = solve_components(connection, graph_id, seats, progress)
        roots = root_of(connection, t)
        t.drop(connection)
        found.append([roots[seat] for seat in range(len(seats))])
    return found
