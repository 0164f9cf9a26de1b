"""Backgammon's bear-off against GNU Backgammon's one-sided database, position by position.

gnubg's ``gnubg_os0.bd`` (Debian's ``gnubg-data``, which ``.ci/run`` installs) holds P(off in n rolls) for
every position of up to 15 checkers on 6 points, as whole 65,535ths. The positions of up to
:data:`CHECKERS` checkers are the first ones of that file (gnubg numbers them fewer checkers first), so the
graph of that many checkers, whose starts are every such position, is compared whole: each position's
expected rolls (the stored optimum) and its distribution of rolls (:meth:`dicegraph.Database.position_outcomes`).
gnubg works each position out from its children's stored, rounded values, so a stored probability may be a
few 65,535ths from the exact one: :data:`UNITS` bounds that (measured: 2.03 at most for 6 checkers); the
whole 15-checker database is compared by ``tests/bench/bench_bear_off.py``.
Without the file the comparison skips and says why; in CI it must run.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from dicegraph.graphs.bear_off import game as bear_off
from dicegraph.graphs.bear_off import gnubg
from dicegraph.graphs.exact import exact_value
from dicegraph.store.catalog import find_policy
from dicegraph.store.db import open_database
from dicegraph.store.schema import node, value
from tests.commands import assert_one_line_error
from tests.postgres import database_on

CHECKERS = 6  # 924 positions, the first of gnubg_os0.bd
UNITS = 3  # a stored probability lies within this many 65,535ths of the exact one (gnubg rounds as it goes)


def gnubg_database() -> gnubg.OneSided:
    """Return gnubg's 15-checker database; skip (outside CI) when it is not installed."""
    try:
        return gnubg.read_one_sided(gnubg.DEBIAN_DATABASE)
    except dicegraph.Error as missing:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must compare the bear-off with gnubg: {missing}") from None
        pytest.skip(f"{missing}: apt-get install gnubg-data")


@pytest.mark.parametrize("backend", ["sqlite", "duckdb", "postgresql"])
def test_every_position_of_six_checkers_equals_gnubgs_database(backend: str, tmp_path: Path) -> None:
    reference = gnubg_database()
    assert (reference.points, reference.checkers, reference.positions) == (6, 15, 54264)
    with database_on(backend, tmp_path) as url:
        compare_with_gnubg(dicegraph.open(url), reference)


def compare_with_gnubg(database: dicegraph.Database, reference: gnubg.OneSided) -> None:
    """Assert that every position of :data:`CHECKERS` checkers, solved in ``database``, is gnubg's."""
    params = {"checkers": CHECKERS}
    database.build("bear-off", params)
    database.solve("bear-off", params=params)
    found = database.position_outcomes("bear-off", params=params)
    positions = bear_off.positions(6, CHECKERS)
    assert len(positions) == math.comb(6 + CHECKERS, 6) == 924
    assert set(found) == {"-".join(map(str, position)) for position in positions}
    for position in positions:
        mine = found["-".join(map(str, position))]
        theirs = reference.rolls_to_bear_off(position)
        assert sum(theirs) == pytest.approx(1, abs=len(theirs) / gnubg.SCALE)
        chances = {int(row["payoff"]): row["probability"] for row in mine["distribution"]}
        assert math.isclose(sum(chances.values()), 1, rel_tol=1e-12)
        for rolls in set(chances) | set(range(len(theirs))):
            stored = theirs[rolls] if rolls < len(theirs) else 0.0
            assert abs(chances.get(rolls, 0.0) - stored) <= UNITS / gnubg.SCALE, (position, rolls)
        gnubg_mean = sum(rolls * chance for rolls, chance in enumerate(theirs))
        rolls_listed = range(max(len(theirs), max(chances) + 1))  # |sum n (p_n - q_n)| <= sum n |p_n - q_n|
        assert abs(mine["expected_payoff"] - gnubg_mean) <= UNITS * sum(rolls_listed) / gnubg.SCALE, position


