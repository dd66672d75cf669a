"""Aggregates a lake table answers from metadata, reading no data file.

Parquet footers record each row group's row count and, per column, its value count, null
count and bounds. Where those facts are the answer they are used instead of the rows:
``COUNT(*)`` over row groups strict evaluation kept whole is the sum of their row counts,
and ``MIN``/``MAX`` of an integer or date column is the least lower bound (greatest upper
bound) of the row groups holding a non-NULL value. Text bounds may be truncated by writers
and float bounds leave NaN out, so those are read; so is any row group without a trusted
bound (:mod:`sluice.lake.stats` keeps only bounds it trusts). A footer counts the rows a
data file holds, deleted ones too: the caller never asks when a kept file has delete files
(:mod:`sluice.lake.deletes`), so every row a footer counts here is a live row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyiceberg.conversions import from_bytes
from pyiceberg.types import DateType, IntegerType, LongType

if TYPE_CHECKING:
    from pyiceberg.schema import Schema

    from sluice.lake.pyramid import FileRead
    from sluice.scan.aggregation import Output

#: Iceberg types whose Parquet bounds are exact values (never truncated, no NaN)
_EXACT_BOUNDS = (IntegerType, LongType, DateType)


def from_metadata(schema: Schema, mapping: str, reads: list[FileRead], outputs: tuple[Output, ...]) -> list[Any] | None:
    """Each output's value from the kept row groups' statistics, or None when one is not exactly known.

    The caller guarantees there is no GROUP BY, that every kept row group holds only rows
    matching the pushed filters (strict evaluation cleared every file), and that no kept
    file has delete files.
    """
    from sluice.lake.pyramid import row_group_metrics_of

    values: list[Any] = []
    for output in outputs:
        if output.function == "COUNT_STAR":
            values.append(sum(read.rows for read in reads))
            continue
        if output.function not in ("MIN", "MAX") or output.column is None:
            return None
        field = schema.find_field(output.column, case_sensitive=False)
        if not isinstance(field.field_type, _EXACT_BOUNDS):
            return None
        bounds = []
        for read in reads:
            groups = {group.index: group for group in row_group_metrics_of(read.path, schema, mapping)}
            for index in read.row_groups:
                group = groups[index]
                count, nulls = group.value_counts.get(field.field_id), group.null_value_counts.get(field.field_id)
                if count is None or nulls is None:
                    return None
                if count == nulls:
                    continue  # only NULLs here: no bound, nothing to MIN over
                bound = (group.lower_bounds if output.function == "MIN" else group.upper_bounds).get(field.field_id)
                if bound is None:
                    return None
                bounds.append(from_bytes(field.field_type, bound))
        values.append((min if output.function == "MIN" else max)(bounds) if bounds else None)
    return values
