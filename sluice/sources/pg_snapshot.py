"""One snapshot for every partition of a partitioned PostgreSQL read.

Partitions are ``ctid`` block ranges, read by separate sessions in Spark's Python workers,
possibly one after another. Read at different moments, an UPDATE that moves a row to a
block of another range (PostgreSQL writes the new version wherever there is room) returns
it twice or not at all. So the partitions of one *read* of a scan (one Spark stage: a
DataFrame collected twice reads twice, at two snapshots) import one exported snapshot.

Who holds the exporting transaction open: a holder (:mod:`sluice.sources.pg_snapshot_holder`)
started by partition 0's first attempt, as a daemon thread of its Python worker (Spark
reuses the worker after the task, so the thread outlives it at no interpreter's cost), or,
where the worker ends with its task, as a detached process. It ends as soon as every
partition has joined, or after ``statement_timeout_s`` without a partition joining (a failed
or cancelled job). Why not the driver: Spark plans a Python data source's partitions once
per DataFrame and reuses them for every action, and the planning worker returns at once;
the stage that runs the partitions is only known to the tasks (docs/architecture.md).

The rendezvous is PostgreSQL itself, keyed by the scan's planning token and the Spark
stage: the holder publishes the snapshot id in its ``application_name`` (for partitions that
come later), and partition 0 announces it with ``pg_notify`` to the partitions already
waiting, which block in ``LISTEN`` (no polling) until it comes.

A retried partition (task attempt > 0) joins the snapshot if the holder still waits for
others, and otherwise fails naming the reason: it never reads at a newer snapshot.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from sluice.errors import SourceError
from sluice.sources import pg_snapshot_holder

if TYPE_CHECKING:
    from sluice.sources.base import ReadTask

_HOLDER = Path(__file__).with_name("pg_snapshot_holder.py")
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+-[0-9]+")
#: the ``pg_notify`` payload that tells waiting partitions partition 0 could not export
_FAILED = "failed"


def read_key(group: str) -> int:
    """The advisory-lock key (a positive int4) of this read of the scan planned as ``group``."""
    context = _task_context()
    stage = context.stageId() if context is not None else -1
    value = int.from_bytes(hashlib.blake2b(f"{group}/{stage}".encode(), digest_size=4).digest(), "big") & 0x7FFFFFFF
    return value or 1


def join(connection: object, url: str, task: ReadTask, lease_s: float, name: str) -> None:
    """Begin ``task``'s transaction on ADBC ``connection`` at its scan read's shared snapshot."""
    assert task.snapshot_group is not None
    key = read_key(task.snapshot_group)
    context = _task_context()
    first_attempt = context is None or context.attemptNumber() == 0
    snapshot = None
    if task.partition == 0 and first_attempt:
        try:
            snapshot = _start_holder(url, key, task.group_size, lease_s)
        except Exception as error:  # noqa: BLE001 - any failure to export ends the read, and the waiters'
            _notify(connection, key, _FAILED)
            raise SourceError(name, f"could not export a snapshot for the scan's partitions: {error}") from None
        if snapshot is not None:
            _notify(connection, key, snapshot)
    if snapshot is None:  # a later partition, a retry, or another holder won the election
        snapshot = _published(connection, url, key, lease_s if first_attempt else 0.0, name, task)
    _execute(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        _execute(connection, f"SET TRANSACTION SNAPSHOT '{snapshot}'")
    except Exception:  # noqa: BLE001 - the holder ended between the look and the import
        raise SourceError(
            name,
            f"partition {task.partition}: the scan's shared snapshot ended before this partition "
            "joined it; run the query again",
        ) from None
    _execute(connection, f"SELECT pg_advisory_xact_lock_shared({key}, {task.partition})")  # the holder sees it joined


def _notify(connection: object, key: int, payload: str) -> None:
    """Announce ``payload`` (a snapshot id, or ``_FAILED``) to the partitions waiting for it."""
    _execute(connection, f"SELECT pg_notify('{_channel(key)}', '{payload}')")


def _channel(key: int) -> str:
    """The ``LISTEN`` channel on which partition 0 announces the scan read's snapshot."""
    return f"sluice_snapshot_{key}"


