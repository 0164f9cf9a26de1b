"""Five small games of shapes no built-in game has, written from docs/guide.md as a new user would write them.

* ``lowball``: a solitaire game that minimises: roll a die each round and take it, or roll once more and take
  that; the score is the sum taken, the less the better.
* ``slide``: a two-player race with a coin whose scores can fall back: heads adds a point to the turn, tails
  loses the turn total and hands the coin over, and tails on the turn's first flip sends the banked score back
  to 0. Positions repeat (``loops``), the start among them (both scores back at 0), and there is no clock.
* ``yachtlet``: a Yacht-like game paying points on its moves: two rounds of one die, each scored in a box not
  used yet (``odd``: the die if it is odd; ``high``: the die if it is 4 or more); the terminal pays nothing.
* ``chase``: a solitaire game that minimises and loops: settle for a fixed cost, or roll a die: a 6 ends the
  game at no cost, any other face costs 1 and brings you back to the choice. Rolling costs 5 on average.
* ``tally``: a repeating turn, stored once: each of ``rounds`` turns rolls a die, which the turn keeps or rolls
  once more and keeps; the faces kept add up (4.25 a turn: keep a 4 or more).

:func:`registered` registers them for a test and takes them out again.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from contextlib import contextmanager

from dicegraph.graphs import register, unregister
from dicegraph.graphs.protocol import Param
from dicegraph.graphs.repeating import RepeatingTurn, TurnsInFull
from dicegraph.graphs.rules import DiceRules, Ending, Move
from dicegraph.graphs.spec import GameSpec

FACES = [(face, 1) for face in range(1, 7)]


class LowballRules(DiceRules):
    """A position is (round, total, rolled again?), or ("end", total) once every round is taken."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.agents = {"take-first": lambda position, face, moves: moves[0]}

    def starts(self) -> list:
        return [(0, 0, False)]

    def key(self, position: tuple) -> str:
        if position[0] == "end":
            return f"end {position[1]}"
        return f"r{position[0]} t{position[1]}" + (" again" if position[2] else "")

    def label(self, position: tuple) -> str:
        return self.key(position)

    def clock(self, position: tuple) -> int:
        return 2 * self.rounds if position[0] == "end" else 2 * position[0] + position[2]

    def payoff(self, position: tuple) -> float | None:
        return float(position[1]) if position[0] == "end" else None

    def rolls(self, position: tuple) -> list:
        return FACES

    def moves(self, position: tuple, face: int) -> list[Move]:
        round_, total, again = position
        after = ("end", total + face) if round_ + 1 == self.rounds else (round_ + 1, total + face, False)
        take = Move(after, f"take {face}")
        return [take] if again else [take, Move((round_, total, True), "roll again")]


class SlideRules(DiceRules):
    """A position is (my score, the opponent's, turn total, flipping?), seen from the player to move; the game
    starts at (0, 0, 0, False), which recurs (both scores back at 0): the expander anchors it."""

    def __init__(self, goal: int) -> None:
        self.goal = goal
        self.agents = {"hold-at-1": lambda position, coin, moves: moves[-1]}

    def starts(self) -> list:
        return [(0, 0, 0, False)]

    def key(self, position: tuple) -> str:
        mine, theirs, total, flipping = position
        return f"{mine}-{theirs} +{total}" + (" flip" if flipping else "")

    def label(self, position: tuple) -> str:
        return self.key(position)

    def payoff(self, position: tuple) -> float | None:
        return None

    def rolls(self, position: tuple) -> list | None:
        return [("heads", 1), ("tails", 1)] if position[3] else None

    def moves(self, position: tuple, coin: str | None) -> list[Move]:
        mine, theirs, total, _ = position
        if coin is not None:
            return []
        flip = Move((mine, theirs, total, True), "flip")
        return [flip, Move((theirs, mine + total, 0, False), "hold", passes=True)] if total else [flip]

    def ending(self, position: tuple, coin: str) -> Ending | Move:
        mine, theirs, total, _ = position
        if coin == "tails":  # the turn is lost; on its first flip, the banked score too
            return Move((theirs, mine if total else 0, 0, False), "tails: turn over", passes=True)
        if mine + total + 1 >= self.goal:
            return Ending("won", "the player to move has won", 1.0, roll_label="heads: wins")
        return Move((mine, theirs, total + 1, False), "heads")


BOXES = {"odd": lambda face: face if face % 2 else 0, "high": lambda face: face if face >= 4 else 0}


class YachtletRules(DiceRules):
    """A position is the boxes still open (a sorted tuple); the points go with the move that fills a box."""

    def __init__(self) -> None:
        self.agents = {"first-box": lambda position, face, moves: moves[0]}

    def starts(self) -> list:
        return [tuple(sorted(BOXES))]

    def key(self, position: tuple) -> str:
        return ",".join(position) or "done"

    def label(self, position: tuple) -> str:
        return f"open: {', '.join(position)}" if position else "every box filled"

    def clock(self, position: tuple) -> int:
        return len(BOXES) - len(position)

    def payoff(self, position: tuple) -> float | None:
        return 0.0 if not position else None

    def rolls(self, position: tuple) -> list:
        return FACES

    def moves(self, position: tuple, face: int) -> list[Move]:
        return [Move(tuple(box for box in position if box != chosen), f"{chosen} for {BOXES[chosen](face)}",
                     reward=float(BOXES[chosen](face))) for chosen in position]


