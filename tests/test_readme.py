"""The README's and the manual's (docs/) commands and numbers are the ones the project runs and prints."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.graphs import get_game
from dicegraph.store.db import open_database
from dicegraph.store.report import game_report

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted(DOCS.glob("games/*.md"))]


def page(name: str) -> str:
    """Return the text of the manual's page ``docs/NAME.md``."""
    return (DOCS / f"{name}.md").read_text()


def printed_by(runner: CliRunner, args: list[str]) -> str:
    """Return what ``dicegraph ARGS`` prints on stdout, once it has exited 0 (a failing command fails the test)."""
    result = runner.invoke(main, args)
    assert result.exit_code == 0, (args, result.stderr, result.exception)
    return result.stdout


def setup_commands() -> list[str]:
    block = README.split("## Set up", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_exactly_two_setup_commands_and_ci_runs_the_test_one() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert "report jackpot" in commands[0] and commands[1].endswith("pytest")
    assert commands[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_readme_report_table_is_what_report_prints(runner: CliRunner, jackpot_db: str) -> None:
    printed = printed_by(runner, ["--db", jackpot_db, "report", "jackpot"])
    assert printed.strip() in README


def test_readme_compare_is_what_compare_prints(runner: CliRunner, jackpot_db: str) -> None:
    printed = printed_by(runner, ["--db", jackpot_db, "compare", "jackpot", "hilo", "--top", "4"])
    assert printed.strip() in page("games/jackpot")


def tour_commands() -> list[list[str]]:
    """The README tour's commands, each as the arguments after ``dicegraph``."""
    block = README.split("## A tour", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True)[1:] for line in block.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def toured(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a database where the main command (report jackpot) and then the whole tour have run."""
    folder = tmp_path_factory.mktemp("tour")
    url = f"sqlite:///{folder / 'tour.db'}"
    game_report(open_database(url, create=True), get_game("jackpot"), {"cells": 9})
    here = os.getcwd()
    os.chdir(folder)  # the tour writes optimal.png where it runs
    try:
        for args in tour_commands():
            result = CliRunner().invoke(main, ["--db", url, *args])
            assert result.exit_code == 0, (args, result.output)
    finally:
        os.chdir(here)
    assert (folder / "optimal.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return url


@pytest.mark.parametrize("starts", ["SELECT move", "SELECT layer"])
def test_readme_queries_print_the_same_once_the_tour_has_run(runner: CliRunner, toured: str, starts: str) -> None:
    """The tour builds more graphs (Jackpot with 10 cells, Shut The Box): the README's queries still print their rows."""
    sql_page = page("sql")
    sql = re.search(rf'\$ dicegraph query "({starts}[^"]+)"', sql_page).group(1)
    printed = printed_by(runner, ["--db", toured, "query", sql])
    assert len(printed.strip().splitlines()) > 2 and printed.strip() in sql_page.replace("\n    ", "\n")


def test_readme_pictures_are_the_ones_report_draws() -> None:
    """The PNGs the README and the manual show are named as ``report --diagrams`` names them, one per diagram a
    game declares, and the explorer's screenshots as ``tests/test_browser.py`` names them."""
    from dicegraph.graphs import GAMES

    pictures = sorted({(where.parent / found).resolve().relative_to(ROOT).as_posix() for where in PAGES
                       for found in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", where.read_text())})
    declared = [f"docs/{game.name}-{name}.png" for game in GAMES.values() for name in game.hooks.diagrams()]
    taken = (ROOT / "tests/test_browser.py").read_text()
    screenshots = [f"docs/{name}" for name in re.findall(r'shots / "([a-z-]+\.png)"', taken)]
    assert len(screenshots) >= 2  # the issue asks the README to show at least two
    assert sorted(pictures) == sorted(declared + screenshots)
    for picture in pictures:
        assert (ROOT / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_readme_shut_the_box_report_is_what_report_prints(runner: CliRunner, db_url: str) -> None:
    printed = printed_by(runner, ["--db", db_url, "report", "shut-the-box"])
    assert printed.strip() in page("games/shut-the-box")


def test_readme_cant_stop_report_is_what_report_prints(runner: CliRunner, db_url: str) -> None:
    printed = printed_by(runner, ["--db", db_url, "report", "cant-stop"])
    assert printed.strip() in page("games/cant-stop")


def test_readme_advice_is_what_advise_prints(runner: CliRunner, db_url: str) -> None:
    printed = printed_by(runner, ["--db", db_url, "cant-stop", "advise", "--board", "6:>1,7:>1,8:>1",
                                   "--roll", "2,3,5,6"])
    assert printed.strip() in page("games/cant-stop")


def test_readme_5000_report_is_what_report_prints(runner: CliRunner, db_url: str) -> None:
    printed = printed_by(runner, ["--db", db_url, "report", "5000"])
    assert printed.strip() in page("games/5000")


def test_readme_school_report_and_advice_are_what_they_print(runner: CliRunner, whole_game: str) -> None:
    printed = printed_by(runner, ["--db", whole_game, "report", "school"])
    assert printed.strip() in page("games/school")
    advice = printed_by(runner, ["--db", whole_game, "school", "advise", "--roll", "1,2,2,4,5", "--rolls-left", "2"])
    assert advice.strip() in page("games/school")


def test_readme_yahtzee_report_is_what_report_prints(runner: CliRunner, yahtzee_game: str) -> None:
    printed = printed_by(runner, ["--db", yahtzee_game, "report", "yahtzee", "-p", "bonuses=off", "-n", "20000"])
    assert printed.strip() in page("games/yahtzee")


def test_readme_turn_policy_query_is_what_query_prints(runner: CliRunner, whole_game: str) -> None:
    block = page("sql").split('$ dicegraph query "SELECT policy.name')[1].split("```")[0]
    sql = "SELECT policy.name" + block.split('"\n')[0]
    printed = printed_by(runner, ["--db", whole_game, "query", sql])
    assert printed.strip() in block


def test_readme_pig_report_is_what_report_prints(runner: CliRunner, tmp_path: Path) -> None:
    """The race to 30 in the README, built and solved afresh (a minute on SQLite)."""
    url = f"sqlite:///{tmp_path / 'pig.db'}"
    printed = printed_by(runner, ["--db", url, "report", "pig", "-p", "target=30", "-n", "20000"])
    assert printed.strip() in page("games/pig")


def test_readme_two_player_compare_is_what_compare_prints(runner: CliRunner, tmp_path: Path) -> None:
    """Pig to 30 with hold-at-10 and hold-at-20: the README's comparison, played as matches."""
    url = f"sqlite:///{tmp_path / 'pig.db'}"
    printed_by(runner, ["--db", url, "report", "pig", "-p", "target=30", "-p", "holds=10,20", "-n", "0"])
    printed = printed_by(runner, ["--db", url, "compare", "pig", "hold-at-10", "--top", "0"])
    assert printed.strip() in page("games/pig")


def test_readme_race_report_is_what_report_prints(runner: CliRunner, tmp_path: Path) -> None:
    """The race to 300: its exact numbers, matches and banking rules, as ``report`` prints them."""
    url = f"sqlite:///{tmp_path / 'race.db'}"
    printed = printed_by(runner, ["--db", url, "report", "5000-race", "-p", "target=300"])
    assert printed.strip() in page("games/5000-race")




def test_the_bear_off_page_is_what_report_and_propagate_print(runner: CliRunner, tmp_path: Path) -> None:
    """Six checkers on six points: the report and the rolls still needed from six on the 6-point; the race of
    two checkers a side."""
    url = f"sqlite:///{tmp_path / 'bear-off.db'}"
    for args in (["report", "bear-off", "-p", "checkers=6", "-n", "20000"],
                 ["propagate", "bear-off", "-p", "checkers=6", "--from", "0-0-0-0-0-6"],
                 ["report", "bear-off-race", "-p", "checkers=2", "-n", "20000"]):
        printed = printed_by(runner, ["--db", url, *args])
        assert f"$ dicegraph {shlex.join(args)}\n{printed.strip()}\n```" in page("games/bear-off"), args


def test_the_yatzy_page_is_what_report_prints(runner: CliRunner, tmp_path: Path) -> None:
    """Scandinavian Yatzy's last six boxes: the report the page shows."""
    args = ["report", "yahtzee", "-p", "rules=yatzy", "-p", "boxes=Fours,Fives,Sixes,Two pairs,Full house,Yatzy",
            "-n", "20000"]
    printed = printed_by(runner, ["--db", f"sqlite:///{tmp_path / 'yatzy.db'}", *args])
    assert f"$ dicegraph {shlex.join(args)}\n{printed.strip()}\n```" in page("games/yatzy")


def test_the_readme_is_a_front_door_of_at_most_200_lines() -> None:
    assert len(README.splitlines()) <= 200


def test_the_cli_reference_is_what_the_commands_say() -> None:
    """docs/cli.md is generated from the commands; regenerate it with ``python -m tests.cli_reference``."""
    from tests.cli_reference import PAGE, reference

    assert PAGE.read_text() == reference(), "docs/cli.md is stale: run .venv/bin/python -m tests.cli_reference"


def _anchor(title: str) -> str:
    """Return the anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("where", PAGES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_link_between_pages_leads_somewhere(where: Path) -> None:
    """Each relative link of the README and the manual names a file that exists, and a heading in it."""
    for target in re.findall(r"\]\(([^)\s]+)\)", where.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (where.parent / path).resolve() if path else where
        assert linked.exists(), (where.name, target)
        if anchor:
            headings = re.findall(r"(?m)^#+ (.*)$", linked.read_text())
            assert anchor in {_anchor(heading) for heading in headings}, (where.name, target)


def test_the_tutorials_commands_run(runner: CliRunner, toured: str) -> None:
    """Every command of docs/tutorial.md's ``sh`` blocks, once the README's main command and tour have run."""
    blocks = [block.split("```", 1)[0] for block in page("tutorial").split("```sh")[1:]]
    commands = [shlex.split(line, comments=True)[1:] for block in blocks for line in block.splitlines() if line.strip()]
    assert commands
    for args in commands:
        printed_by(runner, ["--db", toured, *args])


def test_the_play_pages_commands_run_and_print_its_analysis(runner: CliRunner, tmp_path: Path, whole_game: str) -> None:
    """Every command of docs/play.md's ``sh`` blocks, in a folder of their own (they write game.json); School's
    in the session's database that holds it solved; the analysis lines the page shows are what ``analyse`` prints."""
    blocks = [block.split("```", 1)[0] for block in page("play").split("```sh")[1:]]
    commands = [(whole_game if " school" in block else f"sqlite:///{tmp_path / 'play.db'}", shlex.split(line, comments=True)[1:])
                for block in blocks for line in block.splitlines() if line.strip()]
    assert any(url == whole_game for url, _ in commands)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        printed = [printed_by(runner, ["--db", url, *args]) for url, args in commands]
    finally:
        os.chdir(here)
    plain = re.sub(r"(?ms)^```\w+\n.*?^```\n", "", page("play"))  # the page without its sh and json blocks
    shown = re.search(r"(?ms)^```\n(.*?)^```", plain).group(1)  # the first plain block: the analysis' start
    assert shown.strip() and shown in printed[2]
