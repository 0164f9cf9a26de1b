"""docs/guide.md, run as written: each module of the guide registered and checked, every command it shows run
(exit codes checked) with the output it prints, its numbers computed, the table of declared names complete, and
the first game installed as a plugin from a package of its own."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from dicegraph.cli import main
from dicegraph.graphs import register, unregister
from dicegraph.graphs.exact import exact_value
from dicegraph.graphs.spec import GameSpec
from dicegraph.store.db import open_database
from dicegraph.store.schema import node, policy, value

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "guide.md").read_text()


def section(title: str) -> str:
    """Return the guide's section whose heading starts with ``title``, up to the next one."""
    return GUIDE.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]


def module_code(name: str) -> str:
    """Return the code of the guide's module ``name`` (the python block after ``<!-- module: name -->``)."""
    return GUIDE.split(f"<!-- module: {name} -->\n```python\n", 1)[1].split("```", 1)[0]


def commands_of(text: str) -> list[list[str]]:
    """Return the ``dicegraph`` commands of a section's sh blocks, as arguments."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [shlex.split(line)[1:] for block in blocks for line in block.strip().splitlines()]


def loaded(name: str, folder: Path) -> ModuleType:
    """Return the guide's module ``name``, written to ``folder`` and imported (as ``name``, so that a later module
    imports it as the guide says: step 3's ``from bust import BustRules``)."""
    path = folder / f"{name}.py"
    path.write_text(module_code(name))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


GUIDE_MODULES = ("bust", "piglet", "bust_turns")  # in the guide's order: a module imports those before it


@pytest.fixture(scope="module")
def guide_games(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, GameSpec]]:
    """The guide's games by module name, registered for the tests of this module, then taken out again."""
    folder = tmp_path_factory.mktemp("guide")
    games = {name: register(loaded(name, folder), origin="docs/guide.md") for name in GUIDE_MODULES}
    yield games
    for name, game in games.items():
        unregister(game.name)
        sys.modules.pop(name, None)


def run_commands(commands: list[list[str]], url: str, where: Path) -> list[str]:
    """Return what each command prints, run in ``where`` on the database ``url``; each must exit 0."""
    printed = []
    here = os.getcwd()
    os.chdir(where)  # export writes its picture where it runs
    try:
        for arguments in commands:
            result = CliRunner().invoke(main, ["--db", url, *arguments])
            assert result.exit_code == 0, (arguments, result.stderr, result.exception)
            printed.append(result.stdout)
    finally:
        os.chdir(here)
    return printed


def test_step_one_runs_every_command_and_prints_the_guides_output(guide_games: Any, tmp_path: Path) -> None:
    text = section("Step 1")
    printed = run_commands(commands_of(text), f"sqlite:///{tmp_path / 'own.db'}", tmp_path)
    assert (tmp_path / "bust.png").stat().st_size > 0
    report, query = printed[2], printed[4]
    table = report.strip().split("\n\n")[0]  # the policy table, before the note on Monte Carlo
    assert table in text and query.strip() in text


def test_step_two_the_sql_solve_is_the_exact_value_the_guide_states(guide_games: Any, tmp_path: Path) -> None:
    text = section("Step 2")
    url = f"sqlite:///{tmp_path / 'piglet.db'}"
    printed = run_commands(commands_of(text), url, tmp_path)
    rules = guide_games["piglet"].rules({"goal": 2})
    optimal, holding = exact_value(rules, "max", loops=True), exact_value(rules, "max", "hold-at-1", loops=True)
    words = " ".join(text.split())
    assert f"{optimal.numerator}/{optimal.denominator} with both playing optimally" in words
    assert f"{holding.numerator}/{holding.denominator} with both holding at once" in words
    engine = open_database(url)
    with engine.connect() as connection:
        stored = dict(connection.execute(
            sa.select(policy.c.name, value.c.value).select_from(value.join(policy, policy.c.id == value.c.policy_id)
                                                               .join(node, sa.and_(node.c.id == value.c.node_id,
                                                                                   node.c.graph_id == policy.c.graph_id)))
            .where(node.c.key == "0-0 +0", policy.c.goal.is_(None))).all())
    engine.dispose()
    assert stored["optimal"] == pytest.approx(float(optimal), rel=1e-12)
    assert stored["hold-at-1"] == pytest.approx(float(holding), rel=1e-12)
    assert optimal == Fraction(4, 7)
    report, compared = printed
    assert report.strip().split("\n\n")[0] in text and compared.strip() in text


