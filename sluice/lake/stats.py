"""Parquet row-group statistics in the shape Iceberg's metrics evaluators read.

PyIceberg evaluates a data file's column bounds with ``_InclusiveMetricsEvaluator`` and
``_StrictMetricsEvaluator``; they read ``record_count``, ``value_counts``,
``null_value_counts``, ``nan_value_counts`` and serialised ``lower_bounds`` /
``upper_bounds``. A row group offers the same facts in its footer, so the same
evaluators prune row groups too, with the same semantics.

A statistic is used only when it can be trusted (DESIGN.md section 2, "Statistics"):

* float min/max leave NaN out (or may *be* NaN): a NaN bound is dropped, and NaN counts
  are never claimed (absent means unknown, so ``is_nan`` never prunes);
* ``-0.0`` and ``+0.0`` are one value to Spark: a zero lower bound becomes ``-0.0`` and a
  zero upper bound ``+0.0``;
* INT96 timestamps, nanosecond timestamps, unsigned integers and text that is not
  UTF-8 get no bounds at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pyarrow.parquet as pq
from pyiceberg.conversions import to_bytes
from pyiceberg.schema import Schema
from pyiceberg.table.name_mapping import NameMapping, create_mapping_from_schema
from pyiceberg.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    PrimitiveType,
    StringType,
    TimestampType,
    TimestamptzType,
)

from sluice.lake.fields import file_columns

_TIME_UNIT_TO_MICROS = {"milliseconds": 1000, "microseconds": 1}


@dataclass(frozen=True)
class RowGroupMetrics:
    """One row group's statistics, keyed by Iceberg field id (what the evaluators read)."""

    index: int
    record_count: int
    #: compressed size of each column chunk: what reading that column costs
    column_bytes: dict[str, int] = field(default_factory=dict)
    value_counts: dict[int, int] = field(default_factory=dict)
    null_value_counts: dict[int, int] = field(default_factory=dict)
    nan_value_counts: dict[int, int] = field(default_factory=dict)  # never filled: unknown
    lower_bounds: dict[int, bytes] = field(default_factory=dict)
    upper_bounds: dict[int, bytes] = field(default_factory=dict)


def row_group_metrics(
    metadata: pq.FileMetaData, schema: Schema, mapping: NameMapping | None = None
) -> list[RowGroupMetrics]:
    """Statistics of every row group of a file, for the table's top-level columns.

    A file's columns are matched to the table's by field id (:mod:`sluice.lake.fields`), so
    a column renamed after the file was written keeps its statistics, and a column dropped
    and added again under the same name is not mistaken for the old one. ``column_bytes``
    is keyed by the table's name of each column. Without ``mapping`` a file without field ids
    is matched by the names ``schema`` has.
    """
    mapping = mapping or create_mapping_from_schema(schema)
    table_fields = {f.field_id: f for f in schema.fields}
    by_name = {
        column: table_fields[field_id]
        for field_id, column in file_columns(metadata.schema.to_arrow_schema(), mapping).items()
        if field_id in table_fields
    }
    groups = []
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        metrics = RowGroupMetrics(index, group.num_rows)
        for position in range(group.num_columns):
            chunk = group.column(position)
            iceberg_field = by_name.get(chunk.path_in_schema)
            if iceberg_field is None:
                continue  # nested, dropped or unknown columns: no statistics, no pruning
            metrics.column_bytes[iceberg_field.name] = chunk.total_compressed_size
            field_id = iceberg_field.field_id
            metrics.value_counts[field_id] = chunk.num_values
            stats = chunk.statistics
            if stats is None:
                continue
            if stats.has_null_count:
                metrics.null_value_counts[field_id] = stats.null_count
            bounds = _bounds(stats, chunk, iceberg_field.field_type)
            if bounds is not None:
                metrics.lower_bounds[field_id], metrics.upper_bounds[field_id] = bounds
        groups.append(metrics)
    return groups


def _bounds(stats: Any, chunk: Any, field_type: IcebergType) -> tuple[bytes, bytes] | None:
    """Serialised (lower, upper) bounds, or None when they cannot be trusted."""
    if not stats.has_min_max or chunk.physical_type == "INT96":
        return None
    logical = stats.logical_type
    if logical.type == "INT" and '"isSigned":false' in logical.to_json():
        return None
    low, high = stats.min_raw, stats.max_raw
    if isinstance(field_type, (TimestampType, TimestamptzType)):
        unit = logical.to_json()
        scale = next((v for k, v in _TIME_UNIT_TO_MICROS.items() if f'"timeUnit":"{k}"' in unit), None)
        if scale is None or not isinstance(low, int):
            return None  # nanoseconds, or an unexpected physical form
        low, high = low * scale, high * scale
    elif isinstance(field_type, StringType):
        try:
            low, high = bytes(low).decode("utf-8"), bytes(high).decode("utf-8")
        except (UnicodeDecodeError, TypeError):
            return None
    elif isinstance(field_type, DecimalType):
        low, high = stats.min, stats.max
    elif isinstance(field_type, (DoubleType, FloatType)):
        if math.isnan(low) or math.isnan(high):
            return None
        low = -0.0 if low == 0 else low
        high = 0.0 if high == 0 else high
    elif isinstance(field_type, DateType) and not isinstance(low, int):
        return None
    if not isinstance(field_type, PrimitiveType):
        return None
    try:
        return to_bytes(field_type, low), to_bytes(field_type, high)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
