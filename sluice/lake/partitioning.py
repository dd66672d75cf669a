"""Iceberg partition values computed in Spark, and read back from the folders Spark writes.

The ingest job asks Spark to write one folder per partition: it adds one column per
partition field (the transform applied to its source column), repartitions and
``partitionBy``-s on those columns, and Spark drops them from the files. The commit then
reads each file's partition record back from its folder names. This module is the one
place that knows both halves of that contract, so they cannot drift apart.

Iceberg's transforms must be reproduced exactly, or a file lands in the wrong partition
and partition pruning later skips rows it should return:

- ``identity`` is the value (a string behind a ``_``: see :class:`PartitionColumn`);
- ``day`` of a timestamptz is whole days since 1970-01-01 *in UTC*, whatever the Spark
  session's time zone (so it is computed from ``unix_micros``, never ``to_date``);
- every other transform (year, month, hour, day of a date, bucket, truncate) is PyIceberg's
  own Arrow implementation (``pyiceberg-core``, Iceberg's Rust library) in an Arrow UDF, so it
  cannot differ from what Iceberg readers expect. Spark has no Iceberg bucket (its ``hash`` is
  murmur3 with seed 42, Iceberg's seed 0).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pyarrow as pa

from sluice.errors import ConfigError, SluiceError

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyspark.sql import Column

MICROS_PER_DAY = 86_400_000_000
#: what Spark writes as the folder value of a NULL partition column
SPARK_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
EPOCH = dt.date(1970, 1, 1)


def utc_day_number(column: Column) -> Column:
    """Whole days since 1970-01-01 in UTC of a TIMESTAMP column (floor, also before 1970)."""
    from pyspark.sql import functions as F

    micros = F.unix_micros(column)
    return ((micros - F.pmod(micros, F.lit(MICROS_PER_DAY))) / F.lit(MICROS_PER_DAY)).cast("int")


def utc_day(column: Column) -> Column:
    """The UTC calendar date of a TIMESTAMP column, whatever the session time zone."""
    from pyspark.sql import functions as F

    return F.date_from_unix_date(utc_day_number(column))


@dataclass(frozen=True)
class PartitionColumn:
    """One partition field as Spark computes it: the folder key and the column's value.

    ``kind`` is ``identity``, ``day`` (of a timestamptz, folders named by the UTC date) or
    ``transform``: any other Iceberg transform (year, month, hour, day of a date, bucket,
    truncate), computed by PyIceberg's own Arrow implementation (``pyiceberg-core``) in an
    Arrow UDF (:func:`arrow_transform`).
    ``value_type`` is the Iceberg type of the partition value (how the folder value reads
    back). A string value is written with a ``_`` in front: Spark writes an empty string's
    folder as NULL's, and the prefix keeps the two apart.
    """

    folder_key: str
    source_name: str
    kind: str
    transform: str = ""  # Iceberg's name of the transform, for kind "transform"
    source_type: str = ""  # Iceberg's name of the source column's type, for kind "transform"
    value_type: str = "int"

    def spark_column(self) -> Column:
        from pyspark.sql import functions as F

        source = F.col(self.source_name)
        if self.kind == "identity":
            value = source
        elif self.kind == "day":
            value = utc_day(source)  # a DATE, so folders read ts_day=2025-03-01
        else:
            value = transform_column(source, self.transform, self.source_type, self.value_type)
        return F.concat(F.lit(STRING_PREFIX), value) if self.value_type == "string" else value

    def value_from_folder(self, text: str) -> object:
        """The partition record's value for this field from its folder value (days for ``day``)."""
        if text == SPARK_NULL_PARTITION:
            return None
        if self.kind == "day" or self.value_type == "date":
            return (dt.date.fromisoformat(text) - EPOCH).days
        if self.value_type == "string":
            return unquote(text)[len(STRING_PREFIX) :]  # Spark escapes /, =, % ... as %XX
        if self.value_type == "boolean":
            return text == "true"
        if self.value_type.startswith("decimal"):
            return Decimal(text)
        return int(text)


#: the folder value of a string partition starts with this (Spark writes '' as NULL)
STRING_PREFIX = "_"
#: source types each kind of partition field is written from
_IDENTITY_TYPES = ("int", "long", "string", "date", "boolean", "decimal")
_TIME_TYPES = ("date", "timestamptz", "timestamp")
_BUCKET_TYPES = ("int", "long", "string", "date", "timestamptz", "timestamp", "decimal", "binary")
_TRUNCATE_TYPES = ("int", "long", "string")


def transform_column(column: Column, transform: str, source_type: str, value_type: str) -> Column:
    """An Iceberg transform of a Spark column as PyIceberg computes it (pyiceberg-core), on the executors."""
    from pyspark.sql.functions import arrow_udf

    kind = "string" if value_type == "string" else "bigint" if value_type == "long" else "int"

    @arrow_udf(kind)  # type: ignore[call-overload]  # pyspark's stubs have no arrow_udf(returnType) overload
    def iceberg_transform(values: pa.Array) -> pa.Array:
        return arrow_transform(values, transform, source_type, value_type)

    return iceberg_transform(column)