def _published(connection: object, url: str, key: int, wait_s: float, name: str, task: ReadTask) -> str:
    """The snapshot id the scan read's holder publishes, waiting up to ``wait_s`` for it.

    The wait blocks in ``LISTEN`` on a session of its own (ADBC has no notifications),
    opened only when the holder has not published yet; the look after ``LISTEN`` catches a
    publication between the first look and the ``LISTEN``.
    """
    snapshot = _lookup(connection, key)
    if snapshot is None and wait_s > 0:
        import psycopg

        with psycopg.connect(url, autocommit=True) as listener:
            listener.execute(f"LISTEN {_channel(key)}")
            snapshot = _lookup(connection, key)
            if snapshot is None:
                for notification in listener.notifies(timeout=wait_s, stop_after=1):
                    if notification.payload == _FAILED:
                        raise SourceError(
                            name,
                            f"partition {task.partition}: partition 0 could not export the scan's "
                            "shared snapshot (its error names why)",
                        )
                    snapshot = notification.payload
    if snapshot is None or not _SNAPSHOT_ID.fullmatch(snapshot):
        raise SourceError(
            name,
            f"partition {task.partition} found no shared snapshot for its scan (partition 0 "
            "exports it and it ends once every partition has joined, or after "
            "statement_timeout_s without one): a retried or late partition never reads at "
            "another snapshot; run the query again",
        )
    return snapshot


def _lookup(connection: object, key: int) -> str | None:
    """The snapshot id the holder of ``key`` publishes in its ``application_name``, if running."""
    for (application,) in _rows(
        connection,
        f"SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'sluice-snapshot {key} %'",
    ):
        snapshot = application.rsplit(" ", 1)[-1]
        if _SNAPSHOT_ID.fullmatch(snapshot):
            return snapshot
    return None


def _start_holder(url: str, key: int, partitions: int, lease_s: float) -> str | None:
    """Start the holder and wait for its snapshot id (None: another holder serves the read)."""
    if _task_context() is not None and not _worker_outlives_task():
        return _start_holder_process(url, key, partitions, lease_s)
    done = threading.Event()
    snapshot: list[str | None] = []
    errors: list[BaseException] = []

    def published(exported: str | None) -> None:
        snapshot.append(exported)
        done.set()

    def run() -> None:
        try:
            pg_snapshot_holder.hold(url, key, partitions, lease_s, published)
        except BaseException as error:  # noqa: BLE001 - handed to the task waiting on ``done``
            errors.append(error)
            done.set()

    threading.Thread(target=run, name=f"sluice-snapshot-{key}", daemon=True).start()
    if not done.wait(max(lease_s, 60.0)):
        raise RuntimeError("the holder exported no snapshot in time (PostgreSQL busy or unreachable)")
    if snapshot:
        return snapshot[0]
    raise errors[0]


def _worker_outlives_task() -> bool:
    """Whether this Spark Python worker stays alive after its task: forked by PySpark's
    daemon with worker reuse on (the default), it runs the next tasks; otherwise it exits."""
    import os

    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return bool(os.environ.get("SPARK_REUSE_WORKER")) and getattr(spec, "name", None) == "pyspark.daemon"


def _start_holder_process(url: str, key: int, partitions: int, lease_s: float) -> str | None:
    """Start the detached holder process (its own session: the worker's end is not its end)."""
    process = subprocess.Popen(
        [sys.executable, str(_HOLDER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"url": url, "key": key, "partitions": partitions, "lease_s": lease_s}).encode())
    process.stdin.close()
    line = process.stdout.readline().decode().strip()  # blocks until it publishes or ends
    threading.Thread(target=process.wait, daemon=True).start()  # reaped whenever it ends
    if not line and process.wait() != 0:
        message = process.stderr.read().decode(errors="replace").strip().splitlines() if process.stderr else []
        raise RuntimeError(message[-1] if message else f"exit code {process.returncode}")
    return line or None


def _task_context():
    """Spark's context of the running task; None outside a Spark task (a direct read)."""
    from pyspark import TaskContext

    return TaskContext.get()


def _execute(connection: object, sql: str) -> None:
    import adbc_driver_manager

    statement = adbc_driver_manager.AdbcStatement(connection)
    try:
        statement.set_sql_query(sql)
        statement.execute_update()
    finally:
        statement.close()


def _rows(connection: object, sql: str) -> list[tuple]:
    import adbc_driver_manager
    import pyarrow as pa

    statement = adbc_driver_manager.AdbcStatement(connection)
    try:
        statement.set_sql_query(sql)
        stream, _ = statement.execute_query()
        with pa.RecordBatchReader.from_stream(stream) as reader:
            table = reader.read_all()
        return list(zip(*(column.to_pylist() for column in table.columns), strict=True))
    finally:
        statement.close()
