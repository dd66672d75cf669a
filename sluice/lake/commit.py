"""Turn the Parquet files a Spark job wrote into Iceberg data files, and commit them at once.

PyIceberg's ``add_files`` would read partition values back from each file's column
statistics, which works for identity and day but not for bucket ("Cannot infer partition
value ... non-linear"). The job knows every file's partition from the folder Spark put it
in (:func:`sluice.lake.partitioning.partition_record`), so this module builds each
:class:`DataFile` itself: that record, plus column sizes, counts and bounds from the
Parquet footer through the same PyIceberg helpers ``add_files`` uses.

All files of one job go into ONE snapshot of one transaction, so a reader sees all of
the job's rows or none of them. The files carry Iceberg field ids (the job writes them,
:func:`sluice.lake.fields.with_field_ids`); the table's ``schema.name-mapping.default``
maps names to ids for files written before that, and is set in the same transaction when
missing.
"""

from __future__ import annotations

import math
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
from pyarrow import fs as pafs

from sluice.errors import SluiceError
from sluice.lake.partitioning import PartitionColumn, partition_record
from sluice.lake.paths import filesystem_of

if TYPE_CHECKING:
    from pyiceberg.io.fileformat import DataFileStatistics
    from pyiceberg.manifest import DataFile
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot

    from sluice.lake.conform import Evolution
    from sluice.lake.rewrite import Rewrite

#: snapshot summary property naming the job (and so its folder under the data location)
JOB_PROPERTY = "sluice.ingest-job"
#: snapshot summary property of a dynamic partition overwrite (Iceberg's ReplacePartitions sets it)
REPLACE_PARTITIONS = "replace-partitions"
#: commit attempts while the catalog database fails (a locked SQLite file fails after its 5 s busy timeout)
CATALOG_ATTEMPTS = 3
CATALOG_RETRY_WAIT_S = 0.5
_RETRIES = "commit.retry.num-retries"  # PyIceberg's TableProperties.COMMIT_NUM_RETRIES
#: rounds of PyIceberg's commit retries a compaction gets before it gives up (each round a new transaction)
REWRITE_ROUNDS = 5
#: how many concurrent commits a conflict message names, and how long PyIceberg's reason may be
_SHOWN_COMMITS = 3
_REASON_CHARS = 300


@dataclass(frozen=True)
class WrittenFiles:
    """What one job wrote: its data files (with their final paths) and their totals."""

    data_files: list[DataFile]
    row_groups: int

    @property
    def rows(self) -> int:
        return sum(data_file.record_count for data_file in self.data_files)

    @property
    def bytes(self) -> int:
        return sum(data_file.file_size_in_bytes for data_file in self.data_files)


def collect_data_files(
    table: Table,
    columns: list[PartitionColumn],
    staging_uri: str,
    final_uri: str,
    sort_order_id: int | None,
    schema: Schema | None = None,
) -> WrittenFiles:
    """One DataFile per Parquet file under ``staging_uri``, its path as it will be under ``final_uri``.

    ``schema`` is the schema the files are written in, when the job evolves the table's
    (:func:`sluice.lake.conform.evolved_schema`): their statistics are keyed by its field ids.

    Spark also leaves a ``_SUCCESS`` marker and, on local and mounted file systems, ``.crc``
    checksum files beside each file, and writes a file without rows for an empty
    unpartitioned input; they are deleted so the folder holds data files with rows only.
    """
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.types import DoubleType, FloatType

    metadata = table.metadata
    schema = schema or metadata.schema()
    statistics_plan = compute_statistics_plan(schema, metadata.properties)
    field_ids = parquet_path_to_id_mapping(schema)
    float_ids = {field.field_id for field in schema.fields if isinstance(field.field_type, (FloatType, DoubleType))}
    filesystem, staging_path = filesystem_of(staging_uri)
    data_files, row_groups = [], 0
    for info in filesystem.get_file_info(pafs.FileSelector(staging_path, recursive=True)):
        if info.type != pafs.FileType.File:
            continue
        if not info.base_name.endswith(".parquet"):
            filesystem.delete_file(info.path)
            continue
        relative = posixpath.relpath(info.path, staging_path)
        with filesystem.open_input_file(info.path) as stream:
            footer = pq.read_metadata(stream)
        if footer.num_rows == 0:  # Spark writes one for an empty unpartitioned input: no rows, nothing to commit
            filesystem.delete_file(info.path)
            continue
        statistics = data_file_statistics_from_parquet_metadata(footer, statistics_plan, field_ids)
        make_float_bounds_safe(statistics, footer, field_ids, float_ids)
        row_groups += footer.num_row_groups
        data_file = DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=f"{final_uri}/{relative}",
            file_format=FileFormat.PARQUET,
            partition=partition_record(columns, posixpath.dirname(relative)),
            file_size_in_bytes=info.size,
            sort_order_id=sort_order_id,
            spec_id=metadata.default_spec_id,
            equality_ids=None,
            key_metadata=None,
            **statistics.to_serialized_dict(),
        )
        data_file.spec_id = metadata.default_spec_id  # from_args leaves it unset; manifests set it when read
        data_files.append(data_file)
    return WrittenFiles(sorted(data_files, key=lambda data_file: data_file.file_path), row_groups)


