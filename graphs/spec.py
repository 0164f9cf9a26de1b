"""What a game is, declared once: :class:`GameSpec`, read from a game's module and checked when it is registered.

A game module (``graphs/jackpot.py``) declares its model as module attributes: the
required ones of :class:`dicegraph.graphs.protocol.Game`, and any of the optional extras
listed in :data:`EXTRAS`. What it adds to the tools' presentation it gives through hooks
(:mod:`dicegraph.graphs.hookspecs`), gathered into the spec's ``hooks``. Registration reads
exactly those names into one typed, frozen object, checks them, and from then on every
tool asks the spec (``game.hooks.offers("charts")``), never the module (no ``getattr``
probing): what a game offers is what it declared.

>>> from dicegraph.graphs import jackpot
>>> spec = GameSpec.declared_by(jackpot, origin="dicegraph")
>>> spec.name, spec.players, spec.turn is None, sorted(spec.hooks.diagrams())
('jackpot', 1, True, ['hilo-layers', 'hilo-move-labels'])
>>> spec.extras()
['diagrams', 'rules', 'simulator', 'small_params']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from types import ModuleType
from typing import Any

from dicegraph.graphs.errors import DicegraphError, InvalidGraph
from dicegraph.graphs.paired import Pairing
from dicegraph.graphs.presentation import Presentation, hook_problem
from dicegraph.graphs.protocol import OBJECTIVES, OPTIMAL, Param, Row, value_text

NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # a game's or a diagram's name: it becomes part of file names
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]*")  # a parameter's name, as -p NAME=VALUE and a page's address give it
PLAYERS = (1, 2)  # a game for one player, or a two-player zero-sum game seen from the player to move
REQUIRED = ("name", "title", "summary", "version", "objective", "outcome", "params", "agents", "build")
FROM_RULES = ("agents", "build", "simulator")  # what a game written at the rules level gets from them unless it gives its own
FROM_REPEATING = ("turn",)  # what a repeating game's rules give it, never declared: how the store keeps its turn
FROM_REGISTRY = ("pairing",)  # what the registry gives a paired game (graphs/paired.py), never declared
FUNCTIONS = ("rules", "check_params", "estimated_edges", "first_guess", "simulator", "play_turns")  # a game may give
DATA = ("players", "loops", "repeating", "small_params", "solves")  # values a game may give
EXTRAS = FUNCTIONS + DATA
# what a game adds to the tools' presentation (reports, pages, charts, diagrams, advisors, commands) it gives through
# hooks (dicegraph.graphs.hookspecs), not as names of its model; a game that declares only its model gets every tool
# (tests/test_examples.py checks the shapes)

# what each name a game module may declare means (docs/guide.md's table is made from these and the
# defaults of GameSpec: python -m tests.guide_tables)
MEANINGS = {
    "name": "the game's name on the command line, e.g. `bust`",
    "title": "its name for people",
    "summary": "one line on what it is",
    "version": "a whole number from 1; raise it when the graph changes, and stored graphs are rebuilt",
    "objective": "`max` or `min`: what the optimum does with the value",
    "outcome": "what a value means, e.g. `expected total banked`",
    "params": "`dicegraph.graphs.protocol.Param` objects: name, default, conversion, help, check",
    "agents": "`agents(params)`: the names of the agents stored with the graph",
    "build": "`build(params)`: the graph's rows (`Node`, `Edge` or a block of edges `EdgeColumns`, `CyclicLayers`)",
    "rules": "`rules(params)`: the game at the rules level; gives `build`, `agents` and `simulator`",
    "players": "2 for a two-player zero-sum game seen from the player to move",
    "loops": "True when positions can repeat (the expander then finds the loops)",
    "repeating": ("True when `rules(params)` is a `TurnsInFull` of a `RepeatingTurn`: the turn is stored once and "
                  "joined with its states, as the rules declare"),
    "small_params": "parameters small enough for the conformance suite's exhaustive checks",
    "solves": 'further solves: name -> (objective, goal), e.g. `{"optimal-shut": ("max", "payoff = 0")}`',
    "check_params": "`check_params(values)`: raise `BadParameter` when parameters do not fit together",
    "estimated_edges": "`estimated_edges(params)`: the graph's size before building it",
    "first_guess": "`first_guess(params, key)`: solved positions whose value starts Newton's method at an anchor",
    "simulator": "`simulator(params, policy)`: a faster Monte Carlo player of the game's own (in a game for two, "
                 "`policy` may be a pair: the first player's and the second's)",
    "play_turns": "Monte Carlo of whole games of a turn stored once",
}


class InvalidGame(DicegraphError):
    """A game whose declaration breaks a promise of the game API: refused when it is registered."""


def param_problem(param: Param) -> str | None:
    """Return what is wrong with a declared parameter, in words (None: nothing): its name, or a default that its
    own parsing does not give back (None, or a value its check refuses).

    >>> param_problem(Param("cells", 9, int, "cells", lambda v: 2 <= v <= 12)) is None
    True
    >>> param_problem(Param("cells", None, int, "cells"))
    'its default None is not a value of it (-p cells=None is refused)'
    """
    if not isinstance(param.name, str) or not PARAM_NAME.fullmatch(param.name):
        return "a parameter's name is lower-case letters, digits and underscores, from a letter"
    if not callable(param.convert) or not callable(param.check):
        return "convert and check must be functions"
    text = value_text(param.default)
    try:
        parsed = param.parse(text)
    except DicegraphError:
        return f"its default {param.default!r} is not a value of it (-p {param.name}={text} is refused)"
    except Exception as error:  # a convert or check that fails on its own default
        return f"its default {param.default!r} cannot be read back ({type(error).__name__}: {error})"
    if value_text(parsed) != text:
        return f"its default {param.default!r} reads back as {parsed!r}"
    return None


def from_rules(name: str, declared: Mapping[str, Any]) -> Callable[..., Any]:
    """Return what a game written at the rules level gets from its ``rules(params)`` for ``name``: ``build``
    (the rows :func:`dicegraph.graphs.expand.expand` makes of them, with the game's ``players`` and ``loops``; for a
    repeating game, whose rules are a :class:`dicegraph.graphs.repeating.TurnsInFull`,
    :func:`dicegraph.graphs.expand.expand_repeating` of the repeating turn), ``agents`` (the rules' agents' names),
    ``simulator`` (:func:`dicegraph.graphs.playout.rules_simulator`) or, for a repeating game, ``turn`` (how the
    store keeps its turn once, :func:`dicegraph.graphs.repeating.turn_structure`), from what the game ``declared``
    (name -> value)."""
    from dicegraph.graphs.playout import rules_simulator
    from dicegraph.graphs.repeating import turn_structure

    make_rules = declared["rules"]
    if name == "turn":
        guess = declared.get("first_guess")
        return lambda params: turn_structure(make_rules(params).game,
                                             None if guess is None else lambda key: guess(params, key))
    if name == "build":
        players, loops = declared.get("players", 1), declared.get("loops", False)
        turn_once = declared.get("repeating", False)

        def build(params: Mapping[str, Any]) -> Iterator[Row]:
            """Yield the rows the game's rules expand to; a broken promise names the game."""
            from dicegraph.graphs.expand import expand, expand_repeating  # numpy: when a graph is made

            try:
                if turn_once:
                    yield from expand_repeating(make_rules(params).game, players=players, loops=loops)
                else:
                    yield from expand(make_rules(params), players=players, loops=loops)
            except InvalidGraph as error:
                raise InvalidGraph(f"game {declared['name']!r}: {error}") from None

        return build
    if name == "agents":
        return lambda params: tuple(make_rules(params).agents)
    return rules_simulator(make_rules)


