"""Every tool on one game: what ``dicegraph check GAME`` runs, for a plugin author as for the built-in games.

The game is built, solved and looked at through the session (:class:`dicegraph.database.Database`, the same
door as the CLI and the explorer), on its small parameters, in a scratch SQLite database of its own (or the one
given). Each check says in one line what holds, or what breaks; a check that does not apply to the game's shape
(a match for a solitaire game) is left out.

>>> from dicegraph.conformance import check_game
>>> from dicegraph.graphs import get_game
>>> findings = check_game(get_game("jackpot"), {"cells": 3})
>>> [finding.check for finding in findings][:4]
['build', 'report', 'solve', 'exact']
>>> all(finding.holds for finding in findings)
True
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from dicegraph.database import Database
from dicegraph.graphs.protocol import Game, one_by_one, resolve_params
from dicegraph.graphs.repeating import TurnsInFull
from dicegraph.store.db import is_in_memory
from dicegraph.store.errors import FilesReachable, NoDatabase
from dicegraph.store.solve.entry import keeps_reaches, solves_best_responses

MONTE_CARLO_GAMES = 20_000  # games a Monte Carlo check plays; its estimate must lie within 4 standard errors
RELATIVE = 1e-12  # how close two exact answers computed two ways must be
EXACT_NODES = 2_000  # a repeating game's stored graph up to this size is checked exactly from its start
MAX_STATES_WALKED = 1_000  # how far the exact check of a repeating game walks down its states
NEIGHBOUR = ("synthetic", {"layers": 40, "width": 150, "fanout": 3})  # built first in a database that holds no graph
# (5,851 nodes, ids from 0 like every graph's): a statement that forgets which graph it reads then reads this one's rows


class Breaks(Exception):
    """A check found the tool wrong on the game: its message says what, in one line."""


@dataclass(frozen=True)
class Finding:
    """One check's outcome: its name, whether it holds, one line saying what it found, and how long it took (in
    seconds; None: not timed)."""

    check: str
    holds: bool
    detail: str
    seconds: float | None = None

    def line(self) -> str:
        """Return the finding as ``check`` prints it.

        >>> Finding("solve", True, "optimal 0.5").line(), Finding("exact", False, "off by 1", 8.64).line()
        ('holds   solve: optimal 0.5', 'BREAKS  exact: off by 1 (8.6 s)')
        """
        took = "" if self.seconds is None else f" ({self.seconds:.1f} s)"
        return f"{'holds' if self.holds else 'BREAKS'}  {' ' * self.holds}{self.check}: {self.detail}{took}"


@dataclass
class Checked:
    """What the checks share: the session, the game, its parameters, its stored graph and a scratch folder."""

    db: Database
    game: Game
    params: dict[str, Any]
    folder: Path
    graph: int = 0
    optimum: float | None = None
    policies: dict[str, float] = field(default_factory=dict)
    responses: list[dict[str, Any]] = field(default_factory=list)  # the best responses the report gives


def _close(a: float, b: float) -> bool:
    """Return whether two answers agree to :data:`RELATIVE` (or absolutely near 0)."""
    return math.isclose(a, b, rel_tol=RELATIVE, abs_tol=RELATIVE)


def _build(run: Checked) -> str:
    """Build the game twice from its declaration (the same rows both times: the rules' answer, asked once a
    process, :func:`_rules_value`) and once into the database, beside :data:`NEIGHBOUR`'s graph when it holds no
    other: every later check then finds the game's answers among another graph's rows."""
    if not _rules_value(run, "two builds", lambda: _builds_alike(run.game, run.params)):
        raise Breaks("two builds of the same parameters stream different rows")
    beside = ""
    if not _holds_a_graph(run.db):
        beside = f"; stored beside graph {run.db.build(*NEIGHBOUR)['graph_id']} ({NEIGHBOUR[0]})"
    built = run.db.build(run.game, run.params)
    run.graph = built["graph_id"]
    return (f"{built['nodes']:,} nodes, {built['edges']:,} edges, {built['layers']} layers; two builds "
            f"identical{beside}")


def _holds_a_graph(db: Database) -> bool:
    """Return whether the database holds a graph (False when it is not there yet)."""
    try:
        return bool(db.graphs())
    except NoDatabase:
        return False


def _builds_alike(game: Game, params: dict[str, Any]) -> bool:
    """Return whether two builds of ``game`` with ``params`` stream the same rows."""
    return [row for row in one_by_one(game.build(params))] == [row for row in one_by_one(game.build(params))]


def _report(run: Checked) -> str:
    """Report the game; every policy it stores has a finite value, and the optimum is among them."""
    report = run.db.report(run.game, run.params)
    run.responses = report.get("responses", [])
    if report.get("graph", run.graph) != run.graph:
        raise Breaks(f"the report reads graph {report['graph']}, the build stored graph {run.graph}")
    listed = run.db.policies(run.graph)
    run.policies = {row["name"]: row["value"] for row in listed if row["goal"] is None and row["value"] is not None}
    if not all(isinstance(value, (int, float)) and math.isfinite(value) for value in run.policies.values()):
        raise Breaks(f"a policy without a finite value: {run.policies}")
    if "optimal" not in run.policies:
        raise Breaks("the report stored no optimal policy")
    run.optimum = run.policies["optimal"]
    return f"{len(run.policies)} polic{'y' if len(run.policies) == 1 else 'ies'} valued, optimal {run.optimum:.12g}"


def _solve(run: Checked) -> str:
    """Solve the stored graph again: the optimum the report gave."""
    solved = run.db.solve(run.graph)
    if not _close(solved["value"], run.optimum or 0.0):
        raise Breaks(f"solve gives {solved['value']!r}, the report {run.optimum!r}")
    run.optimum = solved["value"]
    return f"optimal {solved['value']:.12g} ({solved['objective']}), as the report"


def _exact(run: Checked) -> str:
    """Each stored policy's value is the rules' exact recursion in fractions (policy iteration where they loop);
    a repeating game's optimum at its start when its graph is small (:data:`EXACT_NODES`), and at the last turn
    state reached by the first move of each state to one not seen yet."""
    from dicegraph.graphs.exact import exact_value

    rules = run.game.rules(run.params)  # type: ignore[misc]
    if isinstance(rules, TurnsInFull):  # a repeating game: the rules copy a turn into each state
        return _exact_turns(run, rules)
    start = rules.starts()[0]
    optimum, reached = _optimum(run, rules, start, "optimal", _bounded(run, rules, None))
    names = ["optimal", *[name for name in run.game.agents(run.params) if name in run.policies]]
    for name in names:
        exact = optimum if name == "optimal" else _rules_value(
            run, name, lambda: exact_value(rules, run.game.objective, name, loops=run.game.loops))
        if not _close(run.policies[name], float(exact)):
            raise Breaks(f"{name}: stored {run.policies[name]!r}, the rules give {exact} exactly")
    bound = _within_bounds(run, rules, start, reached=reached)
    return f"{len(names)} polic{'y equals' if len(names) == 1 else 'ies equal'} the rules' recursion in fractions{bound}"


def _within_bounds(run: Checked, rules: Any, position: Any, lowest: float | None = None,
                   reached: tuple[Fraction, Fraction] | None = None) -> str:
    """Return, where the rules declare ``highest_outcome``, that the highest outcome some play reaches from
    ``position`` (``reached``, else :func:`dicegraph.graphs.exact.outcome_range`) is within it, and where a
    repeating game declares the ``lowest`` still to come there, that no play reaches less, as clauses; else ``''``."""
    from dicegraph.graphs.exact import outcome_range

    if not _bounded(run, rules, lowest):
        return ""
    declared = getattr(rules, "highest_outcome", None)
    low, high = reached if reached is not None else _rules_value(
        run, f"outcomes from {rules.key(position)}", lambda: outcome_range(rules, position))
    clauses = ""
    if declared is not None:
        if high > declared:
            raise Breaks(f"the rules declare highest_outcome {declared!r}, but a play reaches {high}")
        clauses += f"; the highest outcome reached, {float(high):g}, within the declared {declared:g}"
    if lowest is not None:
        if low < lowest:
            raise Breaks(f"the game declares lowest_still {lowest!r} at its first state, but a play reaches {low}")
        clauses += f"; the lowest reached, {float(low):g}, not below the declared {lowest:g}"
    return clauses


def _bounded(run: Checked, rules: Any, lowest: float | None) -> bool:
    """Return whether :func:`_within_bounds` has bounds to check: the rules' ``highest_outcome`` or a repeating
    game's ``lowest`` still to come, in a game without loops."""
    return not run.game.loops and (lowest is not None or getattr(rules, "highest_outcome", None) is not None)


