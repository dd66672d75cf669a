"""Hold one exported PostgreSQL snapshot open until every partition of a scan has joined it.

Run as a script (``python pg_snapshot_holder.py``, settings as JSON on stdin: the libpq URL
holds the password, which must not appear in a process list), so it imports neither
Spark nor the rest of Sluice and starts in a fraction of a second. It is started, detached,
by the read task of partition 0 (:mod:`sluice.sources.pg_snapshot`); it must outlive that
task, because Spark may run the scan's partitions one after another.

1. Takes the election lock ``(key, -1)``: a second holder for the same scan read exits.
2. Opens a REPEATABLE READ read-only transaction, exports its snapshot, and takes one
   session advisory lock ``(key, i)`` per partition.
3. Publishes ``sluice-snapshot <key> <snapshot id>`` as its ``application_name``.
4. Each partition imports the snapshot, then asks for ``(key, i)`` shared and waits; the
   holder sees the waiter in ``pg_locks`` and releases the lock. That wait is the proof
   the partition holds the snapshot, so the holder may end once all have joined.
5. Ends when every partition has joined, or when none has joined for ``lease_s`` seconds
   (a failed or cancelled Spark job never sends the rest). The server also ends it if the
   process stalls: ``idle_in_transaction_session_timeout``. If the process dies, its
   session (and transaction) die with the connection.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

POLL_S = (0.005, 0.05)  # first and longest wait between looks at pg_locks


def _value(row: tuple[Any, ...] | None) -> Any:
    """The value a SELECT of one function returns (always one row)."""
    assert row is not None
    return row[0]


def hold(url: str, key: int, partitions: int, lease_s: float) -> None:
    """Run the holder for the scan read ``key`` of ``partitions`` partitions (see above)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        if not _value(connection.execute("SELECT pg_try_advisory_lock(%s, -1)", (key,)).fetchone()):
            return  # another holder serves this scan read
        connection.execute(f"SET idle_in_transaction_session_timeout = {int(max(lease_s, 60) * 1000)}")
        connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        snapshot = _value(connection.execute("SELECT pg_export_snapshot()").fetchone())
        connection.execute("SELECT pg_advisory_lock(%s, i) FROM generate_series(0, %s) AS i", (key, partitions - 1))
        connection.execute(f"SET application_name = 'sluice-snapshot {key} {snapshot}'")
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


if __name__ == "__main__":
    settings = json.loads(sys.stdin.read())
    hold(settings["url"], settings["key"], settings["partitions"], settings["lease_s"])
