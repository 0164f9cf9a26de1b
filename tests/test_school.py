"""School: rules, the two-part graph, the SQL solve against a recursion written here, whole games, the CLI."""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import re
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.graphs import school as rules
from dicegraph.graphs.montecarlo import simulate
from tests import school_store as school
from tests.commands import engine_on
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from dicegraph.store.solve import readers
from dicegraph.store.schema import node, turn_policy

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "001_4d0d9a8c031293e3.txt"
DEFAULT = {"straights": (15, 20), "grades": "negative"}
RULES_GAMES = 2_000  # whole games played one at a time from the rules (graphs/playout.py)
RELATIVE = 1e-12


def close(a: float, b: float, tolerance: float = RELATIVE) -> bool:
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)


# --- a recursion written from the rules, independent of the graph ------------------------------------------


def all_rolls(n: int) -> Counter[tuple[int, ...]]:
    """Sorted outcomes of n dice with their counts, from every ordered roll."""
    return Counter(tuple(sorted(roll)) for roll in itertools.product(range(1, 7), repeat=n))


def keep_order(dice: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Return the keeps of ``dice`` in the order the graph's tie-break meets them.

    The graph chooses a keep one die at a time, ``reroll a d`` lowest face
    first, and rolls as soon as that is as good as going on: a depth-first walk.
    """
    order: list[tuple[int, ...]] = []
    for face in sorted(set(dice)):
        kept = list(dice)
        kept.remove(face)
        order += [tuple(kept)] + keep_order(tuple(kept))
    return list(dict.fromkeys(order))


def play_turn(value_after: Mapping[int, float], profit_of: Mapping[int, float] | None, params: Mapping,
              number=float) -> tuple:
    """Return (profit, value, second moment) of a turn from its start.

    ``value_after[c]`` is the game's (value, second moment) once ``c`` is used (only open ``c``);
    optimal play ranks by the value, Bob by points + ``profit_of[c]``.
    The keeps are every subset of dice positions, the rolls every ordered roll;
    among equal moves the first counts (scores, then keeps in the order of
    :func:`keep_order`): it decides the second moment where moves tie.
    """
    @functools.lru_cache(None)
    def decide(dice: tuple[int, ...], roll: int) -> tuple:
        options = []
        for c, (rest, rest2) in value_after.items():
            pts = number(rules.points(c, dice, roll == 1, params["straights"], params["grades"]))
            rank = pts + (rest if profit_of is None else number(profit_of[c]))
            options.append((rank, pts + rest, pts * pts + 2 * pts * rest + rest2))
        if roll < rules.ROLLS:
            kept_sets = {tuple(sorted(dice[i] for i in keep)) for size in range(5)
                         for keep in itertools.combinations(range(5), size)}
            order = keep_order(dice)
            for kept in sorted(kept_sets, key=order.index):
                options.append(chance(kept, roll + 1))
        best = max(option[0] for option in options)
        return next(option for option in options if option[0] >= best - 1e-12 * (1 + abs(best)))

    @functools.lru_cache(None)
    def chance(kept: tuple[int, ...], roll: int) -> tuple:
        n = 5 - len(kept)
        totals = [number(0)] * 3
        for rolled, count in all_rolls(n).items():
            outcome = decide(tuple(sorted(kept + rolled)), roll)
            totals = [t + count * x for t, x in zip(totals, outcome)]
        return tuple(t / number(6**n) for t in totals)

    return chance((), 1)


def seed_table() -> dict[str, float]:
    """Return the seed's table of average scores; skip the test where the seeds (``../shared``, beside a clone of
    the repository) are absent, as in a clone alone; CI has them."""
    if not SEED.exists():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must compare with the seed: {SEED} is missing")
        pytest.skip(f"the School seed is not beside the repository ({SEED})")
    rows = re.findall(r"^\| ([A-Za-z0-9 ]+?) \| ([0-9.]+) \|$", SEED.read_text(), flags=re.MULTILINE)
    return {name: float(value) for name, value in rows}


# --- rules ---------------------------------------------------------------------------------------------------


def test_scoring_by_the_rules() -> None:
    def p(name: str, dice: tuple[int, ...], first: bool = False) -> int:
        return rules.points(rules.COMBINATIONS.index(name), dice, first)

    assert p("Grade 6", (6, 6, 1, 2, 3)) == -18 and p("Grade 1", (1, 1, 1, 1, 1)) == 0
    assert p("Pair", (2, 2, 5, 5, 1)) == 10 and p("Set", (2, 2, 2, 5, 5)) == 6 and p("Set", (1, 2, 3, 4, 6)) == 0
    assert p("Two pairs", (2, 2, 5, 5, 1)) == 14 and p("Two pairs", (4, 4, 4, 4, 1)) == 16
    assert p("Two pairs", (4, 4, 4, 4, 4)) == 0 and p("Two pairs", (3, 3, 3, 5, 5)) == 16
    assert p("Full", (3, 3, 3, 5, 5)) == 19 and p("Full", (6, 6, 6, 6, 6)) == 30 and p("Full", (3, 3, 3, 3, 5)) == 0
    assert p("Care", (6, 6, 6, 6, 6)) == 24 and p("Poker", (6, 6, 6, 6, 6)) == 30
    assert p("Little straight", (1, 2, 3, 4, 5)) == 15 and p("Big straight", (2, 3, 4, 5, 6)) == 20
    assert p("Trash", (1, 2, 3, 4, 6), first=True) == 32 and p("Grade 2", (2, 2, 1, 1, 1), first=True) == -6


def test_positive_grades_add_105_to_every_game() -> None:
    for dice in rules.OUTCOMES:
        gap = sum(rules.points(k, dice, grades="positive") - rules.points(k, dice) for k in range(rules.GRADES))
        assert gap == rules.POSITIVE_GRADE_OFFSET == 105


def test_turn_states_follow_the_school_phase() -> None:
    brute = [used for used in range(1 << 15)
             if not used >> 6 or bin(used & 63).count("1") >= 3]
    assert sorted(rules.states()) == brute and len(brute) == 21526
    assert rules.open_combinations(0) == (0, 1, 2, 3, 4, 5)


def test_graph_sizes(engine: sa.Engine) -> None:
    built = build_graph(engine, get_game("school"), DEFAULT)
    outcomes = math.comb(10, 5)
    keeps = sum(math.comb(size + 5, 5) for size in range(5))  # multisets of 0..4 dice
    roll_edges = 6 * len(rules.KEEPS)  # the rest rolled one die at a time
    # "reroll a d": one per face showing, from each roll (decisions) and each keep of 1..4 dice
    put_backs = sum(len(set(dice)) for dice in rules.OUTCOMES) + sum(len(set(keep)) for keep in rules.KEEPS)
    turn_edges = outcomes + 2 * 15 * outcomes + outcomes + 2 * (put_backs + keeps + roll_edges)
    state_edges = sum(len(rules.open_combinations(used)) for used in rules.states())
    assert built.nodes == 21526 + 1 + 3 * outcomes + 2 * (keeps + keeps) + 15
    assert built.edges == state_edges + turn_edges
    with engine.connect() as connection:
        first = connection.execute(sa.select(sa.func.count()).where(node.c.key.like("r1:%"))).scalar_one()
    assert first == outcomes


# --- the SQL solve against the recursion ---------------------------------------------------------------------


def test_the_seeds_average_table_to_1e_12(engine: sa.Engine) -> None:
    seed = seed_table()
    assert len(seed) == 15
    for grades in ("positive", "negative"):
        built = build_graph(engine, get_game("school"), {"straights": (20, 30), "grades": grades})
        with engine.begin() as connection:
            table = school.average_table(connection, built.graph_id)
        for c, name in enumerate(rules.COMBINATIONS):
            offset = (c + 1) * 5 if grades == "negative" and c < rules.GRADES else 0
            assert close(table[name] + offset, seed[name]), (grades, name)


def test_the_current_average_table_in_exact_fractions(engine: sa.Engine) -> None:
    built = build_graph(engine, get_game("school"), DEFAULT)
    with engine.begin() as connection:
        table = school.average_table(connection, built.graph_id)
    for name in ("Grade 4", "Little straight", "Full"):
        c = rules.COMBINATIONS.index(name)
        exact = play_turn({c: (Fraction(0), Fraction(0))}, None, DEFAULT, Fraction)[1]
        assert isinstance(exact, Fraction) and close(table[name], float(exact))


@pytest.fixture(scope="module")
def endgame(tmp_path_factory: pytest.TempPathFactory) -> tuple[sa.Engine, int]:
    """SQLite: optimal solved for the states with 1..3 combinations left, Bob for 1..2."""
    engine = open_database(f"sqlite:///{tmp_path_factory.mktemp('school') / 'endgame.db'}", create=True)
    built = build_graph(engine, get_game("school"), DEFAULT)
    with engine.begin() as connection:
        school.solve_policy(connection, built.graph_id, "optimal", down_to=12)
        school.solve_policy(connection, built.graph_id, "bob", down_to=13)
    return engine, built.graph_id


def stored(engine: sa.Engine, graph_id: int, name: str) -> dict[int, sa.Row]:
    with engine.connect() as connection:
        policy_id = school.ensure_policy(connection, graph_id, name)
        query = (sa.select(node.c.key, turn_policy.c.value, turn_policy.c.moment2, turn_policy.c.decisions)
                 .join(node, sa.and_(node.c.id == turn_policy.c.node_id, node.c.graph_id == graph_id))
                 .where(turn_policy.c.policy_id == policy_id))
        return {int(row.key.split(":")[1]): row for row in connection.execute(query)}


def recursion_values(values: Mapping[int, sa.Row], used: int, profit_of: Mapping[int, float] | None) -> tuple:
    after = {c: (values[used | 1 << c].value, values[used | 1 << c].moment2) if used | 1 << c != rules.ALL_USED else (0.0, 0.0)
             for c in rules.open_combinations(used)}
    return play_turn(after, profit_of, DEFAULT)


@pytest.mark.parametrize("left", [1, 2])
def test_optimal_endgames_equal_the_recursion(endgame: tuple[sa.Engine, int], left: int) -> None:
    engine, graph_id = endgame
    values = stored(engine, graph_id, "optimal")
    states = [used for used in rules.states() if bin(used).count("1") == 15 - left]
    for used in states:
        _, value, moment2 = recursion_values(values, used, None)
        assert close(values[used].value, value) and close(values[used].moment2, moment2, 1e-10), used


def test_optimal_with_three_left_equals_the_recursion(endgame: tuple[sa.Engine, int]) -> None:
    engine, graph_id = endgame
    values = stored(engine, graph_id, "optimal")
    states = [used for used in rules.states() if bin(used).count("1") == 12][::45]
    assert len(states) >= 10
    for used in states:
        assert close(values[used].value, recursion_values(values, used, None)[1]), used


def test_bob_endgames_equal_the_recursion(endgame: tuple[sa.Engine, int]) -> None:
    engine, graph_id = endgame
    optimal, bob = stored(engine, graph_id, "optimal"), stored(engine, graph_id, "bob")
    averages = {c: optimal[rules.ALL_USED ^ 1 << c].value for c in range(15)}
    profit_of = {c: -averages[c] for c in range(15)}
    for used in [u for u in rules.states() if 13 <= bin(u).count("1") <= 14]:
        profit, value, _ = recursion_values(bob, used, profit_of)
        assert close(bob[used].value, value, 1e-9), used
        assert bob[used].value <= optimal[used].value + 1e-9


def test_stored_decisions_are_the_recursions_best_moves(endgame: tuple[sa.Engine, int]) -> None:
    engine, graph_id = endgame
    values = stored(engine, graph_id, "optimal")
    used = rules.ALL_USED ^ (1 << rules.COMBINATIONS.index("Poker")) ^ (1 << rules.COMBINATIONS.index("Trash"))
    decisions = values[used].decisions
    for index, dice in enumerate(rules.OUTCOMES):
        kind, payload = rules.decode_decision(decisions[index * 3 + 0])
        assert kind in (rules.SCORE, rules.CROSS_OUT)
        after = {c: values[used | 1 << c].value for c in rules.open_combinations(used)}
        gains = {c: rules.points(c, dice) + after[c] for c in after}
        assert close(gains[payload - 1], max(gains.values()))
        assert (kind == rules.CROSS_OUT) == (rules.points(payload - 1, dice) == 0)


# --- whole games (DuckDB: the same SQL, minutes faster than SQLite; tests/bench has SQLite's time) --------


def test_whole_game_monte_carlo_within_4_standard_errors(whole_game: str) -> None:
    with engine_on(whole_game) as engine, engine.connect() as connection:
        graph_id = connection.execute(sa.text("SELECT id FROM graph WHERE game = 'school'")).scalar_one()
        for name in rules.POLICIES:
            policy_id = school.ensure_policy(connection, graph_id, name)
            expected, sd = school.game_score(connection, graph_id, policy_id)
            decisions = school.decision_array(connection, graph_id, policy_id)
            estimate = simulate(get_game("school"), DEFAULT, decisions, 200_000, seed=11)
            assert abs(estimate.z(expected)) < 4, (name, expected, estimate)
            assert math.isclose(estimate.stderr * math.sqrt(200_000), sd, rel_tol=0.02)


def test_whole_games_played_from_the_rules_with_the_stored_decisions_score_the_stored_value(whole_game: str) -> None:
    """The generic player (graphs/playout.py) over School's rules (graphs/school/rules.py), each move looked up in
    the stored decision bytes: independent of the numpy player and of the turn graph's rows."""
    from dicegraph.graphs.playout import rules_simulator
    from dicegraph.graphs.school.rules import rules as school_rules, stored_agent

    with engine_on(whole_game) as engine, engine.connect() as connection:
        graph_id = connection.execute(sa.text("SELECT id FROM graph WHERE game = 'school'")).scalar_one()
        policy_id = school.ensure_policy(connection, graph_id, "optimal")
        expected, _ = school.game_score(connection, graph_id, policy_id)
        decisions = readers.stored_decisions(connection, graph_id, policy_id)
    full = school_rules(DEFAULT)
    scores = np.array(rules_simulator(lambda params: full)(DEFAULT, full.plays(stored_agent(decisions)))(
        RULES_GAMES, np.random.default_rng(5)))
    assert abs(scores.mean() - expected) < 4 * scores.std() / math.sqrt(len(scores)), (scores.mean(), expected)


