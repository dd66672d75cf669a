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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

from pyarrow import fs as pafs
from pyiceberg.table import TableProperties

from sluice.errors import ConfigError, spark_reason
from sluice.lake import telemetry
from sluice.lake.bad_input import bad_input_message, vanished_file
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.commit import collect_data_files, commit_data_files, job_snapshot
from sluice.lake.conform import Evolution, conform, evolution, evolved_schema, spark_type
from sluice.lake.csv_text import CsvText, check_csv, csv_options
from sluice.lake.fields import FIELD_ID_WRITE, names_held, with_field_ids
from sluice.lake.layout import (
    PartitionTerm,
    SortTerm,
    iceberg_schema,
    parse_partition_by,
    parse_sort_by,
    partition_spec,
    sort_order,
)
from sluice.lake.overwrite import files_to_replace
from sluice.lake.partitioning import PartitionColumn, partition_columns
from sluice.lake.paths import filesystem_of

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.manifest import DataFile
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyspark.sql import Column, DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.types import DataType, StructType

    from sluice.lake.rewrite import Rewrite

Source = Union["DataFrame", str, Path, None]
Report = Callable[[str], None]

DEFAULT_ROWS = 10_000_000
#: row-group size when the table sets no ``write.parquet.row-group-size-bytes`` (see docs/lake.md)
DEFAULT_ROW_GROUP_BYTES = 1 << 20
#: data file size when the table sets no ``write.target-file-size-bytes`` (and what a new table gets)
DEFAULT_TARGET_FILE_BYTES = 128 << 20
#: what a job does with the table's rows (see :func:`ingest`)
MODES = ("append", "overwrite", "overwrite-partitions", "overwrite-filter")
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
        return (
            f"snapshot {self.snapshot_id} of {self.table}: {self.files} files, {self.row_groups} row groups, "
            f"{self.rows:,} rows, {self.bytes / 1e6:,.1f} MB in {self.elapsed_seconds:.1f} s "
            f"(write {self.write_seconds:.1f} s, commit {self.commit_seconds:.1f} s; {self.rows_per_second:,.0f} rows/s)"
        )


def print_progress(line: str) -> None:
    """The default progress report: one timestamped line on stderr."""
    print(f"{dt.datetime.now():%H:%M:%S} {line}", file=sys.stderr, flush=True)


