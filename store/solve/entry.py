"""The one solve entry, :func:`solve_graph`: it picks the method from what the graph is (the package's
docstring, :mod:`dicegraph.store.solve`, has the methods), and says before a solve what it will store
(:func:`policy_names`) in how many steps (:func:`solve_steps`, :func:`pending_work`).

Every tool that solves goes through here: :func:`ensure_solved` solves what a report reads and evaluates the
stored agents, :func:`evaluate_agents` evaluates them after one solve, and :func:`keeps_reaches` says whether
the solve stores each position's probability of being reached (what an outcome distribution is summed from).
Nothing outside this module and the graph's view (:mod:`dicegraph.store.view`) asks how a game's graph is stored.

The ``connection`` is the caller's: a graph of rows is solved inside its transaction (the caller commits);
a turn stored once commits as it goes (the connection must not be inside a ``begin()`` block).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import sqlalchemy as sa

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.paired import for_two, paired_name
from dicegraph.graphs.protocol import OPTIMAL, Progress
from dicegraph.graphs.spec import GameSpec, policy_names
from dicegraph.store.catalog import find_policy, has_cycles, list_policy_names, stored_params
from dicegraph.store.propagate import pays_on_edges
from dicegraph.store.backends import backend_of
from dicegraph.store.schema import choice, layer_ranges, node, policy, turn_policy, value
from dicegraph.store.solve import graph_matches, layers, objectives, race_matches, turn_cycles, turns
from dicegraph.store.turn_graph import TurnGraph
from dicegraph.store.solve.layers import Goal, evaluate_all, evaluated_among


class Work(NamedTuple):
    """How much a solve has left to do: ``count`` steps (None: not known beforehand) of ``unit``."""

    count: int | None
    unit: str


def solve_graph(connection: sa.Connection, graph_id: int, game: GameSpec, *, objective: str | None = None,
                name: str | None = None, goal: Goal | None = None, progress: Progress | None = None) -> int:
    """Solve the stored graph ``graph_id`` of ``game`` for ``objective`` (the game's by default), store the policy
    as ``name`` (for ``goal``, when given: the probability of reaching it) and return its id.

    ``objective`` may also be a target, ``at-least:T`` (a game that maximises) or ``at-most:T`` (one that
    minimises): the policy that maximises the chance that the outcome reaches T, named so by default; or, in a
    game for two, ``best-response:POLICY``: the best response to the stored POLICY
    (:func:`dicegraph.store.solve.graph_matches.solve_response`), named so by default, after what the game's report
    reads (:func:`ensure_solved`: the optimum, whose value its exploitability is measured from). Any other
    objective's policy is named ``optimal`` by default. ``progress`` counts the layers solved (a turn stored once:
    the states of each policy). A game whose turn is stored once solves the turn policies it declares, for its
    own objective, and a race a best response (:func:`dicegraph.store.solve.race_matches.store_response`); it
    refuses others. A request that cannot be solved raises DicegraphError, in one line, before
    any work.
    """
    policy_id = _solve(connection, graph_id, game, objective, name, goal, progress)
    _statistics_taken(connection)
    if game.repeating:  # its solve commits as it goes, outside any transaction of the caller's
        connection.commit()
    return policy_id


def _solve(connection: sa.Connection, graph_id: int, game: GameSpec, objective: str | None, name: str | None,
           goal: Goal | None, progress: Progress | None) -> int:
    """Return the id of the policy :func:`solve_graph` solves and stores."""
    objectives.check_objective(objective)
    answered = objectives.answered_policy(objective)
    if answered is not None:
        _refuse_response(connection, graph_id, game, answered, goal)
        ensure_solved(connection, graph_id, game, progress)  # the game's value, which its exploitability is beyond
        if game.repeating:  # a race whose turn is stored once
            race = TurnGraph.load(connection, graph_id, game.turn(stored_params(connection, graph_id)))
            policy_id = race_matches.store_response(connection, race, answered, name, progress)[0]
            connection.commit()
            return policy_id
        return graph_matches.solve_response(connection, graph_id, answered, name, progress,
                                            game.guess_for(stored_params(connection, graph_id)))[0]
    target = objectives.target_goal(objective)
    if target is not None:
        _refuse_target(connection, graph_id, game, objective, target, goal)
        return layers.solve(connection, graph_id, "max", name or objective, progress, goal=target)
    name = name or OPTIMAL
    params = stored_params(connection, graph_id)
    if not game.repeating:
        return layers.solve(connection, graph_id, objective or game.objective, name, progress, goal=goal,
                            first_guess=game.guess_for(params))
    structure = game.turn(params)
    declared = [policy.name for policy in structure.policies]
    if (objective or game.objective) != game.objective or name not in declared or goal is not None:
        raise DicegraphError(f"{game.name} solves its declared policies ({', '.join(declared)}) for "
                             f"{game.objective}, with no goal: solve it without --objective and --name")
    graph = TurnGraph.load(connection, graph_id, structure)
    if turn_cycles.has_cyclic_states(connection, graph):  # a race: Newton's method per state layer
        turn_cycles.ensure_race_solved(connection, graph, progress)
    else:
        turns.ensure_turns_solved(connection, graph, progress)
    return find_policy(connection, graph_id, name).id


def _statistics_taken(connection: sa.Connection) -> None:
    """Have the backend's planner take in the policies, values and choices a solve stored
    (:meth:`dicegraph.store.backends.record.Backend.take_statistics`)."""
    backend_of(connection).take_statistics(connection, (policy, value, choice, turn_policy))


def _refuse_response(connection: sa.Connection, graph_id: int, game: GameSpec, answered: str,
                     goal: Goal | None) -> None:
    """Raise DicegraphError, in one line, where the graph ``graph_id`` of ``game`` has no best response to the
    policy ``answered`` (before any work): a game for one, a goal, a policy the graph neither stores nor solves for
    its report, or, in a race whose turn is stored once, another best response (the race's solve plays an agent's
    moves or maximises; a best response ranks by values it does not solve)."""
    if game.players != 2:
        raise DicegraphError(f"{game.name} is a one-player game: a best response answers an opponent, in a game "
                             "for two")
    if goal is not None:
        raise DicegraphError("a best response maximises the chance of winning: give it no goal")
    known = list(dict.fromkeys([*policy_names(game, stored_params(connection, graph_id)),
                                *list_policy_names(connection, graph_id)]))
    if answered not in known:
        raise DicegraphError(f"no policy {answered!r} on graph {graph_id} to answer (known: {', '.join(known)})")
    if game.repeating and answered in list_policy_names(connection, graph_id) and \
            find_policy(connection, graph_id, answered).responds_to is not None:
        raise DicegraphError(f"{answered!r} is itself a best response: in {game.name}, whose turn is stored once, a "
                             "best response answers an agent or the optimum")


def _refuse_target(connection: sa.Connection, graph_id: int, game: GameSpec, objective: str, target: Goal,
                   goal: Goal | None) -> None:
    """Raise DicegraphError, in one line, where the graph ``graph_id`` of ``game`` cannot be solved for the
    ``target`` of ``objective`` (before any work): a game for two (its outcome is who wins), the wrong direction
    for the game's objective, a target outside the outcomes' range, or a graph whose outcome is not its
    terminal's payoff alone (points paid on moves, positions that recur, a turn stored once)."""
    if game.players != 1:
        raise DicegraphError(f"{for_two(game.name)} ({objective})")
    wanted = {"max": ">=", "min": "<="}[game.objective]
    if target.test != wanted:
        form = next(form for form, test in objectives.TARGETS.items() if test == wanted)
        raise DicegraphError(f"{game.name} {game.objective}imises its outcome: give its target as {form}T")
    if goal is not None:
        raise DicegraphError(f"a target is a goal of its own: give {objective} no other goal")
    refused = target_refusal(connection, graph_id, game)
    if refused is not None:
        if game.rules is not None and float(target.threshold).is_integer():  # a paired game's name holds T
            refused += (f"; paired with the points still needed it takes one: dicegraph solve "
                        f"{paired_name(game.name, target.test, target.threshold)} (docs/targets.md)")
        raise DicegraphError(refused)
    low, high = connection.execute(sa.select(sa.func.min(node.c.payoff), sa.func.max(node.c.payoff)).where(
        node.c.graph_id == graph_id, node.c.kind == "terminal")).one()
    if not low <= target.threshold <= high:
        raise DicegraphError(f"{objective}: the outcomes of graph {graph_id} run from {low:g} to {high:g}; "
                             "give a target between them")


