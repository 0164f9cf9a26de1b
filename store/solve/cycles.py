"""Graphs with cycles solved exactly: each cyclic component by Newton's method on its anchors' values.

A game whose rules loop declares cyclic layers (:class:`graphs.protocol.CyclicLayers`):
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
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from graphs.errors import DicegraphError
from graphs.protocol import TIE, Progress
from store.catalog import find_policy, node_ids
from store.schema import EdgeId, choice, edge, layer, node
from store.scratch import create_afresh, hashed_joins, keyed_pair_table, temporary_table
from store.solve.seats import FOLLOW, MAXIMISE, Seat

RESIDUAL_TOLERANCE = 1e-12  # relative: |T(x) - x| at which a component is solved
MAX_PASSES = 60
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


@dataclass
class Convergence:
    """How the components were solved: what ``solve`` prints and the policy's record keeps."""

    method: str = "newton"
    components: int = 0
    passes: int = 0
    most_passes: int = 0
    residual: float = 0.0
    fallbacks: int = 0  # passes that took a value-iteration step (a singular Newton system)

    def add(self, passes: int, residual: float, fallbacks: int) -> None:
        """Count one cyclic component that took ``passes`` passes and ended at ``residual``."""
        self.components += 1
        self.passes += passes
        self.most_passes = max(self.most_passes, passes)
        self.residual = max(self.residual, residual)
        self.fallbacks += fallbacks

    def record(self) -> str:
        """Return the JSON text stored in ``policy.convergence``."""
        return json.dumps({"method": self.method, "cyclic_components": self.components, "passes": self.passes,
                           "most_passes": self.most_passes, "residual": self.residual,
                           "value_iteration_steps": self.fallbacks})


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
    parts = [Component(start, last[start], start in cyclic, tuple(spans)) for start, spans in found.items() if spans]
    return sorted(parts, key=lambda part: -part.first)


VALUE, ONE = -1, -2  # the pseudo-anchors of a node's terms: its value at the guess, and its constant


class _Tables:
    """The temporary tables of one run.

    ``term(node_id, seat, anchor, coeff)``: a node's value as an affine
    function of its component's anchors: ``anchor`` :data:`ONE` holds the
    constant, ``anchor_node * seats + anchor_seat`` a coefficient, and
    :data:`VALUE` the value at the current guess (the sum, kept so that
    moves can be compared in one join). A solved node keeps VALUE and ONE.
    A decision node's rows carry the move taken (``edge_id``).
    """

    def __init__(self, connection: sa.Connection, seats: Sequence[Seat]):
        keyed = not hashed_joins(connection)

        def terms(name: str) -> sa.Table:
            table = sa.Table(name, sa.MetaData(),
                             *(sa.Column(column, sa.Integer, primary_key=keyed, autoincrement=False, nullable=False)
                               for column in ("node_id", "seat", "anchor")),
                             sa.Column("coeff", sa.Double, nullable=False), sa.Column("edge_id", EdgeId),
                             prefixes=["TEMPORARY"],
                             sqlite_with_rowid=not keyed)
            return create_afresh(connection, table)

        self.term = terms("cyc_term")
        self.new = terms("cyc_new")
        self.solved = keyed_pair_table(connection, "cyc_solved", "seat", sa.Column("value", sa.Double, nullable=False),
                                       sa.Column("edge_id", EdgeId))
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
        self.all = (self.term, self.new, self.solved, self.guess, self.seat_map)

    def drop(self, connection: sa.Connection) -> None:
        """Drop the tables."""
        for table in self.all:
            table.drop(connection)


FIRST, LAST = sa.bindparam("first_edge", type_=EdgeId), sa.bindparam("last_edge", type_=EdgeId)


def _edges(kind: str | None = None) -> sa.ColumnElement[bool]:
    """Return the condition selecting the (``kind``) edges of the id range the statement is given."""
    in_range = edge.c.id.between(FIRST, LAST)
    return in_range if kind is None else sa.and_(in_range, edge.c.kind == kind)


