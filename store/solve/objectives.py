"""What a solve may be asked for, as text: the game's payoff (``max`` or ``min``), a target (``at-least:T``,
``at-most:T``: the chance that the outcome reaches T) or a best response (``best-response:POLICY``, in a game for
two): each form's one parser here.

>>> target_goal("at-least:300"), target_goal("at-most:4"), target_goal("max")
(Goal(test='>=', threshold=300.0), Goal(test='<=', threshold=4.0), None)
>>> answered_policy("best-response:hold-at-20"), response_name("optimal")
('hold-at-20', 'best-response:optimal')
"""

from __future__ import annotations

from dicegraph.graphs.errors import DicegraphError
from dicegraph.graphs.protocol import OBJECTIVES
from dicegraph.store.solve.layers import Goal

RESPONSE = "best-response:"  # the objective (and the policy's name) of a best response, before what it answers
TARGETS = {"at-least:": ">=", "at-most:": "<="}  # a target's objective, before T, and the test of its goal
FORMS = f"{', '.join(OBJECTIVES)}, {', '.join(f'{form}T' for form in TARGETS)} or {RESPONSE}POLICY (a game for two)"


def response_name(answered: str) -> str:
    """Return the name (and objective) of the best response to the policy ``answered``."""
    return RESPONSE + answered


def answered_policy(objective: str | None) -> str | None:
    """Return the policy a best response's ``objective`` answers, or None for any other objective."""
    if objective is None or not objective.startswith(RESPONSE):
        return None
    return objective[len(RESPONSE):]


def target_goal(objective: str | None) -> Goal | None:
    """Return the goal of a target's ``objective`` (the outcome at least or at most T), None for any other
    objective; raise DicegraphError, in one line, for a target that is not a number."""
    for form, test in TARGETS.items():
        if objective is not None and objective.startswith(form):
            try:
                return Goal(test, float(objective[len(form):]))
            except ValueError:
                raise DicegraphError(f"{objective!r}: a target is a number, e.g. {form}300") from None
    return None


def check_objective(objective: str | None) -> None:
    """Raise DicegraphError, in one line, for an objective of none of the forms a solve takes (:data:`FORMS`)."""
    if objective is None or objective in OBJECTIVES or answered_policy(objective) or target_goal(objective):
        return
    raise DicegraphError(f"no objective {objective!r}: give {FORMS}")
