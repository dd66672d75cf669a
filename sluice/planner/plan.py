"""The result of planning: what each scan reads and pushes, and what Spark runs on top."""

from __future__ import annotations

from dataclasses import dataclass, field

from sluice.display import ShownNames
from sluice.planner.optimizer import TraceStep
from sluice.pushdown.levels import Verdict
from sluice.scan import ScanSpec


@dataclass(frozen=True)
class ScanPlan:
    scan_id: str  # the Spark view it runs as (internal: never shown)
    alias: str  # the user's alias for the scan, unique within the query (``o``, ``o#2``)
    source: str
    source_url: str  # masked
    table: str
    spec: ScanSpec
    verdicts: tuple[Verdict, ...]  # their Spark SQL in the user's names
    remote_query: str

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "alias": self.alias,
            "source": self.source,
            "source_url": self.source_url,
            "table": self.table,
            "remote_query": self.remote_query,
            "columns": list(self.spec.columns),
            "filters": [v.to_dict() for v in self.verdicts],
            "limit": self.spec.limit,
            "order": self.spec.order,
            "partitions": 1 if self.spec.limit is not None else self.spec.partitions,
        }


@dataclass(frozen=True)
class QueryPlan:
    query: str
    spark_sql: str  # what Spark runs over the scans (residual filters, joins, aggregates)
    reference_sql: str  # what Spark runs with pushdown off
    scans: tuple[ScanPlan, ...]
    trace: tuple[TraceStep, ...]
    #: the user's names for the internal ones in ``spark_sql`` and the trace
    names: ShownNames = field(default_factory=lambda: ShownNames({}))

    @property
    def shown_sql(self) -> str:
        """``spark_sql`` as people read it: the user's table names, aliases and expressions."""
        return self.names.text(self.spark_sql)

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "query": self.query,
            "spark_sql": self.shown_sql,
            "scans": [scan.to_dict() for scan in self.scans],
            # only when planned with trace=True (EXPLAIN VERBOSE, `sluice plan`)
            **({"rules": [{"rule": step.rule, "changed": step.changed} for step in self.trace]} if self.trace else {}),
        }
