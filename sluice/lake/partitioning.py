"""Iceberg partition values computed in Spark, and read back from the folders Spark writes.

The ingest job asks Spark to write one folder per partition: it adds one column per
partition field (the transform applied to its source column), repartitions and
``partitionBy``-s on those columns, and Spark drops them from the files. The commit then
reads each file's partition record back from its folder names. This module is the one
place that knows both halves of that contract, so they cannot drift apart.

Iceberg's transforms must be reproduced exactly, or a file lands in the wrong partition
and partition pruning later skips rows it should return:

- ``identity`` of an int or long is the value;
- ``day`` of a timestamptz is whole days since 1970-01-01 *in UTC*, whatever the Spark
  session's time zone (so it is computed from ``unix_micros``, never ``to_date``);
- ``bucket[N]`` of an int or long is ``(murmur3_x86_32(v as 8 little-endian bytes, seed 0)
  & Integer.MAX_VALUE) % N``. Spark has no such function (its ``hash`` uses seed 42), so
  :func:`bucket_longs` computes it with numpy and :func:`bucket_column` runs that as an
  Arrow UDF on the executors.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
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

_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_block(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    k1 = _rotl32(k1 * _C1, 15) * _C2
    return _rotl32(h1 ^ k1, 13) * np.uint32(5) + np.uint32(0xE6546B64)


def murmur3_longs(values: np.ndarray) -> np.ndarray:
    """murmur3_x86_32 (seed 0) of each int64 as 8 little-endian bytes, as uint32.

    Two 4-byte blocks (low word, then high word), no tail, length 8, then the final mix;
    uint32 arithmetic wraps exactly like Java's int arithmetic.
    """
    unsigned = values.astype(np.int64).view(np.uint64)
    low = (unsigned & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    high = (unsigned >> np.uint64(32)).astype(np.uint32)
    with np.errstate(over="ignore"):
        h1 = _mix_block(_mix_block(np.zeros_like(low), low), high) ^ np.uint32(8)
        h1 ^= h1 >> np.uint32(16)
        h1 *= np.uint32(0x85EBCA6B)
        h1 ^= h1 >> np.uint32(13)
        h1 *= np.uint32(0xC2B2AE35)
        h1 ^= h1 >> np.uint32(16)
    return h1


def bucket_longs(values: np.ndarray, buckets: int) -> np.ndarray:
    """Iceberg's ``bucket[buckets]`` of int64 values (ints are hashed as longs too), as int32."""
    return ((murmur3_longs(values) & np.uint32(0x7FFFFFFF)) % np.uint32(buckets)).astype(np.int32)


def bucket_arrow(values: pa.Array, buckets: int) -> pa.Array:
    """:func:`bucket_longs` over an Arrow array; NULL stays NULL (Iceberg's bucket of NULL)."""
    longs = values.cast(pa.int64())
    hashed = bucket_longs(longs.fill_null(0).to_numpy(zero_copy_only=False), buckets)
    return pa.array(hashed, type=pa.int32(), mask=longs.is_null().to_numpy(zero_copy_only=False))


def bucket_column(column: Column, buckets: int) -> Column:
    """Iceberg's bucket of an int/long Spark column, computed on the executors."""
    from pyspark.sql.functions import arrow_udf

    # the kind comes from the type hints, as pyspark prefers (naming it warns); its stubs lack this form
    @arrow_udf("int")  # type: ignore[call-overload]  # pyspark's stubs have no arrow_udf(returnType) overload
    def iceberg_bucket(values: pa.Array) -> pa.Array:
        return bucket_arrow(values, buckets)

    return iceberg_bucket(column)


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
    """One partition field as Spark computes it: the folder key and the column's value."""

    folder_key: str
    source_name: str
    kind: str  # "identity", "day" or "bucket"
    buckets: int = 0

    def spark_column(self) -> Column:
        from pyspark.sql import functions as F

        source = F.col(self.source_name)
        if self.kind == "identity":
            return source
        if self.kind == "day":
            return utc_day(source)  # a DATE, so folders read ts_day=2025-03-01
        return bucket_column(source, self.buckets)

    def value_from_folder(self, text: str) -> int | None:
        """The partition record's value for this field from its folder value (days for ``day``)."""
        if text == SPARK_NULL_PARTITION:
            return None
        if self.kind == "day":
            return (dt.date.fromisoformat(text) - EPOCH).days
        return int(text)


def partition_columns(spec: PartitionSpec, schema: Schema) -> list[PartitionColumn]:
    """The spec's fields as Spark columns; a transform the pipeline cannot write is a ConfigError."""
    from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
    from pyiceberg.types import IntegerType, LongType, TimestamptzType

    if not spec.fields:
        raise ConfigError("the ingest pipeline writes partitioned tables only; this table has no partition spec")
    column_names = {field.name.lower() for field in schema.fields}
    columns = []
    for field in spec.fields:
        source = schema.find_field(field.source_id)
        kind = {IdentityTransform: "identity", DayTransform: "day", BucketTransform: "bucket"}.get(type(field.transform))
        writable = isinstance(source.field_type, TimestamptzType) if kind == "day" else \
            kind is not None and isinstance(source.field_type, (IntegerType, LongType))
        if kind is None or not writable:
            raise ConfigError(f"partition field {field.name} = {field.transform}({source.name} {source.field_type}): the "
                              "ingest pipeline writes identity and bucket of int/long and day of timestamptz only")
        # Spark drops partitionBy columns from the files, so the folder key must not be a table column
        folder_key = f"{field.name}_{kind}" if field.name.lower() in column_names else field.name
        buckets = field.transform.num_buckets if isinstance(field.transform, BucketTransform) else 0
        columns.append(PartitionColumn(folder_key, source.name, kind, buckets))
    return columns


def partition_record(columns: list[PartitionColumn], relative_folder: str) -> Record:
    """The partition record of a file in ``relative_folder`` (``key=value/...`` as Spark wrote it)."""
    from pyiceberg.typedef import Record

    values = dict(part.split("=", 1) for part in relative_folder.split("/") if "=" in part)
    expected = [column.folder_key for column in columns]
    if sorted(values) != sorted(expected):
        raise SluiceError(f"written folder {relative_folder!r} does not name the partition keys {', '.join(expected)}")
    return Record(*(column.value_from_folder(values[column.folder_key]) for column in columns))
