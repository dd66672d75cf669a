"""Rule ``push_projection``: the columns the source reads (only those Spark needs).

Spark asks for no column at all for ``count(*)``: the narrowest column is read then, so the
rows still arrive one by one at the smallest cost.
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner.rules.base import Draft, Rule, Step
from sluice.types import Kind, TableSchema

#: bytes per value Spark should assume when sizing a scan (it broadcasts below 10 MiB)
WIDTH = {
    Kind.BOOLEAN: 1,
    Kind.INTEGRAL: 8,
    Kind.FLOAT: 8,
    Kind.DECIMAL: 16,
    Kind.DATE: 4,
    Kind.TIMESTAMP: 8,
    Kind.TIMESTAMP_NTZ: 8,
    Kind.STRING: 32,
    Kind.BINARY: 64,
    Kind.NULL: 1,
}


def narrowest(table: TableSchema) -> str:
    """The table's column that costs least to read."""
    return min(table.columns, key=lambda column: WIDTH[column.type.kind]).name


class PushProjection(Rule):
    name = "push_projection"

    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        asked = draft.request.get("columns") or []
        columns = tuple(draft.table.column(name).name for name in asked) or (narrowest(draft.table),)
        if draft.aggregation is not None:
            text = f"read {', '.join(output.name for output in draft.aggregation.outputs)}"
        else:
            text = f"read {', '.join(columns)}" + ("" if asked else " (Spark needs no column: count only)")
        return replace(draft, columns=columns), self.step(text, True)
