"""A game's move advisor: the questions it asks about a moment of play and the advice it gives back.

A game offers one as its ``advisor`` hook (:class:`dicegraph.graphs.protocol.Game`);
``dicegraph serve`` turns it into a page with a form, ``/graphs/{id}/advise``,
the same for every game. The answers arrive as text, as a person typed them
(or as a URL's query carries them); the advisor parses them, raising
:class:`dicegraph.graphs.errors.BadParameter` with a message that says what to type,
and returns an :class:`Advice` computed from the stored, solved graph.

>>> from types import SimpleNamespace
>>> def double(graph, answers):
...     number = parse_int(answers, "n", 0, 3)
...     return Advice(f"n = {number}", "optimal", [Alternative("double", 2 * number), Alternative("keep", number)])
>>> doubling = Advisor("Double or keep", (Question("n", "a number", "2", "0..3"),), double, "what you end with")
>>> graph = SimpleNamespace(params={})  # a stored graph, as far as the advisor looks
>>> advice = doubling.answer(graph, {"n": "2"})
>>> advice.decision, [(a.move, float(a.gives_up)) for a in advice.ranked()]
('double', [('double', 0.0), ('keep', 2.0)])
>>> doubling.answer(graph, {"n": "7"})
Traceback (most recent call last):
...
dicegraph.graphs.errors.BadParameter: n must be a whole number 0..3 (not '7')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dicegraph.graphs.errors import BadParameter


@dataclass(frozen=True)
class Question:
    """One thing the advisor asks: a form field, and the URL parameter of the same ``name``."""

    name: str  # e.g. "roll"
    label: str  # what the form says, e.g. "Dice showing"
    example: str  # a valid answer, shown as the field's placeholder, e.g. "1,2,2,4,5"
    help: str  # one line on what to type
    required: bool = True
    choices: tuple[str, ...] = ()  # the answers allowed (a menu), if only a few are
    default: str = ""  # the answer when none is given
    when: Callable[[Mapping[str, Any]], bool] | None = None  # asked only where the graph's parameters pass this


@dataclass(frozen=True)
class Alternative:
    """One move the player may make, with its value under the advising policy."""

    move: str  # readable, e.g. "keep 22" or "climb 7+1, then roll"
    value: float  # the objective's value after making it (the game's outcome: points, probability)
    gives_up: float = 0.0  # what it loses against the best move (filled in by :meth:`Advice.ranked`)
    notes: Mapping[str, float] = field(default_factory=dict)  # further numbers worth a column, e.g. Bob's profit


@dataclass(frozen=True)
class Advice:
    """What the advisor says about one moment of play."""

    situation: str  # the moment, readable: "roll 1-2-2-4-5, 2 rerolls left; nothing used yet"
    policy: str  # the policy advising
    alternatives: Sequence[Alternative]  # every legal move (empty when the roll allows none)
    decision: str | None = None  # the policy's move; default: the best alternative's
    others: Mapping[str, str] = field(default_factory=dict)  # another stored policy's move at the same moment
    position: str | None = None  # the key of the graph's node this moment is, when the graph holds one
    picture: str | None = None  # an SVG of the moment (a board), drawn by the game
    objective: str = "max"  # whether larger values are better ("max") or smaller ("min")

    def ranked(self) -> list[Alternative]:
        """Return the alternatives best first, each with ``gives_up`` against the best (ties keep their order)."""
        sign = 1 if self.objective == "max" else -1
        ordered = sorted(self.alternatives, key=lambda a: -sign * a.value)
        if not ordered:
            return []
        best = ordered[0].value
        return [Alternative(a.move, a.value, sign * (best - a.value), a.notes) for a in ordered]

    def __post_init__(self) -> None:
        if self.decision is None:
            ranked = self.ranked()
            object.__setattr__(self, "decision", ranked[0].move if ranked else "no move: the roll allows none")

    def as_dict(self) -> dict[str, Any]:
        """Return the advice as plain data (a page's JSON): alternatives ranked, best first."""
        return {
            "situation": self.situation, "policy": self.policy, "decision": self.decision,
            "alternatives": [{"move": a.move, "value": a.value, "gives_up": a.gives_up, **a.notes}
                             for a in self.ranked()],
            "others": dict(self.others), "position": self.position, "picture": self.picture,
        }


@dataclass(frozen=True)
class Advisor:
    """A game's advisor: its ``title``, the ``questions`` it asks, ``advise(graph, answers) -> Advice``, and what
    its ``values`` mean."""

    title: str  # e.g. "How to play this roll"
    questions: tuple[Question, ...]
    advise: Callable[[Any, Mapping[str, str]], Advice]  # (StoredGraph, answers by question name)
    values: str = "the policy's value after the move"  # what a move's value means, for a reader

    def questions_for(self, params: Mapping[str, Any]) -> tuple[Question, ...]:
        """Return the questions asked about a graph with parameters ``params`` (those whose ``when`` they pass)."""
        return tuple(q for q in self.questions if q.when is None or q.when(params))

    def answer(self, graph: Any, given: Mapping[str, str]) -> Advice:
        """Return the advice for the answers ``given`` (text by question name), defaults filled in.

        Only the questions asked of this graph are read (:meth:`questions_for`). Raises BadParameter for a
        required question left blank or an answer not among its choices.
        """
        answers = {}
        for question in self.questions_for(graph.params):
            text = (given.get(question.name) or question.default).strip()
            if question.required and not text:
                raise BadParameter(f"{question.label.lower()} is needed ({question.help}), e.g. {question.example}")
            if text and question.choices and text not in question.choices:
                raise BadParameter(f"{question.name} must be one of {', '.join(question.choices)} (not {text!r})")
            answers[question.name] = text
        return self.advise(graph, answers)

    def asked(self, given: Mapping[str, str]) -> bool:
        """Return whether ``given`` answers any question, even blank (a form sent), as opposed to a first visit."""
        return any(question.name in given for question in self.questions)


def parse_int(answers: Mapping[str, str], name: str, low: int, high: int) -> int:
    """Return the answer ``name`` as a whole number in ``low..high``; raise BadParameter otherwise.

    >>> parse_int({"left": "2"}, "left", 0, 2)
    2
    """
    text = answers.get(name, "")
    if not text.strip().isdigit() or not low <= int(text) <= high:
        raise BadParameter(f"{name} must be a whole number {low}..{high} (not {text!r})")
    return int(text)


def dice_faces(dice: Sequence[int]) -> str:
    """Return dice as their faces, e.g. ``'⚀⚁⚁⚃⚄'``, for a person to read at a glance.

    >>> dice_faces((1, 2, 6))
    '⚀⚁⚅'
    """
    return "".join(chr(0x267F + d) for d in dice)
