"""Iceberg lake tables: one catalog per run, every table partitioned and clustered at random.

The lake's answer comes through the pruning pyramid, so each table is laid out to make
pruning act: up to two partition fields drawn from the columns (identity, ``day()`` on
timestamps, ``bucket(3)`` on integers and text), rows sorted by a random column before
writing, and a few rows per row group. Iceberg has no 16-bit integer: smallint columns
are ints. Text has one variant (Parquet strings are bytes).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from fuzz.loaders.base import ServerLoader
from fuzz.tables import ColumnSpec, Table, run_independent

_PARTITIONABLE = {"smallint", "int", "bigint", "string", "date", "timestamp", "boolean"}


class LakeLoader(ServerLoader):
    source = "lake"
    scheme = "iceberg+sqlite"
    text_variants = ("plain",)
    namespace = "sluice_fuzz"

    @property
    def url(self) -> str:
        return f"iceberg+sqlite:///{self.folder / 'lake' / 'catalog.db'}"

    def column_type(self, column: ColumnSpec) -> str:
        return str(_iceberg_type(column))

    def prepare(self) -> None:
        self._catalog().create_namespace_if_not_exists(self.namespace)

    def execute(self, statements: list[str], insert: str | None, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError("lake tables are written with PyIceberg, not SQL")

    def load(self, table: Table) -> None:
        import pyarrow as pa
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField

        self.drop(table.name)
        fields = [NestedField(1, "id", LongType(), required=False)]
        fields += [NestedField(i + 2, c.name, _iceberg_type(c), required=False) for i, c in enumerate(table.columns)]
        schema = Schema(*fields)
        # the layout follows the table, not the run: the name's pid prefix would make a finding unrepeatable
        layout = random.Random(run_independent(table.name) + str(len(table.rows)))
        created = self._catalog().create_table(
            (self.namespace, table.name),
            schema=schema,
            partition_spec=_partition_spec(schema, table, layout),
            properties={"write.parquet.row-group-limit": str(layout.choice([2, 3, 5]))},
        )
        arrow_schema = schema.as_arrow()
        columns: list[Sequence[Any]] = list(zip(*self.stored_rows(table))) if table.rows else [[] for _ in fields]
        data = pa.table(
            [pa.array(values, arrow_schema.field(i).type) for i, values in enumerate(columns)], schema=arrow_schema
        )
        sort_column = layout.choice([f.name for f in fields])
        created.append(data.sort_by([(sort_column, "ascending")]))

    def drop(self, name: str) -> None:
        catalog = self._catalog()
        if catalog.table_exists((self.namespace, name)):
            catalog.purge_table((self.namespace, name))

    def _catalog(self):
        from sluice.lake.catalog import LakeLocation, open_catalog

        return open_catalog(LakeLocation.from_url(self.url), create=True)


def _iceberg_type(column: ColumnSpec) -> Any:
    from pyiceberg import types

    simple = {
        "smallint": types.IntegerType(),
        "int": types.IntegerType(),
        "bigint": types.LongType(),
        "double": types.DoubleType(),
        "real": types.FloatType(),
        "string": types.StringType(),
        "date": types.DateType(),
        "timestamp": types.TimestamptzType(),
        "timestamp_ntz": types.TimestampType(),
        "boolean": types.BooleanType(),
    }
    if column.kind == "decimal":
        return types.DecimalType(column.precision, column.scale)
    return simple[column.kind]


def _partition_spec(schema: Any, table: Table, layout: random.Random) -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform

    candidates = [c for c in table.columns if c.kind in _PARTITIONABLE]
    chosen = layout.sample(candidates, k=min(len(candidates), layout.choice([0, 1, 2])))
    fields = []
    for index, column in enumerate(chosen):
        if column.kind == "timestamp":
            transform: Any = DayTransform()
        elif column.kind in ("int", "bigint", "string") and layout.random() < 0.5:
            transform = BucketTransform(3)
        else:
            transform = IdentityTransform()
        fields.append(
            PartitionField(
                schema.find_field(column.name).field_id,
                1000 + index,
                transform,
                f"{column.name}_{str(transform).split('[')[0].lower()}",
            )
        )
    return PartitionSpec(*fields)
