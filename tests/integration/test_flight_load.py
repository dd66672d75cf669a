"""Load on loopback: 16 concurrent clients read and filter for a bounded time.

The server runs as its own process (``sluice serve``), so its memory is measured alone.
Every stream's row count is checked against the source and must end with the server's
end marker: nothing may be truncated silently. The server must keep answering, and its
memory must stay bounded while it streams many times its own size.
"""

from __future__ import annotations

import json
import os
import queue
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.flight as flight
import pytest

pytestmark = pytest.mark.integration

CLIENTS = 16
SECONDS = 8.0
EVENT_ROWS = 200_000
WIDE_ROWS = 1_500_000
#: what one stream may hold on the server: a few batches of 65,536 rows (as Python rows
#: from SQLite, then Arrow, then gRPC buffers), whatever the table's size
PER_STREAM_BYTES = 32_000_000
#: what one stream of the wide table may make the server grow by (measured: about 50 MB)
STREAM_WORKING_SET_BYTES = 100_000_000
TOKEN = "load-test-token-51c2"
_SERVE = (
    "import logging, sys; logging.basicConfig(level=logging.INFO, stream=sys.stderr, format='%(message)s');"
    "from sluice.cli import main; sys.exit(main(sys.argv[1:]))"
)


class ServerProcess:
    """``sluice serve`` in a child process: its location, its log lines, its memory."""

    def __init__(self, sources: list[str], token: str) -> None:
        arguments = [sys.executable, "-c", _SERVE, "serve", "--port", "0"]
        for source in sources:
            arguments += ["--source", source]
        environment = {**os.environ, "SLUICE_FLIGHT_TOKEN": token}
        self.process = subprocess.Popen(
            arguments, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.log: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()
        assert self.process.stdout is not None and self.process.stderr is not None
        banner = self.process.stdout.readline()
        match = re.search(r" at (grpc\S+) ", banner)
        if match is None:
            self.process.kill()
            raise RuntimeError(f"sluice serve did not start: {banner!r} {self.process.stderr.read()}")
        self.location = match[1]

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.put(line)

    def wait_for_log(self, text: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if text in self.log.get(timeout=max(0.01, deadline - time.monotonic())):
                    return
            except queue.Empty:
                break
        raise TimeoutError(f"the server did not log {text!r} within {timeout_s} s")

    def rss_bytes(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        found = re.search(r"VmRSS:\s+(\d+) kB", status)
        assert found is not None, status
        return int(found[1]) * 1024

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)


def make_events_db(path: Path, rows: int, wide_rows: int) -> None:
    """``events`` (id, kind, v, note) and ``wide`` (id, 40-character text) in one SQLite file."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, v INTEGER, note TEXT)")
        connection.execute(f"""INSERT INTO events WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {rows - 1})
                               SELECT i, 'k' || (i % 10), i % 1000, 'event number ' || i FROM n""")
        connection.execute("CREATE TABLE wide (id INTEGER PRIMARY KEY, body TEXT)")
        connection.execute(f"""INSERT INTO wide WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {wide_rows - 1})
                               SELECT i, printf('%040d', i) FROM n""")
    connection.close()


def _eq(column: str, value: object, kind: str) -> dict:
    return {"op": "=", "args": [{"column": column}, {"literal": value, "type": kind}]}


#: (columns, conjuncts, limit) and the rows each must return
WORKLOAD: list[tuple[list[str], list[Any], int | None, int]] = [
    (["id", "kind", "v", "note"], [], None, EVENT_ROWS),
    (["id"], [_eq("kind", "k3", "string")], None, EVENT_ROWS // 10),
    (["id", "note"], [{"op": "<", "args": [{"column": "v"}, {"literal": 100, "type": "int"}]}], None, EVENT_ROWS // 10),
    (
        ["id", "v"],
        [
            {
                "op": "in",
                "args": [{"column": "kind"}, {"literal": "k1", "type": "string"}, {"literal": "k2", "type": "string"}],
            },
            {"op": ">=", "args": [{"column": "id"}, {"literal": 150_000, "type": "int"}]},
        ],
        None,
        10_000,
    ),
    (
        ["id"],
        [{"op": "like", "args": [{"column": "note"}, {"literal": "event number 1%", "type": "string"}]}],
        777,
        777,
    ),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = tmp_path_factory.mktemp("flight-load") / "events.db"
    make_events_db(path, EVENT_ROWS, WIDE_ROWS)
    server = ServerProcess([f"lite=sqlite:///{path}"], TOKEN)
    yield server
    server.kill()


def _options() -> flight.FlightCallOptions:
    return flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {TOKEN}".encode())], timeout=120)


def _read(client: flight.FlightClient, columns: list[str], conjuncts: list, limit: int | None) -> tuple[int, int]:
    """Rows and bytes of one request, every stream checked for its end marker."""
    body = {
        "table": ["lite", "events"],
        "columns": columns,
        "partitions": 2,
        "limit": limit,
        "filter": {"format": "sluice", "conjuncts": conjuncts} if conjuncts else None,
    }
    info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(body).encode()), _options())
    rows = nbytes = 0
    for endpoint in info.endpoints:
        reader, streamed, marker = client.do_get(endpoint.ticket, _options()), 0, None
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                break
            if chunk.app_metadata is not None:
                marker = json.loads(chunk.app_metadata.to_pybytes())
            streamed += chunk.data.num_rows
            nbytes += chunk.data.nbytes
        assert marker == {"end": True, "rows": streamed}, f"stream ended without its marker after {streamed} rows"
        rows += streamed
    return rows, nbytes


def test_one_stream_of_a_table_larger_than_the_servers_working_set(served: ServerProcess) -> None:
    """Streaming, not materialising: the server's memory grows by a fixed working set (a few
    batches), while the table is 78 MB as Arrow and about 260 MB as the Python rows SQLite
    hands over; a server that gathered the table first would grow by several hundred MB."""
    with flight.connect(served.location) as client:
        _read(client, ["id", "note"], [], 1000)  # warm: the first call imports and allocates what every call reuses
        baseline, peak = served.rss_bytes(), [0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], served.rss_bytes())
                time.sleep(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            body = {"table": ["lite", "wide"], "partitions": 1}
            info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(body).encode()), _options())
            rows = nbytes = 0
            for chunk in client.do_get(info.endpoints[0].ticket, _options()):
                rows += chunk.data.num_rows
                nbytes += chunk.data.nbytes
        finally:
            done.set()
            sampler.join()
    growth = peak[0] - baseline
    print(f"\none stream: {rows:,} rows, {nbytes / 1e6:.0f} MB; server RSS grew {growth / 1e6:.0f} MB")
    assert rows == WIDE_ROWS
    assert growth < STREAM_WORKING_SET_BYTES, f"the server grew {growth / 1e6:.0f} MB streaming {nbytes / 1e6:.0f} MB"


def test_sixteen_clients_for_a_bounded_time(served: ServerProcess) -> None:
    with flight.connect(served.location) as warm:
        _read(warm, *WORKLOAD[0][:3])  # the first full read allocates the pools a steady state reuses
    baseline = served.rss_bytes()
    deadline = time.monotonic() + SECONDS
    results: list[tuple[int, int]] = []
    failures: list[str] = []
    peak = [baseline]

    def client(number: int) -> None:
        with flight.connect(served.location) as connection:
            turn = number
            while time.monotonic() < deadline:
                columns, conjuncts, limit, expected = WORKLOAD[turn % len(WORKLOAD)]
                turn += 1
                try:
                    rows, nbytes = _read(connection, columns, conjuncts, limit)
                except Exception as error:  # noqa: BLE001 - every failure is reported
                    failures.append(f"client {number}: {type(error).__name__}: {error}")
                    return
                if rows != expected:
                    failures.append(f"client {number}: {conjuncts} returned {rows} rows, not {expected}")
                results.append((rows, nbytes))

    def sample() -> None:
        while time.monotonic() < deadline + 1:
            peak[0] = max(peak[0], served.rss_bytes())
            time.sleep(0.1)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)] + [threading.Thread(target=sample)]
    for thread in threads:
        thread.start()
    answered = []
    while time.monotonic() < deadline:  # the server keeps answering small calls under load
        started = time.monotonic()
        with flight.connect(served.location) as probe:
            list(probe.do_action(flight.Action("sluice.capabilities", b""), _options()))
        answered.append(time.monotonic() - started)
        time.sleep(0.5)
    for thread in threads:
        thread.join(180)
    assert not failures, "\n".join(failures[:10])
    served_bytes = sum(nbytes for _, nbytes in results)
    growth = peak[0] - baseline
    print(
        f"\n{len(results)} requests, {sum(r for r, _ in results):,} rows, {served_bytes / 1e6:.0f} MB served; "
        f"server RSS {baseline / 1e6:.0f} MB -> peak {peak[0] / 1e6:.0f} MB; slowest probe {max(answered):.2f} s"
    )
    assert len(results) >= CLIENTS, "fewer requests completed than clients"
    assert max(answered) < 10, "the server stopped answering under load"
    streams = CLIENTS * 2  # two partitions per request
    assert growth < streams * PER_STREAM_BYTES, f"{growth / 1e6:.0f} MB for {streams} concurrent streams"
