"""dicegraph's command line: thin click commands over ``graphs`` and ``store``.

Every command that reports takes ``--json``; every error a user can cause is
one line on stderr and exit status 1.
"""

from __future__ import annotations

import gc
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dicegraph import __version__, frontends
from dicegraph.record import PERSON, TYPED_DICE, Record
from dicegraph.graphs import GAMES, REFUSED, get_game
from dicegraph.graphs.commands import (JSON_OPTION, OPENS_SESSION, PARAM_OPTION, JsonArrayWriter, TableWriter, mounted,
                                       parse_params, print_json, residual_text, session, table)
from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.montecarlo import MIN_GAMES, z_text
from dicegraph.graphs.protocol import OBJECTIVES, OPTIMAL, resolve_params, value_text
from dicegraph.frontends import (DEFAULT_DPI, DEFAULT_FOLDER, DEFAULT_MEMORY, DEFAULT_PORT, DEFAULT_SEED, DEFAULT_TIMEOUT,
                                 DEFAULT_URL, ENV_VAR, MAX_EDGES, MAX_NODES, MEMORY_VAR, MOST_WORKERS, RENDERERS, SEATS,
                                 SPARK_WORKERS, Cluster,
                                 answers, check_file, database_failure, memory_bytes, running_processes, start_cluster,
                                 stop_cluster, write_file)
from dicegraph.web.limits import SQL_SLOTS, SQL_TIMEOUT

if TYPE_CHECKING:
    from dicegraph.database import Database
    from dicegraph.play import Table

# A command imports what it needs when it runs (the session and SQLAlchemy, the report, numpy), so that --help,
# --version and games start fast; frontends.shown_url and its like are read so for the same reason.

SEED_OPTION = click.option("--seed", type=click.IntRange(min=0), default=DEFAULT_SEED, show_default=True,
                           help="Random seed of the simulation (0 or more).")


class DicegraphGroup(click.Group):
    """Turns every error a user can cause into one line on stderr and exit status 1.

    That covers dicegraph's own errors, the database's, files that cannot be
    written, and click's usage errors (which click prints over four lines with
    status 2): the line names the command's ``--help``.
    """

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Return the command named; a name dicegraph does not know is looked for among the plugin games'
        commands, loaded then (a command that needs no game imports no plugin)."""
        found = super().get_command(ctx, cmd_name)
        if found is None:
            for group in mounted(GAMES.values()):
                if group.name not in self.commands:
                    self.add_command(group)
            found = super().get_command(ctx, cmd_name)
        return found

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _usage_line(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _usage_line(error) from None
        except DicegraphError as error:
            raise click.ClickException(str(error)) from None
        except (click.exceptions.Exit, click.ClickException):  # --help and its like: before the driver's errors are
            raise  # looked up (that would load SQLAlchemy)
        except frontends.DriverError as error:
            raise click.ClickException(str(database_failure(error))) from None
        except BrokenPipeError:  # the reader of the output has gone (| head): click stops quietly, status 1
            raise
        except OSError as error:
            raise click.ClickException(_os_error_line(error)) from None


def _usage_line(error: click.UsageError) -> click.ClickException:
    """Return click's usage error as one line naming the command's --help."""
    command = error.ctx.command_path if error.ctx is not None else "dicegraph"
    message = " ".join(error.format_message().split())
    return click.ClickException(f"{message} (see: {command} --help)")


def _os_error_line(error: OSError) -> str:
    """Return a file error as one line: where, and why."""
    where = f" {error.filename}" if error.filename else ""
    return f"file error{where}: {error.strerror or error}"


@click.group(name="dicegraph", cls=DicegraphGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--db", "db_url", envvar=ENV_VAR, default=DEFAULT_URL, show_default=True, metavar="URL",
    help=f"Database URL (SQLAlchemy form); also read from ${ENV_VAR}.",
)
@click.option(
    "--memory", envvar=MEMORY_VAR, default=DEFAULT_MEMORY, show_default=True, metavar="SIZE",
    help=f"The most memory DuckDB may use before it spills to FILE.tmp: a size (8GB, 512MiB) or a share of this "
         f"machine's (50%); also read from ${MEMORY_VAR}.",
)
@click.version_option(version=__version__, package_name="dicegraph")
@click.pass_context
def main(ctx: click.Context, db_url: str, memory: str) -> None:
    """Dice games as explicit state graphs in SQL: build, solve, compare, query.

    \b
    Start here:
      dicegraph report jackpot             build, solve and compare every policy
      dicegraph compare jackpot hilo       where HiLo loses against the optimum
      dicegraph show jackpot 0             the first position, roll by roll
      dicegraph query "SELECT * FROM positions WHERE policy = 'optimal' LIMIT 5"
      dicegraph serve                      browse every position at http://127.0.0.1:8000

    Games of other installed packages (plugins) may add commands of their own:
    dicegraph games lists the games and where each comes from.
    """
    try:
        memory_bytes(memory)
    except DicegraphError as error:
        raise click.BadParameter(str(error), param_hint="--memory") from None
    ctx.obj = db_url
    ctx.meta[MEMORY_VAR] = memory
    ctx.meta[OPENS_SESSION] = lambda: _session(db_url, memory)


def _session(db_url: str, memory: str) -> Database:
    """Return the session of ``--db`` (opened when a command first needs it)."""
    from dicegraph.database import Database

    if frontends.in_memory_url(db_url):  # asked for by name, and said so: what is built there goes with the command
        click.echo(f"note: {frontends.shown_url(db_url)} is a database in memory: nothing of it is kept when this "
                   "command ends (give sqlite:///FILE to keep it)", err=True)
    return Database(db_url, memory=memory, meter=_progress, on_wait=lambda message: click.echo(message, err=True))


def _database(ctx: click.Context) -> Database:
    """Return the session of ``--db``: what the commands below are thin over (:mod:`dicegraph.database`), opened
    now if no command has asked for it yet."""
    return session(ctx)


def _policy_name(text: str) -> str:
    """Return a policy name given on the command line, refusing an empty or blank one."""
    if not text.strip() or text != text.strip():
        raise click.BadParameter(f"{text!r} is not a policy name (letters, digits and dashes, e.g. optimal-2)",
                                 param_hint="--name")
    return text


MAX_GAMES = 1_000_000_000  # Monte Carlo games per policy: a billion takes minutes to hours; more is a typo


def _none_or_enough(games: int) -> int:
    """Return a report's ``-n``: 0 (no simulation) or at least :data:`MIN_GAMES`, refused before any work."""
    if 0 < games < MIN_GAMES:
        raise click.BadParameter(f"{games} game gives no standard error: 0 for none, or at least {MIN_GAMES}",
                                 param_hint="-n")
    return games
REPORT_EVERY = 10.0  # seconds between progress lines when stderr is not a terminal


@contextmanager
def _progress(label: str, length: int | None) -> Iterator[Callable[[int], None] | None]:
    """Yield a callback advancing a progress bar of ``length`` steps (None when there is nothing to count; a
    ``length`` of None: work whose size is not known, counted on).

    On a terminal it is click's bar, drawn from the first step on, so that a bar
    waiting for its work never sits under lines printed before it starts; elsewhere
    (a log, a pipe) a line every :data:`REPORT_EVERY` seconds says how far the work is
    and roughly how long is left.
    """
    if length == 0:
        yield None
    elif length is None:
        yield _reporter(label, None)
    elif sys.stderr.isatty():
        with ExitStack() as drawn:
            bar: Any = None

            def advance(steps: int) -> None:
                nonlocal bar
                if bar is None:
                    bar = drawn.enter_context(click.progressbar(length=length, label=label, file=sys.stderr))
                bar.update(steps)

            yield advance
    else:
        yield _reporter(label, length)


