"""The demo lake table: spacecraft telemetry readings, and how it is laid out.

Partitioned three ways so every kind of partition pruning shows: ``identity(mission_id)``
(exact for any predicate on the mission), ``day(ts)`` (exact for whole-day ranges,
conservative otherwise) and ``bucket(4, payload_id)`` (equality and IN only). Within each
file rows are sorted by ``payload_id, ts``, so row-group statistics on ``payload_id`` are
tight: a range on payload_id, which no partition can prune, still skips row groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluice.lake.layout import PartitionTerm, SortTerm

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table

NAMESPACE = "telemetry"
TABLE = "readings"
BUCKETS = 4
#: the clustering order within files (Spark sorts each file's rows by these)
CLUSTER_BY = ("payload_id", "ts")
#: the layout as the ingest pipeline takes it (``--partition-by``/``--sort-by`` for a new table)
PARTITION_BY = (
    PartitionTerm("identity", "mission_id"),
    PartitionTerm("day", "ts"),
    PartitionTerm("bucket", "payload_id", BUCKETS),
)
SORT_BY = tuple(SortTerm(name) for name in CLUSTER_BY)


def schema() -> Schema:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DateType, DoubleType, IntegerType, LongType, NestedField, StringType, TimestamptzType

    return Schema(
        NestedField(1, "mission_id", IntegerType(), required=False),
        NestedField(2, "payload_id", LongType(), required=False),
        NestedField(3, "sensor", StringType(), required=False),
        NestedField(4, "ts", TimestamptzType(), required=False),
        NestedField(5, "day", DateType(), required=False),
        NestedField(6, "voltage", DoubleType(), required=False),
        NestedField(7, "temperature", DoubleType(), required=False),
        NestedField(8, "status", StringType(), required=False),
        NestedField(9, "message", StringType(), required=False),
    )


def partition_spec() -> PartitionSpec:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform

    return PartitionSpec(
        PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(), name="mission_id"),
        PartitionField(source_id=4, field_id=1001, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=2, field_id=1002, transform=BucketTransform(BUCKETS), name="payload_id_bucket"),
    )


def create_readings(catalog: Catalog, namespace: str = NAMESPACE, table: str = TABLE) -> Table:
    """Create the readings table (and its namespace) if missing; return it."""
    from pyiceberg.table.sorting import SortField, SortOrder
    from pyiceberg.transforms import IdentityTransform

    catalog.create_namespace_if_not_exists(namespace)
    table_schema = schema()
    order = SortOrder(
        *(
            SortField(source_id=table_schema.find_field(name).field_id, transform=IdentityTransform())
            for name in CLUSTER_BY
        )
    )
    return catalog.create_table_if_not_exists(
        (namespace, table), schema=table_schema, partition_spec=partition_spec(), sort_order=order
    )
