"""The generic expander: the stored graph's rows for a game written at the rules level (:mod:`dicegraph.graphs.rules`).

:func:`expand` turns rules into rows: positions deduplicated by key, each
rolling position a chance node, each roll that allows moves a decision node
(``decision_key``), rolls leading to the same place merged into one edge with
their weights added, every agent's choice recorded on its move. A move that
hands the turn over (``Move.passes``) becomes an edge of sign -1 worth
``reward + constant_sum`` (the mover gets what the opponent, then to move,
does not): nobody writes signs.

Layers are derived, nobody numbers them. The game's clock orders the
positions; within one tick of the clock a node's layer is its longest path
from the tick's first nodes. Where the rules loop (a game that declares
``loops``), the expander finds the strongly connected components of each
tick itself (the colouring algorithm, on whole arrays) and orders them the same way; the
components of one rank form one cyclic component of the store
(:class:`dicegraph.graphs.protocol.CyclicLayers`), whose first layer holds its
*anchors*: the positions entered by a move that hands the turn over (a
race's turn starts), and, where a loop never hands the turn over, the
positions a depth-first search comes back to. Every other node of the
component lies one layer or more below them, so the component is acyclic
once its anchors' values are given: what ``store/solve/cycles.py`` solves. Ids go
layer by layer, the root (the first of ``starts()``) first.

:func:`expand_repeating` does the same for a game whose turn repeats
(:mod:`dicegraph.graphs.repeating`): its turn states, then the turn stored once.

The cyclic garbage collector is paused while the rows stream (the graph
held is millions of objects that form no cycles, and every collection
would walk them all again, the loader's included; measured by
``tests/bench/bench_expand.py``).
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import repeat
from typing import Any

import numpy as np

from dicegraph.graphs.errors import InvalidGraph
from dicegraph.graphs.protocol import CHANCE, DECISION, MOVE, ROLL, TERMINAL, CyclicLayers, EdgeColumns, Node, Row
from dicegraph.graphs.repeating import RepeatingTurn, TurnStates
from dicegraph.graphs.rules import Ending, Move, Position, Roll, Rules

ROLLS = "{rolls}"  # in an ending's roll label or a forced move's label: the rolls that lead there, comma-separated


class _Graph:
    """The graph being expanded, before it has ids: nodes numbered as first seen, edges in columns.

    Nodes: ``keys``, ``kinds``, ``labels``, ``clocks``, ``denoms``, ``payoffs``, and ``found`` (the order in
    which they were expanded: the order within a layer) with ``first_edge`` (where the edges leaving each
    one start: a node's edges follow it until the next one expanded). Edges, one array a column: ``src`` and
    ``dst`` (node numbers), ``sign``, ``is_move``, ``weight``, ``reward``, and ``text`` and ``chosen``
    (numbers of the label in ``texts`` and of the agents in ``choosers``, each text and tuple kept once).
    """

    def __init__(self) -> None:
        self.number: dict[str, int] = {}
        self.keys: list[str] = []
        self.kinds: list[str | None] = []
        self.labels: list[str] = []
        self.clocks: list[int] = []
        self.denoms: list[int | None] = []
        self.payoffs: list[float | None] = []
        self.found: list[int] = []
        self.first_edge: list[int] = []
        self.src, self.dst, self.sign, self.is_move = array("q"), array("q"), array("b"), array("b")
        self.weight, self.reward, self.text, self.chosen = array("q"), array("d"), array("q"), array("q")
        self.texts: list[str] = []
        self.text_number: dict[str, int] = {}
        self.choosers: list[tuple[str, ...]] = [()]
        self.chooser_number: dict[tuple[str, ...], int] = {(): 0}

    def see(self, key: str) -> int:
        """Return the node number of ``key``, numbering it when first seen."""
        number = self.number.get(key)
        if number is None:
            number = self.number[key] = len(self.keys)
            self.keys.append(key)
            self.kinds.append(None)
            self.labels.append("")
            self.clocks.append(0)
            self.denoms.append(None)
            self.payoffs.append(None)
        return number

    def add(self, key: str, kind: str, label: str, clock: int, denom: int | None = None,
            payoff: float | None = None) -> int:
        """Record the node ``key`` as expanded; return its number."""
        number = self.see(key)
        self.kinds[number], self.labels[number], self.clocks[number] = kind, label, clock
        self.denoms[number], self.payoffs[number] = denom, payoff
        self.found.append(number)
        self.first_edge.append(len(self.src))
        return number

    def text_of(self, text: str) -> int:
        """Return the number of the edge label ``text``."""
        number = self.text_number.get(text)
        if number is None:
            number = self.text_number[text] = len(self.texts)
            self.texts.append(text)
        return number

    def chooser_of(self, agents: tuple[str, ...]) -> int:
        """Return the number of the tuple of agents ``agents``."""
        number = self.chooser_number.get(agents)
        if number is None:
            number = self.chooser_number[agents] = len(self.choosers)
            self.choosers.append(agents)
        return number


@contextmanager
def _without_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector: expanding a large game makes millions of objects and no cycles, and
    every collection would walk them all again (a third of the expansion's time for Pig to 100)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect()  # what collection would have freed meanwhile (an engine let go of keeps its file open)


def _edge_worth(rules: Rules, move: Move, players: int, where: str) -> tuple[float, int]:
    """Return the (reward, sign) of the edge a move becomes; raise InvalidGraph for a pass in a one-player game."""
    if not move.passes:
        return float(move.reward), 1
    if players == 1:
        raise InvalidGraph(f"the move {move.label!r} at {where!r} hands the turn over, in a game for one player "
                           "(a game for two declares players = 2)")
    return float(move.reward) + rules.constant_sum, -1


def _expanded(rules: Rules, players: int) -> _Graph:
    """Return every node reachable from the starts, with its outgoing edges (in streaming order, ``dst`` numbered).

    The inner loops are written out (no helper calls per edge): they run once for every edge of the game.
    """
    graph = _Graph()
    number, see, add = graph.number, graph.see, graph.add
    text_of, chooser_of = graph.text_of, graph.chooser_of
    src, dst, sign, is_move = graph.src.append, graph.dst.append, graph.sign.append, graph.is_move.append
    weight_of, reward_of, text, chosen = graph.weight.append, graph.reward.append, graph.text.append, graph.chosen.append
    src_many, is_move_many, weight_many, chosen_many = graph.src.extend, graph.is_move.extend, graph.weight.extend, graph.chosen.extend
    text_number = graph.text_number
    key_of, clock_of, payoff_of, label_of = rules.key, rules.clock, rules.payoff, rules.label
    rolls_of, moves_of, ending_of, roll_text = rules.rolls, rules.moves, rules.ending, rules.roll_text
    decision_key, decision_label = rules.decision_key, rules.decision_label
    agents = tuple(rules.agents.items())
    pending: list[tuple[str, Position]] = []  # positions seen, not yet expanded
    numbered: dict[Position, int] = {}  # a position moved to -> its node number (its key worked out once)
    expanded: set[str] = set()
    roll_texts: dict[Roll, str] = {}
    labels: dict[tuple[tuple[str, ...], str | None], int] = {}  # one text for every edge a label names

    def reach(position: Position) -> int:
        key = key_of(position)
        found = number.get(key)
        if found is None:
            found = see(key)
            pending.append((key, position))
        return found

    def end_at(ending: Ending, clock: int) -> int:
        """Return the node number of the terminal ``ending``, kept at the latest clock it is reached from."""
        if ending.key not in expanded:
            expanded.add(ending.key)
            add(ending.key, TERMINAL, ending.label, clock, payoff=float(ending.payoff))
        number_ = number[ending.key]
        if graph.clocks[number_] < clock:  # an ending reached from later on
            graph.clocks[number_] = clock
        return number_

    def decision(key: str, label: str, clock: int, position: Position, roll: Roll | None, moves: Sequence[Move]) -> None:
        ends = {move.next.key: end_at(move.next, clock) for move in moves if type(move.next) is Ending}
        source = add(key, DECISION, label, clock)  # after the endings: a node's edges follow it
        chosen_by: dict[int, list[str]] = {}  # the identity of a move offered -> the agents picking it
        for agent, choose in agents:
            pick = choose(position, roll, moves)
            if pick not in moves:
                raise InvalidGraph(f"agent {agent!r} picks {pick!r} at {key!r}, which is not a move offered there")
            chosen_by.setdefault(id(moves[moves.index(pick)]), []).append(agent)
        count = len(moves)
        for move in moves:
            after, move_label, reward, passes = move
            if passes:
                reward, turn = _edge_worth(rules, move, players, key)
                sign(turn)
                reward_of(reward)
            else:
                sign(1)
                reward_of(reward)
            if ends and type(after) is Ending:
                dst(ends[after.key])
            else:
                found = numbered.get(after)
                if found is None:
                    after_key = key_of(after)
                    found = number.get(after_key)
                    if found is None:
                        found = see(after_key)
                        pending.append((after_key, after))
                    numbered[after] = found
                dst(found)
            found = text_number.get(move_label)
            text(text_of(move_label) if found is None else found)
        src_many(repeat(source, count))
        is_move_many(repeat(1, count))
        weight_many(repeat(1, count))
        if chosen_by:
            chosen_many(chooser_of(tuple(chosen_by.get(id(move), ()))) for move in moves)
        else:
            chosen_many(repeat(0, count))

    for start in rules.starts():
        reach(start)
    while pending:
        key, position = pending.pop()
        if key in expanded:  # only where the rules give a position the key of a decision or an ending
            continue
        expanded.add(key)
        clock = clock_of(position)
        payoff = payoff_of(position)
        if payoff is not None:
            add(key, TERMINAL, label_of(position), clock, payoff=float(payoff))
            continue
        rolls = rolls_of(position)
        if rolls is None:
            decision(key, label_of(position), clock, position, None, moves_of(position, None))
            continue
        merged: dict[tuple[int, float, int], list[Any]] = {}  # (dst, reward, sign) -> [weight, roll texts, label]
        endings: list[tuple[int, float, int]] = []
        denom = 0
        for roll, weight in rolls:
            if type(weight) is not int or weight < 1:
                raise InvalidGraph(f"the roll {roll!r} at {key!r} has weight {weight!r}: weights are whole numbers from 1")
            denom += weight
            moves = moves_of(position, roll)
            if moves:
                dst_key = decision_key(position, roll)
                if dst_key not in expanded:
                    expanded.add(dst_key)
                    decision(dst_key, decision_label(position, roll), clock, position, roll, moves)
                target, label = (see(dst_key), 0.0, 1), None
            else:
                after = ending_of(position, roll)
                if isinstance(after, Move):  # the roll carries the game on without a choice
                    target, label = (reach(after.next), *_edge_worth(rules, after, players, key)), after.label
                else:
                    target, label = (end_at(after, clock), 0.0, 1), after.roll_label
                    if target not in merged:
                        endings.append(target)
            entry = merged.get(target)
            if entry is None:
                entry = merged[target] = [0, [], label]
            entry[0] += weight
            texts = roll_texts.get(roll)
            if texts is None:
                texts = roll_texts[roll] = roll_text(roll)
            entry[1].append(texts)
        source = add(key, CHANCE, label_of(position), clock, denom=denom)
        for target in (endings + [t for t in merged if t not in endings]) if endings else merged:
            weight, texts, label = merged[target]  # endings first, then the rules' order
            text_key = (tuple(texts), label)
            label_number = labels.get(text_key)
            if label_number is None:
                label_number = labels[text_key] = text_of(
                    rules.roll_label(texts) if label is None else label.replace(ROLLS, ",".join(texts)))
            src(source)
            dst(target[0])
            sign(target[2])
            is_move(0)
            weight_of(weight)
            reward_of(target[1])
            text(label_number)
            chosen(0)
    return graph


def _longest_paths(count: int, src: np.ndarray, dst: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return each node's longest path (at least ``start``) along the edges ``src -> dst`` from the nodes none
    leads to, and a mask of the nodes a loop leaves without one (Kahn's algorithm, a frontier at a time)."""
    into = np.bincount(dst, minlength=count)
    order = np.argsort(src)
    leaving, arriving = src[order], dst[order]
    bounds = np.searchsorted(leaving, np.arange(count + 1))
    depth = start.astype(np.int64)
    frontier = np.flatnonzero(into == 0)
    while frontier.size:
        lengths = bounds[frontier + 1] - bounds[frontier]
        firsts = np.repeat(bounds[frontier] - np.cumsum(lengths) + lengths, lengths)
        chosen = firsts + np.arange(lengths.sum())
        heads, tails = leaving[chosen], arriving[chosen]
        np.maximum.at(depth, tails, depth[heads] + 1)
        into -= np.bincount(tails, minlength=count)
        frontier = np.unique(tails[into[tails] == 0])
    return depth, into > 0


def _strong_components(count: int, src: np.ndarray, dst: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Return a component number per node, the same for the nodes of one strongly connected component of the
    edges ``src -> dst`` between nodes of ``among`` (a mask; other nodes keep their own number).

    The colouring algorithm, on whole arrays: every node takes the largest number that reaches it; a node
    that keeps its own is a root, and the nodes of its colour that reach it are its component.
    """
    component = np.arange(count)
    active = among.copy()
    while active.any():
        keep = active[src] & active[dst]
        heads, tails = src[keep], dst[keep]
        colour = np.where(active, np.arange(count), -1)
        while True:
            spread = colour.copy()
            np.maximum.at(spread, tails, colour[heads])
            if np.array_equal(spread, colour):
                break
            colour = spread
        member = active & (colour == np.arange(count))
        same = colour[heads] == colour[tails]
        heads, tails = heads[same], tails[same]
        while True:
            grows = member[tails] & ~member[heads]
            if not grows.any():
                break
            member[heads[grows]] = True
        component[member] = colour[member]
        active &= ~member
    return component


def _search_anchors(graph: _Graph, src: np.ndarray, dst: np.ndarray, looping: np.ndarray) -> list[int]:
    """Return nodes that break the loops among ``looping`` (a mask; edges ``src -> dst``): those a depth-first
    search comes back to (a loop that never hands the turn over)."""
    successors: dict[int, list[int]] = {}
    for head, tail in zip(src.tolist(), dst.tolist()):
        if looping[head] and looping[tail]:
            successors.setdefault(head, []).append(tail)
    state: dict[int, int] = {}  # 1: on the search's path, 2: done
    found = []
    for root in np.flatnonzero(looping).tolist():
        if root in state:
            continue
        state[root] = 1
        work = [(root, iter(successors.get(root, ())))]
        while work:
            node, following = work[-1]
            for tail in following:
                if state.get(tail) == 1:
                    found.append(tail)
                elif tail not in state:
                    state[tail] = 1
                    work.append((tail, iter(successors.get(tail, ()))))
                    break
            else:
                state[node] = 2
                work.pop()
    return found


def _layers(graph: _Graph, loops: bool, root: int | None = None) -> tuple[np.ndarray, dict[int, int]]:
    """Return each node's layer and the cyclic components (first layer -> last); ``root``, where a loop comes
    back to it, is an anchor of its component (so it stays in the graph's lowest layer).

    A node's stage is (clock, rank of its component within the tick, longest path within the component);
    layers are the ranks of the stages.
    """
    count = len(graph.keys)
    clock = np.array(graph.clocks, dtype=np.int64)
    src, dst = np.frombuffer(graph.src, dtype=np.int64), np.frombuffer(graph.dst, dtype=np.int64)
    back = np.flatnonzero(clock[dst] < clock[src])
    if back.size:
        raise InvalidGraph(f"the clock goes back along a move from {graph.keys[src[back[0]]]!r} to "
                           f"{graph.keys[dst[back[0]]]!r}")
    tick = clock[src] == clock[dst]
    src, dst, passes = src[tick], dst[tick], np.frombuffer(graph.sign, dtype=np.int8)[tick] == -1
    depth, looping = _longest_paths(count, src, dst, np.zeros(count, dtype=np.int64))
    rank, sub = depth, np.zeros(count, dtype=np.int64)
    cyclic = np.zeros(count, dtype=bool)  # the nodes of the stages that hold a loop
    if looping.any():
        if not loops:
            raise InvalidGraph(f"the rules loop at {graph.keys[np.flatnonzero(looping)[0]]!r}: positions repeat "
                               "without the clock moving on (a game whose positions repeat declares loops = True)")
        component = _strong_components(count, src, dst, looping)
        inner = component[src] == component[dst]
        sizes = np.bincount(component, minlength=count)
        in_loop = (sizes[component] > 1) | np.isin(component, component[src[inner & (src == dst)]])
        rank, _ = _longest_paths(count, component[src[~inner]], component[dst[~inner]], np.zeros(count, dtype=np.int64))
        rank = rank[component]
        anchors = np.zeros(count, dtype=bool)
        anchors[dst[inner & passes]] = True
        if root is not None and in_loop[root]:  # a game may come back to where it starts
            anchors[root] = True
        for _ in range(2):  # the passes' anchors, then, if a loop is left, the search's
            kept = inner & ~anchors[dst]
            sub, left = _longest_paths(count, src[kept], dst[kept], np.where(anchors, 0, 1))
            if not left.any():
                break
            anchors[_search_anchors(graph, src[kept], dst[kept], left)] = True
        else:
            raise InvalidGraph(f"the loop through {graph.keys[np.flatnonzero(left)[0]]!r} has no anchor")
        stage = clock * (int(rank.max()) + 1) + rank  # (clock, rank) as one number
        cyclic = np.isin(stage, stage[in_loop])
        sub = np.where(cyclic, sub, 0)
    if loops:  # a stage whose moves hand the turn over is solved as a component too, looping or not
        everywhere = np.frombuffer(graph.sign, dtype=np.int8) == -1
        handing_over = np.frombuffer(graph.src, dtype=np.int64)[everywhere]
        if handing_over.size:
            staged = clock * (int(rank.max()) + 1) + rank
            cyclic = cyclic | np.isin(staged, staged[handing_over])
    ranks, subs = int(rank.max()) + 1, int(sub.max()) + 1
    stage = (clock * ranks + rank) * subs + sub  # (clock, rank, sub) as one number, in the same order
    distinct, layer = np.unique(stage, return_inverse=True)
    components: dict[int, int] = {}  # first layer of a cyclic component -> its last
    if cyclic.any():
        group = distinct // subs  # each layer's (clock, rank)
        first_of: dict[int, int] = {}
        for number in np.flatnonzero(np.isin(group, np.unique(stage[cyclic] // subs))).tolist():
            components[first_of.setdefault(int(group[number]), number)] = number
    return layer.reshape(-1), components


def expand(rules: Rules, players: int = 1, loops: bool = False) -> Iterator[Row]:
    """Yield the rows of the graph the rules describe: each layer's nodes, then the edges leaving it (a cyclic
    component announced before its first layer).

    ``players`` and ``loops`` are what the game declares (:class:`dicegraph.graphs.spec.GameSpec`). Raises
    InvalidGraph when the rules loop in a game that declared none, a move hands the turn over in a
    game for one player, the clock goes back, a weight is not a whole number from 1, an agent picks a
    move not offered, or the root is not alone in the lowest layer.
    """
    with _without_collection():  # while the rows stream too: the graph held is millions of objects
        yield from _expanded_rows(rules, players, loops)


def _expanded_rows(rules: Rules, players: int, loops: bool) -> Iterator[Row]:
    graph = _expanded(rules, players)
    root = graph.number[rules.key(rules.starts()[0])]
    layer, components = _layers(graph, loops, root)
    if int(np.count_nonzero(layer < layer[root])) or (int(np.count_nonzero(layer == layer[root])) > 1
                                                      and layer[root] not in components):
        raise InvalidGraph(f"the root {graph.keys[root]!r} is not alone in the lowest layer")
    found = np.empty(len(graph.keys), dtype=np.int64)
    found[np.array(graph.found, dtype=np.int64)] = np.arange(len(graph.found))
    not_root = np.ones(len(graph.keys), dtype=bool)
    not_root[root] = False
    order = np.lexsort((found, not_root, layer))  # first found first within a layer, the root before all
    ids = np.empty(len(order), dtype=np.int64)
    ids[order] = np.arange(len(order))
    yield from _rows(graph, order, ids, layer, components)


def _objects(values: Sequence[Any]) -> np.ndarray:
    """Return ``values`` as a numpy array of objects (tuples stay elements, not rows)."""
    found = np.empty(len(values), dtype=object)
    found[:] = values
    return found


def _rows(graph: _Graph, order: np.ndarray, ids: np.ndarray, layer: np.ndarray,
          components: dict[int, int]) -> Iterator[Row]:
    """Yield the rows: for each layer in order, its cyclic component if one starts there, its nodes in ``order``
    (node ``n`` gets id ``ids[n]``), then the edges leaving them as one :class:`EdgeColumns` block."""
    first_edge = np.zeros(len(graph.keys), dtype=np.int64)
    last_edge = np.zeros(len(graph.keys), dtype=np.int64)
    found = np.array(graph.found, dtype=np.int64)
    first_edge[found] = graph.first_edge
    last_edge[found] = np.append(np.array(graph.first_edge[1:], dtype=np.int64), len(graph.src))
    # every edge's index in the stream's order: the edges of the nodes in ``order``, each node's in turn
    lengths = (last_edge - first_edge)[order]
    ends = np.cumsum(lengths)
    stream = np.repeat(first_edge[order] - ends + lengths, lengths) + np.arange(int(ends[-1]) if len(ends) else 0)
    dst, is_move = np.frombuffer(graph.dst, dtype=np.int64), np.frombuffer(graph.is_move, dtype=np.int8)
    text, chosen = np.frombuffer(graph.text, dtype=np.int64), np.frombuffer(graph.chosen, dtype=np.int64)
    weight, reward = np.frombuffer(graph.weight, dtype=np.int64), np.frombuffer(graph.reward, dtype=np.float64)
    sign = np.frombuffer(graph.sign, dtype=np.int8)
    kinds, texts, choosers = _objects([ROLL, MOVE]), _objects(graph.texts), _objects(graph.choosers)
    keys, node_kinds, labels, denoms, payoffs = graph.keys, graph.kinds, graph.labels, graph.denoms, graph.payoffs
    new = tuple.__new__
    layers = layer[order]
    starts = np.flatnonzero(np.diff(layers, prepend=-1)).tolist() + [len(order)]
    edge_starts = np.concatenate(([0], ends)).tolist()
    order_list = order.tolist()
    for start, end in zip(starts[:-1], starts[1:]):
        current = int(layers[start])
        if current in components:
            yield CyclicLayers(current, components[current])
        for node_id, number in enumerate(order_list[start:end], start):
            yield new(Node, (node_id, keys[number], current, node_kinds[number], labels[number], denoms[number],
                             payoffs[number]))
        edges = stream[edge_starts[start]:edge_starts[end]]  # a layer's columns made as it streams: memory for one
        if edges.size:
            yield EdgeColumns(np.repeat(np.arange(start, end, dtype=np.int64), lengths[start:end]), ids[dst[edges]],
                              kinds[is_move[edges]], texts[text[edges]], weight[edges], reward[edges],
                              choosers[chosen[edges]], sign[edges])


def expand_repeating(game: RepeatingTurn, players: int = 1, loops: bool = False) -> Iterator[Row]:
    """Yield the rows of a game whose turn repeats (:mod:`dicegraph.graphs.repeating`) as the store keeps it: the turn
    states first (:class:`dicegraph.graphs.repeating.TurnStates`: each state's moves through the turn's ends), then
    the turn once (``stored_turn`` where the game has one), in the layers and ids after theirs, its terminals
    the ends.

    ``players`` and ``loops`` are the game's, and apply to the states (the turn itself neither loops nor
    hands the turn over). Raises InvalidGraph as :func:`expand` does.
    """
    turn = list(expand(game.stored_turn or game.turn))
    ends = [row.key for row in turn if type(row) is Node and row.kind == TERMINAL]
    nodes = layers = 0
    for row in expand(TurnStates(game, ends), players, loops):
        if type(row) is Node:
            nodes += 1
            layers = max(layers, row.layer + 1)
        yield row
    for row in turn:
        if type(row) is Node:
            yield row._replace(id=row.id + nodes, layer=row.layer + layers)
        elif type(row) is EdgeColumns:
            yield row._replace(src=row.src + nodes, dst=row.dst + nodes)
        else:
            yield CyclicLayers(row.first + layers, row.last + layers)
