"""Keeping a lake table lean: compact small files, expire old snapshots and delete the files only they held.

:func:`optimize` rewrites every partition that holds more than one data file, or a data
file that row-level delete files apply to, into one file per partition (or more, past the
table's target file size), sorted by the table's sort order, with the ingest pipeline
(:func:`sluice.lake.ingest.run_job`): one Spark job and one ``replace`` snapshot that
removes the old files and adds the new ones, so a reader sees the rows before or after, the
same rows either way. Files without deletes are read by Spark's Parquet reader; files with
deletes by the lake's own reader, which applies them (:mod:`sluice.lake.live_read`), and
the delete files no live file needs any more are removed in the same snapshot. The commit
replaces exactly the files read, beside concurrent writers (:mod:`sluice.lake.rewrite`).
Files of an older partition spec are left as they are, and so are files that delete files
Sluice cannot apply (deletion vectors, ...) may apply to.

Every ingest adds a snapshot, and an overwrite leaves the replaced files in the warehouse
for the snapshots before it (so a reader that planned on an older snapshot still finds
them). :func:`expire_snapshots` removes snapshots from the table's metadata (PyIceberg's
``ExpireSnapshots``, one metadata commit) and then deletes the data files, manifests and
manifest lists that no remaining snapshot references. A file any remaining snapshot
references is never deleted; a running job's staging files are in no snapshot at all and
are not touched.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, load_table, open_catalog
from sluice.lake.paths import open_input

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.manifest import ManifestEntry
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot
    from pyspark.sql import DataFrame, SparkSession

    from sluice.lake.deletes import DeleteRef
    from sluice.lake.ingest import IngestSummary, Report
    from sluice.lake.rewrite import Rewrite


@dataclass(frozen=True)
class ExpireSummary:
    """What :func:`expire_snapshots` removed."""

    table: str
    snapshots: int
    data_files: int
    metadata_files: int
    kept: int

    def __str__(self) -> str:
        return (
            f"{self.table}: expired {self.snapshots} snapshot(s), deleted {self.data_files} data file(s) and "
            f"{self.metadata_files} manifest file(s); {self.kept} snapshot(s) kept"
        )


def snapshot_files(snapshots: list[Snapshot], io: FileIO, *, discard_deleted: bool = True) -> tuple[set[str], set[str]]:
    """(data and delete files, manifest and manifest-list files) of ``snapshots``: the live
    entries, or every entry a manifest lists when not ``discard_deleted``."""
    data_files: set[str] = set()
    metadata: set[str] = set()
    for snapshot in snapshots:
        metadata.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            metadata.add(manifest.manifest_path)
            data_files.update(
                entry.data_file.file_path
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=discard_deleted)
            )
    return data_files, metadata


#: how old a snapshot must be before expire_snapshots removes it unasked: Iceberg's own default
#: (``history.expire.max-snapshot-age-ms``, 5 days), so a reader or a time travel of this week keeps its files
DEFAULT_SNAPSHOT_AGE = dt.timedelta(days=5)


def expire_snapshots(
    lake_url: str, namespace: str, table: str, *, older_than: dt.datetime | None = None, retain_last: int = 1
) -> ExpireSummary:
    """Expire the snapshots of ``namespace.table`` older than ``older_than`` (default:
    :data:`DEFAULT_SNAPSHOT_AGE` ago), keeping the newest ``retain_last`` (at least 1: the current
    snapshot is always kept), and delete the files only they referenced."""
    if retain_last < 1:
        raise ConfigError(f"retain_last must be at least 1 (the current snapshot stays), not {retain_last}")
    cutoff = older_than or dt.datetime.now(dt.timezone.utc) - DEFAULT_SNAPSHOT_AGE
    if cutoff.tzinfo is None:
        raise ConfigError(f"older_than needs a time zone (an instant), not {cutoff.isoformat()}")
    lake_table = load_table(open_catalog(LakeLocation.from_url(lake_url)), namespace, table)
    snapshots = sorted(lake_table.snapshots(), key=lambda snapshot: snapshot.timestamp_ms)
    protected = {snapshot.snapshot_id for snapshot in snapshots[-retain_last:]}
    protected |= {ref.snapshot_id for ref in lake_table.metadata.refs.values()}
    cutoff_ms = int(cutoff.timestamp() * 1000)
    expired = [
        snapshot
        for snapshot in snapshots
        if snapshot.snapshot_id not in protected and snapshot.timestamp_ms < cutoff_ms
    ]
    name = f"{namespace}.{table}"
    if not expired:
        return ExpireSummary(name, 0, 0, 0, len(snapshots))
    io = lake_table.io
    old_data, old_metadata = snapshot_files(expired, io)
    lake_table.maintenance.expire_snapshots().by_ids([snapshot.snapshot_id for snapshot in expired]).commit()
    lake_table = lake_table.refresh()
    live_data, live_metadata = snapshot_files(lake_table.snapshots(), io)  # read after the commit: what stays
    doomed_data, doomed_metadata = sorted(old_data - live_data), sorted(old_metadata - live_metadata)
    for path in doomed_data + doomed_metadata:
        io.delete(path)
    return ExpireSummary(name, len(expired), len(doomed_data), len(doomed_metadata), len(lake_table.snapshots()))


def data_entries(lake_table: Table, name: str) -> list[tuple[ManifestEntry, bool]]:
    """Each live data file of the current snapshot, and whether delete files apply to it."""
    from pyiceberg.manifest import ManifestContent

    from sluice.lake.deletes import DeleteIndex

    snapshot = lake_table.current_snapshot()
    if snapshot is None:
        return []
    io = lake_table.io
    manifests = snapshot.manifests(io)
    entries = [
        e
        for m in manifests
        if m.content == ManifestContent.DATA
        for e in m.fetch_manifest_entry(io, discard_deleted=True)
    ]
    delete_entries = [
        e
        for m in manifests
        if m.content == ManifestContent.DELETES
        for e in m.fetch_manifest_entry(io, discard_deleted=True)
    ]
    index = DeleteIndex(delete_entries, lake_table, lake_table.schema(), name, strict=False) if delete_entries else None
    return [(e, bool(index is not None and index.for_data_file(e))) for e in entries]


def optimize(
    spark: SparkSession, lake_url: str, namespace: str, table: str, report: Report | None = None
) -> IngestSummary | None:
    """Rewrite the partitions of ``namespace.table`` that hold several files, or a file that
    row-level delete files apply to, into one file each (sorted, at most the target size) with
    the deletes applied, in one ``replace`` snapshot that also drops the delete files no live
    file needs any more; None when no partition needs it.

    The rows are read at the current snapshot (the *base*) and the commit replaces exactly the
    files read: appends committed meanwhile are kept, a commit that removed or added deletes
    to a file read fails the optimize with one line (:mod:`sluice.lake.rewrite`).
    """
    from functools import reduce

    from sluice.lake.conform import Evolution
    from sluice.lake.ingest import print_progress, run_job
    from sluice.lake.live_read import read_live_rows
    from sluice.lake.partitioning import partition_columns

    lake_table = load_table(open_catalog(LakeLocation.from_url(lake_url)), namespace, table)
    name = f"{namespace}.{table}"
    plan = plan_rewrite(lake_table, name)
    if plan.left_with_deletes:
        (report or print_progress)(
            f"optimize {name}: {plan.left_with_deletes} data file(s) with delete files Sluice cannot apply left "
            f"as they are ({plan.refusal})"
        )
    if plan.rewrite is None:
        return None
    rewrite = plan.rewrite
    frames = []
    if plan.plain:
        frames.append(read_by_field_id(spark, lake_table, plan.plain))
    if plan.folded:
        frames.append(read_live_rows(spark, lake_table, plan.folded))
    schema = lake_table.schema()
    return run_job(
        spark,
        lake_table,
        reduce(lambda left, right: left.unionByName(right), frames),
        partition_columns(lake_table.spec(), schema),
        schema,
        Evolution(),
        f"optimize {name}: rewrite {len(rewrite.data_files)} files of {plan.partitions} partition(s)"
        + (f", applying the deletes of {len(plan.folded)}" if plan.folded else "")
        + (f", dropping {len(rewrite.delete_files)} delete file(s)" if rewrite.delete_files else ""),
        report or print_progress,
        rewrite.data_files,
        rewrite=rewrite,
    )


@dataclass(frozen=True)
class RewritePlan:
    """What :func:`optimize` reads and replaces: ``plain`` files (no deletes) and ``folded`` ones
    (with the delete files that apply to them), and the rewrite to commit (None: nothing to do)."""

    rewrite: Rewrite | None
    plain: list[str]
    folded: list[tuple[str, tuple[DeleteRef, ...]]]
    partitions: int
    left_with_deletes: int = 0
    refusal: str = ""


def plan_rewrite(lake_table: Table, name: str) -> RewritePlan:
    """Group the current snapshot's data files of the default spec by partition and pick the
    partitions to rewrite; a delete file is dropped when no data file left live needs it."""
    from collections import defaultdict

    from pyiceberg.manifest import ManifestContent

    from sluice.lake.deletes import DeleteIndex
    from sluice.lake.rewrite import Rewrite

    base = lake_table.current_snapshot()
    if base is None:
        return RewritePlan(None, [], [], 0)
    io = lake_table.io
    manifests = base.manifests(io)
    entries = [e for m in manifests if m.content == ManifestContent.DATA for e in m.fetch_manifest_entry(io)]
    deletes = [e for m in manifests if m.content == ManifestContent.DELETES for e in m.fetch_manifest_entry(io)]
    refusal = ""
    index = None
    if deletes:
        try:
            index = DeleteIndex(deletes, lake_table, lake_table.schema(), name)
        except ValueError as error:  # a delete file Sluice cannot apply: leave the files it may apply to
            refusal = str(error)
            index = DeleteIndex(deletes, lake_table, lake_table.schema(), name, strict=False)
    spec_id = lake_table.metadata.default_spec_id
    groups: dict[str, list[tuple[ManifestEntry, tuple[DeleteRef, ...]]]] = defaultdict(list)
    left = 0
    for entry in entries:
        refs = index.for_data_file(entry) if index is not None else ()
        if refs and refusal:
            left += 1
        elif entry.data_file.spec_id == spec_id:
            groups[repr(entry.data_file.partition)].append((entry, refs))
    chosen = [group for group in groups.values() if len(group) > 1 or any(refs for _, refs in group)]
    rewritten = [pair for group in chosen for pair in group]
    if not rewritten:
        return RewritePlan(None, [], [], 0, left, refusal)
    paths = {entry.data_file.file_path for entry, _ in rewritten}
    needed = {
        ref.path
        for entry in entries
        if entry.data_file.file_path not in paths
        for ref in (index.for_data_file(entry) if index is not None else ())
    }
    dropped = [] if refusal else [e.data_file for e in deletes if e.data_file.file_path not in needed]
    rewrite = Rewrite(name, base, [entry.data_file for entry, _ in rewritten], dropped)
    plain = [entry.data_file.file_path for entry, refs in rewritten if not refs]
    folded = [(entry.data_file.file_path, refs) for entry, refs in rewritten if refs]
    return RewritePlan(rewrite, plain, folded, len(chosen), left, refusal)


def read_by_field_id(spark: SparkSession, lake_table: Table, paths: list[str]) -> DataFrame:
    """The rows of the data files ``paths`` in the table's current columns, read by field id.

    Spark's reader reads by name, so the files are grouped by the names they hold the
    table's fields under (:func:`sluice.lake.fields.file_columns`: a renamed column's old
    name, a dropped name reused by a new field not at all); a field a file lacks is NULL.
    """
    from functools import reduce

    import pyarrow.parquet as pq
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    from sluice.lake.conform import spark_type
    from sluice.lake.fields import file_columns, name_mapping, parse_mapping

    schema = lake_table.schema()
    mapping = parse_mapping(name_mapping(lake_table, schema))
    groups: dict[tuple[str | None, ...], list[str]] = {}
    for path in paths:
        with open_input(path) as stream:
            held = file_columns(pq.read_schema(stream), mapping)
        groups.setdefault(tuple(held.get(field.field_id) for field in schema.fields), []).append(path)
    frames = []
    for names, group in groups.items():
        present = [(name, field) for name, field in zip(names, schema.fields, strict=True) if name is not None]
        read_schema = StructType([StructField(name, spark_type(field.field_type)) for name, field in present])
        read = spark.read.schema(read_schema).parquet(*group)
        frames.append(
            read.select(
                *(
                    (F.col(f"`{name}`") if name is not None else F.lit(None))
                    .cast(spark_type(field.field_type))
                    .alias(field.name)
                    for name, field in zip(names, schema.fields, strict=True)
                )
            )
        )
    return reduce(lambda left, right: left.unionByName(right), frames)