def target_refusal(connection: sa.Connection, graph_id: int, game: GameSpec) -> str | None:
    """Return why the graph ``graph_id`` of ``game`` takes no target (``at-least:T``, ``at-most:T``) in one line, or
    None where it takes every target its outcomes reach: a game for one whose terminals pay the whole outcome (no
    turn stored once, no position that recurs, no points paid on moves)."""
    declared = declared_target_refusal(game)
    if declared is not None:
        return declared
    if has_cycles(connection, graph_id) or pays_on_edges(connection, graph_id):
        return (f"{game.name}'s outcome is not its positions' payoff alone (positions that recur or points paid "
                "on moves): targets are solved on graphs whose terminals pay the whole outcome")
    return None


def declared_target_refusal(game: GameSpec) -> str | None:
    """Return why ``game`` takes no target, from what it declares alone (before any graph is built), in one line;
    None where its graphs may take one (:func:`target_refusal` says of a stored graph)."""
    if game.players != 1:
        return for_two(game.name)
    if game.repeating or game.loops:
        return (f"{game.name} takes no target: its {'turn is stored once' if game.repeating else 'positions recur'}"
                "; targets are solved on graphs whose terminals pay the whole outcome")
    return None


def solves_best_responses(game: GameSpec) -> bool:
    """Return whether best responses are solved on the game's graphs: a game for two stored as rows."""
    return game.players == 2 and not game.repeating


