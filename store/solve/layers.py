"""Backward induction and policy evaluation as set-based SQL, one layer at a time.

Terminals take their payoff. Then, from the deepest layer up, a chance node
takes ``SUM(weight * (reward + value(dst))) / denom`` over its roll edges, and
a decision node takes ``reward + value(dst)`` of its move: the move its policy
stores (evaluation), or the best move for the objective (solving), whose
value is the ``MAX`` (or ``MIN``) over the moves. The move a solve chooses is
the first one streamed by the builder (lowest edge id) among those within
:data:`dicegraph.graphs.protocol.TIE`, relative, of the best: a stable, documented tie-break
that floating-point noise cannot flip.

Each layer takes one statement per kind of node. A solve's decision
statement finds the best value with a window (``MAX(q) OVER (PARTITION BY
src)``) and keeps, in the same pass, the lowest edge id near it; the move
goes into the work table beside the value, so no second join looks for it.
A chance node divides by the sum of its roll weights, which the loader has
checked is its ``denom``, so no statement joins ``node``. The results go to
``value`` (with the reach computed by :mod:`dicegraph.store.propagate`) and ``choice``
once, at the end.

A solve may have a :class:`Goal` other than the payoff: a terminal is then
worth 1 where its payoff passes a test and 0 elsewhere, so the solve maximises
(or minimises) the probability of, say, a zero payoff (``payoff = 0``) or
scoring under a rival (``payoff < 11``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from dicegraph.graphs.protocol import OBJECTIVES, TIE, Progress
from dicegraph.store.backends import backend_of
from dicegraph.store.solve import cycles
from dicegraph.store.catalog import has_cycles
from dicegraph.store.errors import NotFound
from dicegraph.store.load import next_id, now
from dicegraph.store.propagate import propagate
from dicegraph.store.schema import choice, edge, edges_of, layer_ranges, node, policy, value
from dicegraph.store.scratch import values_table
from dicegraph.store.seats import FOLLOW, Seat
from dicegraph.store.solve.dispatch import dispatchable

TESTS = ("<", "<=", "=", ">=", ">")


@dataclass(frozen=True)
class Goal:
    """A terminal is worth 1 when ``payoff <test> threshold`` holds, else 0.

    >>> Goal("<", 11).text, Goal.parse("payoff <= 3.5")
    ('payoff < 11', Goal(test='<=', threshold=3.5))
    """

    test: str
    threshold: float

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ValueError(f"goal test must be one of {TESTS}, not {self.test!r}")

    @property
    def text(self) -> str:
        """Return the goal as stored in ``policy.goal``, e.g. ``'payoff = 0'``."""
        return f"payoff {self.test} {self.threshold:g}"

    @classmethod
    def parse(cls, text: str) -> Goal:
        """Return the goal that :attr:`text` wrote."""
        _, test, threshold = text.split()
        return cls(test, float(threshold))

    def worth(self, payoff: sa.ColumnElement) -> sa.ColumnElement:
        """Return the SQL expression of a terminal's worth: 1.0 when the test holds, else 0.0."""
        holds = {"<": payoff < self.threshold, "<=": payoff <= self.threshold, "=": payoff == self.threshold,
                 ">=": payoff >= self.threshold, ">": payoff > self.threshold}[self.test]
        return sa.case((holds, 1.0), else_=0.0)


def chance_values(connection: sa.Connection, work: sa.Table, span: sa.Row, keys: Sequence[str] = ()) -> None:
    """Insert into ``work`` the value of each chance node of the layer ``span``, from its children's rows.

    ``keys`` name further key columns of ``work`` (a sweep's ``goal``): each
    is a separate induction sharing the statements. The roll weights of a
    chance node add up to its denom (checked at load), so there is no join
    with ``node``.
    """
    extra = [work.c[key] for key in keys]
    rows = (
        sa.select(*extra, edge.c.src,
                  sa.func.sum(edge.c.weight * (edge.c.reward + work.c.value)) / sa.func.sum(edge.c.weight))
        .select_from(edge.join(work, work.c.node_id == edge.c.dst))
        .where(edges_of(span, "roll"))
        .group_by(*extra, edge.c.src)
    )
    connection.execute(sa.insert(work).from_select([*keys, "node_id", "value"], rows))


