"""A game paired with a target: its positions paired with the points still needed, so that reaching the target is
what its terminals pay.

A target asks for the policy that maximises the chance that the outcome reaches T (at least T in a game that
maximises, at most T in one that minimises). Where a game's terminals pay its whole outcome, the store solves that
on the game's own graph (a goal on its terminals). Where points are paid on the way (on moves, as Yacht-like
games pay a box's points, or over turns stored once, as School and Yahtzee do), the chance depends on the points
already scored, which no position of the game knows. Pairing every position with what is still needed does:

* a position is ``(position, left)``, ``left`` being T minus the points scored so far; a move paying points
  lowers ``left`` and pays nothing itself;
* a terminal pays 1 where its payoff reaches what is left (``payoff >= left``; ``payoff <= left`` for
  ``at-most``), else 0;
* once nothing is left to need (``left <= 0`` for ``at-least``), or too much is scored (``left < 0`` for
  ``at-most``), the game is settled there: an ending paying 1 (``reached``) or 0 (``over``);
* a game whose turn repeats may bound the points still to come from a turn state (its ``highest_still``, and
  ``lowest_still`` below); a state that needs more than the highest or no more than the lowest (``at-least``), or is
  allowed no less than the highest or less than the lowest (``at-most``), is settled too: ``short`` (0),
  ``reached`` (1), ``within`` (1) or ``over`` (0), with the same chance everywhere and fewer states to solve
  (``docs/targets.md``).

So the paired game's positions are at most T + 1 times the game's, and its optimum (``max``) is the policy best
for the target; its value at the root is that chance. Points are assumed to add up (no move or terminal pays
below 0); one that does is refused in one line. A game whose turn repeats (:class:`dicegraph.graphs.repeating.RepeatingTurn`)
is paired by its turn states, and the points its turn pays on the way are carried to the turn's ends (an end is
the game's end with the points the turn paid, ``'end:Chance +23'``), so the turn is still stored once.

The paired game is a game like any other (:func:`paired_game`), named after its target, ``yahtzee-at-least-200``:
every command, report and check takes it.

>>> from fractions import Fraction
>>> from dicegraph.graphs.exact import exact_value
>>> from dicegraph.graphs.rules import DiceRules, Move
>>> class TwoThrows(DiceRules):
...     "Throw a die twice; after each throw keep its face as points or take 3 points instead."
...     def starts(self): return [2]
...     def key(self, throws): return f"{throws} to throw"
...     def payoff(self, throws): return 0.0 if throws == 0 else None
...     def rolls(self, throws): return [(face, 1) for face in range(1, 7)]
...     def moves(self, throws, face): return [Move(throws - 1, "keep", face), Move(throws - 1, "three", 3.0)]
>>> exact_value(paired(TwoThrows(), ">=", 10), "max")  # a 6 then 4 or more, a 5 then 5 or more, or a 4 then a 6
Fraction(1, 6)
>>> exact_value(paired(TwoThrows(), ">=", 6), "max")  # take 3 or more each time: surely 6
Fraction(1, 1)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any, NamedTuple

from dicegraph.graphs.errors import BadParameter, InvalidGraph
from dicegraph.graphs.repeating import NoDecisions, RepeatingTurn, TurnsInFull
from dicegraph.graphs.rules import DiceRules, Ending, Move, Roll, Rules

TESTS = {">=": "at-least", "<=": "at-most"}  # a target's test -> the word naming it (``at-least:T``)
PAIRED_NAME = re.compile(r"(?P<base>[a-z0-9]+(?:-[a-z0-9]+)*?)-(?P<form>at-least|at-most)-(?P<minus>minus-)?"
                         r"(?P<threshold>[0-9]+)")  # a target below 0 is named minus-T: a name takes no '-5'


def points_text(points: float) -> str:
    """Return points as a key shows them: ``'23'``, or ``'2.5'`` where they are not whole."""
    return str(int(points)) if float(points).is_integer() else repr(float(points))


class Target(NamedTuple):
    """A target on the outcome: ``test`` (``'>='`` or ``'<='``), its ``threshold`` T, whether the game's points
    may fall (its rules' ``points_fall``) and the bound no outcome exceeds (its rules' ``highest_outcome``)."""

    test: str
    threshold: float
    falls: bool = False
    highest: float | None = None

    @classmethod
    def of(cls, rules: Rules, test: str, threshold: float) -> Target:
        """Return the target ``test threshold`` on the outcome of ``rules``, with what they declare of its range."""
        return cls(test, float(threshold), getattr(rules, "points_fall", False), getattr(rules, "highest_outcome", None))

    def settled(self, left: float) -> Ending | None:
        """Return the ending where nothing that follows can change whether the target is reached (points that
        only add up): reached once nothing is left to need (``>=``), over once more than T is scored (``<=``);
        else None, and always None where points may fall."""
        if self.falls:
            return None
        if self.test == ">=" and left <= 0:
            return REACHED
        if self.test == "<=" and left < 0:
            return OVER
        return None

    def decided(self, left: float, highest: float | None, lowest: float | None = None) -> Ending | None:
        """Return the ending where no play can change whether the target is reached, from ``lowest`` to ``highest``
        points being still to come (None: not known): short where more is still needed than can come and reached
        where no less can come than is still needed (``>=``); within where no more can come than is still allowed
        and over where less cannot (``<=``); else None, and always None where points may fall.

        >>> [getattr(Target(">=", 200).decided(left, 35, 5), "key", None) for left in (40, 35, 5)]
        ['short', None, 'reached']
        >>> Target("<=", 9).decided(5, 5).key, Target("<=", 9).decided(4, 30, 5).key, Target("<=", 9).decided(5, None)
        ('within', 'over', None)
        """
        if self.falls:
            return None
        if self.test == ">=":
            return SHORT if highest is not None and left > highest else (
                REACHED if lowest is not None and left <= lowest else None)
        return WITHIN if highest is not None and left >= highest else (
            OVER if lowest is not None and left < lowest else None)

    def pays(self, payoff: float, left: float) -> float:
        """Return what a terminal paying ``payoff`` pays the paired game with ``left`` still to go: 1 where the
        target is reached, else 0."""
        if payoff < 0 and not self.falls:
            raise InvalidGraph(f"a terminal pays {payoff:g}: {FALLING}")
        return float(payoff >= left if self.test == ">=" else payoff <= left)

    def scored(self, points: float) -> float:
        """Return the points a move pays; raise InvalidGraph for points below 0 where points may not fall."""
        if points < 0 and not self.falls:
            raise InvalidGraph(f"a move pays {points:g} points: {FALLING}")
        return points

    def after(self, left: float, points: float) -> float:
        """Return what is left once ``points`` are scored (:meth:`scored`)."""
        return left - self.scored(points)

    def chance(self, distribution: Mapping[float, float]) -> float:
        """Return the probability that the outcome reaches the target, from its distribution (outcome ->
        probability).

        >>> Target(">=", 3).chance({0.0: 0.5, 3.0: 0.25, 4.0: 0.25}), Target("<=", 3).chance({0.0: 0.5, 4.0: 0.5})
        (0.5, 0.5)
        """
        return sum(p for outcome, p in distribution.items()
                   if (outcome >= self.threshold if self.test == ">=" else outcome <= self.threshold))

    def out_of_range(self) -> str | None:
        """Return why the target says nothing, in one line: above the declared highest outcome, at least T is
        impossible and at most T certain; where the game's points cannot fall (every outcome is 0 or more), at
        least T for T <= 0 is certain and at most T for T < 0 impossible; None for any other.

        >>> Target(">=", 2000, highest=1575).out_of_range()
        'no outcome is above 1575, so at least 2000 cannot be reached: give a target of at most 1575'
        >>> Target("<=", 45, highest=45).out_of_range()
        'no outcome is above 45, so at most 45 is certain: give a target below 45'
        """
        if self.highest is not None:
            highest = points_text(self.highest)
            if self.test == ">=" and self.threshold > self.highest:
                return (f"no outcome is above {highest}, so at least {points_text(self.threshold)} cannot be reached: "
                        f"give a target of at most {highest}")
            if self.test == "<=" and self.threshold >= self.highest:
                return (f"no outcome is above {highest}, so at most {points_text(self.threshold)} is certain: "
                        f"give a target below {highest}")
        if self.falls:
            return None
        if self.test == ">=" and self.threshold <= 0:
            return (f"every outcome is at least 0 (its points never fall), so at least {points_text(self.threshold)} "
                    "is certain: give a target above 0")
        if self.test == "<=" and self.threshold < 0:
            return (f"no outcome is below 0 (its points never fall), so at most {points_text(self.threshold)} "
                    "cannot be reached: give a target of 0 or more")
        return None

    @property
    def cap(self) -> float:
        """Return the most points worth telling apart within a turn: any more settle the target, whatever follows
        (where points may fall, none is too many)."""
        return math.inf if self.falls else self.threshold + (self.test == "<=")


class Pairing(NamedTuple):
    """What a paired game stands for: its ``game`` (the declared game, a :class:`dicegraph.graphs.spec.GameSpec`)
    and its ``target``."""

    game: Any
    target: Target


FALLING = "rules whose points may fall below 0 declare points_fall = True (a target then follows every total)"
REACHED = Ending("reached", "the target reached", 1.0)
SHORT = Ending("short", "short of the target", 0.0)
WITHIN = Ending("within", "within the target", 1.0)
OVER = Ending("over", "over the target", 0.0)


def _left_text(target: Target, left: float) -> str:
    """Return how a key says what is left: ``'need 37'`` (``at-least``), ``'allow 3'`` (``at-most``)."""
    return f"{'need' if target.test == '>=' else 'allow'} {points_text(left)}"


def _paired_ending(target: Target, ending: Ending, left: float) -> Ending:
    """Return the paired game's ending for the game's ``ending`` with ``left`` to go: the target reached (1) or
    not (0)."""
    if target.pays(ending.payoff, left):
        won = REACHED if target.test == ">=" else WITHIN
        return won._replace(roll_label=ending.roll_label)
    return (SHORT if target.test == ">=" else OVER)._replace(roll_label=ending.roll_label)


class _Paired(DiceRules):
    """Rules whose position is a game's position (of rules ``inner``) paired with something more: the game's rolls,
    and its texts of them."""

    inner: Rules

    def rolls(self, position: Any) -> Any:
        """Return the game's rolls at the position."""
        return self.inner.rolls(position[0])

    def roll_text(self, roll: Roll) -> str:
        """Return the game's text of a roll."""
        return self.inner.roll_text(roll)

    def roll_label(self, texts: Sequence[str]) -> str:
        """Return the game's label of rolls."""
        return self.inner.roll_label(texts)