def _reporter(label: str, length: int | None) -> Callable[[int], None]:
    """Return a callback counting steps done that prints, every :data:`REPORT_EVERY` seconds, how far the work is.

    Its clock starts at the first call (a worker may call it with 0 as it
    begins), so what ran before, such as the build and solve ahead of a
    report's simulation, counts neither in the time so far nor in the
    estimate of the time left.
    """
    started: float | None = None
    last = 0.0
    done = first = 0  # steps done in all, and by the first call (done before the clock started)

    def advance(steps: int) -> None:
        nonlocal started, last, done, first
        done += steps
        now = time.monotonic()
        if started is None:
            started, last, first = now, now, done
            return
        if now - last < REPORT_EVERY:
            return
        last = now
        if length is None or done > length:  # an estimate passed: count on without a total
            click.echo(f"{label}: {done:,} so far, {_duration(now - started)}", err=True)
        else:
            timed = done - first
            left = f", about {_duration((now - started) * (length - done) / timed)} left" if timed else ""
            click.echo(f"{label}: {done:,} of {length:,} ({100 * done / length:.0f} %), "
                       f"{_duration(now - started)} so far{left}", err=True)

    return advance


def _duration(seconds: float) -> str:
    """Return a duration for people, e.g. ``'4 s'``, ``'2 min 5 s'``."""
    minutes, rest = divmod(int(seconds + 0.5), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


for _group in mounted(GAMES.built_in()):  # the plugins' commands are mounted when first asked for
    main.add_command(_group)


def _percent(value: float | None, outcome: str) -> str:
    if value is None:
        return "not evaluated"
    return f"{100 * value:.4f} %" if "probability" in outcome else f"{value:.6f}"


@main.command()
@JSON_OPTION
def games(as_json: bool) -> None:
    """List the games dicegraph can build, where each comes from, its parameters and agents.

    Games of other installed packages (plugins, entry-point group dicegraph.games)
    are listed with the package they come from; a plugin that could not be loaded
    is named on stderr with the reason.

    \b
    Example:
      dicegraph games --json
    """
    broken: dict[str, str] = {}
    listing = frontends.game_listing(GAMES.values(), broken)
    for reason in REFUSED.values():
        click.echo(f"not loaded: {reason}", err=True)
    for reason in broken.values():
        click.echo(f"not listed: {reason}", err=True)
    if as_json:
        print_json(listing)
        return
    for entry in listing:
        players = "two players" if entry["players"] == 2 else "one player"
        click.echo(f"{entry['name']}: {entry['summary']} ({players}; from {entry['origin']})")
        for param in entry["params"]:
            click.echo(f"    -p {param['name']}=...  {param['help']} (default {param['default']}; {param['accepted']})")
        click.echo(f"    agents: {', '.join(entry['agents']) or 'none'}; optimal {entry['objective']}imises {entry['outcome']}")
        click.echo(f"    policies a report evaluates: {', '.join(entry['policies'])}")


@main.command()
@JSON_OPTION
@click.pass_context
def graphs(ctx: click.Context, as_json: bool) -> None:
    """List the graphs stored in the database.

    \b
    Example:
      dicegraph graphs
    """
    rows = _database(ctx).graphs()
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no graphs stored yet (build one: dicegraph build jackpot)")
        return
    click.echo(table(["id", "game", "params", "nodes", "edges", "layers", "created"],
                      [[r["id"], r["game"], r["params"], r["nodes"], r["edges"], r["layers"], r["created_at"]] for r in rows]))


@main.command()
@JSON_OPTION
@click.pass_context
def upgrade(ctx: click.Context, as_json: bool) -> None:
    """Bring the database's schema up to this dicegraph's (one transaction; nothing is lost).

    Commands that write (build, solve, report) upgrade on their own; viewing
    commands refuse an older schema and point here.

    \b
    Example:
      dicegraph --db sqlite:///old.db upgrade
    """
    result = _database(ctx).upgrade()
    if as_json:
        print_json(result)
    else:
        click.echo(f"the schema is at revision {result['revision']} (this dicegraph's newest)")


def _build_message(result: Mapping[str, Any], seconds: float | None = None) -> str:
    """Return the line that says what a build did (:meth:`dicegraph.Database.build`'s dict)."""
    verb = {"built": "built", "replaced": "rebuilt", "reused": "reused"}[result["action"]]
    if result["action"] == "reused":
        note = " (already in the database; --replace rebuilds it)"
    else:
        note = f" in {seconds:.2f} s" if seconds is not None else ""
    return (f"{verb} graph {result['graph_id']} ({result['game']}): {result['nodes']:,} nodes, {result['edges']:,} "
            f"edges, {result['layers']} layers{note}")


@main.command()
@click.argument("game")
@PARAM_OPTION
@click.option("--replace", is_flag=True, help="Rebuild even if this game and parameters are stored.")
@click.option("--force", is_flag=True, help=f"Build even past {MAX_EDGES:,} edges (the size is estimated first).")
@JSON_OPTION
@click.pass_context
def build(ctx: click.Context, game: str, params: tuple[str, ...], replace: bool, force: bool, as_json: bool) -> None:
    """Build GAME's graph into the database (one transaction).

    Building the same game with the same parameters again reuses the stored
    graph unless --replace is given.

    \b
    Examples:
      dicegraph build jackpot
      dicegraph build jackpot -p cells=12 --replace
    """
    result = _database(ctx).build(game, parse_params(params), replace=replace, force=force)
    if as_json:
        print_json(result)
    else:
        click.echo(_build_message(result, result["seconds"]))


@main.command("solve")
@click.argument("graph")
@PARAM_OPTION
@click.option("--objective", metavar="OBJECTIVE",
              help=f"{' or '.join(OBJECTIVES)} of the payoff; at-least:T (or at-most:T, a game that minimises): the "
                   "best chance that the outcome reaches T; best-response:POLICY (a game for two): the policy that "
                   "wins most often against a stored one [default: the game's].")
@click.option("--name", callback=lambda ctx, param, value: None if value is None else _policy_name(value),
              help="Name of the policy to store [default: optimal; a best response: its objective].")
@JSON_OPTION
@click.pass_context
def solve_command(ctx: click.Context, graph: str, params: tuple[str, ...], objective: str | None, name: str | None,
                  as_json: bool) -> None:
    """Solve GRAPH by backward induction in SQL and store the optimal policy.

    GRAPH is a graph id or a game name. Stores the chosen move at every
    decision node, every node's value, and the reach probabilities.
    --objective at-least:T stores the policy with the best chance that
    the outcome is T or more (at-most:T: T or less, in a game that
    minimises), named so. In a game for two, --objective
    best-response:POLICY stores the policy that wins most often against
    the stored POLICY, and prints what it wins in each seat beside the
    optimum, and POLICY's exploitability.

    \b
    Examples:
      dicegraph solve jackpot
      dicegraph solve 1 --objective min --name pessimal
      dicegraph solve shut-the-box --objective at-most:5
      dicegraph solve pig --objective best-response:hold-at-20
    """
    result = _database(ctx).solve(graph, parse_params(params), objective=objective, name=name)
    if as_json:
        print_json(result)
    else:
        click.echo(f"solved graph {result['graph']} ({result['game']}) for {result['objective']} in "
                   f"{result['seconds']:.2f} s: policy {result['policy']!r}, value {result['value']:.12g}")
        converged = result["convergence"]
        if converged is not None:
            click.echo(f"cycles: {converged['cyclic_components']} cyclic components by {converged['method'].capitalize()}'s method, "
                       f"{converged['passes']} passes (at most {converged['most_passes']} a component), "
                       f"largest residual {residual_text(converged['residual'])}")
        if result["evaluated"]:
            click.echo(f"evaluated the stored policies {', '.join(result['evaluated'])}")
        if "response" in result:
            click.echo(_responses_table([result["response"]]))


@main.command()
@click.argument("graph")
@PARAM_OPTION
@JSON_OPTION
@click.pass_context
def policies(ctx: click.Context, graph: str, params: tuple[str, ...], as_json: bool) -> None:
    """List GRAPH's policies (agents and solves) with their values.

    \b
    Example:
      dicegraph policies jackpot
    """
    listing = _database(ctx).policies(graph, parse_params(params))
    if as_json:
        print_json(listing)
    elif not listing:
        click.echo(f"graph {graph} has no policies yet (solve it: dicegraph solve {graph})")
    else:
        click.echo(table(["policy", "objective", "method", "value", "unit"],
                          [[p["name"], p["objective"], p["method"], p["value"],
                            p["unit"] + (f", playing against {p['answers']}" if p["answers"] else "")]
                           for p in listing]))


@main.command()
@click.argument("graph")
@PARAM_OPTION
@click.option("--policy", "policy_name", default=OPTIMAL, show_default=True, help="The policy to follow.")
@click.option("--from", "start", metavar="KEY", help="Start at this position (its key, as `show` and `query` give "
              "it) rather than the game's start: what is still to come from there.")
@JSON_OPTION
@click.pass_context
def propagate(ctx: click.Context, graph: str, params: tuple[str, ...], policy_name: str, start: str | None,
              as_json: bool) -> None:
    """Print GRAPH's exact outcome distribution under a policy (forward propagation in SQL).

    The outcome is the final payoff with the points paid on the way. A game
    whose turn is stored once (School, Yahtzee) is played forward through
    its turn states, each turn chosen as the policy's solve chooses it: a
    solve's time, with progress. A race's outcome is who wins: its
    distribution is how many turns the policy against itself plays.

    \b
    Examples:
      dicegraph propagate jackpot --policy hilo --json
      dicegraph propagate yahtzee -p bonuses=off --policy greedy
      dicegraph propagate bear-off -p checkers=3 --from 0-0-0-0-1-2
      dicegraph propagate 5000-race -p target=1000     turns the optimum plays
    """
    result = _database(ctx).propagate(graph, policy_name, parse_params(params), start=start)
    if as_json:
        print_json(result)
        return
    outcome = result["outcome"]
    click.echo(table([outcome, "probability"], [[row["payoff"], row["probability"]] for row in result["distribution"]]))
    click.echo(f"expected {outcome}: {result['expected_payoff']:.12g}, standard deviation {result['sd']:.12g}")


@main.command()
@click.argument("graph")
@PARAM_OPTION
@click.argument("policy_name", metavar="POLICY")
@click.argument("reference", default=OPTIMAL)
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the costliest deviations to list (0: none).")
@click.option("--against", "opponent", metavar="POLICY",
              help="Two-player games: the opponent both play against [default: REFERENCE].")
@click.option("--seat", type=click.Choice(SEATS), default=SEATS[0], show_default=True,
              help="Two-player games: the seat whose expected loss is given (first moves first).")
@JSON_OPTION
@click.pass_context
def compare(ctx: click.Context, graph: str, params: tuple[str, ...], policy_name: str, reference: str, top: int,
            opponent: str | None, seat: str, as_json: bool) -> None:
    """Compare POLICY's moves with REFERENCE (default: optimal) on GRAPH.

    Counts the decision nodes with two or more moves, those where POLICY's move
    is strictly worse under REFERENCE's continuation values, and those with
    several best moves; expected_loss is how much less POLICY's value is than
    REFERENCE's (values of one unit only). In a two-player game a value depends
    on the opponent: expected_loss is the probability of winning that POLICY
    gives up against --against (default: REFERENCE) in --seat, and both seats
    are shown.

    \b
    Examples:
      dicegraph compare jackpot hilo
      dicegraph compare jackpot hilo optimal --json
      dicegraph compare pig hold-at-20 --against hold-at-20 --seat second
    """
    result = _database(ctx).compare(graph, policy_name, reference, parse_params(params), opponent=opponent, seat=seat,
                                    top=top)
    if as_json:
        print_json(result)
        return
    click.echo(f"{policy_name} against {reference} on graph {result['graph']} ({result['game']}), in {result['unit']}:")
    for line in _seat_lines(result):
        click.echo(line)
    if result["decisions"] is not None:
        click.echo(f"  decision nodes with a choice: {result['decisions']:,}")
        click.echo(f"  where {policy_name} moves worse: {result['worse']:,}")
        click.echo(f"  with more than one best move: {result['tied']:,}")
    else:
        click.echo("  (its turn is stored once: no position-by-position comparison)")
    click.echo(f"  expected loss: {result['expected_loss']:.12g}" + (f" (moving {seat})" if "seats" in result else ""))
    if result["deviations"]:
        reached = any(d["reach"] is not None for d in result["deviations"])
        headers = ["position", "label", policy_name, reference, "loss"] + (["reach", "cost"] if reached else [])
        click.echo(f"\ncostliest deviations (loss at the node times the probability {policy_name} gets there):" if reached
                   else "\nlargest deviations (loss at the node; a game with cycles has no reach):")
        click.echo(table(headers, [[d["key"], d["label"], d["move"], d["best_move"], d["loss"]]
                                   + ([d["reach"], d["cost"]] if reached else []) for d in result["deviations"]]))


def _seat_lines(result: Mapping[str, Any]) -> list[str]:
    """Return the lines saying, seat by seat, how often the policy and the reference win against the opponent."""
    if "seats" not in result:
        return []
    return [f"  moving {seat}, against {result['opponent']}: {result['reference']} wins {won['reference']:.10f}, "
            f"{result['policy']} {won['policy']:.10f} (gives up {won['loss']:.10f})"
            for seat, won in result["seats"].items()]


@main.command()
@click.argument("game")
@PARAM_OPTION
@click.option("-n", "--games", "simulated_games", type=click.IntRange(min=0, max=MAX_GAMES), default=100_000,
              show_default=True, callback=lambda ctx, param, value: _none_or_enough(value),
              help=f"Monte Carlo games per policy (0: none, else at least {MIN_GAMES}).")
@SEED_OPTION
@click.option("--diagrams", "diagrams_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Also draw the game's diagrams as PNGs in DIR.")
@click.option("--all-matches", is_flag=True,
              help="Play every pair of a two-player game's strategies (the race past a target of 1000 plays each "
                   "against the optimum only).")
@click.option("--distributions", is_flag=True,
              help="A game for one: each policy's whole outcome distribution (--json: every outcome; the text: its "
                   "percentiles). A turn stored once is played forward, a solve's time a policy.")
@click.option("--targets", is_flag=True,
              help="A game for one: the chance of reaching each outcome the game can end with, under the optimum "
                   "and under the policy best for that target (one sweep over them all).")
@JSON_OPTION
@click.pass_context
def report(ctx: click.Context, game: str, params: tuple[str, ...], simulated_games: int, seed: int,
           diagrams_dir: Path | None, all_matches: bool, distributions: bool, targets: bool, as_json: bool) -> None:
    """Build (if needed) and solve GAME, evaluate every policy, print the headline numbers.

    Each policy's exact value (CALCULATED) stands beside a Monte Carlo estimate
    played from the rules (MONTE CARLO), with its z-score against the exact value.

    \b
    Examples:
      dicegraph report jackpot --diagrams diagrams
      dicegraph report jackpot -p cells=10 -n 1000000 --seed 7 --json
      dicegraph report 5000-race -n 0                  the seed's race to 5000
      dicegraph report shut-the-box --targets          P(score <= T), each T
    """
    chosen = get_game(game)

    def announce(result: Mapping[str, Any]) -> None:
        if not as_json:
            click.echo(_build_message(result), err=True)

    data = _database(ctx).report(chosen, parse_params(params), simulated_games, seed=seed, diagrams=diagrams_dir,
                                 all_matches=all_matches, targets=targets, distributions=distributions,
                                 on_build=announce)
    if as_json:
        print_json(data)
        return
    described = ", ".join(f"{k}={value_text(v)}" for k, v in data["params"].items())  # as -p takes them
    click.echo(f"{chosen.title}{f' ({described})' if described else ''}: {chosen.outcome} by policy")
    headers = ["policy", "method", "CALCULATED"]
    rows = [[p["name"], p["method"], _percent(p["value"], chosen.outcome)] for p in data["policies"]]
    if any("sd" in p for p in data["policies"]):  # the solve kept each policy's spread (a turn stored once)
        headers.append("SD")
        for row, p in zip(rows, data["policies"]):
            row.append(f"{p['sd']:.6f}" if "sd" in p else "-")
    simulated = all("monte_carlo" in p for p in data["policies"])
    if simulated:
        headers += [f"MONTE CARLO ({simulated_games:,})", "z"]
        for row, p in zip(rows, data["policies"]):
            row += [_percent(p["monte_carlo"]["estimate"], chosen.outcome), z_text(p['monte_carlo']['z'])]
    click.echo(table(headers, rows))
    if simulated:
        click.echo(f"\nMonte Carlo: games played from the rules (seed {seed}); "
                   "z = (estimate - exact) / standard error.")
    for line in chosen.hooks.describe(data):
        click.echo(line)
    if data.get("average_optimum"):
        click.echo(_average_optimum_line(data["average_optimum"], chosen.outcome))
    if any("distribution" in p for p in data["policies"]):
        click.echo(_percentiles_table(data["policies"], "outcome distribution" if data["distributed"] == "payoff"
                                      else "number of turns until a win"))
    if data.get("targets"):
        click.echo(_targets_table(data["targets"], chosen.objective))
    if data.get("responses"):
        click.echo(f"\nEach policy against its best response (the policy that wins most often against it) and the "
                   f"optimum, moving first / second / on average:\n{_responses_table(data['responses'])}")
    for drawn in data.get("diagrams", []):
        size = f" ({drawn['nodes']:,} nodes, {drawn['edges']:,} edges)" if "nodes" in drawn else ""
        click.echo(f"wrote {drawn['file']}{size}", err=True)


PERCENTILES = (1, 5, 25, 50, 75, 95, 99)  # the percentiles of an outcome distribution a report prints


def _percentiles_table(policies: Sequence[Mapping[str, Any]], counted: str = "outcome distribution") -> str:
    """Return the lines of a report's table of each policy's outcome distribution: its lowest and highest outcome
    and the outcome at each of :data:`PERCENTILES` (the least outcome with at least that share at or below it)."""
    rows = []
    for p in policies:
        if "distribution" not in p:
            continue
        spread = p["distribution"]
        rows.append([p["name"], f"{spread[0]['payoff']:g}",
                     *[f"{_percentile(spread, q):g}" for q in PERCENTILES], f"{spread[-1]['payoff']:g}"])
    return (f"\nEach policy's {counted}: its lowest, its percentiles, its highest:\n"
            + table(["policy", "min", *[f"{q} %" for q in PERCENTILES], "max"], rows))


def _percentile(spread: Sequence[Mapping[str, float]], percent: float) -> float:
    """Return the least outcome of ``spread`` (outcomes in order) with at least ``percent`` % of the games at or
    below it.

    >>> _percentile([{"payoff": 0, "probability": 0.25}, {"payoff": 5, "probability": 0.75}], 50)
    5
    """
    below = 0.0
    for row in spread:
        below += row["probability"]
        if below >= percent / 100 - 1e-12:
            return row["payoff"]
    return spread[-1]["payoff"]


def _average_optimum_line(average: Mapping[str, Any], outcome: str) -> str:
    """Return the line of a paired game's report that sets its best chance beside how often its game's optimum of
    the average reaches the target."""
    return (f"\nPlaying {average['game']}'s optimum of the average (its value {average['value']:.6f}) instead: "
            f"{_percent(average['chance'], outcome)}, {_percent(average['best'] - average['chance'], outcome)} less "
            "than the best chance.")


def _targets_table(targets: Sequence[Mapping[str, Any]], objective: str) -> str:
    """Return the lines of a report's table of targets: each target, the chance of reaching it under the optimum
    and under the policy best for it."""
    reach = "at least" if objective == "max" else "at most"
    rows = [[f"{t['target']:g}", f"{t['policy']:.6f}", f"{t['best']:.6f}", _six(t["best"] - t["policy"])]
            for t in targets]
    return (f"\nThe chance that the outcome is {reach} T, for each T: playing the optimum, and playing best for T "
            f"(solve --objective {'at-least' if objective == 'max' else 'at-most'}:T):\n"
            + table(["T", "optimal", "best for T", "gain"], rows))


def _six(number: float) -> str:
    """Return ``number`` to six decimals, a rounding error's -0 as 0.

    >>> _six(-1e-17), _six(0.1234567)
    ('0.000000', '0.123457')
    """
    return f"{round(number, 6) + 0.0:.6f}"


def _responses_table(responses: Sequence[Mapping[str, Any]]) -> str:
    """Return the table of what the optimum and each policy's best response win against it, in the first seat, the
    second and on average, and by how much the best response beats the game's value (the policy's exploitability)."""

    def seats(figures: Mapping[str, float]) -> str:
        return " / ".join(_six(figures[seat]) for seat in ("first", "second", "mean"))

    return table(["against", "optimum wins", "best response wins", "gain", "exploitability"],
                 [[r["policy"], seats(r["optimum_wins"]), seats(r["response_wins"]), _six(r["gain"]["mean"]),
                   _six(r["exploitability"]["mean"])] for r in responses])


@main.command()
@click.argument("game")
@PARAM_OPTION
@click.option("--here", is_flag=True,
              help="Check in the --db database (on its backend) instead of a scratch SQLite file.")
@JSON_OPTION
@click.pass_context
def check(ctx: click.Context, game: str, params: tuple[str, ...], here: bool, as_json: bool) -> None:
    """Run every tool on GAME and say, a line each, what holds and what breaks.

    For a plugin's author as for the built-in games: GAME is built on its small
    parameters (-p overrides one) in a scratch SQLite database (beside the
    synthetic game's graph, built first into a database that holds none, so
    that a statement reading another graph's rows breaks), then reported,
    solved, checked against its rules' exact recursion and Monte Carlo,
    drawn, queried, played and analysed, and served by the explorer, each
    check that fits the game's shape, each line ending with the time it
    took. Exits 1 when anything breaks. With --json, the lines go to stderr
    as the checks are made, and the JSON to stdout at the end.

    \b
    Examples:
      dicegraph check jackpot
      dicegraph check my-game -p size=3 --json
      dicegraph --db duckdb:///check.duckdb check jackpot --here
    """
    from dicegraph.conformance import check_game

    chosen, asked = get_game(game), parse_params(params)
    resolve_params(chosen, asked)  # a wrong parameter is refused before any work
    where = frontends.shown_url(ctx.obj) if here else "a scratch SQLite database"
    click.echo(f"checking {chosen.name} in {where}", err=as_json)  # with --json, the lines are progress on stderr
    findings = check_game(chosen, asked, ctx.obj if here else None,
                          on_finding=lambda found: click.echo(found.line(), err=as_json))
    broken = [found.check for found in findings if not found.holds]
    if as_json:
        print_json({"game": chosen.name, "database": where, "findings": [vars(found) for found in findings],
                    "broken": broken})
    if broken:
        raise DicegraphError(f"{chosen.name} breaks {len(broken)} of {len(findings)} checks: {', '.join(broken)}")


@main.command()
@click.argument("game")
@PARAM_OPTION
@click.option("--policy", "policy_name", default=OPTIMAL, show_default=True,
              help="An agent of the game, or a policy stored with its graph.")
@click.option("-n", "--games", type=click.IntRange(min=MIN_GAMES, max=MAX_GAMES), default=100_000, show_default=True,
              help=f"How many games to play (at most {MAX_GAMES:,}).")
@SEED_OPTION
@JSON_OPTION
@click.pass_context
def simulate(ctx: click.Context, game: str, params: tuple[str, ...], policy_name: str, games: int, seed: int,
             as_json: bool) -> None:
    """Play GAME many times from its rules with a policy; compare with the exact value.

    Agents are played from the rules alone; any other policy (optimal, a named
    solve) plays the moves stored in the database. The exact value is shown
    when the stored graph has it, with the z-score of the estimate. In a game
    for two a policy plays itself, and a best response the policy it answers,
    moving first (its value is what it wins so).

    \b
    Examples:
      dicegraph simulate jackpot --policy hilo -n 1000000 --seed 7
      dicegraph simulate jackpot --policy optimal --json
      dicegraph simulate pig --policy best-response:hold-at-20
    """
    result = _database(ctx).simulate(game, parse_params(params), policy_name, games, seed)
    if as_json:
        print_json(result)
        return
    against = "" if result["against"] is None else f", against {result['against']} (moving first)"
    click.echo(f"{get_game(game).title}, {policy_name}{against}: {games:,} games (seed {seed})")
    click.echo(f"  estimate  {result['estimate']:.6f} +- {result['stderr']:.6f} (standard error)")
    if result["exact"] is None:
        click.echo(f"  exact     not stored (dicegraph report {game} computes it)")
    else:
        click.echo(f"  exact     {result['exact']:.6f}")
        click.echo(f"  z         {z_text(result['z'])}")


@main.command()
@click.argument("graph")
@PARAM_OPTION
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path), required=True,
              help="File to write: .dot, .svg or .png.")
