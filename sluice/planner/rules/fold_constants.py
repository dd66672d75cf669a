"""Fold constant boolean structure inside filters, respecting three-valued logic.

``TRUE AND x`` -> ``x``, ``FALSE AND x`` -> ``FALSE``, ``TRUE OR x`` -> ``TRUE``,
``FALSE OR x`` -> ``x``, ``NOT TRUE`` -> ``FALSE``; adjacent string literals
(``'a' 'b'``, which Spark concatenates) become one literal. ``NULL AND x`` is left
alone: it is FALSE when x is FALSE and NULL otherwise.

>>> import sqlglot
>>> from sluice.planner.predicates import rewrite_predicates
>>> tree = sqlglot.parse_one("SELECT * FROM t WHERE (1 = 1 OR a) AND TRUE AND b = 'x' 'y'", read="spark")
>>> rewrite_predicates(tree, rewrite).sql("spark")
"SELECT * FROM t WHERE b = 'xy'"
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.predicates import rewrite_predicates
from sluice.planner.state import PlanState


def _truth(node: exp.Expression) -> bool | None:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.EQ) and isinstance(node.this, exp.Literal) and isinstance(node.expression, exp.Literal):
        if node.this.is_string == node.expression.is_string:
            return node.this.this == node.expression.this if node.this.is_string else float(node.this.this) == float(node.expression.this)
    return None


def rewrite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Concat) and all(isinstance(e, exp.Literal) and e.is_string for e in node.expressions):
        return exp.Literal.string("".join(e.this for e in node.expressions))
    if isinstance(node, (exp.And, exp.Or)):
        left, right = _truth(node.this), _truth(node.expression)
        absorbing = isinstance(node, exp.Or)  # TRUE absorbs OR, FALSE absorbs AND
        for value, other in ((left, node.expression), (right, node.this)):
            if value is absorbing:
                return exp.Boolean(this=absorbing)
            if value is (not absorbing):
                return other
        return node
    if isinstance(node, exp.Not):
        value = _truth(node.this)
        if value is not None:
            return exp.Boolean(this=not value)
    if isinstance(node, exp.Paren) and _truth(node.this) is not None:
        return exp.Boolean(this=_truth(node.this))
    if _truth(node) is not None and not isinstance(node, exp.Boolean):
        return exp.Boolean(this=_truth(node))
    return node


def apply(state: PlanState) -> PlanState:
    return replace(state, tree=rewrite_predicates(state.tree, rewrite))
