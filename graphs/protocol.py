"""The contract between a game and the store: rows, parameters, the builder protocol.

A builder never touches a database. It streams :class:`Node` and :class:`Edge`
rows; the store loads them in one transaction. Node ids are the integers
``0 .. nodes-1``, assigned by the builder (``0`` is the root, alone in the
lowest layer); edge ids are assigned by the loader in the order edges are
streamed, which is also the order the solver's tie-break uses.

The graph is *layered*: every edge goes from a lower layer to a higher one, so
set-based SQL can process one layer per statement. Two rules of streaming make
that cheap: a node comes before the edges leaving it, and edges come layer by
layer (the layers of their sources never decrease).

Games whose rules loop (in a race a bust hands the turn over with the scores
unchanged) declare *cyclic layers* with a :class:`CyclicLayers` row: edges
leaving layers ``first .. last`` may also go back to layer ``first``, whose
nodes (the component's *anchors*, a race's turn starts) the solver values
exactly by Newton's method (``store/solve/cycles.py``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, Union

from dicegraph.graphs.errors import BadParameter

CHANCE, DECISION, TERMINAL = "chance", "decision", "terminal"
OBJECTIVES = ("max", "min")  # what a game's payoff asks for, and what a solve does with it
OPTIMAL = "optimal"  # the policy a solve stores for the game's objective
# the tie rule: values closer than this (relative) are one value; a solve takes the first move streamed among those
# within it of the best, and everything that replays the optimum (Monte Carlo, the races' rules) does the same
TIE = 1e-12
Progress = Callable[[int], None]  # told how many more steps (edges, layers, states, games) are done
ROLL, MOVE = "roll", "move"
NODE_KINDS = (CHANCE, DECISION, TERMINAL)


class Node(NamedTuple):
    """One state of the game.

    ``denom`` is set on chance nodes (the weights of their roll edges add up to
    it); ``payoff`` on terminal nodes.
    """

    id: int
    key: str
    layer: int
    kind: str
    label: str
    denom: int | None = None
    payoff: float | None = None


class Edge(NamedTuple):
    """One roll (chance) or move (decision) from ``src`` to ``dst``.

    ``weight`` counts outcomes over the source's ``denom`` (1 on moves);
    ``reward`` is earned by taking the edge; ``chosen_by`` names the builder's
    agents that take this move. The edge is worth ``reward + sign * value(dst)``:
    ``sign`` is -1 where the turn passes to the opponent of a two-player
    zero-sum game, whose nodes are seen from the player to move (with win
    probabilities, ``reward=1, sign=-1``: the mover wins when the opponent
    does not).
    """

    src: int
    dst: int
    kind: str
    label: str
    weight: int = 1
    reward: float = 0.0
    chosen_by: tuple[str, ...] = ()
    sign: int = 1


def listed(column: Sequence[Any]) -> Sequence[Any]:
    """Return a column of an :class:`EdgeColumns` block as Python values: a numpy array's as a list, any other
    sequence as it is (numpy is not imported here: an array is known by its ``tolist``)."""
    return column.tolist() if hasattr(column, "tolist") else column


class EdgeColumns(NamedTuple):
    """Edges in a block, column by column: the ``i``-th edge is ``Edge(src[i], dst[i], kind[i], ...)``.

    A builder may stream a block where it would stream those edges one by one (the expander streams each
    layer's edges as one), and the loader takes it without making a Python object per edge. Every column
    is a sequence (a list or a one-dimensional numpy array) as long as the others.

    >>> block = EdgeColumns([0, 0], [1, 2], [MOVE, MOVE], ["stop", "go"], [1, 1], [0.0, 0.0], [("first",), ()], [1, 1])
    >>> [edge.label for edge in block.edges()]
    ['stop', 'go']
    """

    src: Sequence[int]
    dst: Sequence[int]
    kind: Sequence[str]
    label: Sequence[str]
    weight: Sequence[int]
    reward: Sequence[float]
    chosen_by: Sequence[tuple[str, ...]]
    sign: Sequence[int]

    def edges(self) -> list[Edge]:
        """Return the block's edges one by one, in order."""
        return [Edge(*values) for values in zip(*map(listed, self))]

    @classmethod
    def of(cls, edges: Sequence[Edge]) -> EdgeColumns:
        """Return the block of ``edges`` (in order)."""
        return cls(*(list(column) for column in zip(*edges))) if edges else cls(*([] for _ in Edge._fields))


class CyclicLayers(NamedTuple):
    """Layers ``first .. last`` form one cyclic component: their edges may also go back to layer ``first``.

    Streamed before any node of those layers. Components do not overlap, and
    every edge leaving one goes to a higher layer or back to its first.
    """

    first: int
    last: int


Row = Union[Node, Edge, EdgeColumns, CyclicLayers]


def one_by_one(rows: Iterable[Row]) -> Iterator[Node | Edge | CyclicLayers]:
    """Yield ``rows`` with every :class:`EdgeColumns` block given as its edges, one row each.

    >>> rows = [Node(0, "r", 0, DECISION, ""), EdgeColumns([0], [1], [MOVE], ["go"], [1], [0.0], [()], [1])]
    >>> [type(row).__name__ for row in one_by_one(rows)]
    ['Node', 'Edge']
    """
    for row in rows:
        if type(row) is EdgeColumns:
            yield from row.edges()
        else:
            yield row


@dataclass(frozen=True)
class Param:
    """A builder parameter: its name, default, and how text becomes a value.

    >>> Param("cells", 9, int, "number of cells", lambda v: 1 <= v <= 12, "1..12").parse("10")
    10
    """

    name: str
    default: Any
    convert: Callable[[str], Any]
    help: str
    check: Callable[[Any], bool] = field(default=lambda value: True)
    accepted: str = ""

    def parse(self, text: str) -> Any:
        """Return the value of ``text`` for this parameter or raise BadParameter."""
        try:
            value = self.convert(text)
        except ValueError:
            value = None
        if value is None or not self.check(value):
            expected = f" (accepted: {self.accepted})" if self.accepted else ""
            raise BadParameter(f"invalid value {text!r} for parameter {self.name!r}{expected}")
        return value


def value_text(value: Any) -> str:
    """Return a parameter's value written as it is given on the command line (``-p name=TEXT``).

    >>> value_text((15, 20)), value_text(False), value_text(9)
    ('15,20', 'off', '9')
    """
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


def params_text(params: Mapping[str, Any]) -> str:
    """Return parameters as ``-p`` gives them, e.g. ``'cells=9, one_die=off'``.

    >>> params_text({"tiles": 9, "one_die": True})
    'tiles=9, one_die=on'
    """
    return ", ".join(f"{name}={value_text(value)}" for name, value in params.items()) or "no parameters"


def spread(mean: float, moment2: float) -> float:
    """Return the standard deviation of an outcome from its mean and its second moment (the mean of its square),
    0 where rounding leaves the variance a hair below 0.

    >>> spread(2.0, 5.0), spread(3.0, 9.0 - 1e-15)
    (1.0, 0.0)
    """
    return math.sqrt(max(moment2 - mean * mean, 0.0))


def mean_and_spread(distribution: Mapping[float, float]) -> tuple[float, float]:
    """Return the mean and the standard deviation of an outcome distribution (outcome -> probability), the
    deviations taken from the mean (steadier in floating point than :func:`spread` from a second moment).

    >>> mean_and_spread({0.0: 0.5, 2.0: 0.5})
    (1.0, 1.0)
    """
    mean = sum(outcome * p for outcome, p in distribution.items())
    return mean, math.sqrt(sum(p * (outcome - mean) ** 2 for outcome, p in distribution.items()))


class ChosenMove(NamedTuple):
    """The move a policy takes at a decision: its label and the key of the node it leads to."""

    label: str
    dst: str


class DecisionEncoder(Protocol):
    """Packs a turn policy's chosen moves into each turn state's decision bytes (a game's own layout)."""

    def pack(self, states: Any, moves: Any) -> dict[int, bytes]:
        """Return state node id -> its bytes, from numpy arrays of (state, chosen move's offset in the turn's edges)."""
        ...


@dataclass(frozen=True)
class TurnPolicy:
    """A policy of a game whose turn is stored once: the optimum, or one that ranks the turn's ends otherwise.

    ``end_profits``, given the optimal values of the states named in
    ``needs``, returns end key -> the profit the policy ranks that end by
    (School's Bob: minus the combination's average); without it the policy
    maximises the game's value.
    """

    name: str
    method: str = "solve"  # "solve" or "agent", as the policy table records it
    needs: tuple[str, ...] = ()
    end_profits: Callable[[Mapping[str, float]], Mapping[str, float]] | None = None


@dataclass(frozen=True)
class TurnStructure:
    """How a game's turn, the same in every turn state, is stored once and joined with the states: what
    :func:`dicegraph.graphs.repeating.turn_structure` derives from a game's repeating turn (no game writes one).

    The graph holds the turn states (the layers below the turn's ``root``;
    terminal states end the game with their payoff) and, from the root's
    layer on, one turn whose terminals are its ends. A state's move
    labelled ``end_label(end)`` leads to the state the turn leaves when it ends at
    ``end``; its reward is added. ``encoder(nodes, moves)`` makes the
    :class:`DecisionEncoder` from the turn's decision nodes ``(id, key)`` and
    moves ``(offset, src, dst, label)``. ``states`` counts the states (progress; None: not known before), by
    ``count_states`` the first time it is read (a game's count may walk every state: naming the policies does not).

    ``progress`` (a turn node's key -> a number) and ``horizon`` (a turn
    state's key -> a number), both or neither, let a solve leave out what no
    play reaches: from a state, the turn's chance and decision nodes whose
    progress is the state's horizon or more are not valued. The game promises
    that every way to them passes a decision with a move that wins at once,
    which any player takes (5000 as a race: a turn total from which banking
    reaches the target); ``tests/test_conformance.py`` checks the promise.

    ``first_guess`` (a looping state's key -> the positions whose values
    guess its own, as the game's ``first_guess`` hook on these parameters)
    hands the solve of a race its first guesses; it only saves passes.
    """

    root: str
    end_label: Callable[[str], str]
    policies: tuple[TurnPolicy, ...]
    encoder: Callable[[Sequence[tuple[int, str]], Sequence[tuple[int, int, int, str]]], DecisionEncoder]
    count_states: Callable[[], int | None] = lambda: None
    progress: Callable[[str], int] | None = None
    horizon: Callable[[str], int] | None = None
    first_guess: Callable[[str], Any] | None = None

    @functools.cached_property
    def states(self) -> int | None:
        """Return how many turn states the game has (None: not known before the graph is built)."""
        return self.count_states()


class Simulation(NamedTuple):
    """What a report was asked to play from the rules: ``games`` a run, with ``seed``; ``progress`` counts the
    games played. A game that plays runs of its own (it declares ``simulated_runs``) reads it in its ``analyse``."""

    games: int
    seed: int
    progress: Progress | None = None


class StoredTurn(Protocol):
    """What the store offers about the turn of a game that stores it once (:class:`TurnStructure`): its states'
    results, read from the stored solve or worked out from it (implemented in ``store/view.py``)."""

    def values(self, policy: str) -> dict[str, float]:
        """Return turn state key -> the policy's value there."""
        ...

    def state(self, policy: str, key: str) -> tuple[float, float, bytes]:
        """Return the policy's value, second moment and decision bytes at turn state ``key``."""
        ...

    def decisions(self, policy: str) -> dict[str, bytes]:
        """Return turn state key -> the policy's decision bytes there (the game's :class:`DecisionEncoder`)."""
        ...

    def worths(self, policy: str, key: str) -> dict[str, tuple[float, float]]:
        """Return, for turn state ``key``, each turn node's key -> (profit, value) under the policy."""
        ...

    def node_values(self, keys: Sequence[str]) -> dict[str, dict[str, float]]:
        """Return, for each turn state ``keys`` of a race, its turn's rolling nodes and ends -> their optimal value."""
        ...

    def sizes(self) -> dict[str, int]:
        """Return the sizes: turn_states, state_edges, turn_nodes, turn_edges, copied_edges."""
        ...


class StoredGraph(Protocol):
    """What the store offers a game's hooks about one stored, solved graph (implemented in ``store/view.py``).

    Every policy named is one the graph stores and has evaluated. Keys are the
    game's own keys: the game reads them, the store never does. A game whose
    turn is stored once reads its states' results through :attr:`turn`.
    """

    graph_id: int
    params: Mapping[str, Any]
    all_matches: bool  # the report was asked to play every pair of policies (report --all-matches)
    simulation: Simulation | None  # the Monte Carlo the report was asked for (None: none)

    @property
    def turn(self) -> StoredTurn:
        """Return the turn of a game that stores it once (:class:`StoredTurn`)."""
        ...

    def values(self, policy: str, kind: str | None = None, layer: int | None = None) -> dict[str, float]:
        """Return node key -> the policy's value there (only nodes of ``kind`` / ``layer`` when given)."""
        ...

    def reaches(self, policy: str, kind: str | None = None) -> dict[str, float]:
        """Return node key -> the probability that the policy reaches it, for the nodes it reaches."""
        ...

    def choices(self, policy: str) -> dict[str, ChosenMove]:
        """Return decision key -> the move the policy takes there."""
        ...

    def position(self, key: str, depth: int = 1) -> dict[str, Any]:
        """Return the node ``key``: ``label``, ``kind``, ``policies`` (name -> value, reach) and ``edges``
        (label, to, probability, chosen_by, values per policy), ``depth`` levels deep."""
        ...

    def distribution(self, policy: str, start: str | None = None) -> dict[float, float]:
        """Return payoff -> probability of ending with it under the policy (the exact outcome distribution; from
        the position keyed ``start`` where given: what is still to come from there)."""
        ...

    def position_outcomes(self, policy: str) -> dict[str, dict[float, float]]:
        """Return :meth:`distribution` from every position at once, by key (a graph stored as rows)."""
        ...

    def goal_sweep(self, objective: str, goals: Sequence[str]) -> list[dict[float, float]]:
        """Return, per goal (``'payoff < 7'``; one test, several thresholds), the outcome distribution of the
        policy that maximises (``objective``) the probability of reaching it; nothing is stored."""
        ...

    def match(self, first: str, second: str) -> tuple[float, float]:
        """Return, in a two-player zero-sum graph seen from the mover, the exact probabilities that a player
        following policy ``first``, moving first, beats one following ``second``, and the other way round."""
        ...

    def matches(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """Return each pair played both ways (:meth:`match`): ``[{"first", "second", "p_first_wins"}]``, a pair's
        two orders side by side."""
        ...

    def convergence(self, policy: str) -> dict[str, Any] | None:
        """Return how a graph with cycles was solved for the policy (method, passes, residual), else None."""
        ...

    def responses(self, answered: Sequence[str]) -> list[dict[str, Any]]:
        """Return, for each policy of a game for two, how its best response and the optimum do against it in each
        seat and its exploitability (``{"policy", "response", "optimum_wins", "response_wins", "gain",
        "exploitability"}``)."""
        ...

    def other(self, params: Mapping[str, Any]) -> StoredGraph:
        """Return the same game's graph for other parameters, one the game's ``report_graphs`` named."""
        ...


class Game(Protocol):
    """What every game module provides; see ``graphs/jackpot.py`` for an example.

    Required: the attributes below, ``agents(params)`` and ``build(params)``.
    A game written at the rules level (:mod:`dicegraph.graphs.rules`) offers
    ``rules(params)`` instead, from which it gets ``build`` (the expansion,
    :mod:`dicegraph.graphs.expand`), ``agents`` and ``simulator`` unless it gives its own.

    Optional extras, declared as module attributes and read once into the
    game's :class:`dicegraph.graphs.spec.GameSpec` when it is registered (what a game adds
    reaches the store and the command line only through them; nothing is
    probed):

    * ``players: int``: 2 for a two-player zero-sum game seen from the player
      to move (Pig, the race), else 1 (the default).
    * ``loops: bool``: True when positions can repeat (a bust hands the turn
      back and forth): the expander then finds the loops (default False).

    * ``rules(params) -> dicegraph.graphs.rules.Rules``: the game at the rules level
      (the conformance tests check its solve against an exact recursion); a
      game whose turn repeats gives :class:`dicegraph.graphs.repeating.TurnsInFull` rules.
    * ``small_params: dict``: parameters small enough for the exhaustive checks
      of ``tests/test_conformance.py`` (default: the defaults).
    * ``check_params(values) -> None``: raise BadParameter when parameters do
      not fit together.
    * ``estimated_edges(values) -> int``: the graph's size before building it
      (a build over ``dicegraph.store.load.MAX_EDGES`` is refused unless forced).
    * ``first_guess(params, key) -> str | tuple[str, ...] | dict[str, float] | None``:
      for a position that a cyclic component loops back to (a race's turn
      start), the key of a position of a component solved before whose value
      is a good first guess of its own (Pig: the opponent two points further
      on), or several keys, whose mean value is, or keys with weights, whose
      weighted mean is (5000 as a race: each player 50 points further on,
      weight 1, and both, weight -1: a bilinear extrapolation). It only saves
      Newton passes (``store/solve/cycles.py``, ``store/solve/turn_cycles.py``); the
      answers are the same without it.
    * ``solves: dict[name, (objective, goal text)]``: solves besides
      ``optimal``, e.g. ``{"optimal-shut": ("max", "payoff = 0")}``.
    * ``repeating: bool``: the game's rules are a
      :class:`dicegraph.graphs.repeating.TurnsInFull` of a repeating turn, which
      is stored once and joined with the turn states when solving
      (``store/solve/turns.py``, as :func:`dicegraph.graphs.repeating.turn_structure`
      derives from the rules). Its report is the generic one, with each turn
      policy's ``sd`` and the turn's sizes; it may give a faster simulator of
      whole games, ``play_turns(decisions)``, built from the stored decision
      bytes (turn state key -> bytes).

    What a game adds to the tools' presentation (a report's keys and lines, diagrams, charts, further graphs its
    report reads, the runs it plays itself, an advisor, commands) it gives through hooks, not as these names:
    functions marked ``@hookimpl`` (:mod:`dicegraph.graphs.hookspecs`).
    """

    name: str
    title: str
    summary: str
    version: int
    objective: str  # "max" or "min": what the game's payoff asks for
    outcome: str  # what a value means, e.g. "win probability"
    params: tuple[Param, ...]

    def agents(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        """Return the names of the heuristic agents stored with a build."""
        ...

    def build(self, params: Mapping[str, Any]) -> Iterator[Row]:
        """Yield the graph's nodes and edges, edges in the order moves are tie-broken."""
        ...


def with_defaults(game: Game, values: Mapping[str, Any]) -> dict[str, Any]:
    """Return parameter values completed by the game's defaults for the names not given: the parameters a graph is
    stored and found by, however few of them a caller names.

    >>> from dicegraph.graphs import get_game
    >>> with_defaults(get_game("yahtzee"), {"bonuses": "off"})
    {'bonuses': 'off', 'rules': 'yahtzee', 'boxes': 'all'}
    """
    return {param.name: values.get(param.name, param.default) for param in game.params} | dict(values)


def resolve_params(game: Game, given: Mapping[str, Any]) -> dict[str, Any]:
    """Return the full parameter dict of ``game``: defaults overridden by ``given``, values (``{"cells": 4}``) or
    their text as ``-p`` gives them (``{"cells": "4"}``), each read as its text (:func:`value_text`) so that both
    are checked alike.

    Raises BadParameter naming the accepted parameters when a name is unknown,
    and whatever the game's optional ``check_params(values)`` raises for
    values that do not fit together.
    """
    known = {param.name: param for param in game.params}
    unknown = sorted(set(given) - set(known))
    if unknown:
        accepted = ", ".join(known) or "none"
        raise BadParameter(
            f"unknown parameter {unknown[0]!r} for game {game.name!r} (accepted: {accepted})"
        )
    values = {
        name: param.parse(value_text(given[name])) if name in given else param.default
        for name, param in known.items()
    }
    check_together = game.check_params
    if check_together is not None:
        check_together(values)
    return values
