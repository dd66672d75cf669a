"""Arrow Flight services: ``grpc://host:port``, ``grpc+tcp://...``, ``grpc+tls://...``.

A table is a Flight path: ``fl.lite.orders`` is the path ``["lite", "orders"]`` (a schema
part written ```fl.`pg.sales`.orders``` is split on dots, for three-part paths). Against a
Sluice Flight server the client sends each conjunct in Sluice's JSON filter format and the
server says its level (:meth:`FlightSource.classify`); Spark reapplies every conjunct that
is not EXACT. Spark's ``GROUP BY`` and aggregates go to a server whose capabilities list
``aggregate`` when every conjunct is EXACT there (:meth:`FlightSource.decide_aggregation`):
the server answers them as its source would, completely or not at all. Against any other
Flight server nothing is pushed: the client reads whole streams and Spark filters and
aggregates every row.

Every endpoint becomes one Spark partition. A Sluice server ends each stream with an end
marker that states the row count; a stream that stops without it (the server died, a
proxy cut it) fails the query instead of returning a short result.

Credentials: the password (``attach(..., password=token)``) is sent as a bearer token, or
with the URL's user name as basic authentication. It travels to Spark workers in the
redacted ``password`` option only, never in a URL, a request text or a message. TLS:
``grpc+tls://host:port?tls_root_certs=/path/ca.pem`` (optionally ``&override_hostname=``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.flight as flight
from sqlglot import exp

from sluice.errors import BindError, ConfigError, SourceError, no_such_table
from sluice.flight import aggregate_json, filter_json
from sluice.flight.auth import authorization_header
from sluice.flight.dialect import FlightDialect
from sluice.flight.protocol import ACTION_CAPABILITIES, Aggregate, AggregateFunction, FilterSpec, Request
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2
from sluice.scan.aggregation import (
    AVERAGES,
    AVG_REASON,
    FILTERED,
    Aggregation,
    Decision,
    Output,
    function_label,
    is_averaged_sum,
    key_label,
)
from sluice.sources.arrow import conform
from sluice.sources.base import ReadTask, Source
from sluice.timeouts import URL_OPTION, waited
from sluice.types import Column, SparkType, TableSchema

if TYPE_CHECKING:
    from sluice.scan.spec import ScanSpec

T = TypeVar("T")
_SCHEMES = {"grpc": "grpc+tcp", "grpc+tcp": "grpc+tcp", "grpc+tls": "grpc+tls"}
_OPTIONS = ("tls_root_certs", "override_hostname", URL_OPTION)
_REUSE = "arrow-flight-reuse-connection://?"
_METADATA_TIMEOUT_S = 60.0

#: why the SUM Spark makes of an AVG stays with Spark on a Flight source: the server is not told the
#: SUM is an AVG's (the request has no field for it), and would sum integers exactly where Spark's
#: AVG adds doubles (planner/aggregates.py); Spark then averages the rows itself
AVERAGED_SUM = (
    "AVG's sum: a Flight request cannot say a SUM is Spark's rewrite of an AVG (whose integer sums Spark "
    "adds as doubles), so Spark averages the rows itself"
)


def spark_type(arrow: pa.DataType) -> SparkType | None:
    """The Spark type a column of Arrow type ``arrow`` is read as, or None if Sluice cannot read it."""
    if pa.types.is_dictionary(arrow):
        return spark_type(arrow.value_type)
    simple = [
        (pa.types.is_boolean, "boolean"),
        (pa.types.is_int8, "tinyint"),
        (pa.types.is_int16, "smallint"),
        (pa.types.is_int32, "int"),
        (pa.types.is_int64, "bigint"),
        (pa.types.is_uint8, "smallint"),
        (pa.types.is_uint16, "int"),
        (pa.types.is_uint32, "bigint"),
        (pa.types.is_uint64, "decimal(20,0)"),
        (pa.types.is_float16, "float"),
        (pa.types.is_float32, "float"),
        (pa.types.is_float64, "double"),
        (pa.types.is_string, "string"),
        (pa.types.is_large_string, "string"),
        (pa.types.is_binary, "binary"),
        (pa.types.is_large_binary, "binary"),
        (pa.types.is_date, "date"),
        (pa.types.is_null, "null"),
    ]
    for test, name in simple:
        if test(arrow):
            return SparkType(name)
    if pa.types.is_timestamp(arrow):
        return SparkType("timestamp" if arrow.tz else "timestamp_ntz")
    if pa.types.is_decimal(arrow) and arrow.precision <= 38:
        return SparkType(f"decimal({arrow.precision},{arrow.scale})")
    return None


class FlightSource(Source):
    dialect = FlightDialect()
    kind = "an Arrow Flight source"

    def __init__(self, name: str, url: str, **options: Any) -> None:
        super().__init__(name, url, **options)
        parts = self.parsed
        scheme = _SCHEMES.get(parts.scheme)
        if scheme is None or not parts.host or parts.path not in ("", "/"):
            raise ConfigError(
                f"source {name!r}: Flight URLs look like grpc://host:port or grpc+tls://host:port, not {self.display_url}"
            )
        query = parts.options
        unknown = sorted(set(query) - set(_OPTIONS))
        if unknown:
            raise ConfigError(
                f"source {name!r}: unknown Flight URL option(s) {', '.join(unknown)}; known: {', '.join(_OPTIONS)}"
            )
        self.location = f"{scheme}://{parts.url_host}:{parts.port or 8815}"
        self.user = parts.username
        self.tls_root_certs = query.get("tls_root_certs")
        self.override_hostname = query.get("override_hostname")
        self._sluice: bool | None = None  # whether the server speaks Sluice's protocol (probed once)
        self._ops: frozenset[str] = frozenset()  # the Sluice filter ops its capabilities list
        self._aggregate_functions: frozenset[str] = frozenset()  # the aggregate functions it lists
        self._aggregate_arguments: frozenset[str] = frozenset()  # "column", "expression"

    # ------------------------------------------------------------ connections
    def _client(self, location: str | None = None) -> flight.FlightClient:
        options: dict[str, Any] = {}
        if self.tls_root_certs:
            try:
                options["tls_root_certs"] = Path(self.tls_root_certs).read_bytes()
            except OSError as error:
                raise ConfigError(
                    f"source {self.name!r}: cannot read tls_root_certs {self.tls_root_certs}: {error.strerror}"
                ) from None
        if self.override_hostname:
            options["override_hostname"] = self.override_hostname
        return flight.FlightClient(location or self.location, **options)

    def _options(self, timeout_s: float) -> flight.FlightCallOptions:
        secret = self.credential
        headers = [authorization_header(self.user, secret)] if secret else []
        return flight.FlightCallOptions(timeout=timeout_s, headers=headers)

    def _call(
        self, work: Callable[[flight.FlightClient, flight.FlightCallOptions], T], what: str, connecting: bool = False
    ) -> T:
        """Run one metadata call; Flight failures become a :class:`SourceError` saying what failed.

        ``connecting``: the first call to the server (the client connects lazily), bounded by
        ``connect_timeout_s`` so a server that accepts and never answers fails the attach."""
        client = self._client()
        timeout_s = self.connect_timeout_s if connecting else min(_METADATA_TIMEOUT_S, self.statement_timeout_s)
        try:
            return work(client, self._options(timeout_s))
        except flight.FlightTimedOutError as error:
            if not connecting:
                raise SourceError(self.name, f"{what} failed: {self._message(error)}") from None
            raise SourceError(
                self.name,
                f"the Flight server at {self.display_url} did not answer ({what}): "
                f"{waited('connecting and the first call', timeout_s)}",
            ) from None
        except flight.FlightUnauthenticatedError as error:
            raise SourceError(
                self.name,
                f"the Flight server at {self.display_url} refused the credentials ({what}): {self._message(error)}",
            ) from None
        except flight.FlightUnavailableError as error:
            raise SourceError(
                self.name, f"cannot reach the Flight server at {self.display_url} ({what}): {self._message(error)}"
            ) from None
        except (flight.FlightError, pa.ArrowException) as error:
            raise SourceError(self.name, f"{what} failed: {self._message(error)}") from None
        finally:
            client.close()

    def _message(self, error: Exception) -> str:
        """The server's message without gRPC's detail suffix (which may quote a traceback) or its
        debug context (which repeats the message with connection internals)."""
        text = str(error).split(". Detail:", 1)[0].split(". gRPC client debug context:", 1)[0]
        return self.masked(text.strip())

    def speaks_sluice(self) -> bool:
        """Whether the server answers Sluice's capabilities action (probed once per instance)."""
        if self._sluice is None:

            def probe(client: flight.FlightClient, options: flight.FlightCallOptions) -> list[Any] | None:
                try:
                    return list(client.do_action(flight.Action(ACTION_CAPABILITIES, b""), options))
                except (flight.FlightUnauthenticatedError, flight.FlightUnavailableError, flight.FlightTimedOutError):
                    raise
                except (flight.FlightError, pa.ArrowException):  # a plain Flight server: no such action
                    return None

            answers = self._call(probe, "probing the server", connecting=True)
            self._sluice = bool(answers)
            capabilities = answers[0].body.to_pybytes() if answers else b"{}"
            self._ops = _filter_ops(capabilities)
            self._aggregate_functions = _aggregate_listed(capabilities, "functions")
            self._aggregate_arguments = _aggregate_listed(capabilities, "arguments")
        return self._sluice

    def takes(self, op: str) -> bool:
        """Whether the server's capabilities list ``op`` among the Sluice filter ops it reads:
        an op added to the format after version 1 (``cast``) is sent only to servers that list it."""
        return self.speaks_sluice() and op in self._ops

    def check(self) -> None:
        if not self.speaks_sluice():
            self._call(
                lambda client, options: next(iter(client.list_flights(options=options)), None), "listing flights"
            )

    # ------------------------------------------------------------ catalog
    def tables(self) -> list[tuple[str | None, str]]:
        infos = self._call(lambda client, options: list(client.list_flights(options=options)), "listing flights")
        paths = [
            _path_names(info.descriptor)
            for info in infos
            if info.descriptor.descriptor_type == flight.DescriptorType.PATH
        ]
        return [(".".join(path[:-1]) or None, path[-1]) for path in paths if path]

    def describe(self, schema: str | None, table: str) -> TableSchema:
        path = _path(schema, table)
        self.speaks_sluice()  # unreachable server, refused credentials: those errors, not "no such table"
        try:
            info = self._call(
                lambda client, options: client.get_flight_info(flight.FlightDescriptor.for_path(*path), options),
                f"describing {'.'.join(path)}",
            )
        except SourceError as error:
            try:
                listed = self.tables()
            except SourceError:  # the server went away after attach: that is the error, not the table
                raise error from None
            asked = ".".join(path[:-1]) or None
            names = [name for namespace, name in listed if namespace == asked]
            missing = no_such_table(self.name, asked, path[-1], names)
            raise BindError(f"{missing} ({error.message})") from None
        columns = []
        for field in info.schema:
            spark = spark_type(field.type)
            if spark is None:
                raise BindError(
                    f"table {self.name}.{'.'.join(path)}: column {field.name!r} has Arrow type {field.type}, "
                    "which Sluice does not read"
                )
            columns.append(Column(name=field.name, type=spark, remote_type=str(field.type), nullable=field.nullable))
        metadata = _metadata(info)
        return TableSchema(self.name, schema, table, tuple(columns), row_estimate=metadata.get("row_estimate"))

    # ------------------------------------------------------------ pushdown
    def classify(
        self, table: TableSchema, candidates: Sequence[exp.Expression], session_zone: str
    ) -> tuple[Verdict, ...]:
        """The server's verdict on each conjunct (one GetFlightInfo); a conjunct the filter
        format cannot spell, or any conjunct for a server that takes no filters, is UNSUPPORTED."""
        verdicts: list[Verdict | None] = [None] * len(candidates)
        encoded: list[tuple[int, dict[str, Any]]] = []
        casts = table if self.takes(filter_json.CAST) else None  # the column types that type a cast's argument
        for index, candidate in enumerate(candidates):
            try:
                encoded.append((index, filter_json.encode_conjunct(candidate, session_zone, casts)))
            except Unsupported as error:
                verdicts[index] = Verdict(candidate.sql(dialect="spark"), Level.UNSUPPORTED, str(error))
        if encoded and not self.speaks_sluice():
            reason = f"the Flight server at {self.display_url} takes no filters (not a Sluice server): Spark filters every row"
            for index, _ in encoded:
                verdicts[index] = Verdict(candidates[index].sql(dialect="spark"), Level.UNSUPPORTED, reason)
        elif encoded:
            request = Request(
                _path(table.schema, table.name),
                (table.columns[0].name,),
                _sluice_filter([expression for _, expression in encoded]),
                partitions=1,
                session_zone=session_zone,
            )
            answers = self._conjunct_levels(request)
            for (index, expression), answer in zip(encoded, answers, strict=True):
                level = Level(answer["level"])
                pushed = Pushed(flight={"expr": expression, "level": level.value, "zone": session_zone})
                verdicts[index] = Verdict(
                    candidates[index].sql(dialect="spark"),
                    level,
                    f"Flight server: {answer['reason']}",
                    _shown_conjunct(pushed) if level.pushed else None,
                    pushed if level.pushed else None,
                )
        return tuple(v for v in verdicts if v is not None)

    def _conjunct_levels(self, request: Request) -> list[dict[str, Any]]:
        assert request.filter is not None  # a request for verdicts carries the conjuncts
        info = self._flight_info(request)
        answers = _metadata(info).get("conjuncts")
        levels = {level.value for level in Level}
        if (
            not isinstance(answers, list)
            or len(answers) != len(request.filter.body["conjuncts"])
            or not all(isinstance(a, dict) and a.get("level") in levels for a in answers)
        ):
            raise SourceError(self.name, "the Flight server's answer does not give one level per conjunct")
        return answers

    def _flight_info(self, request: Request) -> flight.FlightInfo:
        descriptor = flight.FlightDescriptor.for_command(request.to_json())
        return self._call(
            lambda client, options: client.get_flight_info(descriptor, options), f"planning {'.'.join(request.table)}"
        )

    # ------------------------------------------------------------ aggregates
    def decide_aggregation(
        self, table: TableSchema, offered: dict[str, Any], filters: list[Verdict], ansi: bool, session_zone: str
    ) -> Decision:
        """The server's answer to Spark's offered aggregation (one GetFlightInfo carrying the EXACT
        filter and the aggregate): complete when the server accepts every key and function, each
        with the server's verdict. A key or function the protocol cannot carry, a server whose
        capabilities list no aggregates, or a filter not EXACT leave the aggregation to Spark."""
        keys, functions = list(offered.get("group_by", [])), list(offered.get("aggregates", []))
        labels = [key_label(k) for k in keys] + [function_label(f) for f in functions]
        items: list[dict[str, Any] | AggregateFunction | str] = []  # an item's JSON, or why it is not sent
        averaged = offered.get("averaged") or []
        for index, item in enumerate(keys + functions):
            if index >= len(keys) and is_averaged_sum(item, averaged):
                items.append(AVERAGED_SUM)
                continue
            try:
                items.append(
                    self._operand_json(item, session_zone, table)
                    if index < len(keys)
                    else self._function_json(item, session_zone, table)
                )
            except Unsupported as reason:
                items.append(str(reason))
        note = self._aggregate_note(filters)
        if note is None and any(str(f.get("fn")) == "AVG" for f in functions):
            note = AVERAGES
        sent = [item for item in items if not isinstance(item, str)]
        if AVERAGED_SUM in items:  # the aggregation is pushed whole or not at all: no server round trip
            note = AVERAGED_SUM
        # a request carries at least one function (the schema's rule): keys alone stay with Spark
        if not any(isinstance(item, AggregateFunction) for item in sent) or (note is not None and note != AVERAGES):
            refused = [
                Verdict(label, Level.UNSUPPORTED, note or str(why)) for label, why in zip(labels, items, strict=True)
            ]
            return Decision(False, tuple(refused), None, note)
        request_keys = [item for item in sent if isinstance(item, dict)]
        request = Request(
            _path(table.schema, table.name),
            filter=_sluice_filter(pushed) if (pushed := _exact_expressions(filters)) else None,
            partitions=1,
            session_zone=session_zone,
            aggregate=Aggregate(
                tuple(request_keys), tuple(item for item in sent if isinstance(item, AggregateFunction)), ansi
            ),
        )
        answer = self._aggregate_answer(self._flight_info(request), len(sent))
        answered = iter(answer["items"])
        verdicts = []
        for label, item in zip(labels, items, strict=True):
            if isinstance(item, str):
                verdicts.append(Verdict(label, Level.UNSUPPORTED, item))
                continue
            verdict = next(answered)
            level = Level(verdict["level"])
            verdicts.append(
                Verdict(
                    label,
                    level,
                    f"Flight server: {verdict.get('reason')}",
                    verdict.get("remote_sql") if level.pushed else None,
                )
            )
        if note is None and answer["accepted"] is not True:
            note = f"Flight server: {answer.get('note') or 'a key or function is not EXACT'}"
        if note is not None or len(sent) < len(items) or any(v.level is not Level.EXACT for v in verdicts):
            return Decision(False, tuple(verdicts), None, note)
        aggregation, problem = _aggregation(table, sent, answer.get("outputs"))
        return Decision(aggregation is not None, tuple(verdicts), aggregation, problem)

    def _aggregate_note(self, filters: list[Verdict]) -> str | None:
        """Why no aggregate is sent at all, or None."""
        if not self.speaks_sluice():
            return f"the Flight server at {self.display_url} is not a Sluice server: Spark aggregates every row"
        if not self._aggregate_functions:
            return f"the Flight server at {self.display_url} takes no aggregates (its capabilities list none)"
        if any(v.level is not Level.EXACT for v in filters):
            return FILTERED
        return None

    def _function_json(self, function: dict[str, Any], session_zone: str, table: TableSchema) -> AggregateFunction:
        name = str(function.get("fn", "?"))
        if name == "AVG":
            raise Unsupported(AVG_REASON)
        if name.lower() not in self._aggregate_functions:
            listed = ", ".join(sorted(self._aggregate_functions))
            raise Unsupported(f"{name} is not pushed: the Flight server's capabilities list the aggregates {listed}")
        args = function.get("args") or []
        if len(args) != (0 if name == "COUNT_STAR" else 1):
            raise Unsupported(f"{name} over {len(args)} arguments is not pushed")
        distinct = bool(function.get("distinct"))
        return AggregateFunction(
            name.lower(), tuple(self._operand_json(a, session_zone, table) for a in args), distinct
        )

    def _operand_json(self, expression: Any, session_zone: str, table: TableSchema) -> dict[str, Any]:
        """A grouping key or argument Spark offered (a V2 expression) in the filter format's JSON:
        a column, or an expression for a server that takes them, whose type the format tells (the
        client checks the type the server streams); else :class:`Unsupported`."""
        tree = v2.to_tree(expression)
        node = filter_json.encode(tree, session_zone, table if self.takes(filter_json.CAST) else None)
        if set(node) == {"column"}:
            return node
        shown = tree.sql(dialect="spark")
        if "expression" not in self._aggregate_arguments:
            raise Unsupported(f"{shown}: the Flight server takes only columns as grouping keys and aggregate arguments")
        if filter_json.type_of(node, table) is None:
            raise Unsupported(
                f"{shown}: the Flight filter format does not tell its type (a column, a literal, a cast, integer "
                "arithmetic, abs or length), so the client could not check what the server streams"
            )
        return node

    def _aggregate_answer(self, info: flight.FlightInfo, sent: int) -> dict[str, Any]:
        """The server's ``aggregate`` answer, checked to hold one verdict per key and function sent."""
        answer = _metadata(info).get("aggregate")
        levels = {level.value for level in Level}
        if (
            not isinstance(answer, dict)
            or not isinstance(answer.get("items"), list)
            or len(answer["items"]) != sent
            or not all(isinstance(a, dict) and a.get("level") in levels for a in answer["items"])
        ):
            raise SourceError(
                self.name, "the Flight server's answer does not give one verdict per aggregate key and function"
            )
        return answer

    # ------------------------------------------------------------ reading
    def _request(self, spec: ScanSpec) -> tuple[Request, list[dict[str, Any]]]:
        pushed = [conjunct.flight_expression() for conjunct in spec.where]
        zone = pushed[0]["zone"] if pushed else "UTC"
        conjuncts = _sluice_filter([p["expr"] for p in pushed]) if pushed else None
        path = _path(spec.table.schema, spec.table.name)
        if spec.aggregate is not None:
            return Request(path, None, conjuncts, None, 1, zone, aggregate_json.request(spec.aggregate)), pushed
        return Request(path, spec.columns, conjuncts, spec.limit, spec.partitions, zone), pushed

    def request_text(self, spec: ScanSpec) -> str:
        if not self.speaks_sluice():
            return f"DoGet {'.'.join(_path(spec.table.schema, spec.table.name))} (whole streams: the server takes no filters)"
        return "GetFlightInfo " + self._request(spec)[0].to_json().decode()

    def tasks(self, spec: ScanSpec) -> list[ReadTask]:
        sluice = self.speaks_sluice()
        if sluice:
            request, pushed = self._request(spec)
            info = self._flight_info(request)
            self._check_levels(pushed, _metadata(info).get("conjuncts") or [])
            if spec.aggregate is not None:
                self._check_aggregate(spec, info)
        else:
            path = _path(spec.table.schema, spec.table.name)
            info = self._call(
                lambda client, options: client.get_flight_info(flight.FlightDescriptor.for_path(*path), options),
                f"planning {'.'.join(path)}",
            )
        schema = spec.arrow_schema()
        common = {
            "sluice": sluice,
            "columns": list(spec.columns) if spec.aggregate is None else [o.name for o in spec.aggregate.outputs],
            "limit": spec.limit,
            "table": spec.table.qualified_name,
        }
        tasks = [
            ReadTask(
                json.dumps(
                    {
                        **common,
                        "ticket": base64.b64encode(e.ticket.ticket).decode("ascii"),
                        "locations": [loc.uri.decode() for loc in e.locations],
                    }
                ),
                schema,
                index,
                spec.table,
            )
            for index, e in enumerate(info.endpoints)
        ]
        return tasks or [ReadTask(json.dumps({**common, "ticket": None, "locations": []}), schema, 0, spec.table)]

    def _check_aggregate(self, spec: ScanSpec, info: flight.FlightInfo) -> None:
        """Spark takes the pushed aggregate's rows as its answer: the server must still accept it,
        stream the planned outputs and answer in one endpoint."""
        assert spec.aggregate is not None
        answer = _metadata(info).get("aggregate")
        planned = [{"name": o.name, "type": o.type.name} for o in spec.aggregate.outputs]
        if not isinstance(answer, dict) or answer.get("accepted") is not True:
            note = answer.get("note") if isinstance(answer, dict) else None
            raise SourceError(
                self.name,
                f"the Flight server now refuses the aggregate it accepted when the query was planned"
                f"{f' ({note})' if note else ''}; plan the query again",
            )
        if answer.get("outputs") != planned or len(info.endpoints) != 1:
            raise SourceError(
                self.name,
                f"the Flight server answers the aggregate with outputs {answer.get('outputs')} in "
                f"{len(info.endpoints)} endpoint(s), not the planned {planned} in one; plan the query again",
            )

    def _check_levels(self, pushed: list[dict[str, Any]], answers: list[dict[str, Any]]) -> None:
        """Spark dropped every conjunct planned EXACT: the server must still apply it exactly."""
        if len(answers) != len(pushed):
            raise SourceError(self.name, "the Flight server's answer does not give one level per conjunct")
        for planned, answer in zip(pushed, answers, strict=True):
            if planned["level"] == "EXACT" and answer.get("level") != "EXACT":
                raise SourceError(
                    self.name,
                    f"the Flight server now classifies {answer.get('sql')} as {answer.get('level')} "
                    "(it was EXACT when the query was planned); plan the query again",
                )

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        order = json.loads(task.request)
        if order["ticket"] is None:
            return
        locations = [loc for loc in order["locations"] if loc != _REUSE]
        client = self._client(locations[0] if locations else None)
        where = f"the stream of {order['table']} (partition {task.partition}) from {self.display_url}"
        rows, ended = 0, False
        try:
            reader = client.do_get(
                flight.Ticket(base64.b64decode(order["ticket"])), self._options(self.statement_timeout_s)
            )
            while order["limit"] is None or rows < order["limit"]:
                try:
                    chunk = reader.read_chunk()
                except StopIteration:
                    break
                if order["sluice"] and chunk.app_metadata is not None:
                    ended = self._end_marker(chunk.app_metadata.to_pybytes(), rows, where)
                    continue
                batch = chunk.data
                if batch is None or batch.num_rows == 0:
                    continue
                if order["limit"] is not None:
                    batch = batch.slice(0, order["limit"] - rows)
                batch = conform(self._select(batch, order["columns"], where), task.schema, task.table)
                rows += batch.num_rows
                yield batch
            else:
                ended = True  # the limit was reached: the client stopped reading, not the server
        except flight.FlightUnauthenticatedError as error:
            raise SourceError(
                self.name, f"{where}: the Flight server refused the credentials: {self._message(error)}"
            ) from None
        except flight.FlightUnavailableError as error:
            raise SourceError(
                self.name,
                f"{where} broke after {rows} rows (the server stopped or cannot be reached), "
                f"so the query fails rather than return a short result: {self._message(error)}",
            ) from None
        except (flight.FlightError, pa.ArrowException) as error:
            raise SourceError(self.name, f"{where} failed after {rows} rows: {self._message(error)}") from None
        finally:
            client.close()
        if order["sluice"] and not ended:
            raise SourceError(
                self.name,
                f"{where} ended after {rows} rows without the server's end marker: "
                "the server stopped mid-stream, so the result would be short",
            )

    def _select(self, batch: pa.RecordBatch, columns: list[str], where: str) -> pa.RecordBatch:
        """The planned columns, by name (a plain server sends every column, in its own order)."""
        names = {name.lower(): name for name in batch.schema.names}
        try:
            return batch.select([names[c.lower()] for c in columns])
        except KeyError as missing:
            raise SourceError(self.name, f"{where}: the stream has no column {missing}") from None

    def _end_marker(self, metadata: bytes, rows: int, where: str) -> bool:
        try:
            marker = json.loads(metadata)
        except ValueError:
            return False
        if marker.get("end") and marker.get("rows") != rows:
            raise SourceError(self.name, f"{where}: the server sent {marker.get('rows')} rows, {rows} arrived")
        return bool(marker.get("end"))