def ingest(
    spark: SparkSession,
    lake_url: str,
    source: Source = None,
    *,
    rows: int | None = None,
    source_format: str | None = None,
    namespace: str = telemetry.NAMESPACE,
    table: str = telemetry.TABLE,
    mode: str = "append",
    schema: str | StructType | None = None,
    partition_by: str | None = None,
    sort_by: str | None = None,
    target_file_size: int | None = None,
    where: Sequence[str] = (),
    encoding: str | None = None,
    report: Report = print_progress,
) -> IngestSummary:
    """Append ``source`` to the lake table ``namespace.table`` (or replace its rows) in one snapshot.

    ``source`` is None to generate ``rows`` synthetic telemetry rows (default
    :data:`DEFAULT_ROWS`), a DataFrame (a ``Federation.sql(...)`` result, say), or a CSV,
    JSON or Parquet file or folder (``source_format`` when the name does not tell). A CSV
    file's text is ``encoding`` (default UTF-8): a byte that does not decode in it fails the
    job, naming the file and line, before anything is written (:mod:`sluice.lake.csv_text`).

    A missing table is created in the same job (and dropped again if the job fails): with
    the input's columns (CSV and JSON types inferred, or ``schema``, a Spark DDL string
    such as ``"id bigint, ts timestamp"``), partitioned by ``partition_by`` (``"day(ts),
    bucket(16, id)"``, see :mod:`sluice.lake.layout`) and sorted by ``sort_by`` (``"ts"``),
    with ``target_file_size`` bytes per file (default 128 MiB). The demo table
    ``telemetry.readings`` and generated rows get the telemetry layout unless told otherwise.

    ``mode="overwrite"`` replaces every row the table held. ``mode="overwrite-partitions"``
    (dynamic partition overwrite, Spark's ``partitionOverwriteMode=dynamic``) replaces only
    the partitions the input's rows fall in and keeps every other partition's rows; an
    unpartitioned table is one partition, replaced whole, and an input without rows changes
    nothing. ``mode="overwrite-filter"`` replaces the rows matching ``where`` (conjuncts in
    the lake dialect's SQL, as the catalog planner renders Spark's overwrite filter): the
    files it selects whole, refused before anything is written when a file may hold rows
    on both sides (:mod:`sluice.lake.overwrite`). Any mode may add columns the table lacks
    and widen int to long, float to double or a decimal's precision; any other difference
    is refused before anything is written.
    """
    if rows is not None and source is not None:
        raise ConfigError("rows= is the number of rows to generate; it cannot be combined with a source")
    if mode not in MODES:
        raise ConfigError(f"mode is {', '.join(MODES[:-1])} or {MODES[-1]}, not {mode!r}")
    partition_terms = None if partition_by is None else parse_partition_by(partition_by)
    sort_terms = None if sort_by is None else parse_sort_by(sort_by)
    if target_file_size is not None and target_file_size < 1:
        raise ConfigError(f"the target file size must be at least 1 byte, not {target_file_size}")
    spark_schema = _spark_schema(schema)
    location = LakeLocation.from_url(lake_url)
    table_name = f"{namespace}.{table}"
    with _Undo(spark, location, source, source_format, spark_schema, encoding) as undo:
        catalog = open_catalog(location, create=True)
        lake_table, input_frame, what = _table_and_input(
            spark,
            catalog,
            undo,
            namespace,
            table,
            rows,
            partition_terms,
            sort_terms,
            target_file_size,
        )
        undo.read_schema = input_frame.schema
        schema_now = lake_table.metadata.schema()
        known = {field.name for field in schema_now.fields}
        new_names = [name for name in input_frame.columns if name not in known]
        change = evolution(input_frame, schema_now, table_name, names_held(lake_table, new_names))
        written_schema = evolved_schema(schema_now, change, lake_table)
        frame = conform(input_frame, written_schema, table_name)
        columns = partition_columns(lake_table.spec(), written_schema)
        replaced = _current_files(lake_table) if mode == "overwrite" else None
        if mode == "overwrite-filter":
            replaced = files_to_replace(lake_table, where, _current_files(lake_table))
        verb = {
            "overwrite": "replace the rows of",
            "overwrite-partitions": "replace partitions of",
            "overwrite-filter": f"replace the rows where {' AND '.join(where) or 'TRUE'} of",
        }.get(mode, "into")
        return run_job(
            spark,
            lake_table,
            frame,
            columns,
            written_schema,
            change,
            f"ingest {what} {verb} {table_name}",
            report,
            replaced,
            replace_partitions=mode == "overwrite-partitions",
        )


def _current_files(lake_table: Table) -> list[DataFile]:
    return [task.file for task in lake_table.scan().plan_files()] if lake_table.current_snapshot() else []


def files_in_partitions(current: list[DataFile], written: list[DataFile]) -> list[DataFile]:
    """The ``current`` files in a partition one of the ``written`` files is in: what a dynamic
    partition overwrite replaces.

    A partition is the spec id and the partition record, as Iceberg's ``ReplacePartitions``
    matches them; an unpartitioned table's one partition is the empty record, so every file
    is in it. Nothing was written, nothing is replaced.
    """
    touched = {_partition_of(data_file) for data_file in written}
    return [data_file for data_file in current if _partition_of(data_file) in touched]


def _partition_of(data_file: DataFile) -> tuple[int, tuple[object, ...]]:
    record = data_file.partition
    return data_file.spec_id, tuple(record[position] for position in range(len(record)))