def test_the_stored_optimum_and_propagate_from_a_position_agree_with_the_rules_in_fractions(tmp_path: Path) -> None:
    """Three checkers on four points: each position's stored value is the rules' exact recursion, and
    ``propagate --from`` gives the same distribution as the backward pass over every position."""
    params = {"points": 4, "checkers": 3}
    rules = bear_off.rules(params)
    url = f"sqlite:///{tmp_path / 'small.db'}"
    database = dicegraph.open(url)
    database.build("bear-off", params)
    database.solve("bear-off", params=params)
    found = database.position_outcomes("bear-off", params=params)
    for position in bear_off.positions(4, 3):
        key = rules.key(position)
        exact = exact_value(rules, "min", position=position)
        assert math.isclose(found[key]["expected_payoff"], float(exact), rel_tol=1e-12), key
    start = "0-1-0-2"
    forward = CliRunner().invoke(main, ["--db", url, "propagate", "bear-off", "-p", "points=4", "-p", "checkers=3",
                                        "--from", start, "--json"])
    assert forward.exit_code == 0, forward.output
    propagated = json.loads(forward.stdout)
    assert propagated["from"] == start
    assert [(row["payoff"], pytest.approx(row["probability"], rel=1e-12)) for row in propagated["distribution"]] == [
        (row["payoff"], row["probability"]) for row in found[start]["distribution"]]
    assert math.isclose(propagated["expected_payoff"], float(exact_value(rules, "min", position=(0, 1, 0, 2))),
                        rel_tol=1e-12)


def test_the_rules_of_backgammon_are_played() -> None:
    plays = bear_off.plays
    # a die above the highest checker bears off from the highest point only
    assert plays((1, 0, 1, 0, 0, 0), (5, 6)) == {(0, 0, 0, 0, 0, 0): "3/off 1/off"}
    # with a checker higher, a lower one may not be borne off by a bigger die: the higher one moves first
    assert plays((1, 0, 0, 1, 0, 0), (3, 3)) == {(0, 0, 0, 0, 0, 0): "4/1 1/off 1/off"}
    assert plays((1, 0, 0, 1, 0, 0), (2, 3)) == {(1, 0, 0, 0, 0, 0): "4/1 1/off"}  # 4/2 2/off leaves the same
    # doubles are played four times; the last checker off ends the roll
    assert plays((0, 0, 0, 0, 0, 1), (1, 1)) == {(0, 1, 0, 0, 0, 0): "6/5 5/4 4/3 3/2"}
    assert plays((0, 0, 0, 0, 0, 2), (6, 6)) == {(0, 0, 0, 0, 0, 0): "6/off 6/off"}
    # gnubg numbers the positions of up to 15 checkers on 6 points 0..54,263, fewer checkers first
    indices = [bear_off.gnubg_index(position) for position in bear_off.positions(6, 15)]
    assert indices == list(range(54264))


MAKEBEAROFF = Path("/usr/games/makebearoff")  # Debian's gnubg installs it there
RACE = {"points": 6, "checkers": 2}  # 729 pairs of positions: a two-sided database makebearoff writes at once


@pytest.fixture(scope="module")
def two_sided(tmp_path_factory: pytest.TempPathFactory) -> gnubg.TwoSided:
    """Return the two-sided database of :data:`RACE` that gnubg's makebearoff writes; skip (outside CI) without it."""
    program = shutil.which("makebearoff") or (str(MAKEBEAROFF) if MAKEBEAROFF.exists() else None)
    if program is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must compare the bear-off race with gnubg: .ci/run installs gnubg")
        pytest.skip("gnubg's makebearoff is not installed: apt-get install gnubg")
    path = tmp_path_factory.mktemp("gnubg") / "two-sided.bd"
    subprocess.run([program, "-t", f"{RACE['points']}x{RACE['checkers']}", "-f", str(path)], check=True,
                   capture_output=True)
    return gnubg.read_two_sided(path)


