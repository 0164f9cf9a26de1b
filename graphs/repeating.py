"""A game whose turn repeats, at the rules level: one turn's rules, and the turn states that value its ends.

School, Yahtzee and 5000 as a race play the same turn again and again; only
what the turn's ends are worth changes from one turn state to the next (the
upper total, the Yahtzee box, the score pair). Such a game gives
:class:`RepeatingTurn` rules:

* ``turn``: the turn's :class:`dicegraph.graphs.rules.Rules`; its *ends* are its
  terminal positions (their payoff is not used) and its endings, named by key;
  and, where the store keeps a smaller graph of the same turn (School's and
  Yahtzee's keep chosen one die at a time), ``stored_turn``: that graph's
  rules, with the same ends and values;
* the turn states: ``first_state()``, ``state_key`` (and back, ``state_of``), ``state_label``;
* ``through(state, end)``: what a state does when its turn ends at the end of
  key ``end``: a :class:`dicegraph.graphs.rules.Move` to the next state (its reward,
  and whether it hands the turn over), an :class:`dicegraph.graphs.rules.Ending` (the
  game is over), or None where the state closes that end (School's used
  combinations): the turn's moves into it are not offered there;
* its agents, ``agent(state, position, roll, moves) -> Move`` over the
  turn's moves the state offers (they may look at the state: a race's
  agents bank a win);
* and, for the store, what it keeps besides the optimum: ``rankings``,
  policies that play each turn best for ends ranked by profits of their own
  (School's Bob), ``encoder``, how a policy's choices pack into each state's
  decision bytes (none by default), ``state_count()`` (progress), and
  ``turn_progress`` with ``state_horizon`` where a solve may leave out what no
  play reaches (:class:`dicegraph.graphs.protocol.TurnStructure`).

:class:`TurnsInFull` turns that into ordinary rules, the turn copied into
each state (a position is a state and a position of its turn), so every game
whose turn repeats gets its exact recursion (:mod:`dicegraph.graphs.exact`) and its
Monte Carlo (:mod:`dicegraph.graphs.playout`) from its rules, like any other game. The
store keeps the turn once (:func:`turn_structure` derives how, from these
rules): that is how such a game is built; the copied form is what it means,
for small parameters.

>>> from dicegraph.graphs.rules import DiceRules, Ending, Move
>>> class Throw(DiceRules):
...     "One turn: throw a coin; the end is 'heads' or 'tails'."
...     def starts(self): return ["throw"]
...     def key(self, position): return position
...     def label(self, position): return position
...     def payoff(self, position): return None
...     def rolls(self, position): return [("heads", 1), ("tails", 1)]
...     def moves(self, position, coin): return []
...     def ending(self, position, coin): return Ending(coin, coin, 0.0)
>>> class FirstHeads(RepeatingTurn):
...     "Two players throw in turn; the first head wins."
...     turn = Throw()
...     def first_state(self): return "playing"
...     def state_key(self, state): return state
...     def state_label(self, state): return state
...     def state_of(self, key): return key
...     def through(self, state, end):
...         return Ending("won", "won", 1.0) if end == "heads" else Move("playing", "tails", passes=True)
>>> from dicegraph.graphs.exact import exact_value
>>> exact_value(TurnsInFull(FirstHeads()), "max", loops=True)
Fraction(2, 3)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from dicegraph.graphs.errors import InvalidGraph
from dicegraph.graphs.protocol import OPTIMAL, TIE, DecisionEncoder, TurnPolicy, TurnStructure
from dicegraph.graphs.rules import DiceRules, Ending, Move, Position, Roll, Rules

State = Hashable
TurnAgent = Callable[[State, Position, Roll, Sequence[Move]], Move]
SEPARATOR = " | "  # between a state's key and its turn position's key, in the copied turns
KEPT = 65_536  # positions whose key, and (state, end) pairs whose way on, TurnsInFull keeps (each at most)


class NoDecisions:
    """A :class:`dicegraph.graphs.protocol.DecisionEncoder` that keeps no decision bytes (a game's moves are then
    worked out from the stored values when they are asked for)."""

    def __init__(self, nodes: Sequence[tuple[int, str]], moves: Sequence[tuple[int, int, int, str]]):
        pass

    def pack(self, states: Any, moves: Any) -> dict[int, bytes]:
        """Return no bytes for any state."""
        return {}


class RepeatingTurn:
    """The rules of a game whose turn repeats (see the module's docstring); ``constant_sum`` as in
    :class:`dicegraph.graphs.rules.DiceRules`."""

    turn: Rules
    stored_turn: Rules | None = None  # the same turn as the store keeps it, where that is a smaller graph
    agents: Mapping[str, TurnAgent] = {}
    constant_sum: float = 1.0
    points_fall: bool = False  # whether an end or a state's move may pay points below 0 (as in Rules)
    rankings: tuple[TurnPolicy, ...] = ()  # policies besides the optimum: the turn played best for ends ranked otherwise
    encoder: Callable[..., DecisionEncoder] = NoDecisions  # how a turn policy's chosen moves pack into a state's bytes
    turn_progress: Callable[[str], int] | None = None  # a turn node's key -> its progress, with state_horizon
    state_horizon: Callable[[str], int] | None = None  # a state's key -> the progress from which its turn is not played

    def state_count(self) -> int | None:
        """Return how many turn states there are, for progress (None, the default: not known before the build)."""
        return None

    def first_state(self) -> State:
        """Return the turn state the game starts in."""
        raise NotImplementedError

    def state_key(self, state: State) -> str:
        """Return the state's key, unique among the states."""
        raise NotImplementedError

    def state_label(self, state: State) -> str:
        """Return the state's readable label."""
        raise NotImplementedError

    def state_of(self, key: str) -> State:
        """Return the state of a key :meth:`state_key` gave (how the store's keys name states)."""
        raise NotImplementedError

    def through(self, state: State, end: str) -> Move | Ending | None:
        """Return what ``state`` does when its turn ends at the end of key ``end`` (None: that end is closed)."""
        raise NotImplementedError

    def state_payoff(self, state: State) -> float | None:
        """Return what the game pays when it is over at ``state`` (a turn state no turn is played from; the move
        into it carries its reward), else None (the default: the game ends at the :class:`dicegraph.graphs.rules.Ending`
        that :meth:`through` gives)."""
        return None

    def ways_through(self, state: State, ends: Sequence[str]) -> list[tuple[str, Move | Ending]]:
        """Return each of ``ends`` the state keeps open with where it leads (:meth:`through`); a game whose
        states know their moves may give them at once."""
        found = []
        for end in ends:
            after = self.through(state, end)
            if after is not None:
                found.append((end, after))
        return found

    def highest_still(self, state: State) -> float | None:
        """Return a bound on the points still to come from ``state`` on (its turns' ends and moves, and the payoff
        at the end), or None (the default: not declared). A game paired with a target settles a state where no
        play can change whether the target is reached (:mod:`dicegraph.graphs.paired`)."""
        return None

    def lowest_still(self, state: State) -> float | None:
        """Return a bound that the points still to come from ``state`` on never fall below, whatever the play and
        the dice, or None (the default: not declared). A game paired with a target settles a state where every
        play reaches the target, or every play passes it (:mod:`dicegraph.graphs.paired`)."""
        return None

    @property
    def highest_outcome(self) -> float | None:
        """Return a bound no outcome exceeds (as in Rules): :meth:`highest_still` from the first state."""
        return self.highest_still(self.first_state())

    def state_clock(self, state: State) -> int:
        """Return the game's clock at a turn state (0 by default), never decreasing from a state to the next: the
        states' layers follow it, and where they loop, the finer it is the smaller each loop (the score sum)."""
        return 0

    def end_label(self, end: str) -> str:
        """Return the label of a state's move through the end ``end``, as the stored turn's ends name it (the
        store joins a state's moves with the turn's ends by it): the end's key unless a game says otherwise."""
        return end


class TurnStates(DiceRules):
    """Ordinary rules over the turn states alone, as the store keeps them beside the turn stored once: a state
    is a decision whose moves go through the turn's ``ends`` (labelled :meth:`RepeatingTurn.end_label`, the
    turn between them left out); an :class:`dicegraph.graphs.rules.Ending` moved to is a terminal."""

    def __init__(self, game: RepeatingTurn, ends: Sequence[str]):
        self.game, self.ends, self.state_key = game, tuple(ends), game.state_key
        self.labels = {end: game.end_label(end) for end in ends}
        self.constant_sum = game.constant_sum

    def starts(self) -> list[Any]:
        """Return the first state."""
        return [self.game.first_state()]

    def key(self, position: Any) -> str:
        """Return the state's key (an ending's: its key)."""
        return position.key if type(position) is Ending else self.state_key(position)

    def label(self, position: Any) -> str:
        """Return the state's label (an ending's: its label)."""
        return position.label if isinstance(position, Ending) else self.game.state_label(position)

    def clock(self, position: Any) -> int:
        """Return the state's clock."""
        return self.game.state_clock(position)

    def payoff(self, position: Any) -> float | None:
        """Return an ending's payoff, or a state's where the game is over there; None at a state played on."""
        return position.payoff if isinstance(position, Ending) else self.game.state_payoff(position)

    def rolls(self, position: Any) -> None:
        """Return None: a state chooses (the turn it plays is stored apart)."""
        return None

    def ending(self, position: Any, roll: Roll) -> Ending:
        """Never asked: nothing rolls among the states."""
        raise NotImplementedError("turn states do not roll")

    def moves(self, position: Any, roll: Roll | None) -> list[Move]:
        """Return the state's way through each end it keeps open."""
        labels, found = self.labels, []
        for end, after in self.game.ways_through(position, self.ends):
            label = labels[end]
            if type(after) is Ending:
                found.append(Move(after, label))
            else:
                found.append(after if after.label == label else Move(after.next, label, after.reward, after.passes))
        return found


class _Kept(dict):  # type: ignore[type-arg]
    """``work``'s answers by what was asked, each worked out once (on the first lookup that misses), for the first
    :data:`KEPT` asked; a dictionary, so that a lookup that finds its answer stays in C (a recursion makes millions).

    >>> halves = _Kept(lambda n: n / 2)
    >>> halves[3], halves[3], len(halves)
    (1.5, 1.5, 1)
    """

    def __init__(self, work: Callable[[Any], Any]):
        super().__init__()
        self.work = work

    def __missing__(self, asked: Any) -> Any:
        answer = self.work(asked)
        if len(self) < KEPT:
            self[asked] = answer
        return answer


class TurnsInFull(DiceRules):
    """Ordinary rules for a :class:`RepeatingTurn` game: the turn copied into each state.

    A position is ``(state, turn position)``, keyed ``'<state key> | <turn key>'``; a move into one of the
    turn's ends, or a roll that ends it, goes on where the state goes through that end (a move that ends the
    game leads to the :class:`dicegraph.graphs.rules.Ending` itself, a position whose payoff is the ending's).
    """

    def __init__(self, game: RepeatingTurn):
        self.game = game
        self.turn = game.turn
        self.root = game.turn.starts()[0]
        self.constant_sum = game.constant_sum
        self.agents = {name: self.plays(agent) for name, agent in game.agents.items()}
        self._turn_moves: dict[tuple[str, Roll | None], list[tuple[Move, str | None]]] = {}
        # a position's key and a state's way through an end (_through), each worked out once for the first KEPT
        # asked (a recursion asks millions of times; games played from the rules visit many states, once each)
        self._keys, self._ways = _Kept(self._joined_key), _Kept(self._way)

    @property
    def points_fall(self) -> bool:  # type: ignore[override]
        """Return the game's ``points_fall``."""
        return self.game.points_fall

    @property
    def highest_outcome(self) -> float | None:  # type: ignore[override]
        """Return the game's ``highest_outcome``."""
        return self.game.highest_outcome

    def plays(self, agent: TurnAgent) -> Callable[..., Move]:
        """Return the copied game's agent for a turn agent (one of the game's, or a stored policy played from its
        decisions): the same choice among the same moves."""

        def choose(position: Any, roll: Roll, moves: Sequence[Move]) -> Move:
            state, at = position
            lifted = self._lifted(state, at, roll)
            pick = agent(state, at, roll, [turn_move for turn_move, _ in lifted])
            return next(move for turn_move, move in lifted if turn_move == pick)

        return choose

    def starts(self) -> list[Any]:
        """Return the first state at the turn's start."""
        return [(self.game.first_state(), self.root)]

    def key(self, position: Any) -> str:
        """Return ``'<state key> | <turn key>'`` (an ending moved to: its key)."""
        if isinstance(position, Ending):
            return position.key
        try:
            return self._keys[position]
        except TypeError:  # a state or turn position that cannot be a dictionary's key: worked out each time
            return self._joined_key(position)

    def _joined_key(self, position: Any) -> str:
        """Return the key of ``(state, turn position)``: the state's, :data:`SEPARATOR`, the turn position's."""
        state, at = position
        return self.game.state_key(state) + SEPARATOR + self.turn.key(at)

    def label(self, position: Any) -> str:
        """Return the state's label and the turn position's (an ending moved to: its label)."""
        if isinstance(position, Ending):
            return position.label
        state, at = position
        return f"{self.game.state_label(state)}; {self.turn.label(at)}"

    def clock(self, position: Any) -> int:
        """Return the clock of the position's state."""
        return self.game.state_clock(position[0])

    def payoff(self, position: Any) -> float | None:
        """Return the payoff of an ending moved to, or of a state where the game is over; None elsewhere (the
        turn's ends lead on)."""
        return position.payoff if isinstance(position, Ending) else self.game.state_payoff(position[0])

    def rolls(self, position: Any) -> Any:
        """Return the turn's rolls at the turn position."""
        return self.turn.rolls(position[1])

    def moves(self, position: Any, roll: Roll | None) -> list[Move]:
        """Return the turn's moves, a move into an end going on where the state goes through it (as a move to
        the next state's turn, or to the game's end); a move into an end the state closes is not offered."""
        state, at = position
        return [move for _, move in self._lifted(state, at, roll)]

    def _turn_moves_at(self, at: Position, roll: Roll | None) -> list[tuple[Move, str | None]]:
        """Return the turn's moves at ``at`` after ``roll``, each with the key of the end it moves into (None
        inside the turn): the same in every state, so worked out once a turn position and roll."""
        try:
            asked = (self.turn.key(at), roll)
            found = self._turn_moves.get(asked)
        except TypeError:  # a roll that cannot be a key: worked out each time
            asked, found = None, None
        if found is None:
            found = [(move, None if self.turn.payoff(move.next) is None else self.turn.key(move.next))
                     for move in self.turn.moves(at, roll)]
            if asked is not None:
                self._turn_moves[asked] = found
        return found

    def _lifted(self, state: State, at: Position, roll: Roll | None) -> list[tuple[Move, Move]]:
        """Return each turn move the state offers at ``at`` after ``roll``, with the move it is in the copied game."""
        found = []
        for move, end in self._turn_moves_at(at, roll):
            if end is None:
                found.append((move, Move((state, move.next), move.label, move.reward)))
                continue
            after = self._through(state, end)
            if after is not None:  # else the state closes this end
                leads_to, reward, passes = after
                found.append((move, Move(leads_to, move.label, move.reward + reward, passes)))
        return found

    def _through(self, state: State, end: str) -> tuple[Any, float, bool] | None:
        """Return where a move into the turn's end ``end`` goes on from ``state`` (the next state's turn start,
        or the game's :class:`dicegraph.graphs.rules.Ending` itself), with the points and the hand-over the state
        adds; None where the state closes that end. Worked out once a state and end, for the first
        :data:`KEPT` of them (a recursion asks for each of the turn's moves into an end)."""
        try:
            return self._ways[state, end]
        except TypeError:  # a state that cannot be a dictionary's key: worked out each time
            return self._way((state, end))

    def _way(self, asked: tuple[State, str]) -> tuple[Any, float, bool] | None:
        """Return :meth:`_through` of ``(state, end)``, from the game's :meth:`RepeatingTurn.through`."""
        state, end = asked
        after = self.game.through(state, end)
        if after is None:
            return None
        if isinstance(after, Ending):  # the game is over: the ending itself is the position moved to
            return after, 0.0, False
        return (after.next, self.root), after.reward, after.passes

    def ending(self, position: Any, roll: Roll) -> Ending | Move:
        """Return where a roll that ends the turn leads: the state's way through that end."""
        state, at = position
        end = self.turn.ending(at, roll)
        key = end.key if isinstance(end, Ending) else self.turn.key(end.next)
        after = self.game.through(state, key)
        if after is None:
            raise ValueError(f"state {self.game.state_key(state)!r} closes the end {key!r} that a roll leads to")
        if isinstance(after, Ending):
            return after
        label = end.label if isinstance(end, Move) else end.roll_label or after.label
        return Move((after.next, self.root), label, after.reward, after.passes)


def turn_structure(game: RepeatingTurn, first_guess: Callable[[str], Any] | None = None) -> TurnStructure:
    """Return how the store keeps ``game``'s turn once and joins it with the states, from its rules: the root is
    the (stored) turn's start, a state's move through an end is labelled :meth:`RepeatingTurn.end_label`, the
    policies are the optimum and the game's ``rankings``; ``first_guess`` is the game's hook on its parameters.
    Raises InvalidGraph when the rules give ``turn_progress`` without ``state_horizon`` or the other way round.

    >>> from dicegraph.graphs.rules import DiceRules, Ending, Move
    >>> class Throw(DiceRules):
    ...     def starts(self): return ["throw"]
    ...     def key(self, position): return position
    >>> class Coins(RepeatingTurn):
    ...     turn = Throw()
    >>> structure = turn_structure(Coins())
    >>> structure.root, [policy.name for policy in structure.policies], structure.end_label("heads")
    ('throw', ['optimal'], 'heads')
    """
    turn = game.stored_turn or game.turn
    if (game.turn_progress is None) != (game.state_horizon is None):
        raise InvalidGraph(f"{type(game).__name__} gives turn_progress and state_horizon together, or neither")
    return TurnStructure(root=turn.key(turn.starts()[0]), end_label=game.end_label,
                         policies=(TurnPolicy(OPTIMAL), *game.rankings), encoder=game.encoder,
                         count_states=game.state_count, progress=game.turn_progress, horizon=game.state_horizon,
                         first_guess=first_guess)


def valued_agent(rules: TurnsInFull, values: Mapping[str, float], objective: str,
                 opponent: Mapping[str, float] | None = None) -> Callable[..., Move]:
    """Return an agent of the copied game (``rules``) that plays a stored policy of a repeating game from its
    states' values (turn state key -> value, as the store keeps them): at each decision of a turn, the first move
    within :data:`dicegraph.graphs.protocol.TIE` of the best for ``objective`` (``max`` or ``min``), a move worth
    its reward plus what it leads to, the turn played out (in floats, once a turn position) to the values of the
    states its ends lead to. In a game for two, a move that hands the turn over is worth its reward plus
    ``constant_sum`` less the ``opponent``'s value of the state it leads to (the opponent's turn state values as the
    policy faces them: a race's best response keeps them). What a game that keeps no decision bytes plays in Monte
    Carlo.

    >>> from dicegraph.graphs.rules import DiceRules, Move
    >>> class Take(DiceRules):
    ...     def starts(self): return ["roll"]
    ...     def key(self, position): return position
    ...     def payoff(self, position): return 0.0 if position.startswith("took") else None
    ...     def rolls(self, position): return [(face, 1) for face in range(1, 7)]
    ...     def moves(self, position, face):
    ...         return [Move(f"took {face}", "take")] + ([Move("again", "again")] if position == "roll" else [])
    >>> class Twice(RepeatingTurn):
    ...     turn = Take()
    ...     def first_state(self): return 0
    ...     def state_key(self, played): return str(played)
    ...     def state_payoff(self, played): return 0.0 if played == 1 else None
    ...     def through(self, played, end): return Move(played + 1, end, reward=float(end.split()[1]))
    >>> rules = TurnsInFull(Twice())
    >>> agent = valued_agent(rules, {"0": 4.25}, "max")
    >>> [agent((0, "roll"), face, rules.moves((0, "roll"), face)).label for face in (3, 4)]
    ['again', 'take']
    """
    better = max if objective == "max" else min
    start = rules.root

    @functools.cache
    def worth(position: Any) -> float:
        """Return what ``position`` of the copied game is worth under the policy."""
        if isinstance(position, Ending):
            return position.payoff
        payoff = rules.payoff(position)
        if payoff is not None:
            return payoff
        state, at = position
        if at == start and rules.game.state_key(state) in values:
            return values[rules.game.state_key(state)]
        rolls = rules.rolls(position)
        if rolls is None:
            return after(position, None)
        outcomes = list(rolls)
        total = sum(weight for _, weight in outcomes)
        return sum(weight * after(position, roll) for roll, weight in outcomes) / total

    def moved(move: Move) -> float:
        """Return what ``move`` is worth to the player making it."""
        if move.passes and opponent is not None and not isinstance(move.next, Ending):
            return move.reward + rules.constant_sum - opponent[rules.game.state_key(move.next[0])]
        return move.reward + worth(move.next)

    def after(position: Any, roll: Any) -> float:
        """Return what ``position`` is worth once ``roll`` shows (None: a decision without a roll)."""
        moves = rules.moves(position, roll)
        if moves:
            return better(moved(move) for move in moves)
        ending = rules.ending(position, roll)
        return ending.payoff if isinstance(ending, Ending) else moved(ending)

    def agent(position: Any, roll: Any, moves: Sequence[Move]) -> Move:
        worths = [moved(move) for move in moves]
        best = better(worths)
        return next(move for move, value in zip(moves, worths) if abs(value - best) <= TIE * (1 + abs(best)))

    return agent
