"""5000 as a race (shared/RULES.md): the exact and numpy references agree; the game itself is checked against them."""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from dicegraph.graphs.five_thousand_race.game import _reachable
from dicegraph.store.seats import Seat
from tests import race_exact, race_numpy


@pytest.mark.parametrize("target", [150, 300])
def test_numpy_reference_matches_exact_rationals(target):
    exact = race_exact.solve(target)
    win, passes = race_numpy.solve(target)
    for (a, b), value in exact.items():
        assert math.isclose(win[a, b], float(value), rel_tol=1e-12, abs_tol=1e-15)
    assert 0.5 < exact[0, 0] < 1  # moving first is an advantage
    assert max(passes) <= 4


GAMES = 4000  # races a match in the report's Monte Carlo


@pytest.fixture(scope="module")
def report_200(tmp_path_factory):
    from dicegraph.graphs import get_game
    from dicegraph.store.db import open_database
    from dicegraph.store.report import game_report

    engine = open_database(f"sqlite:///{tmp_path_factory.mktemp('race') / 'race.db'}", create=True)
    data = game_report(engine, get_game("5000-race"), {"target": 200}, simulated_games=GAMES)
    engine.dispose()
    return data


def test_report_answers_exactly(report_200):
    exact = race_exact.solve(200)
    assert math.isclose(report_200["p_first_wins"], exact[0, 0], rel_tol=1e-12)
    head_starts = {points: exact[0, points // 50] for points in range(0, 200, 50)}
    fair = min(head_starts, key=lambda points: abs(head_starts[points] - Fraction(1, 2)))
    assert report_200["fair_head_start"]["points"] == fair
    assert math.isclose(report_200["fair_head_start"]["p_first_wins"], head_starts[fair], rel_tol=1e-12)
    assert report_200["convergence"]["method"] == "newton" and report_200["convergence"]["residual"] < 1e-12


def test_every_match_equals_the_exact_one(report_200):
    """Each fixed strategy against the optimum in both seats and against each other: 7 + 21 pairs, both orders."""
    rows = report_200["matches"]
    assert len({(row["first"], row["second"]) for row in rows}) == len(rows) == 2 * (7 + 21)
    for row, back in zip(rows[::2], rows[1::2]):  # each pair in both orders
        assert (back["first"], back["second"]) == (row["second"], row["first"])
        forward, backward = race_exact.match(200, row["first"], row["second"])
        assert math.isclose(row["p_first_wins"], forward, rel_tol=1e-12), row
        assert math.isclose(back["p_first_wins"], backward, rel_tol=1e-12), back


def test_monte_carlo_of_whole_races_agrees_with_every_exact_number(report_200):
    """Races played from the rules, each strategy by its own moves (the optimum by its stored turn values), land
    within 4 standard errors of the exact number: the optimum against itself and all 56 matches."""
    rows = [report_200["self_play"], *report_200["matches"]]
    assert math.isclose(report_200["self_play"]["p_first_wins"], race_exact.solve(200)[0, 0], rel_tol=1e-12)
    for row in rows:
        simulated = row["monte_carlo"]
        assert simulated["games"] == GAMES and 0 < simulated["stderr"] < 0.01, row
        assert abs(simulated["estimate"] - row["p_first_wins"]) < 4 * simulated["stderr"], row


def test_bank_rules_follow_the_turn_values(report_200):
    """The banking rule the report gives for each situation is the exact optimum's: banking at a total is at
    least as good as rolling on there, rolling on better below the boundary."""
    exact = race_exact.solve(200)
    steps = 4
    rolled_at = set(_reachable(200))  # (dice, total) the turn rolls from
    for situation in report_200["bank_rules"]:
        a, b = situation["mine"] // 50, situation["opponent"] // 50
        assert math.isclose(situation["value"], exact[a, b], rel_tol=1e-12)
        values = race_exact._turn_values(a, b, steps, exact)
        for dice, rule in situation["dice"].items():
            for total in range(1, steps - a):
                if (int(dice), total * 50) not in rolled_at:
                    continue
                banks = race_exact._banked(a, b, total, steps, exact) >= values[int(dice), total]
                at_or_above = rule["banks_from"] is not None and total * 50 >= rule["banks_from"]
                assert banks == (at_or_above and total * 50 not in rule["rolls_at"]), (situation, dice, total)


def test_past_its_limit_the_monte_carlo_plays_only_the_fixed_strategies(runner, tmp_path, monkeypatch):
    """Above SIMULATED_OPTIMUM_UP_TO the optimum's move table is not built: its rows say so, the others are played."""
    from dicegraph.cli import main
    from dicegraph.graphs.five_thousand_race import report

    monkeypatch.setattr(report, "SIMULATED_OPTIMUM_UP_TO", 100)
    url = f"sqlite:///{tmp_path / 'race.db'}"
    data = json.loads(runner.invoke(main, ["--db", url, "report", "5000-race", "-p", "target=150", "-n", "500",
                                           "--json"]).stdout)
    rows = [data["self_play"], *data["matches"]]
    assert all(("monte_carlo" in row) == (report.OPTIMAL not in (row["first"], row["second"])) for row in rows)
    assert report.simulated_runs({"target": 150}, False) == sum("monte_carlo" in row for row in rows) == 42
    printed = runner.invoke(main, ["--db", url, "report", "5000-race", "-p", "target=150", "-n", "500"]).stdout
    assert "(the optimum's up to a target of 100)" in printed


def test_duckdb_solves_and_matches_exactly(tmp_path):
    """On DuckDB the decisions take each seat's columns by ``arg_min`` where they are chosen (SQLite joins the moves
    back): the optimum, an agent against it in both seats, and two agents against each other, against exact rationals."""
    from dicegraph.graphs import get_game
    from dicegraph.store.solve import race_matches, readers, turn_cycles, turns
    from dicegraph.store.turn_graph import TurnGraph
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph
    from dicegraph.store.backends import backend_of

    game, params = get_game("5000-race"), {"target": 200}
    engine = open_database(f"duckdb:///{tmp_path / 'race.duckdb'}", create=True)
    built = build_graph(engine, game, params)
    with engine.connect() as connection:
        assert backend_of(connection).arg_min
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
        turn_cycles.ensure_race_solved(connection, graph)
        optimal = readers.state_result(connection, built.graph_id, turns.ensure_policy(connection, graph, "optimal"), "0-0")
        assert math.isclose(optimal.value, race_exact.solve(200)[0, 0], rel_tol=1e-12)
        pairs = [("threshold-2", "optimal"), ("turn-optimal", "threshold-5")]
        together = race_matches.matches(connection, graph, pairs)  # both pairs in one run
        for (first, second), got in zip(pairs, together):
            alone = race_matches.matches(connection, graph, [(first, second)])[0]
            for value, by_itself, exact in zip(got, alone, race_exact.match(200, first, second)):
                assert math.isclose(value, exact, rel_tol=1e-12), (first, second)
                assert math.isclose(by_itself, exact, rel_tol=1e-12), (first, second)
    engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_end_distributions_played_a_state_at_a_time_give_the_same_matches(tmp_path, monkeypatch, backend):
    """The end distributions are played in batches of states (``race_matches.BATCH_ROWS`` rows): one state a batch
    (a batch for each of the optimum's score pairs, and for each of the agents' classes) gives the exact matches,
    as one batch for all does; an agent's classes are fewer than the score pairs (its own score, not theirs)."""
    from dicegraph.graphs import get_game
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph
    from dicegraph.store.solve import race_matches, turn_cycles
    from dicegraph.store.turn_graph import TurnGraph

    game, params = get_game("5000-race"), {"target": 200}
    engine = open_database(f"{backend}:///{tmp_path / 'race.db'}", create=True)
    built = build_graph(engine, game, params)
    pairs = [("threshold-3", "optimal"), ("turn-optimal", "threshold-1")]
    batches: list[int] = []
    original = race_matches.state_batches
    monkeypatch.setattr(race_matches, "state_batches", lambda *args: batches.append(len(found := original(*args))) or found)
    played, default = {}, race_matches.BATCH_ROWS
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
        turn_cycles.ensure_race_solved(connection, graph)
        for rows in (default, 1):
            monkeypatch.setattr(race_matches, "BATCH_ROWS", rows)
            batches.clear()
            played[rows] = race_matches.matches(connection, graph, pairs), list(batches)
    engine.dispose()
    (together, one_batch), (alone, one_state) = played[default], played[1]
    pairs_below_the_target = (200 // 50) ** 2
    assert one_batch == [1, 1] and one_state[0] == pairs_below_the_target and 1 < one_state[1] < pairs_below_the_target
    for (first, second), got, by_state in zip(pairs, together, alone):
        for value, value_by_state, exact in zip(got, by_state, race_exact.match(200, first, second)):
            assert math.isclose(value, exact, rel_tol=1e-12), (first, second)
            assert math.isclose(value_by_state, exact, rel_tol=1e-12), (first, second)


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_the_optimums_end_distributions_read_with_the_rolls_that_offer_the_same_as_one_are_as_stored(
        tmp_path, monkeypatch, backend):
    """The optimum's end distributions (its moves ranked by its stored values, the first within the tolerance of
    the best, the probability of each end spread along them) are the same, end by end and pair by pair, whether
    the turn is read with the rolls that offer the same moves as one or as stored; an agent, which follows its
    own stored choices, is refused the merged turn."""
    import sqlalchemy as sa

    from dicegraph.graphs import get_game
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph
    from dicegraph.store.scratch import turn_work_table
    from dicegraph.store.seats import FOLLOW, RANK
    from dicegraph.store.solve import race_matches, turn_cycles
    from dicegraph.store.solve.turns import ensure_policy
    from dicegraph.store.turn_graph import TurnGraph

    game, params = get_game("5000-race"), {"target": 300}
    engine = open_database(f"{backend}:///{tmp_path / 'race.db'}", create=True)
    built = build_graph(engine, game, params)
    original, asked = turn_cycles.RaceTables, []
    found = {}
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
        turn_cycles.ensure_race_solved(connection, graph)
        optimal = ensure_policy(connection, graph, graph.optimal)
        states = [state for ids in graph.layer_ids.values() for state in range(ids[0], ids[1] + 1)]
        for merge in (True, False):
            monkeypatch.setattr(race_matches, "RaceTables", lambda *args, merged_as=merge, **kwargs:
                                asked.append(kwargs.pop("merged")) or original(*args, merged=merged_as, **kwargs))
            into = turn_work_table(connection, f"ends_{merge:d}", sa.Column("r0", sa.Double, nullable=False))
            race_matches.play_ends(connection, graph, [Seat(RANK, optimal)], optimal, states, into, None, None)
            found[merge] = {(end, state): r for end, state, r in connection.execute(sa.select(into))}
        with pytest.raises(ValueError, match="as stored"):
            original(connection, graph, [Seat(FOLLOW, optimal)], copy_turn=True, merged=True)
    engine.dispose()
    assert asked == [True, True]  # the optimum's run asks for the turn merged
    assert found[True].keys() == found[False].keys() and len(found[True]) > len(states)
    for key, probability in found[False].items():
        assert math.isclose(found[True][key], probability, rel_tol=1e-13, abs_tol=1e-15), key


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_playing_the_next_score_sum_along_changes_no_value_and_no_pass(tmp_path, monkeypatch, backend):
    """Played along with each pass after a score sum's first, the next sum's first pass saves a turn played per
    score sum whose values the pass proves exact; the values and the Newton passes stay those of a solve that
    plays one sum at a time (the numpy reference's passes: it guesses the same way)."""
    from dicegraph.graphs import get_game
    from dicegraph.store.backends import backend_of
    from dicegraph.store.solve import turn_cycles
    from dicegraph.store.turn_graph import TurnGraph
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph

    game, params = get_game("5000-race"), {"target": 300}
    engine = open_database(f"{backend}:///{tmp_path / 'race.db'}", create=True)
    built = build_graph(engine, game, params)
    plays = []  # per turn played, the score sums played from
    original_play = turn_cycles.RaceTables.play

    def counted_play(self, connection, layers):
        plays.append(len(layers))
        return original_play(self, connection, layers)

    monkeypatch.setattr(turn_cycles.RaceTables, "play", counted_play)
    monkeypatch.setenv("DICEGRAPH_WORKERS", "1")  # one connection's plays (a pass is shared out where it walks)
    seat = [Seat.maximising()]
    solves = {}
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
        for speculate in (False, True):
            record = dataclasses.replace(backend_of(connection), pays_per_statement=speculate)
            monkeypatch.setattr(turn_cycles, "backend_of", lambda connection, record=record: record)
            plays.clear()
            values, convergence = turn_cycles.solve_race(connection, graph, seat)
            solves[speculate] = values, convergence, list(plays)
    engine.dispose()
    (alone, one_by_one, plays_alone), (along, together, plays_along) = solves[False], solves[True]
    assert alone.keys() == along.keys()
    for state, value in alone.items():
        assert math.isclose(along[state][0], value[0], rel_tol=1e-12, abs_tol=1e-15), state
    _, numpy_passes = race_numpy.solve(params["target"])
    assert together.passes == one_by_one.passes == sum(numpy_passes)
    assert plays_alone == [1] * one_by_one.passes
    layers = one_by_one.components
    assert len(plays_along) == one_by_one.passes - (layers - 1)  # every sum's first pass but the top's played along
    assert plays_along.count(2) >= layers - 1


def test_a_pass_walked_in_one_recursive_statement_gives_the_values_and_passes_of_a_statement_a_layer(
        tmp_path, monkeypatch):
    """Where a recursive query may group each step's rows (DuckDB), the optimum's passes each walk the turn in one
    statement (store/solve/turn_walk.py), on one connection or shared out over two (each playing every other
    state); a solve that sends a statement a turn layer instead gives every score pair the same value (to 1e-12) in
    the same Newton passes, which are the numpy reference's."""
    import sqlalchemy as sa

    from dicegraph.graphs import get_game
    from dicegraph.store.backends import backend_of
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph
    from dicegraph.store.solve import turn_cycles
    from dicegraph.store.solve.parallel import WORKERS_VARIABLE
    from dicegraph.store.turn_graph import TurnGraph

    game, params = get_game("5000-race"), {"target": 300}
    engine = open_database(f"duckdb:///{tmp_path / 'race.duckdb'}", create=True)
    built = build_graph(engine, game, params)
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: statements.append(statement))
    solves = {}
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, game.turn(params))
        assert backend_of(connection).grouped_recursion
        for walked, workers in ((False, 1), (True, 1), (True, 2)):
            record = dataclasses.replace(backend_of(connection), grouped_recursion=walked)
            monkeypatch.setattr(turn_cycles, "backend_of", lambda connection, record=record: record)
            monkeypatch.setenv(WORKERS_VARIABLE, str(workers))
            statements.clear()
            values, convergence = turn_cycles.solve_race(connection, graph, [Seat.maximising()])
            walks = sum(statement.startswith("WITH RECURSIVE walk") for statement in statements)
            turn_rows = sum(statement.startswith("INSERT INTO tcy_turn") for statement in statements)
            solves[walked, workers] = values, convergence, walks, turn_rows
    engine.dispose()
    layered, by_layer, none, inserts_by_layer = solves[False, 1]
    _, numpy_passes = race_numpy.solve(params["target"])
    assert by_layer.passes == sum(numpy_passes) and none == 0 and len(layered) > 20
    steps = sum(bool(span.rolls) + bool(span.moves) for span in graph.turn_spans)
    plays = inserts_by_layer // (1 + steps)  # the pass's ends put in the turn table, then a statement a step
    assert inserts_by_layer == plays * (1 + steps)
    for workers in (1, 2):
        walked, by_walk, walks, inserts = solves[True, workers]
        assert walked.keys() == layered.keys()
        for state, value in layered.items():
            assert math.isclose(walked[state][0], value[0], rel_tol=1e-12, abs_tol=1e-15), (workers, state)
        assert by_walk.passes == by_layer.passes
        assert walks == inserts == plays * workers  # each connection: the ends, and one statement for the rest


@pytest.mark.parametrize("backend", ["sqlite", "duckdb"])
def test_a_pass_leaves_out_the_turn_past_each_pairs_winning_total_and_changes_no_value(tmp_path, backend):
    """A pass over the widest score sum values the turn's nodes with the rolls that offer the same moves as one
    (fewer than the turn's nodes), and, pruned by the race's horizons, exactly those short of each pair's winning
    turn total (and the turn's ends), fewer still; each gives every pair the value of the pass that plays the
    turn as stored: at the solved values, those values."""
    import sqlalchemy as sa

    from dicegraph.graphs import get_game
    from dicegraph.store.solve import turn_cycles
    from dicegraph.store.turn_graph import TurnGraph
    from dicegraph.store.db import open_database
    from dicegraph.store.load import build_graph
    from dicegraph.store.schema import edge, node

    game, params = get_game("5000-race"), {"target": 300}
    engine = open_database(f"{backend}:///{tmp_path / 'race.db'}", create=True)
    built = build_graph(engine, game, params)
    seat = [Seat.maximising()]
    structure = game.turn(params)
    rows, roots, valued = {}, {}, {}
    with engine.connect() as connection:
        graph = TurnGraph.load(connection, built.graph_id, structure)
        solved, _ = turn_cycles.solve_race(connection, graph, seat)
        layer = max(graph.layer_ids, key=lambda layer: graph.layer_ids[layer][1] - graph.layer_ids[layer][0])
        span, states = graph.game_spans[layer], graph.layer_ids[layer]
        keys = dict(connection.execute(sa.select(node.c.id, node.c.key).where(node.c.graph_id == built.graph_id)).all())
        turn_nodes = connection.execute(sa.select(node.c.key).where(
            node.c.graph_id == built.graph_id, node.c.layer >= graph.turn_spans[0].layer,
            node.c.kind != "terminal")).scalars().all()
        for way, copy_turn, prune in (("stored", False, False), ("merged", True, False), ("pruned", True, True)):
            work = turn_cycles.RaceTables(connection, graph, seat, copy_turn=copy_turn, prune=prune, merged=copy_turn)
            for ids in graph.layer_ids.values():
                work.set_values(connection, ids, {state: solved[state] for state in range(ids[0], ids[1] + 1)}, {})
            work.start(connection, edge.c.id.between(span.first_edge, span.last_edge), edge.c.dst.between(*states))
            work.play_turn(connection)
            rows[way] = connection.execute(sa.select(sa.func.count()).select_from(work.turn).where(
                work.turn.c.node_id.not_in(list(graph.ends.values())))).scalar_one()
            roots[way] = dict(connection.execute(sa.select(work.turn.c.state, work.turn.c.v0)
                                                 .where(work.turn.c.node_id == graph.root)).all())
            if copy_turn:
                valued[way] = [keys[node_id] for node_id in
                               connection.execute(sa.select(work.edges.c.src).distinct()).scalars()]
            work.drop(connection)
    engine.dispose()
    pairs = range(states[0], states[1] + 1)
    assert rows["stored"] == len(pairs) * len(turn_nodes)
    assert len(valued["merged"]) <= len(valued["pruned"]) < len(turn_nodes) / 2
    assert rows["merged"] == len(pairs) * len(valued["merged"])
    assert rows["pruned"] == sum(structure.progress(key) < structure.horizon(keys[state])
                                 for state in pairs for key in valued["pruned"])
    assert rows["pruned"] < rows["merged"]
    for state in pairs:
        for way in ("merged", "pruned"):
            assert math.isclose(roots[way][state], roots["stored"][state], rel_tol=1e-15, abs_tol=1e-15), (keys[state], way)
        assert math.isclose(roots["stored"][state], solved[state][0], rel_tol=1e-12), keys[state]


def test_beyond_its_limit_the_fixed_strategies_play_each_other_only_when_asked(tmp_path, monkeypatch) -> None:
    """Past :data:`ALL_MATCHES_UP_TO` (1000; lowered here to 150, for a race to 200 that takes seconds) the report
    plays each fixed strategy against the optimum in both seats; ``all_matches`` adds their matches among
    themselves, the same numbers for the rest, in a run of the same steps (the matches' progress counts the
    policies' end distributions and the state layers, played once for every pair)."""
    from contextlib import contextmanager

    import dicegraph
    import dicegraph.graphs.five_thousand_race.report as race_report
    from dicegraph.graphs import get_game
    from dicegraph.graphs.protocol import OPTIMAL

    from dicegraph.store.solve import race_matches

    monkeypatch.setattr(race_report, "ALL_MATCHES_UP_TO", 150)
    responses = race_matches.best_responses  # the best responses that every match brings count their own layers
    monkeypatch.setattr(race_matches, "best_responses", lambda *args, progress=None: responses(*args[:3]))
    counted: list[int] = []

    @contextmanager
    def meter(label, length):
        if label.startswith("playing the matches"):
            counted.clear()
        yield counted.append if label.startswith("playing the matches") else None

    db = dicegraph.open(f"sqlite:///{tmp_path / 'race.db'}", meter=meter)
    against = db.report("5000-race", {"target": 200})
    fixed = len(get_game("5000-race").agents({"target": 200}))
    assert not against["all_matches"] and len(against["matches"]) == 2 * fixed
    assert all(OPTIMAL in (row["first"], row["second"]) for row in against["matches"])
    steps = len(counted)
    assert steps > 0
    everything = db.report("5000-race", {"target": 200}, all_matches=True)
    assert len(counted) == steps  # 28 pairs in the steps of 7
    assert everything["all_matches"] and len(everything["matches"]) == 2 * fixed + fixed * (fixed - 1)
    for row, alone in zip(everything["matches"], against["matches"], strict=False):
        assert (row["first"], row["second"]) == (alone["first"], alone["second"])
        assert math.isclose(row["p_first_wins"], alone["p_first_wins"], rel_tol=1e-12), row
    assert everything["p_first_wins"] == against["p_first_wins"]
    assert race_report.simulated_runs({"target": 200}, False) == 1 + 2 * fixed


def test_simulate_plays_the_races_agents_from_its_rules_and_sends_its_optimum_to_the_report(runner, tmp_path):
    """The race keeps no decisions of its optimum (its report's matches play it): ``simulate`` of the optimum says
    so in one line and exits 1 (it used to fail with a traceback); an agent is played from the rules, in both
    seats, and wins as often moving first as its exact self-play says (tests/race_exact.py)."""
    from dicegraph.cli import main

    url = f"sqlite:///{tmp_path / 'race.db'}"
    assert runner.invoke(main, ["--db", url, "report", "5000-race", "-p", "target=100", "-n", "0"]).exit_code == 0
    result = runner.invoke(main, ["--db", url, "simulate", "5000-race", "-p", "target=100", "-n", "100"])
    message = result.stderr.strip()
    assert result.exit_code == 1 and "\n" not in message, result.output
    assert message == ("Error: 5000-race plays its stored policy 'optimal' only in its report's matches "
                       "(dicegraph report 5000-race -n GAMES); simulate plays its agents")
    played = json.loads(runner.invoke(main, ["--db", url, "simulate", "5000-race", "-p", "target=100", "-n", "4000",
                                             "--policy", "threshold-2", "--json"]).stdout)
    exact, _ = race_exact.match(100, "threshold-2", "threshold-2")
    assert abs(played["estimate"] - float(exact)) < 4 * played["stderr"]


def _equal_to_exact_responses(responses: list[dict], target: int) -> None:
    """Each best response's wins in each seat equal :func:`race_exact.best_response` (Newton's method in fractions,
    apart from the SQL) to 1e-12; they are never below what the optimum wins against the same policy; and against
    the optimum itself the best response wins the game's value, in each seat."""
    game_value = race_exact.solve(target)[0, 0]
    assert {row["policy"] for row in responses} >= {"threshold-2", "threshold-4", "turn-optimal", "optimal"}
    for row in responses:
        first, second = race_exact.best_response(target, row["policy"])
        got = row["response_wins"]
        assert math.isclose(got["first"], first, rel_tol=1e-12) and math.isclose(got["second"], second, rel_tol=1e-12)
        for seat in ("first", "second"):
            assert got[seat] >= row["optimum_wins"][seat] - 1e-12, row
    optimum = next(row for row in responses if row["policy"] == "optimal")["response_wins"]
    assert math.isclose(optimum["first"], game_value, rel_tol=1e-12)
    assert math.isclose(optimum["second"], 1 - game_value, rel_tol=1e-12)


def test_each_policys_best_response_equals_the_exact_one(report_200):
    _equal_to_exact_responses(report_200["responses"], 200)


def test_duckdb_finds_the_same_best_responses_and_the_report_prints_them(tmp_path):
    from click.testing import CliRunner

    from dicegraph.cli import main

    db = f"duckdb:///{tmp_path / 'race.duckdb'}"
    data = json.loads(CliRunner().invoke(main, ["--db", db, "report", "5000-race", "-p", "target=300", "-n", "0",
                                                "--json"], catch_exceptions=False).stdout)
    _equal_to_exact_responses(data["responses"], 300)
    assert any(row["gain"]["mean"] > 1e-4 for row in data["responses"])  # threshold-4's is better than the optimum
    printed = CliRunner().invoke(main, ["--db", db, "report", "5000-race", "-p", "target=300", "-n", "0"]).stdout
    row = next(row for row in data["responses"] if row["policy"] == "threshold-4")
    assert f"threshold-4   {row['optimum_wins']['first']:.6f}" in printed
    assert f"{row['response_wins']['first']:.6f} / {row['response_wins']['second']:.6f}" in printed


@pytest.mark.parametrize(("backend", "target"), [("sqlite", 200), ("duckdb", 300)])
def test_a_best_response_is_stored_compared_played_and_simulated_from_the_rules(tmp_path, backend, target):
    """``solve 5000-race --objective best-response:POLICY`` stores the best response: its value and the wins the
    stored policy's moves (ranked by the answered policy's values, kept beside its own) give against the policy in
    each seat equal :func:`race_exact.best_response` in fractions; ``compare`` and ``play`` read it; played from the
    rules against the policy it answers, it wins as often as its value says (Monte Carlo, 4 standard errors).
    Where it departs from the optimum, position by position, is where the explorer's positions
    (:func:`positions_compared`) show its move worse under the optimum's values."""
    from click.testing import CliRunner

    import dicegraph
    from dicegraph.cli import main

    db = dicegraph.open(f"sqlite:///{tmp_path / 'race.db'}" if backend == "sqlite"
                        else f"duckdb:///{tmp_path / 'race.duckdb'}")
    params = {"target": target}
    db.build("5000-race", params)
    for answered in ("threshold-4", "optimal"):
        solved = db.solve("5000-race", params, objective=f"best-response:{answered}")
        first, second = race_exact.best_response(target, answered)
        assert math.isclose(solved["value"], first, rel_tol=1e-12)
        wins = solved["response"]["response_wins"]
        assert math.isclose(wins["first"], first, rel_tol=1e-12) and math.isclose(wins["second"], second, rel_tol=1e-12)
        listed = {row["name"]: row for row in db.policies("5000-race", params)}
        assert listed[f"best-response:{answered}"]["answers"] == answered
        estimate = db.simulate("5000-race", params, policy=f"best-response:{answered}", games=GAMES, seed=3)
        assert math.isclose(estimate["exact"], solved["value"], rel_tol=1e-12) and abs(estimate["z"]) < 4, estimate
    assert math.isclose(solved["value"], float(race_exact.solve(target)[0, 0]), rel_tol=1e-12)  # the game's value
    compared = json.loads(CliRunner().invoke(main, [
        "--db", db.url, "compare", "5000-race", "-p", f"target={target}", "best-response:threshold-4", "optimal",
        "--against", "threshold-4", "--seat", "second", "--json"], catch_exceptions=False).stdout)
    assert math.isclose(compared["seats"]["second"]["policy"], race_exact.best_response(target, "threshold-4")[1],
                        rel_tol=1e-12)
    departures = db.compare("5000-race", "best-response:threshold-4", "optimal", params, opponent="threshold-4",
                            top=10**6)
    assert (departures["decisions"], departures["worse"], departures["tied"], {
        d["key"]: pytest.approx(d["loss"], rel=1e-12) for d in departures["deviations"]}) == positions_compared(
        db.url, params, "best-response:threshold-4")
    assert departures["worse"] == len(departures["deviations"]) and (target < 300 or departures["worse"] > 0)
    if target == 300:  # docs/best-response.md gives its figures
        page = (Path(__file__).resolve().parents[1] / "docs" / "best-response.md").read_text()
        said = " ".join(page.split())
        assert (f"To 300, of {departures['decisions']:,} positions with a choice, threshold-4's best response moves "
                f"worse than the optimum at {departures['worse']}, and {departures['tied']:,} have more") in said
        losses = [d["loss"] for d in departures["deviations"]]
        assert f"each giving up {min(losses):.3f} to {max(losses):.3f}" in said
    played = db.play("5000-race", params, policies=["best-response:threshold-4", "threshold-4"], seed=5)
    assert played["finished"] and played["players"]["first"]["policy"] == "best-response:threshold-4"
    refused = CliRunner().invoke(main, ["--db", db.url, "solve", "5000-race", "-p", f"target={target}",
                                        "--objective", "best-response:best-response:threshold-4"])
    assert refused.exit_code == 1 and "is itself a best response" in refused.output
    assert len(refused.output.strip().splitlines()) == 1


def positions_compared(url: str, params: dict, policy: str) -> tuple[int, int, int, dict[str, float]]:
    """Return how ``policy`` compares with the optimum at every position of the stored race, as the explorer's
    positions read them (:class:`dicegraph.store.turn_positions.TurnPositions`: each state's turn valued in a pass of
    its own, the moves chosen here): the positions with two moves or more, those where the policy's move is worth
    less than the best beyond the tie tolerance (position key -> the loss), and those where two moves are best. A
    position or a move past the state's horizon (reached only by declining a win at once) is left out, as a
    comparison leaves it out."""
    import sqlalchemy as sa

    from dicegraph.graphs import get_game
    from dicegraph.graphs.protocol import OPTIMAL, TIE
    from dicegraph.store.errors import NotFound
    from dicegraph.store.schema import node
    from dicegraph.store.turn_positions import SEPARATOR, TurnPositions, position_key

    engine = sa.create_engine(url)
    decisions, tied, worse = 0, 0, {}
    with engine.connect() as connection:
        graph_id = connection.execute(sa.select(node.c.graph_id).limit(1)).scalar_one()
        positions = TurnPositions(connection, graph_id, get_game("5000-race").turn(params)).bound(connection, [policy])
        structure = positions.turn.structure
        states = connection.execute(sa.select(node.c.id, node.c.key).where(
            node.c.graph_id == graph_id, node.c.layer < positions.turn.turn_spans[0].layer,
            node.c.kind != "terminal")).all()
        positions.prefetch([state.id for state in states])
        for state in states:
            horizon = structure.horizon(state.key)
            for turn_node in positions.nodes.values():
                if turn_node.kind != "decision" or structure.progress(turn_node.key) >= horizon:
                    continue
                try:
                    seen = positions.look(position_key(state.key, turn_node.key))
                except NotFound:  # not reached from the state in play
                    continue
                moves = [move for move in seen["edges"] if not move["to"].startswith(state.key + SEPARATOR)
                         or structure.progress(move["to"].partition(SEPARATOR)[2]) < horizon]
                if len(moves) < 2:
                    continue
                worths = [move["values"][OPTIMAL] for move in moves]
                best = max(worths)
                slack = TIE * (1 + abs(best))
                decisions += 1
                tied += sum(worth >= best - slack for worth in worths) >= 2
                taken = next(move["values"][OPTIMAL] for move in moves if policy in move["chosen_by"])
                if best - taken > slack:
                    worse[seen["key"]] = best - taken
    engine.dispose()
    return decisions, len(worse), tied, worse
