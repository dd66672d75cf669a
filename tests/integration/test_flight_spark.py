"""Flight-served tables in federated Spark queries: the pushdown on/off differential over
the edge tables, partitions, a plain Flight server, secrets, and a server that dies.

A Sluice Flight server (in-process, on loopback) publishes the PostgreSQL and SQLite edge
tables; the client attaches it as ``fl`` and queries ``fl.lite.edge`` and
```fl.`pg.sluice_test`.edge``` (the PostgreSQL table's path has three parts).
"""

from __future__ import annotations

import collections
import os
import re
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pytest

from sluice import Federation
from sluice.errors import SourceError
from sluice.pushdown.levels import Level
from sluice.serve.allowlist import AllowList
from sluice.serve.server import serve_in_background
from tests import corpus
from tests.integration.test_differential import differential_failures
from tests.integration.test_flight_load import ServerProcess, make_events_db
from tests.plans import stated
from tests.sources import BY_NAME

pytestmark = pytest.mark.integration

TOKEN = "spark-flight-token-93be"
#: every 12th predicate of the differential corpus by default (Spark runs each as its own
#: scan, about half a second apiece on a small machine); SLUICE_FLIGHT_DIFFERENTIAL=full runs all
STRIDE = 1 if os.environ.get("SLUICE_FLIGHT_DIFFERENTIAL") == "full" else 12
SERVED = {"lite": "fl.lite.edge", "pg": "fl.`pg.sluice_test`.edge"}
FLIGHT_TABLES = {name: table for name, table in SERVED.items() if name in BY_NAME}


@pytest.fixture(scope="module")
def flight_fed(spark, edge_tables):
    publish = AllowList.parse(
        [{"lite": "lite.main", "pg": "pg.sluice_test"}[name] for name in FLIGHT_TABLES], [], "test"
    )
    location, stop = serve_in_background(
        {name: edge_tables["urls"][name] for name in FLIGHT_TABLES}, token=TOKEN, publish=publish
    )
    federation = Federation(spark=spark)
    federation.attach("fl", location, password=TOKEN)
    yield federation
    stop()


@pytest.mark.parametrize("source", sorted(FLIGHT_TABLES))
def test_pushdown_equals_reference_through_flight(flight_fed, source: str) -> None:
    """The differential suite's predicates over Flight: the server's levels must be right."""
    predicates = list(enumerate(corpus.differential()))[::STRIDE]
    failures = differential_failures(flight_fed, FLIGHT_TABLES[source], predicates)
    assert not failures, f"{len(failures)} predicate(s) differ through Flight on {source}:\n" + "\n".join(failures[:25])


@pytest.mark.parametrize("source", sorted(FLIGHT_TABLES))
def test_the_server_decides_and_most_of_the_corpus_is_pushed(flight_fed, fed, source: str) -> None:
    """Through Flight, each conjunct gets the level the source itself would give it (casts
    included: the widening ones Spark makes explicit travel as ``cast`` nodes), except where a
    conjunct holds a cast the format leaves to Spark."""
    direct = BY_NAME[source].edge_table
    levels: collections.Counter = collections.Counter()
    for predicate in corpus.leaves()[::11]:
        served = [
            (v.sql, v.level)
            for s in flight_fed.plan(f"SELECT id FROM {FLIGHT_TABLES[source]} WHERE {predicate}").scans
            for v in s.verdicts
        ]
        local = [
            (v.sql, v.level) for s in fed.plan(f"SELECT id FROM {direct} WHERE {predicate}").scans for v in s.verdicts
        ]
        assert len(served) == len(local), predicate
        for (sql, got), (_, expected) in zip(served, local):
            assert got == expected or (got is Level.UNSUPPORTED and "CAST(" in sql), (predicate, sql, got, expected)
        levels.update(level.value for _, level in served)
    assert levels["EXACT"] > 0 and levels["UNSUPPORTED"] > 0, levels


#: comparisons across numeric types: Spark's analysis widens one side with an explicit cast
#: (``CAST(i AS BIGINT) = b``, ``CAST(i AS DOUBLE) < f``, ``CAST(b AS DECIMAL(24,4)) >= CAST(d AS
#: DECIMAL(24,4))``) that no optimizer rule unwraps (the other side is a column), over the edge
#: columns' extreme integers, NULLs, NaN, infinities and -0.0
CAST_PREDICATES = [
    "i = b",
    "i < b",
    "i = f",
    "i > f",
    "i <= f AND f >= -1",
    "r = f",
    "r < f",
    "i <= d",
    "b >= d",
    "NOT (i <> b)",
    "i = f OR b = f",
    "i <=> f",
    "f IN (i, 1.5)",
]


