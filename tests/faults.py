"""Fault injection on real servers: a TCP proxy that can be cut, and backend killers.

Used by the fault tests (``tests/integration/test_faults_sql.py``). Nothing here mocks a
driver: the proxy forwards real bytes to the real PostgreSQL or MariaDB, and the killers
end real server sessions from a separate connection, as an operator or a crash would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit, urlunsplit

from tests.sources import mariadb

if TYPE_CHECKING:
    import pymysql

T = TypeVar("T")


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to a real server until :meth:`stop`.

    A source attached through the proxy is one whose server can go away on demand:
    :meth:`stop` kills the proxy, which closes its port (new connections are refused) and
    cuts every open connection (a read in flight loses its server mid-stream). The proxy
    is a child process, not a thread: connectorx holds the GIL while it connects, so a
    proxy thread in the test's process would never get to answer.
    """

    def __init__(self, host: str, port: int) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.faults", host, str(port)],
            cwd=Path(__file__).resolve().parents[1],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.port = int(self._process.stdout.readline())  # printed once it listens

    @classmethod
    def to(cls, url: str) -> TcpProxy:
        """A proxy to the server of ``url``."""
        parts = urlsplit(url)
        return cls(parts.hostname or "127.0.0.1", parts.port or {"mysql": 3306}.get(parts.scheme, 5432))

    def url(self, url: str) -> str:
        """``url`` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        user = parts.netloc.rpartition("@")[0]
        netloc = f"{user}@127.0.0.1:{self.port}" if user else f"127.0.0.1:{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def stop(self) -> None:
        """Refuse new connections and cut the open ones (idempotent)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait(timeout=10)
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve(host: str, port: int) -> None:
    """The proxy process: accept on an ephemeral loopback port, print it, forward forever.

    It exits when its parent does (stdin closes), so a crashed test leaves no proxy behind.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = socket.create_connection((host, port), timeout=5)
        except OSError:
            client.close()
            continue
        upstream.settimeout(None)
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _exit_with_parent() -> None:
    sys.stdin.read()
    os._exit(0)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy bytes one way until either side closes."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def wait_for(probe: Callable[[], T | None], timeout_s: float, what: str, interval_s: float = 0.02) -> T:
    """Poll ``probe`` until it returns something truthy; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(interval_s)
    raise AssertionError(f"gave up after {timeout_s:g} s waiting for {what}")


def postgres_backends(url: str, marker: str) -> list[int]:
    """Pids of the other sessions running a statement that contains ``marker``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND position(%s IN query) > 0",
            (marker,),
        ).fetchall()
    return [row[0] for row in rows]


def terminate_postgres(url: str, marker: str) -> list[int]:
    """``pg_terminate_backend`` every session running a statement with ``marker``; their pids."""
    import psycopg

    pids = postgres_backends(url, marker)
    with psycopg.connect(url, autocommit=True) as connection:
        for pid in pids:
            connection.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return pids


def mariadb_connection(database: str | None = None) -> pymysql.connections.Connection:
    """An administrative connection to the test MariaDB (root, no password)."""
    return mariadb(database)


def kill_mariadb(marker: str) -> list[int]:
    """``KILL`` every other connection running a statement with ``marker``; their ids."""
    import pymysql

    connection = mariadb_connection()
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() "
                "AND command IN ('Query', 'Execute') AND LOCATE(%s, info) > 0",
                (marker,),
            )
            ids = [row[0] for row in cursor.fetchall()]
            for session in ids:
                try:
                    cursor.execute(f"KILL {int(session)}")
                except pymysql.MySQLError as error:
                    if error.args[0] != 1094:  # ER_NO_SUCH_THREAD: it ended on its own meanwhile
                        raise
    finally:
        connection.close()
    return ids


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))