@dataclass(frozen=True)
class GameSpec:
    """A game as it declared itself (see :class:`dicegraph.graphs.protocol.Game` for what each name means), and ``origin``:
    where it comes from (``dicegraph``, or the plugin's distribution and entry point)."""

    name: str
    title: str
    summary: str
    version: int
    objective: str
    outcome: str
    params: tuple[Param, ...]
    agents: Callable[..., Any]
    build: Callable[..., Any]
    origin: str = "dicegraph"
    players: int = 1
    loops: bool = False
    repeating: bool = False
    small_params: Mapping[str, Any] | None = None
    solves: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    rules: Callable[..., Any] | None = None
    check_params: Callable[..., Any] | None = None
    estimated_edges: Callable[..., int] | None = None
    first_guess: Callable[..., Any] | None = None
    simulator: Callable[..., Any] | None = None
    turn: Callable[..., Any] | None = None  # derived from a repeating game's rules: params -> its TurnStructure
    play_turns: Callable[..., Any] | None = None
    pairing: Pairing | None = None  # a paired game's game and target, given by the registry
    hooks: Presentation = field(default_factory=Presentation.none, compare=False)  # what it adds to the tools

    def __hash__(self) -> int:
        """Return a hash of the game's name and origin (a registry holds one game a name)."""
        return hash((self.name, self.origin))

    @classmethod
    def declared_by(cls, module: ModuleType | Any, origin: str = "dicegraph") -> GameSpec:
        """Return the spec a game module (or any object with the same attributes) declares; raise InvalidGame,
        naming the game and the broken promise, when a required name is missing or a declared one is wrong."""
        name = getattr(module, "name", None)
        called = f"game {name!r} ({origin})" if isinstance(name, str) else f"a game from {origin}"
        derived = (() if not hasattr(module, "rules") else (*FROM_RULES, *FROM_REPEATING)
                   if getattr(module, "repeating", False) is True else FROM_RULES)
        missing = [required for required in REQUIRED if not hasattr(module, required) and required not in derived]
        if missing:
            raise InvalidGame(f"{called} does not declare {', '.join(missing)} (every game declares "
                              f"{', '.join(REQUIRED)}; a game with rules may leave {', '.join(FROM_RULES)} to them)")
        declared = {key: getattr(module, key) for key in REQUIRED + EXTRAS if hasattr(module, key)}
        declared.update({key: from_rules(key, declared) for key in derived if key not in declared})
        declared["params"] = tuple(declared["params"])
        if declared.get("small_params") is not None:
            declared["small_params"] = dict(declared["small_params"])
        problem = hook_problem(module)
        if problem:
            raise InvalidGame(f"{called}: {problem}")
        declared["hooks"] = Presentation(module)
        spec = cls(origin=origin, **declared)
        problem = spec._problem()
        if problem:
            raise InvalidGame(f"{called}: {problem}")
        return spec

    def _problem(self) -> str | None:
        """Return the first promise the declaration breaks, in words; None when it keeps them all."""
        texts = {key: getattr(self, key) for key in ("name", "title", "summary", "outcome")}
        empty = [key for key, text in texts.items() if not isinstance(text, str) or not text.strip()]
        if empty:
            return f"{empty[0]} must be a text that is not empty"
        bad_names = [name for name in (self.name, *self.hooks.diagrams())
                     if not isinstance(name, str) or not NAME.fullmatch(name)]
        if bad_names:
            return (f"the name {bad_names[0]!r} must be lower-case letters, digits and single hyphens (it names "
                    "files)")
        if not isinstance(self.version, int) or self.version < 1:
            return f"version must be a whole number from 1 (it is {self.version!r})"
        if self.objective not in OBJECTIVES:
            return f"objective must be {' or '.join(OBJECTIVES)} (it is {self.objective!r})"
        if not isinstance(self.loops, bool):
            return f"loops must be True or False (it is {self.loops!r})"
        if self.players not in PLAYERS:
            return f"players must be {' or '.join(map(str, PLAYERS))} (it is {self.players!r})"
        if not all(isinstance(param, Param) for param in self.params):
            return "params must be dicegraph.graphs.protocol.Param objects"
        names = [param.name for param in self.params]
        if len(set(names)) != len(names):
            return f"a parameter is declared twice ({', '.join(sorted({n for n in names if names.count(n) > 1}))})"
        for param in self.params:
            problem = param_problem(param)
            if problem:
                return f"parameter {param.name!r}: {problem}"
        uncallable = [key for key in ("agents", "build", *FUNCTIONS) if getattr(self, key) is not None
                      and not callable(getattr(self, key))]
        if uncallable:
            return f"{uncallable[0]} must be a function"
        if not isinstance(self.repeating, bool):
            return f"repeating must be True or False (it is {self.repeating!r})"
        if self.repeating and self.rules is None:
            return "a repeating game declares rules (a TurnsInFull of its RepeatingTurn)"
        if self.play_turns is not None and not self.repeating:
            return "play_turns belongs to a repeating game (it declares repeating = True)"
        if self.small_params is not None and set(self.small_params) - set(names):
            return f"small_params names unknown parameters ({', '.join(sorted(set(self.small_params) - set(names)))})"
        bad_solves = [key for key, (objective, _) in self.solves.items() if objective not in OBJECTIVES]
        if bad_solves:
            return f"solve {bad_solves[0]!r} must maximise or minimise (max or min)"
        return None

    def extras(self) -> list[str]:
        """Return the names of the optional extras the game declared and the hooks it gives, sorted (what it
        offers beyond the required)."""
        found = list(self.hooks.offered())
        for item in fields(self):
            default = item.default if item.default_factory is MISSING else item.default_factory()
            if item.name in EXTRAS and getattr(self, item.name) != default:
                found.append(item.name)
        return sorted(found)

    def guess_for(self, params: Mapping[str, Any]) -> Callable[[str], Any] | None:
        """Return the game's ``first_guess`` on ``params`` (a key -> the positions guessing its value), what a
        solve of its cycles is handed; None for a game without one."""
        hook = self.first_guess
        return None if hook is None else lambda key: hook(params, key)


def policy_names(game: GameSpec, params: Mapping[str, Any]) -> list[str]:
    """Return the names of the policies the game's report evaluates (and simulates): a repeating game's
    turn policies, else its agents, the optimum and its further solves."""
    if game.repeating:
        return [declared.name for declared in game.turn(params).policies]
    return [*game.agents(params), OPTIMAL, *game.solves]
