"""Push NOT down to the leaves where three-valued logic allows it.

``NOT (a < b)`` -> ``a >= b`` (NULL stays NULL; Spark orders NaN above every number, so
the comparisons stay complementary), ``NOT (x IS NULL)`` -> ``x IS NOT NULL``,
``NOT NOT p`` -> ``p``, De Morgan for AND/OR. A NOT over an AND with one unpushable part
then splits into pushable pieces. ``NOT (x IN ...)`` and ``NOT LIKE`` stay as they are
(``x NOT LIKE p`` is first unfolded to ``NOT (x LIKE p)``, see
:mod:`sluice.pushdown.negation`).

>>> import sqlglot
>>> from sluice.planner.predicates import rewrite_predicates
>>> tree = sqlglot.parse_one("SELECT * FROM t WHERE NOT (a = 1 OR NOT b < 2)", read="spark")
>>> rewrite_predicates(tree, rewrite).sql("spark")
'SELECT * FROM t WHERE (a <> 1 AND b < 2)'
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.predicates import rewrite_predicates
from sluice.planner.state import PlanState
from sluice.pushdown.negation import unfold_negate

_COMPLEMENT = {exp.EQ: exp.NEQ, exp.NEQ: exp.EQ, exp.LT: exp.GTE, exp.GTE: exp.LT, exp.GT: exp.LTE, exp.LTE: exp.GT}


def negate(node: exp.Expression) -> exp.Expression:
    """NOT ``node``, pushed as deep as three-valued logic allows."""
    while isinstance(node, exp.Paren):
        node = node.this
    if type(node) in _COMPLEMENT:
        return _COMPLEMENT[type(node)](this=node.this.copy(), expression=node.expression.copy())
    if isinstance(node, exp.Not):
        return node.this.copy()
    if isinstance(node, exp.And):
        return exp.Paren(this=exp.Or(this=negate(node.this), expression=negate(node.expression)))
    if isinstance(node, exp.Or):
        return exp.Paren(this=exp.And(this=negate(node.this), expression=negate(node.expression)))
    if isinstance(node, exp.Boolean):
        return exp.Boolean(this=not node.this)
    return exp.Not(this=exp.Paren(this=node.copy()) if not isinstance(node, (exp.Is, exp.Column)) else node.copy())


def rewrite(node: exp.Expression) -> exp.Expression:
    node = unfold_negate(node)
    if isinstance(node, exp.Not):
        return negate(node.this)
    return node


def apply(state: PlanState) -> PlanState:
    return replace(state, tree=rewrite_predicates(state.tree, rewrite))
