"""Rule ``push_projection``: the columns the source reads (only those Spark needs).

Spark asks for no column at all for ``count(*)``: the narrowest column is read then, so the
rows still arrive one by one at the smallest cost.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sluice.planner.rules.base import Draft, Rule, Step
from sluice.types import Column, Kind, TableSchema

if TYPE_CHECKING:
    from sluice.sources.base import Source

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
    Kind.COMPLEX: 128,
}


def narrowest(table: TableSchema, source: Source) -> str:
    """The table's column that costs least to read, among those holding no value ``source``'s
    reader may refuse when the table has one: a count(*) read of an infinity date, a NaN numeric
    or 2 in a MySQL TINYINT(1) would fail where the query reads no column."""

    def refusable(column: Column) -> bool:
        return source.dialect.suspect(column) is not None or source.refused(column) is not None

    return min(table.columns, key=lambda column: (refusable(column), WIDTH[column.type.kind])).name


class PushProjection(Rule):
    name = "push_projection"

    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        asked = draft.request.columns
        columns = tuple(draft.table.column(name).name for name in asked) or (narrowest(draft.table, draft.source),)
        if draft.aggregation is not None:
            text = f"read {', '.join(output.name for output in draft.aggregation.outputs)}"
        else:
            text = f"read {', '.join(columns)}" + ("" if asked else " (Spark needs no column: count only)")
        return replace(draft, columns=columns), self.step(text, True)
