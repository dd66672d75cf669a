"""Sluice behind Spark's Thrift JDBC/ODBC server (issue 28): ``sluice thrift start`` and beeline.

The server is the pyspark wheel's own ``HiveThriftServer2`` started by the real command
(``python -m sluice.cli thrift start --source tpg=URL --port P``) in a state directory of the
test's own, on loopback, with Sluice's jar and catalog settings (``session_conf``). The wheel's
own ``beeline`` queries its PostgreSQL edge table: each row comes back as Spark's JSON of it,
base64-encoded so that no value (a tab, a newline, a quote) can break beeline's output, and the
rows equal those a classic PySpark session with Sluice computes for the same query, pushdown on
and off. Two beeline clients querying at once both get them. A server and each beeline are a
JVM start (about 30 s and 10 s on a loaded 2-core machine): those tests are ``slow``; the main
tier keeps a refusal that needs no server (a port in use).
"""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest

from sluice import Federation, server
from tests import edge_data
from tests.sources import PG_URL

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BEELINE = Path(pyspark.__file__).resolve().parent / "bin" / "beeline"
#: one row a line: Spark's JSON of the row, base64 (beeline prints it as one plain token)
QUERIES = [
    "SELECT base64(CAST(to_json(struct(*)) AS BINARY)) FROM tpg.sluice_test.edge WHERE i > 0 OR t IS NULL ORDER BY id",
    "SELECT base64(CAST(to_json(struct(flag, n, total)) AS BINARY)) FROM (SELECT flag, count(*) AS n, "
    "sum(d) AS total FROM tpg.sluice_test.edge GROUP BY flag) ORDER BY flag",
]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice.cli", "thrift", *args], capture_output=True, text=True, env=env, timeout=600
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def beeline(url: str, query: str) -> subprocess.Popen[str]:
    """The wheel's beeline running ``query`` once (tab-separated, no header, no banner)."""
    return subprocess.Popen(
        [str(BEELINE), "-u", url, "--silent=true", "--showHeader=false", "--outputformat=tsv2", "-e", query],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def rows_of(client: subprocess.Popen[str]) -> list[str]:
    """beeline's rows, decoded (the prompt it echoes before the first row is dropped)."""
    out, err = client.communicate(timeout=600)
    assert client.returncode == 0, (out[-2000:], err[-3000:])
    lines = [line.rsplit("> ", 1)[-1].strip() for line in out.splitlines()]
    return [base64.b64decode(line).decode() for line in lines if line]


@pytest.fixture(scope="module")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    folder = str(tmp_path_factory.mktemp("thrift-server"))
    before = os.environ.get(server.DIR_VARIABLE)
    os.environ[server.DIR_VARIABLE] = folder
    yield {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if before is None:
        del os.environ[server.DIR_VARIABLE]
    else:
        os.environ[server.DIR_VARIABLE] = before


@pytest.fixture(scope="module")
def running(server_env: dict[str, str]) -> Iterator[server.ServerState]:
    """``sluice thrift start --source tpg=PG_URL`` (the real command), stopped at the end."""
    edge_data.create_postgres(PG_URL)
    started = time.monotonic()
    done = cli("start", "--source", f"tpg={PG_URL}", "--port", str(free_port()), env=server_env)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"thrift start: {time.monotonic() - started:.1f} s: {done.stdout.strip()}")
    state = server.read_state(server.THRIFT)
    assert state is not None and state.url in done.stdout and state.url.startswith("jdbc:hive2://127.0.0.1:")
    yield state
    if server.read_state(server.THRIFT) is not None:
        server.stop(kind=server.THRIFT)


@pytest.fixture(scope="module")
def expected(spark: Any, running: server.ServerState) -> Iterator[list[list[str]]]:
    """The rows a classic session computes, at the server's time zone (UTC: local_conf)."""
    fed = Federation(spark=spark)
    fed.attach("tpg", PG_URL)
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        answers = []
        for query in QUERIES:
            rows = [base64.b64decode(row[0]).decode() for row in fed.sql(query).collect()]
            assert rows == [base64.b64decode(row[0]).decode() for row in fed.sql(query, pushdown=False).collect()]
            answers.append(rows)
        yield answers
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
        fed.detach("tpg")


@pytest.mark.slow
def test_beeline_gets_the_rows_of_a_classic_session(running: server.ServerState, expected: list[list[str]]) -> None:
    for query, rows in zip(QUERIES, expected, strict=True):
        started = time.monotonic()
        got = rows_of(beeline(running.url, query))
        print(f"beeline: {len(got)} rows in {time.monotonic() - started:.1f} s")
        assert got == rows, query
        assert len(got) > 1


@pytest.mark.slow
def test_two_beeline_clients_at_once(running: server.ServerState, expected: list[list[str]]) -> None:
    clients = [beeline(running.url, QUERIES[0]), beeline(running.url, QUERIES[1])]
    assert [rows_of(client) for client in clients] == expected


@pytest.mark.slow
def test_status_and_stop(running: server.ServerState, server_env: dict[str, str]) -> None:
    status = cli("status", env=server_env)
    assert status.returncode == 0 and f"running: {running.url} (pid {running.pid}" in status.stdout, status
    again = cli("start", "--port", str(free_port()), env=server_env)
    assert again.returncode == 2 and f"a Sluice Thrift server already runs (pid {running.pid}" in again.stderr
    stopped = cli("stop", env=server_env)
    assert stopped.returncode == 0 and f"stopped: {running.url}" in stopped.stdout, stopped
    assert cli("status", env=server_env).returncode == 1


# ---------------------------------------------------------------- main tier: no server
def test_start_refuses_a_port_in_use(server_env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli("start", "--port", str(port), env=server_env)
    assert done.returncode == 2, done
    assert f"error: port {port} on 127.0.0.1 is in use: choose another with --port" in done.stderr, done.stderr
