"""The Python planner behind Sluice's Spark catalogs: every answer the catalog layer asks for.

Spark's optimizer offers each scan of a Sluice table its filters (V2 predicates), the columns
it needs, a limit or top-N; the Java classes (``java/io/sluice/spark``) forward each offer
here as JSON (:mod:`sluice.spark.bridge` is the transport) and do what the answer says. Methods:

* ``namespaces``, ``tables``, ``describe``: the catalog (``SHOW``, ``DESCRIBE``, name lookup).
* ``filters``: one verdict per conjunct Spark offers (EXACT / INEXACT / UNSUPPORTED, why).
* ``aggregate``: whether the source answers Spark's GROUP BY and aggregates completely, and why
  (:mod:`sluice.planner.aggregates`).
* ``join``: whether the source runs Spark's join of two of its tables, and why
  (:mod:`sluice.planner.joins`).
* ``plan``: the scan as the source will run it: the typed :class:`~sluice.scan.spec.ScanSpec`
  the reader gets, the text EXPLAIN shows, and statistics for Spark's join planning.
* ``create_table``, ``drop_table``, ``alter_table``, ``create_namespace`` and :meth:`CatalogPlanner.write`:
  DDL and writes on a lake catalog (:mod:`sluice.planner.writes`). DDL forgets the
  catalog's described tables, and any commit to a lake (SQL, ``ingest``, ``optimize``)
  forgets every lake's, so the session's next query sees the new snapshot and schema.
* ``create_tag``, ``drop_tag``: the lake catalog's procedures (``CALL lake.system.create_tag``,
  :mod:`sluice.planner.tags`); a tag is read back with ``VERSION AS OF 'name'``.

Spark replays this negotiation at every optimisation and from several threads, so nothing
decided is kept here: each request carries what was decided before it (the table's
description, the verdicts). What is cached is what attaching a source fixes: the open
:class:`~sluice.sources.base.Source` and the tables it described.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sluice.errors import BindError, ConfigError, TimeTravelError
from sluice.lake import metadata_tables
from sluice.masking import mask_url
from sluice.planner import deletes, joins, passthrough, rules, runtime, tags, write_explain, writes
from sluice.planner.metadata import join_metadata, scan_metadata
from sluice.planner.rules import classify_filters, push_aggregates
from sluice.planner.rules.push_projection import WIDTH
from sluice.protocol.base import SourceRequest
from sluice.protocol.catalog import (
    AlterTableAnswer,
    AlterTableRequest,
    CanDeleteAnswer,
    CreateNamespaceAnswer,
    CreateNamespaceRequest,
    CreateTableAnswer,
    CreateTableRequest,
    DeleteAnswer,
    DeleteRequest,
    DescribeAnswer,
    DescribeRequest,
    DropTableAnswer,
    DropTableRequest,
    ExplainWriteAnswer,
    ExplainWriteRequest,
    NamespacesAnswer,
    NamespacesRequest,
    TableName,
    TablesAnswer,
    TablesRequest,
    TagAnswer,
    TagRequest,
    WriteAnswer,
    WriteRequest,
)
from sluice.protocol.scan import (
    AggregateAnswer,
    AggregateRequest,
    FiltersAnswer,
    FiltersRequest,
    JoinAnswer,
    JoinRequest,
    PlanAnswer,
    PlanRequest,
    TraceStep,
)
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.pushed import Pushed
from sluice.scan.aggregation import Aggregation, Decision
from sluice.scan.join import JoinRead
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from sluice.sources.base import Source
from sluice.types import AsOf, SparkType, TableSchema, table_from_dict, table_to_dict

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the name a DataFrame reader's table is planned under (its options name no catalog)
READER_SOURCE = "sluice"


class NoSuchTable(Exception):
    """The source has no such table; the message says what it has (masked)."""

    def __init__(self, namespace: list[str], name: str, message: str) -> None:
        super().__init__(message)
        self.namespace = namespace
        self.name = name


@dataclass(frozen=True)
class _Key:
    catalog: str | None
    options: tuple[tuple[str, str], ...]


class CatalogPlanner:
    """Answers the catalog layer's requests. Safe to call from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[_Key, Source] = {}
        self._tables: dict[tuple[_Key, tuple[object, ...]], TableSchema] = {}

    # ------------------------------------------------------------ sources
    def forget(self, catalog: str) -> None:
        """Drop what was cached for ``catalog`` (it was attached again or detached)."""
        with self._lock:
            self._sources = {k: v for k, v in self._sources.items() if k.catalog != catalog}
            self._tables = {k: v for k, v in self._tables.items() if k[0].catalog != catalog}

    def forget_tables(self, catalog: str | None) -> None:
        """Drop the tables described for ``catalog`` (one was created, dropped or written)."""
        with self._lock:
            self._tables = {k: v for k, v in self._tables.items() if k[0].catalog != catalog}

    def forget_lake_tables(self) -> None:
        """Drop the tables described for every lake source (a job committed to one of them)."""
        with self._lock:
            lakes = {key for key, source in self._sources.items() if source.lake is not None}
            self._tables = {k: v for k, v in self._tables.items() if k[0] not in lakes}

    def remember(self, catalog: str, options: dict[str, str], source: Source) -> None:
        """Use ``source`` (attached and checked by the caller) for requests with these options."""
        with self._lock:
            self._sources[_key(catalog, options)] = source

    def source(self, request: SourceRequest) -> Source:
        key = _key(request.catalog, request.options)
        with self._lock:
            known = self._sources.get(key)
        if known is not None:
            return known
        # a reader's option 'source' names the source in messages and EXPLAIN (fed.query: the attached name)
        opened = _open(key.catalog or dict(key.options).get("source") or READER_SOURCE, dict(key.options))
        with self._lock:
            return self._sources.setdefault(key, opened)

    def _table(self, request: DescribeRequest, namespace: list[str], name: str) -> TableSchema:
        source = self.source(request)
        if len(namespace) == 2 and source.lake is not None and metadata_tables.named(name):
            # lake.ns.t.snapshots: Iceberg's metadata table of ns.t, as Iceberg's Spark runtime names it
            namespace, name = namespace[:1], metadata_tables.joined(namespace[1], name)
        schema = namespace[0] if len(namespace) == 1 else None
        as_of = _as_of(request)
        # matched the way the source matches names ("Cs" and cs are two PostgreSQL tables, one SQLite table)
        key = (
            _key(request.catalog, request.options),
            (len(namespace), *source.table_key(schema, name), as_of),
        )
        # a tag can move (dropped and made again, here or by another process): looked up each time
        cached = as_of is None or as_of.ref is None
        with self._lock:
            known = self._tables.get(key) if cached else None
        if known is not None:
            return known
        if len(namespace) > 1:
            raise NoSuchTable(namespace, name, f"source {source.name!r} has no namespace {'.'.join(namespace)}")
        try:
            described = source.describe(schema, name) if as_of is None else source.describe_as_of(schema, name, as_of)
        except TimeTravelError:
            raise  # the table exists: the snapshot does not
        except BindError as error:
            raise NoSuchTable(namespace, name, str(error)) from None
        if not cached:
            return described
        with self._lock:
            return self._tables.setdefault(key, described)

    # ------------------------------------------------------------ catalog
    def namespaces(self, request: NamespacesRequest) -> NamespacesAnswer:
        schemas = sorted({schema for schema, _ in self.source(request).tables() if schema})
        return NamespacesAnswer(namespaces=[[schema] for schema in schemas])

    def tables(self, request: TablesRequest) -> TablesAnswer:
        source = self.source(request)
        namespace = request.namespace
        wanted = namespace[0] if namespace else source.default_schema
        listed = [(schema, name) for schema, name in source.tables() if wanted is None or schema == wanted]
        return TablesAnswer(
            tables=[TableName(namespace=[schema] if schema else [], name=name) for schema, name in listed]
        )

    def describe(self, request: DescribeRequest) -> DescribeAnswer:
        if request.catalog is None:  # a DataFrame reader: option "table" is [schema.]name
            options = request.options
            if "url" in options and "query" in options and "table" not in options:
                return self._describe_query(request, options["query"])
            if "url" not in options or "table" not in options:
                raise ConfigError(
                    "format('sluice') needs options 'url' and either 'table' ([schema.]name) or 'query' (a passthrough)"
                )
            schema, _, name = options["table"].rpartition(".")
            namespace = [schema] if schema else []
        else:
            if request.name is None:
                raise ConfigError("the 'describe' request names no table (key 'name')")
            namespace, name = list(request.namespace), request.name
        table = self._table(request, namespace, name)
        source = self.source(request)
        row_id: list[str] = []
        refused = ""
        if request.catalog is not None:  # a table looked up by name: UPDATE and MERGE by its key, or why not
            row_id, refused = writes.row_identity(source, request, namespace, table.name)
        cow, snapshot_id = (
            writes.copy_on_write(source, namespace, table) if request.catalog is not None else (False, None)
        )
        return DescribeAnswer(
            name=table.qualified_name,
            schema=_struct([(c.name, c.type) for c in table.columns], not_null=row_id),
            handle={"table": table_to_dict(table)},
            # a catalog's lake table: what Spark takes in INSERT ... PARTITION (column = value)
            partitioning=writes.identity_partitions(source, namespace, name) if request.catalog is not None else [],
            row_id=row_id,
            row_level_refused=refused,
            copy_on_write=cow,
            snapshot_id=snapshot_id,
        )

    def _describe_query(self, request: DescribeRequest, sql: str) -> DescribeAnswer:
        """A passthrough's result as a table (sluice/planner/passthrough.py)."""
        table = passthrough.describe(self.source(request), sql)
        return DescribeAnswer(
            name=table.qualified_name,
            schema=_struct([(c.name, c.type) for c in table.columns]),
            handle={"table": table_to_dict(table)},
            partitioning=[],
        )

    # ------------------------------------------------------------ lake DDL and writes
    def create_table(self, request: CreateTableRequest) -> CreateTableAnswer:
        try:
            return CreateTableAnswer(created=writes.create_table(_session(), self.source(request), request))
        finally:
            self.forget_tables(request.catalog)

    def drop_table(self, request: DropTableRequest) -> DropTableAnswer:
        try:
            return DropTableAnswer(dropped=writes.drop_table(self.source(request), request))
        finally:
            self.forget_tables(request.catalog)

    def alter_table(self, request: AlterTableRequest) -> AlterTableAnswer:
        try:
            return AlterTableAnswer(done=writes.alter_table(self.source(request), request))
        finally:
            self.forget_tables(request.catalog)

    def create_namespace(self, request: CreateNamespaceRequest) -> CreateNamespaceAnswer:
        return CreateNamespaceAnswer(created=writes.create_namespace(self.source(request), request))

    def create_tag(self, request: TagRequest) -> TagAnswer:
        """``CALL <lake>.system.create_tag(...)`` (:mod:`sluice.planner.tags`)."""
        try:
            return tags.create_tag(self.source(request), request)
        finally:
            self.forget_tables(request.catalog)

    def drop_tag(self, request: TagRequest) -> TagAnswer:
        """``CALL <lake>.system.drop_tag(...)`` (:mod:`sluice.planner.tags`)."""
        try:
            return tags.drop_tag(self.source(request), request)
        finally:
            self.forget_tables(request.catalog)

    def delete(self, request: DeleteRequest) -> DeleteAnswer:
        """``DELETE FROM`` a lake table (:mod:`sluice.planner.deletes`); its commit makes the planner forget lake tables."""
        return deletes.delete(_session(), self.source(request), request)

    def can_delete(self, request: DeleteRequest) -> CanDeleteAnswer:
        """Whether a SQL source runs the DELETE itself, or Spark's row-level rewrite deletes by key."""
        return deletes.can_delete(self.source(request), request)

    def explain_write(self, request: ExplainWriteRequest) -> ExplainWriteAnswer:
        """What a planned write would do, for Spark's EXPLAIN (:mod:`sluice.planner.write_explain`); writes nothing."""
        return write_explain.explain_write(self.source(request), request)

    def write(self, request: WriteRequest) -> WriteAnswer:
        """Write Spark's INSERT or CTAS query (``request.frame``) to the lake table the request names.

        Its commit makes the planner forget lake tables (:func:`sluice.lake.commit.on_commit`)."""
        if request.frame is None:
            raise ConfigError("the 'write' request carries no rows (a Dataset beside its JSON)")
        try:
            return writes.write(request.frame.sparkSession, self.source(request), request, request.frame)
        finally:
            if request.mode == "replace":  # the table is new (or gone, on a lake): its description too
                self.forget_tables(request.catalog)

    # ------------------------------------------------------------ negotiation
    def filters(self, request: FiltersRequest) -> FiltersAnswer:
        """One verdict per offered conjunct, in order."""
        table = table_from_dict(request.table["table"])
        zone = request.zone
        predicates = request.predicates
        source = self.source(request)
        verdicts = source.filters_as_read(table, classify_filters.classify(source, table, predicates, zone), request)
        return FiltersAnswer(
            verdicts=[verdict.to_dict() for verdict in verdicts],
            selective=[runtime.likely_selective(offered) for offered in predicates],
        )

    def aggregate(self, request: AggregateRequest) -> AggregateAnswer:
        """Whether the source answers the offered aggregation completely, with each item's verdict."""
        decision = push_aggregates.decide(self.source(request), request, request.aggregation)
        return AggregateAnswer(
            complete=decision.complete, verdicts=[v.to_dict() for v in decision.verdicts], note=decision.note
        )

    def join(self, request: JoinRequest) -> JoinAnswer:
        """Whether the source runs the offered join of two of its tables, with each key's verdict."""
        decision = joins.decide(self.source(request), request)
        return JoinAnswer(
            pushed=decision.pushed,
            verdicts=[v.to_dict() for v in decision.verdicts],
            note=decision.note,
            join=decision.join.to_dict() if decision.join is not None else None,
            # what the joined scan reads until Spark prunes columns
            read_schema=_struct(decision.join.fields()) if decision.join is not None else None,
        )

    def plan(self, request: PlanRequest) -> PlanAnswer:
        if request.join is not None:
            return self._plan_join(request, JoinRead.from_dict(request.join))
        source = self.source(request)
        table = table_from_dict(request.table["table"])
        if table.query is not None:  # Spark keeps its LIMIT, order and runtime filters
            request = passthrough.bare(request)
        scan, steps = rules.run(rules.Draft(request, source, table))
        verdicts, at_runtime, limit = list(scan.verdicts), list(scan.runtime), scan.limit
        planned = _pushed(verdicts)
        pushed = planned + _pushed(at_runtime)
        spec = ScanSpec.for_source(
            source,
            table,
            scan.columns,
            where=pushed,
            limit=limit,
            order=scan.order,
            partitions=source.default_partitions(table, request.parallelism),
            fewer_when_selective=source.partitions is None,
            cores=request.parallelism,
            aggregate=scan.aggregation,
        )
        # rendered from the spec by the source, as its reader renders it: EXPLAIN shows what runs
        remote = source.masked(source.request_text(spec))
        choice, vector = source.plan_reader(spec, request, verdicts)
        order_text = source.order_text(spec)
        # one id for the scan whatever join keys Spark hands it at run time (its metrics are found by it)
        static = replace(spec, where=planned) if len(pushed) > len(planned) else spec
        scan_id = hashlib.sha256(static.to_json().encode()).hexdigest()[:16]
        if request.metrics_dir:
            metrics_dir = os.path.join(request.metrics_dir, scan_id)
            spec = replace(spec, metrics_dir=metrics_dir)
            os.makedirs(metrics_dir, exist_ok=True)
        if vector is not None and spec.metrics_dir:
            _record_vectorised(spec.metrics_dir, vector, source.bytes_counted)
        read = _read_fields(table, scan.columns, scan.aggregation)
        description = (
            _description(source, table, remote, verdicts, scan.limit_note, scan.grouped, at_runtime)
            + (f" | {choice.text()}" if choice is not None else "")
            + source.checks_text(spec)
            + _refused_join(request.join_refused)
        )
        rows: int | None = None
        size: int | None = None
        if scan.aggregation is not None and not scan.aggregation.group_by:  # one row, whatever the table holds
            rows, size = 1, sum(WIDTH[kind.kind] for _, kind in read)
        elif table.row_estimate is not None:  # at most the table's rows (a grouped answer has fewer)
            rows = table.row_estimate if limit is None else min(limit, table.row_estimate)
            size = max(1, rows) * max(1, sum(WIDTH[kind.kind] for _, kind in read))
        return PlanAnswer(
            scan=spec.to_json(),
            scan_id=scan_id,
            columns=[name for name, _ in read],
            table=table.qualified_name,
            read_schema=_struct(read),
            aggregates=[v.shown() for v in scan.grouped.verdicts] if scan.grouped else [],
            aggregates_pushed=scan.aggregation is not None,
            runtime=[v.shown() for v in at_runtime],
            # a filter Spark's dynamic pruning would call selective was pushed EXACT (SelectiveScans.java)
            selective_exact=any(
                v.level is Level.EXACT and bool(s) for v, s in zip(verdicts, request.selective, strict=False)
            ),
            # the reference path (pushdown off) takes no join keys either
            runtime_columns=(
                runtime.filterable([table.column(c) for c in scan.columns])
                if scan.aggregation is None and limit is None and request.pushdown and table.query is None
                else []
            ),
            source=source.name,
            source_url=mask_url(source.url),
            remote_query=remote,
            verdicts=[v.to_dict() for v in verdicts],
            limit=limit,
            order=order_text,
            limit_note=scan.limit_note,
            partitions=1 if limit is not None or scan.aggregation is not None else spec.partitions,
            description=description,
            metadata=scan_metadata(description, remote, verdicts, scan.grouped, limit, order_text),
            join_refused=request.join_refused,
            trace=[TraceStep(rule=step.rule, text=step.text, changed=step.changed) for step in steps]
            + ([TraceStep(rule="choose_reader", text=choice.text(), changed=choice.vectorised)] if choice else []),
            reader=choice.reader if choice is not None else None,
            reader_reason=choice.reason if choice is not None else None,
            vector=vector,
            rows=rows,
            bytes=size,
        )

    def _plan_join(self, request: PlanRequest, join: JoinRead) -> PlanAnswer:
        """The scan of a pushed join: one query over both tables, one partition. The rules decide
        what Spark pushed above it (aggregates, LIMIT, top-N) over the join's outputs as one table,
        with the classifier single-table scans use (sluice/planner/rules/push_aggregates.py)."""
        source = self.source(request)
        every = tuple(o.name for o in join.outputs)
        names = tuple(join.output(name).name for name in request.columns) or every
        scan, steps = rules.run(rules.Draft(request, source, join.read_table(every)))
        spec = ScanSpec.for_source(
            source,
            join.left,
            every if scan.aggregation is not None else names,
            partitions=1,
            fewer_when_selective=False,
            join=join,
            aggregate=scan.aggregation,
            limit=scan.limit,
            order=scan.order,
        )
        remote = source.masked(source.request_text(spec))
        scan_id = hashlib.sha256(spec.to_json().encode()).hexdigest()[:16]
        if request.metrics_dir:
            spec = replace(spec, metrics_dir=os.path.join(request.metrics_dir, scan_id))
            os.makedirs(spec.metrics_dir or "", exist_ok=True)
        keys = [Verdict.from_dict(v) for v in request.join_verdicts]
        order_text = spec.order_sql(source.dialect)
        read = (
            [(o.name, o.type) for o in scan.aggregation.outputs] if scan.aggregation is not None else join.fields(names)
        )
        grouped = scan.grouped
        parts = [f"Sluice {join.title()} on {source.name} ({mask_url(source.url)})", f"RemoteQuery: {remote}"]
        parts += [f"[JOIN {v.level.value}] {v.sql} -- {v.reason}" for v in keys]
        if grouped is not None:
            if not grouped.complete:
                parts.append(f"Aggregates not pushed{': ' + grouped.note if grouped.note else ''}")
            parts += [f"[{v.level.value}] {v.sql} -- {v.reason}" for v in grouped.verdicts]
        if scan.limit_note:
            parts.append(scan.limit_note)
        description = " | ".join(parts)
        return PlanAnswer(
            scan=spec.to_json(),
            scan_id=scan_id,
            columns=[name for name, _ in read],
            table=join.title(),
            read_schema=_struct(read),
            aggregates=[v.shown() for v in grouped.verdicts] if grouped else [],
            aggregates_pushed=scan.aggregation is not None,
            join=join.to_dict(),
            join_verdicts=[v.to_dict() for v in keys],
            runtime=[],
            runtime_columns=[],
            source=source.name,
            source_url=mask_url(source.url),
            remote_query=remote,
            verdicts=[],
            limit=scan.limit,
            order=order_text,
            limit_note=scan.limit_note,
            partitions=1,
            description=description,
            metadata=join_metadata(description, remote, join.title(), keys, grouped, scan.limit, order_text),
            trace=[
                TraceStep(
                    rule="push_join", text=f"{join.title()} pushed; " + "; ".join(v.sql for v in keys), changed=True
                )
            ]
            + [TraceStep(rule=step.rule, text=step.text, changed=step.changed) for step in steps],
            # one row without GROUP BY; at most the pushed LIMIT's rows
            rows=1 if scan.aggregation is not None and not scan.aggregation.group_by else scan.limit,
        )


