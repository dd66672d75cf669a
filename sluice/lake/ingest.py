"""Append rows to a lake table with Spark: generated telemetry, files, or any DataFrame.

The job, in order:

1. open the catalog (creating the telemetry table if it is missing) and check the
   input's columns against the table's schema (:mod:`sluice.lake.conform`);
2. Spark computes each row's partition (:mod:`sluice.lake.partitioning`), repartitions by
   it, sorts each partition by the table's sort order and writes one folder per partition
   into ``<data location>/_staging-<job>/``, straight from the executors (on a cluster
   the warehouse must be a path they all share);
3. on the driver, each Parquet footer becomes an Iceberg DataFile, the staging folder is
   renamed to ``<data location>/<job>/`` and all files are committed in one snapshot
   (:mod:`sluice.lake.commit`).

Any failure before the commit lands deletes everything the job wrote and leaves the table
as it was. A process killed outright (SIGKILL, power loss) cannot clean up: it may leave
a ``_staging-<job>`` folder (or, killed during the commit itself, a ``<job>`` folder that
no snapshot names), but never a file that a snapshot references.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

from pyarrow import fs as pafs
from pyiceberg.table import TableProperties

from sluice.errors import ConfigError
from sluice.lake import telemetry
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.commit import collect_data_files, commit_data_files, job_snapshot
from sluice.lake.conform import conform, spark_type
from sluice.lake.partitioning import PartitionColumn, partition_columns

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyspark.sql import Column, DataFrame, SparkSession

Source = Union["DataFrame", str, Path, None]
Report = Callable[[str], None]

DEFAULT_ROWS = 10_000_000
#: row-group size when the table sets no ``write.parquet.row-group-size-bytes`` (see docs/lake.md)
DEFAULT_ROW_GROUP_BYTES = 1 << 20
FORMATS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json", ".parquet": "parquet"}
#: CSV ``nullValue`` that no field spells, so only an empty unquoted field is NULL
CSV_NO_NULL_TEXT = "\u0000"
#: how often the write's task counts are reported
PROGRESS_INTERVAL_S = 10.0


@dataclass(frozen=True)
class IngestSummary:
    """What one ingest job appended, and how long it took."""

    table: str
    snapshot_id: int | None  # None when the input had no rows: nothing to commit
    job_id: str
    files: int
    row_groups: int
    rows: int
    bytes: int
    write_seconds: float
    commit_seconds: float

    @property
    def elapsed_seconds(self) -> float:
        return self.write_seconds + self.commit_seconds

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.elapsed_seconds if self.elapsed_seconds else 0.0

    def __str__(self) -> str:
        if self.snapshot_id is None:
            return f"no rows: nothing appended to {self.table}"
        return (f"snapshot {self.snapshot_id} of {self.table}: {self.files} files, {self.row_groups} row groups, "
                f"{self.rows:,} rows, {self.bytes / 1e6:,.1f} MB in {self.elapsed_seconds:.1f} s "
                f"(write {self.write_seconds:.1f} s, commit {self.commit_seconds:.1f} s; {self.rows_per_second:,.0f} rows/s)")


def print_progress(line: str) -> None:
    """The default progress report: one timestamped line on stderr."""
    print(f"{dt.datetime.now():%H:%M:%S} {line}", file=sys.stderr, flush=True)


def ingest(spark: SparkSession, lake_url: str, source: Source = None, *, rows: int | None = None,
           source_format: str | None = None, namespace: str = telemetry.NAMESPACE, table: str = telemetry.TABLE,
           report: Report = print_progress) -> IngestSummary:
    """Append ``source`` to the lake table ``namespace.table`` in one snapshot; return what was added.

    ``source`` is None to generate ``rows`` synthetic telemetry rows (default
    :data:`DEFAULT_ROWS`), a DataFrame (a ``Federation.sql(...)`` result, say), or a CSV,
    JSON or Parquet file or folder (``source_format`` when the name does not tell). The
    table is created with the telemetry layout if it does not exist.
    """
    if rows is not None and source is not None:
        raise ConfigError("rows= is the number of rows to generate; it cannot be combined with a source")
    catalog = open_catalog(LakeLocation.from_url(lake_url), create=True)
    lake_table = _create_or_load(catalog, namespace, table)
    table_name = f"{namespace}.{table}"
    schema = lake_table.metadata.schema()
    columns = partition_columns(lake_table.spec(), schema)
    frame, what = _source_frame(spark, source, rows, source_format, lake_table)
    frame = conform(frame, schema, table_name)

    job_id = f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    data_uri = lake_table.properties.get(TableProperties.WRITE_DATA_PATH, f"{lake_table.location()}/data").rstrip("/")
    staging_uri, final_uri = f"{data_uri}/_staging-{job_id}", f"{data_uri}/{job_id}"
    report(f"ingest {what} into {table_name}: job {job_id}, writing under {staging_uri}")
    started = time.monotonic()
    try:
        with _watch_tasks(spark, report):
            _write(spark, frame, columns, _sort_columns(lake_table), staging_uri, lake_table.properties)
        written = collect_data_files(lake_table, columns, staging_uri, final_uri, _sort_order_id(lake_table))
        write_seconds = time.monotonic() - started
        report(f"wrote {len(written.data_files)} files, {written.row_groups} row groups, {written.rows:,} rows, "
               f"{written.bytes / 1e6:,.1f} MB in {write_seconds:.1f} s")
        if written.data_files:
            _move(staging_uri, final_uri)
            commit_data_files(lake_table, written.data_files, job_id)
        else:
            _remove(staging_uri)
    except BaseException:
        if not _job_may_be_committed(lake_table, job_id):
            _remove(staging_uri)
            _remove(final_uri)
        raise
    snapshot = job_snapshot(lake_table, job_id)
    summary = IngestSummary(table_name, snapshot.snapshot_id if snapshot else None, job_id, len(written.data_files),
                            written.row_groups, written.rows, written.bytes, write_seconds,
                            time.monotonic() - started - write_seconds)
    report(f"committed snapshot {summary.snapshot_id} in {summary.commit_seconds:.1f} s" if snapshot else str(summary))
    return summary


def _create_or_load(catalog: Catalog, namespace: str, table: str) -> Table:
    """The table, created with the telemetry layout if missing.

    Two jobs creating a new lake at once race between PyIceberg's "does the namespace
    exist" and its insert; the loser's insert fails on the catalog's unique key, and the
    second try finds what the winner made.
    """
    from sqlalchemy.exc import IntegrityError

    try:
        return telemetry.create_readings(catalog, namespace, table)
    except IntegrityError:
        return telemetry.create_readings(catalog, namespace, table)


def _source_frame(spark: SparkSession, source: Source, rows: int | None, source_format: str | None,
                  lake_table: Table) -> tuple[DataFrame, str]:
    """The input DataFrame and a phrase for the progress report."""
    from pyspark.sql import DataFrame

    if source is None:
        from sluice.lake.generate import telemetry as generated_telemetry

        count = DEFAULT_ROWS if rows is None else rows
        if count < 1:
            raise ConfigError(f"rows must be at least 1, not {count}")
        return generated_telemetry(spark, count), f"{count:,} generated rows"
    if isinstance(source, DataFrame):
        return source, "a DataFrame"
    path = str(source)
    kind = source_format or FORMATS.get(os.path.splitext(path.rstrip("/"))[1].lower())
    if kind not in set(FORMATS.values()):
        raise ConfigError(f"cannot tell the format of {path!r}: give a format ({', '.join(sorted(set(FORMATS.values())))})")
    if "://" not in path and not os.path.exists(path):
        raise ConfigError(f"source {path!r} does not exist")
    return _read_files(spark, path, kind, lake_table), f"{kind} {path}"


def _read_files(spark: SparkSession, path: str, kind: str, lake_table: Table) -> DataFrame:
    """Parquet keeps its own types (checked later); CSV and JSON are parsed as the table's types.

    A value that does not parse fails the job (FAILFAST) rather than becoming NULL, and a
    CSV header must name the table's columns in the table's order. In CSV an empty
    unquoted field is NULL and a quoted ``""`` the empty string, as Spark writes them:
    Spark's default reads both as NULL (its ``nullValue`` is the empty string), so the
    ``nullValue`` here is a character no text field holds.
    """
    if kind == "parquet":
        return spark.read.parquet(path)
    from pyspark.sql.types import StructField, StructType

    schema = StructType([StructField(field.name, spark_type(field.field_type)) for field in lake_table.schema().fields])
    reader = spark.read.schema(schema).option("mode", "FAILFAST")
    if kind == "csv":
        return reader.options(header=True, enforceSchema=False, nullValue=CSV_NO_NULL_TEXT).csv(path)
    return reader.json(path)


def _sort_columns(lake_table: Table) -> list[Column]:
    """The table's sort order as Spark sort columns (identity transforms only)."""
    from pyiceberg.table.sorting import NullOrder, SortDirection
    from pyiceberg.transforms import IdentityTransform
    from pyspark.sql import functions as F

    columns = []
    for field in lake_table.sort_order().fields:
        name = lake_table.schema().find_column_name(field.source_id)
        if not isinstance(field.transform, IdentityTransform) or name is None:
            raise ConfigError(f"the ingest pipeline sorts by plain columns only, not by {field}")
        direction = "asc" if field.direction == SortDirection.ASC else "desc"
        nulls = "first" if field.null_order == NullOrder.NULLS_FIRST else "last"
        columns.append(getattr(F.col(name), f"{direction}_nulls_{nulls}")())
    return columns