def best_move_rows(after: sa.FromClause, worth: str | Sequence[str], span: sa.Row, objective: str,
                   keys: Sequence[str] = (), grouped: bool = False,
                   carried: Sequence[Sequence[sa.ColumnElement[float]]] = (),
                   edges: sa.FromClause = edge) -> sa.Select:
    """Return the SELECT of ``(*keys, src, best, edge_id)``: each decision node's best move in the layer ``span``.

    A move is worth ``reward + after.<worth>`` of the node it leads to
    (``after.node_id``, one row per value of ``keys``). The best comes from a
    window over the node's moves; the move taken is the lowest edge id within
    :data:`TIE` of it, in the same statement. With ``grouped`` the
    best comes from a GROUP BY joined back to the moves instead of a window:
    the same rows, faster where groups are hashed (DuckDB: 15 % less time for
    a turn's decisions), slower where they are sorted (SQLite).

    With several worths (columns of ``after``, each a policy's), one window
    and one grouping serve them all: the columns are ``(*keys, src, best_0,
    edge_id_0, best_1, edge_id_1, ...)``. The last grouping only sees the
    moves near the best of some worth (half of them, in a layer of School's turn).

    ``carried`` (with ``grouped``, on DuckDB, which has ``arg_min``) gives, for
    each worth, expressions over ``edge`` and ``after`` to take from the move
    chosen: they follow as more columns, worth by worth, so no second
    statement joins the chosen moves back to the values they lead to. The moves are read from ``edges`` (the
    ``edge`` table, or a copy of the rows of the layer's graph, which the ``carried`` expressions then name).
    """
    worths = [worth] if isinstance(worth, str) else list(worth)
    best_of = sa.func.max if objective == "max" else sa.func.min
    extra = [after.c[key] for key in keys]
    qs = [(edges.c.reward + after.c[column]).label(f"q{i}") for i, column in enumerate(worths)]
    carry = [(expression.label(f"carried{i}_{j}"), i) for i, expressions in enumerate(carried)
             for j, expression in enumerate(expressions)]
    scored = (sa.select(*extra, edges.c.src, edges.c.id, *qs, *(column for column, _ in carry))
              .select_from(edges.join(after, after.c.node_id == edges.c.dst)).where(edges_of(span, "move", edges)))
    if grouped:
        moves_cte = scored.cte("moves")
        group = [moves_cte.c.src, *(moves_cte.c[key] for key in keys)]
        bests = sa.select(*group, *(best_of(moves_cte.c[f"q{i}"]).label(f"best{i}") for i in range(len(qs)))) \
            .group_by(*group).subquery("bests")
        moves: sa.FromClause = (
            sa.select(*group, moves_cte.c.id, *(moves_cte.c[f"q{i}"] for i in range(len(qs))),
                      *(moves_cte.c[column.name] for column, _ in carry),
                      *(bests.c[f"best{i}"] for i in range(len(qs))))
            .select_from(moves_cte.join(bests, sa.and_(*(bests.c[c.name] == c for c in group))))
            .subquery())
    else:
        if carry:
            raise ValueError("carried columns need the grouped form (and a backend with arg_min)")
        moves = scored.add_columns(
            # the node first: the moves come in edge id order, the nodes' order, which SQLite sorts a third faster
            *(best_of(q.element).over(partition_by=(edges.c.src, *extra)).label(f"best{i}") for i, q in enumerate(qs))
        ).subquery()
    outer = [moves.c[key] for key in keys]

    def near_best(i: int) -> sa.ColumnElement[bool]:
        best, q = moves.c[f"best{i}"], moves.c[f"q{i}"]
        slack = TIE * (1 + sa.func.abs(best))
        return q >= best - slack if objective == "max" else q <= best + slack

    near_some = sa.or_(*(near_best(i) for i in range(len(worths))))  # what the grouping below needs of a node's moves
    if len(worths) == 1 and not carry:
        picked = [sa.func.max(moves.c.best0), sa.func.min(moves.c.id)]
        return sa.select(*outer, moves.c.src, *picked).where(near_some).group_by(moves.c.src, *outer)
    chosen = [sa.case((near_best(i), moves.c.id)) for i in range(len(worths))]  # the lowest one is the move taken
    picked = [column for i in range(len(worths)) for column in (sa.func.max(moves.c[f"best{i}"]), sa.func.min(chosen[i]))]
    picked += [sa.func.arg_min(moves.c[column.name], chosen[i]) for column, i in carry]
    return sa.select(*outer, moves.c.src, *picked).where(near_some).group_by(moves.c.src, *outer)


