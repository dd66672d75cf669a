"""The Sluice Flight server: the tables of the attached sources that it publishes, with faithful pushdown.

RPCs: ListFlights (criteria: a path prefix such as ``b"lite"``), GetSchema, GetFlightInfo
(a path descriptor reads a whole table; a command descriptor carries a request, see
:mod:`sluice.flight.protocol`), DoGet, and two actions: ``sluice.list_tables`` (every table
with its columns) and ``sluice.capabilities`` (what the server reads and can push).

Streams are Arrow from the source to the socket: a DoGet pulls one batch at a time from
the source's reader (gRPC flow control holds it while the client is slow), so memory per
stream stays at a few batches whatever the table's size. Every stream ends with an empty
batch whose app_metadata says ``{"end": true, "rows": n}``: a client that misses it knows
the stream was cut, rather than taking a short answer for a whole one.

Errors reach the client as Flight errors whose message says what was wrong (invalid
request, unknown table, a source that failed), never as a server traceback.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from sluice.catalog import SourceConfig, open_sources
from sluice.errors import SluiceError
from sluice.flight import aggregate_json, airport, filter_json, substrait
from sluice.flight.auth import AuthMiddlewareFactory, Credentials
from sluice.flight.protocol import (
    ACTION_CAPABILITIES,
    ACTION_LIST_TABLES,
    FORMATS,
    MAX_CONJUNCTS,
    MAX_PARTITIONS,
    MAX_REQUEST_BYTES,
    PROTOCOL,
    VERSION,
    NotFound,
    Request,
    RequestError,
    check_size,
    parse_request,
    path_request,
)
from sluice.serve.allowlist import AllowList
from sluice.serve.planning import Planner, arrow_schema
from sluice.serve.publish import PublishedTables
from sluice.serve.tickets import TicketSigner
from sluice.sources.base import Source

log = logging.getLogger("sluice.serve.server")


@dataclass(frozen=True)
class Tls:
    """Paths of the PEM certificate chain and private key the server presents."""

    cert: str
    key: str

    def pair(self) -> flight.CertKeyPair:
        return flight.CertKeyPair(cert=Path(self.cert).read_bytes(), key=Path(self.key).read_bytes())


class SluiceFlightServer(flight.FlightServerBase):
    def __init__(
        self,
        sources: dict[str, Source],
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: Credentials | None = None,
        tls: Tls | None = None,
        ticket_key: bytes | None = None,
        publish: AllowList | None = None,
    ) -> None:
        """``publish``: the namespaces and tables to serve (None: each source's default namespace)."""
        published = PublishedTables(sources, publish)  # an allow-list naming an unknown source fails before listening
        scheme = "grpc+tls" if tls else "grpc+tcp"
        middleware = {"auth": AuthMiddlewareFactory(credentials)} if credentials else None
        super().__init__(
            f"{scheme}://{host}:{port}", tls_certificates=[tls.pair()] if tls else None, middleware=middleware
        )
        self.published = published
        self.planner = Planner(self.published, TicketSigner(ticket_key))
        self.location = f"{'grpc+tls' if tls else 'grpc'}://{host}:{self.port}"

    # ------------------------------------------------------------ catalog
    def list_flights(self, context: flight.ServerCallContext, criteria: bytes) -> Iterator[flight.FlightInfo]:
        prefix = [p for p in criteria.decode("utf-8", "replace").split(".") if p] if criteria else []
        for path in _guarded(lambda: list(self.published.paths(prefix))):
            try:
                _, table = self.published.resolve(path)
            except (RequestError, SluiceError) as error:  # listed but not describable (a type Sluice cannot read)
                log.warning("ListFlights skips %s: %s", ".".join(path), error)
                continue
            schema = arrow_schema(table, tuple(c.name for c in table.columns))
            yield flight.FlightInfo(schema, flight.FlightDescriptor.for_path(*path), [], -1, -1)

    def get_schema(self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor) -> flight.SchemaResult:
        def schema() -> pa.Schema:
            request = self._request(descriptor)
            _, table = self.published.resolve(request.table)
            columns = (
                tuple(filter_json.column_name(table, c) for c in request.columns)
                if request.columns
                else tuple(c.name for c in table.columns)
            )
            return arrow_schema(table, columns)

        return flight.SchemaResult(_guarded(schema))

    def get_flight_info(
        self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor
    ) -> flight.FlightInfo:
        def plan() -> flight.FlightInfo:
            request = self._request(descriptor)
            info = self.planner.flight_info(request, descriptor)
            log.info(
                "GetFlightInfo %s: %d endpoint(s), %s",
                ".".join(request.table),
                len(info.endpoints),
                info.app_metadata.decode()[:500],
            )
            return info

        return _guarded(plan)

    def _request(self, descriptor: flight.FlightDescriptor) -> Request:
        if descriptor.descriptor_type == flight.DescriptorType.PATH:
            return path_request(descriptor.path)
        return parse_request(descriptor.command)

    # ------------------------------------------------------------ streams
    def do_get(self, context: flight.ServerCallContext, ticket: flight.Ticket) -> flight.FlightDataStream:
        schema, batches = _guarded(lambda: self.planner.stream(ticket.ticket))
        return flight.GeneratorStream(schema, _with_end_marker(schema, batches))

    # ------------------------------------------------------------ actions
    def list_actions(self, context: flight.ServerCallContext) -> list[tuple[str, str]]:
        return [
            (ACTION_LIST_TABLES, 'every published table with its columns (body: optional path prefix, e.g. "lite")'),
            (ACTION_CAPABILITIES, "filter formats, operations and limits this server reads and pushes"),
        ]

    def do_action(self, context: flight.ServerCallContext, action: flight.Action) -> Iterator[bytes]:
        body = action.body.to_pybytes() if action.body is not None else b""
        if action.type == ACTION_LIST_TABLES:
            return iter(_guarded(lambda: [json.dumps(t).encode() for t in self._tables(body)]))
        if action.type == ACTION_CAPABILITIES:
            return iter([json.dumps(self.capabilities()).encode()])
        raise flight.FlightServerError(
            f"unknown action {action.type!r} (known: {ACTION_LIST_TABLES}, {ACTION_CAPABILITIES})"
        )

    def _tables(self, body: bytes) -> list[dict[str, Any]]:
        check_size(body, "the action body")
        prefix = [p for p in body.decode("utf-8", "replace").split(".") if p]
        tables = []
        for path in self.published.paths(prefix):
            _, table = self.published.resolve(path)
            columns = [
                {"name": c.name, "type": c.type.name, "nullable": c.nullable, "remote_type": c.remote_type}
                for c in table.columns
            ]
            tables.append({"path": list(path), "columns": columns, "row_estimate": table.row_estimate})
        return tables

    def capabilities(self) -> dict[str, Any]:
        return {
            "protocol": PROTOCOL,
            "version": VERSION,
            "filter_formats": list(FORMATS),
            "sluice_filter": {"version": filter_json.VERSION, "ops": list(filter_json.OPS)},
            "airport": {
                "expression_classes": [
                    "BOUND_COMPARISON",
                    "BOUND_CONJUNCTION",
                    "BOUND_OPERATOR",
                    "BOUND_BETWEEN",
                    "BOUND_FUNCTION",
                    "BOUND_CONSTANT",
                    "BOUND_COLUMN_REF",
                    "BOUND_CAST (of constants)",
                ],
                "functions": sorted(airport.FUNCTION_NAMES),
            },
            "substrait": {"functions": sorted(substrait.FUNCTION_NAMES)},
            "aggregate": aggregate_json.capabilities(),
            "semantics": "Spark SQL (ANSI): every level is relative to what Spark would return",
            "engines": {name: source.dialect.name for name, source in self.published.sources.items()},
            "limits": {
                "max_request_bytes": MAX_REQUEST_BYTES,
                "max_conjuncts": MAX_CONJUNCTS,
                "max_partitions": MAX_PARTITIONS,
            },
        }


def _guarded(work: Callable[[], Any]) -> Any:
    """Run ``work``; Sluice errors become Flight errors that say what was wrong, and nothing
    else leaks a server traceback to the client."""
    try:
        return work()
    except NotFound as error:
        raise flight.FlightServerError(f"not found: {error}") from None
    except RequestError as error:
        raise flight.FlightServerError(f"invalid request: {error}") from None
    except SluiceError as error:
        raise flight.FlightServerError(str(error)) from None
    except flight.FlightError:
        raise
    except Exception:  # a bug: the client gets a plain message, the log the traceback
        log.exception("internal error")
        raise flight.FlightInternalError("internal server error (see the server's log)") from None


def _with_end_marker(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> Iterator[Any]:
    rows = 0
    try:
        for batch in batches:
            rows += batch.num_rows
            yield batch
    except SluiceError as error:
        raise flight.FlightServerError(f"stream failed after {rows} rows: {error}") from None
    except Exception:
        log.exception("internal error while streaming")
        raise flight.FlightInternalError(
            f"stream failed after {rows} rows: internal server error (see the server's log)"
        ) from None
    end = json.dumps({"end": True, "rows": rows}).encode()
    yield pa.RecordBatch.from_pylist([], schema=schema), pa.py_buffer(end)


# ---------------------------------------------------------------- running
def serve(
    sources: dict[str, Source],
    host: str,
    port: int,
    credentials: Credentials | None,
    tls: Tls | None,
    publish: AllowList | None = None,
) -> None:
    """Serve until interrupted (the ``sluice serve`` command)."""
    server = SluiceFlightServer(sources, host, port, credentials, tls, publish=publish)
    auth = "authentication required" if credentials else "NO AUTHENTICATION"
    entries = ", ".join(server.published.allow.entries()) or "nothing"
    print(f"sluice flight: serving {entries} at {server.location} ({auth}); Ctrl-C stops", flush=True)
    server.serve()


def serve_in_background(
    sources: dict[str, str],
    port: int = 0,
    token: str | None = None,
    host: str = "127.0.0.1",
    tls: Tls | None = None,
    publish: AllowList | None = None,
) -> tuple[str, Callable[[], None]]:
    """Serve ``sources`` (name -> URL) from a daemon thread; returns (location, stop).

    With ``token`` every call must carry ``authorization: Bearer <token>``; without one
    the server is open, which is for loopback demos and tests only. ``publish`` as for
    :class:`SluiceFlightServer`.
    """
    opened = open_sources(SourceConfig(name, url) for name, url in sources.items())
    server = SluiceFlightServer(opened, host, port, Credentials(token=token) if token else None, tls, publish=publish)
    thread = threading.Thread(target=server.serve, name="sluice-flight", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        thread.join(timeout=10)

    return server.location, stop