def _sort_order_id(lake_table: Table) -> int | None:
    order = lake_table.sort_order()
    return order.order_id if order.fields else None


def _write(spark: SparkSession, frame: DataFrame, columns: list[PartitionColumn], sort_by: list[Column],
           staging_uri: str, properties: dict[str, str]) -> None:
    """Write ``frame`` under ``staging_uri``: one folder per partition, one file per folder, sorted.

    Repartitioning by the partition columns sends all rows of a partition to one task, so
    each folder gets one file (Spark's ``maxRecordsPerFile`` may split it, which is fine);
    sorting by the partition columns first is what Spark's writer needs anyway, so the
    sort by the table's order costs no second sort.
    """
    keys = [column.folder_key for column in columns]
    partitioned = frame.select("*", *(column.spark_column().alias(column.folder_key) for column in columns))
    row_group_bytes = properties.get(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, str(DEFAULT_ROW_GROUP_BYTES))
    codec = properties.get(TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT)
    # Spark's default INT96 timestamps are not what Iceberg reads as timestamptz
    with _session_conf(spark, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}):
        (partitioned.repartition(*keys).sortWithinPartitions(*keys, *sort_by)
         .write.partitionBy(*keys).option("compression", codec).option("parquet.block.size", row_group_bytes)
         .parquet(staging_uri))