class _Statements:
    """The statements of a run, built once and executed with each layer's (or component's) edge range.

    Built once because building a statement costs SQLAlchemy more than
    SQLite takes to run one of a small layer.
    """

    def __init__(self, t: _Tables):
        self.t = t
        self.chance = {into.name: self._chance(into) for into in (t.term, t.new)}
        self.decide = {into.name: self._decide(into) for into in (t.term, t.new)}

    def _after(self, seats: sa.Table) -> sa.ColumnElement[bool]:
        """Return the join condition of an edge's destination terms, in the seat the edge leads to."""
        term = self.t.term
        return sa.and_(term.c.node_id == edge.c.dst, term.c.seat == seats.c.to_seat)

    def _term_of_edge(self) -> sa.ColumnElement[float]:
        """Return an edge's share of a destination term: its reward goes to the value and the constant."""
        term = self.t.term
        return sa.case((term.c.anchor < 0, edge.c.reward), else_=0.0) + edge.c.sign * term.c.coeff

    def _chance(self, into: sa.Table) -> sa.Insert:
        """A chance node's terms: the weighted sums over its rolls, divided by its total weight (the weight
        of its constant's terms, which every destination has), taken by a window over the grouped rows."""
        seats, term = self.t.seat_map, self.t.term
        joined = edge.join(seats, seats.c.sign == edge.c.sign).join(term, self._after(seats))
        total = sa.func.sum(sa.case((term.c.anchor == ONE, edge.c.weight), else_=0))
        denom = sa.func.max(total).over(partition_by=(edge.c.src, seats.c.node_id))
        rows = (sa.select(edge.c.src, seats.c.node_id, term.c.anchor,
                          sa.func.sum(edge.c.weight * self._term_of_edge()) / denom)
                .select_from(joined).where(_edges("roll")).group_by(edge.c.src, seats.c.node_id, term.c.anchor))
        return sa.insert(into).from_select(["node_id", "seat", "anchor", "coeff"], rows)

    def _decide(self, into: sa.Table) -> sa.Insert:
        """A decision node's terms: those of the move each seat takes (the best for a maximising seat, the
        first streamed within the tolerance; its policy's otherwise), with the move, in one statement."""
        seats, term = self.t.seat_map, self.t.term
        q = edge.c.reward + edge.c.sign * term.c.coeff
        moves = (sa.select(edge.c.src, seats.c.node_id.label("seat"), edge.c.id, q.label("q"),
                           sa.func.max(q).over(partition_by=(edge.c.src, seats.c.node_id)).label("best"))
                 .select_from(edge.join(seats, sa.and_(seats.c.sign == edge.c.sign, seats.c.policy_id.is_(None)))
                              .join(term, sa.and_(self._after(seats), term.c.anchor == VALUE)))
                 .where(_edges("move")).subquery("moves"))
        near = moves.c.q >= moves.c.best - TIE * (1 + sa.func.abs(moves.c.best))
        best = (sa.select(moves.c.src, moves.c.seat, sa.func.min(moves.c.id).label("edge_id")).where(near)
                .group_by(moves.c.src, moves.c.seat))
        followed = (sa.select(edge.c.src, seats.c.node_id.label("seat"), edge.c.id.label("edge_id"))
                    .select_from(edge.join(choice, sa.and_(choice.c.node_id == edge.c.src, choice.c.edge_id == edge.c.id))
                                 .join(seats, sa.and_(seats.c.policy_id == choice.c.policy_id, seats.c.sign == 1)))
                    .where(_edges("move")))
        parts = [part for part, wanted in ((best, self.t.maximising), (followed, self.t.following)) if wanted]
        picked = (sa.union_all(*parts) if len(parts) > 1 else parts[0]).subquery("picked")
        taken, to = edge.alias("taken"), seats.alias("to")
        after = term.alias("after")
        share = sa.case((after.c.anchor < 0, taken.c.reward), else_=0.0) + taken.c.sign * after.c.coeff
        joined = (picked.join(taken, sa.and_(taken.c.id == picked.c.edge_id, taken.c.id.between(FIRST, LAST)))
                  .join(to, sa.and_(to.c.node_id == picked.c.seat, to.c.sign == taken.c.sign))
                  .join(after, sa.and_(after.c.node_id == taken.c.dst, after.c.seat == to.c.to_seat)))
        rows = sa.select(picked.c.src, picked.c.seat, after.c.anchor, share, picked.c.edge_id).select_from(joined)
        return sa.insert(into).from_select(["node_id", "seat", "anchor", "coeff", "edge_id"], rows)

    def layer(self, connection: sa.Connection, span: sa.Row, anchors: bool) -> None:
        """Value the layer ``span``; an anchor layer's rows go to the ``new`` table."""
        t = self.t
        into = t.new.name if anchors else t.term.name
        bounds = {"first_edge": span.first_edge, "last_edge": span.last_edge}
        if span.rolls:
            connection.execute(self.chance[into], bounds)
        if span.moves:
            connection.execute(self.decide[into], bounds)