@click.option("--policy", "policy_name", default=OPTIMAL, show_default=True, help="The policy whose moves are drawn.")
@click.option("--layers", is_flag=True, help="A box per layer, its positions on one rank.")
@click.option("--move-labels", is_flag=True, help="Label edges with the moves and the rolls that take them.")
@click.option("--values", is_flag=True, help="Label nodes with their reach probability and value under the policy.")
@click.option("--busts", is_flag=True, help="Also draw rolls that end the game with no move to make (policy view).")
@click.option("--full", is_flag=True, help="Draw every node and edge: chance, decision and terminal nodes.")
@click.option("--root", metavar="KEY", help="Full view around this node (implies --full).")
@click.option("--depth", type=click.IntRange(min=1), help="Full view: at most this many steps from the root.")
@click.option("--to-layer", type=click.IntRange(min=0), metavar="N", help="Only the layers up to N.")
@click.option("--max-nodes", type=click.IntRange(min=1), default=MAX_NODES, show_default=True,
              help="Refuse larger diagrams (unless --force).")
@click.option("--force", is_flag=True, help="Draw whatever the size.")
@click.option("--renderer", type=click.Choice(RENDERERS), default="auto", show_default=True,
              help="For SVG/PNG: Graphviz's dot, the pure-Python route, or whichever is there (dot first).")