class ChaseRules(DiceRules):
    """A position is ``choose`` (settle or roll), ``rolling``, or where the game ended; ``choose`` recurs."""

    def __init__(self, cost: int) -> None:
        self.cost = cost
        self.agents = {"always-roll": lambda position, face, moves: moves[0]}

    def starts(self) -> list:
        return ["choose"]

    def key(self, position: str) -> str:
        return position

    def label(self, position: str) -> str:
        return {"choose": "settle or roll", "rolling": "rolling for a 6", "settled": f"settled for {self.cost}"}[position]

    def payoff(self, position: str) -> float | None:
        return float(self.cost) if position == "settled" else None

    def rolls(self, position: str) -> list | None:
        return FACES if position == "rolling" else None

    def moves(self, position: str, face: int | None) -> list[Move]:
        if position == "choose":
            return [Move("rolling", "roll"), Move("settled", "settle")]
        return []

    def ending(self, position: str, face: int) -> Ending | Move:
        if face == 6:
            return Ending("free", "a 6: free", 0.0)
        return Move("choose", "pay 1", reward=1.0)


class TallyTurn(DiceRules):
    """One turn: a position is ``first`` or ``second`` (the roll to come), or ``("kept", face)``, the turn's end."""

    def starts(self) -> list:
        return ["first"]

    def key(self, position: str | tuple) -> str:
        return f"kept/{position[1]}" if isinstance(position, tuple) else position

    def label(self, position: str | tuple) -> str:
        return f"kept a {position[1]}" if isinstance(position, tuple) else f"the {position} roll"

    def payoff(self, position: str | tuple) -> float | None:
        return 0.0 if isinstance(position, tuple) else None  # an end: what it is worth is the state's move

    def rolls(self, position: str | tuple) -> list:
        return FACES

    def moves(self, position: str | tuple, face: int) -> list[Move]:
        keep = Move(("kept", face), f"keep {face}")
        return [keep, Move("second", "roll again")] if position == "first" else [keep]

    def ending(self, position: str | tuple, face: int) -> Ending:
        raise AssertionError("every roll has a move")


class Tally(RepeatingTurn):
    """A turn state is how many turns are played; a turn kept at ``kept/<face>`` adds the face."""

    def __init__(self, rounds: int) -> None:
        self.rounds, self.turn = rounds, TallyTurn()

    def first_state(self) -> int:
        return 0

    def state_key(self, played: int) -> str:
        return f"played {played}"

    def state_of(self, key: str) -> int:
        return int(key.split()[1])

    def state_label(self, played: int) -> str:
        return f"{played} of {self.rounds} turns played"

    def state_clock(self, played: int) -> int:
        return played

    def state_payoff(self, played: int) -> float | None:
        return 0.0 if played == self.rounds else None

    def through(self, played: int, end: str) -> Move:
        return Move(played + 1, end, reward=float(end.split("/")[1]))


def _game(name: str, make: object, **declared: object) -> types.SimpleNamespace:
    """Return a game module's declaration as an object: ``name``, the texts, and ``rules`` from ``make``."""
    return types.SimpleNamespace(name=name, title=name.title(), summary=f"{name}: a test game of a new shape",
                                 version=1, rules=make, **declared)


def games() -> list[types.SimpleNamespace]:
    """Return the five games' declarations."""
    return [
        _game("lowball", lambda params: LowballRules(params["rounds"]), objective="min", outcome="expected total",
              params=(Param("rounds", 2, int, "rounds", lambda rounds: 1 <= rounds <= 4, "1..4"),),
              small_params={"rounds": 2}),
        _game("slide", lambda params: SlideRules(params["goal"]), objective="max", players=2, loops=True,
              outcome="probability that the player to move wins",
              params=(Param("goal", 2, int, "the score that wins", lambda goal: 1 <= goal <= 6, "1..6"),),
              small_params={"goal": 2}),
        _game("yachtlet", lambda params: YachtletRules(), objective="max", outcome="expected score", params=(),
              small_params={}),
        _game("chase", lambda params: ChaseRules(params["cost"]), objective="min", loops=True, outcome="expected cost",
              params=(Param("cost", 6, int, "the cost of settling", lambda cost: 0 <= cost <= 9, "0..9"),),
              small_params={"cost": 6}),
        _game("tally", lambda params: TurnsInFull(Tally(params["rounds"])), objective="max", repeating=True,
              outcome="expected total kept",
              params=(Param("rounds", 3, int, "turns played", lambda rounds: 1 <= rounds <= 9, "1..9"),),
              small_params={"rounds": 3}),
    ]


@contextmanager
def registered() -> Iterator[dict[str, GameSpec]]:
    """Register the five games for the time of a test (name -> spec); take them out again after."""
    specs = {game.name: register(game, origin="tests/shapes.py") for game in games()}
    try:
        yield specs
    finally:
        for name in specs:
            unregister(name)
