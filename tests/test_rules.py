"""The rules-level API (graphs/rules.py) for two players and loops: the expander (graphs/expand.py) derives signs,
loops and anchors, the exact recursion (graphs/exact.py) and the playout (graphs/playout.py) work from the rules
alone, and the SQL solve of an expansion equals the exact value in fractions.

Games are small and written here, plus Pig's own rules (graphs/pig.py) with and without its clock.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from dicegraph.graphs import get_game, pig
from dicegraph.graphs.errors import InvalidGraph
from dicegraph.graphs.exact import exact_value
from dicegraph.graphs.expand import expand
from dicegraph.graphs.playout import play_one
from dicegraph.graphs.protocol import CyclicLayers, Edge, Node, Row, one_by_one
from dicegraph.graphs.rules import DiceRules, Ending, Move
from dicegraph.graphs.spec import GameSpec
from dicegraph.store.db import open_database
from dicegraph.store.load import build_graph
from dicegraph.store.schema import node, policy, value
from dicegraph.store.solve.layers import solve

STANDARD_ERRORS = 4


class Duel(DiceRules):
    """Two players roll a die in turn; a 6 wins; on any other face the roller may pass or roll again, and a
    second miss in a turn passes the turn anyway. A position is (misses this turn, 0 or 1)."""

    def __init__(self) -> None:
        self.agents = {"always-pass": lambda position, roll, moves: moves[0]}

    def starts(self) -> list[Any]:
        return [0]

    def key(self, position: Any) -> str:
        return "won" if position == "won" else f"missed {position}"

    def label(self, position: Any) -> str:
        return self.key(position)

    def payoff(self, position: Any) -> float | None:
        return 1.0 if position == "won" else None

    def rolls(self, position: Any) -> list[tuple[str, int]]:
        return [("6", 1), ("miss", 5)]

    def moves(self, position: Any, roll: str) -> list[Move]:
        if roll == "6" or position == 1:
            return []
        return [Move(0, "pass", passes=True), Move(1, "roll again")]

    def ending(self, position: Any, roll: str) -> Ending | Move:
        return Ending("won", "won", 1.0, roll_label="{rolls}: wins") if roll == "6" else Move(0, "{rolls}: turn over",
                                                                                              passes=True)


class Reroll(DiceRules):
    """One player rolls until a 6 (worth 1) or stops (worth 0); each reroll costs 1/8: it loops without passing."""

    agents = {"never-stop": lambda position, roll, moves: moves[0]}

    def starts(self) -> list[str]:
        return ["start"]

    def key(self, position: str) -> str:
        return position

    def label(self, position: str) -> str:
        return position

    def payoff(self, position: str) -> float | None:
        return {"won": 1.0, "stopped": 0.0}.get(position)

    def rolls(self, position: str) -> list[tuple[str, int]]:
        return [("6", 1), ("other", 5)]

    def moves(self, position: str, roll: str) -> list[Move]:
        return [] if roll == "6" else [Move("start", "again", reward=-0.125), Move("stopped", "stop")]

    def ending(self, position: str, roll: str) -> Move:
        return Move("won", "{rolls}")


class ClocklessPig(pig.PigRules):
    """Pig's rules without a clock: the expander alone finds the loops and their order."""

    def clock(self, position: Any) -> int:
        return 0


def rules_game(name: str, rules: Any, players: int, loops: bool, objective: str = "max") -> GameSpec:
    """Return a spec for ``rules`` whose build, agents and simulator come from the rules."""
    module = types.SimpleNamespace(name=name, title=name, summary="a test game", version=1, objective=objective,
                                   outcome="its value", params=(), rules=lambda params: rules, players=players,
                                   loops=loops)
    return GameSpec.declared_by(module, origin="a test")


def solved_in_sql(game: GameSpec, tmp_path: Any) -> dict[tuple[str, str], float]:
    """Return (policy, key) -> value of the game built and solved (optimum and agents) in SQLite."""
    engine = open_database(f"sqlite:///{tmp_path}/rules.db", create=True)
    built = build_graph(engine, game, {})
    with engine.begin() as connection:
        solve(connection, built.graph_id, game.objective, "optimal")
        from dicegraph.store.solve.entry import ensure_solved

        ensure_solved(connection, built.graph_id, game)
        rows = connection.execute(sa.select(policy.c.name, node.c.key, value.c.value).select_from(
            value.join(policy, policy.c.id == value.c.policy_id)
            .join(node, sa.and_(node.c.graph_id == policy.c.graph_id, node.c.id == value.c.node_id))))
        found = {(name, key): v for name, key, v in rows}
    engine.dispose()
    return found


def edges_by_label(rows: Iterable[Row]) -> dict[str, Edge]:
    return {row.label: row for row in rows if isinstance(row, Edge)}


def test_a_move_that_hands_the_turn_over_is_stored_with_sign_minus_one_and_the_constant_sum() -> None:
    rows = list(one_by_one(expand(Duel(), players=2, loops=True)))
    edges = edges_by_label(rows)
    assert (edges["pass"].sign, edges["pass"].reward) == (-1, 1.0)
    assert (edges["miss: turn over"].sign, edges["miss: turn over"].reward) == (-1, 1.0)
    assert (edges["roll again"].sign, edges["6: wins"].sign) == (1, 1)
    assert edges["pass"].chosen_by == ("always-pass",)