def response_names(game: GameSpec, params: Mapping[str, Any]) -> dict[str, str]:
    """Return the best responses the game's report solves: in a game for two stored as rows, one to each agent
    (its name -> the agent's)."""
    if not solves_best_responses(game):
        return {}
    return {objectives.response_name(agent): agent for agent in game.agents(params)}


def solve_steps(game: GameSpec, params: Mapping[str, Any]) -> int:
    """Return how many steps a solve of a repeating game reports to its progress callback for ``params``
    (``dicegraph.store.report.prepare_game`` solves it as it is built; 0: no progress to show)."""
    if not game.repeating:
        return 0
    structure = game.turn(params)
    return len(structure.policies) * (structure.states or 0)


def keeps_reaches(game: GameSpec) -> bool:
    """Return whether the game's solve stores each position's probability of being reached under a policy (the
    outcome distribution sums them): every game but one whose turn is stored once, which keeps a value a turn
    state."""
    return not game.repeating


def ensure_solved(connection: sa.Connection, graph_id: int, game: GameSpec,
                  progress: Progress | None = None) -> list[str]:
    """Solve every policy the game's report reads unless stored (``optimal`` and the game's further ``solves``, or
    a repeating game's turn policies), evaluate every stored agent not yet evaluated, and solve the best response
    to each agent of a game for two (:func:`response_names`); return the names of the policies evaluated now.

    ``progress`` counts the steps of :func:`pending_work`. A game module may name further solves:
    ``solves = {name: (objective, goal text)}``, e.g. ``{"optimal-shut": ("max", "payoff = 0")}``. A graph of
    rows is solved inside the caller's transaction; a turn stored once commits a state layer at a time (the
    connection must not be inside a ``begin()`` block), so an interrupted solve resumes.
    """
    if game.repeating:
        solve_graph(connection, graph_id, game, progress=progress)
        return []
    names = [row.name for row in connection.execute(sa.select(policy.c.name).where(policy.c.graph_id == graph_id))]
    wanted = {OPTIMAL: (game.objective, None), **game.solves}
    for name, (objective, goal) in wanted.items():
        if name not in names:
            _solve(connection, graph_id, game, objective, name, None if goal is None else Goal.parse(goal), progress)
    evaluated = evaluate_stored(connection, graph_id, progress)
    for name, answered in response_names(game, stored_params(connection, graph_id)).items():
        if name not in names:
            graph_matches.solve_response(connection, graph_id, answered, name, progress,
                                         game.guess_for(stored_params(connection, graph_id)))
    _statistics_taken(connection)
    return evaluated


def pending_work(connection: sa.Connection, graph_id: int, game: GameSpec) -> Work:
    """Return how much :func:`ensure_solved` has left to do on the graph: a graph of rows, its layers times the
    solves still missing and the policies not yet evaluated (0: nothing); a turn stored once, its turn
    policies times its states (:func:`solve_steps`, counting those already solved)."""
    if game.repeating:
        return Work(solve_steps(game, stored_params(connection, graph_id)) or None, "steps")
    count = len(layer_ranges(connection, graph_id))  # a pass steps through the layers that have edges
    stored = connection.execute(sa.select(policy.c.id, policy.c.name).where(policy.c.graph_id == graph_id)).all()
    missing = set({OPTIMAL: None, **game.solves, **response_names(game, stored_params(connection, graph_id))}) - \
        {row.name for row in stored}
    evaluated = evaluated_among(connection, [row.id for row in stored])
    unevaluated = [row for row in stored if row.id not in evaluated]
    return Work(count * (len(missing) + len(unevaluated)), "layers")


def evaluate_stored(connection: sa.Connection, graph_id: int, progress: Progress | None = None) -> list[str]:
    """Evaluate every stored policy of a graph of rows not yet evaluated (the builder's agents); return their names.

    ``progress`` counts the layers each evaluation has done.
    """
    rows = connection.execute(sa.select(policy.c.id, policy.c.name).where(policy.c.graph_id == graph_id)
                              .order_by(policy.c.id)).all()
    done = evaluated_among(connection, [row.id for row in rows])
    evaluated = [row for row in rows if row.id not in done]
    evaluate_all(connection, graph_id, [row.id for row in evaluated], progress)
    return [row.name for row in evaluated]


def evaluate_agents(connection: sa.Connection, graph_id: int, game: GameSpec, solved: str,
                    progress: Progress | None = None) -> list[str]:
    """Return the policies evaluated along with the solve of ``solved``: the stored agents not yet evaluated,
    evaluated now (``progress`` counts their layers); a turn stored once, its other turn policies, solved with it."""
    if game.repeating:
        return [name for name in policy_names(game, stored_params(connection, graph_id)) if name != solved]
    evaluated = evaluate_stored(connection, graph_id, progress)
    _statistics_taken(connection)
    return evaluated
