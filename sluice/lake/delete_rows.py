"""``DELETE FROM`` a lake table: one snapshot that removes the rows Spark's condition selects.

Each data file of the current snapshot is one of three things, decided by its partition
values and column statistics (the same proofs an overwrite by a filter uses,
:mod:`sluice.lake.overwrite`):

- **kept** when no row can match (the condition's superset form is false on its partition
  or bounds): not read, not touched;
- **removed whole** when every row matches, which needs every conjunct of the condition
  EXACT in the lake's dialect and proven by the partition (strict projection) or the
  bounds: the snapshot drops the file without reading it (a whole-partition delete writes
  no data file);
- **rewritten** (copy-on-write) otherwise: Spark reads the file and keeps the rows for
  which the condition is not TRUE (``NOT coalesce(condition, false)``, so a row the
  condition is NULL for stays, as in Spark's own DELETE); the kept rows are written by the
  ingest pipeline (:func:`sluice.lake.ingest.run_job`), which replaces the file in the
  same snapshot.

The condition is evaluated by Spark, in the statement's own session, never by PyIceberg
or pyarrow (whose NULL, NaN and collation rules differ): the lake's proofs only decide
which files Spark need not read. A data file that row-level delete files apply to is
removed whole when proven, and otherwise refused, naming it, before anything is written:
its rewrite would have to fold those deletes in, which optimize does (run it first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, load_table, open_catalog

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table
    from pyspark.sql import SparkSession

    from sluice.lake.ingest import Report


#: a test of one data file (its partition record and column statistics)
_FileTest = Callable[["DataFile"], bool]


@dataclass(frozen=True)
class DeleteCondition:
    """Spark's DELETE condition, in the two forms the delete needs.

    ``spark_sql`` is the condition as Spark SQL (None: every row, ``DELETE`` without
    ``WHERE`` or ``TRUNCATE TABLE``); Spark evaluates it. ``pruning`` are lake-dialect
    conjuncts, each true on at least the rows Spark's conjunct is true on (a file where one
    is false holds no matching row); ``exact`` says they are all of Spark's conjuncts and
    each is EXACT, so they may also prove that a file matches whole.
    """

    spark_sql: str | None
    pruning: tuple[str, ...] = ()
    exact: bool = False

    @property
    def shown(self) -> str:
        return self.spark_sql or "TRUE"


@dataclass(frozen=True)
class DeleteSummary:
    """What one DELETE did: its snapshot (None when no file held a matching row) and the files."""

    table: str
    snapshot_id: int | None
    removed_files: int  # dropped whole, unread
    rewritten_files: int  # read by Spark and replaced by their kept rows
    written_files: int


@dataclass(frozen=True)
class _Plan:
    removed: list[DataFile]
    rewritten: list[DataFile]


def delete_rows(
    spark: SparkSession, lake_url: str, namespace: str, table: str, condition: DeleteCondition, report: Report
) -> DeleteSummary:
    """Delete the rows of ``namespace.table`` where ``condition`` is TRUE, in one snapshot."""
    from sluice.lake.commit import commit_data_files, job_snapshot
    from sluice.lake.conform import Evolution
    from sluice.lake.ingest import new_job_id, run_job
    from sluice.lake.maintenance import read_by_field_id
    from sluice.lake.partitioning import partition_columns

    lake_table = load_table(open_catalog(LakeLocation.from_url(lake_url)), namespace, table)
    name = f"{namespace}.{table}"
    plan = _plan(lake_table, name, condition)
    what = f"delete from {name} where {condition.shown}"
    if not plan.rewritten:
        if not plan.removed:
            report(f"{what}: no data file may hold a matching row; nothing to change")
            return DeleteSummary(name, None, 0, 0, 0)
        job_id = new_job_id()
        report(f"{what}: remove {len(plan.removed)} whole file(s), job {job_id}")
        commit_data_files(lake_table, [], job_id, replaced=plan.removed)
        snapshot = job_snapshot(lake_table.refresh(), job_id)
        return DeleteSummary(name, snapshot.snapshot_id if snapshot else None, len(plan.removed), 0, 0)
    schema = lake_table.schema()
    assert condition.spark_sql is not None  # a delete of every row removes every file whole
    read = read_by_field_id(spark, lake_table, [data_file.file_path for data_file in plan.rewritten])
    kept = read.where(f"NOT coalesce(({condition.spark_sql}), false)")
    summary = run_job(
        spark,
        lake_table,
        kept,
        partition_columns(lake_table.spec(), schema),
        schema,
        Evolution(),
        f"{what}: rewrite {len(plan.rewritten)} file(s), remove {len(plan.removed)} whole",
        report,
        plan.removed + plan.rewritten,
    )
    return DeleteSummary(name, summary.snapshot_id, len(plan.removed), len(plan.rewritten), summary.files)


def _plan(lake_table: Table, name: str, condition: DeleteCondition) -> _Plan:
    """Which current data files are removed whole and which rewritten; refused (before
    anything is written) when a file to rewrite has row-level delete files."""
    from sluice.lake.maintenance import data_entries

    entries = data_entries(lake_table, name)
    if condition.spark_sql is None:
        return _Plan([entry.data_file for entry, _ in entries], [])
    may_match, all_match = _tests(lake_table, condition.pruning, condition.exact)
    removed, rewritten = [], []
    for entry, has_deletes in entries:
        data_file = entry.data_file
        if not may_match(data_file):
            continue
        if all_match(data_file):
            removed.append(data_file)
        elif has_deletes:
            raise ConfigError(
                f"DELETE FROM lake table {name} where {condition.shown}: data file {data_file.file_path} has "
                "row-level delete files and may hold rows that match and rows that do not; Sluice rewrites "
                "such files only without delete files (run sluice lake optimize first: it applies them, or "
                "delete whole partitions). Nothing was written; the table is as it was"
            )
        else:
            rewritten.append(data_file)
    return _Plan(removed, rewritten)


def _tests(lake_table: Table, pruning: Sequence[str], exact: bool) -> tuple[_FileTest, _FileTest]:
    """(may a file hold a matching row, does every row of it match), from the lake's conjuncts."""
    from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator, _StrictMetricsEvaluator

    from sluice.lake.expressions import combined, conjunct_filter
    from sluice.lake.overwrite import partition_test

    if not pruning:
        return (lambda data_file: True), (lambda data_file: False)
    schema = lake_table.metadata.schema()
    filters = combined([conjunct_filter(sql, schema) for sql in pruning])
    expression = filters.expression
    may_rows = _InclusiveMetricsEvaluator(schema, expression).eval
    may_partition = partition_test(lake_table, expression, strict=False)
    if not (exact and filters.exact):
        return (lambda f: may_partition(f) and may_rows(f)), (lambda data_file: False)
    all_rows = _StrictMetricsEvaluator(schema, expression).eval
    all_partition = partition_test(lake_table, expression, strict=True)
    return (lambda f: may_partition(f) and may_rows(f)), (lambda f: all_partition(f) or all_rows(f))
