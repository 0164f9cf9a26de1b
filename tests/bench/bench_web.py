"""Benchmark of the explorer, ``dicegraph serve`` (not part of the test run).

    .venv/bin/python tests/bench/bench_web.py [--db URL] [--turn-games] [--games NAMES] [--pages 300] [--clients 20]
        [--seconds 60]

When ``--db`` names no database yet (default: a new SQLite file), it first
writes the reports of the games that report in seconds (Jackpot, Shut The Box,
5000, Can't Stop and a board of it, Pig to 30, the race to 300), and with
``--turn-games`` School's and Yahtzee's without bonuses too (minutes on DuckDB:
give ``--db duckdb:///FILE``), for the issue's figure on a database holding
every game's report, School included (``--games`` writes only those named, of the quick ones). It then times, server-side (Flask's
test client, no network), the home page and ``--pages`` position pages of keys
drawn at random from every graph (median, 95th percentile, slowest), the
advisors' pages (Can't Stop's, and School's and Yahtzee's, which solve the turn asked
about), and last
runs ``dicegraph serve`` and lets ``--clients`` threads browse random positions
over HTTP for ``--seconds``, counting pages served and errors. Last, over HTTP,
it times position pages one after another with the SQL console idle, then
while eight clients keep sending it statements that never end (the console
runs two, each stopped after its time limit, and tells the others it is
busy): the pages' medians side by side. The targets: a position page under
100 ms, the home page under 300 ms, no error with 20 clients for a minute,
and no position page slower while the SQL console is busy (issue 36).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from dicegraph.graphs import get_game  # noqa: E402
from dicegraph.graphs.protocol import resolve_params  # noqa: E402
from dicegraph.store.db import database_exists, open_database  # noqa: E402
from dicegraph.store.report import game_report  # noqa: E402
from dicegraph.store.schema import graph, node  # noqa: E402
from tests.commands import ENDLESS  # noqa: E402
from tests.processes import served  # noqa: E402
from dicegraph.database import Database
from dicegraph.web.app import create_app  # noqa: E402

QUICK_REPORTS = {"jackpot": {}, "shut-the-box": {}, "5000": {}, "cant-stop": {"columns": "6,7,8"},
                 "cant-stop-board": {}, "pig": {"target": "30"}, "5000-race": {"target": "300"}}  # as given with -p
TURN_REPORTS = {"school": {}, "yahtzee": {"bonuses": "off"}}
ADVICE = {"cant-stop-board": "roll=2,3,5,6", "school": "roll=1,2,2,4,5&rolls_left=2",
          "yahtzee": "roll=1,2,2,4,5&rolls_left=2"}  # an advisor's question


def write_reports(url: str, reports: dict[str, dict[str, str]]) -> None:
    """Write the games' ``reports`` (name -> parameters as given with -p) into ``url``."""
    engine = open_database(url, create=True)
    for name, given in reports.items():
        game = get_game(name)
        params = resolve_params(game, given)
        started = time.perf_counter()
        game_report(engine, game, params)
        print(f"  report {name} {given or ''}: {time.perf_counter() - started:.1f} s", flush=True)
    engine.dispose()


def sample_positions(engine: sa.Engine, count: int, rng: random.Random) -> list[str]:
    """Return ``count`` position addresses drawn at random from every stored graph."""
    with engine.connect() as connection:
        sizes = connection.execute(sa.select(node.c.graph_id, sa.func.count()).group_by(node.c.graph_id)).all()
        urls = []
        for _ in range(count):
            graph_id, nodes = rng.choice(sizes)
            key = connection.execute(sa.select(node.c.key).where(node.c.graph_id == graph_id,
                                                                   node.c.id == rng.randrange(nodes))).scalar()
            urls.append(f"/graphs/{graph_id}/positions/{quote(key, safe='/')}")
    return urls


def timed(client, url: str) -> float:  # noqa: ANN001
    """Return the seconds one request of ``url`` takes through the test client (it must answer 200)."""
    started = time.perf_counter()
    answer = client.get(url)
    if answer.status_code != 200:
        raise RuntimeError(f"{url}: {answer.status_code}")
    return time.perf_counter() - started


