"""A solve's batches spread over connections that run their statements at the same time.

A solve committed layer by layer (a turn stored once: :mod:`dicegraph.store.solve.turns`) cuts each layer into batches
(:func:`even_batches`) and hands them to *solvers*: threads, each on a connection of its own
(:func:`connection_solvers`), or on a SQLite file worker processes (:func:`process_solvers`), as SQLite's
statements in threads of one process slow each other down (two threads did the work of 1.3 connections, two
processes of 2). What a connection does with a batch is the solve's own (:class:`BatchSolver`); this module
only spreads the batches, and tells each connection of the layers committed meanwhile.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import sqlalchemy as sa

from dicegraph.graphs.errors import BadParameter
from dicegraph.store.db import open_database, side_connections

WORKERS_VARIABLE = "DICEGRAPH_WORKERS"  # how many connections solve at once (default: one per processor)


class Batch(Protocol):
    """A batch of a layer: solved once every layer above ``layer`` is committed."""

    layer: int


class BatchSolver(Protocol):
    """What each connection does to solve batches. A worker process gets it pickled: plain data and methods."""

    def prepare(self, connection: sa.Connection) -> Any:
        """Make the connection's work tables and read what is stored; return the work."""

    def solve(self, connection: sa.Connection, work: Any, batch: Any) -> Any:
        """Solve ``batch`` with ``work``; return its results as plain data (they may cross processes)."""

    def catch_up(self, connection: sa.Connection, work: Any, layer: int) -> None:
        """Read the results of ``layer``, committed since ``prepare`` or the last catch-up."""

    def drop(self, connection: sa.Connection, work: Any) -> None:
        """Drop the work tables."""


@dataclass
class Solvers:
    """Where a layer's batches are solved: ``count`` at once through ``submit`` (None: one after another by
    ``solve``); ``layer_done(layer)`` is told of each layer committed (after the caller's commit)."""

    count: int
    submit: Callable[[Any], Future] | None
    solve: Callable[[Any], Any]
    layer_done: Callable[[int], None]

    def solved(self, batches: Sequence[Any]) -> Iterator[tuple[Any, Any]]:
        """Yield each batch with its results as it is solved (the batches not started are cancelled when the
        generator is closed early)."""
        if self.submit is None:
            for one in batches:
                yield one, self.solve(one)
            return
        solving = {self.submit(one): one for one in batches}
        try:
            for done in as_completed(solving):
                yield solving[done], done.result()
        finally:
            for future in solving:
                future.cancel()


def solve_workers() -> int:
    """Return how many connections solve a committed solve's batches at once: the processor count, unless
    ``$DICEGRAPH_WORKERS`` names another (1: the caller's connection alone); raise BadParameter if it is not
    a positive whole number."""
    configured = os.environ.get(WORKERS_VARIABLE, "").strip()
    if not configured:
        return os.cpu_count() or 1
    if not configured.isdigit() or int(configured) < 1:
        raise BadParameter(f"${WORKERS_VARIABLE} is how many connections solve at once, a whole number from 1 "
                           f"(not {configured!r}); unset it to use one per processor")
    return int(configured)


def even_batches(first: int, last: int, most: int, workers: int) -> list[tuple[int, int]]:
    """Return the id ranges ``(first, last)`` of batches of at most ``most`` ids covering ``first .. last``: as few
    as can be, in a multiple of ``workers``, of sizes differing by one at most (so no worker waits for a last small one).

    >>> even_batches(1, 10, 4, 1)
    [(1, 3), (4, 6), (7, 10)]
    >>> even_batches(1, 10, 4, 2)
    [(1, 2), (3, 5), (6, 7), (8, 10)]
    """
    size = last - first + 1
    count = -(-size // most)
    count = min(size, -(-count // workers) * workers)
    bounds = [first + size * i // count for i in range(count + 1)]
    return [(low, high - 1) for low, high in zip(bounds, bounds[1:])]


@contextmanager
def connection_solvers(connection: sa.Connection, solver: BatchSolver, spread: int) -> Iterator[Solvers]:
    """Yield solvers on ``connection`` and up to ``spread - 1`` more connections (:func:`dicegraph.store.db.side_connections`),
    each used by one thread at a time with work of its own (``solver.prepare``); drop their work after."""
    with side_connections(connection, spread - 1) as others:
        free: queue.SimpleQueue[tuple[sa.Connection, Any]] = queue.SimpleQueue()
        prepared = [(worker, solver.prepare(worker)) for worker in [connection, *others]]
        for pair in prepared:
            free.put(pair)

        def solve(batch: Any) -> Any:
            worker, work = free.get()
            try:
                return solver.solve(worker, work, batch)
            finally:
                free.put((worker, work))

        def layer_done(layer: int) -> None:
            for worker, work in prepared:  # the next layer reads this one
                if worker is not connection:
                    worker.commit()  # a new snapshot, holding the layer just committed
                solver.catch_up(worker, work, layer)

        with ThreadPoolExecutor(max_workers=len(prepared)) as threads:
            submit = None if len(prepared) == 1 else (lambda one: threads.submit(solve, one))
            yield Solvers(len(prepared), submit, solve, layer_done)
        for worker, work in prepared:
            solver.drop(worker, work)


@dataclass
class _WorkerProcess:
    """What a worker process keeps between batches: its connection, its work, and the lowest layer whose results
    its work holds (the layers above it too)."""

    connection: sa.Connection
    solver: BatchSolver
    work: Any
    loaded_from: int


_worker: _WorkerProcess | None = None  # set in a worker process by _start_process


def _start_process(url: str, solver: BatchSolver, loaded_from: int) -> None:
    """Set up a worker process: open the database read-only and prepare the solver's work (the layers from
    ``loaded_from`` up are stored). Interrupts go to the parent, which stops the solve."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection = open_database(url, read_only=True).connect()
    _worker = _WorkerProcess(connection, solver, solver.prepare(connection), loaded_from)


def _solve_in_process(batch: Batch) -> Any:
    """Solve a batch in this worker process, after reading the layers committed since its last batch; return the
    solver's results, which go back to the parent pickled."""
    worker = _worker
    assert worker is not None, "_start_process sets up a worker process"
    if batch.layer + 1 < worker.loaded_from:
        worker.connection.commit()  # a new snapshot, holding the layers committed since
        for layer in range(batch.layer + 1, worker.loaded_from):
            worker.solver.catch_up(worker.connection, worker.work, layer)
        worker.loaded_from = batch.layer + 1
    return worker.solver.solve(worker.connection, worker.work, batch)


@contextmanager
def process_solvers(url: str, solver: BatchSolver, spread: int, start: int) -> Iterator[Solvers]:
    """Yield solvers in ``spread`` worker processes on the database ``url`` (layers above ``start`` stored), each
    with its own connection and work (:func:`_start_process`); shut them down after."""
    pool = ProcessPoolExecutor(spread, mp_context=multiprocessing.get_context("spawn"), initializer=_start_process,
                               initargs=(url, solver, start + 1))
    try:
        yield Solvers(spread, lambda one: pool.submit(_solve_in_process, one), _solve_in_process, lambda layer: None)
    finally:
        pool.shutdown(cancel_futures=True)