@pytest.mark.parametrize("backend", ["sqlite", "duckdb", "postgresql"])
def test_every_pair_of_the_race_equals_gnubgs_two_sided_database(backend: str, two_sided: gnubg.TwoSided,
                                                                 tmp_path: Path) -> None:
    """Both sides bearing off 2 checkers from 6 points: each pair's chance that the player to move wins (the
    stored optimum) is gnubg's cubeless one, within :data:`UNITS` 65,535ths (measured: 1.58 at most)."""
    assert (two_sided.points, two_sided.checkers) == (RACE["points"], RACE["checkers"])
    with database_on(backend, tmp_path) as url:
        database = dicegraph.open(url)
        graph_id = database.build("bear-off-race", RACE)["graph_id"]
        database.solve("bear-off-race", params=RACE)
        engine = open_database(url)
        with engine.connect() as connection:
            optimal = find_policy(connection, graph_id, "optimal").id
            rows = connection.execute(sa.select(node.c.key, value.c.value).select_from(node.join(value, sa.and_(
                value.c.node_id == node.c.id, value.c.policy_id == optimal))).where(
                node.c.graph_id == graph_id, node.c.kind == "chance")).all()
        engine.dispose()
    sides = [side for side in bear_off.positions(RACE["points"], RACE["checkers"]) if any(side)]
    assert len(rows) == len(sides) ** 2 == 729
    for key, chance in rows:
        mine, theirs = (tuple(int(count) for count in side.split("-")) for side in key.split(" "))
        assert abs(chance - two_sided.mover_wins(mine, theirs)) <= UNITS / gnubg.SCALE, key


def test_parameters_out_of_range_are_refused_in_one_line() -> None:
    assert_one_line_error(CliRunner().invoke(main, ["build", "bear-off", "-p", "checkers=16"]), "checkers", "1..15")
    assert_one_line_error(CliRunner().invoke(main, ["build", "bear-off", "-p", "points=7"]), "points", "1..6")
    assert_one_line_error(CliRunner().invoke(main, ["build", "bear-off-race", "-p", "points=7"]), "points", "1..6")
    assert_one_line_error(CliRunner().invoke(main, ["build", "bear-off-race", "-p", "checkers=7"]), "checkers", "1..6")


def test_a_missing_or_foreign_database_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(dicegraph.Error, match="no gnubg bear-off database"):
        gnubg.read_one_sided(tmp_path / "missing.bd")
    foreign = tmp_path / "foreign.bd"
    foreign.write_bytes(b"not a database" * 10)
    with pytest.raises(dicegraph.Error, match="not a one-sided gnubg bear-off database"):
        gnubg.read_one_sided(foreign)


def test_the_explorer_draws_each_position_as_its_points_and_checkers(tmp_path: Path) -> None:
    """The ``board`` hook: a position's page shows its checkers on their points (five drawn on a point, then their
    number), a decision's its position, the race's both sides; the JSON carries the same picture."""
    from dicegraph.web.app import create_app

    url = f"sqlite:///{tmp_path / 'board.db'}"
    database = dicegraph.open(url)
    one = database.build("bear-off", {"checkers": 7})["graph_id"]
    two = database.build("bear-off-race", {"points": 3, "checkers": 2})["graph_id"]
    client = create_app(database).test_client()
    for graph_id, key, checkers in ((one, "0-0-1-0-0-6", 6), (one, "0-0-1-0-0-6/6-6", 6), (one, "1-0-0-0-0-0", 1),
                                    (two, "0-1-1 2-0-0", 4), (two, "0-1-1 2-0-0/3-1", 4)):
        address = f"/graphs/{graph_id}/positions/{quote(key, safe='/')}"
        html = client.get(address).get_data(as_text=True)
        data = client.get(f"{address}.json").get_json()
        assert data["board"] is not None and data["board"] in html, key
        assert data["board"].count("<circle") == checkers, key
    assert ">7</text>" in client.get(f"/graphs/{one}/positions/0-0-0-0-0-7.json").get_json()["board"]  # 7 on a point
    won = client.get(f"/graphs/{two}/positions/won.json").get_json()
    assert won["board"] is None and 'id="board"' not in client.get(f"/graphs/{two}/positions/won").get_data(as_text=True)
