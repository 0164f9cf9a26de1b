"""The whole outcome distribution of a game whose turn is stored once (School's and Yahtzee's final score), by reach
carried with the score so far, a state layer at a time, in set-based SQL.

From the start state (score 0, probability 1), for each state layer in order:

* the turn states of the layer that play reaches, with the probability of each score so far, are read once
  (``(state, score, reach)`` rows, summed);
* their turns are chosen as the policy's solve chooses them (:class:`dicegraph.store.solve.turns.TurnChoices`,
  the solve's own statements from the stored values of the states after them), a batch of states at a time (as
  many as the solve's, :attr:`dicegraph.store.backends.record.Backend.turn_batch_states`), and spread forward from the turn's root along the rolls and the moves
  chosen, one statement a turn layer, to the probability of each of the turn's ends from each state with the
  points its edges paid on the way (:func:`reach_ends`, the operation ``turn ends``: Spark folds a batch's turns
  backward and forward in one statement, ``store/backends/spark/outcome_fold.py``);
* each end leads, through the state's move labelled like it, to the next state with the points added: one
  statement joins the reached scores with the ends and the moves, and groups by the next state and score.

The game is over at the terminal states, whose payoff is added. The rows held are at most the layer's states
times the scores reachable so far (every score of an integer sheet: Yahtzee without bonuses scores 0 to 375),
and only states play reaches are played. ``progress`` counts the states played.
"""

from __future__ import annotations

import sqlalchemy as sa

from dicegraph.graphs.protocol import Progress
from dicegraph.store.backends import backend_of
from dicegraph.store.propagate import OUTCOME_DIGITS
from dicegraph.store.schema import edge, edges_of, node
from dicegraph.store.scratch import create_afresh, temporary_table
from dicegraph.store.solve.dispatch import dispatchable
from dicegraph.store.solve.turns import TurnChoices
from dicegraph.store.turn_graph import TurnGraph

def _table(connection: sa.Connection, name: str, *columns: sa.Column) -> sa.Table:
    """Return a new temporary table of insert-only rows (several a key, summed when read), indexed by its first
    column where joins do not hash."""
    first, *rest = columns
    first.index = not backend_of(connection).hashed_joins
    return create_afresh(connection, sa.Table(name, sa.MetaData(), first, *rest, prefixes=["TEMPORARY"]))


def turn_outcomes(connection: sa.Connection, graph: TurnGraph, name: str,
                  progress: Progress | None = None) -> dict[float, float]:
    """Return the outcome -> probability of whole games played by the turn policy ``name`` (solved and stored), from
    the start state: the points the state moves pay, added up, plus the payoff of the state the game ends in.
    Equal outcomes are added up; an outcome is rounded to :data:`dicegraph.store.propagate.OUTCOME_DIGITS`."""
    choices = TurnChoices(connection, graph, name)
    scores = _table(connection, "to_score", sa.Column("node_id", sa.Integer, nullable=False),
                    sa.Column("score", sa.Double, nullable=False), sa.Column("p", sa.Double, nullable=False))
    held = _table(connection, "to_held", sa.Column("state", sa.Integer, nullable=False),
                  sa.Column("score", sa.Double, nullable=False), sa.Column("p", sa.Double, nullable=False))
    ended = _table(connection, "to_ended", sa.Column("state", sa.Integer, nullable=False),
                   sa.Column("node_id", sa.Integer, nullable=False), sa.Column("points", sa.Double, nullable=False),
                   sa.Column("q", sa.Double, nullable=False))
    spread = _Spread(graph, choices)
    batch = temporary_table(connection, "to_batch")
    connection.execute(sa.insert(scores).values(node_id=0, score=0.0, p=1.0))  # the start: the first turn state
    for layer in sorted(graph.layer_ids):
        first, last = graph.layer_ids[layer]
        summed = (sa.select(scores.c.node_id, scores.c.score, sa.func.sum(scores.c.p))
                  .where(scores.c.node_id.between(first, last)).group_by(scores.c.node_id, scores.c.score))
        connection.execute(sa.insert(held).from_select(["state", "score", "p"], summed))
        reached = list(connection.execute(sa.select(held.c.state).distinct().order_by(held.c.state)).scalars())
        batch_states = backend_of(connection).turn_batch_states  # as many as a batch of the solve
        for start in range(0, len(reached), batch_states):
            states = reached[start:start + batch_states]
            connection.execute(sa.insert(batch), [{"node_id": state} for state in states])
            playing = sa.and_(edges_of(graph.game_spans[layer], "move"), edge.c.src.in_(sa.select(batch.c.node_id)))
            reach_ends(connection, graph, choices, spread, playing, batch, ended)
            connection.execute(sa.delete(batch))
            if progress is not None:
                progress(len(states))
        labels = choices.ends
        after = held.c.score + ended.c.points + edge.c.reward
        moved = (sa.select(edge.c.dst, after.label("score"), sa.func.sum(held.c.p * ended.c.q))
                 .select_from(held.join(ended, ended.c.state == held.c.state)
                              .join(labels, labels.c.node_id == ended.c.node_id)
                              .join(edge, sa.and_(edge.c.src == held.c.state, edge.c.label == labels.c.label)))
                 .where(edges_of(graph.game_spans[layer], "move"))
                 .group_by(edge.c.dst, after))
        connection.execute(sa.insert(scores).from_select(["node_id", "score", "p"], moved))
        for table in (held, ended):
            connection.execute(sa.delete(table))
    outcome = (scores.c.score + node.c.payoff).label("outcome")
    over = (sa.select(outcome, sa.func.sum(scores.c.p))
            .select_from(scores.join(node, sa.and_(node.c.graph_id == graph.graph_id, node.c.id == scores.c.node_id)))
            .where(node.c.kind == "terminal").group_by(outcome))
    found: dict[float, float] = {}
    for ending, probability in connection.execute(over).all():
        rounded = round(ending, OUTCOME_DIGITS) + 0.0
        found[rounded] = found.get(rounded, 0.0) + probability
    for table in (scores, held, ended, batch):
        table.drop(connection)
    spread.drop(connection)
    choices.drop(connection)
    return {ending: min(found[ending], 1.0) for ending in sorted(found)}


