"""Registry of the games dicegraph can build: name -> declared game (:class:`dicegraph.graphs.spec.GameSpec`).

The games of this repository are listed in :data:`BUILT_IN`; a game in another
installed package registers itself through the entry-point group
``dicegraph.games`` (the way pytest and Datasette find plugins): an entry point
names the game's module, e.g. ``[project.entry-points."dicegraph.games"]
my-game = "my_package.my_game"``. Plugins are loaded when a game is first looked
for that is not built in, or the games are listed; each is read once, checked
(:meth:`dicegraph.graphs.spec.GameSpec.declared_by`) and registered; a plugin that fails
to import, exits, or breaks a promise is left out, and :data:`REFUSED` says why
in one line, so the other games keep working.

>>> sorted(GAMES)
['5000', '5000-race', 'bear-off', 'bear-off-race', 'cant-stop', 'cant-stop-board', 'jackpot', 'pig', 'school', 'shut-the-box', 'synthetic', 'yahtzee']
>>> get_game("jackpot").title, get_game("jackpot").origin
('Jackpot', 'dicegraph')
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dicegraph.graphs import bear_off, cant_stop, cant_stop_board, five_thousand, five_thousand_race, jackpot, pig, school, shut_the_box, synthetic, yahtzee
from dicegraph.graphs.bear_off import race as bear_off_race
from dicegraph.graphs.errors import UnknownGame
from dicegraph.graphs.paired import Pairing, Target, derived_name, paired_game
from dicegraph.graphs.spec import GameSpec, InvalidGame

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINTS = "dicegraph.games"  # the entry-point group a plugin's game module is named in
BUILT_IN = (jackpot, shut_the_box, cant_stop, cant_stop_board, five_thousand, school, synthetic, yahtzee, pig,
            five_thousand_race, bear_off, bear_off_race)
REFUSED: dict[str, str] = {}  # entry point -> why its game was not registered (one line)


class Registry(Mapping[str, GameSpec]):
    """The games by name: the built-in ones from the start, the plugins' loaded the first time the registry is
    read whole or asked for a name it does not hold (:func:`load_plugins`), so that a command needing no game
    (``--help``, ``graphs``, ``query``) imports no plugin."""

    def __init__(self) -> None:
        self._games: dict[str, GameSpec] = {}
        self._paired: dict[str, GameSpec] = {}  # the paired games asked for by name (not listed)
        self._plugins_loaded = False

    def __getitem__(self, name: str) -> GameSpec:
        if name not in self._games:
            load_plugins()
        if name in self._games:
            return self._games[name]
        return self._paired_game(name)

    def _paired_game(self, name: str) -> GameSpec:
        """Return the paired game ``name`` stands for (:mod:`dicegraph.graphs.paired`: ``yahtzee-at-least-200``),
        declared once; raise KeyError where it stands for none, UnknownGame where its game cannot be paired."""
        if name not in self._paired:
            derived = derived_name(name)
            if derived is None or derived[0] not in self._games:
                raise KeyError(name)
            game, test, threshold = self._games[derived[0]], derived[1], derived[2]
            try:
                declared = paired_game(game, test, threshold)
            except ValueError as error:
                raise UnknownGame(f"unknown game {name!r}: {error}") from None
            self._paired[name] = dataclasses.replace(GameSpec.declared_by(declared, game.origin),
                                                     pairing=Pairing(game, Target(test, threshold)))
        return self._paired[name]

    def __iter__(self) -> Iterator[str]:
        load_plugins()
        return iter(dict(self._games))

    def __len__(self) -> int:
        load_plugins()
        return len(self._games)

    def registered(self, name: str) -> GameSpec | None:
        """Return the game registered as ``name`` so far, loading no plugin (None: not registered yet)."""
        return self._games.get(name)

    def built_in(self) -> list[GameSpec]:
        """Return the games of this repository (registered when ``graphs`` is imported), loading no plugin."""
        return [spec for spec in self._games.values() if spec.origin == "dicegraph"]


GAMES = Registry()


def register(game: ModuleType | GameSpec | Any, origin: str = "dicegraph") -> GameSpec:
    """Check the game a module (or an object with the same names) declares, add it to the registry, and return
    its spec; raise InvalidGame naming the game and the broken promise (a name already taken among them).

    Every command, report and conformance test then knows it by its name.
    """
    spec = game if isinstance(game, GameSpec) else GameSpec.declared_by(game, origin)
    known = GAMES.registered(spec.name)
    if known is not None and known != spec:
        raise InvalidGame(f"game {spec.name!r} ({spec.origin}): a game of that name is registered already "
                          f"({known.origin})")
    GAMES._games[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Take the game registered as ``name`` out of the registry (a test's game, once the test is done)."""
    del GAMES._games[name]


def load_plugins() -> None:
    """Register the games of the installed packages' ``dicegraph.games`` entry points, once a process; a plugin
    that cannot be loaded is left out, with the reason in :data:`REFUSED`. Nothing a plugin does as it loads
    reaches dicegraph's output or stops it: what it prints goes to stderr, and an exception, ``SystemExit``
    included, leaves that plugin out (only Ctrl-C goes through)."""
    if GAMES._plugins_loaded:
        return
    GAMES._plugins_loaded = True
    from importlib.metadata import entry_points  # reading the installed packages' metadata: only once needed

    for point in entry_points(group=ENTRY_POINTS):
        source = f"plugin {point.dist.name if point.dist else '?'} {point.dist.version if point.dist else ''}".strip()
        origin = f"{source}, entry point {point.name} = {point.value}"
        try:
            register(_loaded(point), origin)
        except InvalidGame as error:
            REFUSED[point.name] = str(error)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 (an import that fails or exits: the plugin's fault only)
            said = " ".join(str(error).split())
            REFUSED[point.name] = f"{origin}: cannot be loaded ({type(error).__name__}{f': {said}' if said else ''})"


def _loaded(point: EntryPoint) -> Any:
    """Return the module (or object) an entry point names, imported with its output sent to stderr: dicegraph's
    standard output is for what it prints (JSON a program reads)."""
    with _stdout_on_stderr():
        return point.load()


@contextlib.contextmanager
def _stdout_on_stderr() -> Iterator[None]:
    """Send standard output to standard error meanwhile: Python's ``sys.stdout`` and the process's file 1."""
    if sys.stdout is not None:
        sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no file 1 or 2 to speak of (an embedding process): Python's stream alone
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def get_game(name: str) -> GameSpec:
    """Return the game registered as ``name``, or raise UnknownGame listing the known ones (and any plugin refused)."""
    try:
        return GAMES[name]
    except KeyError:
        refused = f"; refused: {'; '.join(REFUSED.values())}" if REFUSED else ""
        raise UnknownGame(f"unknown game {name!r} (known: {', '.join(sorted(GAMES))}, and any game for one paired "
                          f"with a target, GAME-at-least-T or GAME-at-most-T){refused}") from None


for _module in BUILT_IN:
    register(_module)
