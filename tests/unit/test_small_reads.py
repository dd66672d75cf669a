"""The driver's small-read decisions (sluice/spark/small_reads.py), without Spark."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest
from pyspark.errors import PySparkRuntimeError
from pyspark.sql.types import LongType, StringType, StructField, StructType

from sluice.scan.aggregation import Aggregation
from sluice.scan.spec import ScanSpec
from sluice.sources.base import ReadTask
from sluice.spark import small_reads
from sluice.spark.datasource import SluiceReaderSource
from tests.unit.tables import SQLITE_TABLE

pytestmark = pytest.mark.unit

SCHEMA = StructType([StructField("id", LongType()), StructField("t", StringType())])
ARROW = pa.schema([("id", pa.int64()), ("t", pa.string())])


def _batches(count: int, rows: int, closed: list[bool]) -> Iterator[pa.RecordBatch]:
    try:
        for n in range(count):
            yield pa.record_batch([pa.array(range(n * rows, (n + 1) * rows)), pa.array(["x"] * rows)], schema=ARROW)
    finally:
        closed.append(True)


def _spec(**kwargs) -> ScanSpec:
    return ScanSpec("s", "sqlite:///x.db", SQLITE_TABLE, ("id",), **kwargs)


def test_the_stream_holds_every_row_in_order() -> None:
    closed: list[bool] = []
    stream = small_reads.read_on_driver(_batches(3, 100, closed), SCHEMA, 10_000, SluiceReaderSource({}))
    assert stream is not None and closed == [True]
    read = pa.ipc.open_stream(stream).read_all()
    assert read.schema == ARROW and read.column("id").to_pylist() == list(range(300))


def test_an_empty_read_is_an_empty_stream_of_the_schema() -> None:
    stream = small_reads.read_on_driver(iter([]), SCHEMA, 10_000, SluiceReaderSource({}))
    assert stream is not None and pa.ipc.open_stream(stream).read_all().num_rows == 0


def test_a_read_past_the_bound_is_given_back_and_its_cursor_closed() -> None:
    closed: list[bool] = []
    per_batch = small_reads.MAX_ROWS // 4 + 1
    assert small_reads.read_on_driver(_batches(10, per_batch, closed), SCHEMA, 10_000, SluiceReaderSource({})) is None
    assert closed == [True]


def test_batches_not_of_sparks_schema_fail_as_they_would_in_a_worker() -> None:
    wrong = pa.record_batch([pa.array([1], pa.int32()), pa.array(["x"])], names=["id", "t"])
    with pytest.raises(PySparkRuntimeError, match="DATA_SOURCE_RETURN_SCHEMA_MISMATCH"):
        small_reads.read_on_driver(iter([wrong]), SCHEMA, 10_000, SluiceReaderSource({}))


@pytest.mark.parametrize(
    ("spec", "expected", "bound"),
    [
        (_spec(), None, None),  # nothing bounds a whole read
        (_spec(), 12, 12),  # the source's estimate
        (_spec(limit=5), 12, 5),
        (_spec(limit=50), None, 50),
        (_spec(aggregate=Aggregation(outputs=())), None, 1),  # a global aggregate: one row
    ],
)
def test_the_row_bound_is_the_tightest_known(spec: ScanSpec, expected: int | None, bound: int | None) -> None:
    task = ReadTask("SELECT 1", ARROW, expected_rows=expected)
    assert small_reads.row_bound(spec, [task]) == bound


def test_several_partitions_are_never_small() -> None:
    tasks = [ReadTask("SELECT 1", ARROW, partition=n, expected_rows=1) for n in range(2)]
    assert small_reads.row_bound(_spec(limit=1), tasks) is None