@dispatchable("turn ends")
def reach_ends(connection: sa.Connection, graph: TurnGraph, choices: TurnChoices, spread: _Spread,
               playing: sa.ColumnElement[bool], batch: sa.Table, into: sa.Table) -> None:
    """Add to ``into`` each (state, end, points)'s probability ``(state, node_id, points, q)``: the turns of the
    states in ``batch`` (their moves ``playing`` selects) played from the root by ``choices``' policy, its moves
    chosen as its solve chooses them, the points the turn's edges pay added on the way (``spread``'s tables)."""
    choices.choose(connection, playing)
    spread.run(connection, batch, into)


class _Spread:
    """The forward pass through the turn from a batch of states: the probability of reaching each turn node from
    the root, along the rolls and the moves :class:`TurnChoices` chose, a statement a kind of edge a turn layer;
    rows ``(node_id, state, r)``, insert-only (a node's rows, one from each edge into it, summed when its layer is
    spread)."""

    def __init__(self, graph: TurnGraph, choices: TurnChoices):
        self.graph, self.choices = graph, choices
        self.tables: tuple[sa.Table, sa.Table] | None = None  # the reach and the rolls' totals, made at the first run

    def _made(self, connection: sa.Connection) -> tuple[sa.Table, sa.Table]:
        """Return the reach table and the roll nodes' total weights (made and filled at the first call)."""
        if self.tables is None:
            reach = _table(connection, "to_reach", sa.Column("node_id", sa.Integer, nullable=False),
                           sa.Column("state", sa.Integer, nullable=False),
                           sa.Column("points", sa.Double, nullable=False), sa.Column("r", sa.Double, nullable=False))
            totals = temporary_table(connection, "to_total", sa.Column("weight", sa.Double, nullable=False))
            first, last = self.graph.turn_edges()
            connection.execute(sa.insert(totals).from_select(["node_id", "weight"], sa.select(
                edge.c.src, sa.func.sum(edge.c.weight)).where(edge.c.id.between(first, last), edge.c.kind == "roll")
                .group_by(edge.c.src)))
            self.tables = reach, totals
        return self.tables

    def _here(self, r: sa.Table, span: sa.Row) -> sa.Subquery:
        """Return the summed reach rows (``r``) of the nodes the edges of turn layer ``span`` leave."""
        return (sa.select(r.c.node_id, r.c.state, r.c.points, sa.func.sum(r.c.r).label("r"))
                .where(r.c.node_id.between(*self.graph.turn_sources[span.layer]))
                .group_by(r.c.node_id, r.c.state, r.c.points).subquery("here"))

    def run(self, connection: sa.Connection, batch: sa.Table, into: sa.Table) -> None:
        """Spread the turns of the states in ``batch`` from the root and add to ``into`` each (state, end)'s
        probability; empty the reach table."""
        (r, totals), chosen = self._made(connection), self.choices.chosen
        connection.execute(sa.insert(r).from_select(["node_id", "state", "points", "r"], sa.select(
            sa.literal(self.graph.root), batch.c.node_id, sa.literal(0.0, sa.Double), sa.literal(1.0, sa.Double))))
        for span in self.graph.turn_spans:
            in_span = edge.c.id.between(span.first_edge, span.last_edge)
            parts: list[sa.Select] = []
            if span.rolls:
                here = self._here(r, span)
                parts.append(sa.select(edge.c.dst, here.c.state, here.c.points + edge.c.reward,
                                       here.c.r * edge.c.weight / totals.c.weight)
                             .select_from(here.join(edge, edge.c.src == here.c.node_id)
                                          .join(totals, totals.c.node_id == edge.c.src))
                             .where(in_span, edge.c.kind == "roll"))
            if span.moves:
                here = self._here(r, span)
                parts.append(sa.select(edge.c.dst, here.c.state, here.c.points + edge.c.reward, here.c.r)
                             .select_from(here.join(chosen, sa.and_(chosen.c.node_id == here.c.node_id,
                                                                    chosen.c.state == here.c.state))
                                          .join(edge, edge.c.id == chosen.c.edge0))
                             .where(in_span))
            for part in parts:
                connection.execute(sa.insert(r).from_select(["node_id", "state", "points", "r"], part))
        ends = (sa.select(r.c.state, r.c.node_id, r.c.points, sa.func.sum(r.c.r))
                .where(r.c.node_id.in_(list(self.graph.ends.values())))
                .group_by(r.c.state, r.c.node_id, r.c.points))
        connection.execute(sa.insert(into).from_select(["state", "node_id", "points", "q"], ends))
        connection.execute(sa.delete(r))

    def drop(self, connection: sa.Connection) -> None:
        """Drop the tables made."""
        for table in self.tables or ():
            table.drop(connection)

