"""Games played from the rules (:mod:`dicegraph.graphs.rules`), one at a time: the Monte Carlo check of any game.

Slower than a game's own numpy simulator, but it needs nothing but the rules,
so every game written at the rules level gets Monte Carlo with it.

>>> from dicegraph.graphs.rules import DiceRules, Move
>>> class Die(DiceRules):
...     def starts(self): return ["start"]
...     def key(self, position): return position
...     def label(self, position): return position
...     def payoff(self, position): return None if position == "start" else 1.0
...     def rolls(self, position): return [(face, 1) for face in range(1, 7)]
...     def moves(self, position, face): return [Move("end", "take", reward=face)]
>>> play_one(Die(), {"start/3": "take"}, lambda: 0.4)
4.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dicegraph.graphs.montecarlo import stored_move
from dicegraph.graphs.rules import Ending, Move, Rules

# an agent's name, a stored policy's choices (decision key -> move label), or an agent itself (position, roll, moves)
Policy = str | Mapping[str, str] | Callable[..., Move]
ANSWERS_KEPT = 200_000  # answers of the rules a run of games keeps (a position's payoff, rolls or key; its moves)


def play_one(rules: Rules, policy: Policy | tuple[Policy, Policy], uniform: Callable[[], float]) -> float:
    """Return what one game played from the rules gives the first player (rewards included): in a game for two,
    the first player's rewards less the second's, plus the first player's share of the ending.

    ``policy`` is an agent's name, a stored policy's choices (as :func:`dicegraph.graphs.montecarlo.stored_move`
    reads them) or an agent function, played in both seats, or a pair of them (the first player's, the second's);
    ``uniform()`` draws a number in [0, 1) for each roll.
    """
    seats = policy if isinstance(policy, tuple) else (policy, policy)
    position, total, mover = rules.starts()[0], 0.0, 0
    while True:
        payoff = rules.payoff(position)
        if payoff is not None:
            return total + _share(rules, payoff, mover)
        rolls = rules.rolls(position)
        roll = None
        if rolls is not None:
            outcomes = list(rolls)
            draw = uniform() * sum(weight for _, weight in outcomes)
            for roll, weight in outcomes:
                draw -= weight
                if draw < 0:
                    break
        moves = rules.moves(position, roll)
        if moves:
            chosen = seats[mover]
            if isinstance(chosen, str):
                move = rules.agents[chosen](position, roll, moves)
            elif callable(chosen):
                move = chosen(position, roll, moves)
            else:
                key = rules.key(position) if roll is None else rules.decision_key(position, roll)
                move = stored_move(chosen, key, moves, lambda move: move.label)
        else:
            after = rules.ending(position, roll)
            if isinstance(after, Ending):
                return total + _share(rules, after.payoff, mover)
            move = after
        total += move.reward if mover == 0 else -move.reward
        mover = 1 - mover if move.passes else mover
        position = move.next


def _share(rules: Rules, payoff: float, mover: int) -> float:
    """Return the first player's share of an ending that pays ``payoff`` to the player to move (``mover``)."""
    return payoff if mover == 0 else rules.constant_sum - payoff


class Remembered:
    """The rules, answering each position's payoff, rolls, key and moves (and decision key) once a run of games:
    the same positions come back game after game (Can't Stop's board, 20,000 games: 68 s asking the rules every
    time). A position or roll that cannot be a dictionary's key is asked of the rules each time, and so is
    everything once :data:`ANSWERS_KEPT` answers are kept; everything else the rules have is theirs.

    >>> from dicegraph.graphs.rules import DiceRules
    >>> class Counted(DiceRules):
    ...     asked = 0
    ...     def starts(self): return [0]
    ...     def key(self, position): return str(position)
    ...     def payoff(self, position): return None
    ...     def rolls(self, position):
    ...         Counted.asked += 1
    ...         return iter([(1, 1), (2, 1)])
    >>> remembered = Remembered(Counted())
    >>> remembered.rolls(0), remembered.rolls(0), Counted.asked
    ([(1, 1), (2, 1)], [(1, 1), (2, 1)], 1)
    """

    def __init__(self, rules: Rules):
        self.rules = rules
        self._answers: dict[tuple[str, Any], Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rules, name)

    def _answer(self, asked: str, about: Any, work: Callable[[], Any]) -> Any:
        """Return ``work()``, the rules' answer to ``asked`` about ``about``, kept where it can be."""
        try:
            return self._answers[asked, about]
        except KeyError:
            answer = work()
            if len(self._answers) < ANSWERS_KEPT:
                self._answers[asked, about] = answer
            return answer
        except TypeError:  # a position or roll that cannot be a key
            return work()

    def payoff(self, position: Any) -> float | None:
        """Return the rules' payoff at ``position``."""
        return self._answer("payoff", position, lambda: self.rules.payoff(position))

    def rolls(self, position: Any) -> list[tuple[Any, int]] | None:
        """Return the rules' rolls at ``position``, as a list."""
        return self._answer("rolls", position, lambda: _listed(self.rules.rolls(position)))

    def key(self, position: Any) -> str:
        """Return the rules' key of ``position``."""
        return self._answer("key", position, lambda: self.rules.key(position))

    def moves(self, position: Any, roll: Any) -> Any:
        """Return the rules' moves at ``position`` after ``roll``."""
        return self._answer("moves", (position, roll), lambda: self.rules.moves(position, roll))

    def decision_key(self, position: Any, roll: Any) -> str:
        """Return the rules' key of the decision at ``position`` after ``roll``."""
        return self._answer("decision", (position, roll), lambda: self.rules.decision_key(position, roll))


def _listed(rolls: Any) -> list[tuple[Any, int]] | None:
    """Return ``rolls`` as a list (None stays None)."""
    return None if rolls is None else list(rolls)


def rules_simulator(make_rules: Callable[[Mapping[str, Any]], Rules]) -> Callable[..., Callable[[int, Any], Any]]:
    """Return a game's ``simulator(params, policy)`` that plays its rules (:func:`play_one`), one game at a time,
    each position's answers worked out once (:class:`Remembered`)."""

    def simulator(params: Mapping[str, Any], policy: Policy | tuple[Policy, Policy]) -> Callable[[int, Any], Any]:
        """Return ``play(games, rng)``: what ``games`` games played from the rules give the first player."""
        rules: Any = Remembered(make_rules(params))

        def play(games: int, rng: Any) -> list[float]:
            draws: Any = iter(())

            def uniform() -> float:
                nonlocal draws
                try:
                    return next(draws)
                except StopIteration:
                    draws = iter(rng.random(4096).tolist())
                    return next(draws)

            return [play_one(rules, policy, uniform) for _ in range(games)]

        return play

    return simulator

