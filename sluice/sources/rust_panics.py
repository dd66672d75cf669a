"""Keep Rust panic reports off stderr while a Rust reader runs.

connectorx (the MySQL reader) reports a failure that reaches it mid-stream, a server error
such as an arithmetic overflow (``ERROR 1690 BIGINT value is out of range``) or a value it
cannot convert (a zero date), as a Rust panic. Rust's panic hook first writes the report
(``thread '...' panicked at ...``, the message and, with ``RUST_BACKTRACE`` set, a stack
backtrace) straight to file descriptor 2; then the panic reaches Python as a
``PanicException``, which the reader turns into one clean :class:`~sluice.errors.SourceError`.
Python cannot replace Rust's hook, so the report would precede the clean error on the
user's terminal (or fill an executor's log).

While a reader runs (:func:`panic_reports_held_back`), descriptor 2 is a pipe: a thread
copies what arrives to the real stderr as it arrives, line by line, and leaves out panic
reports. Readers running at once in threads share one pipe; the last one out puts the real
stderr back. A report Rust writes without its closing ``note:`` line (the second panic of a
process when ``RUST_BACKTRACE`` is unset) ends when the pipe does: stderr output of other
threads between that panic and the end of the read is dropped with it.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the first line of a report (Rust 1.73+: ``thread 'name' (id) panicked at file:line:col:``)
_START = re.compile(rb"thread '[^']*'(?: \(\d+\))? panicked at ")
#: a line of a backtrace: a frame number or its source location
_FRAME = re.compile(rb"\s+(?:\d+: |at )")
#: how long the last reader out waits for the copying thread to pass on what is left
_DRAIN_S = 2.0

_lock = threading.Lock()
_readers = 0
_restore: tuple[int, threading.Thread, int] | None = None  # the real stderr, the copier, the pipe's write end


@contextmanager
def panic_reports_held_back() -> Iterator[None]:
    """Run the block with Rust panic reports kept off file descriptor 2 (everything else passes)."""
    _enter()
    try:
        yield
    finally:
        _leave()


def _enter() -> None:
    global _readers, _restore
    with _lock:
        _readers += 1
        if _readers > 1:
            return
        sys.stderr.flush()
        real, (read_end, write_end) = os.dup(2), os.pipe()
        copier = threading.Thread(target=_copy, args=(read_end, os.dup(real)), name="sluice-rust-stderr", daemon=True)
        copier.start()
        os.dup2(write_end, 2)
        _restore = (real, copier, write_end)


def _leave() -> None:
    global _readers, _restore
    with _lock:
        _readers -= 1
        if _readers or _restore is None:
            return
        real, copier, write_end = _restore
        _restore = None
        sys.stderr.flush()
        os.dup2(real, 2)
        os.close(real)
        os.close(write_end)
        copier.join(_DRAIN_S)  # a child process started meanwhile may hold the pipe open: then it keeps copying


def _copy(read_end: int, out: int) -> None:
    """Pass each line from ``read_end`` to ``out`` except Rust panic reports, until the pipe closes."""
    try:
        for line in _without_reports(_lines(read_end)):
            os.write(out, line)
    finally:
        os.close(read_end)
        os.close(out)


def _lines(read_end: int) -> Iterator[bytes]:
    """The pipe's lines as they arrive (a partial last line too)."""
    pending = b""
    while chunk := os.read(read_end, 65536):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from (line + b"\n" for line in complete)
    if pending:
        yield pending


def _without_reports(lines: Iterator[bytes]) -> Iterator[bytes]:
    """``lines`` less each panic report: the blank line Rust writes before it, its first line,
    the message up to its ``note:`` line or its backtrace, and the backtrace's frames."""
    state, blank = "text", b""
    for line in lines:
        if state == "frames":
            if _FRAME.match(line):
                continue
            state = "text"
            if line.startswith(b"note: "):
                continue
        elif state == "report":
            if line.startswith(b"note: run with `RUST_BACKTRACE"):
                state = "text"
            elif line.rstrip() == b"stack backtrace:":
                state = "frames"
            continue
        if _START.match(line):
            state, blank = "report", b""
            continue
        if line == b"\n" and not blank:  # held back: Rust starts a report with one
            blank = line
            continue
        yield blank + line
        blank = b""
    if blank:
        yield blank
