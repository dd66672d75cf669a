"""Rule ``classify_filters``: which of Spark's filters the source evaluates, each with its level and reason.

Spark offers a scan's conjuncts once (``filters``, answered by :func:`classify`) and carries the
verdicts back with every later request of the negotiation; the rule reads them back, so the
plan and EXPLAIN show the same verdicts Spark acted on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sluice.planner import passthrough
from sluice.planner.rules.base import Draft, Rule, Step
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2
from sluice.sources.base import Source
from sluice.types import TableSchema


def classify(source: Source, table: TableSchema, predicates: list[Any], zone: str) -> list[Verdict]:
    """One verdict per V2 predicate Spark offers, in order; one Sluice cannot read is UNSUPPORTED."""
    if table.query is not None:  # a passthrough runs its SQL as written (sluice/planner/passthrough.py)
        return [Verdict(v2.shown(offered), Level.UNSUPPORTED, passthrough.FILTER_REASON) for offered in predicates]
    verdicts: list[Verdict | None] = []
    candidates = []
    for offered in predicates:
        try:
            candidates.append(v2.to_tree(offered))
            verdicts.append(None)
        except Unsupported as reason:
            verdicts.append(Verdict(v2.shown(offered), Level.UNSUPPORTED, str(reason)))
    classified = iter(source.classify(table, candidates, zone))
    return [verdict if verdict is not None else next(classified) for verdict in verdicts]


class ClassifyFilters(Rule):
    name = "classify_filters"

    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        verdicts = tuple(Verdict.from_dict(v) for v in draft.request.verdicts)
        text = "; ".join(f"{v.level.value} {v.sql}" for v in verdicts)
        return replace(draft, verdicts=verdicts), self.step(text, bool(verdicts))