def best_moves(connection: sa.Connection, work: sa.Table, span: sa.Row, objective: str, keys: Sequence[str] = ()) -> None:
    """Insert into ``work`` each decision node of the layer ``span``: its best value and the move it takes.

    One statement (:func:`best_move_rows`); ``keys`` as in :func:`chance_values`.
    """
    rows = best_move_rows(work, "value", span, objective, keys)
    connection.execute(sa.insert(work).from_select([*keys, "node_id", "value", "edge_id"], rows))


def _chosen_values(connection: sa.Connection, work: sa.Table, chosen: sa.FromClause, span: sa.Row,
                   keys: Sequence[str] = ()) -> None:
    """Insert into ``work`` each decision node of the layer ``span`` worth the move ``chosen`` takes there;
    ``keys`` as in :func:`chance_values` (columns of ``chosen`` too)."""
    rows = (
        sa.select(*(chosen.c[key] for key in keys), edge.c.src, edge.c.reward + work.c.value, edge.c.id)
        .select_from(
            edge.join(chosen, sa.and_(chosen.c.node_id == edge.c.src, chosen.c.edge_id == edge.c.id)).join(
                work, sa.and_(work.c.node_id == edge.c.dst, *(work.c[key] == chosen.c[key] for key in keys))
            )
        )
        .where(edges_of(span, "move"))
    )
    connection.execute(sa.insert(work).from_select([*keys, "node_id", "value", "edge_id"], rows))


def _induce(
    connection: sa.Connection,
    graph_id: int,
    objective: str | None,
    goal: Goal | None,
    chosen: sa.FromClause | None,
    progress: Progress | None,
) -> tuple[sa.Table, list[sa.Row]]:
    """Backward induction into a temporary table of node values; return it with the graph's layer spans.

    The table's ``edge_id`` is the move taken at each decision node: the one
    in ``chosen`` when ``objective`` is None, else the best move.
    """
    work = values_table(connection)
    worth = node.c.payoff if goal is None else goal.worth(node.c.payoff)
    terminals = sa.select(node.c.id, worth).where(node.c.graph_id == graph_id, node.c.kind == "terminal")
    connection.execute(sa.insert(work).from_select(["node_id", "value"], terminals))
    spans = layer_ranges(connection, graph_id)
    for span in reversed(spans):  # the deepest layer first
        if span.rolls:
            chance_values(connection, work, span)
        if span.moves and objective is None:
            assert chosen is not None
            _chosen_values(connection, work, chosen, span)
        elif span.moves:
            best_moves(connection, work, span, objective)
        if progress is not None:
            progress(1)
    return work, spans


