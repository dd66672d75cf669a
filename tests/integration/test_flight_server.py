"""The Flight server on loopback, spoken to with a plain pyarrow.flight client (no Spark).

Real sources: a SQLite file built here and a table in the real PostgreSQL. Every filter
encoding is sent over the wire; rows are checked against the sources themselves.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import threading
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as flight
import pyarrow.substrait as ps
import pytest

from sluice.catalog import SourceConfig, open_sources
from sluice.flight.auth import Credentials
from sluice.serve.allowlist import AllowList
from sluice.serve.server import SluiceFlightServer, Tls
from sluice.sources import open_source
from tests.sources import PG_URL
from tests.unit.test_flight_airport import IN_OR_COMPARISON, LIKE_PREFIX_AND_LENGTH, NICK_COMPARISON, STRING_COMPARISON

pytestmark = pytest.mark.integration

TOKEN = "flight-test-token-7f3a"
NAMES = ["Ada", "Grace", "Adalbert the Magnificent", "ada", "Linus", None, "Ælfrida", "Adam"]
PEOPLE_ROWS = 1000
EVENT_ROWS = 200_000


def make_people_db(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, nick TEXT COLLATE NOCASE, born DATE, score REAL)"
        )
        connection.executemany(
            "INSERT INTO people VALUES (?, ?, ?, ?, ?)",
            [
                (i, NAMES[i % len(NAMES)], NAMES[(i * 3) % len(NAMES)], f"19{50 + i % 50}-01-0{1 + i % 9}", i * 0.25)
                for i in range(PEOPLE_ROWS)
            ],
        )
        connection.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, v INTEGER)")
        connection.execute(f"""INSERT INTO events WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {EVENT_ROWS - 1})
                               SELECT i, 'k' || (i % 10), i % 1000 FROM n""")
    connection.close()


@pytest.fixture(scope="module")
def lite_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("flight") / "people.db"
    make_people_db(path)
    return path


@pytest.fixture(scope="module")
def pg_table() -> str:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_flight CASCADE")
        connection.execute("CREATE SCHEMA sluice_flight")
        connection.execute(
            "CREATE TABLE sluice_flight.readings AS SELECT g AS id, 'r' || (g % 7) AS tag, g * 1.5 AS v "
            "FROM generate_series(1, 5000) g"
        )
    return "sluice_flight.readings"


@pytest.fixture(scope="module")
def server(lite_path: Path, pg_table: str):
    sources = open_sources([SourceConfig("lite", f"sqlite:///{lite_path}"), SourceConfig("pg", PG_URL)])
    publish = AllowList.parse(["lite.main", "pg.sluice_flight"], [], "test")
    running = SluiceFlightServer(sources, credentials=Credentials(token=TOKEN), publish=publish)
    thread = threading.Thread(target=running.serve, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    thread.join(10)


def auth(token: str = TOKEN) -> flight.FlightCallOptions:
    return flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {token}".encode())], timeout=60)


@pytest.fixture()
def client(server):
    with flight.connect(server.location) as connected:
        yield connected


def request(table: list[str], **fields: object) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(json.dumps({"table": table, **fields}).encode())


def read_all(client: flight.FlightClient, info: flight.FlightInfo) -> tuple[pa.Table, list[dict]]:
    """Every endpoint's rows, and each stream's end marker."""
    batches, markers = [], []
    for endpoint in info.endpoints:
        reader = client.do_get(endpoint.ticket, auth())
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                break
            if chunk.app_metadata is not None:
                markers.append(json.loads(chunk.app_metadata.to_pybytes()))
            if chunk.data is not None and chunk.data.num_rows:
                batches.append(chunk.data)
    return pa.Table.from_batches(batches, schema=info.schema), markers


def levels(info: flight.FlightInfo) -> list[str]:
    return [c["level"] for c in json.loads(info.app_metadata)["conjuncts"]]


def sqlite_ids(path: Path, where: str) -> list[int]:
    with sqlite3.connect(path) as connection:
        return sorted(r[0] for r in connection.execute(f"SELECT id FROM people WHERE {where}"))


# ---------------------------------------------------------------- catalog
def test_catalog_rpcs(client) -> None:
    paths = {
        tuple(p.decode() if isinstance(p, bytes) else p for p in info.descriptor.path)
        for info in client.list_flights(b"", auth())
    }
    assert {("lite", "people"), ("lite", "events"), ("pg", "sluice_flight", "readings")} <= paths
    only_lite = [info.descriptor.path for info in client.list_flights(b"lite", auth())]
    assert only_lite and all(p[0] in (b"lite", "lite") for p in only_lite)
    schema = client.get_schema(flight.FlightDescriptor.for_path("lite", "people"), auth()).schema
    assert schema.names == ["id", "name", "nick", "born", "score"] and schema.field("born").type == pa.date32()
    tables = [
        json.loads(r.body.to_pybytes()) for r in client.do_action(flight.Action("sluice.list_tables", b"pg"), auth())
    ]
    readings = next(t for t in tables if t["path"] == ["pg", "sluice_flight", "readings"])
    assert [c["name"] for c in readings["columns"]] == ["id", "tag", "v"]
    [capabilities] = [
        json.loads(r.body.to_pybytes()) for r in client.do_action(flight.Action("sluice.capabilities", b""), auth())
    ]
    assert capabilities["filter_formats"] == ["sluice", "airport", "substrait"] and {"like", "cast"} <= set(
        capabilities["sluice_filter"]["ops"]
    )


# ---------------------------------------------------------------- the three encodings
def test_sluice_json_filter(client, lite_path: Path) -> None:
    conjuncts = [
        {"op": "=", "args": [{"column": "name"}, {"literal": "Ada", "type": "string"}]},
        {"op": ">", "args": [{"column": "id"}, {"literal": 100, "type": "int"}]},
        {"op": "=", "args": [{"column": "nick"}, {"literal": "ada", "type": "string"}]},
        {"op": "=", "args": [{"op": "upper", "args": [{"column": "name"}]}, {"literal": "ADA", "type": "string"}]},
    ]
    info = client.get_flight_info(
        request(["lite", "people"], columns=["id", "nick"], filter={"format": "sluice", "conjuncts": conjuncts}), auth()
    )
    assert levels(info) == ["EXACT", "EXACT", "INEXACT", "UNSUPPORTED"]
    rows, markers = read_all(client, info)
    assert rows.schema.names == ["id", "nick"] and markers == [{"end": True, "rows": rows.num_rows}]
    exact_part = sqlite_ids(lite_path, "name = 'Ada' AND id > 100")
    assert (
        sorted(rows.column("id").to_pylist()) == exact_part
    )  # the INEXACT nick = 'ada' kept them all (NOCASE superset)


@pytest.mark.parametrize(
    "fixture,expected_levels,where",
    [
        (STRING_COMPARISON, ["EXACT"], "name = 'Ada'"),
        (IN_OR_COMPARISON, ["EXACT"], "name IN ('Ada', 'Grace') OR id > 5"),
        (LIKE_PREFIX_AND_LENGTH, ["EXACT", "EXACT"], "name GLOB 'Ad*' AND length(name) > 10"),
        (NICK_COMPARISON, ["INEXACT"], None),
    ],
)
def test_airport_filters(client, lite_path: Path, fixture: str, expected_levels: list[str], where: str | None) -> None:
    info = client.get_flight_info(
        request(["lite", "people"], columns=["id"], filter={"format": "airport", **json.loads(fixture)}), auth()
    )
    assert levels(info) == expected_levels
    rows, _ = read_all(client, info)
    if where is not None:
        assert sorted(rows.column("id").to_pylist()) == sqlite_ids(lite_path, where)
    else:  # nick = 'ada' under NOCASE: a superset, which DuckDB (like any client) filters again
        assert set(sqlite_ids(lite_path, "nick = 'ada' COLLATE BINARY")) < set(rows.column("id").to_pylist())


def test_substrait_filter(client, lite_path: Path) -> None:
    schema = client.get_schema(flight.FlightDescriptor.for_path("lite", "people"), auth()).schema
    expressions = [pc.field("name").isin(["Ada", "Linus"]), pc.field("id") < 500, pc.field("score") > 10.0]
    payload = bytes(ps.serialize_expressions(expressions, ["a", "b", "c"], schema))
    info = client.get_flight_info(
        request(
            ["lite", "people"],
            columns=["id"],
            filter={"format": "substrait", "base64": base64.b64encode(payload).decode()},
        ),
        auth(),
    )
    assert levels(info) == ["EXACT", "EXACT", "UNSUPPORTED"]  # floats: NaN semantics are the producer's
    rows, _ = read_all(client, info)
    assert sorted(rows.column("id").to_pylist()) == sqlite_ids(lite_path, "name IN ('Ada', 'Linus') AND id < 500")


def test_postgres_table_through_flight(client) -> None:
    conjuncts = [
        {"op": "<", "args": [{"column": "tag"}, {"literal": "r3", "type": "string"}]},
        {"op": "<=", "args": [{"column": "id"}, {"literal": 100, "type": "int"}]},
    ]
    info = client.get_flight_info(
        request(["pg", "sluice_flight", "readings"], filter={"format": "sluice", "conjuncts": conjuncts}), auth()
    )
    metadata = json.loads(info.app_metadata)
    assert levels(info) == ["EXACT", "EXACT"] and 'COLLATE "C"' in (metadata["conjuncts"][0]["remote_sql"] or "")
    rows, _ = read_all(client, info)
    assert rows.num_rows == len([g for g in range(1, 101) if f"r{g % 7}" < "r3"])


# ---------------------------------------------------------------- endpoints and limits
def test_one_endpoint_per_partition_each_with_its_own_rows(client) -> None:
    info = client.get_flight_info(request(["lite", "events"], columns=["id"], partitions=4), auth())
    assert len(info.endpoints) == 4 and json.loads(info.app_metadata)["partitions"] == 4
    ids = []
    for endpoint in info.endpoints:
        part = client.do_get(endpoint.ticket, auth()).read_all()
        assert 0 < part.num_rows < EVENT_ROWS
        ids += part.column("id").to_pylist()
    assert sorted(ids) == list(range(EVENT_ROWS))


def test_a_limit_is_applied_only_over_exact_conjuncts(client) -> None:
    exact = {"op": "=", "args": [{"column": "name"}, {"literal": "Ada", "type": "string"}]}
    loose = {"op": "=", "args": [{"column": "nick"}, {"literal": "ada", "type": "string"}]}
    info = client.get_flight_info(
        request(["lite", "people"], limit=3, filter={"format": "sluice", "conjuncts": [exact]}), auth()
    )
    assert json.loads(info.app_metadata)["limit"] == {"requested": 3, "applied": True}
    assert read_all(client, info)[0].num_rows == 3
    info = client.get_flight_info(
        request(["lite", "people"], limit=3, filter={"format": "sluice", "conjuncts": [loose]}), auth()
    )
    assert json.loads(info.app_metadata)["limit"]["applied"] is False
    assert read_all(client, info)[0].num_rows > 3


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "descriptor,message",
    [
        (
            flight.FlightDescriptor.for_command(b'{"table": ["lite", "people"'),
            "invalid request: the request is not valid JSON",
        ),
        (request(["lite", "nope"]), "not found: no published table lite.nope"),
        (request(["mars", "people"]), "not found: no published table mars.people"),
        (
            request(["lite", "people"], columns=["id", "age"]),
            "unknown column 'age'.*columns: id, name, nick, born, score",
        ),
        (
            request(
                ["lite", "people"],
                filter={
                    "format": "sluice",
                    "conjuncts": [{"op": "=", "args": [{"column": "id"}, {"literal": "seven", "type": "bigint"}]}],
                },
            ),
            "conjunct 0: literal 'seven' is not a valid bigint",
        ),
        (
            request(["lite", "people"], columns=["x" * 64] * 20_000),
            "is 1,[0-9,]+ bytes; the server accepts at most 1,048,576",
        ),
    ],
)
def test_malformed_requests_are_flight_errors_that_say_what_is_wrong(client, descriptor, message: str) -> None:
    with pytest.raises(flight.FlightServerError, match=message) as raised:
        client.get_flight_info(descriptor, auth())
    assert "Traceback" not in str(raised.value)


def test_a_forged_ticket_is_refused(client) -> None:
    info = client.get_flight_info(request(["lite", "people"], columns=["id"]), auth())
    ticket = info.endpoints[0].ticket.ticket
    forged = ticket.replace(b"FROM", b"FROM (SELECT 1) x, ")
    with pytest.raises(flight.FlightServerError, match="not issued by this server"):
        client.do_get(flight.Ticket(forged), auth()).read_all()


def test_unauthenticated_calls_are_refused(client) -> None:
    info = client.get_flight_info(request(["lite", "people"], columns=["id"]), auth())
    calls = [
        lambda options: list(client.list_flights(b"", options)),
        lambda options: client.get_flight_info(flight.FlightDescriptor.for_path("lite", "people"), options),
        lambda options: client.get_schema(flight.FlightDescriptor.for_path("lite", "people"), options),
        lambda options: client.do_get(info.endpoints[0].ticket, options).read_all(),
        lambda options: list(client.do_action(flight.Action("sluice.capabilities", b""), options)),
    ]
    for call in calls:
        for options in (flight.FlightCallOptions(timeout=30), auth("wrong-token")):
            # (pyarrow reports GetSchema's UNAUTHENTICATED status as a plain OSError)
            with pytest.raises((flight.FlightUnauthenticatedError, OSError), match="unauthenticated") as refused:
                call(options)
            assert TOKEN not in str(refused.value) and "wrong-token" not in str(refused.value)


# ---------------------------------------------------------------- TLS
def test_tls_with_a_certificate_and_key(lite_path: Path, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    server = SluiceFlightServer(
        open_sources([SourceConfig("lite", f"sqlite:///{lite_path}")]),
        host="localhost",
        credentials=Credentials(user="ada", password="tls-pass"),
        tls=Tls(str(cert), str(key)),
    )
    threading.Thread(target=server.serve, daemon=True).start()
    try:
        assert server.location.startswith("grpc+tls://localhost:")
        secure = open_source("fl", f"grpc+tls://ada@localhost:{server.port}?tls_root_certs={cert}", password="tls-pass")
        secure.check()
        assert [c.name for c in secure.describe("lite", "people").columns] == ["id", "name", "nick", "born", "score"]
        with flight.connect(f"grpc+tls://localhost:{server.port}") as untrusting:  # no root certificate: refused
            with pytest.raises(flight.FlightUnavailableError):
                list(untrusting.list_flights(b"", flight.FlightCallOptions(timeout=10)))
    finally:
        server.shutdown()