class PairedRules(_Paired):
    """The rules of a game (:class:`dicegraph.graphs.rules.Rules`) paired with a target: a position is
    ``(position, left)``; see the module's docstring."""

    def __init__(self, rules: Rules, target: Target):
        self.inner, self.target = rules, target
        self.agents = {name: self._lifted_agent(agent) for name, agent in getattr(rules, "agents", {}).items()}

    def _lifted_agent(self, agent: Callable[..., Move]) -> Callable[..., Move]:
        """Return the game's agent playing the paired game: the same move, whatever is still needed."""

        def choose(position: Any, roll: Roll, moves: Sequence[Move]) -> Move:
            inner = self.inner.moves(position[0], roll)
            return moves[inner.index(agent(position[0], roll, inner))]

        return choose

    def starts(self) -> list[Any]:
        """Return the game's starts with the whole target to go."""
        return [(start, self.target.threshold) for start in self.inner.starts()]

    def key(self, position: Any) -> str:
        """Return ``'<key> need <left>'`` (an ending: its key)."""
        if isinstance(position, Ending):
            return position.key
        at, left = position
        return f"{self.inner.key(at)} {_left_text(self.target, left)}"

    def label(self, position: Any) -> str:
        """Return the game's label and what is left."""
        if isinstance(position, Ending):
            return position.label
        at, left = position
        return f"{self.inner.label(at)}; {_left_text(self.target, left)}"

    def clock(self, position: Any) -> int:
        """Return the game's clock."""
        return 0 if isinstance(position, Ending) else self.inner.clock(position[0])

    def payoff(self, position: Any) -> float | None:
        """Return 1 where the game is over with the target reached, 0 where it is over short of it, else None."""
        if isinstance(position, Ending):
            return position.payoff
        at, left = position
        payoff = self.inner.payoff(at)
        return None if payoff is None else self.target.pays(payoff, left)

    def moves(self, position: Any, roll: Roll | None) -> list[Move]:
        """Return the game's moves, each lowering what is left by its points and paying nothing."""
        at, left = position
        return [self._lifted(move, left) for move in self.inner.moves(at, roll)]

    def _lifted(self, move: Move, left: float) -> Move:
        """Return the paired game's move for a game's ``move`` with ``left`` to go (to an ending where that settles
        the target)."""
        after = self.target.after(left, move.reward)
        return Move(self.target.settled(after) or (move.next, after), move.label, 0.0, move.passes)

    def ending(self, position: Any, roll: Roll) -> Ending | Move:
        """Return where a roll without moves leads: the paired ending, or the paired move taken."""
        at, left = position
        after = self.inner.ending(at, roll)
        if isinstance(after, Ending):
            return _paired_ending(self.target, after, left)
        return self._lifted(after, left)

    def decision_key(self, position: Any, roll: Roll) -> str:
        """Return the game's decision key and what is left."""
        at, left = position
        return f"{self.inner.decision_key(at, roll)} {_left_text(self.target, left)}"

    def decision_label(self, position: Any, roll: Roll) -> str:
        """Return the game's decision label and what is left."""
        at, left = position
        return f"{self.inner.decision_label(at, roll)}; {_left_text(self.target, left)}"