def new_job_id() -> str:
    """A job's id: when it started (UTC) and a random suffix; it names the job's folder and snapshot."""
    return f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def run_job(
    spark: SparkSession,
    lake_table: Table,
    frame: DataFrame,
    columns: list[PartitionColumn],
    written_schema: Schema,
    change: Evolution,
    what: str,
    report: Report,
    replaced: list[DataFile] | None = None,
    *,
    replace_partitions: bool = False,
    rewrite: Rewrite | None = None,
) -> IngestSummary:
    """Write ``frame`` under a staging folder, then commit it as one snapshot (or remove it).

    The snapshot applies ``change`` to the schema and removes the ``replaced`` files
    (None: an append), or with ``replace_partitions`` the table's files in the partitions
    the job wrote (:func:`files_in_partitions`), or commits a compaction's ``rewrite``
    (:mod:`sluice.lake.rewrite`). Any failure before the commit lands removes what the job wrote.
    """
    job_id = new_job_id()
    data_uri = lake_table.properties.get(TableProperties.WRITE_DATA_PATH, f"{lake_table.location()}/data").rstrip("/")
    staging_uri, final_uri = f"{data_uri}/_staging-{job_id}", f"{data_uri}/{job_id}"
    table_name = ".".join(lake_table.name())
    report(what + (f" ({change})" if change else "") + f": job {job_id}, writing under {staging_uri}")
    started = time.monotonic()
    try:
        with _watch_tasks(spark, report):
            _write(
                spark,
                with_field_ids(frame, written_schema),
                columns,
                _sort_columns(lake_table),
                staging_uri,
                lake_table.properties,
            )
        written = collect_data_files(
            lake_table, columns, staging_uri, final_uri, _sort_order_id(lake_table), written_schema
        )
        write_seconds = time.monotonic() - started
        report(
            f"wrote {len(written.data_files)} files, {written.row_groups} row groups, {written.rows:,} rows, "
            f"{written.bytes / 1e6:,.1f} MB in {write_seconds:.1f} s"
        )
        if replace_partitions:
            replaced = files_in_partitions(_current_files(lake_table.refresh()), written.data_files)
        if written.data_files or replaced:
            if written.data_files:
                _move(staging_uri, final_uri)
            else:
                remove_folder(staging_uri)
            commit_data_files(
                lake_table,
                written.data_files,
                job_id,
                evolution=change,
                replaced=replaced,
                replace_partitions=replace_partitions,
                rewrite=rewrite,
            )
        else:
            remove_folder(staging_uri)
    except BaseException:
        if not _job_may_be_committed(lake_table, job_id):
            remove_folder(staging_uri)
            remove_folder(final_uri)
        raise
    snapshot = job_snapshot(lake_table, job_id)
    summary = IngestSummary(
        table_name,
        snapshot.snapshot_id if snapshot else None,
        job_id,
        len(written.data_files),
        written.row_groups,
        written.rows,
        written.bytes,
        write_seconds,
        time.monotonic() - started - write_seconds,
    )
    report(f"committed snapshot {summary.snapshot_id} in {summary.commit_seconds:.1f} s" if snapshot else str(summary))
    return summary


def create_table(
    spark: SparkSession,
    lake_url: str,
    namespace: str,
    table: str,
    source: Source = None,
    *,
    source_format: str | None = None,
    schema: str | StructType | None = None,
    partition_by: str | None = None,
    sort_by: str | None = None,
    target_file_size: int | None = None,
    encoding: str | None = None,
) -> Table:
    """Create an empty lake table ``namespace.table`` and return it.

    Its columns are ``schema`` (a Spark DDL string or StructType) or those of ``source`` (a
    DataFrame, or a CSV/JSON/Parquet file or folder whose types are inferred); no rows are
    written. ``partition_by``, ``sort_by``, ``target_file_size`` and ``encoding`` as for :func:`ingest`.
    An existing table of that name is an error.
    """
    spark_schema = _spark_schema(schema)
    if spark_schema is None and source is None:
        raise ConfigError("give the new table's columns: a schema, or a file or DataFrame to take them from")
    location = LakeLocation.from_url(lake_url)
    with _Undo(spark, location, source, source_format, spark_schema, encoding) as undo:
        catalog = open_catalog(location, create=True)
        if catalog.table_exists((namespace, table)):
            raise ConfigError(f"lake table {namespace}.{table} already exists")
        frame = _input(spark, undo, None, None)[0] if source is not None else None
        columns = frame.schema if frame is not None else spark_schema
        assert columns is not None
        return _create(
            catalog,
            undo,
            namespace,
            table,
            iceberg_schema(columns),
            parse_partition_by(partition_by or ""),
            parse_sort_by(sort_by or ""),
            target_file_size,
        )


