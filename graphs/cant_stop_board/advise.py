"""Advice for one moment of a Can't Stop turn on a real board, from the solved turn graph.

The board's turn graph is built and solved once per board and objective
(the session does it), then reused. Given a roll, the advice is the decision
node that roll leads to: every way to climb, each followed by stop or roll,
with its value under optimal play. Without a roll, it compares stopping now
with rolling.
"""

from __future__ import annotations

from typing import Any

from graphs.cant_stop_board import game as rules
from graphs.protocol import StoredGraph

OPTIMAL = "optimal"


def graph_params(board_text: str, objective: str) -> dict[str, Any]:
    """Return the parameters of the turn graph that advises on ``board_text`` (pruned)."""
    return {"board": rules.parse_board(board_text).text, "objective": objective, "prune": True}


def advise(graph: StoredGraph, board_text: str, objective: str = "progress",
           roll: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Return the advice: ``{"board", "objective", "roll", "decision", "alternatives": [{"move", "value"}], ...}``.

    ``alternatives`` are best first; ``decision`` is the best one's move
    (``'bust'`` when the roll allows no climb).
    """
    board = rules.parse_board(board_text)
    result: dict[str, Any] = {"board": board.text, "objective": objective, "graph": graph.graph_id,
                              "roll": list(roll) if roll else None}
    start_key = rules.state_key(board.runners)
    stop_now = rules.payoff(board, board.runners, objective)
    if roll is None:
        rolling = graph.position(start_key, depth=0)["policies"][OPTIMAL]["value"]
        alternatives = [{"move": "stop", "value": stop_now}, {"move": "roll", "value": rolling}]
    else:
        allowed = rules.options(board, board.runners, tuple(sorted(roll)))
        if not allowed:
            return result | {"decision": "bust", "alternatives": [], "value": 0.0}
        choices = sorted(allowed, key=lambda s: (-rules.worth_units(board, s), rules.state_key(s)))
        decision = f"{start_key}/" + "|".join(rules.state_key(s) for s in choices)
        moves = graph.position(decision, depth=1)["edges"]
        alternatives = [{"move": move["label"], "value": move["values"][OPTIMAL]} for move in moves]
    alternatives.sort(key=lambda row: -row["value"])
    return result | {"decision": alternatives[0]["move"], "value": alternatives[0]["value"], "alternatives": alternatives}
