"""The explorer's pages as data: each function returns what one page shows, the same dict its ``.json`` gives.

The functions only read, and only through the session (:class:`dicegraph.Database`): they add what a reader needs
beside its answers (links, the best move, what each move gives up, the layers in bands, bounded SQL results).

>>> import dicegraph
>>> db = dicegraph.open("sqlite://")
>>> _ = db.report("jackpot", {"cells": 4})
>>> page = position_page(db, 1, "0/1-2")
>>> page["kind"], page["best"], [(move["label"], round(move["gives_up"], 4)) for move in page["edges"]]
('decision', 'flip 1', [('flip 1', 0.0), ('flip 2', 0.0117), ('flip 3', 0.0214)])
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from dicegraph.database import Database
from dicegraph.play import person_seats
from dicegraph.record import MAX_BYTES, TYPED_DICE, Record, load_json
from dicegraph.graphs.commands import plain
from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import OPTIMAL
from dicegraph.frontends import SEATS, FilesReachable, ReadOnly
from dicegraph.web.limits import MAX_CELL_CHARS, MAX_RESULT_CHARS, MAX_ROWS, SQL_TIMEOUT

DIAGRAM_NODES = 60  # the most positions a position's local diagram draws (a roll of five dice leads to 252)
KEY_COLUMNS = ("key", "from_key", "to_key")  # columns of the positions and moves views that name a position
GRAPH_COLUMNS = ("graph", "graph_id")  # the views' column naming the graph, and the tables'
READ_ONLY = "refused: the explorer only reads (statements that write, attach or touch files are not run)"


def home_page(db: Database) -> dict[str, Any]:
    """Return the home page: ``games`` that can be built and ``graphs`` stored (:meth:`dicegraph.Database.catalog`)."""
    return db.catalog()


DISTRIBUTED = {"payoff": "payoff at the end", "turns": "turns until a win (the policy against itself)"}  # what a
# graph's outcome distributions count (dicegraph.Database.counted), as its page and chart say it
MAX_LAYER_ROWS = 100  # the most rows a graph page's table of layers shows (Pig to 100 has 7,549 layers)


def graph_page(db: Database, graph_id: int, policy: str | None = None,
               reference: str | None = None, top: int = 10, opponent: str | None = None,
               seat: str = SEATS[0], matches: bool = False, responses: bool = False,
               turns: bool = False) -> dict[str, Any]:
    """Return a graph's page (what :meth:`dicegraph.Database.overview` reads, and more): the ``graph`` row,
    whether its game draws ``charts`` (:func:`game_pictures`), its ``advisor``'s title (:func:`advice_page`) if it has one, its ``root``
    key, ``layers`` (every one) and ``layer_rows`` (:func:`layer_rows`: what the page's table shows), ``policies``
    with their values and units, whether it is ``two_player`` (a policy's value is then both seats following it),
    their ``distributions`` (:meth:`dicegraph.Database.distributions`; for a game whose turn is stored once,
    ``turn_distributions`` says they are played on request, with ``turns``) and what they count
    (``distributed``: the final score, or a race's number of turns), and with ``policy`` and
    ``reference`` a
    ``comparison`` (:meth:`dicegraph.Database.compare`: in a two-player game a match against ``opponent`` in
    ``seat``), else the ``comparison_error`` that says why there is none; with ``matches``, in a two-player game,
    the ``matches`` of every pair of its policies (:meth:`dicegraph.Database.matches`), as its report plays them;
    with ``responses``, the ``responses``: how each stored best response and the optimum do against the policy it
    answers (:meth:`dicegraph.Database.responses`), each linked to the comparison that lists the positions where it
    departs from the optimum;
    whether it is ``playable`` in the browser (:func:`play_page`: its optimum is stored)."""
    overview = db.overview(graph_id, turns=turns)  # the graph read once
    row = overview["graph"]
    game = db.game(row["game"])
    page: dict[str, Any] = {
        "graph": row,
        "charts": game.hooks.offers("charts"),
        "advisor": None if not game.hooks.offers("advisor") else game.hooks.advisor().title,
        "root": row["root"],
        "layers": overview["layers"],
        "policies": overview["policies"],
        "two_player": game.players == 2,
        "seats": list(SEATS),
    }
    page["layer_rows"] = layer_rows(page["layers"])
    page["playable"] = OPTIMAL in [p["name"] for p in page["policies"]]
    page["turn_distributions"] = overview["turn_distributions"]
    page["distributed"] = DISTRIBUTED[overview["counted"]]
    page["distributions"] = overview["distributions"]
    if policy and reference:
        try:
            page["comparison"] = db.compare(
                graph_id, policy, reference, top=top, opponent=opponent if page["two_player"] else None,
                seat=seat if page["two_player"] else SEATS[0])
        except DicegraphError as error:
            page["comparison_error"] = f"cannot compare: {error}"
    if matches and page["two_player"]:
        page["matches"] = db.matches(graph_id)
    page["answered"] = [p["answers"] for p in page["policies"] if p.get("answers")]
    if responses and page["answered"]:
        page["responses"] = db.responses(graph_id)
    return page


def layer_rows(layers: list[dict[str, Any]], most: int = MAX_LAYER_ROWS) -> list[dict[str, Any]]:
    """Return the rows of a graph page's table of layers: a cyclic component's layers as one row, then, past
    ``most`` rows, consecutive rows merged into at most ``most`` bands; each row ``first``, ``last`` (its layers),
    ``nodes``, ``rolls``, ``moves`` and ``cyclic``.

    >>> rows = layer_rows([{"layer": n, "nodes": 1, "rolls": 2, "moves": 3, "cycle_start": 0 if n < 3 else None}
    ...                    for n in range(5)])
    >>> [(row["first"], row["last"], row["nodes"], row["cyclic"]) for row in rows]
    [(0, 2, 3, True), (3, 3, 1, False), (4, 4, 1, False)]
    >>> len(layer_rows([{"layer": n, "nodes": 1, "rolls": 0, "moves": 0, "cycle_start": None} for n in range(250)]))
    84
    """
    rows: list[dict[str, Any]] = []
    for row in layers:
        one = {"first": row["layer"], "last": row["layer"], "nodes": row["nodes"], "rolls": row["rolls"],
               "moves": row["moves"], "cyclic": row["cycle_start"] is not None, "cycle_start": row["cycle_start"]}
        if rows and one["cyclic"] and rows[-1]["cycle_start"] == one["cycle_start"]:
            rows[-1] = _merged(rows[-1], one)
        else:
            rows.append(one)
    if len(rows) > most:
        size = -(-len(rows) // most)
        rows = [functools.reduce(_merged, rows[at:at + size]) for at in range(0, len(rows), size)]
    return rows


def _merged(band: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """Return the rows of layers ``band`` and the ``row`` after it as one row."""
    return {**band, "last": row["last"], "nodes": band["nodes"] + row["nodes"], "rolls": band["rolls"] + row["rolls"],
            "moves": band["moves"] + row["moves"], "cyclic": band["cyclic"] or row["cyclic"]}


def game_pictures(db: Database, graph_id: int, directory: Path) -> dict[str, Any]:
    """Return the pictures the game's report draws from this graph (:meth:`dicegraph.Database.charts`, PNGs
    written to ``directory``, never to the database) with its row: ``{"graph", "pictures": [{"file", "title"}],
    "error"}``; ``error`` says why none could be drawn (a game without charts)."""
    return {"graph": db.graph(graph_id), **db.charts(graph_id, directory)}


def advice_page(db: Database, graph_id: int, given: Mapping[str, str]) -> dict[str, Any]:
    """Return the game's advice page for a graph (:meth:`dicegraph.Database.advise`: the advisor's ``title``, the
    ``questions`` it asks of this graph, what its ``values`` mean, the ``answers`` as given, and once anything is
    asked the ``advice`` or the ``error`` that says what to type instead) with the ``graph`` row. NotFound for a
    game without an advisor."""
    return {"graph": db.graph(graph_id), **db.advise(graph_id, given)}


def position_page(db: Database, graph_id: int, key: str) -> dict[str, Any]:
    """Return a position's page: :meth:`dicegraph.Database.position` one level deep, with ``graph`` (its row),
    ``board`` (the game's picture of the position, SVG text, where it draws one: the ``board`` hook), ``best`` (a decision's optimal move by the game's objective, None before a solve), each edge's
    ``gives_up`` (how much less than the best it is worth to the optimum) and ``likely`` (the edge the
    most likely path takes: the optimum's move, or the most probable roll)."""
    row = db.graph(graph_id)
    page = db.position(graph_id, key, depth=1)
    page["graph"] = row
    game = db.game(row["game"])
    page["board"] = game.hooks.board(key, json.loads(row["params"]))  # the game's own picture of it (SVG), or None
    sign = -1.0 if game.objective == "min" else 1.0
    worth = [edge["values"].get(OPTIMAL) for edge in page["edges"]]
    known = [value for value in worth if value is not None]
    best_value = max(known, key=lambda value: sign * value) if known and page["kind"] == "decision" else None
    page["best"] = None
    for edge, value in zip(page["edges"], worth):
        edge["gives_up"] = None if best_value is None or value is None else sign * (best_value - value)
        if page["best"] is None and best_value is not None and OPTIMAL in edge["chosen_by"]:
            page["best"] = edge["label"]
    if page["kind"] == "chance":
        likely = max(page["edges"], key=lambda edge: edge["probability"], default=None)
    else:
        likely = next((edge for edge in page["edges"] if OPTIMAL in edge["chosen_by"]), None)
    page["likely"] = None if likely is None else likely["to"]
    return page


def position_diagram(db: Database, graph_id: int, key: str, link: Callable[[str], str]) -> bytes:
    """Return an SVG of the position ``key`` and the positions one step from it (:meth:`dicegraph.Database.diagram`,
    the optimum's moves drawn bold when it is solved), each node linking to ``link(its key)``. Raises TooLarge
    past :data:`DIAGRAM_NODES` nodes."""
    return db.diagram(graph_id, key, link, max_nodes=DIAGRAM_NODES)


def search_page(db: Database, graph_id: int, text: str) -> dict[str, Any]:
    """Return the positions of a graph whose key or label contains ``text`` (:meth:`dicegraph.Database.search`)."""
    return {"graph": db.graph(graph_id), "q": text, "positions": db.search(graph_id, text) if text else []}


def position_address(graph_id: int, key: str) -> str:
    """Return the address of a position's page, its key percent-encoded (slashes kept).

    >>> position_address(2, "30-10 +22")
    '/graphs/2/positions/30-10%20%2B22'
    """
    return f"/graphs/{graph_id}/positions/{quote(key, safe='/')}"


def play_page(db: Database, graph_id: int, asked: Mapping[str, str]) -> dict[str, Any]:
    """Return a game played in the browser on a graph, all of it in the page's address (``asked``): the person's
    ``seat`` (first by default), the policy played ``against`` (the optimum by default), the dice's ``seed`` and
    the ``steps`` so far (JSON), ``hints`` to show each move's value. The page is
    :meth:`dicegraph.Database.playing` with the ``graph`` row, each option's ``href`` (the address with its step
    added), the ``chart`` and ``analyse`` addresses, the ``record`` as text (``record_text``) and the policies
    that can be played against (``opponents``)."""
    row = db.graph(graph_id)
    game = db.game(row["game"])
    seat, against = asked.get("seat") or SEATS[0], asked.get("against") or OPTIMAL
    if seat not in SEATS:
        raise DicegraphError(f"no seat {seat!r}: a seat is {' or '.join(SEATS)}")
    typed = asked.get("dice") == TYPED_DICE
    try:
        seed = None if typed else int(asked.get("seed", ""))
    except ValueError:
        raise DicegraphError("a game's address holds a whole number seed (or dice=manual) and its steps as JSON "
                             "(start again from the graph's page)") from None
    steps = load_json(asked.get("steps") or "[]", "a game's steps")
    if typed and asked.get("roll"):  # a roll typed into the page's form, checked as any step is
        steps = [*steps, {"roll": asked["roll"].strip()}] if isinstance(steps, list) else steps
    record = Record.of({"game": row["game"], "params": json.loads(row["params"]), "seed": seed, "steps": steps,
                        "seats": person_seats(game.players == 2, seat, against)})
    page = db.playing(record)
    dice = {"dice": TYPED_DICE} if typed else {"seed": str(seed)}
    kept = {"seat": seat, "against": against, **dice, **({"hints": "1"} if asked.get("hints") else {})}
    here = f"/graphs/{graph_id}/play"
    done = page["record"]["steps"]
    for option in page["options"]:
        option["href"] = f"{here}?{urlencode({**kept, 'steps': json.dumps([*done, {page['expects']: option['label']}])})}"
    address = urlencode({**kept, "steps": json.dumps(done)})
    record_text = json.dumps(page["record"])
    page["position"]["href"] = position_address(graph_id, page["position"]["stored"])
    for step in page["analysis"]["steps"]:
        step["href"] = position_address(graph_id, step["stored"])
    page.update(graph=row, seat=seat, against=against, seed=seed, typed=typed, kept=kept, steps_text=json.dumps(done),
                hints=bool(asked.get("hints")),
                two_player=game.players == 2, here=f"{here}?{address}", chart=f"{here}.svg?{address}",
                hints_href=f"{here}?{urlencode({**kept, 'hints': '1', 'steps': json.dumps(done)})}",
                analyse=f"/analyse?{urlencode({'record': record_text})}", record_text=record_text,
                opponents=[p["name"] for p in db.policies(graph_id)])
    return page


def analyse_page(db: Database, text: str | bytes) -> dict[str, Any]:
    """Return the analysis page of a game record given as JSON ``text`` (or bytes in UTF-8, as uploaded; at most
    :data:`dicegraph.record.MAX_BYTES`) (:meth:`dicegraph.Database.analyse`):
    ``record_text``, and once a record is given its ``analysis`` (each step with the ``href`` of the position it
    was taken at, and the ``chart``'s address) or the ``error`` that says what is wrong with it."""
    shown = text if isinstance(text, str) else text[:MAX_BYTES].decode("utf-8", errors="replace")
    page: dict[str, Any] = {"record_text": shown, "analysis": None, "error": None, "chart": None}
    if not shown.strip():
        return page
    try:
        analysis = db.analyse(Record.parse(text))
    except DicegraphError as error:
        return {**page, "error": str(error)}
    for step in analysis["steps"]:
        step["href"] = position_address(analysis["graph"], step["stored"])
    return {**page, "analysis": analysis, "chart": f"/analyse.svg?{urlencode({'record': shown})}"}


def sql_page(db: Database, sql: str, timeout: float = SQL_TIMEOUT) -> dict[str, Any]:
    """Return the SQL console's page for ``sql``: ``columns`` and ``rows`` of the statement run read-only within
    ``timeout`` seconds (:meth:`dicegraph.Database.query_table`), and ``links``: per row, the
    position each key column names (``{column: [graph id, key]}``) when the row has a ``graph`` (or ``graph_id``)
    column, as the views ``positions`` and ``moves`` have. The page is bounded: at most :data:`MAX_ROWS` rows,
    :data:`MAX_CELL_CHARS` characters of a value and :data:`MAX_RESULT_CHARS` in all; ``truncated`` says what was
    cut (None when nothing was). Values are JSON's (:func:`dicegraph.graphs.commands.plain`: a BLOB as hex text). A
    statement refused as a write, or failing, gives no rows, its ``error`` (one line) and whether it was ``refused``."""
    page: dict[str, Any] = {"sql": sql, "columns": [], "rows": [], "links": [], "truncated": None}
    if not sql.strip():
        return page
    try:
        columns, fetched = db.query_table(sql, limit=MAX_ROWS + 1, timeout=timeout)
    except DicegraphError as error:
        refused = isinstance(error, ReadOnly)
        shown = str(error) if isinstance(error, FilesReachable) or not refused else READ_ONLY
        return {**page, "error": shown, "refused": refused}
    rows, truncated = _bounded(fetched)
    links = []
    graph_column = next((name for name in GRAPH_COLUMNS if name in columns), None)
    if graph_column is not None:
        at = columns.index(graph_column)
        linked = [(index, name) for index, name in enumerate(columns) if name in KEY_COLUMNS]
        links = [{name: [row[at], row[index]] for index, name in linked if row[index] is not None} for row in rows]
    return {**page, "columns": columns, "rows": rows, "links": links, "truncated": truncated}


def _bounded(fetched: list[tuple[Any, ...]]) -> tuple[list[list[Any]], str | None]:
    """Return the rows the SQL page shows (plain values, long ones cut) and what was cut, in words (None: nothing).

    >>> _bounded([("x" * 10_001, 1.5), (b"\\x01", float("inf"))])
    ([['xxxxxxxxxx...', 1.5], ['\\\\x01', None]], 'values longer than 10,000 characters are cut')
    """
    rows: list[list[Any]] = []
    cut: set[str] = set()
    size = 0
    for row in fetched[:MAX_ROWS]:
        shown = [_shown(value, cut) for value in row]
        size += sum(len(value) if isinstance(value, str) else 8 for value in shown)
        if size > MAX_RESULT_CHARS:
            cut.add(f"only the first {len(rows):,} rows are shown: a page holds at most {MAX_RESULT_CHARS:,} "
                    "characters of values")
            break
        rows.append(shown)
    else:
        if len(fetched) > MAX_ROWS:
            cut.add(f"only the first {MAX_ROWS:,} rows are shown")
    return rows, "; ".join(sorted(cut, reverse=True)) or None


def _shown(value: Any, cut: set[str]) -> Any:
    """Return a value as the SQL page shows it (:func:`dicegraph.graphs.commands.plain`), at most :data:`MAX_CELL_CHARS`
    characters of it; say so in ``cut`` when it is cut."""
    if isinstance(value, (bytes, bytearray, memoryview)) and 2 * len(value) > MAX_CELL_CHARS:
        value = bytes(value[:MAX_CELL_CHARS // 2])  # hex text of the part shown only, not of a huge whole
        cut.add(f"values longer than {MAX_CELL_CHARS:,} characters are cut")
        return plain(value)[:MAX_CELL_CHARS] + "..."
    value = plain(value)
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        cut.add(f"values longer than {MAX_CELL_CHARS:,} characters are cut")
        return value[:MAX_CELL_CHARS] + "..."
    return value