def _pass(connection: sa.Connection, statements: _Statements, part: Component) -> None:
    """Value the component's layers, deepest first; its anchors' rows go to the ``new`` table."""
    for span in reversed(part.spans):
        statements.layer(connection, span, part.cyclic and span.layer == part.first)


class _Component:
    """The statements that solve one cyclic component around its passes (Newton's method on the anchors)."""

    def __init__(self, connection: sa.Connection, statements: _Statements, part: Component, graph_id: int):
        self.connection, self.statements, self.part, self.t = connection, statements, part, statements.t
        self.graph_id = graph_id
        first, last = part.spans[0].first_edge, part.spans[-1].last_edge
        self.bounds = {"first_edge": first, "last_edge": last}
        self.inside = sa.select(edge.c.src).where(edge.c.id.between(first, last))
        anchor_span = part.spans[0]
        self.anchors = [row[0] for row in connection.execute(
            sa.select(edge.c.src).where(edge.c.id.between(anchor_span.first_edge, anchor_span.last_edge))
            .distinct().order_by(edge.c.src))]
        seats = self.t.seats
        self.variables = [anchor * seats + seat for anchor in self.anchors for seat in range(seats)]
        self.index = {variable: i for i, variable in enumerate(self.variables)}

    def first_guess(self, start: float, guess: Guess | None) -> object:
        """Return the first guess of each variable: the (weighted) mean value, for the same seat, of the solved
        positions that ``guess`` names for its anchor, else ``start``."""
        import numpy as np

        seats = self.t.seats
        found = np.full(len(self.variables), start)
        if guess is None or not self.anchors:
            return found
        named = named_positions(self.connection, self.graph_id, guess, node.c.id.in_(self.anchors))
        term = self.t.term
        wanted = sorted({node_id for ids in named.values() for node_id in ids})
        solved = sa.select(term.c.node_id, term.c.seat, term.c.coeff).where(term.c.node_id.in_(wanted),
                                                                            term.c.anchor == VALUE)
        values: dict[int, list[float]] = {}
        for node_id, seat, value in self.connection.execute(solved):
            values.setdefault(node_id, [start] * seats)[seat] = value
        for i, variable in enumerate(self.variables):
            anchor, seat = divmod(variable, seats)
            found[i] = mean_guess(named.get(anchor, {}), values, [start] * seats)[seat]
        return found

    def start_pass(self, guess: Sequence[float]) -> None:
        """Forget the component's terms and moves; put the anchors' guesses in."""
        t, seats = self.t, self.t.seats
        self.connection.execute(sa.delete(t.term).where(t.term.c.node_id.in_(self.inside)))
        self.connection.execute(sa.delete(t.new))
        rows = []
        for variable, x in zip(self.variables, guess):
            anchor, seat = divmod(variable, seats)
            rows += [{"node_id": anchor, "seat": seat, "anchor": VALUE, "coeff": float(x)},
                     {"node_id": anchor, "seat": seat, "anchor": ONE, "coeff": 0.0},
                     {"node_id": anchor, "seat": seat, "anchor": variable, "coeff": 1.0}]
        self.connection.execute(sa.insert(t.term), rows)

    def anchor_map(self) -> tuple[object, object, object]:
        """Return the pass's ``T(x)``, ``c`` and ``M`` (``T(x) = c + M x`` along the moves taken)."""
        import numpy as np

        size, seats = len(self.variables), self.t.seats
        values, constants, matrix = np.zeros(size), np.zeros(size), np.zeros((size, size))
        new = self.t.new
        for node_id, seat, anchor, coeff in self.connection.execute(
                sa.select(new.c.node_id, new.c.seat, new.c.anchor, new.c.coeff)):
            row = self.index[node_id * seats + seat]
            if anchor == VALUE:
                values[row] = coeff
            elif anchor == ONE:
                constants[row] = coeff
            else:
                matrix[row, self.index[anchor]] += coeff
        return values, constants, matrix

    def value_at(self, solution: Sequence[float]) -> None:
        """Put in ``solved`` each node's value when the anchors are worth ``solution``."""
        t = self.t
        self.connection.execute(sa.delete(t.guess))
        self.connection.execute(sa.insert(t.guess), [{"node_id": ONE, "x": 1.0}] + [
            {"node_id": variable, "x": float(x)} for variable, x in zip(self.variables, solution)])
        self.connection.execute(sa.delete(t.solved))
        for terms, which in ((t.term, t.term.c.node_id.in_(self.inside) & t.term.c.node_id.not_in(self.anchors)),
                             (t.new, sa.true())):  # the anchors' own terms, with their moves, are in ``new``
            rows = (sa.select(terms.c.node_id, terms.c.seat, sa.func.sum(terms.c.coeff * t.guess.c.x),
                              sa.func.max(terms.c.edge_id))
                    .select_from(terms.join(t.guess, t.guess.c.node_id == terms.c.anchor))
                    .where(which).group_by(terms.c.node_id, terms.c.seat))
            self.connection.execute(sa.insert(t.solved).from_select(["node_id", "seat", "value", "edge_id"], rows))

    def gap(self) -> float:
        """Return by how much the best move beats the one taken, at most, at the solved values (0 when the
        moves taken are best, which makes the solved values the component's exact solution)."""
        if not self.t.maximising:
            return 0.0
        t = self.t
        seats, solved, term = t.seat_map, t.solved, t.term
        worth = sa.func.coalesce(solved.c.value, term.c.coeff)
        q = edge.c.reward + edge.c.sign * worth
        moves = (sa.select(edge.c.src, seats.c.node_id.label("seat"), edge.c.id, q.label("q"),
                           sa.func.max(q).over(partition_by=(edge.c.src, seats.c.node_id)).label("best"))
                 .select_from(edge.join(seats, sa.and_(seats.c.sign == edge.c.sign, seats.c.policy_id.is_(None)))
                              .outerjoin(solved, sa.and_(solved.c.node_id == edge.c.dst, solved.c.seat == seats.c.to_seat))
                              .outerjoin(term, sa.and_(term.c.node_id == edge.c.dst, term.c.seat == seats.c.to_seat,
                                                       term.c.anchor == VALUE)))
                 .where(_edges("move")).subquery())
        taken = moves.join(solved, sa.and_(solved.c.node_id == moves.c.src, solved.c.seat == moves.c.seat,
                                           solved.c.edge_id == moves.c.id))
        found = self.connection.execute(sa.select(sa.func.max(moves.c.best - moves.c.q)).select_from(taken),
                                        self.bounds).scalar_one()
        return float(found or 0.0)

    def keep_solved(self) -> None:
        """Replace the component's terms by its solved values (VALUE and ONE, as any solved node)."""
        t = self.t
        self.connection.execute(sa.delete(t.term).where(t.term.c.node_id.in_(self.inside)))
        for anchor in (VALUE, ONE):
            rows = sa.select(t.solved.c.node_id, t.solved.c.seat, sa.literal(anchor), t.solved.c.value,
                             t.solved.c.edge_id if anchor == VALUE else sa.null())
            self.connection.execute(sa.insert(t.term).from_select(["node_id", "seat", "anchor", "coeff", "edge_id"],
                                                                  rows))


