"""What a turn's end is worth to a policy, from the state it leads to: the arithmetic the turn solve
(:mod:`dicegraph.store.solve.turns`) and Spark's turn fold (:mod:`dicegraph.store.backends.spark.turn_fold`) share."""

from __future__ import annotations

import sqlalchemy as sa


def moment(reward: sa.ColumnElement[float], v1: sa.ColumnElement[float], v2: sa.ColumnElement[float]) -> sa.ColumnElement[float]:
    """Return the second moment of ``reward`` plus a value of mean ``v1`` and second moment ``v2``.

    >>> str(moment(sa.column("r"), sa.column("v1"), sa.column("v2")))
    'r * r + :r_1 * r * v1 + v2'
    """
    return reward * reward + 2 * reward * v1 + v2


def end_worth(reward: sa.ColumnElement[float], v1: sa.ColumnElement[float], v2: sa.ColumnElement[float],
              profit: sa.ColumnElement[float] | None) -> tuple[sa.ColumnElement[float], ...]:
    """Return what a turn's end is worth to a policy, ``(profit, value, second moment)``, from the state move's
    ``reward`` and the value (mean ``v1``, second moment ``v2``) of the state it leads to: its profit is the
    policy's own ``profit`` where it ranks ends by one, else its value."""
    value = reward + v1
    return (value if profit is None else profit), value, moment(reward, v1, v2)
