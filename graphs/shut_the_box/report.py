"""Shut The Box: exact answers to seed 002's four questions, from the stored graph.

1. The expected score (and its distribution) under each policy.
2. The best opening roll: the value of each first decision under ``optimal``.
3. When not to shut the largest tiles: the (board, roll) pairs where the
   optimal move is not the greedy one, counted over every board as the seed
   counts them, with the largest loss a greedy move causes there.
4. The value of going second: player 2 knows player 1's score and solves for
   the probability of beating it (one throw-away solve per score player 1
   can make); and how often ``optimal`` beats ``greedy`` over a 20-game day.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.contest import head_to_head, series
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import TIE, StoredGraph
from dicegraph.graphs.shut_the_box.game import board_label

DAY_GAMES = 20


@hookimpl
def analyse(graph: StoredGraph, params: Mapping[str, Any], report: Mapping[str, Any]) -> dict[str, Any]:
    """Return the seed's answers: ``expected_score, p_shut, opening_rolls, greedy_exceptions,
    score_distribution, two_player, two_player_seed_objective, self_play, day``."""
    distributions = {row["name"]: graph.distribution(row["name"]) for row in report["policies"]}
    first = distributions["optimal"]
    one_game = head_to_head(first, distributions["greedy"], lower_wins=True)
    return {
        "expected_score": {name: _mean(d) for name, d in distributions.items()},
        "p_shut": {name: d.get(0.0, 0.0) for name, d in distributions.items()},
        "opening_rolls": _opening_rolls(graph, params["tiles"]),
        "greedy_exceptions": _greedy_exceptions(graph),
        "score_distribution": {name: {_score(k): p for k, p in d.items()} for name, d in distributions.items()},
        **_second_player(graph, first),
        "self_play": _as_second(head_to_head(first, first, lower_wins=True)),
        "day": {"games": DAY_GAMES, "one_game": one_game, **series(**one_game, games=DAY_GAMES)},
    }


def _mean(distribution: Mapping[float, float]) -> float:
    return sum(score * p for score, p in distribution.items())


def _score(payoff: float) -> int:
    return int(round(payoff))


def _opening_rolls(graph: StoredGraph, tiles: int) -> list[dict[str, Any]]:
    """Each first roll's total with the expected score of playing it optimally, best first."""
    first = f"{(1 << tiles) - 1}/"
    rolls = [{"roll": int(key.split("/")[1]), "expected_score": v}
             for key, v in graph.values("optimal", kind="decision").items() if key.startswith(first)]
    return sorted(rolls, key=lambda row: (row["expected_score"], row["roll"]))


def _greedy_exceptions(graph: StoredGraph) -> dict[str, Any]:
    """Decision nodes (every board, reachable or not) where the optimal move is not greedy's.

    ``max_gap`` is how much more the greedy move's board is expected to score
    than the optimal move's, both played on optimally from there. Only
    (board, roll) decisions count (keys ``board/total``), not the choice of dice.
    """
    best, greedy, after = graph.choices("optimal"), graph.choices("greedy"), graph.values("optimal")
    rows = []
    for key, move in best.items():
        other = greedy[key]
        if "/" not in key or other.label == move.label:
            continue
        board, total = key.split("/")
        rows.append({"key": key, "best_move": move.label, "greedy_move": other.label,
                     "best_value": after[move.dst], "greedy_value": after[other.dst],
                     "gap": after[other.dst] - after[move.dst], "board": board_label(int(board)), "roll": int(total)})
    worst = max(rows, key=lambda row: (row["gap"], row["key"]), default=None)
    return {"count": len(rows), "max_gap": worst["gap"] if worst else 0.0, "worst": worst,
            "ties": sum(1 for row in rows if abs(row["gap"]) <= TIE * (1 + abs(row["best_value"])))}


