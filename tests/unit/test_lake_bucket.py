"""Iceberg's bucket transform as the ingest pipeline computes it, against PyIceberg's own.

A value bucketed differently from Iceberg lands in a partition where pruning will not
look for it, so the numpy version must agree with PyIceberg on every int64: random
values, both extremes, the int32 boundaries and the spec's test vector.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import IntegerType, LongType

from sluice.lake.partitioning import bucket_arrow, bucket_longs, murmur3_longs

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


def test_murmur3_matches_the_spec_test_vector() -> None:
    # Iceberg spec, "Appendix B": hash of the long 34 is 2017239379
    assert murmur3_longs(np.array([34], dtype=np.int64))[0] == 2017239379


@pytest.mark.parametrize("buckets", [1, 2, 4, 16, 1000, 2**31 - 1])
def test_bucket_of_longs_matches_pyiceberg(buckets: int) -> None:
    reference = BucketTransform(buckets).transform(LongType())
    inputs = values()
    expected = np.array([reference(int(value)) for value in inputs], dtype=np.int64)
    assert np.array_equal(bucket_longs(inputs, buckets).astype(np.int64), expected)


def test_bucket_of_ints_hashes_them_as_longs_like_pyiceberg() -> None:
    reference = BucketTransform(4).transform(IntegerType())
    ints = pa.array([0, 1, -1, 101, 2**31 - 1, -(2**31), None, 412], type=pa.int32())
    assert bucket_arrow(ints, 4).to_pylist() == [reference(value) for value in ints.to_pylist()]


def test_null_stays_null_and_zero_is_a_value() -> None:
    # PyIceberg's BucketTransform.apply() treats 0 as missing (``if value``); the transform does not
    reference = BucketTransform(4).transform(LongType())
    assert bucket_arrow(pa.array([None, 0, None], type=pa.int64()), 4).to_pylist() == [None, reference(0), None]