def _optimum(run: Checked, rules: Any, position: Any, what: str,
             ranged: bool) -> tuple[Fraction, tuple[Fraction, Fraction] | None]:
    """Return the optimum at ``position`` by the rules' recursion in fractions (``what`` names it, as
    :func:`_rules_value` asks) and, where ``ranged``, the lowest and highest outcome some play reaches there,
    from the same walk over the rules (:func:`dicegraph.graphs.exact.optimum_and_range`); else None."""
    from dicegraph.graphs.exact import exact_value, optimum_and_range

    if ranged:
        return _rules_value(run, f"{what} and its outcomes",
                            lambda: optimum_and_range(rules, run.game.objective, position))
    return _rules_value(run, what, lambda: exact_value(rules, run.game.objective, position=position,
                                                       loops=run.game.loops)), None


def _exact_turns(run: Checked, rules: Any) -> str:
    """:func:`_exact` of a repeating game, whose rules are a :class:`dicegraph.graphs.repeating.TurnsInFull`: the
    optimum at turn states, from the rules copied into each state."""
    stored_graph = run.db.graph(run.graph)
    root = stored_graph["root"]
    last, walked = root, {root}
    for _ in range(MAX_STATES_WALKED):  # down the first state move to a state not seen yet, to the last played
        after = [edge["to"] for edge in run.db.position(run.graph, last)["edges"]
                 if edge.get("moves") and edge["to"] not in walked]
        if not after:
            break
        last = after[0]
        walked.add(last)
    keys = [last] + ([root] if stored_graph["nodes"] <= EXACT_NODES and root != last else [])
    first = rules.game.state_of(root)
    lowest = rules.game.lowest_still(first)
    reached = None
    for key in keys:
        stored = run.db.position(run.graph, key)["policies"]["optimal"]["value"]
        exact, found = _optimum(run, rules, (rules.game.state_of(key), rules.root), f"optimal at {key}",
                                key == root and _bounded(run, rules, lowest))
        if key == root:
            reached = found
        if not _close(stored, float(exact)):
            raise Breaks(f"optimal at {key!r}: stored {stored!r}, the rules give {exact} exactly")
    bound = _within_bounds(run, rules, (first, rules.root), lowest, reached) if root in keys else ""
    return f"the optimum at {' and '.join(repr(key) for key in keys)} equals the rules' recursion in fractions{bound}"


