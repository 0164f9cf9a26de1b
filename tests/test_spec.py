"""A game's declared spec (graphs/spec.py): every registered game declares what it offers, and a declaration that
breaks a promise is refused at registration in one line naming the game, while the other games keep working."""

from __future__ import annotations

import dataclasses
import types

import pytest

from dicegraph.graphs import BUILT_IN, GAMES, get_game, register
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.spec import EXTRAS, FROM_REPEATING, FROM_RULES, REQUIRED, GameSpec, InvalidGame


def declaring(**changes: object) -> types.SimpleNamespace:
    """Return Jackpot's declaration as a plain object, with ``changes`` (None removes a name)."""
    from dicegraph.graphs import jackpot

    names = {key: getattr(jackpot, key) for key in REQUIRED + EXTRAS if hasattr(jackpot, key)}
    names |= {"name": "copy"} | changes
    return types.SimpleNamespace(**{key: value for key, value in names.items() if value is not None})


def test_every_built_in_game_is_registered_from_its_declaration() -> None:
    for module in BUILT_IN:
        spec = get_game(module.name)
        derived = {name: getattr(spec, name) for name in (*FROM_RULES, *FROM_REPEATING)  # what its rules give it, made anew each time
                   if hasattr(module, "rules") and not hasattr(module, name) and getattr(spec, name) is not None}
        assert spec == dataclasses.replace(GameSpec.declared_by(module), **derived) and spec.origin == "dicegraph"
        for extra in set(spec.extras()) - derived.keys() - set(spec.hooks.offered()):
            assert getattr(module, extra) == getattr(spec, extra)  # what it declared, nothing it did not
        assert all(hasattr(getattr(module, hook), "dicegraph_impl") for hook in spec.hooks.offered())
    assert {get_game("pig").players, get_game("5000-race").players, get_game("jackpot").players} == {1, 2}
    assert get_game("school").repeating and not get_game("pig").repeating


@pytest.mark.parametrize(("changes", "broken"), [
    ({"build": None, "rules": None}, "does not declare build"),
    ({"loops": "yes"}, "loops must be True or False"),
    ({"objective": "best"}, "objective must be max or min (it is 'best')"),
    ({"version": 0}, "version must be a whole number from 1"),
    ({"players": 3}, "players must be 1 or 2"),
    ({"title": " "}, "title must be a text that is not empty"),
    ({"simulator": "not a function"}, "simulator must be a function"),
    ({"repeating": True, "rules": None}, "a repeating game declares rules (a TurnsInFull of its RepeatingTurn)"),
    ({"play_turns": lambda *args: {}}, "play_turns belongs to a repeating game (it declares repeating = True)"),
    ({"repeating": "yes"}, "repeating must be True or False (it is 'yes')"),
    ({"small_params": {"tiles": 3}}, "small_params names unknown parameters (tiles)"),
    ({"solves": {"worst": ("least", "payoff = 0")}}, "solve 'worst' must maximise or minimise"),
    ({"diagrams": {"all": {}}}, "diagrams is a presentation hook: give it as a function marked @hookimpl"),
    ({"describe": lambda report: []}, "describe is a presentation hook: give it as a function marked @hookimpl"),
    ({"summarise": hookimpl(lambda report: [])}, "unknown hook 'summarise', marked @hookimpl"),
    ({"describe": hookimpl(lambda report, colour: [])}, "hook describe asks for colour, which it is not given"),
    ({"diagrams": hookimpl(lambda: {"Not a name": {}})}, "the name 'Not a name' must be lower-case letters"),
])
def test_a_declaration_that_breaks_a_promise_is_refused_in_one_line(changes: dict, broken: str) -> None:
    with pytest.raises(InvalidGame) as refused:
        register(declaring(**changes), origin="a test")
    message = str(refused.value)
    assert message.startswith("game 'copy' (a test)") and broken in message and "\n" not in message
    assert "copy" not in GAMES and get_game("jackpot").title == "Jackpot"


def test_two_games_of_one_name_are_refused() -> None:
    with pytest.raises(InvalidGame, match="a game of that name is registered already"):
        register(declaring(name="jackpot", title="Another"), origin="a test")
    assert get_game("jackpot").title == "Jackpot"


def test_the_store_reads_no_registry() -> None:
    """store/ is handed what a game offers (its spec, a first guess) and never looks a game up itself."""
    import ast
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "store").glob("*.py")):
        for found in ast.walk(ast.parse(path.read_text())):
            if isinstance(found, ast.ImportFrom) and found.module == "dicegraph.graphs":
                raise AssertionError(f"{path.name}:{found.lineno} imports {[a.name for a in found.names]} from the registry")


def test_only_the_solve_dispatch_and_the_loader_ask_how_a_game_stores_its_turn() -> None:
    """Whether a game's turn is stored once (its declared ``repeating``) is read where the solve picks its method
    (store/solve/entry.py) and where a stored graph's view is made (store/view.py), and by the declaration itself
    (and a paired game's, graphs/paired.py, which declares what its game declares); every other tool asks them (the spec's derived ``turn`` is read by them alone too)."""
    import ast
    from pathlib import Path

    import dicegraph.graphs

    root = Path(dicegraph.graphs.__file__).resolve().parent.parent
    allowed = {Path("store/solve/entry.py"), Path("store/view.py"), Path("graphs/spec.py"), Path("graphs/paired.py")}
    asking = []
    for folder in ("graphs", "store", "web", "dicegraph"):
        for path in sorted((root / folder).rglob("*.py")):
            where = path.relative_to(root)
            if where in allowed:
                continue
            for found in ast.walk(ast.parse(path.read_text())):
                if isinstance(found, ast.Attribute) and found.attr in {"repeating", "stores_turn_once"}:
                    asking.append(f"{where}:{found.lineno}")
    assert not asking, asking


def test_a_game_gives_its_presentation_through_hooks_and_gets_each_defaults_otherwise() -> None:
    """A hook takes any of its arguments by name; a game that gives none gets each hook's default."""
    @hookimpl
    def describe(report: dict) -> list[str]:
        return [f"{len(report['policies'])} policies"]

    @hookimpl
    def simulated_runs(all_matches: bool) -> int:
        return 5 if all_matches else 3

    given = GameSpec.declared_by(declaring(describe=describe, simulated_runs=simulated_runs), origin="a test")
    assert given.hooks.offered() == ["describe", "simulated_runs"]
    assert given.hooks.describe({"policies": [1, 2]}) == ["2 policies"]
    assert (given.hooks.simulated_runs({}, True), given.hooks.simulated_runs({}, False)) == (5, 3)
    bare = GameSpec.declared_by(declaring(), origin="a test")
    assert bare.hooks.offered() == [] and bare.hooks.describe({}) == [] and bare.hooks.diagrams() == {}
    assert bare.hooks.analyse(None, {}, {}) == {} and bare.hooks.advisor() is None
