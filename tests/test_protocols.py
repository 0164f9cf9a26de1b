"""The store implements what graphs/protocol.py declares to the games: every method of StoredGraph and StoredTurn,
with the same parameters (a game's hooks are written against the protocol, run against the store); a game without
a turn stored once has none to read, and one with it no node rows (an empty answer would be wrong, not empty)."""

from __future__ import annotations

import inspect

import pytest

from dicegraph.graphs import get_game
from dicegraph.graphs.protocol import StoredGraph, StoredTurn
from dicegraph.store.db import open_database
from dicegraph.store.errors import NotFound
from dicegraph.store.report import game_report
from dicegraph.store.view import GraphView, TurnView


@pytest.mark.parametrize(("protocol", "implementation"), [(StoredGraph, GraphView), (StoredTurn, TurnView)])
def test_the_store_offers_every_method_the_protocol_declares_with_its_parameters(protocol: type,
                                                                                  implementation: type) -> None:
    declared = {name: member for name, member in vars(protocol).items()
                if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))}
    assert declared, "the protocol declares no methods"
    for name, member in declared.items():
        offered = inspect.getattr_static(implementation, name, None)
        assert offered is not None, f"{implementation.__name__} lacks {name}"
        if isinstance(member, property):
            assert isinstance(offered, property), f"{implementation.__name__}.{name} should be a property"
        else:
            assert list(inspect.signature(offered).parameters) == list(inspect.signature(member).parameters), name


def test_a_game_that_does_not_store_its_turn_once_has_no_turn_to_read() -> None:
    engine = open_database("sqlite://", create=True)
    report = game_report(engine, get_game("jackpot"), {"cells": 3})
    with engine.connect() as connection:
        with pytest.raises(NotFound, match="jackpot does not store its turn once"):
            GraphView(connection, report["graph"], get_game("jackpot")).turn  # noqa: B018


def test_a_turn_stored_once_is_read_through_the_turn_not_as_node_rows() -> None:
    engine = open_database("sqlite://", create=True)
    report = game_report(engine, get_game("5000-race"), {"target": 100})
    with engine.connect() as connection:
        graph = GraphView(connection, report["graph"], get_game("5000-race"))
        assert graph.turn.values("optimal")["0-0"] == report["p_first_wins"]
        for question in (graph.values, graph.reaches, graph.choices):
            with pytest.raises(NotFound, match="5000-race stores its turn once, so no .* are kept a node"):
                question("optimal")