@pytest.mark.parametrize("source", sorted(FLIGHT_TABLES))
def test_spark_casts_are_pushed_to_the_server_and_keep_spark_rows(flight_fed, source: str) -> None:
    """A widening cast Spark makes explicit travels as a ``cast`` node; the server pushes it as
    the source itself would, and the rows equal Spark's own filtering."""
    table = FLIGHT_TABLES[source]
    offered = pushed = 0
    for predicate in CAST_PREDICATES:  # in SQLite i and b are both bigint: i = b needs no cast there
        query = f"SELECT id FROM {table} WHERE {predicate}"
        [scan] = flight_fed.plan(query).scans
        casts = [v for v in stated(scan.verdicts) if "CAST(" in v.sql]
        offered += len(casts)
        for verdict in casts:
            assert "takes no casts" not in verdict.reason and "no spelling" not in verdict.reason, (predicate, verdict)
            if verdict.level.pushed:
                pushed += 1
                assert verdict.reason.startswith("Flight server: ") and '"op":"cast"' in scan.remote_query, (
                    predicate,
                    verdict,
                )
        rows = sorted(r.id for r in flight_fed.sql(query).collect())
        assert rows == sorted(r.id for r in flight_fed.sql(query, pushdown=False).collect()), predicate
    assert offered >= len(CAST_PREDICATES) // 2 and pushed >= offered // 2, (offered, pushed)


def test_a_pushed_cast_shows_in_explain_and_leaves_spark_s_filter(flight_fed) -> None:
    table = FLIGHT_TABLES["pg" if "pg" in FLIGHT_TABLES else "lite"]
    query = f"SELECT id FROM {table} WHERE i = b"
    [scan] = flight_fed.plan(query).scans
    [verdict] = stated(scan.verdicts)
    assert verdict.sql == "CAST(`i` AS BIGINT) = `b`" and verdict.level is Level.EXACT, verdict
    assert '{"op":"cast","args":[{"column":"i"}],"type":"bigint"}' in scan.remote_query
    assert "CAST(`i` AS BIGINT) = `b`" in flight_fed.explain(query)
    assert not [
        line for line in flight_fed.plan(query).spark_plan.splitlines() if "Filter" in line and "cast(i" in line.lower()
    ]


def test_a_server_that_lists_no_cast_is_never_sent_one(flight_fed, monkeypatch) -> None:
    """A server before the ``cast`` op refuses it as an unknown op: the client reads the
    server's capabilities and keeps such conjuncts with Spark."""
    source = flight_fed._sources["fl"]
    monkeypatch.setattr(source, "_ops", source._ops - {"cast"})
    table = FLIGHT_TABLES["pg" if "pg" in FLIGHT_TABLES else "lite"]
    query = f"SELECT id FROM {table} WHERE i = b AND id > 3"
    [scan] = flight_fed.plan(query).scans
    levels = {v.sql: (v.level, v.reason) for v in stated(scan.verdicts)}
    level, reason = levels["CAST(`i` AS BIGINT) = `b`"]
    assert level is Level.UNSUPPORTED and "takes no casts" in reason, reason
    assert levels["`id` > 3"][0] is Level.EXACT
    assert '"cast"' not in scan.remote_query
    assert sorted(r.id for r in flight_fed.sql(query).collect()) == sorted(
        r.id for r in flight_fed.sql(query, pushdown=False).collect()
    )


def test_exact_conjuncts_are_not_reapplied_by_spark(flight_fed) -> None:
    plan = flight_fed.plan("SELECT id FROM fl.lite.edge WHERE i = 1 AND tc = 'a' AND upper(t) = 'A'")
    [scan] = plan.scans
    assert [v.level.value for v in stated(scan.verdicts)] == ["EXACT", "INEXACT", "UNSUPPORTED"]
    assert all(v.reason.startswith("Flight server: ") for v in scan.verdicts)
    [residual] = [line for line in plan.spark_plan.splitlines() if "Filter" in line]  # what Spark still applies
    assert re.search(r"tc#\d+ = a", residual) and "upper(" in residual and not re.search(r"\bi#\d+ = 1", residual), (
        residual
    )
    assert '"op":"="' in scan.remote_query and scan.remote_query.startswith("GetFlightInfo ")


def test_a_limit_over_exact_filters_is_pushed_and_top_n_is_not(flight_fed) -> None:
    limited = flight_fed.plan("SELECT id FROM fl.lite.edge WHERE i = 1 LIMIT 2").scans[0]
    assert limited.spec.limit == 2
    ordered = flight_fed.plan("SELECT id FROM fl.lite.edge WHERE i = 1 ORDER BY id LIMIT 2").scans[0]
    assert ordered.spec.limit is None
    assert [r.id for r in flight_fed.sql("SELECT id FROM fl.lite.edge WHERE i = 1 ORDER BY id LIMIT 2").collect()] == [
        r.id
        for r in flight_fed.sql("SELECT id FROM fl.lite.edge WHERE i = 1 ORDER BY id LIMIT 2", pushdown=False).collect()
    ]