class TurnPoints(_Paired):
    """A turn's rules (of a :class:`dicegraph.graphs.repeating.RepeatingTurn`) carrying the points it pays to its
    ends: a position is ``(position, points paid this turn)`` (capped where more would not matter), an end's key
    is ``'<end key> +<points>'``, and no move pays anything."""

    def __init__(self, turn: Rules, target: Target):
        self.inner, self.target, self.cap = turn, target, target.cap

    def starts(self) -> list[Any]:
        """Return the turn's start, nothing paid yet (alone: an end the turn holds unreached, as a five-dice turn
        holds them all, is held by the points it is reached with)."""
        return [(self.inner.starts()[0], 0.0)]

    def key(self, position: Any) -> str:
        """Return the turn's key, with ``' +<points>'`` at an end or where points are paid."""
        at, paid = position
        key = self.inner.key(at)
        return f"{key} +{points_text(paid)}" if paid or self.inner.payoff(at) is not None else key

    def label(self, position: Any) -> str:
        """Return the turn's label, with the points paid."""
        at, paid = position
        return f"{self.inner.label(at)}; {points_text(paid)} points" if paid else self.inner.label(at)

    def clock(self, position: Any) -> int:
        """Return the turn's clock."""
        return self.inner.clock(position[0])

    def payoff(self, position: Any) -> float | None:
        """Return the turn's payoff (an end's, which is not used)."""
        return self.inner.payoff(position[0])

    def moves(self, position: Any, roll: Roll | None) -> list[Move]:
        """Return the turn's moves, their points carried in the position moved to."""
        at, paid = position
        return [self._carried(move, paid) for move in self.inner.moves(at, roll)]

    def _carried(self, move: Move, paid: float) -> Move:
        """Return the turn's ``move`` paying nothing, its points (:meth:`Target.scored`) added to those paid."""
        return Move((move.next, min(paid + self.target.scored(move.reward), self.cap)), move.label, 0.0, move.passes)

    def ending(self, position: Any, roll: Roll) -> Ending | Move:
        """Return the turn's ending, its key with the points paid."""
        at, paid = position
        after = self.inner.ending(at, roll)
        if isinstance(after, Ending):
            return after._replace(key=f"{after.key} +{points_text(paid)}")
        return self._carried(after, paid)

    def decision_key(self, position: Any, roll: Roll) -> str:
        """Return the turn's decision key, with the points paid."""
        at, paid = position
        key = self.inner.decision_key(at, roll)
        return f"{key} +{points_text(paid)}" if paid else key

    def decision_label(self, position: Any, roll: Roll) -> str:
        """Return the turn's decision label."""
        return self.inner.decision_label(position[0], roll)