@click.option("--dpi", type=click.IntRange(min=10, max=1200), default=DEFAULT_DPI, show_default=True,
              help="PNG resolution.")
@JSON_OPTION
@click.pass_context
def export(ctx: click.Context, graph: str, params: tuple[str, ...], output: Path, policy_name: str, layers: bool, move_labels: bool,
           values: bool, busts: bool, full: bool, root: str | None, depth: int | None, to_layer: int | None,
           max_nodes: int, force: bool, renderer: str, dpi: int, as_json: bool) -> None:
    """Draw GRAPH as DOT, SVG or PNG (by the extension of --output).

    By default, the policy view: one node per position the policy reaches, one
    edge per next position, as wide as the share of rolls that lead there
    (rolls that end the game with no move are left out unless --busts).
    With --full or --root, the full graph: chance nodes as ellipses, decisions
    as diamonds, terminals as double boxes, rolls dashed with their exact
    probabilities, the policy's moves in blue. A game whose turn is stored once
    keeps its policy apart from the rows: its default is the full view, two
    steps from the root.

    \b
    Examples:
      dicegraph export jackpot --policy hilo --layers -o hilo.png
      dicegraph export jackpot --policy hilo --move-labels --to-layer 4 -o hilo-moves.svg
      dicegraph export jackpot --root 0 --depth 2 --values -o start.png
      dicegraph export 2 --full --to-layer 3 -o small.dot
    """
    result = _database(ctx).export(graph, output, parse_params(params), max_nodes=None if force else max_nodes,
                                   renderer=renderer, dpi=dpi, policy=policy_name, full=full, root=root, depth=depth,
                                   to_layer=to_layer, busts=busts, layers=layers, move_labels=move_labels,
                                   values=values)
    if as_json:
        print_json(result)
    else:
        click.echo(f"wrote {output} ({result['view']} view: {result['nodes']:,} nodes, {result['edges']:,} edges; "
                   f"drawn by {result['renderer']} in {result['seconds']:.2f} s)")


