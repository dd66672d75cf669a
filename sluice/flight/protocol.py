"""The Sluice Flight protocol: what a request for endpoints carries and what comes back.

A request is a JSON object in a ``FlightDescriptor`` command (a path descriptor asks for
a whole table). It names the table by its Flight path, the columns, a filter in one of
three encodings, a limit, an aggregate (grouping keys and functions, read by
:mod:`sluice.flight.aggregate_json`) and the client's session time zone (Spark's typing of
timestamp constants depends on it). Everything a client can get wrong is checked here or by the
filter decoders, and reported as a :class:`RequestError` naming what is wrong: a server
must never guess, because a guess can drop rows.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from sluice.errors import SluiceError
from sluice.flight import request_schema
from sluice.pushdown.constants import ZoneNameError, session_zone

PROTOCOL = "sluice-flight"
VERSION = 1
#: a request (descriptor command or action body) larger than this is refused unread
MAX_REQUEST_BYTES = 1 << 20
#: deeper expression trees are refused (they are not filters anyone writes)
MAX_DEPTH = 64
MAX_CONJUNCTS = 1024
MAX_PARTITIONS = 64
#: the largest LIMIT sent (BIGINT's maximum): a larger one would fail the remote read
MAX_LIMIT = 2**63 - 1
FORMATS = ("sluice", "airport", "substrait")

ACTION_LIST_TABLES = "sluice.list_tables"
ACTION_CAPABILITIES = "sluice.capabilities"

_REQUEST_KEYS = {
    "protocol",
    "version",
    "table",
    "columns",
    "filter",
    "limit",
    "partitions",
    "session_zone",
    "aggregate",
}
#: the aggregate functions a request may carry (``count_star`` takes no argument, the others one)
AGGREGATE_FUNCTIONS = ("count", "count_star", "max", "min", "sum")
#: the most grouping keys plus functions one aggregate holds
MAX_AGGREGATE_ITEMS = 256
_AGGREGATE_KEYS = {"group_by", "aggregates", "ansi"}
_FUNCTION_KEYS = {"function", "args", "distinct"}


class RequestError(SluiceError):
    """A client's request is malformed: bad JSON, unknown table or column, a literal that is
    not of its type, too large. The message says which."""


class NotFound(RequestError):
    """The request names a table the server does not publish (or that does not exist: the
    server answers both alike, so a client cannot probe for what is not published)."""


@dataclass(frozen=True)
class FilterSpec:
    """A request's filter, still in its encoding: JSON for ``sluice``/``airport``, bytes for ``substrait``."""

    format: str
    body: Any


@dataclass(frozen=True)
class AggregateFunction:
    """One aggregate function: its protocol name and its arguments (JSON expressions)."""

    function: str
    args: tuple[dict[str, Any], ...] = ()
    distinct: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"function": self.function, "args": list(self.args)}
        if self.distinct:
            data["distinct"] = True
        return data


@dataclass(frozen=True)
class Aggregate:
    """A request's aggregate: grouping keys (JSON expressions), functions, Spark's ANSI mode."""

    group_by: tuple[dict[str, Any], ...] = ()
    aggregates: tuple[AggregateFunction, ...] = ()
    ansi: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "group_by": list(self.group_by),
            "aggregates": [f.to_json() for f in self.aggregates],
            "ansi": self.ansi,
        }


@dataclass(frozen=True)
class Request:
    table: tuple[str, ...]
    columns: tuple[str, ...] | None = None  # None: every column
    filter: FilterSpec | None = None
    limit: int | None = None
    partitions: int | None = None  # None: the server's default for the table
    session_zone: str = "UTC"
    #: grouping keys and aggregate functions the server answers completely or not at all
    aggregate: Aggregate | None = None

    def to_json(self) -> bytes:
        data: dict[str, Any] = {
            "protocol": PROTOCOL,
            "version": VERSION,
            "table": list(self.table),
            "session_zone": self.session_zone,
        }
        if self.columns is not None:
            data["columns"] = list(self.columns)
        if self.filter is not None:
            data["filter"] = (
                {"format": self.filter.format, **self.filter.body}
                if self.filter.format != "substrait"
                else {"format": "substrait", "base64": _b64encode(self.filter.body)}
            )
        if self.limit is not None:
            data["limit"] = self.limit
        if self.partitions is not None:
            data["partitions"] = self.partitions
        if self.aggregate is not None:
            data["aggregate"] = self.aggregate.to_json()
        return json.dumps(data, separators=(",", ":"), allow_nan=False).encode()


