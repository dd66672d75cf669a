"""``UPDATE`` and ``MERGE INTO`` a lake table: copy-on-write, one snapshot replacing the files read.

Spark rewrites both statements on a table whose row-level operation is group-based (Spark's
``ReplaceData``, java SluiceLakeTable): the operation's scan reads whole data files (the
*group*), and Spark's own query turns their rows into the group's new content: every row
the statement does not change, the changed rows, minus the deleted ones, plus a MERGE's
inserted rows. Spark evaluates every condition and SET expression, and fails a MERGE whose
target row two source rows match (``MERGE_CARDINALITY_VIOLATION``) while the rows are being
written, before anything is committed.

The scan reads the snapshot the statement's table was described at (pinned in its handle,
so every file of it is read at one snapshot) and pushes no filter: every row of every live
data file is read, so the group is all of that snapshot's data files, and the delete files
that applied to them are folded in by the lake's reader. The write here commits ONE
snapshot that adds the rewritten files and removes exactly the group's data files and
delete files, validated as Iceberg's ``OverwriteFiles`` is for a copy-on-write operation
(:mod:`sluice.lake.rewrite` with a statement): a file appended meanwhile is kept (its rows
were not read, and stay); a concurrent commit that removed a file of the group or added a
delete file fails the statement with one line naming that commit, and nothing changes.

A ``DELETE`` arrives here only when Spark cannot hand its condition to the source (a
subquery): every other one is Spark's metadata-only ``deleteWhere`` (:mod:`sluice.lake.delete_rows`).

Only copy-on-write is written: a table whose ``write.update.mode`` / ``write.merge.mode``
says ``merge-on-read`` is refused, naming the property, before any row is read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, load_table, open_catalog

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot
    from pyspark.sql import DataFrame, SparkSession

    from sluice.lake.ingest import IngestSummary, Report

#: Iceberg's table properties naming each statement's write mode (TableProperties.UPDATE_MODE, MERGE_MODE)
MODE_PROPERTY = {"UPDATE": "write.update.mode", "MERGE": "write.merge.mode", "DELETE": "write.delete.mode"}
COPY_ON_WRITE, MERGE_ON_READ = "copy-on-write", "merge-on-read"
#: how each command is named in messages
STATEMENT = {"UPDATE": "UPDATE", "MERGE": "MERGE INTO", "DELETE": "DELETE FROM"}


def statement(command: str, name: str) -> str:
    """The statement as messages name it (``UPDATE lake.ns.t``)."""
    if command not in STATEMENT:
        raise ConfigError(f"lake table {name}: row-level command {command!r} is not UPDATE, MERGE or DELETE")
    return f"{STATEMENT[command]} {name}"


def check_mode(lake_table: Table, command: str, name: str) -> None:
    """Refuse a write mode Sluice does not write (merge-on-read), naming the property."""
    key = MODE_PROPERTY[command]
    mode = lake_table.properties.get(key, COPY_ON_WRITE)
    if mode != COPY_ON_WRITE:
        raise ConfigError(
            f"{statement(command, name)}: the table's {key} is {mode!r}; Sluice writes UPDATE and MERGE "
            f"copy-on-write only (ALTER TABLE ... SET TBLPROPERTIES ('{key}' = '{COPY_ON_WRITE}')); nothing was changed"
        )


def snapshot_files(lake_table: Table, snapshot: Snapshot) -> tuple[list[DataFile], list[DataFile]]:
    """The live data files and delete files of ``snapshot``."""
    from pyiceberg.manifest import DataFileContent

    data: list[DataFile] = []
    deletes: list[DataFile] = []
    for manifest in snapshot.manifests(lake_table.io):
        for entry in manifest.fetch_manifest_entry(lake_table.io, discard_deleted=True):
            (data if entry.data_file.content == DataFileContent.DATA else deletes).append(entry.data_file)
    return data, deletes


def replace_data(
    spark: SparkSession,
    lake_url: str,
    namespace: str,
    table: str,
    command: str,
    snapshot_id: int | None,
    frame: DataFrame,
    report: Report,
) -> IngestSummary:
    """Write ``frame`` (the new content of every file of snapshot ``snapshot_id``) and commit it
    as one snapshot replacing those files; None ``snapshot_id``: the table had no rows, an append."""
    from sluice.lake.conform import Evolution
    from sluice.lake.ingest import run_job
    from sluice.lake.partitioning import partition_columns
    from sluice.lake.rewrite import Rewrite

    lake_table = load_table(open_catalog(LakeLocation.from_url(lake_url)), namespace, table)
    name = f"{namespace}.{table}"
    what = statement(command, name)
    check_mode(lake_table, command, name)
    schema = lake_table.schema()
    columns = partition_columns(lake_table.spec(), schema)
    if snapshot_id is None:
        return run_job(spark, lake_table, frame, columns, schema, Evolution(), f"{what}: no snapshot read", report)
    base = lake_table.snapshot_by_id(snapshot_id)
    if base is None:
        raise ConfigError(
            f"{what}: snapshot {snapshot_id}, which the statement read, is no longer in the table "
            "(expired meanwhile); nothing was changed, run the statement again"
        )
    data_files, delete_files = snapshot_files(lake_table, base)
    rewrite = Rewrite(name, base, data_files, delete_files, statement=what)
    return run_job(
        spark,
        lake_table,
        frame,
        columns,
        schema,
        Evolution(),
        f"{what}: rewrite the {len(data_files)} data file(s) of snapshot {snapshot_id}"
        + (f", dropping {len(delete_files)} delete file(s)" if delete_files else ""),
        report,
        data_files,
        rewrite=rewrite,
    )
