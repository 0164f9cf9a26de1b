"""Where the parts of a game whose turn is stored once are in its stored graph: its state layers, the turn's
layers, root and ends, as every solver of such a game (the turn joined with its states, a race's state layers,
their matches, and the faster implementations a backend registers) reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.protocol import TERMINAL, TurnPolicy, TurnStructure
from dicegraph.store.catalog import find_node
from dicegraph.store.schema import edge, edges_of, layer_ranges, node
from dicegraph.store.scratch import temporary_table


@dataclass(frozen=True)
class TurnGraph:
    """Where the parts of a stored turn game are: layer spans and the node ids the solver needs."""

    graph_id: int
    structure: TurnStructure
    game_spans: dict[int, sa.Row]  # state layer -> its span (the state moves)
    turn_spans: list[sa.Row]  # the turn's layers with edges, first first
    root: int
    ends: dict[str, int]  # end key -> node id
    end_labels: dict[str, str]  # end key -> the label of the state moves through it (the structure's end_label)
    layer_ids: dict[int, tuple[int, int]]  # state layer -> first and last id of its non-terminal states (contiguous)
    turn_sources: dict[int, tuple[int, int]]  # turn layer -> lowest and highest node id its edges leave

    @classmethod
    def load(cls, connection: sa.Connection, graph_id: int, structure: TurnStructure) -> TurnGraph:
        """Return the parts of the turn game's graph ``graph_id``."""
        spans = layer_ranges(connection, graph_id)
        root = find_node(connection, graph_id, structure.root)
        ids = (sa.select(node.c.layer, sa.func.min(node.c.id), sa.func.max(node.c.id))
               .where(node.c.graph_id == graph_id, node.c.layer < root.layer, node.c.kind != TERMINAL)
               .group_by(node.c.layer))
        ends = dict(connection.execute(sa.select(node.c.key, node.c.id).where(  # the turn's terminals (after the
            node.c.graph_id == graph_id, node.c.id >= root.id, node.c.layer >= root.layer,  # states' ids)
            node.c.kind == TERMINAL).order_by(node.c.id)).all())
        turn_edges = edge.c.id.between(min(s.first_edge for s in spans if s.layer >= root.layer), spans[-1].last_edge)
        sources = (sa.select(edge.c.src_layer, sa.func.min(edge.c.src), sa.func.max(edge.c.src))
                   .where(edge.c.graph_id == graph_id, turn_edges).group_by(edge.c.src_layer))
        return cls(
            graph_id=graph_id,
            structure=structure,
            game_spans={span.layer: span for span in spans if span.layer < root.layer},
            turn_spans=[span for span in spans if span.layer >= root.layer],
            root=root.id,
            ends=ends,
            end_labels={key: structure.end_label(key) for key in ends},
            layer_ids={layer: (first, last) for layer, first, last in connection.execute(ids)},
            turn_sources={layer: (first, last) for layer, first, last in connection.execute(sources)},
        )

    def turn_edges(self) -> tuple[int, int]:
        """Return the first and last id of the turn's edges."""
        return self.turn_spans[0].first_edge, self.turn_spans[-1].last_edge

    def state_edges(self) -> tuple[int, int]:
        """Return the first and last id of the state moves (the edges of the state layers)."""
        return (min(span.first_edge for span in self.game_spans.values()),
                max(span.last_edge for span in self.game_spans.values()))

    def labelled_ends(self, connection: sa.Connection, name: str) -> sa.Table:
        """Return a new temporary table ``name(node_id, label)``: each of the turn's ends and the label of the state
        moves through it."""
        table = temporary_table(connection, name, sa.Column("label", sa.Text, nullable=False))
        connection.execute(sa.insert(table), [{"node_id": node_id, "label": self.end_labels[key]}
                                              for key, node_id in self.ends.items()])
        return table

    @property
    def optimal(self) -> str:
        """Return the name of the turn's one policy that maximises (no end profits of its own): its optimum."""
        return next(p.name for p in self.structure.policies if p.end_profits is None)

    def policy(self, name: str) -> TurnPolicy:
        """Return the turn policy ``name``; raise BadParameter naming the known ones."""
        for declared in self.structure.policies:
            if declared.name == name:
                return declared
        known = ", ".join(p.name for p in self.structure.policies)
        raise BadParameter(f"unknown policy {name!r} (known: {known})")


def state_moves(graph: TurnGraph, game_layer: int, states: tuple[int, int]) -> sa.ColumnElement[bool]:
    """Return the condition selecting the moves of the states of ``game_layer`` with node ids in ``states``
    (first, last)."""
    return sa.and_(edges_of(graph.game_spans[game_layer], "move"), edge.c.src.between(*states))


def graph_payoffs(connection: sa.Connection, graph: TurnGraph) -> list[float]:
    """Return the payoffs of the terminal turn states (where the game is over)."""
    root_layer = graph.turn_spans[0].layer
    return [row[0] for row in connection.execute(sa.select(node.c.payoff).where(
        node.c.graph_id == graph.graph_id, node.c.kind == "terminal", node.c.layer < root_layer))]