def _run(
    connection: sa.Connection,
    policy_row: sa.Row,
    solving: bool,
    progress: Progress | None,
    first_guess: cycles.Guess | None = None,
) -> str | None:
    """Compute and store values, reach and (when solving) choices of one policy; return how its cyclic
    components converged (:meth:`dicegraph.store.convergence.Convergence.record`), None for a graph without cycles."""
    policy_id, graph_id = policy_row.id, policy_row.graph_id
    goal = None if policy_row.goal is None else Goal.parse(policy_row.goal)
    objective = policy_row.objective if solving else None
    cyclic = has_cycles(connection, graph_id)
    if cyclic and goal is not None:
        raise NotFound("graphs with cycles are solved for their payoff (no --goal)")
    forget(connection, [policy_id], (value, choice) if solving else (value,))
    if cyclic:
        return store_cyclic(connection, graph_id, [policy_id], objective, progress, first_guess)[policy_id]
    store_layered(connection, graph_id, [policy_id], objective, goal, progress)
    return None


@dispatchable("layered")
def store_layered(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int], objective: str | None,
                  goal: Goal | None, progress: Progress | None) -> None:
    """Store the values and reach of the policies ``policy_ids`` of graph ``graph_id`` (without cycles; their rows
    forgotten): solving for ``objective``, the one policy's choices too; evaluating (``objective`` None), each
    policy's stored choices, where they have no ``goal`` in one pass for all (every statement carries the policy as
    a key column, as :mod:`dicegraph.store.sweep` carries goals, so k policies cost the statements of one).
    ``progress`` is called after each layer of each policy. Returns nothing."""
    backend_of(connection).plan_whole_layers(connection)  # PostgreSQL: choices just stored have no statistics yet
    if objective is None and goal is None:
        _evaluate_together(connection, graph_id, policy_ids, progress)
        return
    (policy_id,) = policy_ids
    if objective is None:
        stored = sa.select(choice.c.node_id, choice.c.edge_id).where(choice.c.policy_id == policy_id).subquery()
    else:
        stored = None
    work, spans = _induce(connection, graph_id, objective, goal, stored, progress)
    if objective is not None:
        picked = sa.select(sa.literal(policy_id), work.c.node_id, work.c.edge_id).where(work.c.edge_id.is_not(None))
        connection.execute(sa.insert(choice).from_select(["policy_id", "node_id", "edge_id"], picked))
    propagated = propagate(connection, graph_id, spans, work)
    reach = propagated.by_node
    rows = sa.select(sa.literal(policy_id), work.c.node_id, work.c.value, sa.func.coalesce(reach.c.reach, 0.0)).select_from(
        work.outerjoin(reach, reach.c.node_id == work.c.node_id)
    )
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value", "reach"], rows))
    for table in (work, propagated.table):
        table.drop(connection)


@dispatchable("cyclic")
def store_cyclic(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int], objective: str | None,
                 progress: Progress | None, first_guess: cycles.Guess | None = None) -> dict[int, str]:
    """Store the values (reach unknown: a position may recur) of the policies ``policy_ids`` of graph ``graph_id``
    (with cycles; their rows forgotten), in self-play: solving for ``objective``, the one policy's choices too;
    evaluating (``objective`` None), each policy's stored choices. Return how each policy's cyclic components
    converged (policy id -> :meth:`dicegraph.store.convergence.Convergence.record`). ``first_guess`` (key -> the
    positions whose values start Newton's method there) saves passes; the answers are the same without it."""
    records = {}
    for policy_id in policy_ids:
        seat = Seat.maximising() if objective is not None else Seat(FOLLOW, policy_id)
        tables, convergence = cycles.solve_components(connection, graph_id, [seat], progress, first_guess,
                                                      objective=objective or "max")
        values = cycles.values_of(tables).subquery()
        connection.execute(sa.insert(value).from_select(
            ["policy_id", "node_id", "value", "reach"],
            sa.select(sa.literal(policy_id), values.c.node_id, values.c.coeff, sa.null())))
        if objective is not None:
            moves = cycles.moves_of(tables).subquery()
            connection.execute(sa.insert(choice).from_select(
                ["policy_id", "node_id", "edge_id"], sa.select(sa.literal(policy_id), moves.c.node_id, moves.c.edge_id)))
        tables.drop(connection)
        records[policy_id] = convergence.record()
    return records