_RULES_ANSWERS: dict[tuple[Any, ...], tuple[Game, Any]] = {}  # (game's id, parameters, what) -> (game, answer)


def _rules_value(run: Checked, what: str, work: Callable[[], Any]) -> Any:
    """Return ``work()``, an answer of the game's rules alone (``what`` names it: a policy's exact value, a
    state's, whether two builds agree), worked out once a process: it is the rules', the same on every backend
    (checking a game on several asks for it again)."""
    asked = (id(run.game), repr(sorted(run.params.items())), what)
    game, value = _RULES_ANSWERS.get(asked, (None, None))
    if game is not run.game:
        value = work()
        _RULES_ANSWERS[asked] = run.game, value
    return value


def _distribution(run: Checked) -> str:
    """Each policy's outcome distribution adds up to 1, and, in a solitaire game, its mean is the value; a game
    whose turn is stored once, the optimum's, played forward, where its graph is small (:data:`EXACT_NODES`)."""
    if run.db.distributions_on_request(run.graph):
        return _turn_distribution(run)
    distributions = run.db.distributions(run.graph)
    for name, outcomes in distributions.items():
        total = sum(row["probability"] for row in outcomes)
        mean = sum(row["payoff"] * row["probability"] for row in outcomes)
        if not _close(total, 1.0):
            raise Breaks(f"{name}'s outcome probabilities add up to {total!r}")
        if name in run.policies and run.game.players == 1 and not math.isclose(mean, run.policies[name],
                                                                                rel_tol=1e-9, abs_tol=1e-9):
            raise Breaks(f"{name}'s distribution has mean {mean!r}, its value is {run.policies[name]!r}")
    mean = ", each mean its policy's value" if run.game.players == 1 else ""
    return f"{len(distributions)} distribution{'s' * (len(distributions) != 1)} adding up to 1{mean}"