def _session() -> SparkSession:
    """The driver's Spark session (a callback thread has no active one of its own)."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def _as_of(request: DescribeRequest) -> AsOf | None:
    """The point in the table's history a request names, if any: Spark's ``VERSION AS OF`` /
    ``TIMESTAMP AS OF`` (``version``: a snapshot id, or else a tag or branch name; ``timestamp`` in
    microseconds), or the reader options ``snapshot-id`` / ``as-of-timestamp`` (milliseconds) /
    ``tag`` / ``branch``, as Iceberg's Spark runtime names them."""
    options = request.options
    if request.version is not None:
        version = request.version
        return AsOf(snapshot_id=int(version)) if version.lstrip("-").isdigit() else AsOf(ref=version)
    if request.timestamp is not None:
        return AsOf(timestamp_ms=request.timestamp // 1000)
    for option in ("tag", "branch"):
        if options.get(option):
            return AsOf(ref=options[option])
    try:
        if options.get("snapshot-id") is not None:
            return AsOf(snapshot_id=int(options["snapshot-id"]))
        if options.get("as-of-timestamp") is not None:
            return AsOf(timestamp_ms=int(options["as-of-timestamp"]))
    except ValueError:
        given = options.get("snapshot-id") or options.get("as-of-timestamp")
        raise ConfigError(
            f"reader options snapshot-id / as-of-timestamp take an integer, not {given!r} (a tag: option 'tag')"
        ) from None
    return None


def _key(catalog: str | None, options: dict[str, str]) -> _Key:
    return _Key(catalog, tuple(sorted(options.items())))


def _open(name: str, options: dict[str, str]) -> Source:
    url = options.get("url")
    if not url:
        raise ConfigError(f"catalog {name!r} has no option 'url' (spark.sql.catalog.{name}.url)")
    password = options.get("password")
    if password is None and options.get("password.env"):
        password = os.environ.get(options["password.env"])
        if password is None:
            raise ConfigError(
                f"catalog {name!r}: environment variable {options['password.env']!r} (option password.env) is not set"
            )
    numbers: dict[str, float] = {}
    try:
        if "partitions" in options:
            numbers["partitions"] = int(options["partitions"])
        for option in ("statement_timeout_s", "connect_timeout_s"):
            if option in options:
                numbers[option] = float(options[option])
    except ValueError as error:
        raise ConfigError(f"catalog {name!r} ({mask_url(url)}): {error}") from None
    return open_source(name, url, password=password, **numbers)


def _struct(fields: list[tuple[str, SparkType]], not_null: list[str] | None = None) -> dict[str, Any]:
    """Spark's JSON form of a StructType (every column nullable, as the reader's: a remote
    NOT NULL is no promise Spark's optimizer should build on), but for ``not_null``: the
    primary key of a row-level table, which Spark requires of a row id and the source enforces."""
    keys = set(not_null or ())
    return {
        "type": "struct",
        "fields": [
            {"name": name, "type": kind.json(), "nullable": name not in keys, "metadata": {}} for name, kind in fields
        ],
    }


def _read_fields(
    table: TableSchema, columns: tuple[str, ...], aggregation: Aggregation | None
) -> list[tuple[str, SparkType]]:
    """What the scan reads: the columns, or the pushed grouping keys and aggregates."""
    if aggregation is not None:
        return [(output.name, output.type) for output in aggregation.outputs]
    return [(column.name, column.type) for column in map(table.column, columns)]


def _description(
    source: Source,
    table: TableSchema,
    remote: str,
    verdicts: list[Verdict],
    limit_note: str | None,
    grouped: Decision | None = None,
    at_runtime: list[Verdict] | None = None,
) -> str:
    """What Spark's EXPLAIN shows for the scan: the remote query and why each filter and aggregate is where it is."""
    parts = [f"Sluice {table.qualified_name} on {source.name} ({mask_url(source.url)})", f"RemoteQuery: {remote}"]
    parts += [f"[{v.level.value}] {v.sql} -- {v.reason}" for v in verdicts]
    if grouped is not None:
        if not grouped.complete:
            parts.append(f"Aggregates not pushed{': ' + grouped.note if grouped.note else ''}")
        parts += [f"[{v.level.value}] {v.sql} -- {v.reason}" for v in grouped.verdicts]
    parts += [f"[RUNTIME {v.level.value}] {runtime.clipped(v.sql)} -- {v.reason}" for v in at_runtime or []]
    if limit_note:
        parts.append(limit_note)
    return " | ".join(parts)


def _refused_join(refused: JoinAnswer | None) -> str:
    """EXPLAIN's words on a join Spark offered this scan and the planner left to Spark."""
    if refused is None:
        return ""
    parts = [f"Join not pushed: {refused.note or 'a key is not EXACT'}"]
    parts += [f"[JOIN {v['level']}] {v['sql']} -- {v['reason']}" for v in refused.verdicts]
    return " | " + " | ".join(parts)


def _pushed(verdicts: list[Verdict]) -> tuple[Pushed, ...]:
    """The trees of the conjuncts the source evaluates (the source renders them when it reads)."""
    return tuple(v.pushed for v in verdicts if v.level.pushed and v.pushed is not None)


def _record_vectorised(metrics_dir: str, vector: dict[str, Any], counted: str) -> None:
    """What a scan read by Spark's Parquet reader transfers, for ``fed.transferred`` and EXPLAIN
    ANALYZE: no Python reader runs to count it, so the planner records the kept row groups' rows
    and bytes (Spark filters those rows) as the scan's one partition; a replayed plan rewrites
    the same record. ``counted``: what the source's byte counts count (:attr:`Source.bytes_counted`)."""
    record = {
        "partition": 0,
        "rows": vector["rows"],
        "bytes": vector["bytes"],  # compressed, as the lake's Python reader counts its own (IcebergSource)
        "counted": counted,
        "seconds": 0.0,
        "request": "vectorised",
    }
    with open(os.path.join(metrics_dir, "0-vectorised.json"), "w", encoding="utf-8") as handle:
        json.dump(record, handle)
