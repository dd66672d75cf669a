"""Rule ``runtime_filters``: the join keys Spark's dynamic pruning hands the scan at run time.

They are classified like filters (:mod:`sluice.planner.runtime` bounds a long key list to its
range first); a key Sluice cannot read as a tree is simply not pushed (Spark joins anyway).
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner import runtime
from sluice.planner.rules.base import Draft, Rule, Step
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2


class RuntimeFilters(Rule):
    name = "runtime_filters"

    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        offered = draft.request.runtime
        if not offered:
            return draft, self.step("no join keys at run time", False)
        found, notes = [], []
        for predicate in offered:
            bounded, note = runtime.bounded(predicate, lambda name: draft.table.column(name).type.kind)
            try:
                found.append(v2.to_tree(bounded))
                notes.append(note)
            except Unsupported:
                continue
        verdicts = tuple(
            replace(v, reason=f"{note}; {v.reason}") if note else v
            for v, note in zip(draft.source.classify(draft.table, found, draft.zone), notes, strict=True)
        )
        text = "; ".join(f"{v.level.value} {runtime.clipped(v.sql)}" for v in verdicts) or "no join key pushed"
        return replace(draft, runtime=verdicts), self.step(text, any(v.level.pushed for v in verdicts))
