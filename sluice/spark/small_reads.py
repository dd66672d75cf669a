"""Small reads answered by the driver: no Python worker for a scan that returns a few rows.

A Python data source reads in Python workers: for every scan Spark starts (or reuses) a
worker, ships it the read function and the partition, and reads Arrow batches back. For a
10-row answer that costs ~50 ms, more than the whole remote query; Spark's JDBC catalog reads
in the JVM and pays none of it. The driver's Python already has the source open, so when the
planner expects a scan to return few rows, the driver runs the very same read (the reader
function and the schema check Spark's worker would run) when Spark executes the scan, and
the JVM decodes the Arrow stream (``io.sluice.spark.SmallReadFactory``).

What decides, and why it loses nothing:

- A scan is *small* when its source's reader lets the driver's other Python threads run
  while it waits (``Source.reads_on_driver``; not MySQL/MariaDB's connectorx, which holds the
  GIL), it reads one partition and the source bounds its rows: a pushed
  LIMIT, a pushed aggregate without GROUP BY (one row), or the source's own estimate
  (PostgreSQL and MariaDB EXPLAIN) at most :data:`SMALL_ROWS`.
- An estimate can be wrong: the driver stops reading past :data:`MAX_ROWS` rows or
  :data:`MAX_BYTES` bytes and the scan is read by a worker as any other (the remote query
  runs twice then; only a bad estimate pays that).
- The read happens when Spark creates the scan's reader factory, at execution, after
  runtime filters: EXPLAIN never runs it.
- ``spark.sluice.smallReadRows`` (default :data:`SMALL_ROWS`; 0 turns it off) sets the bound.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import pyarrow as pa
from pyspark.serializers import CPickleSerializer
from pyspark.sql.datasource import InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType
from pyspark.sql.worker.plan_data_source_read import records_to_arrow_batches

from sluice.scan import ScanSpec
from sluice.sources.base import ReadTask, Source

#: a scan expected to return at most this many rows is read by the driver
SMALL_ROWS = 10_000
#: past this many rows or bytes the estimate was wrong: the driver gives the read back to a worker
MAX_ROWS = 4 * SMALL_ROWS
MAX_BYTES = 32 << 20


def row_bound(spec: ScanSpec, tasks: list[ReadTask]) -> int | None:
    """At most how many rows the scan returns, as far as the plan or the source says; None: unknown."""
    if len(tasks) != 1:
        return None
    bounds = [spec.limit, tasks[0].expected_rows]
    if spec.aggregate is not None and not spec.aggregate.group_by:
        bounds.append(1)
    known = [bound for bound in bounds if bound is not None]
    return min(known) if known else None


def is_small(source: Source, spec: ScanSpec, tasks: list[ReadTask], small_rows: int) -> bool:
    """Whether the driver reads the scan itself when Spark runs it."""
    bound = row_bound(spec, tasks)
    return source.reads_on_driver and bound is not None and bound <= small_rows


def read_on_driver(
    batches: Iterator[pa.RecordBatch],
    schema: StructType,
    max_batch_rows: int,
    reader_source: object,
) -> bytes | None:
    """The scan's batches as one Arrow IPC stream, checked exactly as Spark's worker checks
    them (``records_to_arrow_batches``); None when the read outgrew the bounds."""
    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    sink = io.BytesIO()
    rows = 0
    try:
        with pa.ipc.new_stream(sink, arrow_schema) as writer:
            for batch in records_to_arrow_batches(batches, max_batch_rows, schema, reader_source):  # type: ignore[arg-type]  # Spark's helper takes the DataSource for its error messages only
                rows += batch.num_rows
                if rows > MAX_ROWS or sink.tell() + batch.nbytes > MAX_BYTES:
                    return None
                writer.write_batch(batch)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # the source's cursor and connection, now rather than at garbage collection
    return sink.getvalue()


def partition_of(pickled: bytes) -> InputPartition:
    """The planned partition the JVM hands back: the bytes this process pickled in ``read``."""
    partition = CPickleSerializer().loads(pickled)
    if not isinstance(partition, InputPartition):
        raise TypeError(f"not a planned partition: {type(partition).__name__}")
    return partition