def _table_and_input(
    spark: SparkSession,
    catalog: Catalog,
    undo: _Undo,
    namespace: str,
    table: str,
    rows: int | None,
    partition_terms: tuple[PartitionTerm, ...] | None,
    sort_terms: tuple[SortTerm, ...] | None,
    target_file_size: int | None,
) -> tuple[Table, DataFrame, str]:
    """The table (created when missing) and the input as a DataFrame, with a phrase for the report."""
    source = undo.source
    if catalog.table_exists((namespace, table)):
        lake_table = catalog.load_table((namespace, table))
        _check_layout(lake_table, partition_terms, sort_terms)
        frame, what = _input(spark, undo, rows, lake_table)
        return lake_table, frame, what
    if source is None or (namespace, table) == (telemetry.NAMESPACE, telemetry.TABLE):
        table_schema = telemetry.schema()
        lake_table = _create(
            catalog,
            undo,
            namespace,
            table,
            table_schema,
            telemetry.PARTITION_BY if partition_terms is None else partition_terms,
            telemetry.SORT_BY if sort_terms is None else sort_terms,
            target_file_size,
        )
        frame, what = _input(spark, undo, rows, lake_table)
        missing = [field.name for field in table_schema.fields if field.name not in frame.columns]
        if source is not None and 2 * len(missing) > len(table_schema.fields):  # someone else's data, not telemetry
            raise ConfigError(
                f"{what} lacks column(s) {', '.join(missing)} of {namespace}.{table}, the demo's "
                "telemetry table: name a table of your own (--namespace and --table) to create it "
                "from the input's columns"
            )
        return lake_table, frame, what
    frame, what = _input(spark, undo, rows, None)
    lake_table = _create(
        catalog,
        undo,
        namespace,
        table,
        iceberg_schema(frame.schema),
        partition_terms or (),
        sort_terms or (),
        target_file_size,
    )
    return lake_table, frame, what


def _create(
    catalog: Catalog,
    undo: _Undo,
    namespace: str,
    table: str,
    table_schema: Schema,
    partition_terms: tuple[PartitionTerm, ...],
    sort_terms: tuple[SortTerm, ...],
    target_file_size: int | None,
) -> Table:
    """Create the table (and its namespace), noting both in ``undo`` so a failed job drops them.

    Two jobs creating a new lake at once race between PyIceberg's "does the namespace
    exist" and its insert; the loser's insert fails on the catalog's unique key, and the
    second try finds what the winner made (then the table is not this job's to drop).
    """
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError
    from sqlalchemy.exc import IntegrityError

    spec = partition_spec(partition_terms, table_schema)
    order = sort_order(sort_terms, table_schema)
    partition_columns(spec, table_schema)  # a transform the pipeline cannot write fails before the table exists
    properties = {TableProperties.WRITE_TARGET_FILE_SIZE_BYTES: str(target_file_size or DEFAULT_TARGET_FILE_BYTES)}
    if not catalog.namespace_exists(namespace):
        try:
            catalog.create_namespace(namespace)
            undo.namespace = (catalog, namespace)
        except (NamespaceAlreadyExistsError, IntegrityError):
            pass
    try:
        lake_table = catalog.create_table(
            (namespace, table), schema=table_schema, partition_spec=spec, sort_order=order, properties=properties
        )
    except (TableAlreadyExistsError, IntegrityError):
        return catalog.load_table((namespace, table))
    undo.table = (catalog, (namespace, table), lake_table.location())
    return lake_table


def _check_layout(
    lake_table: Table, partition_terms: tuple[PartitionTerm, ...] | None, sort_terms: tuple[SortTerm, ...] | None
) -> None:
    """A layout given for an existing table must be the one it has."""
    name = ".".join(lake_table.name())
    schema = lake_table.schema()
    if partition_terms is not None:
        wanted = [(field.source_id, str(field.transform)) for field in partition_spec(partition_terms, schema).fields]
        if wanted != [(field.source_id, str(field.transform)) for field in lake_table.spec().fields]:
            raise ConfigError(
                f"lake table {name} exists, partitioned by {describe_spec(lake_table)}: the partitioning "
                "of a new table cannot be given for it"
            )
    if sort_terms is not None:
        wanted_order = [
            (field.source_id, field.direction, field.null_order) for field in sort_order(sort_terms, schema).fields
        ]
        if wanted_order != [
            (field.source_id, field.direction, field.null_order) for field in lake_table.sort_order().fields
        ]:
            raise ConfigError(
                f"lake table {name} exists, sorted by {describe_sort(lake_table)}: the sort order "
                "of a new table cannot be given for it"
            )


