"""Monte Carlo: estimates played from the rules agree with the exact values of the stored graph."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

import dicegraph.graphs.montecarlo as montecarlo
from dicegraph.cli import main
from dicegraph.graphs import GAMES, get_game
from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.jackpot import ROLLS, next_positions
from dicegraph.store.catalog import find_policy, resolve_graph, stored_choices
from dicegraph.store.db import open_database
from dicegraph.store.errors import NotFound
from dicegraph.store.simulation import monte_carlo
from tests.test_jackpot import exact_win

JACKPOT = get_game("jackpot")
SEED = 20261122


@pytest.mark.parametrize("policy", [*JACKPOT.agents({"cells": 9}), "optimal"])
def test_every_policy_is_within_four_standard_errors(jackpot_db: str, policy: str) -> None:
    with open_database(jackpot_db, read_only=True).connect() as connection:
        result = monte_carlo(connection, JACKPOT, {"cells": 9}, policy, games=400_000, seed=SEED)
    exact = float(exact_win(None if policy == "optimal" else policy))
    assert math.isclose(result["exact"], exact, rel_tol=1e-12)
    # a Bernoulli estimate: the standard error follows from the estimate itself
    p, n = result["estimate"], result["games"]
    assert math.isclose(result["stderr"], math.sqrt(p * (1 - p) / (n - 1)), rel_tol=1e-9)
    assert abs(result["estimate"] - exact) < 4 * result["stderr"]
    assert math.isclose(result["z"], (result["estimate"] - exact) / result["stderr"], rel_tol=1e-12)


def test_same_seed_same_estimate_other_seed_other_estimate() -> None:
    first = montecarlo.simulate(JACKPOT, {"cells": 9}, "hilo", 50_000, seed=3)
    again = montecarlo.simulate(JACKPOT, {"cells": 9}, "hilo", 50_000, seed=3, progress=lambda n: None)
    other = montecarlo.simulate(JACKPOT, {"cells": 9}, "hilo", 50_000, seed=4)
    assert first == again
    assert first.mean != other.mean


def test_chunks_combine_to_the_mean_and_deviation_of_all_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """Payoffs 0, 1, ..., n-1 in chunks of 7: the running combination equals numpy on the whole list."""
    monkeypatch.setattr(montecarlo, "CHUNK", 7)
    played = []

    def simulator(params, policy):  # noqa: ANN001, ANN202
        def play(games: int, rng: np.random.Generator) -> np.ndarray:
            payoffs = np.arange(len(played), len(played) + games, dtype=float) ** 1.5
            played.extend(payoffs)
            return payoffs
        return play

    game = SimpleNamespace(name="counting", simulator=simulator)
    steps: list[int] = []
    estimate = montecarlo.simulate(game, {}, "any", 100, seed=0, progress=steps.append)  # type: ignore[arg-type]
    everything = np.array(played)
    assert steps == [0] + [7] * 14 + [2]  # 0 as play begins (a progress counter's clock starts there), then each chunk
    assert math.isclose(estimate.mean, everything.mean(), rel_tol=1e-12)
    assert math.isclose(estimate.stderr, everything.std(ddof=1) / math.sqrt(100), rel_tol=1e-12)


def test_stored_choices_replay_the_agent_they_came_from(jackpot_db: str) -> None:
    """HiLo stored by the builder and HiLo played from the rules make the same table."""
    with open_database(jackpot_db, read_only=True).connect() as connection:
        graph = resolve_graph(connection, "jackpot")
        choices = stored_choices(connection, find_policy(connection, graph.id, "hilo").id)
    assert next_positions(9, choices) == next_positions(9, "hilo")


def test_a_stored_move_the_rules_forbid_is_refused() -> None:
    always_one = {f"0/{i}-{j}": "flip 1" for i, j in ROLLS}  # legal only where a die shows 1
    with pytest.raises(DicegraphError, match=r"plays 'flip 1' at 0/2-2, where the rules offer flip 2, flip 4"):
        next_positions(9, always_one)


def test_a_stored_policy_needs_the_database() -> None:
    with pytest.raises(NotFound, match="build and solve it first"):
        monte_carlo(None, JACKPOT, {"cells": 9}, "optimal", games=10, seed=1)


def test_agents_need_no_database_and_have_no_exact_value() -> None:
    result = monte_carlo(None, JACKPOT, {"cells": 9}, "hilo", games=1000, seed=1)
    assert result["exact"] is None and result["z"] is None and 0 < result["estimate"] < 1


def test_games_without_a_simulator_say_so() -> None:
    with pytest.raises(DicegraphError, match="has no simulator"):
        montecarlo.simulate(GAMES["synthetic"], {}, "first", 10, seed=1)


def test_cli_simulate_json(runner: CliRunner, jackpot_db: str) -> None:
    result = runner.invoke(main, ["--db", jackpot_db, "simulate", "jackpot", "--policy", "last",
                                  "-n", "100000", "--seed", "5", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"game", "policy", "against", "games", "estimate", "stderr", "exact", "z"}
    assert data["against"] is None  # an agent plays every seat
    assert data["games"] == 100_000 and data["policy"] == "last"
    assert math.isclose(data["exact"], float(exact_win("last")), rel_tol=1e-12)
    assert abs(data["z"]) < 4


@pytest.mark.parametrize("stored", ["no file", "an empty file"])
def test_cli_simulate_plays_an_agent_where_nothing_is_stored_and_writes_nothing(runner: CliRunner, tmp_path: Path,
                                                                                stored: str) -> None:
    """An agent is played from the rules whatever the database holds: with no database file, and with an empty one
    (nothing built yet, as a new server database is), ``simulate`` gives its estimate with no exact value beside it
    and leaves the file as it was."""
    path = tmp_path / "games.db"
    if stored == "an empty file":
        path.touch()
    result = runner.invoke(main, ["--db", f"sqlite:///{path}", "simulate", "jackpot", "--policy", "last",
                                  "-n", "20000", "--seed", "5", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["exact"] is None and data["z"] is None and data["games"] == 20_000
    assert abs(data["estimate"] - float(exact_win("last"))) < 4 * data["stderr"]
    assert path.exists() == (stored == "an empty file") and (not path.exists() or path.stat().st_size == 0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "nobody"], "no policy 'nobody'"),
        (["-n", "1"], "Invalid value for '-n'"),
        (["-p", "cells=13"], "invalid value '13' for parameter 'cells'"),
    ],
)
def test_cli_simulate_bad_input(runner: CliRunner, jackpot_db: str, args: list[str], message: str) -> None:
    result = runner.invoke(main, ["--db", jackpot_db, "simulate", "jackpot", *args])
    assert result.exit_code != 0
    assert message in result.stderr
