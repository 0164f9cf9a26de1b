"""``dicegraph cant-stop ...``: the board game's commands (mounted by ``cli.py`` from the game's ``commands``)."""

from __future__ import annotations

import click

import dicegraph.graphs.cant_stop_board.game as rules
from dicegraph.graphs.cant_stop_board.advise import advise, graph_params, parse_roll
from dicegraph.graphs.commands import JSON_OPTION, emit, session, table
from dicegraph.graphs.hookspecs import hookimpl


@click.group("cant-stop")
def command_group() -> None:
    """Can't Stop on a real board (board notation: docs/games/cant-stop.md).

    \b
    Examples:
      dicegraph cant-stop advise --board '6:>1,7:>1,8:>1' --roll 2,3,5,6
      dicegraph cant-stop advise --board '7:3>5,8:>2,12:x' --objective claim --json
    """


@command_group.command("advise")
@click.option("--board", required=True, help="The board, e.g. '7:3>5,8:>2,12:x' (notation: docs/games/cant-stop.md).")
@click.option("--roll", "roll_text", metavar="A,B,C,D", help="The four dice just rolled; without it: stop or roll now?")
@click.option("--objective", type=click.Choice(list(rules.OBJECTIVES)), default="progress", show_default=True,
              help="Maximise the turn's progress, or the probability of claiming a column this turn.")
@JSON_OPTION
def advise_command(board: str, roll_text: str | None, objective: str, as_json: bool) -> None:
    """Say how to play this roll (which columns to climb, then stop or roll on), with every alternative's value.

    The board's turn graph is built and solved on first use, then reused.

    \b
    Examples:
      dicegraph cant-stop advise --board '6:>1,7:>1,8:>1' --roll 2,3,5,6
      dicegraph cant-stop advise --board '7:3>5,8:>2,12:x' --objective claim
    """
    roll = parse_roll(roll_text) if roll_text is not None else None
    params = graph_params(board, objective)
    with session().solved(session().game(rules.name), params, f"the turn graph of board {board or '(empty)'}") as graph:
        result = advise(graph, board, objective, roll)
    rolled = f", roll {roll_text}" if roll_text else ""
    lines = [f"board {result['board'] or '(empty)'}{rolled}; objective {objective}"]
    if result["decision"] == "bust":
        lines.append("bust: no pairing climbs; the turn's climbing is lost")
    else:
        lines.append(f"best: {result['decision']} (expected {result['value']:.6f})")
        lines.append(table(["move", "value"], [[row["move"], row["value"]] for row in result["alternatives"]]))
    emit(result, lines, as_json)


@hookimpl
def commands() -> click.Group:
    """Return the game's own commands, mounted by the CLI."""
    return command_group
