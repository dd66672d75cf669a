"""Check a DataFrame against a lake table's schema before anything is written.

A file whose column types differ from the table's would be committed and then misread
(or fail) on every later scan, so the check is strict: every table column must be
present under its exact name, no other column may be, and each type must be the table's
or a safe widening Iceberg itself allows (``int`` to ``bigint``, ``float`` to ``double``,
a wider decimal of the same scale). Every problem is reported at once, each naming the
column, the type the table expects and the type found.

An append may also evolve the table (:func:`evolution`): a column the table lacks is
added (optional, at the end), and a column whose input type is wider than the table's is
widened the ways Iceberg allows (``int`` to ``long``, ``float`` to ``double``, a decimal's
precision at the same scale). Any other difference is refused with the column named.
The changes are applied in the same transaction as the job's snapshot
(:mod:`sluice.lake.commit`), so a failed job changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluice.errors import ConfigError

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table, Transaction
    from pyiceberg.types import IcebergType
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType


def spark_type(iceberg_type: IcebergType) -> DataType:
    """The Spark type Spark's own Parquet writer uses for an Iceberg primitive type."""
    from pyiceberg import types as ice
    from pyspark.sql import types as sp

    simple: dict[type[IcebergType], type[DataType]] = {
        ice.BooleanType: sp.BooleanType,
        ice.IntegerType: sp.IntegerType,
        ice.LongType: sp.LongType,
        ice.FloatType: sp.FloatType,
        ice.DoubleType: sp.DoubleType,
        ice.DateType: sp.DateType,
        ice.TimestamptzType: sp.TimestampType,
        ice.TimestampType: sp.TimestampNTZType,
        ice.StringType: sp.StringType,
        ice.BinaryType: sp.BinaryType,
    }
    if type(iceberg_type) in simple:
        return simple[type(iceberg_type)]()
    if isinstance(iceberg_type, ice.DecimalType):
        return sp.DecimalType(iceberg_type.precision, iceberg_type.scale)
    raise ConfigError(f"the ingest pipeline writes primitive columns only, not {iceberg_type}")


def is_safe_widening(found: DataType, expected: DataType) -> bool:
    """True when every ``found`` value converts to ``expected`` exactly (no rounding, no overflow)."""
    from pyspark.sql import types as sp

    if isinstance(found, sp.DecimalType) and isinstance(expected, sp.DecimalType):
        return found.scale == expected.scale and found.precision <= expected.precision
    integral_rank: dict[type[DataType], int] = {sp.ByteType: 1, sp.ShortType: 2, sp.IntegerType: 3, sp.LongType: 4}
    if type(found) in integral_rank and type(expected) in integral_rank:
        return integral_rank[type(found)] <= integral_rank[type(expected)]
    return isinstance(found, sp.FloatType) and isinstance(expected, sp.DoubleType)


def conform(frame: DataFrame, schema: Schema, table_name: str) -> DataFrame:
    """``frame`` with the table's columns in the table's order and types; a mismatch is a ConfigError."""
    from pyspark.sql import functions as F

    found = {field.name: field for field in frame.schema.fields}
    table_columns = {field.name for field in schema.fields}
    problems = []
    missing = [field.name for field in schema.fields if field.name not in found]
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}")
    extra = [name for name in found if name not in table_columns]
    if extra:
        problems.append(f"column(s) {', '.join(extra)} not in the table")
    for field in schema.fields:
        if field.name not in found:
            continue
        expected, actual = spark_type(field.field_type), found[field.name].dataType
        if actual != expected and not is_safe_widening(actual, expected):
            problems.append(
                f"column {field.name}: the table has {expected.simpleString()} "
                f"(Iceberg {field.field_type}), the input has {actual.simpleString()}"
            )
        elif field.required and found[field.name].nullable:
            problems.append(f"column {field.name}: the table requires a value, the input column may be NULL")
    if problems:
        raise ConfigError(f"cannot append to lake table {table_name}: " + "; ".join(problems))
    return frame.select(
        *(F.col(field.name).cast(spark_type(field.field_type)).alias(field.name) for field in schema.fields)
    )


