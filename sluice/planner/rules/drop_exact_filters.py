"""Remove from the Spark-side tree every conjunct its scan evaluates EXACTLY.

INEXACT and UNSUPPORTED conjuncts stay: Spark evaluates them over what the scan returns
(for INEXACT, the source has already narrowed the rows to a superset).
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner.predicates import and_all, condition_of, conjuncts, predicate_slots, set_condition
from sluice.planner.state import CANDIDATE, PlanState
from sluice.pushdown.levels import Level


def apply(state: PlanState) -> PlanState:
    exact = {(s.scan_id, i) for s in state.scans for i, v in enumerate(s.verdicts) if v.level is Level.EXACT}
    tree = state.tree.copy()
    for slot in list(predicate_slots(tree)):
        parts = conjuncts(condition_of(slot))
        kept = [c for c in parts if c.meta.get(CANDIDATE) not in exact]
        if len(kept) != len(parts):
            set_condition(slot, and_all(kept))
    return replace(state, tree=tree)
