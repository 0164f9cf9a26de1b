"""Spark SQL's lambdas as text, for the folds that run a solve inside rows (:mod:`dicegraph.store.backends.spark.turn_fold`,
:mod:`dicegraph.store.backends.spark.graph_fold`): SQLAlchemy has no construct for a lambda, so these expressions are written out.
"""

from __future__ import annotations

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from dicegraph.graphs.protocol import TIE


class SparkText(ColumnElement):
    """An expression of Spark SQL's own, as text (a lambda, say).

    >>> import sqlalchemy as sa
    >>> str(sa.select(SparkText("transform(a, x -> x + 1)").label("b")))
    'SELECT transform(a, x -> x + 1) AS b'
    """

    inherit_cache = False

    def __init__(self, text: str):
        self.text = text


@compiles(SparkText)
def _spark_text(element: SparkText, compiler: object, **kw: object) -> str:
    return element.text


STORED_MOVE = "array_position(n.o, try_element_at(keyed.given, n.id))"  # node n's stored move: 1 + its index, 0 if none


def let(value: str, name: str, body: str) -> str:
    """Return the text of ``body`` with ``name`` bound to ``value``, evaluated once (a one-element ``transform``).

    >>> let("2 * x", "y", "y + y")
    'transform(array(2 * x), y -> y + y)[0]'
    """
    return f"transform(array({value}), {name} -> {body})[0]"


def over_edges(start: str, step: str) -> str:
    """Return the fold of node ``n``'s edges from ``start``: ``step`` in terms of ``a`` (so far) and ``k``, the
    edge's index in the node's arrays (``n.ix``: 0, 1, ...).

    >>> over_edges("0D", "a + n.w[k]")
    'aggregate(n.ix, 0D, (a, k) -> a + n.w[k])'
    """
    return f"aggregate(n.ix, {start}, (a, k) -> {step})"


def best_move(profit: str, best: str, objective: str = "max") -> tuple[str, str]:
    """Return the texts of node ``n``'s best ``profit`` (over its edges, for ``objective``; null if no edge has one)
    and of the index of the move taken: the first edge whose profit is within :data:`dicegraph.graphs.protocol.TIE`,
    relative, of ``best`` (the text naming the best once bound), -1 if none (the rule of
    :func:`dicegraph.store.solve.layers.best_move_rows`).

    >>> best_move("n.r[k]", "b[j]")[0]
    'aggregate(n.ix, CAST(NULL AS DOUBLE), (a, k) -> greatest(a, n.r[k]))'
    """
    slack = f"{TIE!r}D * (1D + abs({best}))"
    near = f"{profit} >= {best} - {slack}" if objective == "max" else f"{profit} <= {best} + {slack}"
    return (over_edges("CAST(NULL AS DOUBLE)", f"{'greatest' if objective == 'max' else 'least'}(a, {profit})"),
            over_edges("-1", f"IF(a >= 0 OR NOT coalesce({near}, false), a, k)"))


def with_layer_moves(child: str, best: str, taken: str, body: str) -> str:
    """Return ``body`` with three arrays over ``layer``'s nodes bound: ``t``, a chance node's total weight over its
    edges whose ``child`` has a value (null if none, or for a decision node); ``b``, a decision node's ``best``
    (null for a chance node); ``m``, the index of the move a decision node takes, ``taken`` (text over ``b[j]``,
    ``n`` and ``j``, the node's index in the layer).

    >>> with_layer_moves("v[n.d[k]]", "0D", "0", "t")[:40]
    'transform(array(transform(layer, n -> IF'
    """
    total = over_edges("0D", f"a + IF({child} IS NULL, 0D, n.w[k])")
    for name, value in reversed((("t", f"transform(layer, n -> IF(n.chance, NULLIF({total}, 0D), NULL))"),
                                 ("b", f"transform(layer, n -> IF(n.chance, NULL, {best}))"),
                                 ("m", f"transform(layer, (n, j) -> {taken})"))):
        body = let(value, name, body)
    return body
