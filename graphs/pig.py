"""Pig, two players racing to a target with one die (Neller and Presser 2004; rules: shared/RULES.md).

On a turn the player rolls: a 1 loses the turn total and passes the turn;
2..6 add the face to it. Before each roll the player may hold instead: the
turn total is banked and the turn passes. The first to bank the target wins.

The game's rules are :class:`PigRules`, seen from the player to move, so
one graph serves both seats: a decision ``(a, b, k)`` is "my score ``a``,
the opponent's ``b``, turn total ``k``", worth the probability that I win.
Holding and busting are moves that hand the turn over, stored as edges of
sign -1 and reward 1 (I win when the opponent, then to move from ``(b,
a')``, does not). A roll that brings ``a + k`` to the target wins at once
(nobody rolls on past a win), so decisions have ``a + k < target``.

Busting leads back to ``(b, a, 0)`` with the same scores, so the game loops
(``loops``): ``(a, b)`` and ``(b, a)`` bust back and forth, and their turn
starts, which the passes enter, are the anchors. The clock is half the
score sum: a bank raises the sum by 2 or more, so the loops of sums ``2m``
and ``2m + 1`` never lead into each other and are solved as one cyclic
component. The graph is what the rules expand to (:mod:`dicegraph.graphs.expand`):
the expander finds the loops and their anchors, and, inside a component,
layers the decisions and rolls by their longest path from its turn starts.

>>> sizes(10)
{'decisions': 342, 'rolls': 342, 'edges': 1908, 'components': 10}
>>> hold_at(20)((30, 10, 22)), hold_at(20)((30, 10, 8))
('hold', 'roll')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dicegraph.graphs.commands import residual_text
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.montecarlo import Estimate, z_text
from dicegraph.graphs.protocol import CHANCE, DECISION, OPTIMAL, CyclicLayers, Edge, Node, Param, StoredGraph, one_by_one
from dicegraph.graphs.rules import DiceRules, Ending, Move

name = "pig"
title = "Pig"
summary = "Two players, one die: roll to add to the turn total or hold to bank it; a 1 loses it. First to 100 wins."
version = 2  # 2: built from the rules (the same nodes and edges, layered by the expander)
objective = "max"
outcome = "probability that the player to move wins"
players = 2  # two players, zero-sum, each position seen from the player to move
loops = True  # a bust hands the turn back and forth with the scores unchanged
params = (
    Param("target", 100, int, "the score that wins", check=lambda target: 2 <= target <= 200, accepted="2..200"),
    Param("holds", (20,), lambda text: tuple(sorted({int(n) for n in text.split(",")})),
          "turn totals N of the hold-at-N agents (comma-separated)",
          check=lambda holds: all(1 <= n <= 200 for n in holds), accepted="whole numbers 1..200, comma-separated"),
)
small_params = {"target": 8, "holds": (4,)}
# Neller and Presser, "Optimal Play of the Dice Game Pig", UMAP Journal 25(1), 2004: to 100, four digits
PUBLISHED_P_FIRST_WINS = {100: 0.5306}

WIN = "win"
MATCH_SEED = 1  # the seed of the report's Monte Carlo matches (match number n plays the stream [1, n])
Position = tuple[int, int, int]  # (my score, the opponent's, turn total)
Agent = Callable[[Position], str]


def scores(target: int) -> list[int]:
    """Return the banked scores a player can have below ``target``: 0 and 2.. (a bank is at least 2).

    >>> scores(5)
    [0, 2, 3, 4]
    """
    return [0, *range(2, target)]


def turn_totals(target: int, mine: int) -> list[int]:
    """Return the turn totals a decision can have with score ``mine``: 0 and 2.. up to ``target - mine - 1``."""
    return [0, *range(2, target - mine)]


def hold_at(limit: int) -> Agent:
    """Return the agent that holds once the turn total reaches ``limit`` (and rolls at a turn's start)."""
    def decide(position: Position) -> str:
        return "hold" if position[2] >= limit else "roll"
    return decide


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the hold-at-N agents the parameters name, e.g. ``('hold-at-20', 'hold-at-25')``."""
    return tuple(f"hold-at-{limit}" for limit in params["holds"])


def decision_key(mine: int, theirs: int, total: int) -> str:
    """Return a decision's key, e.g. ``'30-10 +22'``."""
    return f"{mine}-{theirs} +{total}"


def first_guess(params: Mapping[str, Any], key: str) -> str | None:
    """Return the key of the turn start whose value guesses the turn start ``key``'s best, from a score sum
    solved before: both scores one point further on (the same lead), else two, else the opponent two points
    further on, else me (None at the top; only Newton's passes change).

    >>> [first_guess({"target": 100}, key) for key in ("30-10 +0", "0-10 +0", "30-99 +0", "98-99 +0")]
    ['31-11 +0', '2-12 +0', '32-99 +0', None]
    """
    mine, theirs = (int(score) for score in key.removesuffix(" +0").split("-"))
    banked = set(scores(params["target"]))
    for mine_then, theirs_then in ((mine + 1, theirs + 1), (mine + 2, theirs + 2), (mine, theirs + 2), (mine + 2, theirs)):
        if mine_then in banked and theirs_then in banked:
            return decision_key(mine_then, theirs_then, 0)
    return None


def _label(mine: int, theirs: int, total: int) -> str:
    return f"me {mine}, opponent {theirs}, turn total {total}"


TURN, ROLLING = "turn", "rolling"  # a decision to roll or hold, and the roll it leads to


class PigRules(DiceRules):
    """Pig's rules for one target: a position is ``(TURN or ROLLING, mine, theirs, turn total)``, or :data:`WIN`.

    The clock is half the score sum: a bank raises the sum by 2 or more, so
    sums ``2m`` and ``2m + 1`` never lead into each other and loop as one
    component. Holding and busting hand the turn over (``passes``).

    >>> rules = PigRules(10, (4,))
    >>> [move.label for move in rules.moves((TURN, 3, 5, 2), None)], rules.ending((ROLLING, 3, 5, 2), 1)
    (['roll', 'hold'], Move(next=('turn', 5, 3, 0), label='{rolls}: bust', reward=0.0, passes=True))
    """

    def __init__(self, target: int, holds: tuple[int, ...]):
        self.target = target
        self.agents = {f"hold-at-{limit}": self._plays(hold_at(limit)) for limit in holds}

    @staticmethod
    def _plays(agent: Agent) -> Callable[..., Move]:
        """Return the rules' agent for ``agent`` (a decision's (mine, theirs, total) -> ``roll`` or ``hold``)."""
        return lambda position, roll, moves: next(move for move in moves if move.label == agent(position[1:]))

    def starts(self) -> list[Any]:
        """Return the first player's first turn."""
        return [(TURN, 0, 0, 0)]

    def key(self, position: Any) -> str:
        """Return ``'30-10 +22'`` for a decision, with ``' roll'`` for its roll, or ``'win'``."""
        if position == WIN:
            return WIN
        kind, mine, theirs, total = position
        return decision_key(mine, theirs, total) + (" roll" if kind == ROLLING else "")

    def label(self, position: Any) -> str:
        """Return the position in words, from the player to move."""
        if position == WIN:
            return "the player to move has won"
        kind, mine, theirs, total = position
        return _label(mine, theirs, total) + (", rolling" if kind == ROLLING else "")

    def clock(self, position: Any) -> int:
        """Return half the score sum (the win: the end of time)."""
        return self.target if position == WIN else (position[1] + position[2]) // 2

    def payoff(self, position: Any) -> float | None:
        """Return 1 at the win (the mover's), else None."""
        return 1.0 if position == WIN else None

    def rolls(self, position: Any) -> list[tuple[int, int]] | None:
        """Return the die's faces when rolling; None at a decision (roll or hold comes first)."""
        return [(face, 1) for face in range(1, 7)] if position[0] == ROLLING else None

    def moves(self, position: Any, roll: int | None) -> list[Move]:
        """Return roll and hold at a decision (holding banks the turn total and hands the turn over); a roll
        decides alone (:meth:`ending`)."""
        if roll is not None:
            return []
        _, mine, theirs, total = position
        return [Move((ROLLING, mine, theirs, total), "roll"), Move((TURN, theirs, mine + total, 0), "hold", passes=True)]

    def ending(self, position: Any, face: int) -> Move | Ending:
        """Return what a face does: a 1 busts (the turn passes), a face reaching the target wins, any other
        adds to the turn total."""
        _, mine, theirs, total = position
        if face == 1:
            return Move((TURN, theirs, mine, 0), "{rolls}: bust", passes=True)
        if mine + total + face >= self.target:
            return Ending(WIN, "the player to move has won", 1.0, roll_label="{rolls}: wins")
        return Move((TURN, mine, theirs, total + face), "{rolls}")


def rules(params: Mapping[str, Any]) -> PigRules:
    """Return Pig's rules for ``params`` (target, holds): the graph, the agents and the exact checks come from them."""
    return PigRules(params["target"], params["holds"])


def hold_table(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> Any:
    """Return a boolean numpy array ``hold[a, b, k]``: whether ``policy`` (a hold-at-N agent's name, or a stored
    policy's moves: decision key -> move label) holds at ``(a, b, k)``; unused entries are False."""
    import numpy as np

    target = params["target"]
    hold = np.zeros((target, target, target), dtype=bool)
    if isinstance(policy, str):
        limits = {name_: limit for name_, limit in zip(agents(params), params["holds"])}
        if policy not in limits:
            raise BadParameter(f"unknown Pig agent {policy!r} (known: {', '.join(limits)})")
        hold[:, :, limits[policy]:] = True
        return hold
    for key, move in policy.items():
        if move == "hold":
            scores_, total = key.split(" +")
            mine, theirs = scores_.split("-")
            hold[int(mine), int(theirs), int(total)] = True
    return hold


def play_matches(params: Mapping[str, Any], first: Any, second: Any, games: int, rng: Any) -> Any:
    """Play ``games`` games from the rules, the first player holding where ``first[a, b, k]`` is True (tables of
    :func:`hold_table`), the second where ``second`` is; return 1.0 where the first player won, else 0.0."""
    import numpy as np

    target = params["target"]
    score = np.zeros((games, 2), dtype=np.int64)
    total = np.zeros(games, dtype=np.int64)
    mover = np.zeros(games, dtype=np.int64)
    winner = np.full(games, -1)
    tables = np.stack([first, second])
    playing = np.arange(games)
    while len(playing):
        me, them = mover[playing], 1 - mover[playing]
        mine, theirs, turn = score[playing, me], score[playing, them], total[playing]
        holds = tables[me, mine, theirs, turn]
        faces = rng.integers(1, 7, size=len(playing))
        banked = np.where(holds, mine + turn, mine)
        score[playing, me] = banked
        busted = ~holds & (faces == 1)
        total[playing] = np.where(holds | busted, 0, turn + faces)
        won = ~holds & ~busted & (mine + turn + faces >= target)
        winner[playing[won]] = me[won]
        passes = (holds | busted) & ~won
        mover[playing[passes]] = them[passes]
        playing = playing[~won]
    return (winner == 0).astype(np.float64)


def simulator(params: Mapping[str, Any], policy: str | Mapping[str, str] | tuple[Any, Any]) -> Callable[[int, Any], Any]:
    """Return a function playing ``games`` games of ``policy`` against itself (or of a pair, the first player's and
    the second's): 1.0 where the first player won."""
    first, second = policy if isinstance(policy, tuple) else (policy, policy)
    tables = hold_table(params, first), hold_table(params, second)
    return lambda games, rng: play_matches(params, *tables, games, rng)


def hold_boundary(hold: Any, target: int, step: int | None = None) -> list[dict[str, Any]]:
    """Return, on a grid of score situations (every ``step`` points, a tenth of the target by default), the
    turn total from which the policy ``hold`` (a :func:`hold_table`) holds: ``{mine, theirs, hold_at}``,
    ``hold_at`` None where it rolls on until it wins or busts (what Neller and Presser draw as a surface).

    >>> import numpy as np
    >>> table = np.zeros((10, 10, 10), dtype=bool); table[:, :, 4:] = True
    >>> hold_boundary(table, 10, step=5)[:2]
    [{'mine': 0, 'theirs': 0, 'hold_at': 4}, {'mine': 0, 'theirs': 5, 'hold_at': 4}]
    """
    step = step or max(1, target // 10)
    found = []
    for mine in range(0, target, step):
        for theirs in range(0, target, step):
            totals = [total for total in range(2, target - mine) if hold[mine, theirs, total]]
            found.append({"mine": mine, "theirs": theirs, "hold_at": totals[0] if totals else None})
    return found


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``p_first_wins`` (both optimal), ``matches`` (each agent against the optimum in both seats,
    and the agents against each other: ``{first, second, p_first_wins}``, with ``monte_carlo`` when the
    report plays games), the optimum's ``hold_boundary``, ``published`` and ``convergence``."""
    values = {row["name"]: row["value"] for row in report["policies"]}
    names = [*agents(params), OPTIMAL]
    matches = graph.matches([(first, second) for number, first in enumerate(names) for second in names[number + 1:]])
    games = next((row["monte_carlo"]["games"] for row in report["policies"] if "monte_carlo" in row), 0)
    if games:  # the report was asked for Monte Carlo: play the matches too, from the rules
        import numpy as np

        tables = {name_: hold_table(params, name_ if name_ != OPTIMAL else
                                    {k: move.label for k, move in graph.choices(OPTIMAL).items()}) for name_ in names}
        for number, match in enumerate(matches):
            rng = np.random.default_rng([MATCH_SEED, number])  # a stream of its own: the same whatever is added
            wins = play_matches(params, tables[match["first"]], tables[match["second"]], games, rng)
            match["monte_carlo"] = Estimate.of(wins).against(match["p_first_wins"])
    published = PUBLISHED_P_FIRST_WINS.get(params["target"])
    optimal = hold_table(params, {k: move.label for k, move in graph.choices(OPTIMAL).items()})
    return {
        "hold_boundary": hold_boundary(optimal, params["target"]),
        "p_first_wins": values[OPTIMAL],
        "published": None if published is None else {
            "p_first_wins": published, "source": "Neller and Presser 2004",
            "agrees": abs(values[OPTIMAL] - published) < 0.5e-4},
        "matches": matches,
        "convergence": graph.convergence(OPTIMAL),
    }


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the report's answers in sentences: who wins, and what the agents give away."""
    lines = [f"Both playing optimally, the first player wins with probability {report['p_first_wins']:.10f}."]
    published = report["published"]
    if published is not None:
        verdict = "agrees" if published["agrees"] else "DISAGREES"
        lines.append(f"{published['source']} give {published['p_first_wins']}: this {verdict} to their four digits.")
    for match in report["matches"]:
        simulated = match.get("monte_carlo")
        checked = (f" (Monte Carlo of {simulated['games']:,} games: {simulated['estimate']:.4f}, z = {z_text(simulated['z'])})"
                   if simulated else "")
        lines.append(f"{match['first']} moving first against {match['second']}: "
                     f"the first wins with probability {match['p_first_wins']:.10f}{checked}.")
    lines.append("The optimum holds from this turn total on (rows: my score; columns: the opponent's; "
                 "- where it rolls on until it wins or busts):")
    grid = report["hold_boundary"]
    columns = sorted({cell["theirs"] for cell in grid})
    lines.append("        " + "".join(f"{theirs:>5}" for theirs in columns))
    for mine in sorted({cell["mine"] for cell in grid}):
        row = {cell["theirs"]: cell["hold_at"] for cell in grid if cell["mine"] == mine}
        lines.append(f"  {mine:>5} " + "".join(f"{'-' if row[t] is None else row[t]:>5}" for t in columns))
    converged = report["convergence"]
    if converged is not None:
        lines.append(f"Solved by {converged['method']} over {converged['cyclic_components']} cyclic components: "
                     f"{converged['passes']} passes, at most {converged['most_passes']} a component, largest residual "
                     f"{residual_text(converged['residual'])}.")
    return lines


@hookimpl
def charts(graph: StoredGraph, params: Mapping[str, Any], directory: Path) -> list[dict[str, Any]]:
    """Draw the optimum's hold boundary as a heat map (``pig-hold-boundary.png`` in ``directory``): for each
    score pair, the turn total from which the player to move holds (like Neller and Presser's figures);
    return ``[{"file", "title"}]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    target = params["target"]
    hold = hold_table(params, {k: move.label for k, move in graph.choices(OPTIMAL).items()})
    boundary = np.full((target, target), np.nan)
    for mine in scores(target):
        for theirs in scores(target):
            totals = np.nonzero(hold[mine, theirs, 2:target - mine])[0]
            if len(totals):
                boundary[mine, theirs] = totals[0] + 2
    title = (f"Pig to {target}: the turn total from which the optimum holds\n"
             "(blank: it rolls on until it wins or busts, or the scores cannot occur)")
    figure, axes = plt.subplots(figsize=(7.5, 6.5))
    if np.isnan(boundary).all():  # a short race: no frame of nothing, but what the optimum does instead
        axes.text(0.5, 0.5, f"to {target}, the optimum never holds:\nit rolls on until it wins or busts",
                  ha="center", va="center", transform=axes.transAxes, fontsize=12)
        axes.set_xlim(-0.5, target - 0.5)
        axes.set_ylim(-0.5, target - 0.5)
    else:
        image = axes.imshow(boundary, origin="lower", cmap="viridis", interpolation="nearest")
        figure.colorbar(image, ax=axes, label="turn total at which to hold")
    axes.set_xlabel("the opponent's score")
    axes.set_ylabel("my score")
    axes.set_title(title, fontsize=9)
    path = directory / f"{name}-hold-boundary.png"
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
    return [{"file": str(path), "title": title}]


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return the number of edges :func:`build` streams, counted without building (``2`` moves a decision;
    a roll node's bust, its faces that do not win, and one edge for those that do).

    >>> estimated_edges({"target": 10}) == sizes(10)["edges"]
    True
    """
    target = params["target"]
    count = 0
    for mine in scores(target):
        for total in turn_totals(target, mine):
            short = sum(1 for face in range(2, 7) if mine + total + face < target)
            count += 2 + 1 + short + (short < 5)
    return count * len(scores(target))


def sizes(target: int) -> dict[str, int]:
    """Return the graph's counts for ``target``: decisions, roll nodes, edges and cyclic components."""
    from dicegraph.graphs.expand import expand

    rows = list(one_by_one(expand(rules({"target": target, "holds": ()}), players=players, loops=loops)))
    nodes = [row for row in rows if isinstance(row, Node)]
    return {"decisions": sum(n.kind == DECISION for n in nodes), "rolls": sum(n.kind == CHANCE for n in nodes),
            "edges": sum(isinstance(row, Edge) for row in rows),
            "components": sum(isinstance(row, CyclicLayers) for row in rows)}
