"""The bear-off's positions drawn as on a backgammon board (the ``board`` hook: the explorer's position pages).

Each side is a row of its last points, the 6-point at the left and the 1-point at the right as a player sees
their home board, with its checkers stacked on them (five drawn, then their number); the player to move is the
lower row.

>>> svg = side_rows([(2, 0, 1)], ["to move"])
>>> svg.count("<circle"), svg.startswith("<svg")
(3, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


POINT, CHECKER, SHOWN = 36, 30, 5  # a point's width, a checker's diameter, the checkers drawn on a point
ROW = CHECKER * SHOWN + 30  # a row's height: its checkers, the point numbers, the caption


def side_rows(sides: Sequence[Sequence[int]], captions: Sequence[str]) -> str:
    """Return an SVG document of the sides, the first lowest: each a row of points with their checkers."""
    points = len(sides[0])
    width, height = POINT * points + 170, ROW * len(sides)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="the board">']
    for row, (side, caption) in enumerate(zip(reversed(sides), reversed(list(captions)))):
        top = row * ROW
        base = top + ROW - 22
        for column in range(points):
            point = points - column  # the highest point leftmost
            left = column * POINT
            shade = "#c9a66b" if point % 2 else "#8b5a2b"
            parts.append(f'<polygon points="{left},{base} {left + POINT},{base} {left + POINT / 2},{top + 6}" '
                         f'fill="{shade}" opacity="0.45"/>')
            parts.append(f'<text x="{left + POINT / 2}" y="{base + 16}" text-anchor="middle" font-size="12">{point}</text>')
            count = side[point - 1]
            for stack in range(min(count, SHOWN)):
                centre = base - CHECKER / 2 - stack * CHECKER
                parts.append(f'<circle cx="{left + POINT / 2}" cy="{centre}" r="{CHECKER / 2 - 1}" '
                             f'fill="{"#f4f1ea" if row == len(sides) - 1 else "#333"}" stroke="#222"/>')
            if count > SHOWN:
                parts.append(f'<text x="{left + POINT / 2}" y="{base - CHECKER * (SHOWN - 0.5) + 4}" text-anchor="middle" '
                             f'font-size="13" fill="#c00">{count}</text>')
        parts.append(f'<text x="{POINT * points + 12}" y="{base - 8}" font-size="13">{escape(caption, quote=False)}</text>')
        parts.append(f'<text x="{POINT * points + 12}" y="{base + 10}" font-size="12">{sum(point * count for point, count in enumerate(side, 1))} pips, '
                     f'{sum(side)} checkers</text>')
    parts.append("</svg>")
    return "".join(parts)