def _shown_conjunct(pushed: Pushed) -> str:
    """A pushed conjunct as a verdict shows it: its filter expression, level and zone as JSON."""
    return json.dumps(pushed.flight_expression(), separators=(",", ":"))


def _sluice_filter(conjuncts: list[dict[str, Any]]) -> FilterSpec:
    return FilterSpec("sluice", {"version": filter_json.VERSION, "conjuncts": conjuncts})


def _filter_ops(capabilities: bytes) -> frozenset[str]:
    """The Sluice filter ops a capabilities answer lists (none if it lists none)."""
    try:
        ops = json.loads(capabilities).get("sluice_filter", {}).get("ops", [])
    except (ValueError, AttributeError):
        return frozenset()
    return frozenset(op for op in ops if isinstance(op, str)) if isinstance(ops, list) else frozenset()


def _aggregate_listed(capabilities: bytes, key: str) -> frozenset[str]:
    """What a capabilities answer lists under ``aggregate.<key>`` (nothing if it lists nothing)."""
    try:
        listed = json.loads(capabilities).get("aggregate", {}).get(key, [])
    except (ValueError, AttributeError):
        return frozenset()
    return frozenset(f for f in listed if isinstance(f, str)) if isinstance(listed, list) else frozenset()


def _exact_expressions(filters: list[Verdict]) -> list[dict[str, Any]]:
    """The JSON of the conjuncts the server evaluates (all EXACT when an aggregate is sent)."""
    return [v.pushed.flight_expression()["expr"] for v in filters if v.level.pushed and v.pushed is not None]


