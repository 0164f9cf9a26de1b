"""Playing and analysing games (dicegraph play, dicegraph analyse, Database.play and Database.analyse): a person's
game typed at the prompt, a stopped game resumed from its record, records that do not fit their game refused in
one line, and the analysis' identity on games small enough to check by hand."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import dicegraph
from dicegraph.cli import main
from tests.commands import assert_one_line_error, run

PIG = ["-p", "target=10", "-p", "holds=4"]


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a database holding Jackpot with 4 cells and Pig to 10, each built, solved and its agents evaluated."""
    url = f"sqlite:///{tmp_path_factory.mktemp('play') / 'play.db'}"
    assert run(url, "report", "jackpot", "-p", "cells=4", "-n", "0").exit_code == 0
    assert run(url, "report", "pig", *PIG, "-n", "0").exit_code == 0
    return url


def auto(url: str, *args: str) -> dict[str, Any]:
    """Return what ``dicegraph play ... --auto ... --json`` prints (it must exit 0)."""
    result = run(url, "play", *args, "--auto", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_game_between_policies_is_analysed_as_its_record_is(solved: str, tmp_path: Path) -> None:
    """Pig between the optimum and hold-at-4: the record written as it went analyses to what play printed, the
    values keep the identity, the optimum's moves lose nothing and the agent's lose what the values say."""
    record = tmp_path / "pig.json"
    played = auto(solved, "pig", "optimal", "hold-at-4", *PIG, "--seed", "3", "--record", str(record))
    assert played["finished"] and played["outcome"] in (0.0, 1.0)
    assert played["players"]["first"]["policy"] == "optimal" and played["players"]["second"]["policy"] == "hold-at-4"
    analysed = json.loads(run(solved, "analyse", str(record), "--json").stdout)
    assert analysed == {key: value for key, value in played.items() if key != "record"}
    identity = analysed["identity"]
    assert identity["change"] == pytest.approx(analysed["outcome"] - analysed["start_value"], abs=1e-12)
    assert identity["sum_of_steps"] == pytest.approx(identity["change"], abs=1e-12)
    moves = [step for step in analysed["steps"] if step["kind"] == "move"]
    assert all(step["loss"] == 0 for step in moves if step["player"] == "first")
    for step in moves:  # a move's loss is what its value gives up against the best, from the mover's view
        mover = 1 if step["player"] == "first" else -1
        assert step["loss"] == pytest.approx(mover * (step["best_value"] - step["value_after"]), abs=1e-12)
    assert analysed["players"]["second"]["loss"] == pytest.approx(sum(s["loss"] for s in moves if s["player"] == "second"))


def test_one_seed_one_game(solved: str) -> None:
    first = auto(solved, "jackpot", "hilo", "-p", "cells=4", "--seed", "11")
    assert auto(solved, "jackpot", "hilo", "-p", "cells=4", "--seed", "11") == first
    assert first["record"]["seed"] == 11 and first["record"]["seats"] == {"solo": "hilo"}


def test_jackpots_first_roll_and_move_by_hand(solved: str) -> None:
    """Jackpot with 4 cells from the start: the start value is the optimum's exact win probability, the luck of a
    roll of 1-2 is the value of flipping 3 (or 1 and 2) after it minus the start value, in fractions."""
    db = dicegraph.open(solved)
    analysed = db.analyse({"game": "jackpot", "params": {"cells": 4}, "seats": {"solo": "you"},
                           "steps": [{"roll": "1-2"}, {"move": "flip 3"}]})
    start = {row["name"]: row["value"] for row in db.policies("jackpot", {"cells": 4})}["optimal"]
    roll, move = analysed["steps"]
    assert analysed["start_value"] == pytest.approx(start, rel=1e-12)
    assert roll["probability"] == pytest.approx(float(Fraction(1, 36)), rel=1e-12)  # the ordered roll 1-2
    position = db.position("jackpot", "0/1-2", {"cells": 4}, depth=1)
    best = max(edge["values"]["optimal"] for edge in position["edges"])
    assert roll["luck"] == pytest.approx(best - start, rel=1e-12)
    flipped = next(edge["values"]["optimal"] for edge in position["edges"] if edge["label"] == "flip 3")
    assert move["loss"] == pytest.approx(best - flipped, abs=1e-15)
    assert not analysed["finished"] and analysed["outcome"] is None


def test_a_person_plays_at_the_prompt_with_hints(solved: str, tmp_path: Path) -> None:
    """Jackpot typed at the prompt: a hint first, then the first move offered each time; the record kept."""
    record = tmp_path / "mine.json"
    result = CliRunner().invoke(main, ["--db", solved, "play", "jackpot", "-p", "cells=4", "--seed", "5",
                                       "--record", str(record), "--json"], input="?\n" + "1\n" * 10)
    assert result.exit_code == 0, result.output
    played = json.loads(result.stdout)
    assert "gives up" in result.stderr + result.output  # the hint's table
    assert played["finished"] and played["players"]["solo"]["policy"] == "you"
    assert json.loads(record.read_text())["steps"] == played["record"]["steps"]
    assert run(solved, "analyse", str(record), "--json").stdout.strip()


def test_a_stopped_game_keeps_its_record_and_resumes(solved: str, tmp_path: Path) -> None:
    """Pig against the optimum: q after the first move and its roll exits 130 with the record kept; --resume goes
    on with the same dice (the seed's draws replayed) and finishes the game the record began."""
    record = tmp_path / "stopped.json"
    stopped = CliRunner().invoke(main, ["--db", solved, "play", "pig", *PIG, "--seed", "2", "--record", str(record)],
                                 input="roll\nq\n")
    assert stopped.exit_code == 130, stopped.output
    kept = json.loads(record.read_text())
    assert "--resume" in stopped.stderr and kept["steps"][0] == {"move": "roll"} and len(kept["steps"]) == 2
    resumed = CliRunner().invoke(main, ["--db", solved, "play", "pig", "--resume", str(record), "--json"],
                                 input="hold\n" * 200)
    assert resumed.exit_code == 0, resumed.output
    finished = json.loads(resumed.stdout)
    assert finished["record"]["steps"][:len(kept["steps"])] == kept["steps"] and finished["finished"]


@pytest.mark.parametrize("steps, phrases", [
    ([{"move": "flip 1"}], ["step 1", "a roll is expected", "'roll 1-1'"]),
    ([{"roll": "7-7"}], ["step 1", "roll '7-7' is not offered"]),
    ([{"roll": "1-2"}, {"move": "flip 4"}], ["step 2", "move 'flip 4' is not offered", "'flip 3'"]),
])
def test_a_record_that_does_not_fit_its_game_is_refused_by_step(solved: str, tmp_path: Path,
                                                                 steps: list[dict[str, str]], phrases: list[str]) -> None:
    record = tmp_path / "bad.json"
    record.write_text(json.dumps({"game": "jackpot", "params": {"cells": 4}, "steps": steps}))
    assert_one_line_error(run(solved, "analyse", str(record)), *phrases)


def test_steps_after_the_end_are_refused(solved: str, tmp_path: Path) -> None:
    played = auto(solved, "jackpot", "hilo", "-p", "cells=4", "--seed", "1")["record"]
    record = tmp_path / "long.json"
    record.write_text(json.dumps({**played, "steps": [*played["steps"], {"roll": "1-1"}]}))
    assert_one_line_error(run(solved, "analyse", str(record)), f"step {len(played['steps']) + 1}", "the game is over")


@pytest.mark.parametrize("text, phrase", [
    ('{"game": "jackpot", "steps": [', "not JSON"),
    ("[1, 2]", "not a dicegraph record"),
    ('{"game": "jackpot", "steps": [{"jump": "3"}]}', "step 1 is"),
    ('{"dicegraph_record": 9, "game": "jackpot"}', "format 9"),
    ('{"game": "nonesuch"}', "unknown game"),
    ('{"game": "jackpot", "params": {"cells": 7}}', "no graph of 'jackpot'"),
])
def test_a_malformed_record_is_refused_in_one_line(solved: str, tmp_path: Path, text: str, phrase: str) -> None:
    record = tmp_path / "bad.json"
    record.write_text(text)
    assert_one_line_error(run(solved, "analyse", str(record)), phrase)


def test_an_unsolved_graph_says_how_to_solve_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'built.db'}"
    assert run(url, "build", "jackpot", "-p", "cells=3").exit_code == 0
    assert_one_line_error(run(url, "play", "jackpot", "-p", "cells=3", "--auto"), "not solved",
                          "dicegraph report jackpot -p cells=3")