@dataclass(frozen=True)
class Evolution:
    """The schema changes an append makes: columns to add and columns to widen (name, Iceberg type)."""

    added: tuple[tuple[str, IcebergType], ...] = ()
    widened: tuple[tuple[str, IcebergType], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.widened)

    def __str__(self) -> str:
        parts = [f"add {name} {kind}" for name, kind in self.added]
        parts += [f"widen {name} to {kind}" for name, kind in self.widened]
        return ", ".join(parts) or "no schema change"

    def apply(self, transaction: Transaction) -> None:
        """Stage the changes in ``transaction`` (nothing is committed here)."""
        if not self:
            return
        with transaction.update_schema() as update:
            for name, kind in self.added:
                update.add_column(name, kind)
            for name, kind in self.widened:
                update.update_column(name, field_type=kind)


def iceberg_widens(table_type: IcebergType, input_type: IcebergType) -> bool:
    """True when Iceberg allows changing a column of ``table_type`` to ``input_type``."""
    from pyiceberg import types as ice

    if isinstance(table_type, ice.IntegerType):
        return isinstance(input_type, ice.LongType)
    if isinstance(table_type, ice.FloatType):
        return isinstance(input_type, ice.DoubleType)
    if isinstance(table_type, ice.DecimalType) and isinstance(input_type, ice.DecimalType):
        return input_type.scale == table_type.scale and input_type.precision > table_type.precision
    return False


def evolution(frame: DataFrame, schema: Schema, table_name: str, held: dict[str, int] | None = None) -> Evolution:
    """The changes appending ``frame`` makes to a table of ``schema``; a change Iceberg does not
    allow is a ConfigError naming every column concerned.

    ``held`` maps the names the table's older files may hold to their field ids
    (:func:`sluice.lake.fields.names_held`, files without field ids): a new column cannot
    take one of them, or those files' values (of a dropped column, or under a renamed
    column's old name) would read as the new column's."""
    from sluice.lake.layout import iceberg_type

    known = {field.name: field for field in schema.fields}
    added, widened, refused = [], [], []
    missing = [name for name in known if name not in frame.columns]
    if missing:
        refused.append(f"missing column(s) {', '.join(missing)}")
    for column in frame.schema.fields:
        field = known.get(column.name)
        if field is None:
            if column.name.lower() in {name.lower() for name in known}:
                refused.append(f"column {column.name}: the table has it spelled differently; names must match exactly")
                continue
            if held and column.name in held:
                refused.append(
                    f"column {column.name}: the table's older data files hold a column of that name for another "
                    f"field (id {held[column.name]}, dropped or renamed since) without field ids, whose values it "
                    "would read; name the new column differently, or rewrite those files first (sluice lake optimize)"
                )
                continue
            added.append((column.name, iceberg_type(column.dataType, column.name)))
            continue
        found = column.dataType
        expected = spark_type(field.field_type)
        if found == expected or is_safe_widening(found, expected):
            continue
        try:
            wider = iceberg_type(found, column.name)
        except ConfigError:
            wider = None
        if wider is not None and iceberg_widens(field.field_type, wider):
            widened.append((column.name, wider))
        else:
            refused.append(
                f"column {column.name}: the table has {expected.simpleString()} (Iceberg "
                f"{field.field_type}), the input has {found.simpleString()} (Iceberg widens only int to "
                "long, float to double and a decimal's precision at the same scale)"
            )
    if refused:
        raise ConfigError(f"cannot append to lake table {table_name}: " + "; ".join(refused))
    return Evolution(tuple(added), tuple(widened))


def evolved_schema(table_schema: Schema, change: Evolution, table: Table) -> Schema:
    """The table's schema after ``change``, as the commit will make it (same field ids)."""
    if not change:
        return table_schema
    transaction = table.transaction()
    change.apply(transaction)
    return transaction.table_metadata.schema()
