"""Check a DataFrame against a lake table's schema before anything is written.

A file whose column types differ from the table's would be committed and then misread
(or fail) on every later scan, so the check is strict: every table column must be
present under its exact name, no other column may be, and each type must be the table's
or a safe widening Iceberg itself allows (``int`` to ``bigint``, ``float`` to ``double``,
a wider decimal of the same scale). Every problem is reported at once, each naming the
column, the type the table expects and the type found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluice.errors import ConfigError

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyiceberg.types import IcebergType
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType


def spark_type(iceberg_type: IcebergType) -> DataType:
    """The Spark type Spark's own Parquet writer uses for an Iceberg primitive type."""
    from pyiceberg import types as ice
    from pyspark.sql import types as sp

    simple: dict[type[IcebergType], type[DataType]] = {ice.BooleanType: sp.BooleanType, ice.IntegerType: sp.IntegerType, ice.LongType: sp.LongType,
              ice.FloatType: sp.FloatType, ice.DoubleType: sp.DoubleType, ice.DateType: sp.DateType,
              ice.TimestamptzType: sp.TimestampType, ice.TimestampType: sp.TimestampNTZType,
              ice.StringType: sp.StringType, ice.BinaryType: sp.BinaryType}
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
            problems.append(f"column {field.name}: the table has {expected.simpleString()} "
                            f"(Iceberg {field.field_type}), the input has {actual.simpleString()}")
        elif field.required and found[field.name].nullable:
            problems.append(f"column {field.name}: the table requires a value, the input column may be NULL")
    if problems:
        raise ConfigError(f"cannot append to lake table {table_name}: " + "; ".join(problems))
    return frame.select(*(F.col(field.name).cast(spark_type(field.field_type)).alias(field.name)
                          for field in schema.fields))