def forget(connection: sa.Connection, policy_ids: Sequence[int], tables: Sequence[sa.Table]) -> None:
    """Delete the rows of the policies ``policy_ids`` from ``tables``, where they have any, one statement a table
    (on Spark a DELETE rewrites the whole table)."""
    for table in tables:
        if connection.execute(sa.select(table.c.policy_id).where(table.c.policy_id.in_(policy_ids)).limit(1)).first():
            connection.execute(sa.delete(table).where(table.c.policy_id.in_(policy_ids)))


def solved_outcomes(connection: sa.Connection, graph_id: int, objective: str, goal: Goal | None = None) -> dict[float, float]:
    """Solve without storing anything; return the optimal policy's terminal payoff -> probability.

    For the many throw-away solves of an analysis (one per rival score, say):
    the policy, its values and its reach stay in temporary tables.
    """
    work, spans = _induce(connection, graph_id, objective, goal, None, None)
    propagated = propagate(connection, graph_id, spans, work)
    reach = propagated.by_node
    query = (
        sa.select(node.c.payoff, sa.func.sum(reach.c.reach))
        .select_from(reach.join(node, sa.and_(node.c.graph_id == graph_id, node.c.id == reach.c.node_id)))
        .where(node.c.kind == "terminal")
        .group_by(node.c.payoff)
        .order_by(node.c.payoff)
    )
    outcomes = {payoff: probability for payoff, probability in connection.execute(query)}
    for table in (work, propagated.table):
        table.drop(connection)
    return outcomes


def solve(
    connection: sa.Connection,
    graph_id: int,
    objective: str = "max",
    name: str = "optimal",
    progress: Progress | None = None,
    goal: Goal | None = None,
    first_guess: cycles.Guess | None = None,
) -> int:
    """Solve the graph for ``objective``; store policy ``name``, its choices, values and reach; return its id.

    With a ``goal``, terminals are worth 1 where it holds (values are then
    probabilities). A policy of that name made by an earlier solve is
    replaced; an agent's name is refused. The policy is not listed
    (``unfinished_since``) until its rows are all stored: where there are no
    transactions (Spark) a solve that stops midway is never listed, and the
    next solve of that name starts it again. ``progress`` is called with 1 after
    each layer. ``first_guess`` (key -> the positions whose values start Newton's
    method there, the game's ``first_guess`` on the graph's parameters) saves a
    graph with cycles passes; the answers are the same without it.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, not {objective!r}")
    policy_id = record_solve(connection, graph_id, name, objective, None if goal is None else goal.text)
    convergence = _run(connection, _policy_row(connection, policy_id), True, progress, first_guess)
    finish_solve(connection, policy_id, convergence)
    return policy_id


def record_solve(connection: sa.Connection, graph_id: int, name: str, objective: str, goal: str | None = None,
                 responds_to: int | None = None) -> int:
    """Return the id of the solved policy ``name`` of graph ``graph_id``, its record written for ``objective``,
    ``goal`` and the policy it ``responds_to`` (a best response): created, or an earlier solve's replaced (an
    agent's name is refused), and not listed until :func:`finish_solve`."""
    old = connection.execute(sa.select(policy).where(policy.c.graph_id == graph_id, policy.c.name == name)).first()
    if old is not None and old.method != "solve":
        raise NotFound(f"policy {name!r} is one of the builder's agents; give the solved policy another name")
    record = {"objective": objective, "created_at": now(), "goal": goal, "responds_to": responds_to,
              "unfinished_since": now()}
    if old is None:
        policy_id = next_id(connection, policy)
        connection.execute(sa.insert(policy).values(id=policy_id, graph_id=graph_id, name=name, method="solve",
                                                    **record))
    else:
        policy_id = old.id
        connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(**record))
    return policy_id


