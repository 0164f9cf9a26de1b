"""The rules-level game API and its generic expander: a game says what the rules are, not how rows stream.

A game written at this level gives a :class:`Rules` object for its
parameters (``rules(params)``). It says

* what a position is: ``key(position)`` (unique text) and ``label(position)``;
* when the game is over and what it pays: ``payoff(position)`` (None: not over);
* which dice are rolled there: ``rolls(position)`` yields ``(roll, weight)``
  with integer weights (None: no dice, the player chooses first, see below);
* which moves each outcome allows: ``moves(position, roll)`` returns
  :class:`Move` (next position, label, reward). No move: the roll ends the
  game, at ``ending(position, roll)`` (an :class:`Ending`: key, label, payoff);
* optionally ``clock(position)``: the game's own clock (cells flipped, tiles
  shut), never decreasing along a move; the layers follow it;
* its agents, plain functions ``agent(position, roll, moves) -> Move``.

A position whose ``rolls`` is None is a decision before any roll: its moves
are ``moves(position, None)`` (Shut The Box's choice of one die or two).

:func:`expand` turns that into the stored graph's rows: positions
deduplicated by key, each rolling position a chance node, each roll that
allows moves a decision node (``decision_key``), rolls leading to the same
node merged into one edge with their weights added, every agent's choice
recorded on its move. Layers are derived, nobody numbers them: a node's layer
is the rank of (clock, longest path from the clock's first nodes); ids go
layer by layer, the root (the first of ``starts()``) first.

>>> class Coin(DiceRules):
...     "Toss a coin: tails adds a point, then toss again or stop; heads loses all; 2 points end it."
...     def starts(self): return [(0, False)]
...     def key(self, position): return f"{position[0]}" + ("/banked" if position[1] else "")
...     def label(self, position): return f"{position[0]} points"
...     def clock(self, position): return position[0]
...     def payoff(self, position):
...         points, banked = position
...         return float(points) if banked or points == 2 else None
...     def rolls(self, position): return [("heads", 1), ("tails", 1)]
...     def moves(self, position, roll):
...         points = position[0] + 1
...         return [] if roll == "heads" else [Move((points, False), "toss again"), Move((points, True), "stop")]
...     def ending(self, position, roll): return Ending(f"{position[0]}/lost", "lost", 0.0)
>>> rows = list(expand(Coin()))
>>> [(row.key, row.layer, row.kind) for row in rows if isinstance(row, Node)][:3]
[('0', 0, 'chance'), ('0/lost', 1, 'terminal'), ('0/tails', 1, 'decision')]
>>> exact_value(Coin(), "max")
Fraction(1, 2)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from graphs.errors import InvalidGraph
from graphs.montecarlo import stored_move
from graphs.protocol import CHANCE, DECISION, MOVE, ROLL, TERMINAL, Edge, Node, Row

Position = Hashable
Roll = Hashable


@dataclass(frozen=True)
class Move:
    """A move: the position it leads to, its label, and the points it earns on the way."""

    next: Position
    label: str
    reward: float = 0.0


@dataclass(frozen=True)
class Ending:
    """Where a roll that allows no move ends the game: the terminal's key, label and payoff.

    ``roll_label`` names the rolls that lead there (default: ``'roll'`` and their texts).
    """

    key: str
    label: str
    payoff: float
    roll_label: str | None = None


Agent = Callable[[Position, Roll, Sequence[Move]], Move]


class Rules(Protocol):
    """What a game says at the rules level, for one set of parameters (see the module's docstring)."""

    agents: Mapping[str, Agent]

    def starts(self) -> Sequence[Position]:
        """Return the positions to expand from: the root first, then any others the graph must hold."""
        ...

    def key(self, position: Position) -> str:
        """Return the position's key, unique in the graph."""
        ...

    def label(self, position: Position) -> str:
        """Return the position's readable label."""
        ...

    def clock(self, position: Position) -> int:
        """Return the game's clock at the position (never decreasing along a move)."""
        ...

    def payoff(self, position: Position) -> float | None:
        """Return what the game pays when it is over at the position, else None."""
        ...

    def rolls(self, position: Position) -> Iterable[tuple[Roll, int]] | None:
        """Return the roll outcomes at the position with integer weights, or None when the player moves first."""
        ...

    def moves(self, position: Position, roll: Roll | None) -> Sequence[Move]:
        """Return the moves the roll allows (``roll`` None: the moves of a decision before rolling)."""
        ...

    def ending(self, position: Position, roll: Roll) -> Ending:
        """Return the terminal a roll without moves leads to."""
        ...

    def roll_text(self, roll: Roll) -> str:
        """Return a roll as text, e.g. ``'3-4'``."""
        ...

    def decision_key(self, position: Position, roll: Roll) -> str:
        """Return the key of the decision after ``roll`` at the position."""
        ...

    def decision_label(self, position: Position, roll: Roll) -> str:
        """Return the label of that decision."""
        ...


class DiceRules:
    """Defaults for :class:`Rules`: no clock, no agents, decisions keyed ``'<position key>/<roll>'``."""

    agents: Mapping[str, Agent] = {}

    def clock(self, position: Position) -> int:
        """Return 0: without a clock the layers are the longest paths from the root."""
        return 0

    def roll_text(self, roll: Roll) -> str:
        """Return ``'3-4'`` for a tuple of dice, the roll's text otherwise."""
        return "-".join(map(str, roll)) if isinstance(roll, tuple) else str(roll)

    def decision_key(self, position: Position, roll: Roll) -> str:
        """Return ``'<key>/<roll text>'``."""
        return f"{self.key(position)}/{self.roll_text(roll)}"  # type: ignore[attr-defined]

    def decision_label(self, position: Position, roll: Roll) -> str:
        """Return ``'<label>; roll <roll text>'``."""
        return f"{self.label(position)}; roll {self.roll_text(roll)}"  # type: ignore[attr-defined]


@dataclass
class _Vertex:
    """A node of the graph being expanded, before it has an id."""

    key: str
    kind: str
    label: str
    clock: int
    denom: int | None = None
    payoff: float | None = None
    out: list[tuple[str, str, str, int, float, tuple[str, ...]]] | None = None  # (dst key, kind, label, weight, reward, agents)


def _vertices(rules: Rules) -> dict[str, _Vertex]:
    """Return every node reachable from the starts, keyed, with its outgoing edges (in streaming order)."""
    found: dict[str, _Vertex] = {}
    position_of = {rules.key(start): start for start in rules.starts()}
    pending = list(position_of)

    def reach(position: Position) -> str:
        key = rules.key(position)
        if key not in position_of:
            position_of[key] = position
            pending.append(key)
        return key

    def decision(key: str, label: str, clock: int, position: Position, roll: Roll | None, moves: Sequence[Move]) -> _Vertex:
        picks = {agent: choose(position, roll, moves) for agent, choose in rules.agents.items()}
        out = [(reach(move.next), MOVE, move.label, 1, float(move.reward),
                tuple(agent for agent, pick in picks.items() if pick == move)) for move in moves]
        return _Vertex(key, DECISION, label, clock, out=out)

    while pending:
        key = pending.pop()
        if key in found:
            continue
        position = position_of[key]
        clock = rules.clock(position)
        payoff = rules.payoff(position)
        if payoff is not None:
            found[key] = _Vertex(key, TERMINAL, rules.label(position), clock, payoff=float(payoff))
            continue
        rolls = rules.rolls(position)
        if rolls is None:
            found[key] = decision(key, rules.label(position), clock, position, None, rules.moves(position, None))
            continue
        merged: dict[str, list[Any]] = {}  # dst key -> [weight, roll texts, label override]
        endings: dict[str, Ending] = {}
        denom = 0
        for roll, weight in rolls:
            denom += weight
            moves = rules.moves(position, roll)
            if moves:
                dst = rules.decision_key(position, roll)
                if dst not in found:
                    found[dst] = decision(dst, rules.decision_label(position, roll), clock, position, roll, moves)
            else:
                ending = rules.ending(position, roll)
                dst = ending.key
                endings[dst] = ending
                if dst not in found:
                    found[dst] = _Vertex(dst, TERMINAL, ending.label, clock, payoff=float(ending.payoff))
            entry = merged.setdefault(dst, [0, [], endings[dst].roll_label if dst in endings else None])
            entry[0] += weight
            entry[1].append(rules.roll_text(roll))
        ordered = sorted(merged, key=lambda dst: dst not in endings)  # endings first, then rolls in the rules' order
        out = [(dst, ROLL, merged[dst][2] or "roll " + " ".join(merged[dst][1]), merged[dst][0], 0.0, ())
               for dst in ordered]
        found[key] = _Vertex(key, CHANCE, rules.label(position), clock, denom=denom, out=out)
    return found


def _layers(vertices: Mapping[str, _Vertex], root: str) -> dict[str, int]:
    """Return each node's layer: the rank of (clock, longest path within the clock from its first nodes)."""
    into: dict[str, int] = defaultdict(int)
    for vertex in vertices.values():
        for dst, *_ in vertex.out or ():
            if vertices[dst].clock < vertex.clock:
                raise InvalidGraph(f"the clock goes back along a move from {vertex.key!r} to {dst!r}")
            if vertices[dst].clock == vertex.clock:
                into[dst] += 1
    depth = {key: 0 for key in vertices if into[key] == 0}
    ready = list(depth)
    while ready:
        key = ready.pop()
        for dst, *_ in vertices[key].out or ():
            if vertices[dst].clock == vertices[key].clock:
                depth[dst] = max(depth.get(dst, 0), depth[key] + 1)
                into[dst] -= 1
                if into[dst] == 0:
                    ready.append(dst)
    if len(depth) < len(vertices):
        loop = next(key for key in vertices if key not in depth)
        raise InvalidGraph(f"the rules loop at {loop!r}: positions repeat without the clock moving on")
    rank = {stage: layer for layer, stage in enumerate(sorted({(v.clock, depth[k]) for k, v in vertices.items()}))}
    layers = {key: rank[vertices[key].clock, depth[key]] for key in vertices}
    if sum(1 for layer in layers.values() if layer <= layers[root]) > 1:
        raise InvalidGraph(f"the root {root!r} is not alone in the lowest layer")
    return layers


def expand(rules: Rules) -> Iterator[Row]:
    """Yield the rows of the graph the rules describe: each layer's nodes, then the edges leaving it.

    Raises InvalidGraph when the rules loop, the clock goes back, or the root
    is not alone in the lowest layer.
    """
    vertices = _vertices(rules)
    root = rules.key(rules.starts()[0])
    layers = _layers(vertices, root)
    order = sorted(vertices, key=lambda key: (layers[key], key != root))  # stable: first found first within a layer
    ids = {key: node_id for node_id, key in enumerate(order)}
    by_layer: dict[int, list[str]] = defaultdict(list)
    for key in order:
        by_layer[layers[key]].append(key)
    for layer, keys in sorted(by_layer.items()):
        for key in keys:
            vertex = vertices[key]
            yield Node(ids[key], key, layer, vertex.kind, vertex.label, denom=vertex.denom, payoff=vertex.payoff)
        for key in keys:
            for dst, kind, label, weight, reward, chosen_by in vertices[key].out or ():
                yield Edge(ids[key], ids[dst], kind, label, weight=weight, reward=reward, chosen_by=chosen_by)


def build_from_rules(make_rules: Callable[[Mapping[str, Any]], Rules]) -> Callable[[Mapping[str, Any]], Iterator[Row]]:
    """Return a game's ``build(params)`` for its ``rules(params)``: the expansion of those rules."""

    def build(params: Mapping[str, Any]) -> Iterator[Row]:
        """Yield the graph's rows, expanded from the game's rules (:func:`graphs.rules.expand`)."""
        return expand(make_rules(params))

    return build


def exact_value(rules: Rules, objective: str, agent: str | None = None, position: Position | None = None) -> Fraction:
    """Return the exact expected payoff from ``position`` (default: the root), by recursion over the rules.

    Plays ``agent``'s moves where given, else the best move for ``objective``
    (``max`` or ``min``). It works from the rules alone, never from rows,
    so it checks the expander and the SQL solver independently (small games:
    one call per position, memoised).
    """
    memo: dict[str, Fraction] = {}
    best = max if objective == "max" else min

    def value(at: Position) -> Fraction:
        key = rules.key(at)
        if key in memo:
            return memo[key]
        payoff = rules.payoff(at)
        if payoff is not None:
            result = Fraction(payoff)
        else:
            rolls = rules.rolls(at)
            if rolls is None:
                result = choose(at, None)
            else:
                outcomes = [(roll, weight) for roll, weight in rolls]
                total = sum(weight for _, weight in outcomes)
                result = sum((Fraction(weight, total) * choose(at, roll) for roll, weight in outcomes), Fraction(0))
        memo[key] = result
        return result

    def choose(at: Position, roll: Roll | None) -> Fraction:
        moves = rules.moves(at, roll)
        if not moves:
            return Fraction(rules.ending(at, roll).payoff)
        if agent is not None:
            move = rules.agents[agent](at, roll, moves)
            return Fraction(move.reward) + value(move.next)
        return best(Fraction(move.reward) + value(move.next) for move in moves)

    return value(rules.starts()[0] if position is None else position)


def agents_from_rules(make_rules: Callable[[Mapping[str, Any]], Rules]) -> Callable[[Mapping[str, Any]], tuple[str, ...]]:
    """Return a game's ``agents(params)`` for its ``rules(params)``: the names of the rules' agents."""

    def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
        """Return the names of the agents the rules define."""
        return tuple(make_rules(params).agents)

    return agents


def play_one(rules: Rules, policy: str | Mapping[str, str], uniform: Callable[[], float]) -> float:
    """Return the payoff (rewards included) of one game played from the rules.

    ``policy`` is an agent's name or a stored policy's choices (decision key ->
    move label, as :func:`graphs.montecarlo.stored_move` reads them);
    ``uniform()`` draws a number in [0, 1) for each roll.

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
    position, total = rules.starts()[0], 0.0
    while True:
        payoff = rules.payoff(position)
        if payoff is not None:
            return total + payoff
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
        if not moves:
            return total + rules.ending(position, roll).payoff
        if isinstance(policy, str):
            move = rules.agents[policy](position, roll, moves)
        else:
            key = rules.key(position) if roll is None else rules.decision_key(position, roll)
            move = stored_move(policy, key, moves, lambda move: move.label)
        total += move.reward
        position = move.next


def simulator_from_rules(make_rules: Callable[[Mapping[str, Any]], Rules]) -> Callable[..., Callable[[int, Any], Any]]:
    """Return a game's ``simulator(params, policy)`` that plays from its rules, one game at a time.

    Slower than a game's own numpy simulator, but any game written at the
    rules level gets Monte Carlo checks with it.
    """

    def simulator(params: Mapping[str, Any], policy: str | Mapping[str, str]) -> Callable[[int, Any], Any]:
        """Return ``play(games, rng)``: the payoffs of ``games`` games played from the rules."""
        rules = make_rules(params)

        def play(games: int, rng: Any) -> list[float]:
            draws = iter(())

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