def test_step_three_a_repeating_turn_is_stored_once_and_worth_each_of_its_turns(guide_games: Any,
                                                                                 tmp_path: Path) -> None:
    """The guide's repeating game (no TurnStructure, no report of its own): its report prints what the guide
    shows, ``check`` holds (exit 0; its exact and Monte Carlo checks among them), and its optimum is three times
    one turn of step 1, in fractions."""
    text = section("Step 3")
    url = f"sqlite:///{tmp_path / 'turns.db'}"
    report, checked = run_commands(commands_of(text), url, tmp_path)
    assert report.strip().split("\n\n")[0] in text and "BREAKS" not in checked
    assert "holds   exact:" in checked and "holds   monte-carlo:" in checked
    one_turn = exact_value(guide_games["bust"].rules({"cap": 10}), "max")
    whole = exact_value(guide_games["bust_turns"].rules({"turns": 3, "cap": 10}), "max")
    assert whole == 3 * one_turn and f"{whole.numerator}/{whole.denominator}" in " ".join(text.split())
    stored = json.loads(CliRunner().invoke(main, ["--db", url, "policies", "bust-turns", "--json"]).stdout)
    assert next(row["value"] for row in stored if row["name"] == "optimal") == pytest.approx(float(whole), rel=1e-12)
    built = json.loads(CliRunner().invoke(main, ["--db", url, "graphs", "--json"]).stdout)
    assert f"({built[0]['nodes']} nodes: the 4 turn states, then the turn)" in " ".join(text.split())


@pytest.mark.parametrize("name", ["bust", "piglet"])
def test_the_guides_games_pass_the_conformance_checks(guide_games: Any, name: str) -> None:
    from tests import test_conformance as conformance

    game = guide_games[name]
    conformance.test_metadata(game)
    conformance.test_two_builds_are_identical_and_stream_by_the_rules(game)
    conformance.test_every_agent_decides_at_every_decision(game)
    conformance.test_a_game_with_rules_builds_the_graph_its_rules_expand_to(game)
    conformance.test_games_played_from_the_rules_agree_with_the_exact_values(game)


def test_the_table_names_everything_a_game_may_declare() -> None:
    from dataclasses import fields

    from dicegraph.graphs.presentation import HOOK_NAMES
    from dicegraph.graphs.spec import EXTRAS, FROM_REGISTRY, FROM_REPEATING, MEANINGS, REQUIRED

    table = section("What a game declares")
    named = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    assert named == set(REQUIRED + EXTRAS) == set(MEANINGS)
    assert named == {item.name for item in fields(GameSpec)} - {"origin", "hooks", *FROM_REPEATING, *FROM_REGISTRY}
    hooks = set(re.findall(r"^\| `(\w+)\(", table, re.M))
    assert hooks == set(HOOK_NAMES)  # every presentation hook (graphs/hookspecs.py), with what it is given


def test_the_guides_tables_are_what_the_code_reads() -> None:
    """The tables of a rules object's and a game module's names are generated from graphs/rules.py and
    graphs/spec.py (their names, defaults and meanings); regenerate them with ``python -m tests.guide_tables``."""
    from tests.guide_tables import PAGE, page

    assert PAGE.read_text() == page(), "docs/guide.md's tables are stale: run .venv/bin/python -m tests.guide_tables"
    rules = section("What a rules object defines")
    assert "| `moves(position, roll)` | required |" in rules and "| `clock(position)` | Return 0" in rules


PLUGIN_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "1.0"

[project.entry-points."dicegraph.games"]
{entry} = "{module}"

[tool.setuptools]
py-modules = ["{module}"]
"""


def test_step_one_works_as_a_plugin_from_another_installed_package(tmp_path: Path) -> None:
    """The guide's first game, packaged on its own with an entry point in ``dicegraph.games`` and installed by pip
    (into a folder of its own on the path), is found with no edit to dicegraph: listed with where it comes from,
    and reported. Beside it, a plugin that breaks a promise and one that fails to import are left out, each
    named on stderr with the reason, and every other game keeps working."""
    from tests.processes import dicegraph

    code = module_code("bust")
    packages = {"dicegraph-bust": ("bust", "dicegraph_bust", code),
                "dicegraph-badly": ("badly", "dicegraph_badly", code.replace('objective = "max"', 'objective = "best"')
                                    .replace('name = "bust"', 'name = "badly"')),
                "dicegraph-broken": ("broken", "dicegraph_broken", "import no_such_module_anywhere\n")}
    for name, (entry, module, text) in packages.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "pyproject.toml").write_text(PLUGIN_PYPROJECT.format(name=name, entry=entry, module=module))
        (folder / f"{module}.py").write_text(text)
    installed = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(installed),
                          *(str(tmp_path / name) for name in packages)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    env = dict(os.environ, PYTHONPATH=str(installed))
    listed = subprocess.run(dicegraph("games", "--json"), capture_output=True, text=True, cwd=ROOT, env=env)
    assert listed.returncode == 0, listed.stderr
    games = {game["name"]: game for game in json.loads(listed.stdout)}
    assert games["bust"]["origin"] == "plugin dicegraph-bust 1.0, entry point bust = dicegraph_bust"
    assert "jackpot" in games and "badly" not in games and "broken" not in games
    refused = listed.stderr.strip().splitlines()
    assert len(refused) == 2 and any("objective must be max or min (it is 'best')" in line for line in refused)
    assert any("dicegraph-broken" in line and "ModuleNotFoundError" in line for line in refused)
    url = f"sqlite:///{tmp_path / 'plugin.db'}"
    reported = subprocess.run(dicegraph("--db", url, "report", "bust", "-n", "0", "--json"), capture_output=True,
                              text=True, cwd=ROOT, env=env)
    assert reported.returncode == 0, reported.stderr
    assert {row["name"] for row in json.loads(reported.stdout)["policies"]} >= {"optimal", "bank-at-10"}