def test_whole_game_agrees_with_the_sqlite_endgame(whole_game: str, endgame: tuple[sa.Engine, int]) -> None:
    with engine_on(whole_game) as engine:
        with engine.connect() as connection:
            graph_id = connection.execute(sa.text("SELECT id FROM graph WHERE game = 'school'")).scalar_one()
        for name in rules.POLICIES:
            duck, lite = stored(engine, graph_id, name), stored(*endgame, name)
            assert lite and all(close(duck[used].value, row.value) for used, row in lite.items())
            assert all(duck[used].decisions == row.decisions for used, row in lite.items())


def test_a_game_of_some_combinations_is_the_whole_game_from_where_the_others_are_used(
        whole_game: str, tmp_path: Path) -> None:
    """``combinations=...`` (School's small parameters) starts where the whole game has the others used: every state
    of it, each policy's value and decisions, is the whole game's same state (Bob ranks the combinations in play
    alike, their averages being the same last states' values)."""
    params = DEFAULT | {"combinations": "Grade 5,Grade 6,Pair,Full,Little straight,Trash"}
    import dicegraph

    url = f"sqlite:///{tmp_path / 'some.db'}"
    database = dicegraph.open(url)
    built = database.build("school", params)
    database.solve("school", params=params)
    engine = open_database(url)
    assert rules.first_used(params) == rules.ALL_USED ^ (0b11 << 4 | 1 << 6 | 1 << 9 | 1 << 11 | 1 << 14)
    with engine_on(whole_game) as whole:
        with whole.connect() as connection:
            graph_id = connection.execute(sa.text("SELECT id FROM graph WHERE game = 'school'")).scalar_one()
        for name in rules.POLICIES:
            some, every = stored(engine, built["graph_id"], name), stored(whole, graph_id, name)
            assert len(some) == 2**6 - 1  # every set of the six in play but the last
            for used, row in some.items():
                assert close(row.value, every[used].value) and close(row.moment2, every[used].moment2), (name, used)
                assert row.decisions == every[used].decisions, (name, used)
    engine.dispose()