def _solve_component(connection: sa.Connection, statements: _Statements, part: Component, start: float,
                     convergence: Convergence, graph_id: int, first_guess: Guess | None = None) -> float:
    """Solve one cyclic component exactly; return the mean of its anchors' values (the next one's first guess).

    Each pass values the component at the guess; the next guess solves the
    anchors' linear system for the moves taken. When, at that solution, no
    move beats the one taken, it is the component's exact solution (the
    values are the moves' own, linear in the anchors) and no further pass is
    needed; otherwise it is the next guess.
    """
    import numpy as np

    work = _Component(connection, statements, part, graph_id)
    size = len(work.variables)
    guess = work.first_guess(start, first_guess)
    fallbacks = 0
    for passes in range(1, MAX_PASSES + 1):
        work.start_pass(guess)
        _pass(connection, statements, part)
        values, constants, matrix = work.anchor_map()
        try:
            solution = np.linalg.solve(np.eye(size) - matrix, constants)
            if not np.all(np.isfinite(solution)):
                raise np.linalg.LinAlgError("not finite")
        except np.linalg.LinAlgError:  # the moves taken never leave the component: a value-iteration step
            guess = values
            fallbacks += 1
            continue
        work.value_at(solution)
        residual = max(work.gap(), float(np.max(np.abs(constants + matrix @ solution - solution))) if size else 0.0)
        if residual <= RESIDUAL_TOLERANCE * (1 + float(np.max(np.abs(solution), initial=0.0))):
            break
        guess = solution
    else:
        raise NotConverged(f"cyclic layers {part.first}..{part.last} did not settle in {MAX_PASSES} passes")
    work.keep_solved()
    convergence.add(passes, residual, fallbacks)
    return float(np.mean(solution)) if size else start


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
        progress: Progress | None = None, first_guess: Guess | None = None) -> tuple[_Tables, Convergence]:
    """Value every node of the graph for each seat; return the tables (``term`` rows of anchor
    :data:`VALUE` hold the values and, at decision nodes, the moves taken) and how the components converged.
    ``first_guess`` names, for a position a component loops back to, the positions solved before whose
    (weighted) mean value starts Newton's method there (:func:`guess_weights`); it only saves passes."""
    t = _Tables(connection, seats)
    guess = first_guess if t.maximising else None  # fixed moves: one pass from any guess
    for anchor in (VALUE, ONE):
        terminals = sa.select(node.c.id, t.seat_map.c.node_id, sa.literal(anchor), node.c.payoff).select_from(
            node.join(t.seat_map, t.seat_map.c.sign == 1)).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
        connection.execute(sa.insert(t.term).from_select(["node_id", "seat", "anchor", "coeff"], terminals))
    average = sa.select(sa.func.avg(node.c.payoff)).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
    start = connection.execute(average).scalar_one() or 0.0
    convergence = Convergence()
    statements = _Statements(t)
    for part in components(connection, graph_id):
        if part.cyclic:
            start = _solve_component(connection, statements, part, start, convergence, graph_id, guess)
        else:
            _pass(connection, statements, part)
        if progress is not None:
            progress(len(part.spans))
    return t, convergence


