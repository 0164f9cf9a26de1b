"""The guide's tables of names, generated from the code that reads them: every name a rules object may define
(:class:`dicegraph.graphs.rules.Rules`, with :class:`~dicegraph.graphs.rules.DiceRules`' defaults) and every name
a game module may declare (:class:`dicegraph.graphs.spec.GameSpec`, with its defaults and
:data:`~dicegraph.graphs.spec.MEANINGS`) and every presentation hook a game may give
(:mod:`dicegraph.graphs.hookspecs`: each hook's arguments, its default and its docstring's first sentence).

    .venv/bin/python -m tests.guide_tables    # rewrite the tables in docs/guide.md after changing a name

``tests/test_guide.py`` fails when the page's tables are not what this prints.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

from dicegraph.graphs import hookspecs
from dicegraph.graphs.presentation import HOOK_NAMES, WITHOUT
from dicegraph.graphs.rules import ATTRIBUTES, DiceRules, Rules
from dicegraph.graphs.spec import EXTRAS, FROM_RULES, MEANINGS, REQUIRED, GameSpec

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"
MARKS = {"rules": "<!-- the names of a rules object: python -m tests.guide_tables -->",
         "game": "<!-- the names of a game module: python -m tests.guide_tables -->",
         "hooks": "<!-- a game module's presentation hooks: python -m tests.guide_tables -->"}
END = "<!-- end of the generated table -->"


def _first_sentence(text: str | None) -> str:
    r"""Return the first sentence of a docstring on one line, its reST roles as Markdown code.

    >>> _first_sentence('Return ``0``: no clock, see\n:meth:`key`. More.')
    'Return `0`: no clock, see `key`.'
    """
    paragraph = " ".join(line.strip() for line in (text or "").strip().split("\n\n")[0].splitlines())
    sentence = re.split(r"(?<!e\.g)(?<!i\.e)\. ", paragraph)[0].rstrip(".") + "."
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", sentence).replace("``", "`")


def rules_table() -> str:
    """Return the table of a rules object's names: each attribute and method of :class:`Rules`, in order, with
    what :class:`DiceRules` gives when the rules do not define it."""
    lines = ["| name | unless defined | what it is |", "| --- | --- | --- |"]
    for name in Rules.__annotations__:
        default = getattr(DiceRules, name, None)
        lines.append(f"| `{name}` | `{default!r}` | {ATTRIBUTES[name]} |")
    for name, method in vars(Rules).items():
        if not inspect.isfunction(method) or name.startswith("_"):
            continue
        given = getattr(DiceRules, name, None)
        default = _first_sentence(given.__doc__) if given is not None else "required"
        arguments = ", ".join(argument for argument in inspect.signature(method).parameters if argument != "self")
        lines.append(f"| `{name}({arguments})` | {default} | {_first_sentence(method.__doc__)} |")
    return "\n".join(lines)


def game_table() -> str:
    """Return the table of a game module's names: every field of :class:`GameSpec` a game may declare (not where
    it came from, nor what is derived), with whether it is required and its default."""
    lines = ["| name | required | default | what it is |", "| --- | --- | --- | --- |"]
    for item in dataclasses.fields(GameSpec):
        if item.name not in REQUIRED + EXTRAS:
            continue
        required = ("yes, or from `rules`" if item.name in FROM_RULES and item.name in REQUIRED else "yes"
                    if item.name in REQUIRED else "no, or from `rules`" if item.name in FROM_RULES else "no")
        if item.default is not dataclasses.MISSING:
            default = f"`{item.default!r}`"
        elif item.default_factory is not dataclasses.MISSING:
            default = f"`{item.default_factory()!r}`"
        else:
            default = ""
        lines.append(f"| `{item.name}` | {required} | {default} | {MEANINGS[item.name]} |")
    return "\n".join(lines)


def hooks_table() -> str:
    """Return the table of the presentation hooks (:mod:`dicegraph.graphs.hookspecs`), in order: each with its
    arguments, what the tools do when a game gives none (:data:`~dicegraph.graphs.presentation.WITHOUT`) and what it
    returns."""
    lines = ["| hook | without it | what it returns |", "| --- | --- | --- |"]
    for name in HOOK_NAMES:
        arguments = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
        lines.append(f"| `{name}({arguments})` | {WITHOUT[name]} | {_first_sentence(getattr(hookspecs, name).__doc__)} |")
    return "\n".join(lines)


def page() -> str:
    """Return docs/guide.md with its tables as the code gives them."""
    text = PAGE.read_text()
    for kind, table in (("rules", rules_table()), ("game", game_table()), ("hooks", hooks_table())):
        start = text.index(MARKS[kind]) + len(MARKS[kind])
        end = text.index(END, start)
        text = text[:start] + "\n" + table + "\n" + text[end:]
    return text


if __name__ == "__main__":
    PAGE.write_text(page())
