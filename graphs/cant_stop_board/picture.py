"""The Can't Stop board as an SVG picture: eleven columns, your markers, this turn's runners, claimed columns.

>>> from dicegraph.graphs.cant_stop_board.game import parse_board
>>> svg = board_svg(parse_board("7:3>5,8:>2,12:x"))
>>> svg.startswith("<svg") and svg.count('class="marker"'), svg.count('class="runner"'), svg.count('class="claimed"')
(1, 2, 1)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from dicegraph.graphs.cant_stop.game import LENGTHS
from dicegraph.graphs.cant_stop_board.game import Board

CELL = 24  # pixels a step takes
MARGIN = 20
TALLEST = max(LENGTHS.values())
COLOURS = {"cell": "#f4f1e8", "claimed": "#bbbbbb", "marker": "#1f5fa8", "runner": "#ffffff", "line": "#555555"}


def board_svg(board: Board) -> str:
    """Return an SVG of ``board``: columns 2..12, steps from the bottom up.

    Your marker is a filled disc, a runner an open one, a claimed column grey.
    """
    placed = dict(board.runners)
    width, height = 2 * MARGIN + len(LENGTHS) * CELL, 2 * MARGIN + (TALLEST + 1) * CELL
    svg = ET.Element("svg", xmlns="http://www.w3.org/2000/svg", width=str(width), height=str(height),
                     viewBox=f"0 0 {width} {height}", role="img")
    ET.SubElement(svg, "title").text = f"Can't Stop board {board.text or '(empty)'}"
    bottom = MARGIN + TALLEST * CELL
    for index, (column, length) in enumerate(sorted(LENGTHS.items())):
        x = MARGIN + index * CELL
        claimed = column in board.claimed
        for step in range(1, length + 1):
            ET.SubElement(svg, "rect", x=str(x + 1), y=str(bottom - step * CELL + 1), width=str(CELL - 2),
                          height=str(CELL - 2), fill=COLOURS["claimed" if claimed else "cell"], stroke=COLOURS["line"],
                          **({"class": "claimed"} if claimed and step == length else {}))
        label = ET.SubElement(svg, "text", x=str(x + CELL / 2), y=str(bottom + CELL * 0.75), **{"text-anchor": "middle"})
        label.set("font-size", "13")
        label.text = str(column)
        for kind, step in (("marker", board.marker(column)), ("runner", placed.get(column, 0))):
            if step:
                ET.SubElement(svg, "circle", cx=str(x + CELL / 2), cy=str(bottom - step * CELL + CELL / 2),
                              r=str(CELL / 2 - 4 if kind == "marker" else CELL / 2 - 6), fill=COLOURS[kind],
                              stroke=COLOURS["line"], **{"class": kind, "stroke-width": "2"})
    return ET.tostring(svg, encoding="unicode")
