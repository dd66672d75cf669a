"""Aggregates through Flight: a Sluice Flight server answers the GROUP BY and aggregates a client
sends with its source's own rules, and the answer equals Spark aggregating the rows itself.

One in-process server on loopback publishes the PostgreSQL, MariaDB and DuckDB edge tables and
a STRICT SQLite copy of them; the client attaches it as ``fa``. The differential is pushdown on
(the server's groups) against pushdown off (Spark reads the rows through Flight and aggregates).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import replace
from typing import Any

import pyarrow.flight as flight
import pytest

from sluice import Federation
from sluice.errors import SourceError
from sluice.flight import aggregate_json
from sluice.pushdown.levels import Level
from sluice.serve.allowlist import AllowList
from sluice.serve.server import serve_in_background
from sluice.sources.flight import AVERAGED_SUM
from tests.integration.test_aggregates import EXPRESSION_QUERIES, check_classes, make_strict_edge, query_outcome
from tests.integration.test_flight_spark import PlainServer
from tests.sources import BY_NAME

pytestmark = pytest.mark.integration

TOKEN = "flight-aggregates-token-5c1d"
#: source -> (its namespace as the allow-list names it, the edge table through Flight)
_SERVED = {
    "pg": ("pg.sluice_test", "fa.`pg.sluice_test`.edge"),
    "my": ("my.sluice_test", "fa.`my.sluice_test`.edge"),
    "duck": ("duck.main", "fa.duck.edge"),
    "strict": ("strict.main", "fa.strict.edge"),
}
#: every 5th class of tests/integration/test_aggregates.py (each scan plans through the server, a
#: few round trips apiece); SLUICE_FLIGHT_DIFFERENTIAL=full runs all of them
STRIDE = 1 if os.environ.get("SLUICE_FLIGHT_DIFFERENTIAL") == "full" else 5
SERVED = {name: table for name, (_, table) in _SERVED.items() if name == "strict" or name in BY_NAME}


@pytest.fixture(scope="module")
def flight_aggregates(spark, edge_tables, tmp_path_factory):
    path = tmp_path_factory.mktemp("flight_aggregates") / "strict.db"
    make_strict_edge(path)
    urls = {name: edge_tables["urls"][name] for name in SERVED if name != "strict"}
    urls["strict"] = f"sqlite:///{path}"
    publish = AllowList.parse([_SERVED[name][0] for name in SERVED], [], "test")
    location, stop = serve_in_background(urls, token=TOKEN, publish=publish)
    federation = Federation(spark=spark)
    federation.attach("fa", location, password=TOKEN)
    yield federation
    federation.detach("fa")
    stop()


def _same(fed, query: str) -> list[tuple]:
    pushed, reference = fed.sql(query), fed.sql(query, pushdown=False)
    assert pushed.schema == reference.schema, (query, pushed.schema, reference.schema)
    rows = sorted(map(tuple, pushed.collect()), key=repr)
    assert list(map(repr, rows)) == sorted(repr(tuple(r)) for r in reference.collect()), query  # NaN == NaN
    return rows


@pytest.mark.parametrize("source", sorted(SERVED))
def test_flight_aggregates_equal_spark_aggregating_itself(flight_aggregates, source: str) -> None:
    """Every grouping key of the edge table (and none) x every column under COUNT(*), COUNT,
    COUNT(DISTINCT), MIN, MAX, SUM, AVG: the server's groups equal Spark's, and most are pushed."""
    # AVG stays with Spark through Flight (AVERAGED_SUM), so classes averaging a column are not pushed
    check_classes(flight_aggregates, source, SERVED[source], 0.2, STRIDE)


@pytest.mark.parametrize("source", sorted(SERVED))
def test_every_function_is_pushed_with_the_server_s_verdicts(flight_aggregates, source: str) -> None:
    query = (
        "SELECT i, count(*) AS n, count(d) AS nd, count(DISTINCT b) AS kb, sum(i) AS si, sum(id) AS sid, "
        f"min(dt) AS lo, max(t) AS hi FROM {SERVED[source]} WHERE id >= 0 GROUP BY i"
    )
    [scan] = flight_aggregates.plan(query).scans
    assert scan.spec.aggregate is not None, scan.aggregates
    assert {v.level for v in scan.aggregates} == {Level.EXACT}
    assert all(v.reason.startswith("Flight server: ") for v in scan.aggregates), scan.aggregates
    assert '"aggregate":' in scan.remote_query and '"function":"sum"' in scan.remote_query
    assert '"op":">="' in scan.remote_query  # the EXACT filter travels with it
    assert len(_same(flight_aggregates, query)) == len(
        {r.i for r in flight_aggregates.sql(f"SELECT i FROM {SERVED[source]}", pushdown=False).collect()}
    )
    assert "aggregates: pushed" in flight_aggregates.explain(query)


@pytest.mark.parametrize("source", sorted(SERVED))
def test_an_integer_avg_stays_with_spark_which_adds_doubles(flight_aggregates, source: str) -> None:
    """Spark's AVG of integers adds doubles; the SUM it makes of an AVG, sent to the server as a plain
    SUM, would be summed exactly (b holds the int64 extremes: exact max + min is -1, Spark's is 0.0)."""
    table = SERVED[source]
    for query in (
        f"SELECT avg(b) AS a, avg(DISTINCT b) AS ad, count(*) AS n FROM {table}",
        f"SELECT i, avg(b) AS a FROM {table} GROUP BY i",
        f"SELECT i FROM {table} GROUP BY i HAVING avg(b) > 0",
    ):
        _same(flight_aggregates, query)
        [scan] = flight_aggregates.plan(query).scans
        assert scan.spec.aggregate is None, scan.aggregates
        assert any(v.reason == AVERAGED_SUM for v in scan.aggregates), scan.aggregates


@pytest.mark.parametrize("source", sorted(SERVED))
def test_groups_over_null_case_and_space_variants(flight_aggregates, source: str) -> None:
    """'a', 'A', 'a ', '', ' ', NULL are six groups in Spark; MariaDB's server groups them under
    its binary NO PAD collation, PostgreSQL's under its deterministic one."""
    query = (
        f"SELECT t, count(*) AS n, min(t) AS lo, max(t) AS hi, count(DISTINCT t) AS k FROM {SERVED[source]} GROUP BY t"
    )
    [scan] = flight_aggregates.plan(query).scans
    assert scan.spec.aggregate is not None, scan.aggregates
    rows = _same(flight_aggregates, query)
    texts = {r[0] for r in rows}
    assert {"a", "A", "a ", "", " ", None} <= texts, sorted(texts, key=repr)
    if source == "my":
        assert "utf8mb4_nopad_bin" in str([v.remote_sql for v in scan.aggregates])


@pytest.mark.parametrize("source", sorted(SERVED))
def test_empty_input_and_result_types(flight_aggregates, source: str) -> None:
    table = SERVED[source]
    for query in (
        f"SELECT count(*), count(i), sum(i), min(i), max(t) FROM {table} WHERE id < 0",  # avg: Spark (AVERAGED_SUM)
        f"SELECT i, count(*) FROM {table} WHERE id < 0 GROUP BY i",
        f"SELECT dt, count(*), sum(id) FROM {table} GROUP BY dt",
    ):
        assert flight_aggregates.plan(query).scans[0].spec.aggregate is not None, query
        _same(flight_aggregates, query)
    empty = flight_aggregates.sql(f"SELECT count(*), sum(i) FROM {table} WHERE id < 0").collect()
    assert [tuple(r) for r in empty] == [(0, None)]
    assert flight_aggregates.sql(f"SELECT i, count(*) FROM {table} WHERE id < 0 GROUP BY i").collect() == []
    frame = flight_aggregates.sql(f"SELECT sum(i) AS si, sum(d) AS sd, count(*) AS c, min(d) AS md FROM {table}")
    assert [f.dataType.simpleString() for f in frame.schema][0::2] == ["bigint", "bigint"]
    assert (
        frame.schema
        == flight_aggregates.sql(
            f"SELECT sum(i) AS si, sum(d) AS sd, count(*) AS c, min(d) AS md FROM {table}", pushdown=False
        ).schema
    )


def test_what_the_source_refuses_the_server_refuses_with_its_reason(flight_aggregates) -> None:
    table = SERVED["strict"]
    for query, words in (
        (f"SELECT f, count(*) FROM {table} GROUP BY f", "-0.0"),
        (f"SELECT sum(f) FROM {table}", "order of additions"),
    ):
        [scan] = flight_aggregates.plan(query).scans
        assert scan.spec.aggregate is None
        refused = [v for v in scan.aggregates if v.level is Level.UNSUPPORTED]
        assert refused and all(v.reason.startswith("Flight server: ") for v in refused), scan.aggregates
        assert any(words in v.reason for v in refused), scan.aggregates
        _same(flight_aggregates, query)


def test_an_inexact_filter_keeps_the_aggregate_with_spark(flight_aggregates) -> None:
    """= on SQLite's NOCASE column is INEXACT at the server: Spark filters, then aggregates."""
    query = f"SELECT count(*) AS n FROM {SERVED['strict']} WHERE tc = 'a'"
    [scan] = flight_aggregates.plan(query).scans
    assert [v.level for v in scan.verdicts if "=" in v.sql] == [Level.INEXACT], scan.verdicts
    assert scan.spec.aggregate is None
    _same(flight_aggregates, query)


def test_sum_is_pushed_only_under_ansi(flight_aggregates, spark) -> None:
    table = SERVED["strict"]
    query = f"SELECT sum(i) FROM {table}"
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        [scan] = flight_aggregates.plan(query).scans
        assert scan.spec.aggregate is None and "ansi" in str(scan.aggregates).lower()
        _same(flight_aggregates, query)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", "true")
    assert flight_aggregates.plan(query).scans[0].spec.aggregate is not None


def test_the_server_answers_an_aggregate_request_on_the_wire(flight_aggregates) -> None:
    """A raw request: accepted, one endpoint streams the groups in the protocol's types; a key
    the source refuses leaves the endpoints streaming the filtered rows, saying why."""
    source = flight_aggregates._sources["fa"]
    client = flight.FlightClient(source.location)
    options = flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {TOKEN}".encode())])
    request: dict[str, Any] = {
        "table": ["strict", "edge"],
        "filter": {
            "format": "sluice",
            "conjuncts": [{"op": ">", "args": [{"column": "id"}, {"literal": 10, "type": "bigint"}]}],
        },
        "aggregate": {
            "group_by": [{"column": "flag"}],
            "aggregates": [{"function": "count_star"}, {"function": "sum", "args": [{"column": "i"}]}],
        },
    }
    info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request).encode()), options)
    answer = json.loads(info.app_metadata)["aggregate"]
    assert answer["accepted"] is True and len(info.endpoints) == 1, answer
    assert answer["outputs"] == [
        {"name": "sluice_0", "type": "bigint"},
        {"name": "sluice_1", "type": "bigint"},
        {"name": "sluice_2", "type": "decimal(38,0)"},
    ]
    table = client.do_get(info.endpoints[0].ticket, options).read_all()
    assert table.column_names == ["sluice_0", "sluice_1", "sluice_2"]
    assert (
        sum(table.column("sluice_1").to_pylist())
        == flight_aggregates.sql("SELECT count(*) AS n FROM fa.strict.edge WHERE id > 10", pushdown=False)
        .collect()[0]
        .n
    )
    request["aggregate"]["group_by"] = [{"column": "f"}]
    info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request).encode()), options)
    answer = json.loads(info.app_metadata)["aggregate"]
    assert answer["accepted"] is False and "outputs" not in answer
    assert answer["items"][0]["level"] == "UNSUPPORTED" and "-0.0" in answer["items"][0]["reason"]
    assert "f" in info.schema.names and "sluice_0" not in info.schema.names  # the filtered rows
    request["limit"] = 5
    with pytest.raises(flight.FlightServerError, match="takes no limit"):
        client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request).encode()), options)
    capabilities = json.loads(
        next(iter(client.do_action(flight.Action("sluice.capabilities", b""), options))).body.to_pybytes()
    )
    assert capabilities["aggregate"]["functions"] == ["count", "count_star", "max", "min", "sum"]
    client.close()


