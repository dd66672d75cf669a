"""Small reads answered by the driver: no Python worker for a scan that returns a few rows.

A Python data source reads in Python workers: for every scan Spark starts (or reuses) a
worker, ships it the read function and the partition, and reads Arrow batches back. For a
10-row answer that costs ~50 ms, more than the whole remote query; Spark's JDBC catalog reads
in the JVM and pays none of it. The driver's Python already has the source open, so when the
planner expects a scan to return few rows, the driver runs the very same read (the reader
function and the schema check Spark's worker would run) when Spark executes the scan, and
the JVM decodes the Arrow stream (``io.sluice.spark.SmallReadFactory``).

What decides, and why it loses nothing:

- A scan is *small* when it reads one partition and the source bounds its rows: a pushed
  LIMIT, a pushed aggregate without GROUP BY (one row), or the source's own estimate
  (PostgreSQL and MariaDB EXPLAIN) at most ``spark.sluice.smallReadRows`` (default
  :data:`SMALL_ROWS`; 0 turns driver reads off).
- An estimate can be wrong: the driver stops reading past :data:`MAX_ROWS` rows or
  :data:`MAX_BYTES` bytes and the scan is read by a worker as any other (the remote query
  runs twice then; only a bad estimate pays that). A read process that died is the same.
- The read happens when Spark creates the scan's reader factory, at execution, after
  runtime filters: EXPLAIN never runs it.
- A reader that holds the GIL while the server works (``Source.holds_gil_while_reading``:
  MySQL/MariaDB's connectorx) runs in a read process beside the driver (:mod:`sluice.spark.read_process`), so that one slow small
  query (a COUNT(*) over a large view) cannot stall every other Python thread of the driver,
  the planning of other queries included.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pyarrow as pa
from pyspark.serializers import CPickleSerializer
from pyspark.sql.datasource import InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType
from pyspark.sql.worker.plan_data_source_read import records_to_arrow_batches

from sluice.scan.spec import ScanSpec
from sluice.sources.base import ReadTask, Source
from sluice.spark.datasource import SluiceReader, SluiceReaderSource
from sluice.spark.read_process import ReadProcessDied, ReadProcesses

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


def is_small(spec: ScanSpec, tasks: list[ReadTask], small_rows: int) -> bool:
    """Whether the driver reads the scan itself when Spark runs it."""
    bound = row_bound(spec, tasks)
    return bound is not None and bound <= small_rows


def fetch(
    source: Source, scan: str, password: str | None, partition: bytes, schema: str, max_batch_rows: int
) -> bytes | None:
    """The Arrow stream of a small scan's one partition (``scan``: the ScanSpec's JSON, ``schema``:
    Spark's read schema as JSON); None: let the workers read it."""
    if not source.holds_gil_while_reading:
        return _read(scan, password, partition, schema, max_batch_rows)
    try:
        return _READ_PROCESSES.call(_read, scan, password, partition, schema, max_batch_rows)
    except ReadProcessDied:  # killed or out of memory: a new one next time, the workers now
        return None


def warm(source: Source) -> None:
    """Start a read process now (importing Sluice there takes a second) when ``source`` needs one."""
    if source.holds_gil_while_reading:
        _READ_PROCESSES.warm()


def _read(scan: str, password: str | None, partition: bytes, schema: str, max_batch_rows: int) -> bytes | None:
    """The read Spark's worker would run for ``partition``, as one Arrow stream (here or in the read process)."""
    reader = SluiceReader(ScanSpec.from_json(scan), password)
    return read_on_driver(
        reader.read(partition_of(partition)),
        StructType.fromJson(json.loads(schema)),
        max_batch_rows,
        SluiceReaderSource({}),
    )


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


_READ_PROCESSES = ReadProcesses()