def make_float_bounds_safe(
    statistics: DataFileStatistics, footer: pq.FileMetaData, field_ids: dict[str, int], float_ids: set[int]
) -> None:
    """Drop float/double bounds a NaN makes unknowable; widen zero bounds over -0.0 and +0.0.

    Spark's Parquet writer orders NaN above every number, so a row group holding a NaN
    has max NaN and hides its largest number; PyIceberg then folds the row groups' bounds
    with Python's ``max``, which keeps or drops a NaN depending on the order. Iceberg's
    bounds must not be NaN, so a column with a NaN bound in any row group gets no bounds
    in this file (pruning on it is lost, never wrong). Parquet may also keep +0.0 as the
    minimum of a group holding -0.0, so a zero lower bound becomes -0.0 and a zero upper
    bound +0.0.
    """
    for group in range(footer.num_row_groups):
        for position in range(footer.num_columns):
            column = footer.row_group(group).column(position)
            field_id = field_ids[column.path_in_schema]
            stats = column.statistics
            if (
                field_id in float_ids
                and stats is not None
                and stats.has_min_max
                and (math.isnan(stats.min) or math.isnan(stats.max))
            ):
                statistics.column_aggregates.pop(field_id, None)
    for field_id in float_ids & set(statistics.column_aggregates):
        bounds = statistics.column_aggregates[field_id]
        if bounds.current_min == 0.0:
            bounds.current_min = -0.0
        if bounds.current_max == 0.0:
            bounds.current_max = 0.0


#: called after every commit attempt: the catalog planner forgets the lake tables it described
_COMMITTED: list[Callable[[], None]] = []


def on_commit(listener: Callable[[], None]) -> None:
    """Call ``listener`` after each job's commit (landed or not), so cached descriptions go stale at once."""
    _COMMITTED.append(listener)


def commit_data_files(
    table: Table,
    data_files: list[DataFile],
    job_id: str,
    *,
    evolution: Evolution | None = None,
    replaced: list[DataFile] | None = None,
    replace_partitions: bool = False,
    rewrite: Rewrite | None = None,
) -> None:
    """Append ``data_files`` to ``table`` in one snapshot whose summary names ``job_id``.

    ``evolution`` (columns added or widened) is applied in the same transaction, and the
    ``replaced`` files (all of the table's for an overwrite, a partition's small files for
    an optimize, the written partitions' for a dynamic overwrite) are removed in the same
    snapshot: either way a reader sees the table before or after the job, never between.
    A dynamic overwrite (``replace_partitions``) is an ``overwrite`` snapshot marked
    ``replace-partitions=true``, as Iceberg's ``ReplacePartitions`` commits it, also when
    the partitions it wrote held no file yet. A compaction (``rewrite``) commits a ``replace``
    snapshot that validates only the files it replaces (:mod:`sluice.lake.rewrite`).

    A commit that loses the race with another writer is retried by PyIceberg (refresh, then
    append again on top of the winner; ``commit.retry.*`` table properties). A catalog
    database that fails (SQLite's lock held past its busy timeout, an I/O error) is retried
    here, at most :data:`CATALOG_ATTEMPTS` times, each time after checking that the job's
    snapshot did not land after all: the files are never appended twice. A concurrent commit
    that conflicts with this one (PyIceberg's validation) fails it with one line.
    """
    try:
        _commit(table, data_files, job_id, evolution, replaced, replace_partitions, rewrite)
    finally:
        for listener in _COMMITTED:
            listener()