@main.command()
@click.argument("sql")
@click.option("--write", is_flag=True, help="Allow statements that change the database.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Print at most this many rows (1 or more).")
@click.option("--timeout", type=click.FloatRange(min=0), default=DEFAULT_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Stop the statement after this long (0: no limit).")
@JSON_OPTION
@click.pass_context
def query(ctx: click.Context, sql: str, write: bool, limit: int | None, timeout: float, as_json: bool) -> None:
    """Run one SQL statement (read-only unless --write) and print the rows.

    The views `positions` and `moves` decode the stored graphs; see docs/sql.md.
    Without --write nothing is committed, and statements that touch files
    (ATTACH, VACUUM INTO, COPY) are refused. A statement stops after
    --timeout seconds, or at Ctrl-C, on every backend.

    \b
    Examples:
      dicegraph query "SELECT policy, value FROM positions WHERE game = 'jackpot' AND key = '0'"
      dicegraph query "SELECT move, probability, chosen_by FROM moves WHERE from_key = '0'" --json
    """
    if not sql.strip():
        raise click.BadParameter("no SQL statement given", param_hint="SQL")
    json_out = JsonArrayWriter()
    text_out: TableWriter | None = None

    def printed(columns: list[str], rows: list[tuple[Any, ...]]) -> None:  # a batch at a time, as they are read
        nonlocal text_out
        if as_json:
            json_out.write([dict(zip(columns, row)) for row in rows])
        elif columns:
            text_out = text_out or TableWriter(columns)
            click.echo("\n".join(text_out.lines(rows)))

    _database(ctx).query_table(sql, write=write, limit=limit, timeout=timeout or None, on_rows=printed)
    if as_json:
        json_out.close()


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (another than 127.0.0.1 lets other machines browse the database).")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--threads", type=click.IntRange(min=2, max=64), default=8, show_default=True,
              help="Requests served at once.")
