"""``sluice serve`` publishes only what the catalog names; the rest answers "not found".

Real PostgreSQL schemas and MariaDB databases, some on the allow-list and some not, behind
a real Flight server on loopback: in process (so a ticket can be signed with the server's
own key, as a replica sharing the key or a ticket from before the list changed would be)
and as the ``sluice serve`` command with a catalog's ``[serve]`` table and the
``--namespace``/``--table`` options. Before the allow-list, every schema and database the
login could see was listed and readable.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.flight as flight
import pytest

from sluice.catalog import SourceConfig, open_sources
from sluice.serve.allowlist import AllowList
from sluice.serve.server import SluiceFlightServer
from sluice.serve.tickets import TicketSigner
from tests.sources import MYSQL_URL, PG_URL, mariadb

pytestmark = pytest.mark.integration

KEY = b"k" * 32
PUBLISHED = {("pg", "sluice_pub_open", "visible"), ("my", "sluice_pub_shop", "orders")}
HIDDEN = [
    ("pg", "sluice_pub_secret", "hidden"),
    ("my", "sluice_pub_hr", "staff"),
    ("my", "sluice_pub_shop", "salaries"),
    ("pg", "sluice_pub_open", "nope"),
]  # the last does not exist: it must look the same as the others


@pytest.fixture(scope="module")
def schemas() -> None:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        for schema, table in (("sluice_pub_open", "visible"), ("sluice_pub_secret", "hidden")):
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            connection.execute(f"CREATE SCHEMA {schema}")
            connection.execute(
                f"CREATE TABLE {schema}.{table} AS SELECT g AS id, 'pg-{table}' AS what FROM generate_series(1, 3) g"
            )
    connection = mariadb()
    with connection.cursor() as cursor:
        for database, table in (
            ("sluice_pub_shop", "orders"),
            ("sluice_pub_shop", "salaries"),
            ("sluice_pub_hr", "staff"),
        ):
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
            cursor.execute(f"DROP TABLE IF EXISTS {database}.{table}")
            cursor.execute(f"CREATE TABLE {database}.{table} (id INT PRIMARY KEY, what VARCHAR(20))")
            cursor.execute(f"INSERT INTO {database}.{table} VALUES (1, 'my-{table}'), (2, 'my-{table}')")
    connection.close()


def published_paths(client: flight.FlightClient, criteria: bytes = b"") -> set[tuple[str, ...]]:
    return {tuple(p.decode() for p in info.descriptor.path) for info in client.list_flights(criteria)}


def path_of(source: str, schema: str, table: str) -> list[str]:
    return [source, schema, table]


@pytest.fixture(scope="module")
def client(schemas: None) -> Iterator[flight.FlightClient]:
    sources = open_sources([SourceConfig("pg", PG_URL), SourceConfig("my", MYSQL_URL)])
    publish = AllowList.parse(["pg.sluice_pub_open"], ["my.sluice_pub_shop.orders"], "test")
    server = SluiceFlightServer(sources, ticket_key=KEY, publish=publish)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    with flight.connect(server.location) as connected:
        yield connected
    server.shutdown()
    thread.join(10)


def test_only_the_allow_list_is_listed(client: flight.FlightClient) -> None:
    ours = {p for p in published_paths(client) if p[1].startswith("sluice_pub")}
    assert ours == PUBLISHED
    assert published_paths(client) == PUBLISHED  # nothing else of either source: not public, not test
    assert published_paths(client, b"my") == {("my", "sluice_pub_shop", "orders")}
    listed = [json.loads(r.body.to_pybytes()) for r in client.do_action(flight.Action("sluice.list_tables", b""))]
    assert {tuple(t["path"]) for t in listed} == PUBLISHED


def test_published_tables_read(client: flight.FlightClient) -> None:
    for path in PUBLISHED:
        info = client.get_flight_info(flight.FlightDescriptor.for_path(*path))
        rows = [r for e in info.endpoints for r in client.do_get(e.ticket).read_all().to_pylist()]
        assert {r["what"] for r in rows} == {f"{path[0]}-{path[2]}"} and len(rows) >= 2


@pytest.mark.parametrize("path", HIDDEN, ids=".".join)
def test_everything_else_is_not_found(client: flight.FlightClient, path: tuple[str, str, str]) -> None:
    expected = f"not found: no published table {'.'.join(path)}"
    calls = [
        lambda: client.get_flight_info(flight.FlightDescriptor.for_path(*path)),
        lambda: client.get_schema(flight.FlightDescriptor.for_path(*path)),
        lambda: client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"table": list(path)}).encode())),
    ]
    for call in calls:
        with pytest.raises((flight.FlightServerError, pa.ArrowException)) as raised:  # pyarrow wraps GetSchema's errors
            call()
        message = str(raised.value).split(". Detail:")[0].removeprefix("Unknown error: ")
        assert message == expected  # the same words whether the table exists or not; no list of tables


@pytest.mark.parametrize("path", HIDDEN[:3], ids=".".join)
def test_a_ticket_signed_with_the_servers_key_reads_nothing_unpublished(
    client: flight.FlightClient, path: tuple[str, str, str]
) -> None:
    table = f"{path[1]}.{path[2]}" if path[0] == "pg" else f"`{path[1]}`.`{path[2]}`"
    forged = TicketSigner(KEY).issue(
        {"path": list(path), "columns": ["id", "what"], "partition": 0, "request": f"SELECT id, what FROM {table}"}
    )
    with pytest.raises(flight.FlightServerError, match=f"not found: no published table {'.'.join(path)}"):
        client.do_get(flight.Ticket(forged)).read_all()


# ---------------------------------------------------------------- the sluice serve command
def serve_command(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``sluice serve`` on a free port; returns the process and its location."""
    catalog = tmp_path / "sluice.toml"
    catalog.write_text(
        f'[sources.pg]\nurl = "{PG_URL}"\n[sources.my]\nurl = "{MYSQL_URL}"\n'
        '[serve]\nnamespaces = ["pg.sluice_pub_open"]\ntables = ["my.sluice_pub_shop.orders"]\n'
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "sluice.cli", "serve", "--catalog", str(catalog), "--port", "0", "--no-auth", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    selector = selectors.DefaultSelector()
    assert process.stdout is not None and process.stderr is not None
    selector.register(process.stdout, selectors.EVENT_READ)
    if not selector.select(timeout=60):
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("sluice serve did not start within 60 s")
    line = process.stdout.readline()
    assert " at grpc://127.0.0.1:" in line, (line, process.stderr.read() if process.poll() is not None else "")
    return process, line


def stop(process: subprocess.Popen[str]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=10)


@pytest.mark.parametrize(
    "options, expected, said",
    [
        ((), PUBLISHED, "serving my.sluice_pub_shop.orders, pg.sluice_pub_open at"),  # the catalog's [serve] table
        (
            ("--table", "pg.sluice_pub_secret.hidden"),
            {("pg", "sluice_pub_secret", "hidden")},  # the options replace it
            "serving pg.sluice_pub_secret.hidden at",
        ),
    ],
)
def test_the_serve_command_publishes_what_the_catalog_or_the_options_name(
    schemas: None, tmp_path: Path, options: tuple[str, ...], expected: set[tuple[str, ...]], said: str
) -> None:
    process, line = serve_command(tmp_path, *options)
    try:
        location = line.split(" at ", 1)[1].split(" ", 1)[0]
        with flight.connect(location) as connected:
            assert published_paths(connected) == expected
            hidden = next(p for p in HIDDEN if p not in expected)
            with pytest.raises(flight.FlightServerError, match="not found: no published table"):
                connected.get_flight_info(flight.FlightDescriptor.for_path(*hidden))
        assert said in line
    finally:
        stop(process)


def test_an_allow_list_naming_an_unknown_source_fails_before_listening(schemas: None, tmp_path: Path) -> None:
    catalog = tmp_path / "sluice.toml"
    catalog.write_text(f'[sources.pg]\nurl = "{PG_URL}"\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sluice.cli",
            "serve",
            "--catalog",
            str(catalog),
            "--port",
            "0",
            "--no-auth",
            "--namespace",
            "mars.public",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: --namespace/--table name unknown source(s) mars\n"