def test_report_json(whole_game: str, runner: CliRunner) -> None:
    result = runner.invoke(main, ["--db", whole_game, "report", "school", "-n", "20000", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data["average_table"]) == set(rules.COMBINATIONS)
    assert [p["name"] for p in data["policies"]] == ["optimal", "bob"]
    optimal, bob = data["policies"]
    assert optimal["value"] > bob["value"] and optimal["sd"] > 0
    assert math.isclose(data["bob_loss"], optimal["value"] - bob["value"], rel_tol=1e-12)
    assert all(abs(p["monte_carlo"]["z"]) < 4 for p in data["policies"])
    keeps = sum(math.comb(size + 5, 5) for size in range(5))
    assert data["graph_size"]["turn_states"] == len(rules.states())
    assert data["graph_size"]["turn_nodes"] == 1 + 3 * len(rules.OUTCOMES) + 4 * keeps + 15
    assert "negative" in data["rules"]["scores"] or "upstream" in data["rules"]["scores"]
    text = runner.invoke(main, ["--db", whole_game, "report", "school", "-n", "0"])
    assert text.exit_code == 0 and "Bob loses" in text.stdout and "upstream" in text.stdout
    assert f"{optimal['sd']:.6f}" in text.stdout  # the generic table shows each policy's spread


def test_export_decisions_round_trip(whole_game: str, runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "optimal.zip"
    result = runner.invoke(main, ["--db", whole_game, "school", "export-decisions", "--policy", "optimal", "-o", str(target)])
    assert result.exit_code == 0, result.output
    with engine_on(whole_game) as engine, engine.connect() as connection:
        graph_id = connection.execute(sa.text("SELECT id FROM graph WHERE game = 'school'")).scalar_one()
        array = school.decision_array(connection, graph_id, school.ensure_policy(connection, graph_id, "optimal"))
        start = school.state_result(connection, graph_id, school.ensure_policy(connection, graph_id, "optimal"), "used:0")
    back = rules.read_decision_archive(target)
    assert np.array_equal(back, array)
    assert back[rules.ALL_USED].reshape(-1).tobytes() == start.decisions  # the stored bytes of the first turn
    decided = back > 0
    assert decided.sum() == 21525 * 756  # every state but the last has a decision at every position
    import zipfile
    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
        assert len(names) == 757 and "12245_2.bin" in names and len(archive.read("12245_2.bin")) == 1 << 15


def test_advise_says_where_bob_and_the_optimum_disagree(whole_game: str, runner: CliRunner) -> None:
    with engine_on(whole_game) as engine, engine.connect() as connection:
        graph_id = connection.execute(sa.text("SELECT id FROM graph WHERE game = 'school'")).scalar_one()
        optimal = school.decision_array(connection, graph_id, school.ensure_policy(connection, graph_id, "optimal"))
        bob = school.decision_array(connection, graph_id, school.ensure_policy(connection, graph_id, "bob"))
    unused, outcome, left = (int(i[0]) for i in np.nonzero((optimal != bob) & (optimal > 0)))
    used = ",".join(c for i, c in enumerate(rules.COMBINATIONS) if not unused >> i & 1)
    dice = ",".join(map(str, rules.OUTCOMES[outcome]))
    args = ["--db", whole_game, "school", "advise", "--used", used, "--roll", dice, "--rolls-left", str(left)]
    result = runner.invoke(main, args + ["--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert not data["agree"]
    assert data["decision"] == rules.describe_decision(int(optimal[unused, outcome, left]), rules.OUTCOMES[outcome])
    assert data["others"]["bob"] == rules.describe_decision(int(bob[unused, outcome, left]), rules.OUTCOMES[outcome])
    best = max(a["value"] for a in data["alternatives"])
    chosen = next(a for a in data["alternatives"] if a["move"] == data["decision"])
    assert close(chosen["value"], best)
    text = runner.invoke(main, args)
    assert "bob disagrees" in text.stdout


@pytest.mark.parametrize("args, message", [
    (["--used", "Grade 7", "--roll", "1,2,3,4,5", "--rolls-left", "1"], "unknown combination 'Grade 7'"),
    (["--roll", "1,2,3,4,7", "--rolls-left", "1"], "five dice showing 1..6"),
    (["--roll", "1,2,3,4", "--rolls-left", "1"], "five dice showing 1..6"),
    (["--roll", "1,2,3,4,5", "--rolls-left", "3"], "is not 0..2"),
    (["--used", "Grade 1,Pair", "--roll", "1,2,3,4,5", "--rolls-left", "0"], "school phase never reaches"),
])
def test_advise_bad_input(runner: CliRunner, db_url: str, args: list[str], message: str) -> None:
    result = runner.invoke(main, ["--db", db_url, "school", "advise", *args])
    assert result.exit_code != 0 and message in result.output
    assert [line for line in result.output.splitlines() if "Error" in line] == [
        next(line for line in result.output.splitlines() if message in line)]  # one line says what is wrong


def test_solve_refuses_a_policy_school_does_not_declare(runner: CliRunner, db_url: str) -> None:
    """``dicegraph solve school`` solves its declared turn policies (the conformance suite checks it on the
    session's database); another name or objective is refused in one line before any work."""
    assert runner.invoke(main, ["--db", db_url, "build", "school"]).exit_code == 0
    for options in (["--name", "pessimal"], ["--objective", "min"]):
        result = runner.invoke(main, ["--db", db_url, "solve", "school", *options])
        assert result.exit_code == 1 and "solves its declared policies (optimal, bob)" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_simulate_plays_the_stored_decisions(whole_game: str, runner: CliRunner) -> None:
    result = runner.invoke(main, ["--db", whole_game, "simulate", "school", "--policy", "bob", "-n", "50000", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["exact"] is not None and abs(data["z"]) < 4


def test_advise_with_one_combination_left(endgame: tuple[sa.Engine, int]) -> None:
    engine, graph_id = endgame
    used = rules.ALL_USED ^ 1 << rules.COMBINATIONS.index("Poker")
    with engine.begin() as connection:
        advice = school.advise(connection, graph_id, "optimal", used, (6, 6, 6, 6, 6), 2)
        average = school.average_table(connection, graph_id)["Poker"]
    assert advice["decision"] == "score Poker" and advice["agree"]
    doubled = rules.points(rules.COMBINATIONS.index("Poker"), (6, 6, 6, 6, 6), first_roll=True)
    assert advice["alternatives"][0]["value"] == doubled
    keep_four = next(a for a in advice["alternatives"] if a["move"] == "reroll 6 (keep 6-6-6-6)")
    assert 0 < keep_four["value"] < doubled and average < doubled


def test_an_interrupted_solve_resumes_where_it_stopped_and_is_never_listed(
        tmp_path: Path, endgame: tuple[sa.Engine, int]) -> None:
    """Each game layer is committed as it is stored: an interrupted solve keeps them, lists nothing, and resumes."""
    from dicegraph.store.catalog import list_policies

    engine = open_database(f"sqlite:///{tmp_path / 'resume.db'}", create=True)
    graph_id = build_graph(engine, get_game("school"), DEFAULT).graph_id
    with engine.connect() as connection:
        sizes = {layer: last - first + 1 for layer, (first, last) in school.TurnGraph.load(connection, graph_id).layer_ids.items()}

    class Interrupted(Exception):
        pass

    done = 0

    def interrupt_in_layer_13(states: int) -> None:
        nonlocal done
        done += states
        if done > sizes[14]:  # layer 13's first batch of 64 states is in, not committed
            raise Interrupted

    with engine.connect() as connection, pytest.raises(Interrupted):
        school.solve_policy(connection, graph_id, "optimal", down_to=13, progress=interrupt_in_layer_13,
                            batch_states=64, commit_layers=True)
    with engine.connect() as connection:
        assert list_policies(connection, graph_id) == []
        policy_id = school.ensure_policy(connection, graph_id, "optimal")
        layers = connection.execute(sa.select(node.c.layer, sa.func.count()).join(
            turn_policy, turn_policy.c.node_id == node.c.id).where(
            turn_policy.c.policy_id == policy_id, node.c.graph_id == graph_id).group_by(node.c.layer)).all()
    assert dict(layers) == {14: sizes[14]}

    resumed = []
    with engine.connect() as connection:
        school.solve_policy(connection, graph_id, "optimal", down_to=13, progress=resumed.append, batch_states=64,
                            commit_layers=True)
    assert resumed[0] == sizes[14] and sum(resumed) == sizes[14] + sizes[13]
    mine, reference = stored(engine, graph_id, "optimal"), stored(*endgame, "optimal")
    assert set(mine) == {used for used in reference if bin(used).count("1") >= 13}
    for used, row in mine.items():
        assert row.value == reference[used].value and row.decisions == reference[used].decisions