def _turn_distribution(run: Checked) -> str:
    """:func:`_distribution` of a game whose turn is stored once: the optimum's whole games, propagated through its
    state layers, add up to 1 with the optimum's value as their mean."""
    nodes = run.db.graph(run.graph)["nodes"]
    if nodes > EXACT_NODES:
        return f"its graph of {nodes:,} nodes is propagated by: dicegraph propagate {run.game.name}"
    propagated = run.db.propagate(run.graph, "optimal")
    total = sum(row["probability"] for row in propagated["distribution"])
    if not _close(total, 1.0) or not _close(propagated["expected_payoff"], run.optimum or 0.0):
        raise Breaks(f"the optimum's whole games add up to {total!r} with mean {propagated['expected_payoff']!r}, "
                     f"its value is {run.optimum!r}")
    return f"the optimum's {len(propagated['distribution'])} outcomes add up to 1, their mean its value"


def _monte_carlo(run: Checked) -> str:
    """Games played from the rules average the exact value within 4 standard errors."""
    estimate = run.db.simulate(run.game, run.params, games=MONTE_CARLO_GAMES, seed=7)
    if estimate["z"] is None or abs(estimate["z"]) >= 4:
        raise Breaks(f"{MONTE_CARLO_GAMES:,} games average {estimate['estimate']!r}, the exact value "
                     f"{estimate['exact']!r} (z {estimate['z']})")
    return f"{MONTE_CARLO_GAMES:,} games from the rules within {abs(estimate['z']):.2f} standard errors"


def _export(run: Checked) -> str:
    """The default picture and the full one each draw an edge."""
    drawn = []
    for full in (False, True):
        target = run.folder / f"{'full' if full else 'default'}.dot"
        shown = run.db.export(run.graph, target, full=full, **({"depth": 2} if full else {}))
        if shown["edges"] == 0 or "->" not in target.read_text():
            raise Breaks(f"the {'full' if full else 'default'} picture has no edge")
        drawn.append(f"{shown['nodes']} nodes")
    return f"default view {drawn[0]}, --full {drawn[1]}"


def _positions(run: Checked) -> str:
    """``show`` reads the root, and ``query`` finds the graph's rows in the positions view."""
    root = run.db.graph(run.graph)["root"]
    shown = run.db.position(run.graph, root)
    try:
        counted = run.db.query(f"SELECT COUNT(*) AS n FROM positions WHERE graph = {int(run.graph)}")[0]["n"]
    except FilesReachable as refused:  # the database's role, not the game: query refuses it whatever the game
        return f"show reads the root {root!r} ({shown['kind']}); query is refused to this role ({refused})"[:200]
    if not counted:
        raise Breaks("the positions view has no row of the graph")
    return f"show reads the root {root!r} ({shown['kind']}); query counts {counted:,} rows in positions"