def _commit(
    table: Table,
    data_files: list[DataFile],
    job_id: str,
    evolution: Evolution | None,
    replaced: list[DataFile] | None,
    replace_partitions: bool = False,
    rewrite: Rewrite | None = None,
) -> None:
    from pyiceberg.exceptions import CommitFailedException, ValidationException
    from sqlalchemy.exc import SQLAlchemyError

    from sluice.lake.rewrite import RewriteConflict

    name = ".".join(table.name())
    attempt, lost_races = 1, 0
    base = table.current_snapshot()  # what the job read: a conflict is among the commits after it
    while True:
        try:
            _append(table, data_files, job_id, evolution, replaced or [], replace_partitions, rewrite)
            return
        except RewriteConflict as error:
            raise SluiceError(str(error)) from None
        except ValidationException as error:  # PyIceberg's checks against the commits since the job began
            raise SluiceError(
                f"lake table {name}: job {job_id} conflicts with {_commits_since(table, base)} "
                f"({_first_words(str(error))}); nothing was committed, run the job again"
            ) from None
        except CommitFailedException as error:  # after PyIceberg's own retries on concurrent commits
            lost_races += 1
            if rewrite is not None and lost_races < REWRITE_ROUNDS:
                if job_snapshot(table.refresh(), job_id) is not None:
                    return  # it landed after all
                continue  # a rewrite validates against its base snapshot, not the table's latest: try again
            raise SluiceError(
                f"lake table {name}: the commit of job {job_id} kept losing the race with concurrent commits "
                f"(retried up to {_retries(table)} times, table property {_RETRIES}); nothing was appended, "
                f"run the job again: {error}"
            ) from None
        except SQLAlchemyError as error:  # the catalog database failed: locked past its busy timeout, I/O, ...
            reason = str(getattr(error, "orig", None) or str(error).splitlines()[0])
            try:
                if job_snapshot(table.refresh(), job_id) is not None:
                    return  # the commit landed; only its answer was lost
            except SQLAlchemyError:
                raise SluiceError(
                    f"lake table {name}: the catalog failed during the commit of job {job_id} ({reason}) "
                    f"and cannot say whether it landed: look for a snapshot whose summary has "
                    f"{JOB_PROPERTY}={job_id}"
                ) from None
            if attempt == CATALOG_ATTEMPTS:
                raise SluiceError(
                    f"lake table {name}: the catalog kept failing the commit of job {job_id} ({reason}) "
                    f"through {attempt} attempts; nothing was appended, run the job again"
                ) from None
            time.sleep(CATALOG_RETRY_WAIT_S * attempt)
            attempt += 1


def _append(
    table: Table,
    data_files: list[DataFile],
    job_id: str,
    evolution: Evolution | None = None,
    replaced: list[DataFile] | None = None,
    replace_partitions: bool = False,
    rewrite: Rewrite | None = None,
) -> None:
    """One transaction: the schema changes, the name mapping if missing (PyIceberg's schema
    update extends an existing one), and one snapshot: a fast append of every file, an
    overwrite that also removes the ``replaced`` files, or a compaction's ``rewrite``."""
    from pyiceberg.table import TableProperties

    from sluice.lake.rewrite import commit_rewrite

    replaced = replaced or []
    transaction = table.transaction()
    if evolution:
        evolution.apply(transaction)
    if transaction.table_metadata.name_mapping() is None:
        mapping = transaction.table_metadata.schema().name_mapping.model_dump_json()
        transaction.set_properties({TableProperties.DEFAULT_NAME_MAPPING: mapping})
    properties = {JOB_PROPERTY: job_id, **({REPLACE_PARTITIONS: "true"} if replace_partitions else {})}
    if rewrite is not None:
        commit_rewrite(transaction, table.io, rewrite, data_files, properties)
        transaction.commit_transaction()
        return
    snapshot = transaction.update_snapshot(snapshot_properties=properties)
    with snapshot.overwrite() if replaced or replace_partitions else snapshot.fast_append() as update:
        for data_file in replaced:
            update.delete_data_file(data_file)
        for data_file in data_files:
            update.append_data_file(data_file)
    transaction.commit_transaction()


def _commits_since(table: Table, base: Snapshot | None) -> str:
    """The commits that landed after ``base``, each as ``snapshot N (operation, job J)``: what a
    conflict message names (PyIceberg's own names a set of snapshot ids, often empty)."""
    table.refresh()
    after = base.sequence_number if base is not None and base.sequence_number is not None else -1
    landed = sorted(
        (s for s in table.snapshots() if s.sequence_number is not None and s.sequence_number > after),
        key=lambda s: s.sequence_number or 0,
    )
    if not landed:
        return "a concurrent commit"
    shown = []
    for snapshot in landed[:_SHOWN_COMMITS]:
        operation = snapshot.summary.operation.value if snapshot.summary is not None else "unknown"
        job = snapshot.summary.get(JOB_PROPERTY) if snapshot.summary is not None else None
        shown.append(f"snapshot {snapshot.snapshot_id} ({operation}{f', job {job}' if job else ''})")
    more = f" and {len(landed) - _SHOWN_COMMITS} more" if len(landed) > _SHOWN_COMMITS else ""
    return f"concurrent commit{'s' if len(landed) > 1 else ''} " + ", ".join(shown) + more


def _first_words(text: str) -> str:
    """PyIceberg's reason on one line, its list of file paths cut short."""
    line = " ".join(text.split())
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."


def _retries(table: Table) -> int:
    from pyiceberg.table import TableProperties

    return int(table.properties.get(_RETRIES, TableProperties.COMMIT_NUM_RETRIES_DEFAULT))


def job_snapshot(table: Table, job_id: str) -> Snapshot | None:
    """The snapshot that ingest job ``job_id`` committed, if any."""
    return next(
        (
            snapshot
            for snapshot in table.snapshots()
            if snapshot.summary is not None and snapshot.summary.get(JOB_PROPERTY) == job_id
        ),
        None,
    )
