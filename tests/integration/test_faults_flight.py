"""Faults on the Flight path: a server that dies mid-stream, is unreachable, or refuses the token.

Every case must end in a :class:`~sluice.errors.SourceError` (or a Spark error carrying
one) that names the source and says what broke — never a short result, never the token.
The server is a real ``sluice serve`` child process on loopback, killed with SIGKILL.

"After the first batch" is made exact two ways: the direct reader is paced by the test
(it kills the server once it holds the first batch), and Spark's read goes through a
loopback TCP proxy that counts the bytes the server sent and fires once more than one
batch has passed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice import Federation
from sluice.errors import SourceError
from sluice.scan.spec import ScanSpec
from sluice.sources.flight import FlightSource
from tests.integration.test_flight_load import make_events_db

pytestmark = pytest.mark.integration

TOKEN = "faults-flight-token-7f3a"
WIDE_ROWS = 600_000
#: one batch of ``wide`` (65,536 rows of id + 40 characters) is about 3.4 MB of Arrow
FIRST_BATCH_BYTES = 3_500_000
COUNT_WIDE = "SELECT count(*) AS n FROM fl.lite.wide"
#: a query whose rows stream from the server: upper() is never pushed, so Spark filters and
#: counts itself (a bare count(*) is answered by the server as one row: Flight aggregates)
STREAMED_COUNT = "SELECT count(*) AS n FROM fl.lite.wide WHERE upper(body) <> ''"


class Server:
    """``python -m sluice.cli serve`` in a child process on a loopback port."""

    def __init__(self, database: Path, token: str, port: int = 0) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sluice.cli",
                "serve",
                "--port",
                str(port),
                "--source",
                f"lite=sqlite:///{database}",
            ],
            env={**os.environ, "SLUICE_FLIGHT_TOKEN": token},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        banner = self.process.stdout.readline()
        if " at grpc://" not in banner:
            self.kill()
            raise RuntimeError(f"sluice serve did not start: {banner!r}")
        self.location = banner.split(" at ", 1)[1].split(" ", 1)[0]
        self.port = int(self.location.rsplit(":", 1)[1])

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # SIGKILL: no goodbye on any stream
        self.process.wait(10)


class CountingProxy:
    """A loopback TCP proxy that sets ``passed`` once ``threshold`` bytes came from upstream.

    When the upstream side closes (the server died), the client side is closed too, as a
    real network path would do.
    """

    def __init__(self, upstream_port: int, threshold: int) -> None:
        self.upstream_port, self.threshold = upstream_port, threshold
        self.passed = threading.Event()
        self.downstream_bytes = 0
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.location = f"grpc://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, count: bool) -> None:
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
                if count:
                    with self._lock:
                        self.downstream_bytes += len(chunk)
                        if self.downstream_bytes >= self.threshold:
                            self.passed.set()
        except OSError:
            pass
        for side in (source, target):
            try:
                side.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.listener.close()
        for side in self._sockets:
            side.close()


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("faults-flight") / "events.db"
    make_events_db(path, 1_000, WIDE_ROWS)
    return path


@pytest.fixture
def server(database: Path) -> Iterator[Server]:
    running = Server(database, TOKEN)
    yield running
    running.kill()


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def wide_scan(source: FlightSource) -> ScanSpec:
    """A whole read of ``lite.wide`` as one stream."""
    return ScanSpec.for_source(source, source.describe("lite", "wide"), ("id", "body"), partitions=1)


def start(work, outcome: dict[str, object]) -> threading.Thread:
    """Run ``work`` in a daemon thread; ``outcome`` gets its ``result`` or its ``error``."""

    def run() -> None:
        try:
            outcome["result"] = work()
        except Exception as error:  # noqa: BLE001 - the test inspects it
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_reader_fails_when_the_server_is_killed_after_the_first_batch(server: Server) -> None:
    source = FlightSource("fl", server.location, password=TOKEN)
    [task] = source.tasks(wide_scan(source))
    stream = source.read(task)
    first = next(stream)
    assert first.num_rows > 0
    server.kill()
    rows = first.num_rows
    with pytest.raises(SourceError) as failure:
        for batch in stream:
            rows += batch.num_rows
    assert rows < WIDE_ROWS  # what arrived before the break is never handed over as the answer
    message = str(failure.value)
    assert message.startswith("source 'fl': the stream of fl.lite.wide (partition 0) from grpc://127.0.0.1:")
    assert f"broke after {rows} rows (the server stopped or cannot be reached)" in message, message
    assert "rather than return a short result" in message and TOKEN not in message


def test_a_spark_query_fails_when_the_server_is_killed_after_the_first_batch(spark, server: Server) -> None:
    proxy = CountingProxy(server.port, FIRST_BATCH_BYTES)
    try:
        federation = Federation(spark=spark)
        federation.attach("fl", proxy.location, password=TOKEN, partitions=1)
        outcome: dict[str, object] = {}
        query = start(lambda: federation.sql(STREAMED_COUNT).collect(), outcome)
        assert proxy.passed.wait(60), f"only {proxy.downstream_bytes} bytes came from the server in 60 s"
        server.kill()
        query.join(120)
        assert not query.is_alive(), "the query still runs 120 s after the server died"
    finally:
        proxy.close()
    assert "result" not in outcome, f"a dead server gave a result: {outcome.get('result')}"
    message = str(outcome["error"])
    assert "source 'fl': the stream of fl.lite.wide (partition 0)" in message, message[:2000]
    assert "broke after" in message and "the server stopped or cannot be reached" in message, message[:2000]
    assert TOKEN not in message


def test_an_unreachable_server_fails_the_attach(spark) -> None:
    location = f"grpc://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(SourceError) as failure:
        Federation(spark=spark).attach("gone", location, password=TOKEN)
    assert time.monotonic() - started < 10  # refused at once, not after a long retry
    message = str(failure.value)
    assert message.startswith(f"source 'gone': cannot reach the Flight server at {location} (probing the server)")
    assert "Connection refused" in message and TOKEN not in message


def test_a_server_stopped_after_attach_fails_planning_and_reading(spark, server: Server) -> None:
    federation = Federation(spark=spark)
    federation.attach("fl", server.location, password=TOKEN)
    federation.plan(COUNT_WIDE)  # lite.wide is described (and cached) while the server runs
    server.kill()
    # a table not described yet: the server is the problem, not the table's existence
    with pytest.raises(
        SourceError, match=r"^source 'fl': cannot reach the Flight server at grpc://\S+ \(describing lite\.events\)"
    ):
        federation.plan("SELECT id FROM fl.lite.events")
    # planning asks the server for its verdict on the filter
    with pytest.raises(
        SourceError, match=r"^source 'fl': cannot reach the Flight server at grpc://\S+ \(planning lite\.wide\)"
    ):
        federation.plan("SELECT id FROM fl.lite.wide WHERE id < 10")
    # without a filter, planning needs no call: Spark's read tasks (planned on its side) fail
    with pytest.raises(Exception) as failure:
        federation.sql(COUNT_WIDE).collect()
    message = str(failure.value)
    assert f"source 'fl': cannot reach the Flight server at {server.location}" in message, message[:2000]
    assert TOKEN not in message


def test_a_server_stopped_between_planning_and_streaming_fails_the_read(server: Server) -> None:
    source = FlightSource("fl", server.location, password=TOKEN)
    [task] = source.tasks(wide_scan(source))
    server.kill()
    with pytest.raises(
        SourceError,
        match=r"^source 'fl': the stream of fl\.lite\.wide \(partition 0\) from \S+ "
        r"broke after 0 rows \(the server stopped or cannot be reached\)",
    ):
        list(source.read(task))


def test_a_wrong_token_is_refused_at_attach_and_at_read(spark, database: Path, server: Server) -> None:
    wrong = "not-the-token-0000"
    with pytest.raises(SourceError) as failure:
        Federation(spark=spark).attach("fl", server.location, password=wrong)
    message = str(failure.value)
    assert message.startswith(
        f"source 'fl': the Flight server at {server.location} refused the credentials (probing the server)"
    )
    assert wrong not in message and TOKEN not in message
    with pytest.raises(SourceError, match="refused the credentials"):
        Federation(spark=spark).attach("fl", server.location)  # no token at all

    # the token rotated between planning and streaming: the server restarted on the same port
    source = FlightSource("fl", server.location, password=TOKEN)
    [task] = source.tasks(wide_scan(source))
    server.kill()
    rotated = Server(database, "rotated-token-1111", port=server.port)
    try:
        with pytest.raises(SourceError) as failure:
            list(source.read(task))
    finally:
        rotated.kill()
    message = str(failure.value)
    assert message.startswith("source 'fl': the stream of fl.lite.wide (partition 0)"), message
    assert "the Flight server refused the credentials" in message and TOKEN not in message