@click.option("--sql-slots", type=click.IntRange(min=1), default=SQL_SLOTS,
              help="Statements the SQL console runs at once (fewer than --threads: the rest serve the pages) "
                   "[default: half the processors, at least one].")
@click.option("--sql-timeout", type=click.FloatRange(min=0), default=SQL_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Stop a statement of the SQL console after this long (0: no limit).")
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Also answer requests naming this host (repeatable); on a loopback --host the explorer answers "
                   "to localhost, 127.0.0.1 and ::1 only, so that no other site reaches it by DNS rebinding.")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, threads: int, sql_slots: int, sql_timeout: float,
          allowed_hosts: tuple[str, ...]) -> None:
    """Browse the stored graphs in a web browser: every position, roll, move and value, and SQL.

    The database is opened read-only. Every page is also JSON at its address
    plus .json. The SQL console runs at most --sql-slots statements at once,
    each for at most --sql-timeout seconds, and shows at most 1,000 rows. Stop
    with Ctrl-C.

    \b
    Examples:
      dicegraph serve
      dicegraph --db duckdb:///games.duckdb serve --port 8080
      dicegraph serve --allow-host games.local
    """
    if sql_slots >= threads:
        raise click.BadParameter(f"{sql_slots} of {threads} threads would leave none for the pages: "
                                 "give fewer --sql-slots or more --threads", param_hint="--sql-slots")
    address = _listening_address(host, port)
    try:
        import waitress

        from dicegraph.web.app import create_app
        from dicegraph.web.guard import MAX_BODY, loopback_names
    except ImportError as error:
        raise click.ClickException(f"the explorer needs {error.name}: pip install -e '.[web]'") from None
    from dicegraph.database import Database

    db = Database.kept_open(ctx.obj, read_only=True, memory=ctx.meta.get(MEMORY_VAR),
                            on_wait=lambda message: click.echo(message, err=True))
    ctx.call_on_close(db.close)
    app = create_app(db, sql_slots=sql_slots, sql_timeout=sql_timeout, hosts=loopback_names(host, allowed_hosts))
    _set_aside_long_lived()
    threading.Thread(target=_ready_to_play, args=(db,), name="dicegraph-ready", daemon=True).start()
    # a service manager's stop (SIGTERM) ends it as Ctrl-C does, so its temporary charts are removed
    stopped_before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    click.echo(f"dicegraph explorer on http://{address}/ (read-only; Ctrl-C stops it)", err=True)
    try:
        waitress.serve(app, listen=address, threads=threads, ident="dicegraph", _quiet=True,
                       max_request_body_size=MAX_BODY)
    except OSError as error:
        raise click.ClickException(f"cannot listen on {address}: {error.strerror or error} (try another --port)") from None
    except ValueError as error:  # waitress's word for an address it cannot use
        raise click.ClickException(f"cannot listen on {address}: {error} (give --host an IP address or a name "
                                   "of this machine, e.g. 127.0.0.1)") from None
    finally:
        signal.signal(signal.SIGTERM, stopped_before)


def _ready_to_play(db: Database) -> None:
    """Ready the turn games' play as the explorer starts (:meth:`dicegraph.Database.ready_to_play`); a game it
    cannot ready is readied by its first page instead, which says what is wrong."""
    try:
        db.ready_to_play()
    except DicegraphError:
        pass
    _set_aside_long_lived()


def _listening_address(host: str, port: int) -> str:
    """Return ``HOST:PORT`` as waitress listens on it (an IPv6 address in brackets); a host that is no address or name
    of this machine is a usage error.

    >>> _listening_address("::1", 80)
    '[::1]:80'
    """
    import socket

    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError) as error:
        reason = error.strerror if isinstance(error, socket.gaierror) else str(error)
        raise click.BadParameter(f"{host!r} is not an address of this machine ({reason}); e.g. 127.0.0.1 or 0.0.0.0",
                                 param_hint="--host") from None
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@main.command()
@click.argument("graph")
@PARAM_OPTION
@click.argument("key")
@JSON_OPTION
@click.pass_context
def show(ctx: click.Context, graph: str, params: tuple[str, ...], key: str, as_json: bool) -> None:
    """Show the position KEY of GRAPH: its rolls, its moves, their values and reach per policy.

    Each game has keys of its own (each game's page in docs/games says how
    they read); `dicegraph serve` links every graph's first position and
    finds positions by key or label. In Jackpot the key is the position index
    (sum of 2^(cell-1) over the cells up) and a roll's decision KEY/I-J, as in
    the examples.

    \b
    Examples:
      dicegraph show jackpot 0
      dicegraph show jackpot 0/3-4 --json
    """
    described = _database(ctx).position(graph, key, parse_params(params))
    unevaluated = described["not_evaluated"]
    if as_json:
        print_json(described)
        return
    click.echo(f"{described['kind']} node {described['key']!r} ({described['label']}), layer {described['layer']}")
    click.echo(table(["policy", "value", "reach"],
                      [[name, v["value"], v["reach"]] for name, v in described["policies"].items()]))
    for out in described["edges"]:
        chance = f" p={out['probability']:.6g}" if out["probability"] is not None else ""
        chosen = f" <- {', '.join(out['chosen_by'])}" if out["chosen_by"] else ""
        click.echo(f"\n{out['label']}{chance} -> {out['to']} ({out['to_label']}){chosen}")
        for move in out.get("moves", []):
            takers = f"  <- {', '.join(move['chosen_by'])}" if move["chosen_by"] else ""
            best = move["values"].get(OPTIMAL)
            worth = f"  optimal value {best:.6g}" if best is not None else ""
            click.echo(f"    {move['label']} -> {move['to']}{worth}{takers}")
    if unevaluated:
        click.echo(f"\nnot evaluated yet: {', '.join(unevaluated)} "
                   f"(compute them with: dicegraph solve {described['graph']}, or dicegraph report {described['game']} -n 0)",
                   err=True)


