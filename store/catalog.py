"""Finding what is stored: graphs by id or game name, policies by name."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from dicegraph.graphs.protocol import params_text, value_text
from dicegraph.store.backends import backend_of
from dicegraph.store.errors import Ambiguous, NotFound
from dicegraph.store.schema import choice, edge, graph, layer, node, policy, turn_policy, value


MAX_ID = 2**63 - 1  # the largest id a database's 64-bit integer column holds: no graph has a larger one
BUILT = graph.c.nodes > 0  # a graph is listed once built: its totals are written last (a build on Spark may stop first)


def built_graphs() -> sa.Select:
    """Return the SELECT of the ``graph`` rows of the finished builds (:data:`BUILT`)."""
    return sa.select(graph).where(BUILT)


def is_graph_id(ref: str) -> bool:
    """Return whether ``ref`` names a graph by its id (ASCII digits) rather than by its game's name.

    >>> is_graph_id("12"), is_graph_id("jackpot"), is_graph_id("²")
    (True, False, False)
    """
    return ref.isascii() and ref.isdigit()


def graph_by_id(connection: sa.Connection, graph_id: int) -> sa.Row:
    """Return the ``graph`` table row of graph ``graph_id`` (an id only, never a game's name), or raise NotFound."""
    row = connection.execute(built_graphs().where(graph.c.id == graph_id)).first() if graph_id <= MAX_ID else None
    if row is None:
        raise NotFound(f"no graph {graph_id} in the database")
    return row


def resolve_graph(connection: sa.Connection, ref: str, params: Mapping[str, Any] | None = None) -> sa.Row:
    """Return the graph row that ``ref`` names: a graph id, or a game name (a name of digits, the game 5000's,
    names its game where ``params`` are given or no graph has that id).

    A game name picks the graph built with ``params`` when given, else the
    game's only graph. Raises NotFound when nothing matches, and Ambiguous
    listing the candidates (ids and parameters) when the name fits several
    graphs and no ``params`` say which.
    """
    query = built_graphs().where(graph.c.game == ref).order_by(graph.c.id)
    rows = connection.execute(query).all()
    if is_graph_id(ref) and params is None:  # an id, unless only a game of that name (5000) has graphs
        number = int(ref)
        row = connection.execute(built_graphs().where(graph.c.id == number)).first() if number <= MAX_ID else None
        if row is not None and rows:
            raise Ambiguous(f"{ref!r} names graph {ref} and the game {ref!r}: pick the game's graph with "
                            f"-p NAME=VALUE, or name another graph by its id")
        if row is None and not rows:
            raise NotFound(f"no graph with id {ref} (list them with: dicegraph graphs)")
        if row is not None:
            return row
    if params is not None:
        wanted = json.loads(json.dumps(dict(params)))  # as stored: tuples become lists
        rows = [row for row in rows if json.loads(row.params) == wanted]
        if not rows:
            options = " ".join(f"-p {name}={value_text(value)}" for name, value in wanted.items())
            raise NotFound(f"no graph of {ref!r} with {params_text(wanted)} in the database "
                           f"(build it: dicegraph build {ref} {options})")
    if not rows:
        raise NotFound(f"no graph of {ref!r} in the database (build it: dicegraph build {ref})")
    if len(rows) > 1:
        candidates = "; ".join(f"graph {row.id}: {params_text(json.loads(row.params))}" for row in rows)
        raise Ambiguous(f"{len(rows)} graphs of {ref!r} are stored ({candidates}): "
                        f"name one by its id, or pick it with -p NAME=VALUE")
    return rows[0]


def has_cycles(connection: sa.Connection, graph_id: int) -> bool:
    """Return whether the graph declares cyclic layers."""
    query = sa.select(sa.func.count()).select_from(layer).where(layer.c.graph_id == graph_id,
                                                                 layer.c.cycle_start.is_not(None))
    return connection.execute(query).scalar_one() > 0


def loop_free_components(connection: sa.Connection, graph_id: int) -> set[int]:
    """Return the first layers of the graph's one-layer cyclic components that no edge leads back into: declared
    because their moves hand the turn over (a race whose positions never recur, the bear-off's), they are valued
    in one pass, as acyclic layers are."""
    lone = sa.select(layer.c.cycle_start).where(layer.c.graph_id == graph_id, layer.c.cycle_start.is_not(None)).group_by(
        layer.c.cycle_start).having(sa.func.count() == 1)
    starts = set(connection.execute(lone).scalars())
    if not starts:
        return set()
    target = node.alias("target")
    inward = (sa.select(edge.c.src_layer).distinct()
              .select_from(edge.join(target, sa.and_(target.c.graph_id == edge.c.graph_id, target.c.id == edge.c.dst)))
              .where(edge.c.graph_id == graph_id, edge.c.src_layer.in_(sorted(starts)), target.c.layer == edge.c.src_layer))
    return starts - set(connection.execute(inward).scalars())


LISTED = policy.c.unfinished_since.is_(None)  # a policy is listed once complete (a solve in steps may be unfinished)


def _listed_policy(connection: sa.Connection, graph_id: int, name: str) -> sa.Row | None:
    query = sa.select(policy).where(policy.c.graph_id == graph_id, policy.c.name == name, LISTED)
    return connection.execute(query).first()


def find_policy(connection: sa.Connection, graph_id: int, name: str) -> sa.Row:
    """Return the policy row called ``name`` on the graph, or raise NotFound listing the known ones."""
    row = _listed_policy(connection, graph_id, name)
    if row is None:
        known = ", ".join(list_policy_names(connection, graph_id)) or "none"
        raise NotFound(f"no policy {name!r} on graph {graph_id} (known: {known})")
    return row


def stored_policy(connection: sa.Connection, graph_row: sa.Row, name: str) -> sa.Row:
    """Return the policy row ``name`` of the graph, raising NotFound, with how to compute it, unless it is stored."""
    found = _listed_policy(connection, graph_row.id, name)
    if found is None:
        known = ", ".join(list_policy_names(connection, graph_row.id)) or "none"
        raise NotFound(f"no policy {name!r} on graph {graph_row.id} (stored: {known}); {_how_to_compute(graph_row)}")
    return found


def evaluated_policy(connection: sa.Connection, graph_row: sa.Row, name: str) -> sa.Row:
    """Return the policy row ``name`` of the graph, raising NotFound unless it is stored and evaluated.

    For viewing, which never writes: the message says how to compute what is
    missing (a solve evaluates the stored agents too; a report computes
    every policy the game names).
    """
    found = stored_policy(connection, graph_row, name)
    if root_value(connection, found.id) is None and not _has_turn_values(connection, found.id):
        raise NotFound(f"policy {name!r} of graph {graph_row.id} is not evaluated yet; {_how_to_compute(graph_row)}")
    return found


def _how_to_compute(graph_row: sa.Row) -> str:
    """Return the words that say how to compute a graph's policies."""
    return (f"compute it with: dicegraph solve {graph_row.id} (optimal and the agents), "
            f"or dicegraph report {graph_row.game} -n 0 (every policy the game names)")


def _has_turn_values(connection: sa.Connection, policy_id: int) -> bool:
    """Return whether the policy's values are stored per turn state (a game whose turn is stored once)."""
    query = sa.select(turn_policy.c.node_id).where(turn_policy.c.policy_id == policy_id).limit(1)
    return connection.execute(query).first() is not None


def list_policy_names(connection: sa.Connection, graph_id: int) -> list[str]:
    """Return the names of the graph's policies, oldest first."""
    query = sa.select(policy.c.name).where(policy.c.graph_id == graph_id, LISTED).order_by(policy.c.id)
    return list(connection.execute(query).scalars())


def policy_ids(connection: sa.Connection, graph_id: int) -> dict[str, int]:
    """Return each listed policy of the graph's id, by name (one statement)."""
    return dict(connection.execute(sa.select(policy.c.name, policy.c.id).where(policy.c.graph_id == graph_id, LISTED)).all())


def list_policies(connection: sa.Connection, graph_id: int, outcome: str | None = None) -> list[dict[str, Any]]:
    """Return each policy of the graph with its root value (None until evaluated; a game whose turn is stored
    once: the first turn state's), and given the game's ``outcome`` its value's ``unit``
    (:func:`value_unit`).

    The root value is the expected payoff of the whole game under the policy
    (for a policy solved for a ``goal``, the probability of reaching it; in a
    two-player game, with both seats following the policy, except that a best
    response, which ``answers`` a policy, plays against that one).
    """
    listed = policies_of_graphs(connection, [graph_id])[graph_id]
    if outcome is not None:
        for row in listed:
            row["unit"] = value_unit(row["goal"], outcome)
    return listed


def policies_of_graphs(connection: sa.Connection, graph_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Return :func:`list_policies` of each graph of ``graph_ids`` (without units), by graph id, in one statement
    however many graphs are asked for."""
    root_value = sa.func.coalesce(
        sa.select(value.c.value).where(value.c.policy_id == policy.c.id, value.c.node_id == 0).scalar_subquery(),
        # a game whose turn is stored once: the first turn state's value
        sa.select(turn_policy.c.value).where(turn_policy.c.policy_id == policy.c.id, turn_policy.c.node_id == 0)
        .scalar_subquery(),
    )
    answered = policy.alias("answered")
    answers = sa.select(answered.c.name).where(answered.c.id == policy.c.responds_to).scalar_subquery()
    query = (
        sa.select(policy.c.graph_id, policy.c.name, policy.c.objective, policy.c.method, policy.c.goal,
                  root_value.label("value"), answers.label("answers"))
        .where(policy.c.graph_id.in_(list(graph_ids)), LISTED)
        .order_by(policy.c.graph_id, policy.c.id)
    )
    listed: dict[int, list[dict[str, Any]]] = {graph_id: [] for graph_id in graph_ids}
    for row in connection.execute(query) if graph_ids else ():
        found = dict(row._mapping)
        listed[found.pop("graph_id")].append(found)
    return listed


def value_unit(goal: str | None, outcome: str) -> str:
    """Return what a policy's value is: the game's ``outcome``, or for a policy solved for a ``goal`` the
    probability of reaching it.

    >>> value_unit(None, "expected score"), value_unit("payoff = 0", "expected score")
    ('expected score', 'probability that payoff = 0')
    """
    return outcome if goal is None else f"probability that {goal}"


def policy_convergence(connection: sa.Connection, policy_id: int) -> dict[str, Any] | None:
    """Return how a graph with cycles was solved for the policy (``method``, ``cyclic_components``, ``passes``,
    ``most_passes``, ``residual``, ``value_iteration_steps``), or None for a graph without cycles."""
    text = connection.execute(sa.select(policy.c.convergence).where(policy.c.id == policy_id)).scalar_one()
    return None if text is None else json.loads(text)


def stored_params(connection: sa.Connection, graph_id: int) -> dict[str, Any]:
    """Return the parameters the graph was built with, as stored (JSON: a tuple reads back as a list)."""
    return json.loads(connection.execute(sa.select(graph.c.params).where(graph.c.id == graph_id)).scalar_one())


def find_node(connection: sa.Connection, graph_id: int, key: str) -> sa.Row:
    """Return the node row with ``key`` in the graph, or raise NotFound."""
    row = connection.execute(sa.select(node).where(node.c.graph_id == graph_id, node.c.key == key)).first()
    if row is None:
        raise NotFound(f"no position with key {key!r} in graph {graph_id}")
    return row


KEYS_A_STATEMENT = 256  # SQLite: below its 500 arms of a compound SELECT


def node_ids(connection: sa.Connection, graph_id: int, keys: Iterable[str]) -> dict[str, int]:
    """Return key -> node id for those of ``keys`` the graph holds (a key it lacks is left out).

    One ``key IN (...)`` statement, except on SQLite: its planner, without
    statistics, reads such a list along the primary key, which is the whole
    graph, but an equality through the (graph, key) index; there each key is
    one arm of a UNION ALL (which DuckDB, in turn, plans 10 to 30 times slower
    than the list).
    """
    wanted = sorted(set(keys))
    if not backend_of(connection).keys_looked_up_one_by_one:
        return dict(connection.execute(sa.select(node.c.key, node.c.id).where(
            node.c.graph_id == graph_id, node.c.key.in_(wanted))).all()) if wanted else {}
    found: dict[str, int] = {}
    for start in range(0, len(wanted), KEYS_A_STATEMENT):
        arms = [sa.select(node.c.key, node.c.id).where(node.c.graph_id == graph_id, node.c.key == key)
                for key in wanted[start:start + KEYS_A_STATEMENT]]
        found.update(connection.execute(sa.union_all(*arms) if len(arms) > 1 else arms[0]).all())
    return found


def stored_choices(connection: sa.Connection, policy_id: int) -> dict[str, str]:
    """Return the policy's move at each decision node: decision key -> move label."""
    query = (
        sa.select(node.c.key, edge.c.label)
        .select_from(choice)
        .join(policy, policy.c.id == choice.c.policy_id)
        .join(node, sa.and_(node.c.graph_id == policy.c.graph_id, node.c.id == choice.c.node_id))
        .join(edge, edge.c.id == choice.c.edge_id)
        .where(choice.c.policy_id == policy_id)
    )
    return dict(connection.execute(query).all())


def root_value(connection: sa.Connection, policy_id: int) -> float | None:
    """Return the policy's expected payoff from the root, or None until it is evaluated."""
    query = sa.select(value.c.value).where(value.c.policy_id == policy_id, value.c.node_id == 0)
    return connection.execute(query).scalar_one_or_none()
