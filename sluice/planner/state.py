"""The optimizer's state: the Spark-side query tree plus what each scan will push.

Rules take a :class:`PlanState` and return a new one; nothing is mutated in place, so
EXPLAIN VERBOSE can show the state after every rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from sluice.pushdown.levels import Verdict
from sluice.types import TableSchema

#: meta key on a conjunct node in the tree: the (scan id, index) it was placed at
CANDIDATE = "sluice_candidate"


@dataclass(frozen=True)
class OrderKey:
    column: str
    descending: bool
    nulls_first: bool


@dataclass(frozen=True)
class ScanState:
    """One table reference of the query and what has been decided for it so far."""

    scan_id: str  # the Spark temp view this scan becomes
    alias: str  # the alias its columns are qualified with in the tree
    source: str
    table: TableSchema
    candidates: tuple[exp.Expression, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    columns: tuple[str, ...] | None = None
    limit: int | None = None
    order: tuple[OrderKey, ...] = ()

    def describe(self) -> str:
        lines = [f"scan {self.alias}: {self.table.qualified_name}"]
        if self.candidates and not self.verdicts:
            lines += [f"  candidate: {c.sql('spark')}" for c in self.candidates]
        lines += [f"  {v.level.value:<11} {v.sql}  -- {v.reason}" for v in self.verdicts]
        if self.columns is not None:
            lines.append(f"  columns: {', '.join(self.columns)}")
        if self.order:
            keys = ", ".join(f"{k.column} {'DESC' if k.descending else 'ASC'} NULLS {'FIRST' if k.nulls_first else 'LAST'}" for k in self.order)
            lines.append(f"  order: {keys}")
        if self.limit is not None:
            lines.append(f"  limit: {self.limit}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PlanState:
    tree: exp.Expression
    scans: tuple[ScanState, ...]
    session_zone: str = "UTC"
    dialects: dict = field(default_factory=dict, compare=False)  # source name -> Dialect
    sources: dict = field(default_factory=dict, compare=False)  # source name -> Source (it classifies its conjuncts)

    def scan(self, scan_id: str) -> ScanState:
        return next(s for s in self.scans if s.scan_id == scan_id)

    def by_alias(self) -> dict[str, ScanState]:
        return {s.alias: s for s in self.scans}

    def with_scan(self, updated: ScanState) -> "PlanState":
        return replace(self, scans=tuple(updated if s.scan_id == updated.scan_id else s for s in self.scans))

    def render(self) -> str:
        """Text for EXPLAIN VERBOSE: the Spark-side SQL and every scan's state."""
        parts = [self.tree.sql(dialect="spark", pretty=True)]
        parts += [scan.describe() for scan in self.scans]
        return "\n".join(parts)