def describe_spec(lake_table: Table) -> str:
    """The table's partitioning as ``--partition-by`` text (``none`` when unpartitioned)."""
    terms = []
    for field in lake_table.spec().fields:
        name = lake_table.schema().find_column_name(field.source_id)
        text = str(field.transform)
        if "[" in text:
            transform, number = text.rstrip("]").split("[")
            terms.append(f"{transform}({number}, {name})")
        else:
            terms.append(f"{text}({name})")
    return ", ".join(terms) or "none"


def describe_sort(lake_table: Table) -> str:
    """The table's sort order as ``--sort-by`` text (``none`` when unsorted)."""
    from pyiceberg.table.sorting import NullOrder, SortDirection

    return (
        ", ".join(
            f"{lake_table.schema().find_column_name(field.source_id)} "
            f"{'asc' if field.direction == SortDirection.ASC else 'desc'} "
            f"nulls {'first' if field.null_order == NullOrder.NULLS_FIRST else 'last'}"
            for field in lake_table.sort_order().fields
        )
        or "none"
    )


class _Undo:
    """A job's context: what it created (the lake itself, a namespace, a table), removed if it fails.

    A failed job leaves the catalog and the warehouse as they were: the table it created is
    dropped and its folder deleted, a namespace it created is dropped, and a catalog file
    and warehouse folder it created are deleted. An error Spark raised while reading a
    file source becomes one :class:`ConfigError` saying where the input is bad
    (:func:`sluice.lake.bad_input.bad_input_message`, with ``read_schema``, the schema the
    input was read with, and ``csv_text``, how a CSV input was read).

    It also carries the job's input as given (``source``, ``source_format``, the schema to
    read it with, a CSV's ``encoding``), which :func:`_input` reads.
    """

    def __init__(
        self,
        spark: SparkSession,
        location: LakeLocation,
        source: Source,
        source_format: str | None,
        read_schema: StructType | None,
        encoding: str | None = None,
    ) -> None:
        self.spark, self.location, self.source, self.source_format = spark, location, source, source_format
        self.read_schema, self.given_schema = read_schema, read_schema
        self.encoding = encoding
        self.csv_text: CsvText | None = None
        self.new_catalog = not os.path.exists(location.catalog_path)
        self.new_warehouse = not os.path.exists(location.warehouse)
        self.namespace: tuple[Catalog, str] | None = None
        self.table: tuple[Catalog, tuple[str, str], str] | None = None

    def __enter__(self) -> _Undo:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _traceback: object) -> None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors.exceptions.captured import CapturedException

        if error is None:
            return
        self.run()
        if isinstance(error, (CapturedException, Py4JJavaError)) and (gone := vanished_file(error)):
            raise ConfigError(
                f"the ingest stopped: {gone} was removed while the job ran (by another process?); nothing was committed"
            ) from None
        if isinstance(error, (CapturedException, Py4JJavaError)) and isinstance(self.source, (str, Path)):
            path = str(self.source)
            raise ConfigError(
                bad_input_message(
                    self.spark, path, _format_of(path, self.source_format), self.read_schema, error, self.csv_text
                )
            ) from None

    def run(self) -> None:
        import shutil

        namespace_folder = None
        if self.table is not None:
            catalog, identifier, table_location = self.table
            catalog.drop_table(identifier)
            remove_folder(table_location)
            namespace_folder = table_location.rstrip("/").rsplit("/", 1)[0]
        if self.namespace is not None:
            catalog, namespace = self.namespace
            if not catalog.list_tables(namespace):
                catalog.drop_namespace(namespace)
                if namespace_folder is not None:
                    remove_folder(namespace_folder, only_if_empty=True)
        if self.new_catalog and os.path.exists(self.location.catalog_path):
            open_catalog(self.location).engine.dispose()
            os.remove(self.location.catalog_path)
        if self.new_warehouse:
            shutil.rmtree(self.location.warehouse, ignore_errors=True)
        self.table = self.namespace = None


