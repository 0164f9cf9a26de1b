"""Benchmark of the explorer, ``dicegraph serve`` (not part of the test run).

    .venv/bin/python tests/bench/bench_web.py [--db URL] [--pages 300] [--clients 20] [--seconds 60]

Without ``--db`` it first writes the reports of the games that report in
seconds into a new SQLite file (Jackpot, Shut The Box, 5000, Can't Stop, Pig to
30, the race to 300); give ``--db`` a database holding every game's report,
School included, for the issue's figure. It then times, server-side (Flask's
test client, no network), the home page and ``--pages`` position pages of keys
drawn at random from every graph (median, 95th percentile, slowest), and last
runs ``dicegraph serve`` and lets ``--clients`` threads browse random positions
over HTTP for ``--seconds``, counting pages served and errors. The issue's
targets: a position page under 100 ms, the home page under 300 ms, no error
with 20 clients for a minute.
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

from graphs import get_game  # noqa: E402
from graphs.protocol import resolve_params  # noqa: E402
from store.db import open_database  # noqa: E402
from store.report import game_report  # noqa: E402
from store.schema import node  # noqa: E402
from tests.processes import served  # noqa: E402
from web.app import create_app  # noqa: E402

QUICK_REPORTS = {"jackpot": {}, "shut-the-box": {}, "5000": {}, "cant-stop": {"columns": "6,7,8"},
                 "pig": {"target": "30"}, "5000-race": {"target": "300"}}  # parameters as given with -p


def write_reports(url: str) -> None:
    """Write the quick games' reports into ``url``."""
    engine = open_database(url, create=True)
    for name, given in QUICK_REPORTS.items():
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a database holding the reports (default: write the quick ones to a new file)")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    url = args.db
    if url is None:
        url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'explore.db'}"
        print(f"writing the quick reports into {url}", flush=True)
        write_reports(url)
    engine = open_database(url, read_only=True)
    client = create_app(engine).test_client()
    timed(client, "/")  # the first request loads the templates
    home = [timed(client, "/") for _ in range(20)]
    print(f"home page (20 requests): {summary(home)}")
    urls = sample_positions(engine, args.pages, random.Random(1))
    pages = [timed(client, page) for page in urls]
    print(f"position pages ({len(urls)} random, every graph): {summary(pages)}")
    with served(url) as address:
        count, errors = browse(address, urls, args.seconds, args.clients)
    print(f"{args.clients} clients for {args.seconds:.0f} s over HTTP: {count:,} pages ({count / args.seconds:.0f} a second), "
          f"{len(errors)} errors" + (f"; first: {errors[0]}" if errors else ""))
    engine.dispose()


if __name__ == "__main__":
    main()
