"""One snapshot for every partition of a partitioned PostgreSQL read.

Partitions are ``ctid`` block ranges, read by separate sessions in Spark's Python workers,
possibly one after another. Read at different moments, an UPDATE that moves a row to a
block of another range (PostgreSQL writes the new version wherever there is room) returns
it twice or not at all. So the partitions of one *read* of a scan (one Spark stage: a
DataFrame collected twice reads twice, at two snapshots) import one exported snapshot.

Who holds the exporting transaction open: a small detached process
(:mod:`sluice.sources.pg_snapshot_holder`), started by partition 0's first attempt, which
ends as soon as every partition has joined, or after ``statement_timeout_s`` without a
partition joining (a failed or cancelled job). Why not the driver: Spark plans a Python
data source's partitions once per DataFrame and reuses them for every action, and the
planning worker returns at once; the stage that runs the partitions is only known to the
tasks. The rendezvous is PostgreSQL itself: the holder publishes the snapshot id in its
``application_name``, keyed by the scan's planning token and the Spark stage.

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
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sluice.errors import SourceError

if TYPE_CHECKING:
    from sluice.sources.base import ReadTask

_HOLDER = Path(__file__).with_name("pg_snapshot_holder.py")
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+-[0-9]+")


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
    holder = _start_holder(url, key, task.group_size, lease_s) if task.partition == 0 and first_attempt else None
    snapshot = _published(connection, key, holder, lease_s if first_attempt else 0.0, name, task)
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


def _published(
    connection: object, key: int, holder: subprocess.Popen | None, wait_s: float, name: str, task: ReadTask
) -> str:
    """The snapshot id the scan read's holder publishes, waiting up to ``wait_s`` for it."""
    deadline = time.monotonic() + wait_s
    pause = 0.002
    while True:
        for (application,) in _rows(
            connection,
            f"SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'sluice-snapshot {key} %'",
        ):
            snapshot = application.rsplit(" ", 1)[-1]
            if _SNAPSHOT_ID.fullmatch(snapshot):
                return snapshot
        if holder is not None and holder.poll() not in (None, 0):  # 0: another holder won the election
            message = holder.stderr.read().decode(errors="replace").strip().splitlines() if holder.stderr else []
            raise SourceError(
                name,
                "could not export a snapshot for the scan's partitions: "
                f"{message[-1] if message else f'exit code {holder.returncode}'}",
            )
        if time.monotonic() >= deadline:
            raise SourceError(
                name,
                f"partition {task.partition} found no shared snapshot for its scan (partition 0 "
                "exports it and it ends once every partition has joined, or after "
                "statement_timeout_s without one): a retried or late partition never reads at "
                "another snapshot; run the query again",
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _start_holder(url: str, key: int, partitions: int, lease_s: float) -> subprocess.Popen:
    """Start the detached holder process (its own session: Spark's end of a worker is not its end)."""
    process = subprocess.Popen(
        [sys.executable, str(_HOLDER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps({"url": url, "key": key, "partitions": partitions, "lease_s": lease_s}).encode())
    process.stdin.close()
    threading.Thread(target=process.wait, daemon=True).start()  # reaped whenever it ends
    return process


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
