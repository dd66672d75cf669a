"""Rule ``push_limit``: whether the source applies Spark's LIMIT (and its ORDER BY, a top-N).

Spark always keeps its own LIMIT and sort (the builder accepts them as partially pushed), so
the source applying them only saves rows: it may, when every filter is EXACT (a superset read
cut at N rows could miss rows Spark keeps) and every sort key orders in the source exactly as
in Spark (same collation, no stored value the reader would refuse).
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner import passthrough
from sluice.planner.rules.base import Draft, Rule, Step
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import Unsupported
from sluice.pushdown.translator import Translator
from sluice.scan import v2
from sluice.scan.query import OrderKey
from sluice.types import Kind

#: the kinds whose order a source may share with Spark (still subject to the dialect's checks)
_ORDERABLE = (
    Kind.INTEGRAL,
    Kind.DECIMAL,
    Kind.FLOAT,
    Kind.DATE,
    Kind.TIMESTAMP,
    Kind.TIMESTAMP_NTZ,
    Kind.BOOLEAN,
    Kind.STRING,
)


class PushLimit(Rule):
    name = "push_limit"

    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        offered = draft.request.limit
        if offered is None:
            return draft, self.step("no LIMIT offered", False)
        if draft.aggregation is not None:
            spark_applies = "LIMIT over pushed aggregates: Spark applies it"
            return replace(draft, limit_note=spark_applies), self.step(spark_applies, True)
        limit, order, note = self._decide(draft, offered)
        decided = replace(draft, limit=limit, order=order, limit_note=note)
        order_text = f" ORDER BY {', '.join(map(_shown, order))}" if order else ""
        return decided, self.step(note or f"LIMIT {limit}{order_text}", True)

    def _decide(self, draft: Draft, limit: int) -> tuple[int | None, tuple[OrderKey, ...], str | None]:
        """The limit and sort keys the source applies, or None and why not."""
        if draft.table.query is not None:
            return None, (), f"LIMIT {limit} not pushed: {passthrough.LIMIT_NOTE}"
        if any(v.level is not Level.EXACT for v in draft.verdicts):
            return None, (), f"LIMIT {limit} not pushed: a filter is not EXACT"
        source, table = draft.source, draft.table
        keys = []
        translator = Translator(source.dialect, table, draft.zone)
        for key in draft.request.order:
            expression = key["expr"]
            column = table.column(expression["ref"][0]) if len(expression.get("ref", [])) == 1 else None
            if column is None:
                return None, (), f"LIMIT {limit} not pushed: it orders by an expression"
            try:
                value = translator.value(v2.to_tree(expression))
            except Unsupported as reason:
                return None, (), f"LIMIT {limit} not pushed: {reason}"
            if (
                value.type.kind not in _ORDERABLE
                or (value.text is not None and value.text.ordering is None)
                or (value.type.kind in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ) and not source.dialect.orders_timestamps)
                or (source.dialect.suspect(column) is not None)
            ):  # some stored values sort differently remotely
                return (
                    None,
                    (),
                    f"LIMIT {limit} not pushed: {source.dialect.name} orders {column.describe()} differently from Spark",
                )
            keys.append(OrderKey(column.name, bool(key["descending"]), bool(key["nulls_first"])))
        return limit, tuple(keys), None


def _shown(key: OrderKey) -> str:
    return f"{key.column} {'DESC' if key.descending else 'ASC'} NULLS {'FIRST' if key.nulls_first else 'LAST'}"
