"""Rule ``push_aggregates``: whether the source answers Spark's GROUP BY and aggregates completely.

The decision is :mod:`sluice.planner.aggregates`'s; Spark asks it (``aggregate``) before it
pushes, and the rule asks it again from the same request, so EXPLAIN shows what Spark did.

Over a pushed join (Spark 4.3 offers the joined scan builder the aggregate above the join when
nothing is left between them) the same classifier decides, over the join's outputs as one table
(:meth:`JoinRead.read_table`: each output keeps its column's type, collation and checks): the
join itself was pushed only with every side's filter EXACT, so the joined rows are Spark's.
One case is refused whatever the items: after an AVG is declined Spark rewrites it into SUM and
COUNT and names their columns by the *left table's* attributes, not the join's aliases, so a
column of the right side whose name the left side also has (aliased ``id_1`` in the offer) would
be read as the left one's.
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
from sluice.scan.join import JoinRead
from sluice.sources.base import Source
from sluice.types import table_from_dict


def decide(source: Source, request: ScanRequest, offered: JsonObject) -> Decision:
    """The decision on the aggregation Spark offers the request's scan."""
    if request.join is not None:
        return _over_join(source, request, JoinRead.from_dict(request.join), offered)
    table = table_from_dict(request.table["table"])
    if table.query is not None:
        return Decision(False, (), None, passthrough.AGGREGATE_NOTE)
    filters = [Verdict.from_dict(v) for v in request.verdicts]
    return aggregates.answer(source, table, offered, filters, request.ansi, request.zone)


#: why an offer Spark rewrote from AVG is not pushed over a join whose outputs are aliased
ALIASED_AVG = (
    "AVG over a pushed join whose columns Spark aliased ({aliased}): Spark names the SUM and COUNT it "
    "rewrites the AVG into by the tables' own column names, which the joined read cannot tell apart; "
    "Spark aggregates the joined rows"
)


def _over_join(source: Source, request: ScanRequest, join: JoinRead, offered: JsonObject) -> Decision:
    """The decision on an aggregation Spark offers above a pushed join."""
    aliased = [o for o in join.outputs if o.name.lower() != o.column.lower()]
    if offered.get("averaged") and aliased:
        shown = ", ".join(f"{o.side}.{o.column} as {o.name}" for o in aliased)
        return Decision(False, (), None, ALIASED_AVG.format(aliased=shown))
    joined = join.read_table(tuple(o.name for o in join.outputs))
    return aggregates.answer(source, joined, offered, [], request.ansi, request.zone)


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