def test_the_duel_solved_in_sql_equals_the_exact_value_from_the_rules(tmp_path: Any) -> None:
    game = rules_game("duel", Duel(), players=2, loops=True)
    stored = solved_in_sql(game, tmp_path)
    optimal, passing = exact_value(Duel(), "max", loops=True), exact_value(Duel(), "max", "always-pass", loops=True)
    assert passing == Fraction(6, 11)  # 1/6 + 5/6 (1 - p): the first to roll a 6
    assert optimal > passing  # rolling again after a miss is better than handing the die over
    assert stored["optimal", "missed 0"] == pytest.approx(float(optimal), rel=1e-12)
    assert stored["always-pass", "missed 0"] == pytest.approx(float(passing), rel=1e-12)


def test_a_loop_that_never_hands_the_turn_over_gets_its_anchor_from_a_search(tmp_path: Any) -> None:
    rows = list(one_by_one(expand(Reroll(), loops=True)))
    components = [row for row in rows if isinstance(row, CyclicLayers)]
    first_layer = {row.key for row in rows if isinstance(row, Node) and row.layer == components[0].first}
    assert len(components) == 1 and first_layer == {"start"}
    assert exact_value(Reroll(), "max", loops=True) == Fraction(3, 8)  # v = 1/6 + 5/6 (v - 1/8)
    stored = solved_in_sql(rules_game("reroll", Reroll(), players=1, loops=True), tmp_path)
    assert stored["optimal", "start"] == pytest.approx(3 / 8, rel=1e-12)
    assert stored["never-stop", "start"] == pytest.approx(3 / 8, rel=1e-12)


@pytest.mark.parametrize("rules", [pig.PigRules(8, (4,)), ClocklessPig(8, (4,))], ids=["clock", "no clock"])
def test_pigs_rules_expand_to_a_graph_whose_sql_solve_is_exact(rules: pig.PigRules, tmp_path: Any) -> None:
    rows = list(one_by_one(expand(rules, players=2, loops=True)))
    components = [row for row in rows if isinstance(row, CyclicLayers)]
    anchors = {row.key for row in rows if isinstance(row, Node) and any(row.layer == part.first for part in components)}
    assert anchors == {row.key for row in rows if isinstance(row, Node) and row.key.endswith(" +0")}  # turn starts
    assert len(components) > 1  # without a clock too, the loops found are solved one after another
    stored = solved_in_sql(rules_game("pig-rules", rules, players=2, loops=True), tmp_path)
    for name in ("optimal", "hold-at-4"):
        expected = exact_value(rules, "max", None if name == "optimal" else name, loops=True)
        assert stored[name, "0-0 +0"] == pytest.approx(float(expected), rel=1e-12), name


def test_a_pig_game_played_from_the_rules_agrees_with_the_exact_match() -> None:
    """Monte Carlo of hold-at-4 (first) against the optimum's moves (second), from the rules alone."""
    rules = pig.PigRules(8, (4,))
    from tests import pig_exact

    _, best = pig_exact.optimum(8)
    exact = pig_exact.evaluate(8, pig.hold_at(4), best.__getitem__)[0, (0, 0, 0)]
    optimum = {pig.decision_key(*at): move for at, move in best.items()}
    rng = np.random.default_rng(3)
    draws = iter(rng.random(2_000_000).tolist())
    wins = [play_one(rules, ("hold-at-4", optimum), draws.__next__) for _ in range(20_000)]
    estimate, error = np.mean(wins), np.std(wins) / np.sqrt(len(wins))
    assert abs(estimate - float(exact)) < STANDARD_ERRORS * error


class Broken(Duel):
    """The duel with one promise broken, as ``how`` says."""

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        if how == "agent":
            self.agents = {"cheat": lambda position, roll, moves: Move(0, "skip")}

    def rolls(self, position: Any) -> list[tuple[str, Any]]:
        return [("6", 1), ("miss", 2.5 if self.how == "weight" else 5)]


@pytest.mark.parametrize(("how", "players", "loops", "broken"), [
    ("none", 1, True, "hands the turn over, in a game for one player"),
    ("none", 2, False, "the rules loop at"),
    ("weight", 2, True, "has weight 2.5: weights are whole numbers from 1"),
    ("agent", 2, True, "agent 'cheat' picks"),
])
def test_rules_that_break_a_promise_are_refused_in_one_line_naming_the_game(how: str, players: int, loops: bool,
                                                                           broken: str) -> None:
    game = rules_game("broken", Broken(how), players=players, loops=loops)
    with pytest.raises(InvalidGraph) as refused:
        list(game.build({}))
    message = str(refused.value)
    assert message.startswith("game 'broken': ") and broken in message and "\n" not in message


