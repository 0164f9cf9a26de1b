"""A random layered stochastic game, for benchmarks and for testing the solver.

Layers alternate chance (even) and decision (odd); layer 0 is one root, the
others hold ``width`` nodes, the last of them terminals with whole-number
payoffs. Every non-terminal node has ``fanout`` edges to distinct nodes of the
next layer; roll weights are whole numbers 1..6
over their sum, rewards whole numbers 0..3. Same parameters, same graph.

>>> rows = list(build({"layers": 3, "width": 4, "fanout": 2, "seed": 1}))
>>> sum(isinstance(row, Node) for row in rows), sum(isinstance(row, Edge) for row in rows)
(9, 10)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dicegraph.graphs.errors import BadParameter
from dicegraph.graphs.protocol import CHANCE, DECISION, MOVE, ROLL, TERMINAL, Edge, Node, Param, Row

name = "synthetic"
title = "Synthetic layered graph"
summary = "Random layered chance/decision graph of a chosen size, for benchmarks and tests."
version = 2  # 2: each edge labelled by the position it leads to (records name edges by label)
objective = "max"
outcome = "expected payoff"


def _positive(low: int, high: int) -> Any:
    return lambda value: low <= value <= high


params = (
    Param("layers", 11, int, "number of layers (the last holds terminals)", _positive(2, 1000), "2..1000"),
    Param("width", 100, int, "nodes per layer", _positive(1, 10_000_000), "1..10000000"),
    Param("fanout", 4, int, "edges out of each non-terminal node", _positive(1, 1000), "1..1000, at most width"),
    Param("seed", 0, int, "random seed", _positive(0, 2**32 - 1), "0..2**32-1"),
)
small_params = {"layers": 5, "width": 6, "fanout": 3}  # small enough for exhaustive checks (tests/test_conformance.py)


def check_params(params: Mapping[str, Any]) -> None:
    """Refuse a fanout above the width: a node's edges go to distinct nodes of the next layer."""
    if params["fanout"] > params["width"]:
        raise BadParameter(f"fanout {params['fanout']} is above width {params['width']}: "
                           "each node's edges lead to distinct nodes of the next layer")


def estimated_edges(params: Mapping[str, Any]) -> int:
    """Return the number of edges a build will have.

    >>> estimated_edges({"layers": 3, "width": 4, "fanout": 2, "seed": 1})
    10
    """
    return ((params["layers"] - 2) * params["width"] + 1) * params["fanout"]


def agents(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the one agent: ``first`` takes each decision node's first move."""
    return ("first",)


def build(params: Mapping[str, Any]) -> Iterator[Row]:
    """Yield a random layered graph with ``((layers - 2) * width + 1) * fanout`` edges."""
    import numpy as np  # only the synthetic game needs numpy: keep it out of every start-up

    layers, width, fanout = params["layers"], params["width"], params["fanout"]
    rng = np.random.default_rng(params["seed"])
    last = layers - 1
    for layer in range(layers):
        count = 1 if layer == 0 else width
        base = 0 if layer == 0 else 1 + (layer - 1) * width
        if layer == last:
            payoffs = rng.integers(0, 10, size=count).tolist()
            for i, payoff in enumerate(payoffs):
                yield Node(base + i, f"{layer}.{i}", layer, TERMINAL, "", payoff=float(payoff))
            continue
        chance = layer % 2 == 0
        # distinct targets per node: a random offset plus a random stride walk
        starts = rng.integers(0, width, size=count)
        targets = (starts[:, None] + np.arange(fanout)[None, :] * max(1, width // fanout)) % width
        weights = rng.integers(1, 7, size=(count, fanout))
        rewards = rng.integers(0, 4, size=(count, fanout)).astype(float)
        denoms = weights.sum(axis=1).tolist()
        next_base = base + count
        targets_list, weights_list, rewards_list = targets.tolist(), weights.tolist(), rewards.tolist()
        for i in range(count):
            if chance:
                yield Node(base + i, f"{layer}.{i}", layer, CHANCE, "", denom=denoms[i])
                for target, weight, reward in zip(targets_list[i], weights_list[i], rewards_list[i]):
                    yield Edge(base + i, next_base + target, ROLL, f"to {layer + 1}.{target}", weight, reward)
            else:
                yield Node(base + i, f"{layer}.{i}", layer, DECISION, "")
                for k, (target, reward) in enumerate(zip(targets_list[i], rewards_list[i])):
                    yield Edge(base + i, next_base + target, MOVE, f"to {layer + 1}.{target}", 1, reward,
                               ("first",) if k == 0 else ())
