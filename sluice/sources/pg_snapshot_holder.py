"""Hold one exported PostgreSQL snapshot open until every partition of a scan has joined it.

Runs as a daemon thread of the Python worker that reads partition 0
(:mod:`sluice.sources.pg_snapshot`): Spark's reused workers outlive their task, so the
thread keeps the snapshot for the partitions Spark runs later, and it costs no new
interpreter. Where the worker ends with its task (``spark.python.worker.reuse=false``) it
runs as a script instead (``python pg_snapshot_holder.py``, settings as JSON on stdin: the
libpq URL holds the password, which must not appear in a process list; it prints the
snapshot id once published), which imports neither Spark nor the rest of Sluice.

1. Takes the election lock ``(key, -1)``: a second holder for the same scan read ends.
2. Opens a REPEATABLE READ read-only transaction, exports its snapshot, and takes one
   session advisory lock ``(key, i)`` per partition.
3. Publishes ``sluice-snapshot <key> <snapshot id>`` as its ``application_name`` (where late
   partitions look) and hands the id to its starter (which announces it to the partitions
   waiting with ``LISTEN``).
4. Each partition imports the snapshot, then asks for ``(key, i)`` shared and waits; the
   holder sees the waiter in ``pg_locks`` and releases the lock. That wait is the proof
   the partition holds the snapshot, so the holder may end once all have joined.
5. Ends when every partition has joined, or when none has joined for ``lease_s`` seconds
   (a failed or cancelled Spark job never sends the rest). The server also ends it if the
   holder stalls: ``idle_in_transaction_session_timeout``. If its process dies (a killed
   worker, a dead executor), its session and transaction die with the connection.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

POLL_S = (0.002, 0.02)  # first and longest wait between looks at pg_locks: a partition waits for the look


def _value(row: tuple[Any, ...] | None) -> Any:
    """The value a SELECT of one function returns (always one row)."""
    assert row is not None
    return row[0]


def hold(url: str, key: int, partitions: int, lease_s: float, published: Callable[[str | None], None]) -> None:
    """Run the holder for the scan read ``key`` of ``partitions`` partitions (see above).

    ``published`` gets the snapshot id once the partitions may import it, or None when
    another holder serves the read; an exception before then is the caller's to report.
    """
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        if not _value(connection.execute("SELECT pg_try_advisory_lock(%s, -1)", (key,)).fetchone()):
            published(None)
            return
        connection.execute(f"SET idle_in_transaction_session_timeout = {int(max(lease_s, 60) * 1000)}")
        connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        snapshot = _value(connection.execute("SELECT pg_export_snapshot()").fetchone())
        connection.execute("SELECT pg_advisory_lock(%s, i) FROM generate_series(0, %s) AS i", (key, partitions - 1))
        connection.execute(f"SET application_name = 'sluice-snapshot {key} {snapshot}'")
        published(snapshot)
        pending = set(range(partitions))
        joined_at = time.monotonic()
        wait = POLL_S[0]
        while pending and time.monotonic() - joined_at < lease_s:
            waiting = {
                int(row[0])
                for row in connection.execute(
                    "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s::int::oid AND objsubid = 2 "
                    "AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                    (key,),
                )
            }
            joined = waiting & pending
            for index in joined:
                connection.execute("SELECT pg_advisory_unlock(%s, %s)", (key, index))
            pending -= joined
            if joined:
                joined_at, wait = time.monotonic(), POLL_S[0]
            else:
                time.sleep(wait)
                wait = min(wait * 2, POLL_S[1])
        connection.execute("COMMIT")


def _print(snapshot: str | None) -> None:
    """Hand the snapshot id (empty: another holder serves the read) to the starting task."""
    sys.stdout.write(f"{snapshot or ''}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    settings = json.loads(sys.stdin.read())
    hold(settings["url"], settings["key"], settings["partitions"], settings["lease_s"], _print)
