"""Advice for one moment of a Can't Stop turn on a real board, from the solved turn graph.

The board's turn graph is built and solved once per board and objective
(the session does it), then reused. Given a roll, the advice is the decision
node that roll leads to: every way to climb, each followed by stop or roll,
with its value under optimal play. Without a roll, it compares stopping now
with rolling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicegraph.graphs.advice import Advice, Advisor, Alternative, Question, dice_faces
import dicegraph.graphs.cant_stop_board.game as rules
from dicegraph.graphs.cant_stop_board.picture import board_svg
from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.hookspecs import hookimpl
from dicegraph.graphs.protocol import OPTIMAL, StoredGraph



def graph_params(board_text: str, objective: str) -> dict[str, Any]:
    """Return the parameters of the turn graph that advises on ``board_text`` (pruned)."""
    return {"board": rules.parse_board(board_text).text, "objective": objective, "prune": True}


def parse_roll(text: str) -> tuple[int, ...]:
    """Return four dice from ``'2,3,5,6'``; raise BadParameter otherwise.

    >>> parse_roll("2, 3,5,6")
    (2, 3, 5, 6)
    """
    try:
        dice = tuple(int(part) for part in text.split(","))
    except ValueError:
        dice = ()
    if len(dice) != 4 or not all(1 <= d <= 6 for d in dice):
        raise BadParameter(f"{text!r} is not four dice 1..6, e.g. 2,3,5,6")
    return dice


def advise(graph: StoredGraph, board_text: str, objective: str = "progress",
           roll: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Return the advice: ``{"board", "objective", "roll", "decision", "alternatives": [{"move", "value"}],
    "position", ...}``.

    ``alternatives`` are best first; ``decision`` is the best one's move
    (``'bust'`` when the roll allows no climb); ``position`` is the key of
    the graph's node the advice is about (the roll's decision, or the start).
    """
    board = rules.parse_board(board_text)
    start_key = rules.state_key(board.runners)
    result: dict[str, Any] = {"board": board.text, "objective": objective, "graph": graph.graph_id,
                              "roll": list(roll) if roll else None, "position": start_key}
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
        result["position"] = decision
        alternatives = [{"move": move["label"], "value": move["values"][OPTIMAL]} for move in moves]
    alternatives.sort(key=lambda row: -row["value"])
    return result | {"decision": alternatives[0]["move"], "value": alternatives[0]["value"], "alternatives": alternatives}


def _advice(graph: StoredGraph, answers: Mapping[str, str]) -> Advice:
    """Return :func:`advise`'s answer for the graph's own board and objective as the explorer's advice."""
    board, objective = graph.params["board"], graph.params["objective"]
    roll = parse_roll(answers["roll"]) if answers["roll"] else None
    found = advise(graph, board, objective, roll)
    rolled = f"roll {dice_faces(roll)} ({'-'.join(map(str, roll))})" if roll else "before rolling: stop now or roll?"
    return Advice(f"board {found['board'] or '(empty)'}, {rolled}; objective {objective}", OPTIMAL,
                  [Alternative(row["move"], row["value"]) for row in found["alternatives"]],
                  decision="bust: no pairing climbs, the turn's climbing is lost" if found["decision"] == "bust" else None,
                  position=found["position"], picture=board_svg(rules.parse_board(board)))


ADVISOR = Advisor(
    "How to play this roll on the board",
    (Question("roll", "Four dice rolled", "2,3,5,6", "four dice 1..6; blank: stop now or roll?", required=False),),
    _advice, "the objective's expected value (the turn's progress, or the chance to claim a column), playing on optimally")


@hookimpl
def advisor() -> Advisor:
    """Return the game's advisor: the explorer's advice page."""
    return ADVISOR