def test_a_server_that_lists_no_aggregate_gets_none(flight_aggregates, monkeypatch) -> None:
    source = flight_aggregates._sources["fa"]
    monkeypatch.setattr(source, "_aggregate_functions", frozenset())
    query = f"SELECT i, count(*) FROM {SERVED['strict']} GROUP BY i"
    [scan] = flight_aggregates.plan(query).scans
    assert scan.spec.aggregate is None and '"aggregate"' not in scan.remote_query
    assert all("takes no aggregates" in v.reason for v in scan.aggregates), scan.aggregates
    _same(flight_aggregates, query)


def test_a_server_that_no_longer_accepts_the_planned_aggregate_fails_the_read(flight_aggregates) -> None:
    source = flight_aggregates._sources["fa"]
    query = f"SELECT flag, count(*) FROM {SERVED['strict']} GROUP BY flag"
    spec = flight_aggregates.plan(query).scans[0].spec
    assert spec.aggregate is not None
    key, *functions = spec.aggregate.outputs
    refused = replace(key, argument=aggregate_json.argument({"column": "f"}))  # a key the server refuses
    forged = replace(spec.aggregate, outputs=(refused, *functions))
    with pytest.raises(SourceError, match="now refuses the aggregate"):
        source.tasks(replace(spec, aggregate=forged))