def _move(source_uri: str, target_uri: str) -> None:
    """Rename a folder (one rename on a local or mounted file system)."""
    filesystem, source = pafs.FileSystem.from_uri(source_uri)
    filesystem.move(source, pafs.FileSystem.from_uri(target_uri)[1])


def _job_may_be_committed(lake_table: Table, job_id: str) -> bool:
    """False only when the catalog says no snapshot holds the job: then its files may go.

    A commit can fail after it landed (the answer lost on the way back), and a file a
    snapshot references must never be deleted; when the catalog cannot be asked, keep them.
    """
    try:
        return job_snapshot(lake_table.refresh(), job_id) is not None
    except Exception:
        return True


def _remove(uri: str) -> None:
    filesystem, path = pafs.FileSystem.from_uri(uri)
    if filesystem.get_file_info(path).type != pafs.FileType.NotFound:
        filesystem.delete_dir(path)


#: session settings held by running jobs: (session, key) -> (jobs holding it, value before the first)
_HELD: dict[tuple[int, str], tuple[int, str | None]] = {}
_HELD_LOCK = threading.Lock()


@contextmanager
def _session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """Set Spark SQL settings for the duration of a block, then put back what was there.

    Jobs running at once in one session (threads) set the same values: the first one in
    saves the previous value and the last one out restores it, so no job's write sees the
    setting undone by another job finishing first.
    """
    with _HELD_LOCK:
        for key, value in settings.items():
            holders, previous = _HELD.get((id(spark), key), (0, None))
            if holders == 0:
                previous = spark.conf.get(key, None)
            spark.conf.set(key, value)
            _HELD[(id(spark), key)] = (holders + 1, previous)
    try:
        yield
    finally:
        with _HELD_LOCK:
            for key in settings:
                holders, previous = _HELD.pop((id(spark), key))
                if holders > 1:
                    _HELD[(id(spark), key)] = (holders - 1, previous)
                elif previous is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, previous)


@contextmanager
def _watch_tasks(spark: SparkSession, report: Report) -> Iterator[None]:
    """Report the running stages' finished/total tasks every :data:`PROGRESS_INTERVAL_S` seconds."""
    tracker, stop, started = spark.sparkContext.statusTracker(), threading.Event(), time.monotonic()

    def watch() -> None:
        while not stop.wait(PROGRESS_INTERVAL_S):
            stages = [info for info in map(tracker.getStageInfo, tracker.getActiveStageIds()) if info is not None]
            counts = ", ".join(f"stage {info.stageId}: {info.numCompletedTasks}/{info.numTasks} tasks"
                               for info in sorted(stages, key=lambda info: info.stageId))
            report(f"writing, {time.monotonic() - started:.0f} s: {counts or 'between stages'}")

    watcher = threading.Thread(target=watch, name="sluice-ingest-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
