"""Iceberg's bucket transform as the ingest pipeline computes it, against PyIceberg's Python one.

A value bucketed differently from Iceberg lands in a partition where pruning will not
look for it. The pipeline takes pyiceberg-core's Arrow transform (Iceberg's Rust library,
:func:`sluice.lake.partitioning.arrow_transform`); it replaced a hand-written numpy murmur3
after both agreed on every value below (checked on 200,000 random int64s and every bucket
count here before the swap). This test holds it to PyIceberg's independent Python transform
(mmh3) on every int64 kind: random values, both extremes, the int32 boundaries, the spec's
test vector.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import IntegerType, LongType

from sluice.lake.partitioning import arrow_transform

pytestmark = pytest.mark.unit

EDGES = [
    0,
    1,
    -1,
    2,
    -2,
    34,
    2**31 - 1,
    -(2**31),
    2**31,
    -(2**31) - 1,
    2**32,
    2**53 + 1,
    2**63 - 1,
    -(2**63),
    -(2**63) + 1,
]


def values() -> np.ndarray:
    random = np.random.default_rng(20251122).integers(-(2**63), 2**63 - 1, size=20_000, dtype=np.int64, endpoint=True)
    small = np.arange(-5_000, 5_000, dtype=np.int64)
    return np.concatenate([np.array(EDGES, dtype=np.int64), random, small])


def test_the_spec_test_vector() -> None:
    # Iceberg spec, "Appendix B": murmur3 of the long 34 is 2017239379, so bucket[2**31 - 1] is that hash
    bucketed = arrow_transform(pa.array([34], pa.int64()), f"bucket[{2**31 - 1}]", "long", "int")
    assert bucketed.to_pylist() == [2017239379 % (2**31 - 1)]


@pytest.mark.parametrize("buckets", [1, 2, 4, 16, 1000, 2**31 - 1])
def test_bucket_of_longs_matches_pyiceberg(buckets: int) -> None:
    reference = BucketTransform(buckets).transform(LongType())
    inputs = values()
    expected = [reference(int(value)) for value in inputs]
    assert arrow_transform(pa.array(inputs), f"bucket[{buckets}]", "long", "int").to_pylist() == expected


def test_bucket_of_ints_hashes_them_as_longs_like_pyiceberg() -> None:
    reference = BucketTransform(4).transform(IntegerType())
    ints = pa.array([0, 1, -1, 101, 2**31 - 1, -(2**31), None, 412], type=pa.int32())
    assert arrow_transform(ints, "bucket[4]", "int", "int").to_pylist() == [reference(v) for v in ints.to_pylist()]


def test_null_stays_null_and_zero_is_a_value() -> None:
    # PyIceberg's BucketTransform.apply() treats 0 as missing (``if value``); the transform does not
    reference = BucketTransform(4).transform(LongType())
    bucketed = arrow_transform(pa.array([None, 0, None], type=pa.int64()), "bucket[4]", "long", "int")
    assert bucketed.to_pylist() == [None, reference(0), None]


def _eight_bytes_off(values: pa.Array) -> pa.Array:
    """``values`` with its value buffer 8 bytes past a 16-byte boundary, as Spark's Arrow batches may hold it."""
    validity, data = values.buffers()
    backing = pa.allocate_buffer(data.size + 8)  # pyarrow allocates 64-byte aligned
    memoryview(backing)[8:] = memoryview(data)
    shifted = pa.foreign_buffer(backing.address + 8, data.size, backing)
    assert shifted.address % 16 == 8
    return pa.Array.from_buffers(values.type, len(values), [validity, shifted], values.null_count, values.offset)


@pytest.mark.parametrize("source_type", ["decimal(10, 2)", "decimal(38, 4)"])
def test_bucket_of_decimals_in_an_eight_byte_aligned_buffer(source_type: str) -> None:
    """pyiceberg-core panicked ("Memory pointer ... not aligned") on a decimal128 buffer that
    is not 16-byte aligned; the transform copies it and buckets as for an aligned one."""
    from decimal import Decimal

    from pyiceberg.types import DecimalType

    precision, scale = (int(part) for part in source_type[len("decimal(") : -1].split(","))
    decimals = [Decimal("1.25"), None, Decimal("-3.50"), Decimal(0), Decimal("99999999.99")]
    values = pa.array(decimals, pa.decimal128(precision, scale))
    reference = BucketTransform(16).transform(DecimalType(precision, scale))
    expected = [None if d is None else reference(d.quantize(Decimal(1).scaleb(-scale))) for d in decimals]
    shifted = arrow_transform(_eight_bytes_off(values), "bucket[16]", source_type, "int")
    assert shifted.to_pylist() == expected == arrow_transform(values, "bucket[16]", source_type, "int").to_pylist()


@pytest.mark.parametrize("transform", ["year", "month", "day", "hour"])
@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata", "UTC"])
def test_calendar_transforms_of_a_timestamptz_are_those_of_utc_whatever_the_arrays_zone(
    transform: str, zone: str
) -> None:
    """Spark hands the writer timestamps in the session's zone; Iceberg (and the readers' pruning,
    PyIceberg's Python transforms) take the UTC calendar. Found by the conformance matrix: months(ts)
    in America/New_York put 1970-01-01 00:00Z in December 1969 and pruning dropped it."""
    from pyiceberg.transforms import parse_transform
    from pyiceberg.types import TimestamptzType

    instants = [
        dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc),
        dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc),
        dt.datetime(2024, 3, 1, 2, 30, tzinfo=dt.timezone.utc),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc),
    ]
    values = pa.array(instants, pa.timestamp("us", tz=zone))
    python = parse_transform(transform).transform(TimestamptzType())
    expected = [
        python(int((t - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) / dt.timedelta(microseconds=1)))
        for t in instants
    ]
    assert arrow_transform(values, transform, "timestamptz", "int").to_pylist() == expected