def values_of(t: _Tables, seat: int = 0) -> sa.Select:
    """Return the SELECT of ``(node_id, value)`` for ``seat`` after :func:`solve_components`."""
    return sa.select(t.term.c.node_id, t.term.c.coeff).where(t.term.c.seat == seat, t.term.c.anchor == VALUE)


def moves_of(t: _Tables, seat: int = 0) -> sa.Select:
    """Return the SELECT of ``(node_id, edge_id)``, the moves ``seat`` takes, after :func:`solve_components`."""
    return sa.select(t.term.c.node_id, t.term.c.edge_id).where(t.term.c.seat == seat, t.term.c.anchor == VALUE,
                                                              t.term.c.edge_id.is_not(None))


def root_values(connection: sa.Connection, graph_id: int, seats: Sequence[Seat],
                progress: Progress | None = None) -> list[float]:
    """Return the root's value for each seat (nothing is stored): for a match of two policies, the first
    entry is the probability that the first seat, moving first, wins. ``progress`` counts the layers done."""
    t, _ = solve_components(connection, graph_id, seats, progress)
    found = dict(connection.execute(sa.select(t.term.c.seat, t.term.c.coeff)
                                    .where(t.term.c.node_id == 0, t.term.c.anchor == VALUE)).all())
    t.drop(connection)
    return [found[seat] for seat in range(len(seats))]


def head_to_head(connection: sa.Connection, graph_id: int, first: str, second: str,
                 progress: Progress | None = None) -> tuple[float, float]:
    """Return the exact probabilities that a player following stored policy ``first``, moving first, beats one
    following ``second``, and that ``second``, moving first, beats ``first`` (in a two-player zero-sum graph
    seen from the mover; one run, nothing stored): each seat is one player to move, and a pass leads to the
    other's. ``progress`` counts the layers done."""
    seats = [Seat(FOLLOW, find_policy(connection, graph_id, first).id, after_pass=1),
             Seat(FOLLOW, find_policy(connection, graph_id, second).id, after_pass=0)]
    first_moves, second_moves = root_values(connection, graph_id, seats, progress)
    return first_moves, second_moves
