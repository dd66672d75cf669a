"""Lake tables whose partition values are NULL: one table per partition transform.

Each table is partitioned by a transform of a column holding NULLs, then by identity of
``b`` (NULLs too), so an OR over the two partition columns keeps a file whose first
partition value is NULL through its second. Used by the unit test (the lake source
against DuckDB over the whole table) and the integration test (pushdown on vs off).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

START = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)
#: partition fields per table: (source column, transform) on top of identity(b)
TRANSFORMS = {
    "identity": ("a", "identity"),
    "bucket": ("a", "bucket"),
    "truncate_int": ("a", "truncate"),
    "truncate_text": ("s", "truncate"),
    "year": ("ts", "year"),
    "month": ("ts", "month"),
    "day": ("ts", "day"),
    "hour": ("ts", "hour"),
    "day_of_date": ("d", "day"),
}


def rows() -> pa.Table:
    data = [
        {
            "id": i,
            "a": None if i % 3 == 0 else i,
            "b": None if i % 7 == 0 else i % 5,
            "s": None if i % 4 == 0 else f"v{i}",
            "ts": None if i % 5 == 0 else START + dt.timedelta(hours=7 * i),
            "d": None if i % 6 == 0 else (START + dt.timedelta(hours=7 * i)).date(),
        }
        for i in range(60)
    ]
    return pa.Table.from_pylist(data, schema=schema().as_arrow())


def schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DateType, LongType, NestedField, StringType, TimestamptzType

    return Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "a", LongType(), required=False),
        NestedField(3, "b", LongType(), required=False),
        NestedField(4, "s", StringType(), required=False),
        NestedField(5, "ts", TimestamptzType(), required=False),
        NestedField(6, "d", DateType(), required=False),
    )


def write_tables(catalog: Any, namespace: str) -> None:
    """One table per entry of :data:`TRANSFORMS` in ``namespace``, two rows per row group."""
    from pyiceberg import transforms
    from pyiceberg.partitioning import PartitionField, PartitionSpec

    first: dict[str, transforms.Transform[Any, Any]] = {
        "identity": transforms.IdentityTransform(),
        "bucket": transforms.BucketTransform(3),
        "truncate": transforms.TruncateTransform(10),
        "year": transforms.YearTransform(),
        "month": transforms.MonthTransform(),
        "day": transforms.DayTransform(),
        "hour": transforms.HourTransform(),
    }
    catalog.create_namespace_if_not_exists(namespace)
    table_schema = schema()
    for table, (column, transform) in TRANSFORMS.items():
        source_id = table_schema.find_field(column).field_id
        spec = PartitionSpec(
            PartitionField(
                source_id,
                1000,
                transforms.TruncateTransform(2) if column == "s" else first[transform],
                f"{column}_{transform}",
            ),
            PartitionField(3, 1001, transforms.IdentityTransform(), "b"),
        )
        catalog.create_table(
            (namespace, table),
            schema=table_schema,
            partition_spec=spec,
            properties={"write.parquet.row-group-limit": "2"},
        ).append(rows())
