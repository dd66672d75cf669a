"""What Spark planned for a query, read back from its optimised plan: every Sluice scan's
source, remote query, columns, limit, the verdict on each filter and on each aggregate Spark
offered, with the rules' trace."""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, replace
from typing import Any

from sluice.protocol.codec import decode
from sluice.protocol.scan import PlanAnswer
from sluice.pushdown.levels import Verdict
from sluice.scan.spec import ScanSpec


@dataclass(frozen=True)
class TraceStep:
    """One named rule of a scan's negotiation and what it decided (EXPLAIN VERBOSE)."""

    rule: str
    text: str
    changed: bool


@dataclass(frozen=True)
class ScanPlan:
    scan_id: str
    alias: str  # the table as the user named it
    source: str
    source_url: str  # masked
    table: str
    spec: ScanSpec
    verdicts: tuple[Verdict, ...]
    remote_query: str
    trace: tuple[TraceStep, ...] = ()
    #: the verdict on each grouping key and aggregate Spark offered (pushed when ``spec.aggregate``)
    aggregates: tuple[Verdict, ...] = ()
    #: the join keys Spark handed the scan at run time (known once the query ran: explain analyze)
    runtime: tuple[Verdict, ...] = ()
    #: the pushed ORDER BY as the source runs it (rendered by the source from ``spec.order``)
    order: str | None = None
    #: the verdict on each key of a join Spark offered the scan (pushed when ``spec.join``), and
    #: why it was not pushed when no key is to blame
    joins: tuple[Verdict, ...] = ()
    join_note: str | None = None
    #: a lake scan's reader and why (sluice/lake/vectorised.py): "vectorised" or "python"
    reader: str | None = None
    reader_reason: str | None = None

    @classmethod
    def from_answer(cls, answer: PlanAnswer) -> ScanPlan:
        """The planner's answer for a scan (its ``plan`` method), as Spark kept it."""
        refused = answer.join_refused
        return cls(
            answer.scan_id,
            answer.table,
            answer.source,
            answer.source_url,
            answer.table,
            ScanSpec.from_json(answer.scan),
            tuple(Verdict.from_dict(v) for v in answer.verdicts),
            answer.remote_query,
            tuple(TraceStep(s.rule, s.text, s.changed) for s in answer.trace),
            tuple(Verdict.from_dict(v) for v in answer.aggregates),
            tuple(Verdict.from_dict(v) for v in answer.runtime),
            answer.order,
            tuple(Verdict.from_dict(v) for v in answer.join_verdicts or (refused.verdicts if refused else [])),
            refused.note if refused else None,
            answer.reader,
            answer.reader_reason,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scan": self.scan_id,
            "alias": self.alias,
            "source": self.source,
            "source_url": self.source_url,
            "table": self.table,
            "remote_query": self.remote_query,
            "columns": [o.name for o in self.spec.aggregate.outputs]
            if self.spec.aggregate
            else list(self.spec.columns),
            "filters": [v.shown() for v in self.verdicts],
            "aggregates": [v.shown() for v in self.aggregates],
            "aggregates_pushed": self.spec.aggregate is not None,
            "runtime_filters": [v.shown() for v in self.runtime],
            "join": [v.shown() for v in self.joins],
            "join_pushed": self.spec.join is not None,
            "join_note": self.join_note,
            "reader": self.reader,
            "reader_reason": self.reader_reason,
            "limit": self.spec.limit,
            "order": self.order,
            "partitions": 1
            if self.spec.limit is not None or self.spec.aggregate is not None or self.spec.join
            else self.spec.partitions,
        }


@dataclass(frozen=True)
class QueryPlan:
    query: str
    spark_plan: str  # Spark's optimised plan (what runs over the scans)
    scans: tuple[ScanPlan, ...]

    @classmethod
    def from_scans_json(cls, query: str, spark_plan: str, scans_json: str) -> QueryPlan:
        """The scans in plan order; a table scanned twice is shown ``table#2`` the second time."""
        scans: list[ScanPlan] = []
        seen: collections.Counter[str] = collections.Counter()
        for answer in json.loads(scans_json):
            scan = ScanPlan.from_answer(decode(PlanAnswer, answer, "the 'plan' answer Spark kept"))
            seen[scan.table] += 1
            scans.append(
                replace(scan, alias=scan.table if seen[scan.table] == 1 else f"{scan.table}#{seen[scan.table]}")
            )
        return cls(query, spark_plan, tuple(scans))

    def to_dict(self, trace: bool = False) -> dict[str, Any]:
        scans = []
        for scan in self.scans:
            entry = scan.to_dict()
            if trace:
                entry["rules"] = [
                    {"rule": step.rule, "changed": step.changed, "text": step.text} for step in scan.trace
                ]
            scans.append(entry)
        return {"query": self.query, "spark_plan": self.spark_plan, "scans": scans}