def test_a_game_with_rules_gets_its_build_agents_and_simulator_from_them() -> None:
    game = rules_game("duel", Duel(), players=2, loops=True)
    assert game.agents({}) == ("always-pass",)
    assert list(one_by_one(game.build({}))) == list(one_by_one(expand(Duel(), players=2, loops=True)))
    wins = game.simulator({}, "always-pass")(4000, np.random.default_rng(1))
    assert abs(np.mean(wins) - 6 / 11) < STANDARD_ERRORS * np.std(wins) / np.sqrt(len(wins))
    assert dataclasses.replace(get_game("jackpot")).build is get_game("jackpot").build  # its own, declared


def test_games_played_from_rules_that_remember_their_answers_are_the_games_the_rules_play() -> None:
    """The rules' simulator asks the rules once a position (``Remembered``): with the same draws, Pig's games
    (hold-at-4 against the optimum, positions that are tuples) and the bear-off's give the first player the same,
    game by game, as :func:`play_one` over the rules themselves, and the rules are asked fewer times."""
    from dicegraph.graphs.bear_off.game import BearOffRules
    from dicegraph.graphs.playout import Remembered
    from tests import pig_exact

    _, best = pig_exact.optimum(8)
    pig_policy = ("hold-at-4", {pig.decision_key(*at): move for at, move in best.items()})
    for rules, playing in ((pig.PigRules(8, (4,)), pig_policy), (BearOffRules(4, 3), "most-off")):
        asked: list[str] = []
        rolls = rules.rolls
        rules.rolls = lambda position: asked.append("rolls") or rolls(position)  # type: ignore[method-assign]
        played = []
        for kept in (rules, Remembered(rules)):
            draws = iter(np.random.default_rng(4).random(200_000).tolist())
            played.append([play_one(kept, playing, draws.__next__) for _ in range(2_000)])
            asked.append("played")
        assert played[0] == played[1] and len(set(played[0])) > 1
        first = asked.index("played")
        assert 0 < asked.count("rolls") - first < first  # Remembered asked, but fewer times


def test_the_store_view_of_a_repeating_turn_is_derived_from_its_rules() -> None:
    """No game writes a TurnStructure: School's, Yahtzee's and the race's come from their rules (the stored turn's
    start, the rules' end labels, the optimum and the rankings), and a turn that gives a progress without a horizon
    is refused in one line naming its rules."""
    from dicegraph.graphs.five_thousand_race.game import RaceRules
    from dicegraph.graphs.protocol import with_defaults
    from dicegraph.graphs.repeating import turn_structure

    policies = {"school": ["optimal", "bob"], "yahtzee": ["optimal", "greedy", "above-average"],
                "5000-race": ["optimal"]}
    for name, names in policies.items():
        game = get_game(name)
        params = with_defaults(game, game.small_params or {})
        structure, rules = game.turn(params), game.rules(params).game
        turn = rules.stored_turn or rules.turn
        assert structure.root == turn.key(turn.starts()[0]) and [p.name for p in structure.policies] == names
        assert (structure.horizon is None) == (name != "5000-race") and structure.states == rules.state_count()
    broken = RaceRules(150)
    broken.state_horizon = None
    with pytest.raises(InvalidGraph, match="^RaceRules gives turn_progress and state_horizon together, or neither$"):
        turn_structure(broken)


class _Take(DiceRules):
    """One turn: roll a die and take its face, or roll once more and take that."""

    def starts(self) -> list[str]:
        return ["roll"]

    def key(self, position: str) -> str:
        return position

    def payoff(self, position: str) -> float | None:
        return 0.0 if position.startswith("took") else None

    def rolls(self, position: str) -> list[tuple[int, int]]:
        return [(face, 1) for face in range(1, 7)]

    def moves(self, position: str, face: int) -> list[Move]:
        return [Move(f"took {face}", "take")] + ([Move("again", "again")] if position == "roll" else [])


def _turns_played(state_of: Any) -> Any:
    """Return a repeating game of two turns of :class:`_Take`, each face taken scored, its states ``state_of(turns
    played)``."""
    from dicegraph.graphs.repeating import RepeatingTurn

    class TwoTurns(RepeatingTurn):
        turn = _Take()

        def first_state(self) -> Any:
            return state_of(0)

        def state_key(self, state: Any) -> str:
            return str(state[0])

        def state_payoff(self, state: Any) -> float | None:
            return 0.0 if state[0] == 2 else None

        def through(self, state: Any, end: str) -> Move:
            return Move(state_of(state[0] + 1), end, reward=float(end.split()[1]))

    return TwoTurns()


def test_a_repeating_game_whose_states_cannot_be_dictionary_keys_is_valued_as_one_whose_states_can() -> None:
    """The copied turns (``TurnsInFull``) keep a position's key and where a state goes through an end, worked out
    once; a state that cannot be a key (a list) is worked out each time, to the same exact value: a turn is worth
    (3 x 3.5 + 4 + 5 + 6) / 6 = 17/4 (take a 4 or more, else roll again), two turns 17/2."""
    from dicegraph.graphs.repeating import TurnsInFull

    values = [exact_value(TurnsInFull(_turns_played(state_of)), "max") for state_of in (lambda n: (n,), lambda n: [n])]
    assert values == [Fraction(17, 2), Fraction(17, 2)]