def _spark_schema(schema: str | StructType | None) -> StructType | None:
    """A schema given as a Spark DDL string or a StructType."""
    if schema is None or not isinstance(schema, str):
        return schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    try:
        parsed = _parse_datatype_string(schema)
    except Exception as error:  # noqa: BLE001 - Spark's parser error, shortened
        raise ConfigError(f"schema {schema!r}: {spark_reason(str(error))}") from None
    if not isinstance(parsed, StructType):
        raise ConfigError(f"schema {schema!r}: expected columns, as in 'id bigint, ts timestamp'")
    return parsed


def _format_of(path: str, source_format: str | None) -> str:
    kind = source_format or FORMATS.get(os.path.splitext(path.rstrip("/"))[1].lower())
    if kind not in set(FORMATS.values()):
        raise ConfigError(
            f"cannot tell the format of {path!r}: give a format ({', '.join(sorted(set(FORMATS.values())))})"
        )
    return kind


def _input(spark: SparkSession, undo: _Undo, rows: int | None, lake_table: Table | None) -> tuple[DataFrame, str]:
    """The job's input (``undo.source``) as a DataFrame, and a phrase for the progress report.

    A CSV file's text is checked first (:func:`sluice.lake.csv_text.check_csv`); how it is
    to be read is kept in ``undo.csv_text`` for the diagnosis of a failed read.
    """
    from pyspark.sql import DataFrame

    source = undo.source
    if undo.encoding is not None and (
        source is None or isinstance(source, DataFrame) or _format_of(str(source), undo.source_format) != "csv"
    ):
        raise ConfigError(f"an encoding ({undo.encoding}) is given for CSV input only")
    if source is None:
        from sluice.lake.generate import telemetry as generated_telemetry

        count = DEFAULT_ROWS if rows is None else rows
        if count < 1:
            raise ConfigError(f"rows must be at least 1, not {count}")
        return generated_telemetry(spark, count), f"{count:,} generated rows"
    if isinstance(source, DataFrame):
        return source, "a DataFrame"
    path = str(source)
    kind = _format_of(path, undo.source_format)
    if "://" not in path and not os.path.exists(path):
        raise ConfigError(f"source {path!r} does not exist")
    if kind == "csv":
        undo.csv_text = check_csv(spark, path, undo.encoding)
    return read_files(spark, path, kind, lake_table, undo.given_schema, undo.csv_text), f"{kind} {path}"


def read_files(
    spark: SparkSession,
    path: str,
    kind: str,
    lake_table: Table | None = None,
    schema: StructType | None = None,
    csv_text: CsvText | None = None,
) -> DataFrame:
    """A CSV, JSON or Parquet file or folder as a DataFrame, every value parsed or the job fails.

    Parquet keeps its own types (checked later). CSV and JSON columns the table has are
    parsed as the table's types; the others as ``schema`` says or, without one, as Spark
    infers them (a pass over the input). A value that does not parse fails the job
    (FAILFAST) rather than becoming NULL; :func:`bad_input_message` then says where. A CSV
    needs a header; its columns may come in any order. In CSV an empty unquoted field is
    NULL and a quoted ``""`` the empty string, as Spark writes them: Spark's default reads
    both as NULL (its ``nullValue`` is the empty string), so the ``nullValue`` here is a
    character no text field holds. ``csv_text`` is how :func:`sluice.lake.csv_text.check_csv`
    found a CSV is to be read (its encoding, and ``multiLine`` when a record may span lines).
    """
    if kind == "parquet":
        return spark.read.parquet(path)
    known = {field.name: spark_type(field.field_type) for field in lake_table.schema().fields} if lake_table else {}
    if schema is None and kind == "csv":
        header = spark.read.options(header=True, inferSchema=False, **csv_options(csv_text)).csv(path).columns
        if all(name in known for name in header):
            schema = _struct([(name, known[name]) for name in header])
    if schema is None:
        inferred = _reader(spark, kind, None, "PERMISSIVE", csv_text).load(path).schema
        schema = _struct([(field.name, known.get(field.name, field.dataType)) for field in inferred.fields])
    else:
        schema = _struct([(field.name, known.get(field.name, field.dataType)) for field in schema.fields])
    return _reader(spark, kind, schema, "FAILFAST", csv_text).load(path)


def _struct(fields: list[tuple[str, DataType]]) -> StructType:
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(name, kind) for name, kind in fields])


