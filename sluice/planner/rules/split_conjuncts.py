"""Flatten every filter into a left-deep chain of its AND-ed conjuncts.

``(a AND (b AND c))`` -> ``a AND b AND c``: each conjunct is then placed and classified
on its own (DESIGN.md, composition).

>>> import sqlglot
>>> from sluice.planner.predicates import and_all, conjuncts
>>> tree = sqlglot.parse_one("SELECT * FROM t WHERE (a = 1 AND (b = 2 AND c = 3))", read="spark")
>>> [c.sql("spark") for c in conjuncts(tree.args["where"].this)]
['a = 1', 'b = 2', 'c = 3']
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner.predicates import and_all, condition_of, conjuncts, predicate_slots, set_condition
from sluice.planner.state import PlanState


def apply(state: PlanState) -> PlanState:
    tree = state.tree.copy()
    for slot in list(predicate_slots(tree)):
        set_condition(slot, and_all([c.copy() for c in conjuncts(condition_of(slot))]))
    return replace(state, tree=tree)
