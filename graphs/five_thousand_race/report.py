"""The report of 5000 as a race: who wins, the fair head start, strategies head to head, and when to bank."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dicegraph.graphs.commands import residual_text
from dicegraph.graphs.five_thousand.game import DICE, STEP
import dicegraph.graphs.five_thousand_race.simulate as simulate
from dicegraph.graphs.five_thousand_race.game import agents, bank_end, chance_key, name, state_key
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.montecarlo import Estimate, z_text
from dicegraph.graphs.protocol import OPTIMAL, TIE, Progress, StoredGraph



def situations(target: int) -> list[tuple[int, int]]:
    """Return the score pairs (mine, the opponent's) whose banking rule the report gives: the start, even
    halfway, and one player near the end.

    >>> situations(5000)
    [(0, 0), (2500, 2500), (0, 4000), (4000, 0), (4000, 4000)]
    """
    half, late = _step(target // 2), _step(target * 4 // 5)
    return [(0, 0), (half, half), (0, late), (late, 0), (late, late)]


def _step(points: int) -> int:
    return points // STEP * STEP


def bank_rule(values: Mapping[str, float], mine: int, target: int) -> dict[int, dict[str, Any]]:
    """Return, for each number of dice left to roll, the optimum's choice at each turn total (from the turn's
    values for one score pair): ``{dice: {"banks_from": lowest total it banks at, "rolls_at": totals above it
    where it rolls on anyway}}``; ``banks_from`` is None when it never banks before winning."""
    rule = {}
    for dice in range(1, DICE + 1):
        banks, rolls = [], []
        for total in range(STEP, target - mine, STEP):
            on = values.get(chance_key(dice, total))
            if on is None:
                continue  # the turn never has that many dice at that total
            banked = values[bank_end(total, target)]
            (banks if banked >= on - TIE * (1 + abs(on)) else rolls).append(total)
        first = min(banks) if banks else None
        rule[dice] = {"banks_from": first, "rolls_at": [t for t in rolls if first is not None and t > first]}
    return rule


ALL_MATCHES_UP_TO = 1000  # beyond this target the fixed strategies play one another only when asked (--all-matches)


def plays_all_matches(params: Mapping[str, Any], all_matches: bool) -> bool:
    """Return whether the report plays the fixed strategies against each other: up to a target of
    :data:`ALL_MATCHES_UP_TO`, or when asked (past it, the 7 matches against the optimum, not 28)."""
    return all_matches or params["target"] <= ALL_MATCHES_UP_TO


def matches(graph: StoredGraph, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return every fixed strategy against the optimum, in both seats, and against each other where
    :func:`plays_all_matches`: ``[{"first", "second", "p_first_wins"}]``, exact (one cyclic run per pair
    gives both orders)."""
    fixed = list(agents(params))
    pairs = [(strategy, OPTIMAL) for strategy in fixed]
    if plays_all_matches(params, graph.all_matches):
        pairs += [(one, other) for i, one in enumerate(fixed) for other in fixed[i + 1:]]
    return graph.matches(pairs)


RESPONSES_UP_TO = 500  # beyond this target each policy's best response is worked out only when asked (--all-matches)


def answers_every_policy(params: Mapping[str, Any], all_matches: bool) -> bool:
    """Return whether the report works out each policy's best response: up to a target of :data:`RESPONSES_UP_TO`
    (the race to 1000's eight take 92 s in one run, three times its report without them), or when every match is
    asked for."""
    return all_matches or params["target"] <= RESPONSES_UP_TO


# The optimum's moves in a simulation come from its turn values at every score pair: a table of pairs x totals x
# rolls that takes, to 1000 (400 pairs), 23 s of SQL and 15 MB, and grows with the cube of the target past it.
SIMULATED_OPTIMUM_UP_TO = 1000


def simulates_optimum(params: Mapping[str, Any]) -> bool:
    """Return whether the report's Monte Carlo plays the optimum too (targets up to :data:`SIMULATED_OPTIMUM_UP_TO`)."""
    return params["target"] <= SIMULATED_OPTIMUM_UP_TO


@hookimpl
def simulated_runs(params: Mapping[str, Any], all_matches: bool) -> int:
    """Return how many runs of ``-n`` games the report plays when asked to: the optimum against itself, and each
    match it plays (without the optimum's beyond :data:`SIMULATED_OPTIMUM_UP_TO`)."""
    fixed = len(agents(params))
    among = 2 * fixed * (fixed - 1) // 2 if plays_all_matches(params, all_matches) else 0
    return among + (1 + 2 * fixed if simulates_optimum(params) else 0)


