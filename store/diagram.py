"""One diagram from its options to a file: select the view (``export.py``), draw it (``render.py``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from dicegraph.store.catalog import find_policy
from dicegraph.store.export import diagram_title, neighbourhood, policy_view
from dicegraph.store.render import DEFAULT_DPI, Style, to_dot, write_diagram


ROOT_VIEW_DEPTH = 2  # steps from the root drawn where the policy view has nothing to show


@dataclass(frozen=True)
class Diagram:
    """What to draw: the view (policy or full, its extent) and how (layer boxes, labels).

    A game may name diagrams worth drawing in its module's ``diagrams`` dict
    (file stem -> these fields), e.g. a heuristic's pictures.
    """

    policy: str = "optimal"
    full: bool = False
    root: str | None = None
    depth: int | None = None
    to_layer: int | None = None
    busts: bool = False
    layers: bool = False
    move_labels: bool = False
    values: bool = False

    @classmethod
    def of(cls, options: dict[str, Any]) -> Diagram:
        """Return the diagram with ``options`` (unknown names raise TypeError)."""
        return cls(**options)

    @property
    def is_full(self) -> bool:
        """Whether this is the full view (asked for, or implied by a root)."""
        return self.full or self.root is not None


def draw_diagram(
    connection: sa.Connection,
    graph_row: sa.Row,
    diagram: Diagram,
    path: Path,
    *,
    max_nodes: int | None,
    renderer: str = "auto",
    dpi: int = DEFAULT_DPI,
) -> dict[str, Any]:
    """Write ``diagram`` of the stored graph to ``path``; return what was drawn and how.

    The policy must be evaluated. Returns ``{"file", "view", "policy", "nodes",
    "edges", "renderer", "seconds"}`` (seconds spent drawing, after the SQL); ``view`` is ``full`` where the
    policy view has no position to show (a game whose turn is stored once keeps its policy's choices out of the
    graph's rows): the full view around the root, ``depth`` deep (:data:`ROOT_VIEW_DEPTH` when not given), is
    drawn instead.
    """
    policy_id = find_policy(connection, graph_row.id, diagram.policy).id
    full, depth = diagram.is_full, diagram.depth
    view = None if full else policy_view(connection, graph_row.id, policy_id, busts=diagram.busts,
                                         to_layer=diagram.to_layer, max_nodes=max_nodes)
    if view is None or view.number_of_nodes() == 0:  # asked for, or no position the policy's rows reach (a
        depth = depth if full else depth or ROOT_VIEW_DEPTH  # turn stored once keeps its choices
        full = True                                          # apart): the root's view instead
        view = neighbourhood(connection, graph_row.id, diagram.root, depth, policy_id,
                             to_layer=diagram.to_layer, max_nodes=max_nodes)
    title = diagram_title(graph_row, diagram.policy, view, full=full, root=diagram.root,
                          depth=depth, to_layer=diagram.to_layer)
    started = time.perf_counter()
    style = Style(layers=diagram.layers, move_labels=diagram.move_labels, values=diagram.values, title=title)
    route = write_diagram(to_dot(view, style), path, renderer, dpi)
    return {"file": str(path), "view": "full" if full else "policy", "policy": diagram.policy,
            "nodes": view.number_of_nodes(), "edges": view.number_of_edges(), "renderer": route,
            "seconds": time.perf_counter() - started}

