"""A TCP server on loopback that accepts connections and never says a word.

It stands for a hung database, or a proxy whose backend is gone: the client's connect()
succeeds, then nothing arrives. It holds every connection it accepts and stops by itself
after ``lifetime_s`` (so a client that would wait forever fails the test instead of hanging
it), or when the ``with`` block ends.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType


class SilentServer:
    def __init__(self, lifetime_s: float = 60.0) -> None:
        self.lifetime_s = lifetime_s
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="silent-server", daemon=True)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        deadline = time.monotonic() + self.lifetime_s
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                try:
                    connection, _ = self._listener.accept()
                except TimeoutError:
                    continue
                self._held.append(connection)  # never read from, never written to
                self.accepted += 1
        finally:
            for connection in self._held:
                connection.close()
            self._listener.close()
