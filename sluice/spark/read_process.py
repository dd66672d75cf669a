"""A read process beside the driver, for small reads whose reader holds the GIL.

``python -m sluice.spark.read_process`` answers requests on stdin with results on stdout,
each a length-prefixed pickle: ``(function, args)`` in, ``("ok", value)`` or
``("error", exception)`` out. The driver keeps up to :data:`PROCESSES` of them
(:class:`ReadProcesses`), started on first need and reused; a process that dies is replaced.

Not ``multiprocessing``: its ``spawn`` start imports the user's main module again in the
child, which re-runs a Spark script that has no ``if __name__ == "__main__"`` guard, and its
``fork`` would copy a driver whose py4j threads may hold locks.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

#: at most this many reads run beside the driver at once; more wait for one to finish
PROCESSES = 2
_HEADER = 8


class ReadProcessDied(Exception):
    """The read process ended before it answered (killed, out of memory)."""


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value)
    stream.write(len(data).to_bytes(_HEADER, "big") + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        raise EOFError
    size = int.from_bytes(header, "big")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # our own process's answer over its private pipe


class _Process:
    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])  # where `import sluice` finds this copy
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
        self.popen = subprocess.Popen(  # this interpreter running this module
            [sys.executable, "-m", "sluice.spark.read_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def call(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        assert self.popen.stdin is not None and self.popen.stdout is not None
        try:
            _send(self.popen.stdin, (function, args))
            status, value = _receive(self.popen.stdout)
        except (EOFError, BrokenPipeError, OSError):
            self.popen.kill()
            self.popen.wait()
            raise ReadProcessDied from None
        if status == "error":
            raise value
        return value


class ReadProcesses:
    """Up to :data:`PROCESSES` read processes, each running one request at a time."""

    def __init__(self) -> None:
        self._idle: list[_Process] = []
        self._started = 0
        self._available = threading.Condition()

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` in a read process (``function`` must be importable there)."""
        process = self._take()
        try:
            result = process.call(function, args)
        except ReadProcessDied:
            self._lose()
            raise
        except BaseException:  # the function's own error: the process is fine and serves the next read
            self._give_back(process)
            raise
        self._give_back(process)
        return result

    def warm(self) -> None:
        """Start one process now, so that the first read does not wait for its imports."""
        with self._available:
            if self._started == 0:
                self._started += 1
                self._idle.append(_Process())

    def _take(self) -> _Process:
        with self._available:
            while not self._idle and self._started >= PROCESSES:
                self._available.wait()
            if self._idle:
                return self._idle.pop()
            self._started += 1
        return _Process()

    def _give_back(self, process: _Process) -> None:
        with self._available:
            self._idle.append(process)
            self._available.notify()

    def _lose(self) -> None:
        with self._available:
            self._started -= 1
            self._available.notify()


def main() -> None:
    """Answer requests until stdin closes (the driver ended or let this process go)."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed must not reach the answers' pipe
    while True:
        try:
            function, args = _receive(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, object] = ("ok", function(*args))
        except Exception as error:  # noqa: BLE001 - every failure goes back to the driver, which raises it
            answer = ("error", error)
        try:
            _send(answers, answer)
        except (pickle.PicklingError, TypeError, AttributeError):
            _send(answers, ("error", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")))


if __name__ == "__main__":
    main()
