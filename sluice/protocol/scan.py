"""The scan's negotiation: Spark's offers (filters, aggregates, a join) and the plan of the scan."""

from __future__ import annotations

from dataclasses import dataclass, field

from sluice.protocol.base import SourceRequest
from sluice.protocol.codec import JsonObject


@dataclass(frozen=True, kw_only=True)
class ScanRequest(SourceRequest):
    """A request about one scan: the table's handle (``describe``'s) and what was decided before it."""

    table: JsonObject
    #: the join pushed into this scan (``join``'s answer), and its keys' verdicts
    join: JsonObject | None = None
    join_verdicts: list[JsonObject] = field(default_factory=list)
    #: the verdicts ``filters`` gave the conjuncts Spark offered
    verdicts: list[JsonObject] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class FiltersRequest(ScanRequest):
    #: the conjuncts Spark offers (V2 predicates as JSON, io.sluice.spark.Expressions)
    predicates: list[JsonObject] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class FiltersAnswer:
    #: one verdict per offered conjunct, in order (EXACT / INEXACT / UNSUPPORTED, why)
    verdicts: list[JsonObject]
    #: per conjunct, whether Spark's dynamic pruning would call it likely selective
    selective: list[bool]


@dataclass(frozen=True, kw_only=True)
class AggregateRequest(ScanRequest):
    #: the offered aggregation (``group_by``, ``aggregates``, ``averaged``)
    aggregation: JsonObject


@dataclass(frozen=True, kw_only=True)
class AggregateAnswer:
    #: whether the source answers the aggregation completely
    complete: bool
    verdicts: list[JsonObject]
    note: str | None


@dataclass(frozen=True, kw_only=True)
class JoinColumn:
    name: str
    alias: str | None = None


@dataclass(frozen=True, kw_only=True)
class JoinSide:
    """One side of an offered join: its table, pushed filters and the columns Spark needs."""

    catalog: str | None = None
    table: JsonObject
    verdicts: list[JsonObject] = field(default_factory=list)
    #: a join already pushed into this side (never pushed again)
    join: JsonObject | None = None
    columns: list[JoinColumn] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class JoinRequest(SourceRequest):
    left: JoinSide
    right: JoinSide
    #: both sides are scans of one attached source
    same_source: bool = False
    #: Spark's JoinType name (INNER_JOIN, LEFT_OUTER_JOIN, ...)
    join_type: str
    condition: JsonObject | None = None


@dataclass(frozen=True, kw_only=True)
class JoinAnswer:
    pushed: bool
    verdicts: list[JsonObject]
    note: str | None
    #: the pushed join (sluice/planner/joins.py JoinRead), which later requests carry
    join: JsonObject | None = None
    #: what the joined scan reads until Spark prunes columns (Spark's StructType JSON)
    read_schema: JsonObject | None = None


@dataclass(frozen=True, kw_only=True)
class PlanRequest(ScanRequest):
    """The scan as Spark built it: every offer it accepted, for the planner to plan the read."""

    #: per offered conjunct, whether it is likely selective (``filters``' answer)
    selective: list[bool] = field(default_factory=list)
    #: the columns Spark reads (none: ``count(*)``)
    columns: list[str] = field(default_factory=list)
    limit: int | None = None
    #: the top-N's sort keys (``expr``, ``descending``, ``nulls_first``)
    order: list[JsonObject] = field(default_factory=list)
    #: the aggregation Spark pushed, or the last one it offered and the planner refused
    aggregation: JsonObject | None = None
    aggregation_offered: JsonObject | None = None
    #: the last join Spark offered and the planner refused (its ``join`` answer: EXPLAIN says why)
    join_refused: JoinAnswer | None = None
    #: False on the reference path: nothing pushed
    pushdown: bool = True
    #: Spark's default parallelism (how many splits its own Parquet reader would aim for)
    parallelism: int | None = None
    #: the join keys Spark found at run time (dynamic pruning), V2 predicates
    runtime: list[JsonObject] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class TraceStep:
    """One named rule's decision, as EXPLAIN VERBOSE shows it."""

    rule: str
    text: str
    changed: bool


@dataclass(frozen=True, kw_only=True)
class PlanAnswer:
    """The scan as the source will run it: what the reader gets, what EXPLAIN shows, statistics."""

    #: the typed ScanSpec the reader gets, as JSON text (sluice/scan/spec.py)
    scan: str
    scan_id: str
    columns: list[str]
    table: str
    #: what the scan reads (Spark's StructType JSON)
    read_schema: JsonObject
    #: the aggregate verdicts as shown, whether the aggregation was pushed
    aggregates: list[JsonObject]
    aggregates_pushed: bool
    #: the run-time join keys' verdicts as shown
    runtime: list[JsonObject]
    #: a filter Spark's dynamic pruning would call selective was pushed EXACT (SelectiveScans.java)
    selective_exact: bool = False
    #: the read columns Spark may restrict at run time
    runtime_columns: list[str]
    source: str
    source_url: str
    remote_query: str
    verdicts: list[JsonObject]
    limit: int | None
    #: the pushed ORDER BY as the reader renders it
    order: str | None
    limit_note: str | None
    partitions: int
    #: Spark's EXPLAIN line for the scan
    description: str
    #: EXPLAIN FORMATTED's keys
    metadata: dict[str, str]
    join_refused: JoinAnswer | None = None
    trace: list[TraceStep]
    #: which reader reads a lake scan (``python`` / ``vectorised``) and why
    reader: str | None = None
    reader_reason: str | None = None
    #: what Spark's vectorised Parquet reader reads (sluice/lake/vectorised.py)
    vector: JsonObject | None = None
    #: statistics for Spark's join planning
    rows: int | None = None
    bytes: int | None = None
    #: a pushed join's scan: the join and its keys' verdicts
    join: JsonObject | None = None
    join_verdicts: list[JsonObject] | None = None
