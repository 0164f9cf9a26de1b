"""Registry of the games dicegraph can build: name -> declared game (:class:`graphs.spec.GameSpec`).

The games of this repository are listed in :data:`BUILT_IN`; a game in another
installed package registers itself through the entry-point group
``dicegraph.games`` (the way pytest and Datasette find plugins): an entry point
names the game's module, e.g. ``[project.entry-points."dicegraph.games"]
my-game = "my_package.my_game"``. Each is read once, checked
(:meth:`graphs.spec.GameSpec.declared_by`) and registered; a plugin that fails
to import or breaks a promise is left out, and :data:`REFUSED` says why in one
line, so the other games keep working.

>>> sorted(GAMES)
['5000', '5000-race', 'cant-stop', 'cant-stop-board', 'jackpot', 'pig', 'school', 'shut-the-box', 'synthetic', 'yahtzee']
>>> get_game("jackpot").title, get_game("jackpot").origin
('Jackpot', 'dicegraph')
"""

from __future__ import annotations

from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from graphs import cant_stop, cant_stop_board, five_thousand, five_thousand_race, jackpot, pig, school, shut_the_box, synthetic, yahtzee
from graphs.errors import UnknownGame
from graphs.spec import GameSpec, InvalidGame

ENTRY_POINTS = "dicegraph.games"  # the entry-point group a plugin's game module is named in
BUILT_IN = (jackpot, shut_the_box, cant_stop, cant_stop_board, five_thousand, school, synthetic, yahtzee, pig,
            five_thousand_race)
GAMES: dict[str, GameSpec] = {}
REFUSED: dict[str, str] = {}  # entry point -> why its game was not registered (one line)


def register(game: ModuleType | GameSpec | Any, origin: str = "dicegraph") -> GameSpec:
    """Check the game a module (or an object with the same names) declares, add it to the registry, and return
    its spec; raise InvalidGame naming the game and the broken promise (a name already taken among them).

    Every command, report and conformance test then knows it by its name.
    """
    spec = game if isinstance(game, GameSpec) else GameSpec.declared_by(game, origin)
    known = GAMES.get(spec.name)
    if known is not None and known != spec:
        raise InvalidGame(f"game {spec.name!r} ({spec.origin}): a game of that name is registered already "
                          f"({known.origin})")
    GAMES[spec.name] = spec
    return spec


def load_plugins() -> None:
    """Register the games of the installed packages' ``dicegraph.games`` entry points; a plugin that cannot be
    loaded is left out, with the reason in :data:`REFUSED`."""
    for point in entry_points(group=ENTRY_POINTS):
        source = f"plugin {point.dist.name if point.dist else '?'} {point.dist.version if point.dist else ''}".strip()
        origin = f"{source}, entry point {point.name} = {point.value}"
        try:
            register(point.load(), origin)
        except InvalidGame as error:
            REFUSED[point.name] = str(error)
        except Exception as error:  # an import that fails: the plugin's fault, never the other games'
            REFUSED[point.name] = f"{origin}: cannot be loaded ({type(error).__name__}: {error})"


def get_game(name: str) -> GameSpec:
    """Return the game registered as ``name``, or raise UnknownGame listing the known ones (and any plugin refused)."""
    try:
        return GAMES[name]
    except KeyError:
        refused = f"; refused: {'; '.join(REFUSED.values())}" if REFUSED else ""
        raise UnknownGame(f"unknown game {name!r} (known: {', '.join(sorted(GAMES))}){refused}") from None


for _module in BUILT_IN:
    register(_module)
load_plugins()
