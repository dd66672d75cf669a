"""``x BETWEEN lo AND hi`` -> ``x >= lo AND x <= hi`` inside filters.

Spark defines BETWEEN exactly so; the range form lets each bound be classified (and
split) on its own. Only predicate positions are rewritten, never projections, so result
column names do not change.

>>> import sqlglot
>>> from sluice.planner.predicates import rewrite_predicates
>>> tree = sqlglot.parse_one("SELECT a BETWEEN 1 AND 2 FROM t WHERE a BETWEEN 1 AND 2", read="spark")
>>> rewrite_predicates(tree, rewrite).sql("spark")
'SELECT a BETWEEN 1 AND 2 FROM t WHERE (a >= 1 AND a <= 2)'
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.predicates import rewrite_predicates
from sluice.planner.state import PlanState


def rewrite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Between):
        low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
        high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
        return exp.Paren(this=exp.And(this=low, expression=high))
    return node


def apply(state: PlanState) -> PlanState:
    return replace(state, tree=rewrite_predicates(state.tree, rewrite))