def _compare(run: Checked) -> str:
    """A two-player game's matches, both seats, and an agent compared with the optimum in both seats against it
    (what each seat gives up as the matches say) and position by position; a game for one, an agent compared
    move by move with the optimum."""
    others = [name for name in run.policies if name != "optimal"]
    if run.game.players != 2:
        compared = run.db.compare(run.graph, others[0])
        return f"{others[0]} against optimal: expected loss {compared['expected_loss'] + 0.0:.6g}"
    played = run.db.matches(run.graph)
    if not played:
        raise Breaks("no match played")
    agents = list(run.game.agents(run.params))  # a race's agents have no value of their own: not in run.policies
    if not agents:
        return f"{len(played)} matches, both seats"
    agent = agents[0]
    compared = run.db.compare(run.graph, agent, top=10**6)
    wins = {(match["first"], match["second"]): match["p_first_wins"] for match in played}
    moving = {"first": (agent, "optimal"), "second": ("optimal", agent)}
    for seat, pair in moving.items():
        won = compared["seats"][seat]["policy"]
        match = wins[pair] if seat == "first" else 1.0 - wins[pair]
        if not math.isclose(won, match, rel_tol=1e-9, abs_tol=1e-12):
            raise Breaks(f"compare says {agent} moving {seat} against optimal wins {won}, its match {match}")
    worse, deviations = compared["worse"], compared["deviations"]
    if worse is not None and (worse != len(deviations) or any(d["move"] == d["best_move"] for d in deviations)):
        raise Breaks(f"compare counts {worse} worse moves of {agent} but lists {len(deviations)} departures")
    where = "" if worse is None else f"; worse than the optimum at {worse:,} of {compared['decisions']:,} positions"
    return (f"{len(played)} matches, both seats; {agent} against optimal gives up "
            f"{compared['seats']['first']['loss']:.6g} moving first, {compared['seats']['second']['loss']:.6g} second{where}")


def _best_response(run: Checked) -> str:
    """Each agent's best response, as the report stores it (a race's report works them out, storing none), wins
    what the rules' policy iteration in fractions gives, never less than the optimum in either seat; the best
    response to the optimum wins the game's value."""
    from dicegraph.graphs.exact import exact_values

    rules = run.game.rules(run.params)  # type: ignore[misc]
    root = rules.key(rules.starts()[0])
    stored = solves_best_responses(run.game)
    responses = run.db.responses(run.graph) if stored else [row for row in run.responses if row["policy"] != "optimal"]
    if not responses:
        return "the report works out no best response at these parameters"
    for found in responses:
        exact = _rules_value(run, f"best response to {found['policy']}",
                             lambda: exact_values(rules, run.game.objective, against=found["policy"])[root])
        if not _close(found["response_wins"]["first"], float(exact)):
            raise Breaks(f"the best response to {found['policy']} wins {found['response_wins']['first']!r} moving "
                         f"first, the rules give {exact} exactly")
        if any(found["response_wins"][seat] < found["optimum_wins"][seat] - RELATIVE for seat in ("first", "second")):
            raise Breaks(f"the best response to {found['policy']} wins less than the optimum against it")
    against_optimum = (run.db.solve(run.graph, objective="best-response:optimal")["response"] if stored
                       else next(row for row in run.responses if row["policy"] == "optimal"))
    if not _close(against_optimum["exploitability"]["mean"] + 1.0, 1.0):
        raise Breaks(f"the best response to the optimum beats the game's value by "
                     f"{against_optimum['exploitability']['mean']!r}")
    answered = responses[0]
    if not stored:  # a race works its best responses out for its report: stored as a policy, it wins the same
        solved = run.db.solve(run.graph, objective=f"best-response:{answered['policy']}")
        if not _close(solved["value"], answered["response_wins"]["first"]):
            raise Breaks(f"the best response to {answered['policy']}, stored, wins {solved['value']!r} moving first; "
                         f"the report works out {answered['response_wins']['first']!r}")
    played = run.db.simulate(run.game, run.params, policy=answered["response"], games=MONTE_CARLO_GAMES, seed=7)
    if played["z"] is None or abs(played["z"]) >= 4:
        raise Breaks(f"{answered['response']}, played from the rules against {answered['policy']}, wins "
                     f"{played['estimate']!r} of {MONTE_CARLO_GAMES:,} games; its value is {played['exact']!r}")
    said = "1 agent's best response equals" if len(responses) == 1 else f"{len(responses)} agents' best responses equal"
    return (f"{said} the rules' in fractions; the optimum's wins the game's value; {answered['response']} stored "
            f"and played from the rules against {answered['policy']} within {abs(played['z']):.2f} standard errors")