def finish_solve(connection: sa.Connection, policy_id: int, convergence: str | None) -> None:
    """List the policy ``policy_id`` whose rows are all stored, with how its cyclic components converged."""
    connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(unfinished_since=None,
                                                                                convergence=convergence))


def _policy_row(connection: sa.Connection, policy_id: int) -> sa.Row:
    return connection.execute(sa.select(policy).where(policy.c.id == policy_id)).one()


def evaluate(connection: sa.Connection, policy_id: int, progress: Progress | None = None) -> None:
    """Store every node's value (under the policy's goal, if any) and reach under its stored choices."""
    convergence = _run(connection, _policy_row(connection, policy_id), False, progress)
    if convergence is not None:
        connection.execute(sa.update(policy).where(policy.c.id == policy_id).values(convergence=convergence))


def evaluate_all(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int],
                 progress: Progress | None = None) -> None:
    """Store every node's value and reach under each of the stored policies ``policy_ids`` of graph ``graph_id``
    (as :func:`evaluate` does for one): those without a goal together (:func:`store_layered`, or on a graph with
    cycles :func:`store_cyclic`, which a backend may fold side by side), those with one alone. ``progress`` counts
    the layers of each policy."""
    rows = connection.execute(sa.select(policy.c.id, policy.c.goal).where(policy.c.id.in_(list(policy_ids)))).all()
    together = [policy_id for policy_id, goal in rows if goal is None]
    for policy_id in policy_ids:
        if policy_id not in together:
            evaluate(connection, policy_id, progress)
    if not together:
        return
    forget(connection, together, (value,))
    if not has_cycles(connection, graph_id):
        store_layered(connection, graph_id, together, None, None, progress)
        return
    records = store_cyclic(connection, graph_id, together, None, progress)
    connection.execute(sa.update(policy).where(policy.c.id.in_(list(records))).values(  # one statement for all
        convergence=sa.case(records, value=policy.c.id)))


def _evaluate_together(connection: sa.Connection, graph_id: int, policy_ids: Sequence[int],
                       progress: Progress | None) -> None:
    """Store the values and reach of the goal-less policies ``policy_ids`` of an acyclic graph, in one pass
    (:func:`store_layered`)."""
    work = values_table(connection, "policy_id")
    terminals = (sa.select(policy.c.id, node.c.id, node.c.payoff).select_from(node.join(policy, sa.true()))
                 .where(node.c.graph_id == graph_id, node.c.kind == "terminal", policy.c.id.in_(policy_ids)))
    connection.execute(sa.insert(work).from_select(["policy_id", "node_id", "value"], terminals))
    chosen = sa.select(choice).where(choice.c.policy_id.in_(policy_ids)).subquery("chosen")
    spans = layer_ranges(connection, graph_id)
    for span in reversed(spans):  # the deepest layer first
        if span.rolls:
            chance_values(connection, work, span, keys=("policy_id",))
        if span.moves:
            _chosen_values(connection, work, chosen, span, keys=("policy_id",))
        if progress is not None:
            progress(len(policy_ids))
    propagated = propagate(connection, graph_id, spans, chosen, key="policy_id", key_values=policy_ids)
    reach = propagated.by_node
    rows = sa.select(work.c.policy_id, work.c.node_id, work.c.value, sa.func.coalesce(reach.c.reach, 0.0)).select_from(
        work.outerjoin(reach, sa.and_(reach.c.node_id == work.c.node_id, reach.c.policy_id == work.c.policy_id)))
    connection.execute(sa.insert(value).from_select(["policy_id", "node_id", "value", "reach"], rows))
    for table in (work, propagated.table):
        table.drop(connection)


def evaluated_among(connection: sa.Connection, policy_ids: Sequence[int]) -> set[int]:
    """Return those of ``policy_ids`` whose values (and reach) are stored: a value at the root (one statement)."""
    if not policy_ids:
        return set()
    stored = sa.select(value.c.policy_id).where(value.c.policy_id.in_(list(policy_ids)), value.c.node_id == 0)
    return set(connection.execute(stored).scalars())
