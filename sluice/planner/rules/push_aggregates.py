"""Rule ``push_aggregates``: whether the source answers Spark's GROUP BY and aggregates completely.

The decision is :mod:`sluice.planner.aggregates`'s; Spark asks it (``aggregate``) before it
pushes, and the rule asks it again from the same request, so EXPLAIN shows what Spark did.
"""

from __future__ import annotations

from dataclasses import replace

from sluice.errors import ConfigError
from sluice.planner import aggregates, passthrough
from sluice.planner.rules.base import Draft, Rule, Step
from sluice.protocol.codec import JsonObject
from sluice.protocol.scan import ScanRequest
from sluice.pushdown.levels import Verdict
from sluice.scan.aggregation import Decision
from sluice.sources.base import Source
from sluice.types import table_from_dict


def decide(source: Source, request: ScanRequest, offered: JsonObject) -> Decision:
    """The decision on the aggregation Spark offers the request's scan."""
    if request.join is not None:
        return Decision(False, (), None, "aggregates over a pushed join: Spark aggregates the joined rows")
    table = table_from_dict(request.table["table"])
    if table.query is not None:
        return Decision(False, (), None, passthrough.AGGREGATE_NOTE)
    filters = [Verdict.from_dict(v) for v in request.verdicts]
    return aggregates.answer(source, table, offered, filters, request.ansi, request.zone)


class PushAggregates(Rule):
    name = "push_aggregates"

    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        request = draft.request
        offered = request.aggregation or request.aggregation_offered
        if not offered:
            return draft, self.step("no aggregate offered", False)
        grouped = decide(draft.source, request, offered)
        pushed = request.aggregation is not None
        aggregation = grouped.aggregation if pushed else None
        if pushed and aggregation is None:  # Spark pushed what the planner refused: never
            raise ConfigError("Spark pushed an aggregation the planner did not accept")
        head = (
            "aggregates pushed completely"
            if grouped.complete
            else f"aggregates not pushed{': ' + grouped.note if grouped.note else ''}"
        )
        text = "; ".join([head] + [f"{v.level.value} {v.sql}" for v in grouped.verdicts])
        return replace(draft, grouped=grouped, aggregation=aggregation), self.step(text, grouped.complete)