def simulate_matches(graph: StoredGraph, params: Mapping[str, Any], rows: Sequence[dict[str, Any]], games: int,
                     seed: int, progress: Progress | None = None) -> None:
    """Add to each row (``{"first", "second", "p_first_wins"}``) a ``monte_carlo`` estimate (the optimum's only
    when :func:`simulates_optimum`): ``games`` races played from the rules (:mod:`dicegraph.graphs.five_thousand_race.simulate`),
    row ``n`` with the random stream ``[seed, n]``, and its z-score against the exact ``p_first_wins``;
    ``progress`` counts the games."""
    import numpy as np

    target = params["target"]
    tables = {strategy: simulate.agent_table(target, strategy) for strategy in agents(params)}
    if simulates_optimum(params):
        steps = target // STEP
        keys = [state_key(mine * STEP, theirs * STEP) for mine in range(steps) for theirs in range(steps)]
        tables[OPTIMAL] = simulate.optimal_table(target, graph.turn.node_values(keys))
    for number, row in enumerate(rows):
        if row["first"] not in tables or row["second"] not in tables:
            continue
        wins = simulate.play(target, tables[row["first"]], tables[row["second"]], games, np.random.default_rng([seed, number]))
        row["monte_carlo"] = Estimate.of(wins).against(row["p_first_wins"])
        if progress is not None:
            progress(games)


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return the race's keys: ``p_first_wins`` (both optimal), ``fair_head_start``, ``matches``, the optimum's
    banking rule in a few ``situations`` and how the cycles converged; and where :func:`answers_every_policy`, each
    policy's best response (``responses``, one run for them all, not stored). When the report plays games
    (``graph.simulation``), ``self_play`` (the optimum against itself) and each match get a ``monte_carlo``
    check (:func:`simulate_matches`; the race declares its runs, :func:`simulated_runs`)."""
    target = params["target"]
    values = graph.turn.values(OPTIMAL)
    head_starts = {points: values[state_key(0, points)] for points in range(0, target, STEP)}
    fair = min(head_starts, key=lambda points: (abs(head_starts[points] - 0.5), points))
    keys = [state_key(mine, theirs) for mine, theirs in situations(target)]
    turns = graph.turn.node_values(keys)
    self_play = {"first": OPTIMAL, "second": OPTIMAL, "p_first_wins": values[state_key(0, 0)]}
    played = matches(graph, params)
    simulation = graph.simulation
    if simulation is not None:
        simulate_matches(graph, params, [self_play, *played], simulation.games, simulation.seed, simulation.progress)
    return {
        "p_first_wins": values[state_key(0, 0)],
        "self_play": self_play,
        "fair_head_start": {"points": fair, "p_first_wins": head_starts[fair]},
        "matches": played,
        "all_matches": plays_all_matches(params, graph.all_matches),
        "bank_rules": [{"mine": mine, "opponent": theirs, "value": values[key],
                        "dice": {str(dice): rule for dice, rule in bank_rule(turns[key], mine, target).items()}}
                       for (mine, theirs), key in zip(situations(target), keys)],
        "convergence": graph.convergence(OPTIMAL),
        **({"responses": graph.responses([*agents(params), OPTIMAL])}
           if answers_every_policy(params, graph.all_matches) else {}),
    }


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the human-readable report's lines."""
    target = report["params"]["target"]
    fair = report["fair_head_start"]
    lines = ["", f"race to {target}, both playing to win: the first player wins with probability {report['p_first_wins']:.10f}",
             f"fair head start: {fair['points']} points to the second player (the first then wins with "
             f"{fair['p_first_wins']:.6f})", "",
             "head to head, exact: P(the row's player, moving first, beats the column's):"]
    lines += _match_table(report, lambda row: f"{row['p_first_wins']:>14.6f}")
    if not report["all_matches"]:
        lines.append(f"  (beyond a target of {ALL_MATCHES_UP_TO} the fixed strategies play only the optimum: "
                     "--all-matches plays them against each other)")
    simulated = [row["monte_carlo"] for row in [report["self_play"], *report["matches"]] if "monte_carlo" in row]
    if simulated:
        optimum = report["self_play"].get("monte_carlo")
        lines += ["", f"Monte Carlo, {simulated[0]['games']:,} races a match played from the rules"
                  + (f": both optimal, the first wins {optimum['estimate']:.4f} (z = {z_text(optimum['z'])})" if optimum else
                     f" (the optimum's up to a target of {SIMULATED_OPTIMUM_UP_TO})")
                  + "; z = (estimate - exact) / standard error:"]
        lines += _match_table(report, lambda row: f"{z_text(row['monte_carlo']['z']):>14}" if "monte_carlo" in row else f"{'-':>14}")
    lines += ["", "the optimum's banking rule: the turn total from which it banks, by dice left to roll:"]
    for situation in report["bank_rules"]:
        rule = ", ".join(f"{dice}: {_text(entry)}" for dice, entry in situation["dice"].items())
        lines.append(f"  me {situation['mine']}, opponent {situation['opponent']} (wins {situation['value']:.4f}): {rule}")
    convergence = report["convergence"] or {}
    if convergence:
        lines += ["", f"cycles: {convergence['cyclic_components']} score sums solved by Newton's method, "
                  f"{convergence['passes']} passes (at most {convergence['most_passes']} for one), "
                  f"residual {residual_text(convergence['residual'])}"]
    sizes = report["graph_size"]
    lines.append(f"graph: {sizes['turn_states'] - 1:,} score pairs and the win ({sizes['state_edges']:,} edges), one turn of "
                 f"{sizes['turn_edges']:,} edges stored once (copied into every pair: {sizes['copied_edges']:,})")
    return lines


