"""The user's entry point: attach sources, then query them together with Spark SQL.

>>> fed = Federation()                                        # doctest: +SKIP
>>> fed.attach("lite", "sqlite:///demo-data/crm.db")          # doctest: +SKIP
>>> fed.sql("SELECT count(*) FROM lite.customers WHERE region = 'EU'").show()  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import replace

from typing import TYPE_CHECKING, Callable

from pyspark.sql import DataFrame, SparkSession

from sluice.display import ShownNames
from sluice.errors import ConfigError, QueryError
from sluice.explain import render_explain
from sluice.masking import mask_url
from sluice.planner.binder import BoundQuery, bind
from sluice.planner.names import known_names
from sluice.planner.optimizer import optimize
from sluice.planner.plan import QueryPlan, ScanPlan
from sluice.planner.remote import order_by
from sluice.planner.state import PlanState, ScanState
from sluice.pushdown.levels import Level
from sluice.scan import ScanSpec
from sluice.sources import open_source
from sluice.sources.base import Source
from sluice.spark import execute
from sluice.spark.session import build_session, prepare
from sluice.types import TableSchema

if TYPE_CHECKING:
    from sluice.lake.pyramid import Pyramid


class Federation:
    """Attached sources plus the Spark session that queries them."""

    def __init__(self, spark: SparkSession | None = None, partitions: int | None = None) -> None:
        self.spark = prepare(spark or build_session())
        self.partitions = partitions
        self._sources: dict[str, Source] = {}
        self._tables: dict[tuple[str, str | None, str], TableSchema] = {}

    # ------------------------------------------------------------ sources
    def attach(self, name: str, url: str, password: str | None = None, partitions: int | None = None,
               statement_timeout_s: float = 600.0) -> None:
        """Attach a source under ``name``; connects once so a bad URL fails here, clearly."""
        key = name.lower()
        if not key.isidentifier():
            raise ConfigError(f"source name {name!r} must be a SQL identifier")
        source = open_source(key, url, password=password, partitions=partitions or self.partitions,
                             statement_timeout_s=statement_timeout_s)
        source.check()
        self._sources[key] = source
        self._tables = {k: v for k, v in self._tables.items() if k[0] != key}

    def detach(self, name: str) -> None:
        self._sources.pop(name.lower(), None)

    @property
    def sources(self) -> dict[str, str]:
        """Attached source names and their (masked) URLs."""
        return {name: mask_url(source.url) for name, source in self._sources.items()}

    def table(self, source: str, schema: str | None, name: str) -> TableSchema:
        """The described table (cached: the catalog is read once per attach)."""
        key = (source, schema, name.lower())
        if key not in self._tables:
            self._tables[key] = self._sources[source].describe(schema, name)
        return self._tables[key]

    # ------------------------------------------------------------ planning
    def _bind(self, query: str, prefix: str) -> BoundQuery:
        return bind(query, self.table, sorted(self._sources), prefix)

    def plan(self, query: str, trace: bool = False) -> QueryPlan:
        """Plan ``query``: every scan's pushdown decisions, without running anything.

        ``trace`` keeps the plan after every optimizer rule (EXPLAIN VERBOSE, ``rules`` in JSON).
        """
        return self._plan(query, execute.next_prefix(), trace)[0]

    def _plan(self, query: str, prefix: str, trace: bool = False) -> tuple[QueryPlan, BoundQuery]:
        bound = self._bind(query, prefix)
        zone = self.spark.conf.get("spark.sql.session.timeZone") or "UTC"
        dialects = {name: source.dialect for name, source in self._sources.items()}
        state, steps = optimize(PlanState(bound.qualified, bound.scans, zone, dialects, dict(self._sources)), trace)
        names = ShownNames.of(query, ((s.scan_id, s.alias, s.table.qualified_name) for s in state.scans))
        scans = tuple(self._scan_plan(scan, names) for scan in state.scans)
        spark_sql = state.tree.sql(dialect="spark")
        return QueryPlan(query, spark_sql, bound.reference.sql(dialect="spark"), scans, steps, names), bound

    def _scan_plan(self, scan: ScanState, names: ShownNames) -> ScanPlan:
        source = self._sources[scan.source]
        pushed = tuple(v.remote_sql for v in scan.verdicts if v.level is not Level.UNSUPPORTED)
        spec = ScanSpec.for_source(
            source, scan.table, scan.columns, where=pushed, limit=scan.limit,
            order=order_by(source.dialect, scan.table, scan.order),
            partitions=source.default_partitions(scan.table),
        )
        remote = source.masked(source.request_text(spec))
        verdicts = tuple(replace(v, sql=names.text(v.sql)) for v in scan.verdicts)
        return ScanPlan(scan.scan_id, names.alias(scan.alias), scan.source, mask_url(source.url), scan.table.qualified_name,
                        spec, verdicts, remote)

    # ------------------------------------------------------------ running
    def _whole_table(self, scan: ScanState) -> ScanSpec:
        source = self._sources[scan.source]
        columns = tuple(c.name for c in scan.table.columns)
        return ScanSpec.for_source(source, scan.table, columns, partitions=source.default_partitions(scan.table))

    def sql(self, query: str, pushdown: bool = True) -> DataFrame:
        """Run ``query`` (Spark SQL over ``source.[schema.]table`` names) as a DataFrame.

        ``pushdown=False`` is the reference path: every table is read whole and Spark
        evaluates everything; with pushdown on the answer must be the same rows.
        """
        return self._dataframe(query, pushdown, metrics_dir=None)[0]

    def _dataframe(self, query: str, pushdown: bool, metrics_dir: str | None,
                   trace: bool = False) -> tuple[DataFrame, QueryPlan]:
        plan, bound = self._plan(query, execute.next_prefix(), trace)
        labels = plan.names.text
        if not pushdown:
            whole = {s.scan_id: (s.source, self._whole_table(s)) for s in bound.scans}
            return execute.run(self.spark, plan.reference_sql, self._frames(whole, metrics_dir), shown=labels), plan
        # Result names are the reference query's, so no rewrite can rename a column: read off
        # its text when its shape allows (sluice/planner/names.py), else Spark's analysis of
        # it over empty stand-ins (same schemas, no reads).
        known = self._known_names(bound)
        names = known if known is not None else self._analysed_names(plan, bound, labels)
        pushed = {s.scan_id: (s.source, s.spec) for s in plan.scans}
        try:
            return execute.run(self.spark, plan.spark_sql, self._frames(pushed, metrics_dir), names, labels), plan
        except QueryError:
            if known is not None:  # the reference query's own error, as without the shortcut
                self._analysed_names(plan, bound, labels)
            raise

    def _known_names(self, bound: BoundQuery) -> list[str] | None:
        if self.spark.conf.get("spark.sql.caseSensitive", "false").lower() != "false":
            return None
        return known_names(bound.reference, {s.scan_id: s.table for s in bound.scans})

    def _analysed_names(self, plan: QueryPlan, bound: BoundQuery, labels: Callable[[str], str]) -> list[str]:
        """Spark's result names for the reference query, analysed over empty stand-ins."""
        stand_ins = {s.scan_id: self.spark.createDataFrame([], s.table.spark_ddl()) for s in bound.scans}
        return execute.run(self.spark, plan.reference_sql, stand_ins, shown=labels).columns

    def _frames(self, specs: dict[str, tuple[str, ScanSpec]], metrics_dir: str | None) -> dict[str, DataFrame]:
        frames = {}
        for scan_id, (source_name, spec) in specs.items():
            if metrics_dir:
                spec = replace(spec, metrics_dir=os.path.join(metrics_dir, scan_id))
                os.makedirs(spec.metrics_dir, exist_ok=True)  # type: ignore[arg-type]
            frames[scan_id] = execute.scan_frame(self.spark, spec, self._sources[source_name].credential)
        return frames

    def _measure(self, query: str, pushdown: bool, trace: bool = False) -> tuple[QueryPlan, dict[str, dict[str, int]]]:
        """Run ``query`` to completion; rows and bytes each scan transferred, by scan id."""
        directory = tempfile.mkdtemp(prefix="sluice-metrics-")
        try:
            frame, plan = self._dataframe(query, pushdown, directory, trace)
            frame.write.format("noop").mode("overwrite").save()
            return plan, {scan.scan_id: _read_metrics(os.path.join(directory, scan.scan_id)) for scan in plan.scans}
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def explain(self, query: str, verbose: bool = False, analyze: bool = False) -> str:
        """Per scan: remote query, each conjunct's level and reason, columns, limit.

        ``verbose`` adds the plan after every optimizer rule; ``analyze`` runs the query
        and adds rows and bytes transferred per scan.
        """
        if not analyze:
            plan = self.plan(query, trace=verbose)
            return render_explain(plan, verbose=verbose, pruning=self._pruning(plan))
        plan, metrics = self._measure(query, pushdown=True, trace=verbose)
        return render_explain(plan, verbose=verbose, metrics=metrics, pruning=self._pruning(plan))

    def pruning(self, query: str) -> "dict[str, Pyramid]":
        """The pruning pyramid of every lake scan of ``query``, by scan alias."""
        plan = self.plan(query)
        return {scan.alias: pyramid for scan in plan.scans if (pyramid := self._pruning(plan).get(scan.scan_id))}

    def _pruning(self, plan: QueryPlan) -> "dict[str, Pyramid]":
        found = {}
        for scan in plan.scans:
            pyramid = self._sources[scan.source].pruning(scan.spec)
            if pyramid is not None:
                found[scan.scan_id] = pyramid
        return found

    def transferred(self, query: str, pushdown: bool = True) -> dict[str, dict[str, int]]:
        """Run ``query``; rows and bytes each scan transferred, by scan alias."""
        plan, metrics = self._measure(query, pushdown)
        return {scan.alias: metrics[scan.scan_id] for scan in plan.scans}


def _read_metrics(directory: str) -> dict[str, int]:
    """Rows and bytes per scan. Spark may read a partition twice (a global sort samples it
    first), so each partition counts once; ``reads`` says how many reads there were."""
    per_partition: dict[int, dict[str, int]] = {}
    reads = 0
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                record = json.load(handle)
            per_partition[record["partition"]] = record
            reads += 1
    rows = sum(r["rows"] for r in per_partition.values())
    nbytes = sum(r["bytes"] for r in per_partition.values())
    return {"rows": rows, "bytes": nbytes, "reads": reads}