def arrow_transform(values: pa.Array, transform: str, source_type: str, value_type: str) -> pa.Array:
    """Iceberg's ``transform`` (``bucket[16]``, ``truncate[4]``, ``month``, ...) of an Arrow array
    of ``source_type`` values, as PyIceberg computes it; NULL stays NULL."""
    from pyiceberg.transforms import parse_transform
    from pyiceberg.types import PrimitiveType

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = in_utc(aligned(values))
    result = parse_transform(transform).pyarrow_transform(PrimitiveType.model_validate(source_type))(values)
    if value_type == "string":
        return result.cast(pa.string())
    return result.cast(pa.int64() if value_type == "long" else pa.int32())


def in_utc(values: pa.Array) -> pa.Array:
    """``values`` shown in UTC when they are timestamps of a zone (the same instants).

    Iceberg's year, month and day of a timestamptz are those of its UTC calendar, and the
    readers prune with that; arrow-rs takes the calendar of the array's own zone, and Spark
    hands the session's (America/New_York: 1970-01-01 00:00Z would land in December 1969's
    month and be pruned away by a query for it)."""
    if pa.types.is_timestamp(values.type) and values.type.tz is not None and values.type.tz != "UTC":
        return values.cast(pa.timestamp(values.type.unit, tz="UTC"))
    return values


#: the alignment pyiceberg-core (arrow-rs) demands of a decimal128/256 value buffer it imports
DECIMAL_ALIGNMENT = 16


def aligned(values: pa.Array) -> pa.Array:
    """``values`` with a decimal value buffer pyiceberg-core can import.

    arrow-rs reads decimal128 values as ``i128``, which must be 16-byte aligned, and panics
    otherwise ("Memory pointer ... is not aligned"). Spark's Arrow batches are only 8-byte
    aligned, so a decimal batch from Spark may start 8 bytes off: its value buffer is then
    copied into a new (64-byte aligned) one. Other types need at most 8 and pass unchanged.
    """
    if not pa.types.is_decimal(values.type):
        return values
    validity, data = values.buffers()
    if data is None or data.address % DECIMAL_ALIGNMENT == 0:
        return values
    copy = pa.allocate_buffer(data.size)
    memoryview(copy)[:] = memoryview(data)
    return pa.Array.from_buffers(values.type, len(values), [validity, copy], values.null_count, values.offset)


def partition_columns(spec: PartitionSpec, schema: Schema) -> list[PartitionColumn]:
    """The spec's fields as Spark columns (none for an unpartitioned table); a transform the
    pipeline cannot write is a ConfigError naming the field."""
    from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
    from pyiceberg.types import DecimalType, TimestamptzType

    column_names = {field.name.lower() for field in schema.fields}
    columns = []
    for field in spec.fields:
        source = schema.find_field(field.source_id)
        source_type = str(source.field_type)
        base_type = "decimal" if isinstance(source.field_type, DecimalType) else source_type
        transform = field.transform
        kind = {IdentityTransform: "identity", BucketTransform: "bucket", TruncateTransform: "truncate"}.get(
            type(transform),
            "time"
            if type(transform).__name__ in ("YearTransform", "MonthTransform", "DayTransform", "HourTransform")
            else None,
        )
        allowed = {
            "identity": _IDENTITY_TYPES,
            "bucket": _BUCKET_TYPES,
            "truncate": _TRUNCATE_TYPES,
            "time": _TIME_TYPES,
        }.get(kind or "", ())
        if base_type not in allowed:
            raise ConfigError(
                f"partition field {field.name} = {transform}({source.name} {source.field_type}): the "
                "ingest pipeline writes identity of int/long/string/date/boolean/decimal, "
                "year/month/day/hour of date/timestamptz/timestamp, bucket of "
                "int/long/string/date/timestamp/decimal/binary and truncate of int/long/string only"
            )
        # Spark drops partitionBy columns from the files, so the folder key must not be a table column
        suffix = "identity" if kind == "identity" else str(transform).split("[")[0]
        folder_key = f"{field.name}_{suffix}" if field.name.lower() in column_names else field.name
        if kind == "identity":
            columns.append(PartitionColumn(folder_key, source.name, "identity", value_type=source_type))
        elif isinstance(transform, DayTransform) and isinstance(source.field_type, TimestamptzType):
            columns.append(PartitionColumn(folder_key, source.name, "day", value_type="date"))
        else:
            value_type = source_type if kind == "truncate" else "int"
            columns.append(
                PartitionColumn(
                    folder_key,
                    source.name,
                    "transform",
                    transform=str(transform),
                    source_type=source_type,
                    value_type=value_type,
                )
            )
    return columns


def partition_record(columns: list[PartitionColumn], relative_folder: str) -> Record:
    """The partition record of a file in ``relative_folder`` (``key=value/...`` as Spark wrote it)."""
    from pyiceberg.typedef import Record

    values = dict(part.split("=", 1) for part in relative_folder.split("/") if "=" in part)
    expected = [column.folder_key for column in columns]
    if sorted(values) != sorted(expected):
        raise SluiceError(f"written folder {relative_folder!r} does not name the partition keys {', '.join(expected)}")
    return Record(*(column.value_from_folder(values[column.folder_key]) for column in columns))