def _aggregation(table: TableSchema, sent: list[Any], outputs: Any) -> tuple[Aggregation | None, str | None]:
    """The pushed aggregation as the scan carries it (each key and argument as its filter-format
    expression, from which :func:`aggregate_json.request` writes the read's request), when
    the server streams each output in the protocol's type (:func:`aggregate_json.read_type`)."""
    expected = [aggregate_json.read_type(item, table) for item in sent]
    names = (
        [o.get("name") for o in outputs]
        if isinstance(outputs, list) and all(isinstance(o, dict) for o in outputs)
        else []
    )
    types = [o.get("type") for o in outputs] if names else []
    if (
        len(names) != len(sent)
        or not all(isinstance(n, str) and n for n in names)
        or len(set(names)) != len(names)
        or None in expected
        or types != [t.name for t in expected if t is not None]
    ):
        return None, (
            f"the Flight server's outputs {json.dumps(outputs)[:300]} are not the protocol's "
            f"({', '.join(str(t) for t in expected)}): Spark aggregates"
        )
    built = []
    for name, item, kind in zip(names, sent, [t for t in expected if t is not None], strict=True):
        if isinstance(item, dict):
            built.append(Output(name, kind, argument=aggregate_json.argument(item)))
            continue
        argument = item.args[0] if item.args else None
        column = argument.get("column") if argument is not None else None
        built.append(
            Output(
                name,
                kind,
                item.function.upper(),
                aggregate_json.argument(argument) if argument is not None else None,
                item.distinct,
                filter_json.column_name(table, column) if isinstance(column, str) else None,
            )
        )
    return Aggregation(tuple(built)), None


def _path(schema: str | None, table: str) -> tuple[str, ...]:
    return (*schema.split("."), table) if schema else (table,)


def _path_names(descriptor: flight.FlightDescriptor) -> list[str]:
    return [p.decode("utf-8", "replace") if isinstance(p, bytes) else p for p in descriptor.path]


def _metadata(info: flight.FlightInfo) -> dict[str, Any]:
    """The Sluice answer in a FlightInfo's app_metadata ({} from other servers)."""
    raw = info.app_metadata
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