def _match_table(data: Mapping[str, Any], cell: Callable[[Mapping[str, Any]], str]) -> list[str]:
    """Return the matches as a table, the first player's strategy down and the second's across, each ``cell(row)``."""
    found = {(row["first"], row["second"]): row for row in [data["self_play"], *data["matches"]]}
    names = [OPTIMAL, *dict.fromkeys(row["first"] for row in data["matches"] if row["first"] != OPTIMAL)]
    short = {name_: name_.replace("threshold-", "T") for name_ in names}
    lines = ["  " + " " * 13 + "".join(f"{short[column]:>14}" for column in names)]
    for row in names:
        cells = "".join(cell(found[row, column]) if (row, column) in found else f"{'-':>14}" for column in names)
        lines.append(f"  {short[row]:<13}{cells}")
    return lines


def _text(entry: Mapping[str, Any]) -> str:
    if entry["banks_from"] is None:
        return "never"
    extra = f" (rolls at {', '.join(map(str, entry['rolls_at'][:3]))}{'...' if len(entry['rolls_at']) > 3 else ''})" \
        if entry["rolls_at"] else ""
    return f"{entry['banks_from']}{extra}"


@hookimpl
def charts(graph: StoredGraph, params: Mapping[str, Any], directory: Path) -> list[dict[str, Any]]:
    """Draw when the optimum banks as a heat map (``5000-race-bank-boundary.png``): for three opponent scores
    (rows) and each number of dice left to roll (columns), own score across and turn total up, banking dark;
    return ``[{"file", "title"}]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    target = params["target"]
    steps = target // STEP
    opponents = list(dict.fromkeys([0, _step(target // 2), _step(target * 4 // 5)]))  # a short race: fewer rows
    figure, axes = plt.subplots(len(opponents), DICE, figsize=(3 * DICE, 3 * len(opponents)), squeeze=False)
    for row, theirs in enumerate(opponents):
        keys = [state_key(mine * STEP, theirs) for mine in range(steps)]
        turns = graph.turn.node_values(keys)
        for dice in range(1, DICE + 1):
            grid = np.full((steps, steps), np.nan)  # [turn total, my score]
            for mine, key in enumerate(keys):
                values = turns[key]
                for total in range(1, steps - mine):
                    on = values.get(chance_key(dice, total * STEP))
                    if on is not None:
                        banked = values[bank_end(total * STEP, target)]
                        grid[total, mine] = 1.0 if banked >= on - TIE * (1 + abs(on)) else 0.0
            axes_ = axes[row][DICE - dice]
            axes_.imshow(grid, origin="lower", cmap="Greys", vmin=-0.2, vmax=1.2, interpolation="nearest",
                         extent=(0, target, 0, target), aspect="auto")
            if np.isnan(grid).all():
                axes_.text(0.5, 0.5, "nothing to decide:\nevery total here wins\nor cannot occur", ha="center",
                           va="center", transform=axes_.transAxes, fontsize=7, color="gray")
            axes_.set_title(f"opponent {theirs}, {dice} dice left", fontsize=8)
            axes_.tick_params(labelsize=6)
            if row == len(opponents) - 1:
                axes_.set_xlabel("my score", fontsize=7)
            if dice == DICE:
                axes_.set_ylabel("turn total", fontsize=7)
    title = (f"5000 as a race to {target}: where the optimum banks (dark) or rolls on (light);\n"
             "blank: the total cannot occur with that many dice, or banking it wins")
    figure.suptitle(title, fontsize=10)
    path = directory / f"{name}-bank-boundary.png"
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)
    return [{"file": str(path), "title": title}]

