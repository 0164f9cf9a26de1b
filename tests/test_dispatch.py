"""One implementation of each operation, faster ones registered (:mod:`dicegraph.store.solve.dispatch`): every
operation declares its reference, every implementation a backend registers takes the reference's arguments, and
a call goes to a registered one exactly where its ``can_run`` accepts it (the answers compared with the reference's on
Spark, whose folds are the registered ones: ``tests/test_spark.py``)."""

from __future__ import annotations

import dataclasses
import inspect
from contextlib import nullcontext
from pathlib import Path

import pytest
import sqlalchemy as sa

from dicegraph.store import backends
from dicegraph.store.backends import BACKENDS, backend_named
from dicegraph.store.backends.record import Implementation
from dicegraph.store.solve import dispatch
from dicegraph.store.solve.dispatch import OPERATIONS, reference_only

CALLS: list[str] = []  # what the implementation registered below was asked to run
ACCEPTS = {"layered": True}  # whether its can_run says it can


def _reference(name: str):
    module, function = OPERATIONS[name].reference.split(":")
    return getattr(__import__(module, fromlist=[function]), function)


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_every_operation_has_one_reference_that_dispatches() -> None:
    assert len(OPERATIONS) == 11
    for name in OPERATIONS:
        reference = _reference(name)
        assert reference.operation == name and reference.reference.__name__ == reference.__name__, name
        assert _parameters(reference)[0] == "connection", name


def test_every_registered_implementation_takes_the_references_arguments() -> None:
    registered = [(backend, found) for backend in BACKENDS for found in backend.faster]
    # Spark folds every one of them
    assert {found.operation for _, found in registered} == set(OPERATIONS)
    for backend, found in registered:
        reference = _reference(found.operation)
        assert _parameters(found.load("runs")) == _parameters(reference), (backend.name, found)
        inspect.signature(found.load("can_run")).bind(*_parameters(reference))  # takes what the reference takes


def counted_layered(connection: sa.Connection, *arguments: object) -> None:
    """A registered ``layered`` for the test below: counts the call and runs the reference."""
    CALLS.append("layered")
    _reference("layered").reference(connection, *arguments)


def can_count(connection: sa.Connection, *arguments: object) -> bool:
    return ACCEPTS["layered"]


@pytest.fixture
def registered_on_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's record with ``counted_layered`` registered for ``layered``."""
    record = dataclasses.replace(backend_named("sqlite"), faster=(
        Implementation("layered", f"{__name__}:counted_layered", f"{__name__}:can_count"),))
    records = tuple(record if backend.name == "sqlite" else backend for backend in backends.BACKENDS)
    monkeypatch.setattr(backends, "_records", lambda: records)
    CALLS.clear()


def test_a_call_runs_the_registered_implementation_where_it_can_else_the_reference(registered_on_sqlite: None,
                                                                                  tmp_path: Path) -> None:
    """A solve of Jackpot (the optimum, then its agents evaluated) goes to the registered ``layered`` when its
    ``can_run`` accepts the call, to the reference when it does not or inside ``reference_only()``; every policy's
    value is the same every way."""
    import dicegraph

    database = dicegraph.open(f"sqlite:///{tmp_path / 'jackpot.db'}")
    database.build("jackpot", {"cells": 2})
    values = []
    for accepts, forced in ((True, False), (False, False), (True, True)):
        ACCEPTS["layered"] = accepts
        CALLS.clear()
        with reference_only() if forced else nullcontext():
            database.solve("jackpot", {"cells": 2})
        assert len(CALLS) == (2 if accepts and not forced else 0), (accepts, forced, CALLS)  # optimum, agents
        values.append({row["name"]: row["value"] for row in database.policies("jackpot", {"cells": 2})})
    assert values[0] == values[1] == values[2] and len(values[0]) > 1


def test_no_backend_but_spark_registers_anything_and_an_unknown_operation_is_refused(tmp_path: Path) -> None:
    assert [backend.name for backend in BACKENDS if backend.faster] == ["spark"]
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    with engine.connect() as connection:
        assert dispatch.registered("layered", connection, 1, [1], "max", None, None) is None
    engine.dispose()
    with pytest.raises(ValueError, match="no operation 'fold'"):
        dispatch.dispatchable("fold")