def test_a_plain_flight_server_gets_no_aggregate(spark) -> None:
    server = PlainServer("grpc://127.0.0.1:0")
    threading.Thread(target=server.serve, daemon=True).start()
    try:
        federation = Federation(spark=spark)
        federation.attach("plainagg", f"grpc://127.0.0.1:{server.port}")
        query = "SELECT name, count(*) AS n, sum(k) AS s, max(x) AS m FROM plainagg.numbers GROUP BY name"
        [scan] = federation.plan(query).scans
        assert scan.spec.aggregate is None
        assert scan.aggregates and all("not a Sluice server" in v.reason for v in scan.aggregates), scan.aggregates
        rows = sorted(map(tuple, federation.sql(query).collect()))
        table = PlainServer.TABLE.to_pylist()
        expected = []
        for name in sorted({r["name"] for r in table}):
            group = [r for r in table if r["name"] == name]
            expected.append(
                (name, len(group), sum(r["k"] for r in group), max(r["x"] for r in group if r["x"] is not None))
            )
        assert rows == expected
        federation.detach("plainagg")
    finally:
        server.shutdown()


@pytest.mark.parametrize("source", [s for s in ("pg", "my", "strict") if s in SERVED])
def test_expression_keys_and_arguments_through_flight(flight_aggregates, source: str) -> None:
    """Expressions as keys and arguments travel as the filter format's expressions; the server
    pushes them where its source's classifier does, and the answer is Spark's (rows, or an
    overflow error where Spark raises)."""
    failures, pushed = [], []
    for template in EXPRESSION_QUERIES:
        query = template.format(t=SERVED[source])
        [scan] = flight_aggregates.plan(query).scans
        if scan.spec.aggregate is not None:
            pushed.append(query)
            assert all(v.reason.startswith("Flight server: ") for v in scan.aggregates), scan.aggregates
        expected, actual = query_outcome(flight_aggregates, query, False), query_outcome(flight_aggregates, query, True)
        if expected != actual:
            failures.append(f"{query}\n  Spark: {str(expected)[:300]}\n  pushed: {str(actual)[:300]}")
    assert not failures, f"{len(failures)} differ through Flight on {source}:\n" + "\n".join(failures)
    assert len(pushed) >= {"strict": 2}.get(source, 4), (source, pushed)
    [scan] = flight_aggregates.plan(f"SELECT i % 10, count(*) FROM {SERVED[source]} GROUP BY i % 10").scans
    assert ('"op":"%"' in scan.remote_query) == (scan.spec.aggregate is not None), scan.remote_query


def test_only_the_groups_cross_the_wire(flight_aggregates) -> None:
    table = SERVED["pg" if "pg" in SERVED else "strict"]
    query = f"SELECT i % 10 AS k, count(*) AS n, sum(id) AS s FROM {table} GROUP BY i % 10"
    pushed = sum(m["rows"] for m in flight_aggregates.transferred(query).values())
    whole = sum(m["rows"] for m in flight_aggregates.transferred(query, pushdown=False).values())
    groups = len(flight_aggregates.sql(query).collect())
    assert pushed == groups < whole, (pushed, groups, whole)