def test_typed_dice_are_checked_against_the_position(solved: str) -> None:
    """Real dice typed in: an impossible roll is refused with what is offered, and asked again."""
    result = CliRunner().invoke(main, ["--db", solved, "play", "jackpot", "-p", "cells=4", "--dice", "manual",
                                       "--json"], input="9-9\n1-2\n1\n" + "5-5\n" * 3)
    assert result.exit_code == 0, result.output
    assert "roll '9-9' is not offered" in result.stderr
    assert json.loads(result.stdout)["record"]["seed"] is None


def test_policies_not_stored_are_refused(solved: str) -> None:
    assert_one_line_error(run(solved, "play", "pig", *PIG, "--auto", "optimal", "nonesuch"), "no policy 'nonesuch'")
    assert_one_line_error(run(solved, "play", "pig", *PIG, "--auto", "optimal", "optimal", "optimal"),
                          "two-player game takes 1 or 2 policies")


def test_the_chart_is_drawn_as_its_name_says(solved: str, tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    auto(solved, "pig", "hold-at-4", *PIG, "--seed", "4", "--record", str(record))
    for name, start in (("game.png", b"\x89PNG\r\n\x1a\n"), ("game.svg", b"<?xml")):
        drawn = run(solved, "analyse", str(record), "--chart", str(tmp_path / name))
        assert drawn.exit_code == 0, drawn.output
        assert (tmp_path / name).read_bytes().startswith(start)
    assert_one_line_error(run(solved, "analyse", str(record), "--chart", str(tmp_path / "game.gif")), ".png or .svg")


def test_a_server_readies_each_solved_turn_game_and_its_first_game_is_the_same(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'turns.db'}"
    db = dicegraph.open(url)
    solved = db.build("5000-race", {"target": "150"})["graph_id"]
    db.solve(solved)
    db.build("5000-race", {"target": "100"})  # built, not solved: left to its first game, which says so
    db.build("jackpot", {"cells": "3"})  # not solved either
    served = dicegraph.open(url)
    assert served.ready_to_play() == [solved]
    record = {"game": "5000-race", "params": {"target": 150}, "seats": {"first": "you", "second": "optimal"},
              "steps": []}
    assert served.playing(record) == dicegraph.open(url).playing(record)
