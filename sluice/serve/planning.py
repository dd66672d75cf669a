"""From a request to a FlightInfo: read the filter, classify each conjunct, plan the partitions.

The source classifies every conjunct it could read (:meth:`Source.classify`, the same core
as ``Federation.sql``); what it pushes becomes the scan's remote filter, planned into read
tasks by the source itself, one endpoint per task. The FlightInfo's ``app_metadata`` says
each conjunct's level and reason, so a client reapplies exactly what was not EXACT. A
limit is applied only when every conjunct is EXACT (otherwise the client still filters,
and limiting first would lose rows).

A request's aggregate goes to the source's own aggregate decision
(:func:`sluice.planner.aggregates.answer`, the rules Spark's offers get): accepted completely, the
one endpoint streams the groups; refused (a conjunct not EXACT, a key or function the source
does not answer as Spark would), the endpoints stream the filtered rows, and ``app_metadata``
says why either way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from sluice.flight import aggregate_json, airport, filter_json, substrait
from sluice.flight.protocol import MAX_PARTITIONS, PROTOCOL, VERSION, Conjunct, FilterSpec, Request, RequestError
from sluice.planner import aggregates
from sluice.pushdown.levels import Level, Verdict
from sluice.scan.aggregation import Aggregation, Decision
from sluice.scan.spec import ScanSpec
from sluice.serve.publish import PublishedTables
from sluice.serve.tickets import TicketSigner
from sluice.sources.base import ReadTask, Source
from sluice.types import SparkType, TableSchema

log = logging.getLogger("sluice.serve.server")

_DECODERS: dict[str, Callable[[Any, TableSchema], list[Conjunct]]] = {
    "sluice": filter_json.decode_filter,
    "airport": airport.decode_filter,
    "substrait": substrait.decode_filter,
}


def arrow_schema(table: TableSchema, columns: tuple[str, ...]) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type.arrow()) for c in (table.column(n) for n in columns)])


def read_filter(spec: FilterSpec | None, table: TableSchema) -> list[Conjunct]:
    return [] if spec is None else _DECODERS[spec.format](spec.body, table)


def classify(source: Source, table: TableSchema, conjuncts: list[Conjunct], session_zone: str) -> list[Verdict]:
    """One verdict per conjunct; one the server could not read is UNSUPPORTED with its reason."""
    decided = iter(source.classify(table, [c.tree for c in conjuncts if c.tree is not None], session_zone))
    return [
        next(decided) if c.tree is not None else Verdict(c.sql, Level.UNSUPPORTED, c.reason or "not readable", None)
        for c in conjuncts
    ]


class Planner:
    """Plans requests against the published tables and signs the tickets of their endpoints."""

    def __init__(self, published: PublishedTables, signer: TicketSigner) -> None:
        self.published = published
        self.signer = signer

    def flight_info(self, request: Request, descriptor: flight.FlightDescriptor) -> flight.FlightInfo:
        source, table = self.published.resolve(request.table)
        columns = (
            tuple(filter_json.column_name(table, name) for name in request.columns)
            if request.columns
            else tuple(c.name for c in table.columns)
        )
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise RequestError(f"column(s) {', '.join(repeated)} requested more than once")
        conjuncts = read_filter(request.filter, table)
        verdicts = classify(source, table, conjuncts, request.session_zone)
        exact = all(v.level is Level.EXACT for v in verdicts)
        limit = request.limit if exact else None
        decision = (
            None
            if request.aggregate is None
            else aggregates.answer(
                source,
                table,
                aggregate_json.offered(request.aggregate, table),
                verdicts,
                request.aggregate.ansi,
                request.session_zone,
            )
        )
        aggregation = decision.aggregation if decision is not None else None
        partitions = min(MAX_PARTITIONS, request.partitions or source.default_partitions(table))
        pushed = tuple(v.pushed for v in verdicts if v.level.pushed and v.pushed is not None)
        spec = ScanSpec.for_source(
            source, table, columns, where=pushed, limit=limit, partitions=partitions, aggregate=aggregation
        )
        path = self.published.path_of(source, table.schema, table.name)
        tasks = source.tasks(spec)
        if aggregation is not None and len(tasks) != 1:  # every source answers a GROUP BY in one read
            raise RequestError(f"{'.'.join(path)}: the source planned the aggregate in {len(tasks)} reads, not one")
        endpoints = [
            flight.FlightEndpoint(self.signer.issue(_ticket(path, columns, task, aggregation)), []) for task in tasks
        ]
        metadata = {
            "protocol": PROTOCOL,
            "version": VERSION,
            "table": list(path),
            "engine": source.dialect.name,
            "filter_format": request.filter.format if request.filter else None,
            "conjuncts": [{"index": i, **v.shown()} for i, v in enumerate(verdicts)],
            "limit": None
            if request.limit is None
            else {
                "requested": request.limit,
                "applied": limit is not None,
                **({} if exact else {"reason": "a conjunct is not EXACT: the client filters, then limits"}),
            },
            "partitions": len(tasks),
            "row_estimate": table.row_estimate,
        }
        if decision is not None:
            metadata["aggregate"] = _aggregate_answer(decision)
        return flight.FlightInfo(
            spec.arrow_schema(),
            descriptor,
            endpoints,
            -1,
            -1,
            app_metadata=json.dumps(metadata, separators=(",", ":")).encode(),
        )

    def stream(self, ticket: bytes) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
        """The schema and batches of one endpoint, from a ticket this server signed."""
        payload = self.signer.redeem(ticket)
        source, table = self.published.resolve(payload["path"])
        outputs = payload.get("outputs")
        schema = (
            arrow_schema(table, tuple(payload["columns"]))
            if outputs is None
            else pa.schema([pa.field(name, SparkType(kind).arrow()) for name, kind in outputs])
        )
        log.info("DoGet %s partition %s", ".".join(payload["path"]), payload["partition"])
        # a guarded request also returns rows only to be checked, marked by a last column the reader drops
        task = ReadTask(payload["request"], schema, payload["partition"], guarded=bool(payload.get("guarded")))
        return schema, source.read(task)


def _ticket(
    path: tuple[str, ...], columns: tuple[str, ...], task: ReadTask, aggregation: Aggregation | None
) -> dict[str, Any]:
    ticket = {
        "path": list(path),
        "columns": list(columns),
        "request": task.request,
        "partition": task.partition,
        "guarded": task.guarded,
    }
    if aggregation is not None:  # the stream is the groups: its columns are the outputs
        ticket["outputs"] = [[output.name, output.type.name] for output in aggregation.outputs]
    return ticket


def _aggregate_answer(decision: Decision) -> dict[str, Any]:
    """What ``app_metadata`` says of a request's aggregate: accepted or not, why, each item's
    verdict in the request's order (keys, then functions), and the outputs streamed."""
    answer: dict[str, Any] = {
        "accepted": decision.aggregation is not None,
        "note": decision.note,
        "items": [{"index": i, **v.shown()} for i, v in enumerate(decision.verdicts)],
    }
    if decision.aggregation is not None:
        answer["outputs"] = [{"name": o.name, "type": o.type.name} for o in decision.aggregation.outputs]
    return answer
