"""One implementation of each operation of the solve, and the faster ones a backend registers: the dispatch that
picks between them.

Each operation (:data:`OPERATIONS`) has one reference implementation, in portable SQL (SQLAlchemy Core) that runs
on every backend, decorated with :func:`dispatchable`. A backend may register a faster implementation of an
operation beside its record (:attr:`dicegraph.store.backends.record.Backend.faster`: Spark's folds, which solve
inside rows): an :class:`dicegraph.store.backends.record.Implementation` naming the function that runs it and the
function that says whether it can run these arguments (a graph small enough to fold, an objective it knows). A call goes to the first registered
implementation that can run it, else to the reference, as networkx's ``_dispatchable`` hands a call to a backend
whose ``can_run`` accepts it. The registered functions are imported when first called, so a backend's folder
imports the solve's plain types (:mod:`dicegraph.store.seats`, :mod:`dicegraph.store.convergence`,
:mod:`dicegraph.store.turn_graph`) and never the solve.

Inside :func:`reference_only` every call runs the reference: the conformance tests run each operation both ways
and compare (``tests/test_spark.py``).

>>> sorted(OPERATIONS)[:3]
['best response', 'carried distributions', 'cyclic']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple, TypeVar

import sqlalchemy as sa

from dicegraph.store.backends import backend_of


class Operation(NamedTuple):
    """An operation: its reference implementation (``"module:function"``) and what it computes."""

    reference: str
    computes: str


_SOLVE = "dicegraph.store.solve."
OPERATIONS = {  # each operation, its reference and what it computes, as docs/backends.md says it
    "layered": Operation(_SOLVE + "layers:store_layered", "values, reach and moves of policies on a graph without "
                         "cycles (backward induction over layers)"),
    "cyclic": Operation(_SOLVE + "layers:store_cyclic", "values and moves of policies on a graph with cycles "
                        "(Newton's method over its components)"),
    "match": Operation(_SOLVE + "cycles:root_values", "matches of pairs of stored policies on a graph of rows"),
    "best response": Operation(_SOLVE + "graph_matches:store_response", "the best response to a stored policy on "
                               "a graph of rows, its values and moves"),
    "sweep": Operation("dicegraph.store.sweep:swept_outcomes", "the optimum's outcomes for many goals at once"),
    "turn batch": Operation(_SOLVE + "turns:solve_batch", "a batch of turn states played through a turn stored once"),
    "turn play": Operation(_SOLVE + "turns:play_turns", "the turns of some turn states played under a stored "
                           "policy, every turn node's profit and value (a game played, analysed or shown)"),
    "turn ends": Operation(_SOLVE + "turn_outcomes:reach_ends", "where the turns of a batch of turn states end under "
                           "a stored policy, with the points paid on the way (a turn game's outcome distribution)"),
    "race": Operation(_SOLVE + "turn_cycles:solve_race", "a race's turn states, a state layer at a time "
                      "(Newton's method where they loop)"),
    "carried distributions": Operation("dicegraph.store.propagate:carried_distributions", "outcome distributions "
                                       "of policies on a graph of rows whose edges pay points (points carried "
                                       "through the layers)"),
    "end distributions": Operation(_SOLVE + "race_matches:play_ends", "a race's end distributions under each "
                                   "seat's policy"),
}

Function = TypeVar("Function", bound=Callable[..., Any])
_REFERENCE_ONLY: ContextVar[bool] = ContextVar("reference_only", default=False)


@contextmanager
def reference_only() -> Iterator[None]:
    """Run every operation called inside the block with its reference implementation."""
    token = _REFERENCE_ONLY.set(True)
    try:
        yield
    finally:
        _REFERENCE_ONLY.reset(token)


def registered(operation: str, connection: sa.Connection, *args: Any, **kwargs: Any) -> Callable[..., Any] | None:
    """Return the faster implementation ``connection``'s backend registers for ``operation`` that can run these
    arguments, or None where the reference runs them (none registered, none can, or :func:`reference_only`)."""
    if _REFERENCE_ONLY.get():
        return None
    for implementation in backend_of(connection).faster:
        if implementation.operation == operation and implementation.load("can_run")(connection, *args, **kwargs):
            return implementation.load("runs")
    return None


def dispatchable(operation: str) -> Callable[[Function], Function]:
    """Return a decorator making a function the reference implementation of ``operation``: a call runs the
    faster implementation the connection's backend registers where it can run the call (:func:`registered`),
    else the function. The decorated function's first argument is the connection."""
    if operation not in OPERATIONS:
        raise ValueError(f"no operation {operation!r} (known: {', '.join(OPERATIONS)})")

    def decorate(reference: Function) -> Function:
        @functools.wraps(reference)
        def dispatch(connection: sa.Connection, *args: Any, **kwargs: Any) -> Any:
            faster = registered(operation, connection, *args, **kwargs)
            return (faster or reference)(connection, *args, **kwargs)

        dispatch.operation = operation  # type: ignore[attr-defined]
        dispatch.reference = reference  # type: ignore[attr-defined]
        return dispatch  # type: ignore[return-value]

    return decorate