def _second_player(graph: StoredGraph, first: Mapping[float, float]) -> dict[str, Any]:
    """Player 2 sees player 1's score ``s`` and plays for ``P(score < s)`` (``two_player``) or, the seed's
    objective, ``P(score <= s)`` (``two_player_seed_objective``); their exact results.

    Scores are whole numbers, so ``score <= s`` is ``score < s + 1``: one sweep
    (``goal_sweep``) solves both objectives for every ``s``.
    """
    thresholds = sorted({score for score in first} | {score + 1 for score in first})
    outcomes = dict(zip(thresholds, graph.goal_sweep("max", [f"payoff < {t:g}" for t in thresholds])))
    results = {}
    for key, shift, objective in (("two_player", 0, "P(lower score)"),
                                  ("two_player_seed_objective", 1, "P(lower or equal score), the seed's")):
        win = loss = tie = 0.0
        for target, p_target in first.items():
            second = outcomes[target + shift]
            win += p_target * sum(p for score, p in second.items() if score < target)
            loss += p_target * sum(p for score, p in second.items() if score > target)
            tie += p_target * second.get(target, 0.0)
        results[key] = {"p2_win": win, "p2_loss": loss, "tie": tie, "objective": objective}
    return results


def _as_second(one_game: Mapping[str, float]) -> dict[str, float]:
    return {"p2_win": one_game["loss"], "p2_loss": one_game["win"], "tie": one_game["tie"]}


@hookimpl
def describe(report: Mapping[str, Any]) -> list[str]:
    """Return the report's answers to the seed's four questions, in sentences."""
    expected, shut = report["expected_score"], report["p_shut"]
    rolls = report["opening_rolls"]
    exceptions, worst = report["greedy_exceptions"], report["greedy_exceptions"]["worst"]
    two, seed_two, self_play, day = report["two_player"], report["two_player_seed_objective"], report["self_play"], report["day"]
    sentences = [
        f"1. Expected score: {expected['optimal']:.12g} playing optimally, {expected['greedy']:.12g} greedily; "
        f"the box is shut {100 * shut['optimal']:.3f} % of games (optimal), {100 * shut['greedy']:.3f} % (greedy), "
        f"at most {100 * shut['optimal-shut']:.3f} % (optimal-shut, which expects {expected['optimal-shut']:.4f}).",
        f"2. Best opening roll: {rolls[0]['roll']} (expected score {rolls[0]['expected_score']:.12g}); worst: "
        f"{rolls[-1]['roll']} ({rolls[-1]['expected_score']:.12g}). In order: "
        + ", ".join(str(row["roll"]) for row in rolls) + ".",
        f"3. Not shutting the largest tiles pays on {exceptions['count']} (board, roll) pairs, counted over every "
        f"board as the seed counts them ({exceptions['ties']} of them ties). "
        + (f"The largest loss of the greedy move: "
           f"{exceptions['max_gap']:.6f} points, at {worst['board']}, roll {worst['roll']}: {worst['best_move']} "
           f"(expects {worst['best_value']:.6f}), not greedy {worst['greedy_move']} ({worst['greedy_value']:.6f}). "
           if worst is not None else "The greedy move is never worse here. ")
        + "The seed says the largest difference is 0.1 points, reading it off the five rows it printed.",
        f"4. Going second, knowing the score to beat: player 2 wins {100 * two['p2_win']:.4f} %, loses "
        f"{100 * two['p2_loss']:.4f} %, ties {100 * two['tie']:.4f} % (player 2 maximises P(lower score); "
        f"with the seed's objective, ties counted as good: {100 * seed_two['p2_win']:.4f} / "
        f"{100 * seed_two['p2_loss']:.4f} / {100 * seed_two['tie']:.4f} %). Both playing optimally without "
        f"knowing: {100 * self_play['p2_win']:.4f} / {100 * self_play['p2_loss']:.4f} / {100 * self_play['tie']:.4f} %. "
        f"So going second is worth {100 * (two['p2_win'] - two['p2_loss']):+.4f} points of net win rate: small, "
        "as the seed guessed, but not zero (its sampling could not tell).",
        f"   A day of {day['games']} games, optimal against greedy: optimal wins more games on "
        f"{100 * day['win']:.2f} % of days, greedy on {100 * day['loss']:.2f} %, tie {100 * day['tie']:.2f} % "
        f"(one game: {100 * day['one_game']['win']:.3f} / {100 * day['one_game']['loss']:.3f} / "
        f"{100 * day['one_game']['tie']:.3f} %). The seed's sample said 49.3 / 40.7 / 10.0 % (\"~9 % more days\"); "
        f"exactly, the margin is {100 * (day['win'] - day['loss']):.2f} points.",
    ]
    return [""] + [textwrap.fill(text, width=100, subsequent_indent="   ") for text in sentences]