@main.command()
@click.argument("game")
@click.argument("policies", nargs=-1, metavar="[FIRST [SECOND]]")
@PARAM_OPTION
@click.option("--auto", is_flag=True,
              help="Play the whole game between the stored policies FIRST [SECOND] (agents, optimal, a named solve), "
                   "no person; one policy alone plays every seat.")
@click.option("--against", default=OPTIMAL, show_default=True, metavar="POLICY",
              help="Two-player games: the stored policy you play against.")
@click.option("--seat", type=click.Choice(SEATS), default=SEATS[0], show_default=True,
              help="Two-player games: your seat (first moves first).")
@click.option("--dice", type=click.Choice(["auto", TYPED_DICE]), default="auto", show_default=True,
              help="auto: dicegraph rolls (--seed repeats a game); manual: you type each roll of real dice.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="The dice's seed [default: a new one, recorded].")
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the game's record to FILE after every step (a stopped game loses nothing).")
@click.option("--resume", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Go on with the game recorded in FILE (and keep recording there).")
@JSON_OPTION
@click.pass_context
def play(ctx: click.Context, game: str, policies: tuple[str, ...], params: tuple[str, ...], auto: bool, against: str,
         seat: str, dice: str, seed: int | None, record_path: Path | None, resume: Path | None, as_json: bool) -> None:
    """Play GAME against the stored optimum (or --against another policy), or watch --auto policies play it.

    The game must be built and solved (dicegraph report GAME does both); the
    database is only read: the game lives in its record (--record). At your
    move, type its number or its label, ? for every move's value and what it
    gives up, q to stop. At the end the game is analysed (dicegraph analyse).

    \b
    Examples:
      dicegraph play jackpot
      dicegraph play pig --seat second --record game.json
      dicegraph play pig --auto optimal hold-at-20 --seed 7 --json
      dicegraph play shut-the-box --dice manual
      dicegraph play pig --resume game.json
    """
    db = _database(ctx)
    if auto:
        if resume is not None:
            raise click.BadParameter("--auto plays a new game; resume a record without it", param_hint="--resume")
        def shown(row: Mapping[str, Any]) -> None:
            if not as_json:
                click.echo(_step_line(len(steps) + 1, row))
            steps.append(row)

        steps: list[Mapping[str, Any]] = []
        result = db.play(game, parse_params(params), policies or (OPTIMAL,), seed=seed, record=record_path,
                         on_step=shown)
        if as_json:
            print_json(result)
        else:
            click.echo("\n".join(_analysis_totals(result)))
        return
    if policies:
        raise click.BadParameter("policies are named with --auto (a person plays against --against)",
                                 param_hint="FIRST [SECOND]")
    record = _started_record(db, game, params, resume, seat, against, dice, seed)
    path = record_path or resume
    # a record file is new unless it is the one resumed
    fresh = record_path is not None and not (resume is not None and record_path.exists()
                                             and record_path.samefile(resume))
    if fresh:
        record.check_new_file(record_path)
    stopped = False
    with db.table(record, policies=True) as playing:
        click.echo(f"{playing.record.game}: you play {_seats_text(playing.record.seats)}"
                   + (f"; dice seed {playing.record.seed}" if playing.record.seed is not None else "; dice typed by you"),
                   err=True)
        try:
            while not playing.finished:
                step = _next_step(playing, as_json)
                playing.take(step)
                if path is not None:
                    playing.record.write(path, new=fresh)
                    fresh = False
        except (KeyboardInterrupt, click.Abort):
            stopped = True
        from dicegraph.play import summary

        finished, analysis = playing.record, summary(playing)
    if stopped:
        where = f"; the record is in {path}: dicegraph play {game} --resume {path}" if path else \
            " (nothing recorded: give --record FILE to keep a game)"
        click.echo(f"stopped after step {len(finished.steps)}{where}", err=True)
        ctx.exit(130)
    if as_json:
        print_json({**analysis, "record": finished.as_json()})
    else:
        click.echo("\n".join(_analysis_totals(analysis)))


def _started_record(db: Database, game: str, params: tuple[str, ...], resume: Path | None, seat: str, against: str,
                    dice: str, seed: int | None) -> Record:
    """Return the record a person's game starts from: the one in ``resume``, or a new one."""
    if resume is not None:
        if params:
            raise click.BadParameter("a resumed game keeps its record's parameters", param_hint="-p")
        try:
            record = Record.read(resume)
        except OSError as error:
            raise click.ClickException(_os_error_line(error)) from None
        if record.game != get_game(game).name:
            raise DicegraphError(f"{resume} is a record of {record.game}, not of {game}")
        return record
    from dicegraph.play import person_seats

    chosen = get_game(game)
    drawn = None if dice == TYPED_DICE else (seed if seed is not None else random.SystemRandom().randrange(2**31))
    return Record(chosen.name, parse_params(params), person_seats(chosen.players == 2, seat, against), [], drawn)


def _seats_text(seats: Mapping[str, str]) -> str:
    """Return who plays which seat, in words: ``'first; optimal plays second'``, ``'solo'``."""
    yours = [name for name, policy in seats.items() if policy == PERSON]
    others = [f"{policy} plays {name}" for name, policy in seats.items() if policy != PERSON]
    return "; ".join([", ".join(yours) or "no seat", *others])


def _next_step(playing: Table, quiet: bool) -> dict[str, str]:
    """Return the next step of a person's game: the dice's roll (drawn, or typed), a policy's move, or the person's
    (the game shown on stderr when ``quiet``: stdout is for the JSON)."""
    position = playing.position
    if playing.expects == "roll":
        if playing.rng is not None:
            step = playing.roll(playing.rng)
            click.echo(f"{position['label']}: {step['roll']}", err=quiet)
            return step
        return _asked(playing, "roll", "your roll of the dice (its label, e.g. as dicegraph show prints it)")
    policy = playing.record.seats[playing.to_move]
    if policy != PERSON:
        step = playing.move_of(policy)
        click.echo(f"{position['label']}: {policy} ({playing.to_move}) moves {step['move']}", err=quiet)
        return step
    options = playing.options()
    click.echo(f"\n{position['label']} (value now {playing.value_now:.6g})", err=quiet)
    for number, option in enumerate(options, 1):
        click.echo(f"  {number}) {option['label']}", err=quiet)
    return _asked(playing, "move", "your move (number or label; ? for hints, q to stop)")


def _asked(playing: Table, kind: str, prompt: str) -> dict[str, str]:
    """Return the step a person types at ``playing``'s position: a roll or a move, checked against the game."""
    from dicegraph.play import matching_edge

    options = playing.options()
    while True:
        answer = click.prompt(prompt, type=str, err=True).strip()
        if answer in ("q", "quit"):
            raise click.Abort
        if answer in ("?", "hint"):
            click.echo(table(["option", "value", "gives up"],
                             [[o["label"], o["value"], o["gives_up"]] for o in options]), err=True)
            continue
        if kind == "move" and answer.isdigit() and 1 <= int(answer) <= len(options):
            answer = options[int(answer) - 1]["label"]
        step = {kind: answer}
        try:
            matching_edge(playing.position, step, len(playing.record.steps) + 1)
        except DicegraphError as error:
            click.echo(str(error), err=True)
            continue
        return step


def _step_line(number: int, row: Mapping[str, Any]) -> str:
    """Return one step of an analysis as a line: who, what, the value before and after, the luck or the loss."""
    change = f"luck {row['luck']:+.6f}" if row["kind"] == "roll" else (
        f"loss {row['loss']:.6f}" + (f" ({row['grade']}; best: {row['best']})" if row["grade"] else
                                      f" (best: {row['best']})" if row["loss"] > 0 else ""))
    return (f"{number:>4}  {row['player']:<6}  {row['kind']:<4}  {row['label'][:40]:<40}  "
            f"{row['value_before']:.6f} -> {row['value_after']:.6f}  {change}")


def _analysis_totals(analysis: Mapping[str, Any]) -> list[str]:
    """Return the lines closing an analysis: the start value and outcome, each player's loss and luck, the identity."""
    outcome = "not finished" if analysis["outcome"] is None else f"{analysis['outcome']:.6f}"
    lines = [f"start value {analysis['start_value']:.6f}, outcome {outcome}"]
    for seat, totals in analysis["players"].items():
        lines.append(f"  {seat} ({totals['policy'] or 'not named'}): lost {totals['loss']:.6f} by its moves, "
                     f"luck {totals['luck']:+.6f}")
    identity = analysis["identity"]
    lines.append(f"  outcome - start value = {identity['change']:+.6f} = the steps' changes added up "
                 f"({identity['sum_of_steps']:+.6f})")
    return lines


@main.command()
@click.argument("record_file", metavar="RECORD", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--chart", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Also draw the value over the game, its mistakes marked: PNG or SVG by FILE's suffix.")
@JSON_OPTION
@click.pass_context
def analyse(ctx: click.Context, record_file: Path, chart: Path | None, as_json: bool) -> None:
    """Analyse a game record step by step on the stored optimum: each move's loss, each roll's luck.

    Values are the first player's probability of winning in a two-player
    game, the outcome of a one-player game; a move's loss is what it gives up
    against the best move, from the mover's view, graded doubtful, bad or very
    bad at 4, 8 and 16 % of the game's scale (1 for a probability, the largest
    payoff for a score). Per player: the moves' losses and the rolls' luck.

    \b
    Examples:
      dicegraph play pig --auto optimal hold-at-20 --seed 7 --record game.json
      dicegraph analyse game.json
      dicegraph analyse game.json --chart game.png --json
    """
    kind = None if chart is None else chart.suffix.lower().lstrip(".")
    if kind not in (None, "png", "svg"):
        raise click.BadParameter(f"{chart} names no chart format: end it in .png or .svg", param_hint="--chart")
    if chart is not None:
        check_file(chart)  # before the work: a device, a FIFO or a folder is refused, not replaced
    try:
        record = Record.read(record_file)
    except OSError as error:
        raise click.ClickException(_os_error_line(error)) from None
    analysis = _database(ctx).analyse(record)
    if chart is not None:
        try:
            from dicegraph.web.charts import analysis_chart
            drawn = analysis_chart(analysis, kind)
        except ImportError as error:
            raise click.ClickException(f"the chart needs {error.name}: pip install -e '.[png]'") from None
        write_file(chart, drawn)
        click.echo(f"wrote {chart}", err=True)
    if as_json:
        print_json(analysis)
        return
    seats = ", ".join(f"{seat}: {totals['policy'] or 'not named'}" for seat, totals in analysis["players"].items())
    click.echo(f"{record.game} on graph {analysis['graph']} ({seats})")
    for number, row in enumerate(analysis["steps"], 1):
        click.echo(_step_line(number, row))
    click.echo("\n".join(_analysis_totals(analysis)))


@main.group()
def spark() -> None:
    """Run a local Spark cluster to use as the database (--db spark://127.0.0.1:PORT/default).

    A standalone master, two workers and the Spark Thrift server on 127.0.0.1
    (--workers 0: the Thrift server alone, in Spark's local mode), from
    pyspark (pip install -e '.[spark]') and Java 17 (apt-get install
    openjdk-17-jre-headless); their logs, warehouse and metastore stay in one
    folder. docs/spark.md says how to use a cluster of several machines instead.

    \b
    Examples:
      dicegraph spark start
      dicegraph --db spark://127.0.0.1:10000/default report jackpot -n 0
      dicegraph spark stop
    """


_SPARK_FOLDER = click.option("--folder", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_FOLDER,
                             show_default=True, help="Where the cluster keeps its logs, warehouse and metastore.")


@spark.command("start")
@_SPARK_FOLDER
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True,
              help="The Thrift server's port (the --db URL's).")
@click.option("--workers", type=click.IntRange(0, MOST_WORKERS), default=SPARK_WORKERS, show_default=True,
              help="Workers of one core each; 0 runs the Thrift server alone in Spark's local mode (one process, "
                   "a tenth to a third less time a statement on one machine).")
def spark_start(folder: Path, port: int, workers: int) -> None:
    """Start the cluster (about a minute) and print its --db URL; nothing is done when it runs already.

    \b
    Examples:
      export DICEGRAPH_DB=$(dicegraph spark start)
      dicegraph spark start --workers 0      # one process, Spark's local mode
    """
    url = start_cluster(Cluster(folder, port, workers), told=lambda line: click.echo(line, err=True))
    click.echo(url)


@spark.command("stop")
@_SPARK_FOLDER
def spark_stop(folder: Path) -> None:
    """Stop the cluster's processes (its folder and the databases in it stay).

    \b
    Example:
      dicegraph spark stop
    """
    stopped = stop_cluster(Cluster(folder), told=lambda line: click.echo(line, err=True))
    count = f"{len(stopped)} process" + ("" if len(stopped) == 1 else "es")
    click.echo(f"stopped {count}: {', '.join(stopped)}" if stopped else f"no cluster was running in {folder}")


@spark.command("status")
@_SPARK_FOLDER
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True,
              help="The Thrift server's port.")
@JSON_OPTION
def spark_status(folder: Path, port: int, as_json: bool) -> None:
    """Say which of the cluster's processes run and whether its Thrift server answers.

    \b
    Example:
      dicegraph spark status --json
    """
    cluster = Cluster(folder, port)
    status = {"folder": str(folder), "url": cluster.url, "processes": running_processes(cluster),
              "answers": answers(port)}
    if as_json:
        print_json(status)
        return
    processes = ", ".join(f"{role} ({pid})" for role, pid in status["processes"].items()) or "none"
    click.echo(f"processes running: {processes}; {cluster.url} {'answers' if status['answers'] else 'does not answer'}")


def run() -> None:
    """Run the ``dicegraph`` command (the installed script): :func:`main`, with what the modules made set aside."""
    _set_aside_long_lived()
    main(prog_name="dicegraph")


def _set_aside_long_lived() -> None:
    """Move every object alive now out of the garbage collector's reach (:func:`gc.freeze`): the modules, and in
    the explorer the games a session has loaded, live as long as the process, and each full collection walked them
    all again (docs/performance.md measures what that cost an analysis). Only the program's own process does this,
    not a test calling :func:`main`, whose earlier tests' garbage would stay."""
    gc.freeze()


if __name__ == "__main__":
    run()
