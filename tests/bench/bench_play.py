"""Benchmark of playing and analysing on a solved graph (not part of the test run).

    .venv/bin/python tests/bench/bench_play.py [--games 5] [--db URL] [GAME[:key=value,...] ...]

For each game named (default: Pig to 100, Jackpot, Shut The Box), builds and solves it in a SQLite file (or in
the database ``--db`` names, reusing what it holds; not timed), then times through the Python API:

- ``play --auto`` of whole games between the optimum and another stored policy (seeded);
- the analysis of each game's record in a new session (nothing known);
- each step of a game in progress, in a new session, with its hint: the step taken
  (:meth:`dicegraph.play.Table.take`), then the options offered where it leads, as ``dicegraph play`` shows them.
  A step reads a new position; in a game whose turn is stored once, a step into a turn state not seen before
  works the state's turn out, and those steps are also shown apart;
- the explorer's play page (Flask's test client; the page replays the steps in its address): a new game's first
  page on a new server (also once the server has readied its games as ``dicegraph serve`` does as it starts,
  :meth:`dicegraph.Database.ready_to_play`), a click halfway through the game on a new server (a reload after a
  restart), and the same click again (a click of a game being played).

Like the ``dicegraph`` command, it sets what its modules made aside from the garbage collector before it starts
(:func:`gc.freeze`). Prints each figure's mean, median and largest (the first of a session reads what the rest reuse), and the steps
a second. The targets of issue 40: a hint or a step under 50 ms, a whole game's analysis under 1 s, a click under
200 ms.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import dicegraph  # noqa: E402
from dicegraph.record import Record  # noqa: E402
from dicegraph.graphs.commands import parse_params  # noqa: E402
from dicegraph.store.turn_positions import SEPARATOR  # noqa: E402
from tests.bench.phases import peak_mib  # noqa: E402

DEFAULTS = ["pig:target=100", "jackpot", "shut-the-box"]


def timed(work) -> tuple[float, object]:
    """Return the seconds ``work()`` took and what it returned."""
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def bench(named: str, games: int, url: str | None) -> None:
    name, _, options = named.partition(":")
    params = parse_params(tuple(options.split(","))) if options else {}
    game = dicegraph.games()[name]
    url = url or f"sqlite:///{Path(tempfile.mkdtemp(prefix='bench-play-')) / 'play.db'}"
    db = dicegraph.open(url)
    prepared, _ = timed(lambda: db.report(name, params))
    others = [row["name"] for row in db.policies(name, params) if row["name"] != "optimal" and row.get("goal") is None]
    policies = ["optimal", others[0]] if game.players == 2 and others else [others[0] if others else "optimal"]
    plays, analyses, steps_each, step_costs, new_states, first_clicks, readied_clicks, clicks, again = (
        [], [], [], [], [], [], [], [], [])
    from dicegraph.web.app import create_app

    for seed in range(games):
        played_for, played = timed(lambda: db.play(name, params, policies, seed=seed))
        record = played["record"]
        analysed_for, _ = timed(lambda: dicegraph.open(url).analyse(record))
        plays.append(played_for)
        analyses.append(analysed_for)
        steps_each.append(len(record["steps"]))
        middle = len(record["steps"]) // 2
        graph = played["graph"]
        with dicegraph.open(url).table(Record.of({**record, "steps": []})) as table:  # a live game, step by step
            for step in record["steps"]:
                entering = table.position["key"].split(SEPARATOR)[0]
                cost, _ = timed(lambda: (table.take(step), table.options()))
                step_costs.append(cost)
                if game.repeating and table.position["key"].split(SEPARATOR)[0] != entering:
                    new_states.append(cost)
        address = (f"/graphs/{graph}/play.json?seat=first&against=optimal&seed={seed}&steps="
                   + json.dumps(record["steps"][:middle]))
        opening = f"/graphs/{graph}/play.json?seat=first&against=optimal&seed={seed}&steps=[]"
        opened = create_app(dicegraph.open(url)).test_client()
        first_clicks.append(timed(lambda: opened.get(opening))[0])
        ready = dicegraph.open(url)
        ready.ready_to_play()  # as dicegraph serve does as it starts
        readied = create_app(ready).test_client()
        readied_clicks.append(timed(lambda: readied.get(opening))[0])
        client = create_app(dicegraph.open(url)).test_client()
        clicks.append(timed(lambda: client.get(address))[0])
        again.append(timed(lambda: client.get(address))[0])
    print(f"{named}: prepared (build, solve, evaluate; not part of the figures) in {prepared:.1f} s")
    print(f"  {games} games of {', '.join(policies)}: {statistics.mean(steps_each):.0f} steps a game on average")
    for label, figures in (("play --auto, a whole game", plays), ("analyse, a whole game's record", analyses),
                           ("a step and its hint, in a game in progress", step_costs),
                           ("  of them, those into a new turn state", new_states),
                           ("the play page, a new game (a new server)", first_clicks),
                           ("  the same, the server readied as it starts", readied_clicks),
                           ("the play page, a click halfway (a new server)", clicks),
                           ("the play page, the same click again", again)):
        if figures:
            print(f"  {label:<45} mean {1000 * statistics.mean(figures):8.1f} ms, median "
                  f"{1000 * statistics.median(figures):8.1f} ms, largest {1000 * max(figures):8.1f} ms")
    print(f"  analysis: {sum(steps_each) / sum(analyses):,.0f} steps a second; peak memory {peak_mib():.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--db", help="the database to play in (default: a new SQLite file a game)")
    parser.add_argument("games_named", nargs="*", default=DEFAULTS, metavar="GAME")
    args = parser.parse_args()
    import dicegraph.web.app  # noqa: F401 -- imported now, so that what the modules make is set aside with the rest

    gc.freeze()  # as the dicegraph command does as it starts (cli.run): no collection walks the modules again
    for named in args.games_named:
        bench(named, args.games, args.db)


if __name__ == "__main__":
    main()
