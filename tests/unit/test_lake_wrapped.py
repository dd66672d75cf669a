"""Truncate partitions that wrapped at the integer minimum, recognised as pyiceberg-core writes them.

The wrapped value each (type, width) is expected to hold is the writer's own: the ingest's
transform (:func:`sluice.lake.partitioning.arrow_transform`, pyiceberg-core) of the type's
minimum. Every other value the writer gives near the extremes is a true truncate, which
no test may mistake for a wrapped one.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.manifest import PartitionFieldSummary
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform, TruncateTransform
from pyiceberg.typedef import Record
from pyiceberg.types import IntegerType, LongType, NestedField

from sluice.lake.partitioning import arrow_transform
from sluice.lake.wrapped import WrappedTruncates

pytestmark = pytest.mark.unit

SCHEMA = Schema(NestedField(1, "i", IntegerType(), required=False), NestedField(2, "n", LongType(), required=False))
KINDS = {"int": (32, pa.int32()), "long": (64, pa.int64())}


def _spec(width: int, column: str) -> PartitionSpec:
    source = 1 if column == "int" else 2
    return PartitionSpec(
        PartitionField(2 if source == 1 else 1, 1000, IdentityTransform(), "other"),
        PartitionField(source, 1001, TruncateTransform(width), "cut"),
    )


def _written(kind: str, width: int, values: list[int]) -> list[int]:
    bits, arrow_type = KINDS[kind]
    return arrow_transform(pa.array(values, arrow_type), f"truncate[{width}]", kind, kind).to_pylist()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("width", [1, 2, 3, 7, 10, 1000, 2**16, 2**31 - 1])
def test_exactly_the_partitions_the_writer_wrapped_are_recognised(kind: str, width: int) -> None:
    bits = KINDS[kind][0]
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    values = [low, low + 1, low + width - 1, low + width, -1, 0, 1, high - width, high - 1, high]
    values = [v for v in values if low <= v <= high]
    wrapping = WrappedTruncates(_spec(width, kind), SCHEMA)
    for value, written in zip(values, _written(kind, width, values), strict=True):
        wraps = value - value % width < low  # the true truncate is below the type's range
        assert wrapping.in_record(Record(None, written)) == wraps, (value, written)
    assert not wrapping.in_record(Record(5, None))
    if low % width == 0:
        assert wrapping.fields == ()  # nothing can wrap: a width dividing the minimum


def _summary(kind: str, lower: int | None, upper: int | None) -> PartitionFieldSummary:
    from pyiceberg.conversions import to_bytes

    field_type = IntegerType() if kind == "int" else LongType()
    lower_bound, upper_bound = (None if v is None else to_bytes(field_type, v) for v in (lower, upper))
    return PartitionFieldSummary(True, False, lower_bound, upper_bound)  # contains_null, contains_nan, bounds


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_manifest_is_kept_when_its_range_may_hold_the_wrapped_value(kind: str) -> None:
    from pyiceberg.manifest import ManifestFile

    bits = KINDS[kind][0]
    low = -(2 ** (bits - 1))
    (wrapped,) = _written(kind, 10, [low])
    wrapping = WrappedTruncates(_spec(10, kind), SCHEMA)

    def manifest(lower: int | None, upper: int | None) -> ManifestFile:
        return ManifestFile.from_args(partitions=[_summary(kind, 0, 0), _summary(kind, lower, upper)])

    assert wrapping.in_manifest(manifest(-100, wrapped))
    assert wrapping.in_manifest(manifest(wrapped, wrapped))
    assert wrapping.in_manifest(manifest(-100, None))
    assert not wrapping.in_manifest(manifest(-100, wrapped - 1))
    assert not wrapping.in_manifest(manifest(wrapped + 1, wrapped + 1))
    assert not wrapping.in_manifest(manifest(None, None))  # only NULLs
