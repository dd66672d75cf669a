"""The parsers that take outside input, each wrapped as the code that serves it calls it.

* ``v2``: the predicates Spark offers a scan, as the catalog layer sends them (JSON V2
  expressions, see ``io.sluice.spark.Expressions``), answered by ``CatalogPlanner.filters``
  (``sluice.scan.v2`` turns each into a Spark SQL tree, then every dialect classifies it).
* ``flight-json``, ``airport``, ``substrait``: a GetFlightInfo descriptor as the Flight
  server reads it (``protocol.parse_request`` or ``path_request``, the filter decoder of
  the request's format, classification of every conjunct by a SQL dialect).
* ``catalog``: a TOML catalog file through ``load_catalog``.

Accepted outcomes are success and a :class:`SluiceError` (the Flight server maps its
``RequestError`` to a Flight error); a :class:`PushdownError` is a Sluice bug and counts as
a failure, as does any other exception, a hang, and a
:class:`~fuzz.parsers.oracles.Violation` of what every accepted input must give. Cases are
made by :mod:`fuzz.parsers.generate`.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from sqlglot import exp

from fuzz.parsers import generate, seeds
from fuzz.parsers.oracles import Violation, check_remote
from fuzz.parsers.tables import DIALECTS, TABLES, resolve
from sluice.catalog import load_catalog
from sluice.dialects.base import Dialect
from sluice.errors import BindError, PushdownError, SluiceError
from sluice.flight import filter_json
from sluice.flight.protocol import RequestError, parse_request, path_request
from sluice.planner.catalog import CatalogPlanner
from sluice.protocol.codec import decode, encode
from sluice.protocol.scan import FiltersRequest
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.translator import classify_conjuncts
from sluice.serve import planning
from sluice.types import TableSchema, table_to_dict

ZONE = "America/New_York"  # DST makes timestamp constants earn their keep


@dataclass(frozen=True)
class Target:
    name: str
    seeds: Callable[[], list[bytes]]
    generate: Callable[[random.Random, list[bytes]], bytes]
    run: Callable[[bytes], None]


def accepted(error: BaseException) -> bool:
    """Whether ``error`` is a clean, typed refusal."""
    return isinstance(error, SluiceError) and not isinstance(error, PushdownError)


# ---------------------------------------------------------------- Spark's V2 predicates
#: the catalog options every fuzz source is attached under (nothing is opened: see _Classifier)
_OPTIONS = {"url": "fuzz://tables"}


@dataclass(frozen=True)
class _Classifier:
    """What ``CatalogPlanner.filters`` asks of a source, answered as a SQL source answers it:
    the dialect's classification, applied as classified by the reader. No connection is
    opened, yet the planner's own code (decoding, verdicts for what has no tree, the answer)
    runs as in Spark."""

    dialect: Dialect

    def classify(
        self, table: TableSchema, candidates: Sequence[exp.Expression], session_zone: str
    ) -> tuple[Verdict, ...]:
        return classify_conjuncts(self.dialect, table, candidates, session_zone)

    def filters_as_read(self, table: TableSchema, verdicts: list[Verdict], request: FiltersRequest) -> list[Verdict]:
        return verdicts  # a SQL source's reader applies every pushed conjunct (Source.filters_as_read)


@lru_cache(maxsize=1)
def _planner() -> CatalogPlanner:
    planner = CatalogPlanner()
    for name, dialect in DIALECTS.items():
        planner.remember(name, _OPTIONS, _Classifier(dialect))  # type: ignore[arg-type]  # classify and filters_as_read are all filters() uses
    return planner


def filters(source: str, predicates: list[Any]) -> dict[str, Any]:
    """``CatalogPlanner.filters``' answer to ``predicates`` offered on ``source``'s table, as
    the bridge calls it and as JSON, the form the bridge sends back."""
    request = {
        "catalog": source,
        "options": _OPTIONS,
        "session_zone": ZONE,
        "table": {"table": table_to_dict(TABLES[source])},
        "predicates": predicates,
    }
    answer = _planner().filters(decode(FiltersRequest, request, "the 'filters' request"))
    return json.loads(json.dumps(encode(answer)))


def run_v2(data: bytes) -> None:
    """One scan's predicates (a JSON list of V2 expressions) offered on the table of every
    dialect: each answer must hold one verdict per predicate, and what is pushed must pass
    :func:`check_remote`."""
    predicates = json.loads(data)
    for source, table in TABLES.items():
        verdicts = filters(source, predicates)["verdicts"]
        if len(verdicts) != len(predicates):
            raise Violation(f"{source}: {len(verdicts)} verdicts for {len(predicates)} predicates")
        check_remote(source, table, [v["remote_sql"] for v in verdicts if Level(v["level"]).pushed])


# ---------------------------------------------------------------- flight
def _resolve_path(path: tuple[str, ...]) -> tuple[str, TableSchema]:
    """As ``PublishedTables.resolve``: [source, table] or [source, schema, table]."""
    if not 2 <= len(path) <= 3 or path[0].lower() not in TABLES:
        raise RequestError(f"table path {list(path)} names no published table")
    schema, name = (None, path[1]) if len(path) == 2 else (path[1], path[2])
    try:
        return path[0].lower(), resolve(path[0].lower(), schema, name)
    except BindError as error:
        raise RequestError(f"unknown table {list(path)}: {error}") from None


def run_flight(data: bytes) -> None:
    """A descriptor as the server plans it: a command (JSON) or, for input starting with
    ``path:``, a path descriptor of NUL-separated names."""
    if data.startswith(b"path:"):
        request = path_request(data[5:].split(b"\x00"))
    else:
        request = parse_request(data)
    source, table = _resolve_path(request.table)
    for name in request.columns or ():
        filter_json.column_name(table, name)
    conjuncts = planning.read_filter(request.filter, table)
    trees = [c.tree for c in conjuncts if c.tree is not None]
    for name in (source, "lite", "my"):
        verdicts = classify_conjuncts(
            DIALECTS[name], TABLES[name], trees, request.session_zone
        )  # the fuzz tables share names
        check_remote(name, TABLES[name], [cast(str, v.remote_sql) for v in verdicts if v.level.pushed])
    for conjunct in conjuncts:
        json.dumps({"sql": conjunct.sql, "reason": conjunct.reason})  # the FlightInfo's app_metadata


def run_catalog(data: bytes) -> None:
    handle, path = tempfile.mkstemp(prefix="sluice-fuzz-", suffix=".toml")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        load_catalog(path)
    finally:
        os.unlink(path)


TARGETS: dict[str, Target] = {
    "v2": Target("v2", seeds.v2_seeds, generate.v2, run_v2),
    "flight-json": Target(
        "flight-json",
        seeds.flight_json_seeds,
        generate.json_generator(seeds.flight_json_seeds, generate.SLUICE_WORDS, generate.nested_sluice),
        run_flight,
    ),
    "airport": Target(
        "airport",
        seeds.airport_seeds,
        generate.json_generator(seeds.airport_seeds, generate.AIRPORT_WORDS, generate.nested_airport),
        run_flight,
    ),
    "substrait": Target("substrait", generate.substrait_seeds, generate.substrait, run_flight),
    "catalog": Target("catalog", seeds.catalog_seeds, generate.catalog, run_catalog),
}
