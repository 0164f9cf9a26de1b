"""The CLI reference, docs/cli.md, generated from the click commands themselves (their ``--help``).

    .venv/bin/python -m tests.cli_reference    # rewrite docs/cli.md after changing a command

``tests/test_docs.py`` fails when the file is not what this prints.
"""

from __future__ import annotations

from pathlib import Path

import click

from dicegraph.cli import main

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
WIDTH = 100  # the help's width, whatever the terminal


def _commands(command: click.Command, context: click.Context) -> list[tuple[click.Command, click.Context]]:
    """Return ``command`` and every command under it, depth first in the order ``--help`` lists them."""
    found = [(command, context)]
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                found += _commands(sub, click.Context(sub, info_name=name, parent=context, terminal_width=WIDTH,
                                                      max_content_width=WIDTH))
    return found


def reference() -> str:
    """Return docs/cli.md: a section per command, its ``--help`` as printed."""
    settings = {**main.context_settings, "max_content_width": WIDTH}  # as a command line makes it, help options too
    root = click.Context(main, info_name="dicegraph", terminal_width=WIDTH, **settings)
    lines = ["# CLI reference", "",
             "Every `dicegraph` command's `--help`, generated from the commands (`python -m tests.cli_reference`;",
             "a test fails when this page is stale). Commands under a game's name are the ones it declares.", ""]
    for command, context in _commands(main, root):
        lines += [f"## {context.command_path}", "", "```", command.get_help(context).rstrip(), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    PAGE.write_text(reference())
    print(f"wrote {PAGE}")