@dataclass(frozen=True)
class Conjunct:
    """One conjunct of a request's filter as the server read it: a Spark SQL predicate tree,
    or the reason it could not be read (it is then reported UNSUPPORTED, never dropped)."""

    tree: exp.Expression | None
    label: str = ""
    reason: str | None = None

    @property
    def sql(self) -> str:
        return self.tree.sql(dialect="spark") if self.tree is not None else self.label


def check_size(payload: bytes, what: str) -> None:
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError(f"{what} is {len(payload):,} bytes; the server accepts at most {MAX_REQUEST_BYTES:,}")


def load_json(payload: bytes, what: str) -> Any:
    """Parse ``payload`` as JSON, or raise a :class:`RequestError` saying where it breaks."""
    check_size(payload, what)
    try:
        return json.loads(payload)
    except UnicodeDecodeError:
        raise RequestError(f"{what} is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise RequestError(f"{what} is not valid JSON: {error}") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise RequestError(f"{what} holds a number too long to read") from None
    except RecursionError:  # json's C parser recurses per nesting level
        raise RequestError(f"{what} is nested too deeply (filters are at most {MAX_DEPTH} levels deep)") from None


def parse_request(payload: bytes) -> Request:
    """A descriptor command as a :class:`Request`; every field is validated, then the whole
    request against the published schema (:mod:`sluice.flight.request_schema`)."""
    data = load_json(payload, "the request")
    mismatch = request_schema.problem(data)
    if mismatch is None:
        return request_of(data)
    try:
        request_of(data)
    except RequestError as error:  # the typed checks' words for it, where they have some
        raise RequestError(f"at {mismatch.path}: {error}") from None
    raise RequestError(f"at {mismatch.path}: {mismatch.message} (docs/flight-filter.schema.json)")


def _only_known(data: dict[str, Any], known: set[str], what: str) -> None:
    """Refuse a part of the request holding keys the protocol does not name, listing the known ones."""
    unknown = sorted(set(data) - known)
    if unknown:
        raise RequestError(f"{what} has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def request_of(data: Any) -> Request:
    """Parsed request JSON as a :class:`Request`, by the typed checks alone (their messages)."""
    if not isinstance(data, dict):
        raise RequestError(f"the request must be a JSON object, not {type(data).__name__}")
    _only_known(data, _REQUEST_KEYS, "the request")
    if data.get("protocol", PROTOCOL) != PROTOCOL:
        raise RequestError(f"the request's protocol is {data['protocol']!r}; this server speaks {PROTOCOL!r}")
    version = data.get("version", VERSION)
    if type(version) is not int or not 1 <= version <= VERSION:
        raise RequestError(f"the request's version {version!r} is not one this server reads (1..{VERSION})")
    aggregate = None if data.get("aggregate") is None else _aggregate(data["aggregate"])
    if aggregate is not None and data.get("limit") is not None:
        raise RequestError("a request with an aggregate takes no limit (the client limits the groups)")
    return Request(
        table=_names(data.get("table"), "table", 'a Flight path: a list of names such as ["lite", "orders"]'),
        columns=None if data.get("columns") is None else _names(data["columns"], "columns", "a list of column names"),
        filter=None if data.get("filter") is None else _filter(data["filter"]),
        limit=_limit(_count(data.get("limit"), "limit", 0, None)),
        partitions=_count(data.get("partitions"), "partitions", 1, MAX_PARTITIONS),
        session_zone=_zone(data.get("session_zone", "UTC")),
        aggregate=aggregate,
    )


def path_request(path: Sequence[bytes | str]) -> Request:
    """A path descriptor as a :class:`Request` for the whole table (names must be UTF-8)."""
    try:
        return Request(tuple(p.decode("utf-8") if isinstance(p, bytes) else p for p in path))
    except UnicodeDecodeError:
        raise RequestError("a path descriptor's names must be UTF-8 text") from None


def _limit(value: int | None) -> int | None:
    """Past BIGINT no engine takes the LIMIT literal, and no table holds that many rows."""
    return None if value is None else min(value, MAX_LIMIT)


def _names(value: Any, key: str, expected: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise RequestError(f"the request's {key} must be {expected}, not {json.dumps(value)[:200]}")
    return tuple(value)


def _count(value: Any, key: str, low: int, high: int | None) -> int | None:
    if value is None:
        return None
    if type(value) is not int or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise RequestError(f"the request's {key} must be an integer {bound}, not {json.dumps(value)[:50]}")
    return value


def _zone(value: Any) -> str:
    if not isinstance(value, str):
        raise RequestError(
            f"session_zone must be a time zone name such as 'UTC' or 'Europe/Paris', not {json.dumps(value)[:50]}"
        )
    try:
        session_zone(value)
    except ZoneNameError as error:
        raise RequestError(f"session_zone {error}") from None
    except (ValueError, KeyError, OSError):
        raise RequestError(f"session_zone {value!r} is not a time zone this server knows") from None
    return value


def _filter(value: Any) -> FilterSpec:
    if not isinstance(value, dict) or value.get("format") not in FORMATS:
        raise RequestError(f"the request's filter must be an object whose format is one of {', '.join(FORMATS)}")
    body = {k: v for k, v in value.items() if k != "format"}
    if value["format"] == "substrait":
        if set(body) != {"base64"} or not isinstance(body["base64"], str):
            raise RequestError('a substrait filter is {"format": "substrait", "base64": <ExtendedExpression bytes>}')
        return FilterSpec("substrait", _b64decode(body["base64"]))
    return FilterSpec(value["format"], body)


def _aggregate(value: Any) -> Aggregate:
    """The request's aggregate; its expressions are only checked to be JSON objects here (the
    server reads them against the table, as a filter's)."""
    if not isinstance(value, dict):
        raise RequestError(f"the request's aggregate must be a JSON object, not {_json(value)}")
    _only_known(value, _AGGREGATE_KEYS, "the aggregate")
    keys, functions = value.get("group_by", []), value.get("aggregates")
    if not isinstance(keys, list) or not all(isinstance(k, dict) for k in keys):
        raise RequestError(f"the aggregate's group_by must be a list of expressions, not {_json(keys)}")
    if not isinstance(functions, list) or not functions:
        raise RequestError(
            'the aggregate\'s aggregates must be a non-empty list of {"function": ..., "args": [...]} objects'
        )
    if len(keys) + len(functions) > MAX_AGGREGATE_ITEMS:
        raise RequestError(
            f"the aggregate has {len(keys) + len(functions)} keys and functions; "
            f"the server accepts at most {MAX_AGGREGATE_ITEMS}"
        )
    ansi = value.get("ansi", True)
    if not isinstance(ansi, bool):
        raise RequestError(f"the aggregate's ansi must be true or false, not {_json(ansi)}")
    return Aggregate(tuple(keys), tuple(_aggregate_function(f) for f in functions), ansi)


def _aggregate_function(value: Any) -> AggregateFunction:
    if not isinstance(value, dict) or value.get("function") not in AGGREGATE_FUNCTIONS:
        raise RequestError(
            f'an aggregate function is {{"function": one of {", ".join(AGGREGATE_FUNCTIONS)}, "args": [...]}}, '
            f"not {_json(value)}"
        )
    unknown = sorted(set(value) - _FUNCTION_KEYS)
    if unknown:
        raise RequestError(f"unknown key(s) {', '.join(unknown)} in the aggregate function {_json(value)}")
    name, args = value["function"], value.get("args", [])
    wanted = 0 if name == "count_star" else 1
    if not isinstance(args, list) or len(args) != wanted or not all(isinstance(a, dict) for a in args):
        raise RequestError(f"aggregate function {name} takes {wanted} argument(s), each an expression: {_json(value)}")
    distinct = value.get("distinct", False)
    if not isinstance(distinct, bool) or (distinct and name == "count_star"):
        raise RequestError(f"an aggregate function's distinct is true or false (never with count_star): {_json(value)}")
    return AggregateFunction(name, tuple(args), distinct)


def _json(value: Any) -> str:
    return json.dumps(value, default=str)[:200]


def _b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _b64decode(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise RequestError("the substrait filter's base64 text does not decode") from None