def _end_of(end: str) -> tuple[str, float]:
    """Return a paired turn's end ``'<end key> +<points>'`` as the game's end key and the points."""
    key, _, paid = end.rpartition(" +")
    return key, float(paid)


class PairedTurn(RepeatingTurn):
    """A game whose turn repeats, paired with a target: a turn state is ``(state, left)``, and the turn carries
    the points it pays to its ends (:class:`TurnPoints`); see the module's docstring."""

    def __init__(self, game: RepeatingTurn, target: Target):
        self.game, self.target = game, target
        self.turn = TurnPoints(game.turn, target)
        self.stored_turn = None if game.stored_turn is None else TurnPoints(game.stored_turn, target)
        self.agents = {name: self._lifted_agent(agent) for name, agent in game.agents.items()}
        self.encoder = NoDecisions
        self._grouped: tuple[Sequence[str] | None, dict[str, list[tuple[str, float]]]] = (None, {})
        self._bounds: dict[Any, tuple[float | None, float | None]] = {}  # the game's bounds (_still) of each state asked

    def _lifted_agent(self, agent: Callable[..., Move]) -> Callable[..., Move]:
        """Return the game's turn agent playing the paired turn: the same move, whatever is still needed."""

        def choose(state: Any, position: Any, roll: Roll, moves: Sequence[Move]) -> Move:
            at = position[0]
            inner = self.game.turn.moves(at, roll)
            picked = agent(state[0], at, roll, inner)
            return moves[inner.index(picked)]

        return choose

    def first_state(self) -> Any:
        """Return the game's first state with the whole target to go."""
        return (self.game.first_state(), self.target.threshold)

    def state_key(self, state: Any) -> str:
        """Return ``'<state key> need <left>'``."""
        inner, left = state
        return f"{self.game.state_key(inner)} {_left_text(self.target, left)}"

    def state_of(self, key: str) -> Any:
        """Return the state a key names."""
        inner, _, left = key.rpartition(" need " if self.target.test == ">=" else " allow ")
        return (self.game.state_of(inner), float(left))

    def state_label(self, state: Any) -> str:
        """Return the game's state label and what is left."""
        inner, left = state
        return f"{self.game.state_label(inner)}; {_left_text(self.target, left)}"

    def state_clock(self, state: Any) -> int:
        """Return the game's clock at the state."""
        return self.game.state_clock(state[0])

    def state_payoff(self, state: Any) -> float | None:
        """Return 1 or 0 where the game is over at the state (the target reached or not), else None."""
        inner, left = state
        payoff = self.game.state_payoff(inner)
        return None if payoff is None else self.target.pays(payoff, left)

    def end_label(self, end: str) -> str:
        """Return the game's label of the end, with the points the turn paid."""
        key, paid = _end_of(end)
        return f"{self.game.end_label(key)} +{points_text(paid)}"

    def through(self, state: Any, end: str) -> Move | Ending | None:
        """Return where the state goes through ``end``: the game's way, what is left lowered by the points the
        turn paid and the move's (an ending where that settles the target)."""
        key, paid = _end_of(end)
        return self._paired(state, self.game.through(state[0], key), paid)

    def ways_through(self, state: Any, ends: Sequence[str]) -> list[tuple[str, Move | Ending]]:
        """Return each end the state keeps open with where it leads, from the game's ways through its ends."""
        grouped = self._ends_grouped(ends)
        found = []
        for key, after in self.game.ways_through(state[0], list(grouped)):
            found += [(end, self._paired(state, after, paid)) for end, paid in grouped[key]]
        return found

    def _ends_grouped(self, ends: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        """Return the paired ends by the game's end they stand for (the last ``ends`` asked kept)."""
        asked, grouped = self._grouped
        if asked is not ends:
            grouped = {}
            for end in ends:
                key, paid = _end_of(end)
                grouped.setdefault(key, []).append((end, paid))
            self._grouped = (ends, grouped)
        return grouped

    def _paired(self, state: Any, after: Move | Ending | None, paid: float) -> Move | Ending | None:
        """Return the paired way through an end of the game's way ``after``, the turn having paid ``paid``."""
        if after is None:
            return None
        left = self.target.after(state[1], paid)
        if isinstance(after, Ending):
            return self.target.settled(left) or _paired_ending(self.target, after, left)
        left = self.target.after(left, after.reward)
        return (self.target.settled(left) or self.target.decided(left, *self._still(after.next))
                or Move((after.next, left), after.label, 0.0, after.passes))

    def _still(self, state: Any) -> tuple[float | None, float | None]:
        """Return the game's ``highest_still`` and ``lowest_still`` of its state ``state``, worked out once a state
        (asked at every move into it)."""
        try:
            return self._bounds[state]
        except KeyError:
            bounds = self._bounds[state] = (self.game.highest_still(state), self.game.lowest_still(state))
            return bounds


def paired(rules: Rules, test: str, threshold: float) -> Rules:
    """Return ``rules`` paired with the target ``test threshold`` (``'>='`` or ``'<='``): ordinary rules
    (:class:`PairedRules`), or, for a game whose turn repeats (a :class:`dicegraph.graphs.repeating.TurnsInFull`),
    the same turn paired by its states (:class:`PairedTurn`) copied into each state."""
    target = Target.of(rules, test, threshold)
    refused = target.out_of_range()
    if refused is not None:
        raise InvalidGraph(refused)
    if isinstance(rules, TurnsInFull):
        return TurnsInFull(PairedTurn(rules.game, target))
    return PairedRules(rules, target)


def for_two(name: str) -> str:
    """Return why the game ``name``, a game for two, takes no target, in one line."""
    return f"{name} is a game for two: its outcome is who wins, so it takes no target"


def paired_name(name: str, test: str, threshold: float) -> str:
    """Return the name of the game ``name`` paired with a target, e.g. ``'yahtzee-at-least-200'``, a target below 0
    as ``minus-T`` (names take no ``'-5'``).

    >>> paired_name("school", ">=", -5), paired_name("shut-the-box", "<=", 3)
    ('school-at-least-minus-5', 'shut-the-box-at-most-3')
    """
    return f"{name}-{TESTS[test]}-{'minus-' if threshold < 0 else ''}{points_text(abs(threshold))}"


def paired_refusal(game: Any, test: str) -> str | None:
    """Return why ``game`` (a declared game) cannot be paired with a target of ``test``, in one line; None where it
    can: a game for one, written at the rules level, whose objective the test goes with (at-least to maximise)."""
    form = TESTS[test]
    if game.players != 1:
        return for_two(game.name)
    if game.rules is None:
        return f"{game.name} gives no rules (only rows), so it cannot be paired with a target"
    if (test == ">=") != (game.objective == "max"):
        return (f"{game.name} {game.objective}imises its outcome: its target is "
                f"{'at-least' if game.objective == 'max' else 'at-most'}, not {form}")
    return None


def paired_game(game: Any, test: str, threshold: float) -> SimpleNamespace:
    """Return the declaration of ``game`` (a declared game) paired with the target ``test threshold``: a game for
    one that maximises the chance of reaching it, named by :func:`paired_name`, with the game's parameters and its
    agents (playing as in the game). Raise ValueError, in one line, where :func:`paired_refusal` refuses."""
    refused = paired_refusal(game, test)
    if refused is not None:
        raise ValueError(refused)
    make_rules = game.rules

    def check_params(values: Mapping[str, Any]) -> None:  # the game's own check, then the target's range
        if game.check_params is not None:
            game.check_params(values)
        refused = Target.of(make_rules(values), test, threshold).out_of_range()
        if refused is not None:
            raise BadParameter(f"{paired_name(game.name, test, threshold)}: {refused}")

    form, shown = TESTS[test], points_text(threshold)
    return SimpleNamespace(
        name=paired_name(game.name, test, threshold), version=game.version, objective="max",
        title=f"{game.title}, {form.replace('-', ' ')} {shown}",
        summary=f"{game.title} played for the best chance that its outcome is {form.replace('-', ' ')} {shown}: "
                "its positions paired with the points still needed.",
        outcome=f"probability that the outcome is {form.replace('-', ' ')} {shown}",
        params=game.params, small_params=game.small_params, check_params=check_params,
        loops=game.loops, repeating=game.repeating,
        rules=lambda params: paired(make_rules(params), test, threshold))


def derived_name(name: str) -> tuple[str, str, float] | None:
    """Return the game, test and threshold a paired game's name stands for (``'yahtzee-at-least-200'``:
    ``('yahtzee', '>=', 200.0)``), or None for a name of no paired game.

    >>> derived_name("yahtzee-at-least-200"), derived_name("shut-the-box-at-most-3"), derived_name("school")
    (('yahtzee', '>=', 200.0), ('shut-the-box', '<=', 3.0), None)
    >>> derived_name("school-at-least-minus-5")
    ('school', '>=', -5.0)
    """
    matched = PAIRED_NAME.fullmatch(name)
    if matched is None:
        return None
    test = next(test for test, form in TESTS.items() if form == matched["form"])
    return matched["base"], test, float(matched["threshold"]) * (-1 if matched["minus"] else 1)