def test_each_endpoint_is_a_spark_partition(spark, edge_tables) -> None:
    if "lite" not in FLIGHT_TABLES:
        pytest.skip("the SQLite edge table is not selected")
    location, stop = serve_in_background({"lite": edge_tables["urls"]["lite"]})
    try:
        federation = Federation(spark=spark, partitions=4)
        federation.attach("fl4", location)
        frame = federation.sql("SELECT id FROM fl4.lite.edge")
        assert frame.rdd.getNumPartitions() == 4
        assert sorted(r.id for r in frame.collect()) == list(range(80))
    finally:
        stop()


def test_the_dataframe_api_pushes_spark_filters_to_the_server(spark, flight_fed) -> None:
    if "lite" not in FLIGHT_TABLES:
        pytest.skip("the SQLite edge table is not selected")
    location = flight_fed._sources["fl"].location
    frame = (
        spark.read.format("sluice")
        .option("url", location)
        .option("table", "lite.edge")
        .option("password", TOKEN)
        .option("pushFilters", "true")
        .load()
    )
    reference = flight_fed.sql("SELECT * FROM fl.lite.edge", pushdown=False)
    for condition in ("i = 1", "tc = 'a'", "t LIKE 'a%'", "f > 1.5"):
        assert sorted(r.id for r in frame.filter(condition).select("id").collect()) == sorted(
            r.id for r in reference.filter(condition).select("id").collect()
        ), condition


def test_the_token_never_shows(flight_fed, spark) -> None:
    query = "SELECT id FROM fl.lite.edge WHERE i = 1"
    texts = [
        flight_fed.explain(query, verbose=True),
        str(flight_fed.plan(query).to_dict()),
        repr(flight_fed.sources),
        flight_fed.sql(query)._jdf.queryExecution().toString(),
    ]
    assert not [text for text in texts if TOKEN in text]
    location = flight_fed._sources["fl"].location
    refused = Federation(spark=spark)
    with pytest.raises(SourceError, match="refused the credentials") as error:
        refused.attach("bad", location, password="not-" + TOKEN)
    assert TOKEN not in str(error.value)


class PlainServer(flight.FlightServerBase):
    """A Flight server that knows nothing of Sluice: two endpoints, every row, every column."""

    TABLE = pa.table(
        {
            "k": pa.array(range(100), pa.int32()),
            "name": [f"n{i % 9}" for i in range(100)],
            "x": [None if i % 10 == 0 else i * 0.5 for i in range(100)],
        }
    )

    def list_flights(self, context, criteria):
        yield flight.FlightInfo(self.TABLE.schema, flight.FlightDescriptor.for_path("numbers"), [], 100, -1)

    def get_flight_info(self, context, descriptor):
        if descriptor.path != [b"numbers"]:
            raise flight.FlightServerError(f"no flight {descriptor.path}")
        endpoints = [flight.FlightEndpoint(str(half).encode(), []) for half in (0, 1)]
        return flight.FlightInfo(self.TABLE.schema, descriptor, endpoints, 100, -1)

    def do_get(self, context, ticket):
        half = int(ticket.ticket)
        return flight.RecordBatchStream(self.TABLE.slice(half * 50, 50))


def test_a_plain_flight_server_gets_no_filter_and_spark_filters_everything(spark) -> None:
    server = PlainServer("grpc://127.0.0.1:0")
    threading.Thread(target=server.serve, daemon=True).start()
    try:
        federation = Federation(spark=spark)
        federation.attach("plain", f"grpc://127.0.0.1:{server.port}")
        query = "SELECT k, name FROM plain.numbers WHERE x > 20 AND name IN ('n1', 'n2') LIMIT 1000"
        [scan] = federation.plan(query).scans
        assert {v.level.value for v in scan.verdicts} == {"UNSUPPORTED"} and "not a Sluice server" in scan.verdicts[
            0
        ].reason
        rows = sorted(tuple(r) for r in federation.sql(query).collect())
        assert rows == [(k, f"n{k % 9}") for k in range(100) if k % 10 and k * 0.5 > 20 and k % 9 in (1, 2)]
        assert federation.sql("SELECT count(*) AS n FROM plain.numbers LIMIT 5").collect()[0].n == 100
    finally:
        server.shutdown()


def test_a_server_killed_mid_stream_fails_the_query(spark, tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    make_events_db(path, 10, 400_000)
    server = ServerProcess([f"lite=sqlite:///{path}"], TOKEN)
    try:
        federation = Federation(spark=spark)
        federation.attach("dying", server.location, password=TOKEN)
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["rows"] = federation.sql(
                    "SELECT count(*) AS n, max(length(body)) AS w FROM dying.lite.wide"
                ).collect()
            except Exception as error:  # noqa: BLE001 - the test inspects it
                outcome["error"] = error

        query = threading.Thread(target=run)
        query.start()
        server.wait_for_log("DoGet lite.wide", timeout_s=60)
        server.kill()
        query.join(120)
    finally:
        server.kill()
    assert "rows" not in outcome, f"a dead server gave a result: {outcome.get('rows')}"
    message = str(outcome["error"])
    assert "source 'dying'" in message and "the stream of dying.lite.wide (partition 0)" in message, message[:2000]
    assert TOKEN not in message
