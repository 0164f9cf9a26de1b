"""``dicegraph school ...``: ask a solved School policy what to do, export its decisions (mounted by ``cli.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from dicegraph.graphs.commands import JSON_OPTION, PARAM_OPTION, emit, parse_params, session, table
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import StoredGraph, resolve_params
import dicegraph.graphs.school.game as rules
from dicegraph.graphs.school.advise import advise
from dicegraph.graphs.school.stored import decision_array


@click.group("school")
def command_group() -> None:
    """School (seed 001): ask a solved policy what to do, export its decisions.

    The first use builds and solves the whole game (minutes; an interrupted
    solve resumes where it stopped).

    \b
    Examples:
      dicegraph school advise --roll 1,2,2,4,5 --rolls-left 2
      dicegraph school export-decisions --policy bob -o bob.zip
    """


@contextmanager
def _school(params: tuple[str, ...]) -> Iterator[StoredGraph]:
    """Yield School's graph for ``-p`` parameters, built and solved on first use."""
    game = session().game(rules.name)
    values = resolve_params(game, parse_params(params))
    with session().solved(game, values, "School's whole game") as graph:
        yield graph


@command_group.command("advise")
@click.option("--used", default="", metavar="NAMES", help="Combinations already used, comma-separated (RULES.md names).")
@click.option("--roll", "roll_text", required=True, metavar="A,B,C,D,E", help="The five dice showing.")
@click.option("--rolls-left", type=int, required=True, help="Rerolls still allowed this turn: 2 after the first roll, 0 after the third.")
@click.option("--policy", "policy_name", type=click.Choice(list(rules.POLICIES)), default="optimal", show_default=True)
@PARAM_OPTION
@JSON_OPTION
def school_advise(used: str, roll_text: str, rolls_left: int, policy_name: str, params: tuple[str, ...],
                  as_json: bool) -> None:
    """Say what to do with this roll (keep which dice, or score or cross out what), with every alternative's value.

    Values are the expected points still to come, this turn's included, with
    grades scored the upstream way (negative). The first use builds and solves
    the whole game (minutes on SQLite; see docs/games/school.md).

    \b
    Examples:
      dicegraph school advise --roll 1,2,2,4,5 --rolls-left 2
      dicegraph school advise --used "Grade 1,Grade 3,Grade 6,Pair" --roll 3,3,3,5,5 --rolls-left 0 --policy bob
    """
    used_mask, dice = rules.parse_used(used), rules.parse_roll(roll_text)
    if not 0 <= rolls_left < rules.ROLLS:
        raise click.BadParameter(f"{rolls_left} is not 0..{rules.ROLLS - 1}", param_hint="--rolls-left")
    with _school(params) as graph:
        result = advise(graph, policy_name, used_mask, dice, rolls_left)
    rerolls = f"{rolls_left} reroll{'' if rolls_left == 1 else 's'} left"
    lines = [f"used: {', '.join(result['used']) or 'none'}; roll {'-'.join(map(str, dice))}, {rerolls}",
             f"{policy_name}: {result['decision']}"]
    for other, decision in result["others"].items():
        lines.append(f"{other} {'agrees' if result['agree'] else f'disagrees: {decision}'}")
    headers = ["move", "expected points"] + (["Bob's profit"] if policy_name == "bob" else [])
    rows = [[a["move"], a["value"]] + ([a["profit"]] if policy_name == "bob" else []) for a in result["alternatives"]]
    lines.append(table(headers, rows))
    emit(result, lines, as_json)


@command_group.command("export-decisions")
@click.option("--policy", "policy_name", type=click.Choice(list(rules.POLICIES)), default="optimal", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path), required=True,
              help="The zip to write.")
@PARAM_OPTION
@JSON_OPTION
def school_export(policy_name: str, output: Path, params: tuple[str, ...], as_json: bool) -> None:
    """Write every decision of a School policy to a zip, one byte each, in seed 001's layout.

    The archive's LAYOUT.txt (and docs/games/school.md) describe the bytes: one file per
    roll and rerolls left, one byte per set of unused combinations.

    \b
    Example:
      dicegraph school export-decisions --policy optimal -o optimal.zip
    """
    if output.suffix.lower() != ".zip":
        raise click.BadParameter(f"{output} does not end in .zip", param_hint="--output")
    session().output_file(output)
    with _school(params) as graph:
        decisions = decision_array(graph.turn.decisions(policy_name))
    archive, files = rules.decision_archive(decisions)
    session().write_file(output, archive)
    written = {"policy": policy_name, "file": str(output), "files": files, "decisions": int((decisions > 0).sum()),
               "bytes": len(archive)}
    emit(written, [f"wrote {output}: {written['decisions']:,} decisions of {policy_name} in {written['files']} files, "
                   f"{written['bytes']:,} bytes"], as_json)


@hookimpl
def commands() -> click.Group:
    """Return the game's own commands, mounted by the CLI."""
    return command_group
