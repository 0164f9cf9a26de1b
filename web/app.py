"""The explorer's Flask application: URLs, HTML or JSON, and errors as pages (never a traceback).

Each route renders one function of :mod:`dicegraph.web.pages`, which reads through the session
(:class:`dicegraph.Database`) alone; the same URL with ``.json`` appended gives that
function's dict as JSON.

>>> import dicegraph
>>> client = create_app(dicegraph.open("sqlite://")).test_client()
>>> client.get("/.json").get_json()["graphs"]
[]
>>> client.get("/graphs/7").status_code
404
"""

from __future__ import annotations

import atexit
import random
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from flask import Flask, Response, jsonify, redirect, render_template, request, send_from_directory
from werkzeug.exceptions import HTTPException

from dicegraph.database import Database
from dicegraph.record import MAX_BYTES, TYPED_DICE
from dicegraph.graphs.commands import plain
from dicegraph.graphs.errors import DicegraphError
from dicegraph.frontends import DatabaseError, NotFound
from dicegraph.web import charts, guard, pages
from dicegraph.web.limits import SQL_SLOTS, SQL_TIMEOUT

def create_app(db: Database, sql_slots: int = SQL_SLOTS, sql_timeout: float = SQL_TIMEOUT,
               hosts: Collection[str] | None = None) -> Flask:
    """Return the explorer over the session ``db`` (a read-only one, :meth:`dicegraph.Database.kept_open`
    opened read-only: the pages only read, and ``/sql`` refuses writes), answering to the host names ``hosts``
    (None: any; :mod:`dicegraph.web.guard` checks every request at the door).

    The SQL console runs at most ``sql_slots`` statements at once, each for at most ``sql_timeout`` seconds (0: no
    limit); one more is answered at once with 503 and a line saying so (it waits for no slot), so that it never
    holds the threads, nor takes the processors, that serve the pages.
    """
    app = Flask(__name__)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    guard.install(app, hosts)

    def show(template: str, as_json: bool, build: Callable[[Database], dict[str, Any]], status: int = 200) -> Any:
        return _answer(template, build(db), as_json, status)

    @app.get("/")
    @app.get("/.json")
    def home() -> Any:
        return show("home.html", request.path.endswith(".json"), pages.home_page)

    @app.get("/graphs/<int:graph_id>")
    @app.get("/graphs/<int:graph_id>.json")
    def graph(graph_id: int) -> Any:
        asked = request.args
        return show("graph.html", request.path.endswith(".json"), lambda session: pages.graph_page(
            session, graph_id, asked.get("policy"), asked.get("reference"), opponent=asked.get("against") or None,
            seat=asked.get("seat") or "first", matches=asked.get("matches") == "all",
            responses=asked.get("responses") == "all", turns=asked.get("distributions") == "all"))

    drawn: list[Path] = []  # the folder of the games' charts, made when a charts page is first viewed (an app
    # whose charts nobody views, as ``check``'s, leaves no folder), removed when the process ends
    drawing = threading.Lock()

    def pictures() -> Path:
        if not drawn:
            drawn.append(Path(tempfile.mkdtemp(prefix="dicegraph-explorer-")))
            atexit.register(shutil.rmtree, drawn[0], ignore_errors=True)
        return drawn[0]

    @app.get("/graphs/<int:graph_id>/charts")
    @app.get("/graphs/<int:graph_id>/charts.json")
    def charts_page(graph_id: int) -> Any:
        with drawing:
            folder = pictures() / str(graph_id)
            return show("charts.html", request.path.endswith(".json"),
                        lambda session: pages.game_pictures(session, graph_id, folder))

    @app.get("/graphs/<int:graph_id>/charts/<name>")
    def chart_file(graph_id: int, name: str) -> Any:
        with drawing:
            folder = pictures() / str(graph_id)
        return send_from_directory(folder, name)

    @app.get("/graphs/<int:graph_id>/advise")
    @app.get("/graphs/<int:graph_id>/advise.json")
    def advise(graph_id: int) -> Any:
        data = pages.advice_page(db, graph_id, request.args)
        return _answer("advise.html", data, request.path.endswith(".json"), 400 if data["error"] else 200)

    @app.get("/graphs/<int:graph_id>/values.svg")
    def values_chart(graph_id: int) -> Any:
        outcome = db.game(db.graph(graph_id)["game"]).outcome
        policies = db.policies(graph_id)
        # one unit on one axis: a goal's probability is not drawn beside expected scores
        return Response(charts.values_chart([p for p in policies if p["unit"] == outcome], outcome),
                        mimetype="image/svg+xml")

    @app.get("/graphs/<int:graph_id>/distribution.svg")
    def distribution_chart(graph_id: int) -> Any:
        spread = db.distributions(graph_id, turns=request.args.get("distributions") == "all")  # NotFound: no graph
        if not spread:
            raise NotFound(f"graph {graph_id} has no outcome distribution here (cycles; or its turn is stored once: "
                           "add ?distributions=all to play its turns forward)")
        return Response(charts.distribution_chart(spread, pages.DISTRIBUTED[db.counted(graph_id)]),
                        mimetype="image/svg+xml")

    @app.get("/graphs/<int:graph_id>/positions/<path:key>")
    def position(graph_id: int, key: str) -> Any:
        if key.endswith(".svg"):  # the local diagram (no game's key ends so, nor with .json)
            svg = pages.position_diagram(db, graph_id, key.removesuffix(".svg"),
                                         lambda target: pages.position_address(graph_id, target))
            return Response(svg, mimetype="image/svg+xml")
        as_json = key.endswith(".json")
        key = key.removesuffix(".json") if as_json else key
        return show("position.html", as_json, lambda session: pages.position_page(session, graph_id, key))

    @app.get("/graphs/<int:graph_id>/search")
    @app.get("/graphs/<int:graph_id>/search.json")
    def search(graph_id: int) -> Any:
        text = request.args.get("q", "")
        return show("search.html", request.path.endswith(".json"),
                    lambda session: pages.search_page(session, graph_id, text))

    @app.get("/graphs/<int:graph_id>/play")
    @app.get("/graphs/<int:graph_id>/play.json")
    def play(graph_id: int) -> Any:
        if not request.args.get("seed") and request.args.get("dice") != TYPED_DICE:
            # a game's dice come from a seed in its address (a reload rolls them again), or are typed (dice=manual)
            seeded = {**request.args.to_dict(), "seed": str(random.SystemRandom().randrange(2**31))}
            return redirect(f"{request.path}?{urlencode(seeded)}")
        return show("play.html", request.path.endswith(".json"),
                    lambda session: pages.play_page(session, graph_id, request.args))

    @app.get("/graphs/<int:graph_id>/play.svg")
    def play_chart(graph_id: int) -> Any:
        page = pages.play_page(db, graph_id, request.args)
        return Response(charts.analysis_chart(page["analysis"]), mimetype="image/svg+xml")

    @app.route("/analyse", methods=["GET", "POST"])
    @app.route("/analyse.json", methods=["GET", "POST"])
    def analyse() -> Any:
        sent = request.files.get("file")
        if request.is_json:  # the record itself as the body
            given: str | bytes = request.get_data(cache=False)
        elif sent:
            given = sent.read(MAX_BYTES + 1)
        else:
            given = request.values.get("record", "")
        data = pages.analyse_page(db, given)
        return _answer("analyse.html", data, request.path.endswith(".json"), 400 if data["error"] else 200)

    @app.get("/analyse.svg")
    def analyse_chart() -> Any:
        data = pages.analyse_page(db, request.args.get("record", ""))
        if data["analysis"] is None:
            raise DicegraphError(data["error"] or "give the record to draw: /analyse.svg?record=JSON")
        return Response(charts.analysis_chart(data["analysis"]), mimetype="image/svg+xml")

    console = threading.BoundedSemaphore(sql_slots)

    @app.get("/sql")
    @app.get("/sql.json")
    def sql() -> Any:
        text = request.args.get("sql", "")
        if not text.strip():
            return _answer("sql.html", pages.sql_page(db, text), request.path.endswith(".json"), 200)
        if not console.acquire(blocking=False):  # never hold a thread the pages need while waiting for a slot
            busy = {**pages.sql_page(db, ""), "sql": text, "refused": False,
                    "error": f"the SQL console is busy with {sql_slots} statements already; try again when one ends "
                             f"(each stops after {sql_timeout:g} s)"}
            return _answer("sql.html", busy, request.path.endswith(".json"), 503)
        try:
            data = pages.sql_page(db, text, timeout=sql_timeout or None)
        finally:
            console.release()
        status = 403 if data.get("refused") else 400 if data.get("error") else 200
        return _answer("sql.html", data, request.path.endswith(".json"), status)

    @app.errorhandler(NotFound)
    def not_found(error: NotFound) -> Any:
        return _error_page(404, str(error), _graph_in(request.path))

    @app.errorhandler(DicegraphError)
    def bad_request(error: DicegraphError) -> Any:
        return _error_page(400, str(error), _graph_in(request.path))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Any:
        return _error_page(error.code or 500, error.description or error.name, _graph_in(request.path))

    @app.errorhandler(DatabaseError)  # the session's one line for what the database raised
    def database_error(error: DatabaseError) -> Any:
        app.logger.warning("database error on %s: %s", request.path, error)
        return _error_page(500, str(error), _graph_in(request.path))

    @app.errorhandler(Exception)
    def internal_error(error: Exception) -> Any:
        app.logger.exception("unexpected error on %s", request.path)
        return _error_page(500, f"the explorer failed on this page ({type(error).__name__}); the server's log has the details",
                           None)

    return app


def _answer(template: str, data: dict[str, Any], as_json: bool, status: int) -> tuple[Response | str, int]:
    """Return a page's ``data`` as JSON, or rendered by ``template``, with ``status``."""
    if as_json:
        return jsonify(plain(data)), status
    return render_template(template, **data), status


def _error_page(status: int, message: str, graph_id: int | None) -> tuple[Response | str, int]:
    """Return the error as JSON (for a ``.json`` URL) or as a page that helps on: a search of the graph named in the URL."""
    if request.path.endswith(".json"):
        return jsonify({"error": message, "status": status}), status
    return render_template("error.html", status=status, message=message, graph_id=graph_id), status


def _graph_in(path: str) -> int | None:
    """Return the graph id a URL names (``/graphs/3/...`` -> 3), or None."""
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "graphs":
        number = parts[2].removesuffix(".json")
        return int(number) if number.isdigit() else None
    return None
