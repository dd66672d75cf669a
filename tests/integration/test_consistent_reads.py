"""Partitioned PostgreSQL reads see one snapshot, whatever a concurrent writer does.

A writer commits transaction k = 1, 2, ... throughout a partitioned read: each moves a
few rows of the first blocks (an UPDATE writes the new version where there is room, at
the end of the table, so the row changes ``ctid`` range) with ``gen = k``, and inserts
row ``BASE + k - 1`` with ``gen = k``. A read at one snapshot that includes transactions
1..m returns every original row once, inserted rows ``BASE .. BASE+m-1`` and
``max(gen) = m``. Partitions read at different moments return a moved row twice (read
before the move in its old range, after it in its new one) or miss it, and see more
inserts in late partitions than updates in early ones.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from sluice import Federation, SourceError
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source, pg_snapshot
from tests.scalars import first_value
from tests.sources import PG_URL

pytestmark = pytest.mark.integration

SCHEMA = "sluice_snapshot"
ROWS = 40_000
BASE = 10_000_000  # ids of inserted rows
PARTITIONS = 8
#: this database's sessions (other test databases on the server have holders of their own)
SESSIONS = "(SELECT * FROM pg_stat_activity WHERE datname = current_database()) AS sessions"


@pytest.fixture()
def accounts() -> Iterator[str]:
    """A fresh table of ROWS rows of ~300 bytes (about 1,700 blocks), its pages full."""
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        connection.execute(f"CREATE SCHEMA {SCHEMA}")
        connection.execute(
            f"CREATE TABLE {SCHEMA}.accounts (id bigint PRIMARY KEY, gen int NOT NULL, pad text) "
            "WITH (fillfactor = 100, autovacuum_enabled = off)"
        )
        connection.execute(
            f"INSERT INTO {SCHEMA}.accounts SELECT i, 0, repeat('x', 280) FROM generate_series(0, {ROWS - 1}) i"
        )
        connection.execute(f"ANALYZE {SCHEMA}.accounts")
    yield f"{SCHEMA}.accounts"
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


class Writer(threading.Thread):
    """Commits transaction after transaction until stopped (or after ``limit_s``)."""

    def __init__(self, start_gen: int, limit_s: float = 120.0) -> None:
        super().__init__(daemon=True)
        self.gen = start_gen
        self.limit_s = limit_s
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(self.gen)
        deadline = time.monotonic() + self.limit_s
        try:
            with psycopg.connect(PG_URL, autocommit=True) as connection:
                while not self.stop.is_set() and time.monotonic() < deadline:
                    k = self.gen + 1
                    moved = [rng.randrange(0, ROWS // 4) for _ in range(20)]  # rows of the first quarter of blocks
                    with connection.transaction():
                        connection.execute(f"UPDATE {SCHEMA}.accounts SET gen = %s WHERE id = ANY(%s)", (k, moved))
                        connection.execute(
                            f"INSERT INTO {SCHEMA}.accounts VALUES (%s, %s, repeat('y', 280))", (BASE + k - 1, k)
                        )
                    self.gen = k
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error


def check_one_snapshot(rows: list[tuple[int, int]], start_gen: int) -> int:
    """Assert ``rows`` (id, gen) are the table at one moment; the number of inserts seen."""
    ids = [row[0] for row in rows]
    assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} rows returned twice"
    original = [i for i in ids if i < BASE]
    assert len(original) == ROWS, f"{ROWS - len(original)} rows missing"
    inserted = sorted(i for i in ids if i >= BASE)
    assert inserted == list(range(BASE, BASE + len(inserted))), "inserts seen out of commit order"
    assert max(row[1] for row in rows) == len(inserted), "updates and inserts seen at different moments"
    assert len(rows) == ROWS + len(inserted)
    assert len(inserted) >= start_gen
    return len(inserted)


def test_a_partitioned_read_sees_one_snapshot_while_a_writer_moves_and_inserts_rows(spark, accounts) -> None:
    fed = Federation(spark=spark)
    fed.attach("snap", PG_URL, partitions=PARTITIONS)
    query = f"SELECT id, gen FROM snap.{accounts}"
    source = open_source("snap", PG_URL)
    assert (
        len(
            source.tasks(
                ScanSpec.for_source(source, source.describe(SCHEMA, "accounts"), ("id",), partitions=PARTITIONS)
            )
        )
        == PARTITIONS
    )
    # Spark's Python workers outlive their tasks: the holder is a thread there, not a process
    assert spark.sparkContext.parallelize([0], 1).map(lambda _: pg_snapshot._worker_outlives_task()).collect() == [True]
    gen = 0
    for _ in range(4):
        writer = Writer(gen)
        writer.start()
        while writer.gen < gen + 5 and writer.is_alive():
            time.sleep(0.01)
        try:
            rows = [(r.id, r.gen) for r in fed.sql(query).collect()]
        finally:
            writer.stop.set()
            writer.join(30)
        assert writer.error is None, writer.error
        check_one_snapshot(rows, gen)
        gen = writer.gen
    assert gen > 20  # the writer really ran during the reads
    _assert_no_holder_left(within_s=3.0)  # every partition joined: the holder ended with the last join
    _assert_no_session("query LIKE 'LISTEN sluice_snapshot%'", 3.0, "a waiting partition's session outlived the scan")


def _assert_no_holder_left(within_s: float = 10.0) -> None:
    _assert_no_session("application_name LIKE 'sluice-snapshot%'", within_s, "a snapshot holder outlived its read")


def _assert_no_session(where: str, within_s: float, message: str) -> None:
    deadline = time.monotonic() + within_s
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        while True:
            left = first_value(
                connection.execute(
                    f"SELECT count(*) FROM {SESSIONS} WHERE {where} AND pid <> pg_backend_pid()"
                ).fetchone()
            )
            if left == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert left == 0, message


def test_a_partition_arriving_after_the_holder_ended_fails_instead_of_reading_another_snapshot(accounts) -> None:
    """Without Spark: partition 0 alone joins (the holder waits for the other partitions);
    with no partition joining for ``statement_timeout_s`` the holder ends, and a late
    partition fails naming the reason rather than reading at a newer snapshot."""
    source = open_source("snap", PG_URL, partitions=2, statement_timeout_s=2)
    table = source.describe(SCHEMA, "accounts")
    tasks = source.tasks(ScanSpec.for_source(source, table, ("id",), partitions=2))
    assert len(tasks) == 2 and tasks[0].snapshot_group == tasks[1].snapshot_group and tasks[0].group_size == 2
    first = sum(batch.num_rows for batch in source.read(tasks[0]))
    assert 0 < first < ROWS
    _assert_no_holder_left(within_s=10.0)  # ended by its lease: no partition joined for 2 s
    with pytest.raises(SourceError, match="found no shared snapshot"):
        list(source.read(tasks[1]))


def test_a_partition_started_before_partition_0_waits_for_its_snapshot_and_sees_the_same_moment(accounts) -> None:
    """Without Spark: partition 1 starts first and blocks in ``LISTEN`` (nothing published
    yet) while a writer commits; partition 0 then exports the snapshot, starts the holder (a
    thread of this process) and announces the id. Together the two partitions are the table
    at one moment, the holder ends as soon as both have joined (long before its 30 s
    lease), and neither the holder nor the waiting session is left behind."""
    source = open_source("snap", PG_URL, partitions=2, statement_timeout_s=30)
    tasks = source.tasks(ScanSpec.for_source(source, source.describe(SCHEMA, "accounts"), ("id", "gen"), partitions=2))
    late: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def read_partition_1() -> None:
        try:
            late.extend(row for batch in source.read(tasks[1]) for row in zip(*batch.to_pydict().values()))
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    writer = Writer(0)
    writer.start()
    waiting = threading.Thread(target=read_partition_1, daemon=True)
    try:
        waiting.start()
        _wait_for_session("query LIKE 'LISTEN sluice_snapshot%'", "partition 1 never waited for the snapshot")
        while writer.gen < 5 and writer.is_alive():
            time.sleep(0.01)
        first = [row for batch in source.read(tasks[0]) for row in zip(*batch.to_pydict().values())]
        waiting.join(30)
    finally:
        writer.stop.set()
        writer.join(30)
    assert writer.error is None, writer.error
    assert not waiting.is_alive() and not errors, errors
    assert check_one_snapshot(first + late, 0) >= 5
    _assert_no_holder_left(within_s=3.0)
    _assert_no_session("query LIKE 'LISTEN sluice_snapshot%'", 3.0, "a waiting partition's session outlived it")


def _wait_for_session(where: str, message: str, within_s: float = 10.0) -> None:
    """Wait until a session matching ``where`` is open (some other thread's wait began)."""
    deadline = time.monotonic() + within_s
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        while not first_value(connection.execute(f"SELECT count(*) FROM {SESSIONS} WHERE {where}").fetchone()):
            assert time.monotonic() < deadline, message
            time.sleep(0.02)


def test_a_killed_process_takes_its_holder_with_it(accounts) -> None:
    """The holder is a thread of the process that read partition 0 (a Spark Python
    worker): when that process dies (a killed worker, a lost executor, a dead driver's
    executors), the holder's session closes at once, long before its 600 s lease."""
    script = textwrap.dedent(
        f"""
        from sluice.scan.spec import ScanSpec
        from sluice.sources import open_source, pg_snapshot
        source = open_source("snap", {PG_URL!r}, partitions=2)
        tasks = source.tasks(ScanSpec.for_source(source, source.describe({SCHEMA!r}, "accounts"), ("id",), partitions=2))
        sum(batch.num_rows for batch in source.read(tasks[0]))
        print("read", flush=True)
        input()
        """
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ)
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == b"read"
        _wait_for_session("application_name LIKE 'sluice-snapshot%'", "partition 0 started no holder")
    finally:
        reader.send_signal(signal.SIGKILL)
        reader.wait(10)
    _assert_no_holder_left(within_s=5.0)


def test_where_workers_are_not_reused_the_holder_is_a_process_that_ends_once_joined(accounts) -> None:
    """``spark.python.worker.reuse=false`` ends a worker with its task, so there partition 0
    starts the holder as a detached process: it hands back the id it publishes, a partition
    importing it and asking for its lock is seen as joined, and the process then ends."""
    key = 424242
    snapshot = pg_snapshot._start_holder_process(PG_URL, key, 1, 30.0)
    assert snapshot is not None
    _wait_for_session(f"application_name = 'sluice-snapshot {key} {snapshot}'", "the holder published nothing")
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        connection.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        connection.execute("SELECT pg_advisory_xact_lock_shared(%s, 0)", (key,))  # returns once the holder saw it
        assert connection.execute(f"SELECT count(*) FROM {SCHEMA}.accounts").fetchone() == (ROWS,)
        connection.execute("COMMIT")
    _assert_no_holder_left(within_s=5.0)


def test_an_unsplit_read_needs_no_holder(accounts) -> None:
    source = open_source("snap", PG_URL, partitions=1)
    (task,) = source.tasks(ScanSpec.for_source(source, source.describe(SCHEMA, "accounts"), ("id",)))
    assert task.snapshot_group is None
    assert sum(batch.num_rows for batch in source.read(task)) == ROWS


def test_a_cancelled_job_leaves_no_snapshot_holder_past_its_lease(spark, accounts) -> None:
    """A job cancelled after its first wave of partitions never starts the rest, which
    never join: the holder ends ``statement_timeout_s`` (here 3 s) after the last join, not
    after the 600 s default, and no session of the read is left."""
    from pyspark.sql.functions import udf

    fed = Federation(spark=spark)
    fed.attach("snapc", PG_URL, partitions=PARTITIONS, statement_timeout_s=3)

    def slowly(i: int) -> int:
        time.sleep(0.002)
        return i

    slow = udf(slowly, "bigint")  # ~10 s per partition: the later waves wait
    frame = fed.sql(f"SELECT id FROM snapc.{accounts}").select(slow("id"))
    group = "sluice-snapshot-cancel"
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        spark.sparkContext.setJobGroup(group, "consistent reads test: cancelled on purpose", interruptOnCancel=True)
        try:
            frame.write.format("noop").mode("overwrite").save()
        except BaseException as error:  # noqa: BLE001 - the cancellation is the expected outcome
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        while not first_value(
            connection.execute(
                f"SELECT count(*) FROM {SESSIONS} WHERE application_name LIKE 'sluice-snapshot%'"
            ).fetchone()
        ):
            assert time.monotonic() < deadline and thread.is_alive(), "no holder started"
            time.sleep(0.05)
    time.sleep(1.0)
    spark.sparkContext.cancelJobGroup(group)
    thread.join(30)
    assert not thread.is_alive() and "cancel" in str(outcome.get("error", "")).lower()
    _assert_no_holder_left(within_s=15.0)
    _assert_no_session(
        "application_name = 'sluice' AND query LIKE '%sluice_snapshot%'", 15.0, "a partition's session outlived the job"
    )