def _reader(
    spark: SparkSession, kind: str, schema: StructType | None, mode: str, csv_text: CsvText | None
) -> DataFrameReader:
    reader = spark.read.format(kind).option("mode", mode)
    if schema is not None:
        reader = reader.schema(schema)
    if kind == "csv":
        reader = reader.options(
            header=True,
            enforceSchema=False,
            nullValue=CSV_NO_NULL_TEXT,
            inferSchema=schema is None,
            **csv_options(csv_text),
        )
    return reader


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


def _write(
    spark: SparkSession,
    frame: DataFrame,
    columns: list[PartitionColumn],
    sort_by: list[Column],
    staging_uri: str,
    properties: dict[str, str],
) -> None:
    """Write ``frame`` under ``staging_uri``: one folder per partition, one file per folder, sorted.

    Repartitioning by the partition columns sends all rows of a partition to one task, so
    each folder gets one file, however few rows it has; sorting by the partition columns
    first is what Spark's writer needs anyway, so the sort by the table's order costs no
    second sort. A partition larger than the table's ``write.target-file-size-bytes`` is
    split into files of about that size (Spark's ``maxRecordsPerFile``, from Spark's
    estimate of a row's uncompressed size, so compressed files come out smaller). An
    unpartitioned table gets one file per target size of input (Spark's size estimate).
    """
    keys = [column.folder_key for column in columns]
    partitioned = frame.select("*", *(column.spark_column().alias(column.folder_key) for column in columns))
    row_group_bytes = properties.get(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, str(DEFAULT_ROW_GROUP_BYTES))
    codec = properties.get(TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT)
    target = int(properties.get(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, DEFAULT_TARGET_FILE_BYTES))
    row_bytes = max(1, int(frame._jdf.schema().defaultSize()))
    if keys:
        distributed = partitioned.repartition(*keys)
    else:
        distributed = partitioned.repartition(_file_count(spark, frame, target))
    if keys or sort_by:
        distributed = distributed.sortWithinPartitions(*keys, *sort_by)
    writer = distributed.write.partitionBy(*keys) if keys else distributed.write
    # Spark's default INT96 timestamps are not what Iceberg reads as timestamptz
    with _session_conf(spark, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", FIELD_ID_WRITE: "true"}):
        (
            writer.option("compression", codec)
            .option("parquet.block.size", row_group_bytes)
            .option("maxRecordsPerFile", max(1, target // row_bytes))
            .parquet(staging_uri)
        )


def _file_count(spark: SparkSession, frame: DataFrame, target: int) -> int:
    """Files for an unpartitioned write: Spark's estimate of the input's size over the target size,
    at most the session's shuffle partitions (an input of unknown size gets that many)."""
    most = max(1, int(spark.conf.get("spark.sql.shuffle.partitions", "200") or 200))
    try:
        estimate = int(str(frame._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # noqa: BLE001 - no estimate: the most files
        return most
    return max(1, min(most, -(-estimate // target)))


def _move(source_uri: str, target_uri: str) -> None:
    """Rename a folder (one rename on a local or mounted file system)."""
    filesystem, source = filesystem_of(source_uri)
    filesystem.move(source, filesystem_of(target_uri)[1])


def _job_may_be_committed(lake_table: Table, job_id: str) -> bool:
    """False only when the catalog says no snapshot holds the job: then its files may go.

    A commit can fail after it landed (the answer lost on the way back), and a file a
    snapshot references must never be deleted; when the catalog cannot be asked, keep them.
    """
    try:
        return job_snapshot(lake_table.refresh(), job_id) is not None
    except Exception:  # noqa: BLE001 - the catalog cannot be asked: keep the files
        return True


def remove_folder(uri: str, only_if_empty: bool = False) -> None:
    """Delete the folder at ``uri`` (a URI or path) and everything in it; nothing when it is missing."""
    filesystem, path = filesystem_of(uri)
    if filesystem.get_file_info(path).type == pafs.FileType.NotFound:
        return
    if only_if_empty and filesystem.get_file_info(pafs.FileSelector(path)):
        return
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
            counts = ", ".join(
                f"stage {info.stageId}: {info.numCompletedTasks}/{info.numTasks} tasks"
                for info in sorted(stages, key=lambda info: info.stageId)
            )
            report(f"writing, {time.monotonic() - started:.0f} s: {counts or 'between stages'}")

    watcher = threading.Thread(target=watch, name="sluice-ingest-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