def _play(run: Checked) -> str:
    """A game played by the optimum and analysed: its steps add up, and its record reads back the same."""
    analysis = run.db.play(run.game, run.params, seed=3)
    scale = max(1.0, abs(analysis["start_value"]), abs(analysis["outcome"]))
    if not math.isclose(analysis["identity"]["sum_of_steps"], analysis["outcome"] - analysis["start_value"],
                        abs_tol=1e-12 * scale):
        raise Breaks("the steps' changes do not add up to the outcome minus the start value")
    again = run.db.analyse(analysis["record"])
    if again["outcome"] != analysis["outcome"] or len(again["steps"]) != len(analysis["steps"]):
        raise Breaks("analyse reads the record back to another analysis")
    steps = len(analysis["steps"])
    return f"a game of {steps} step{'s' * (steps != 1)} played and analysed, its values adding up"


def _explorer(run: Checked) -> str:
    """The explorer's home and the graph's page answer, in HTML and JSON, served as ``dicegraph serve`` serves
    them: over one session kept open read-only (an in-memory database, which lives in its session, over that)."""
    from dicegraph.web.app import create_app

    kept = run.db if is_in_memory(run.db.url) else Database.kept_open(run.db.url, read_only=True)
    try:
        client = create_app(kept).test_client()
        addresses = ["/", f"/graphs/{run.graph}"]
        for address in addresses + [f"{address.rstrip('/')}.json" if address != "/" else "/.json"
                                    for address in addresses]:
            answer = client.get(address)
            if answer.status_code != 200:
                raise Breaks(f"{address} answers {answer.status_code}")
    finally:
        if kept is not run.db:
            kept.close()
    return f"{2 * len(addresses)} pages answer, in HTML and JSON"


def _explorer_installed() -> bool:
    """Return whether the explorer's extra (Flask) is installed."""
    from importlib.util import find_spec

    return find_spec("flask") is not None


# each check: its name, whether it applies to a game, and what it runs; in order (later ones use earlier answers)
CHECKS: tuple[tuple[str, Callable[[Game], bool], Callable[[Checked], str]], ...] = (
    ("build", lambda game: True, _build),
    ("report", lambda game: True, _report),
    ("solve", lambda game: True, _solve),
    ("exact", lambda game: game.rules is not None, _exact),
    ("distribution", lambda game: not game.loops and (keeps_reaches(game) or game.players == 1), _distribution),
    ("monte-carlo", lambda game: game.players == 1 and game.simulator is not None, _monte_carlo),
    ("export", lambda game: True, _export),
    ("positions", lambda game: True, _positions),
    ("compare", lambda game: True, _compare),
    ("best-response", lambda game: game.rules is not None and game.players == 2, _best_response),
    ("play", lambda game: True, _play),
    ("explorer", lambda game: _explorer_installed(), _explorer),
)


@contextmanager
def _session(url: str | None) -> Iterator[tuple[Database, Path]]:
    """Yield a session on ``url`` (a scratch SQLite file when None) and a scratch folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="dicegraph-check-") as folder:
        yield Database(url or f"sqlite:///{Path(folder) / 'check.db'}"), Path(folder)


def check_game(game: Game, params: Mapping[str, Any] | None = None, url: str | None = None, *,
               on_finding: Callable[[Finding], None] | None = None) -> list[Finding]:
    """Return what each check that applies found of ``game`` on ``params`` (values or their text, over its small
    parameters), in a scratch database (or ``url``'s); ``on_finding`` is told of each as it is found. A check
    that breaks does not stop the others, but when the build or the report breaks, nothing after it is run."""
    asked = resolve_params(game, params or {})  # values or their text, checked
    values = asked | dict(game.small_params or {}) | {name: asked[name] for name in params or {}}
    findings: list[Finding] = []
    with _session(url) as (db, folder):
        run = Checked(db, game, values, folder)
        for name, applies, work in CHECKS:
            if not applies(game) or (name == "compare" and game.players == 1 and len(run.policies) < 2):
                continue
            started = time.perf_counter()
            try:
                holds, detail = True, work(run)
            except Exception as error:  # noqa: BLE001 -- every failure is a finding, in one line
                said = str(error).strip().splitlines()
                holds, detail = False, (said[0] if isinstance(error, Breaks) and said
                                        else f"{type(error).__name__}: {said[0] if said else ''}".rstrip(": "))
            found = Finding(name, holds, detail, round(time.perf_counter() - started, 3))
            findings.append(found)
            if on_finding is not None:
                on_finding(found)
            if not found.holds and name in ("build", "report"):
                break
    return findings