def summary(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    return (f"median {statistics.median(ordered) * 1000:.1f} ms, 95th percentile "
            f"{ordered[int(0.95 * (len(ordered) - 1))] * 1000:.1f} ms, slowest {ordered[-1] * 1000:.1f} ms")


def browse(address: str, urls: list[str], seconds: float, clients: int) -> tuple[int, list[str]]:
    """Let ``clients`` threads fetch random ``urls`` for ``seconds``; return pages served and errors."""
    served_pages, errors = [0] * clients, []
    stop = time.monotonic() + seconds

    def client(number: int) -> None:
        rng = random.Random(number)
        while time.monotonic() < stop:
            url = rng.choice(urls) + rng.choice(["", ".json"])
            try:
                with urllib.request.urlopen(address + url, timeout=30) as answer:
                    answer.read()
                served_pages[number] += 1
            except (urllib.error.URLError, OSError) as error:
                errors.append(f"{url}: {error}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(served_pages), errors


def pages_beside_the_console(address: str, urls: list[str], busy: int) -> tuple[list[float], dict[int, int]]:
    """Return the seconds each of ``urls`` takes over HTTP, one after another, while ``busy`` clients keep
    sending the SQL console an endless statement; and how the console answered them (status -> count)."""
    stop = threading.Event()
    answers: dict[int, int] = {}

    def console() -> None:  # a client that sends its statement again a second after it was turned away or stopped
        while not stop.is_set():
            try:
                with urllib.request.urlopen(f"{address}/sql.json?sql={quote(ENDLESS)}", timeout=120) as answer:
                    status = answer.status
            except urllib.error.HTTPError as error:
                status = error.code
            answers[status] = answers.get(status, 0) + 1
            stop.wait(1.0)

    threads = [threading.Thread(target=console) for _ in range(busy)]
    for thread in threads:
        thread.start()
    time.sleep(2 if busy else 0)  # the console's slots taken
    seconds = []
    for url in urls:
        started = time.perf_counter()
        with urllib.request.urlopen(address + url, timeout=60) as answer:
            answer.read()
        seconds.append(time.perf_counter() - started)
    stop.set()
    for thread in threads:
        thread.join()
    return seconds, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a database holding the reports, or where to write them (default: a new SQLite file)")
    parser.add_argument("--turn-games", action="store_true", help="also write School's and Yahtzee's reports")
    parser.add_argument("--games", help="write only these of the quick reports, comma-separated (default: all)")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    url = args.db or f"sqlite:///{Path(tempfile.mkdtemp()) / 'explore.db'}"
    if not database_exists(url):
        print(f"writing the reports into {url}", flush=True)
        quick = {name: QUICK_REPORTS[name] for name in args.games.split(",")} if args.games else QUICK_REPORTS
        write_reports(url, quick | (TURN_REPORTS if args.turn_games else {}))
    engine = open_database(url, read_only=True)
    client = create_app(Database.over(engine)).test_client()
    timed(client, "/")  # the first request loads the templates
    home = [timed(client, "/") for _ in range(20)]
    print(f"home page (20 requests): {summary(home)}")
    urls = sample_positions(engine, args.pages, random.Random(1))
    pages = [timed(client, page) for page in urls]
    print(f"position pages ({len(urls)} random, every graph): {summary(pages)}")
    with engine.connect() as connection:
        graphs = connection.execute(sa.select(graph.c.id, graph.c.game)).all()
    for graph_id, game in graphs:
        if game in ADVICE:
            advice = [timed(client, f"/graphs/{graph_id}/advise?{ADVICE[game]}") for _ in range(5)]
            print(f"{game}'s advice page, graph {graph_id} ({ADVICE[game]}, 5 requests): {summary(advice)}")
    engine.dispose()  # DuckDB lets one process hold the file: the server's
    with served(url) as address:
        count, errors = browse(address, urls, args.seconds, args.clients)
    print(f"{args.clients} clients for {args.seconds:.0f} s over HTTP: {count:,} pages ({count / args.seconds:.0f} a second), "
          f"{len(errors)} errors" + (f"; first: {errors[0]}" if errors else ""))
    with served(url) as address:
        idle, _ = pages_beside_the_console(address, urls[:100], 0)
        busy, answers = pages_beside_the_console(address, urls[:100], 8)
    print(f"position pages over HTTP, SQL console idle: {summary(idle)}")
    print(f"position pages over HTTP, 8 clients sending the SQL console endless statements: {summary(busy)} "
          f"(the console answered {dict(sorted(answers.items()))})")


if __name__ == "__main__":
    main()
