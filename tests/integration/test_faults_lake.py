"""Faults on the lake path: jobs committing at once, a busy catalog, files gone before a read.

Concurrent commits must each land exactly once (PyIceberg refreshes and appends again on
top of the winner) or fail cleanly with nothing appended and the loser's files deleted:
the final table is checked row by row against every job's input through a key column
(``message`` holds ``<job>-<n>``). A data file that disappears between planning and
reading must fail the query with the table and the file named, never return fewer rows.

The commit races stage their files with pyarrow (no Spark: each job's files are written
in the layout Spark would write, then committed by the pipeline's own commit step from
threads released together). Two real ``ingest`` jobs also run at once on the shared Spark
session.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import LongType

from sluice import Federation
from sluice.errors import BindError, SluiceError, SourceError
from sluice.lake import telemetry as layout
from sluice.lake.catalog import LakeLocation, load_table, open_catalog
from sluice.lake.commit import JOB_PROPERTY, WrittenFiles, collect_data_files, commit_data_files
from sluice.lake.ingest import IngestSummary, ingest
from sluice.lake.partitioning import partition_columns
from sluice.scan.spec import ScanSpec
from sluice.sources import open_scan_source
from sluice.sources.base import ReadTask
from sluice.sources.iceberg import IcebergSource
from tests.integration.test_lake_ingest import data_files, leftovers, local, quiet, readings

pytestmark = pytest.mark.integration

bucket = BucketTransform(layout.BUCKETS).transform(LongType())
DAY = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)


def lake_url(folder: Path) -> str:
    return f"iceberg+sqlite:///{folder}/catalog.db"


def fresh_table(url: str):
    """The readings table, newly loaded from the catalog (its own metadata snapshot)."""
    return load_table(open_catalog(LakeLocation.from_url(url)), "telemetry", "readings")


def stage(url: str, job: str, rows: int) -> WrittenFiles:
    """Write ``rows`` readings of mission 101 on 2025-03-01 as Spark would (one folder per
    partition under ``_staging-<job>``), then turn them into DataFiles as the pipeline does.

    ``message`` is ``<job>-<n>``: a key that tells every row's job and number.
    """
    table = fresh_table(url)
    data = f"{local(table.location())}/data"
    staging, final = f"{data}/_staging-{job}", f"{data}/{job}"
    numbers = range(rows)
    for part in range(layout.BUCKETS):
        picked = [n for n in numbers if bucket(101_001 + n % 4) == part]
        if not picked:
            continue
        folder = Path(staging, "mission_id_identity=101", "ts_day=2025-03-01", f"payload_id_bucket={part}")
        folder.mkdir(parents=True)
        pq.write_table(
            pa.table(
                {
                    "mission_id": pa.array([101] * len(picked), pa.int32()),
                    "payload_id": pa.array([101_001 + n % 4 for n in picked], pa.int64()),
                    "sensor": ["bus_voltage"] * len(picked),
                    "ts": pa.array([DAY + dt.timedelta(seconds=n) for n in picked], pa.timestamp("us", "UTC")),
                    "day": pa.array([DAY.date()] * len(picked)),
                    "voltage": [28.0] * len(picked),
                    "temperature": [20.0] * len(picked),
                    "status": ["OK"] * len(picked),
                    "message": [f"{job}-{n}" for n in picked],
                }
            ),
            folder / "part-00000.parquet",
        )
    written = collect_data_files(
        table,
        partition_columns(table.spec(), table.schema()),
        f"file://{staging}",
        f"file://{final}",
        table.sort_order().order_id,
    )
    os.rename(staging, final)
    return written


def race(work: dict[str, Callable[..., object]], timeout_s: float) -> dict[str, object]:
    """Run every job's ``work`` in its own thread, released together; each one's result or error."""
    barrier = threading.Barrier(len(work))
    outcome: dict[str, object] = {}

    def run(job: str) -> None:
        barrier.wait()
        try:
            outcome[job] = work[job]()
        except Exception as error:  # noqa: BLE001 - the test inspects it
            outcome[job] = error

    threads = [threading.Thread(target=run, args=(job,), daemon=True) for job in work]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), f"a job still runs after {timeout_s} s"
    return outcome


def keys_by_job(url: str) -> Counter:
    """How many rows of each job the current snapshot holds; fails on a duplicated key."""
    messages = fresh_table(url).scan(selected_fields=("message",)).to_arrow()["message"].to_pylist()
    duplicated = [key for key, count in Counter(messages).items() if count > 1]
    assert not duplicated, f"{len(duplicated)} keys appear twice, e.g. {duplicated[:3]}"
    return Counter(key.rsplit("-", 1)[0] for key in messages)


def job_snapshots(url: str) -> Counter:
    return Counter(s.summary.get(JOB_PROPERTY) for s in fresh_table(url).snapshots() if s.summary is not None)


@pytest.fixture
def lake(tmp_path: Path) -> str:
    url = lake_url(tmp_path)
    layout.create_readings(open_catalog(LakeLocation.from_url(url), create=True))
    return url


# ---------------------------------------------------------------- commits racing
def test_jobs_committing_at_once_each_land_exactly_once(lake: str, caplog: pytest.LogCaptureFixture) -> None:
    sizes = {"job-a": 700, "job-b": 500, "job-c": 300, "job-d": 100}
    staged = {job: stage(lake, job, rows) for job, rows in sizes.items()}
    # each job holds the table as it was before any commit, so all but one must lose a race
    tables = {job: fresh_table(lake) for job in sizes}
    with caplog.at_level(logging.WARNING, logger="pyiceberg"):
        outcome = race(
            {job: (lambda job=job: commit_data_files(tables[job], staged[job].data_files, job)) for job in sizes},
            timeout_s=60,
        )
    assert outcome == {job: None for job in sizes}
    assert keys_by_job(lake) == sizes
    assert job_snapshots(lake) == {job: 1 for job in sizes}
    retries = [r for r in caplog.records if "Commit failed due to a concurrent update" in r.getMessage()]
    assert len(retries) >= len(sizes) - 1  # the race really happened: every loser refreshed and appended again
    history = fresh_table(lake).snapshots()
    assert [s.parent_snapshot_id for s in history[1:]] == [s.snapshot_id for s in history[:-1]]  # one line, no fork


def test_a_commit_that_keeps_losing_fails_with_nothing_appended(lake: str) -> None:
    table = fresh_table(lake)
    with table.transaction() as transaction:
        transaction.set_properties(**{"commit.retry.num-retries": "0"})
    staged = {job: stage(lake, job, 200) for job in ("job-a", "job-b")}
    tables = {job: fresh_table(lake) for job in staged}
    outcome = race(
        {job: (lambda job=job: commit_data_files(tables[job], staged[job].data_files, job)) for job in staged},
        timeout_s=60,
    )
    [winner] = [job for job, result in outcome.items() if result is None]
    [loser] = [job for job, result in outcome.items() if result is not None]
    assert isinstance(outcome[loser], SluiceError)
    message = str(outcome[loser])
    assert message.startswith(f"lake table telemetry.readings: the commit of job {loser} kept losing the race")
    assert (
        "retried up to 0 times, table property commit.retry.num-retries" in message
        and "nothing was appended" in message
    )
    assert keys_by_job(lake) == {winner: 200}
    assert job_snapshots(lake) == {winner: 1}


def test_a_catalog_locked_past_its_busy_timeout_is_retried_and_appends_once(lake: str) -> None:
    staged = stage(lake, "job-a", 300)
    table = fresh_table(lake)
    # another program holds the catalog's write lock for 8 s: longer than SQLite's 5 s busy timeout
    holder = sqlite3.connect(LakeLocation.from_url(lake).catalog_path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(8.0, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    try:
        commit_data_files(table, staged.data_files, "job-a")
    finally:
        release.join()
        holder.close()
    assert time.monotonic() - started > 8.0  # it did wait for the lock, past one busy timeout
    assert keys_by_job(lake) == {"job-a": 300}
    assert job_snapshots(lake) == {"job-a": 1}


def test_a_catalog_that_keeps_failing_the_commit_gives_a_clear_error_and_appends_nothing(lake: str) -> None:
    staged = stage(lake, "job-a", 300)
    table = fresh_table(lake)
    with sqlite3.connect(LakeLocation.from_url(lake).catalog_path) as catalog:  # every commit's UPDATE now fails
        catalog.execute(
            "CREATE TRIGGER refuse BEFORE UPDATE ON iceberg_tables "
            "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"
        )
    catalog.close()
    with pytest.raises(SluiceError) as failure:
        commit_data_files(table, staged.data_files, "job-a")
    assert str(failure.value) == (
        "lake table telemetry.readings: the catalog kept failing the commit of job job-a "
        "(refused by a test trigger) through 3 attempts; nothing was appended, run the job again"
    )
    assert keys_by_job(lake) == {} and job_snapshots(lake) == {}


# ---------------------------------------------------------------- two real ingest jobs
def keyed(spark, job: str, rows: int):
    """Generated readings of one mission and day, ``message`` made the ``<job>-<n>`` key."""
    from pyspark.sql import functions as F

    frame = readings(spark, rows, missions=(205,), days=1)
    return frame.withColumn("message", F.concat(F.lit(f"{job}-"), F.monotonically_increasing_id().cast("string")))


def input_counts(frames: dict) -> Counter:
    """Rows of each job's input, in one Spark job."""
    from functools import reduce

    from pyspark.sql import functions as F

    union = reduce(lambda a, b: a.unionByName(b), frames.values())
    rows = union.groupBy(F.substring_index("message", "-", 2).alias("job")).count().collect()
    return Counter({row.job: row["count"] for row in rows})


def test_two_ingest_jobs_at_once_into_a_new_lake_both_land(spark, tmp_path: Path) -> None:
    url = lake_url(tmp_path)  # no catalog yet: both jobs create it, its namespace and its table
    frames = {"job-a": keyed(spark, "job-a", 12_000), "job-b": keyed(spark, "job-b", 8_000)}
    expected = input_counts(frames)
    outcome = race(
        {job: (lambda job=job: ingest(spark, url, frames[job], report=quiet)) for job in frames}, timeout_s=120
    )
    assert all(not isinstance(result, Exception) for result in outcome.values()), outcome
    assert keys_by_job(url) == expected
    summaries = {job: cast(IngestSummary, result).job_id for job, result in outcome.items()}
    assert job_snapshots(url) == {job_id: 1 for job_id in summaries.values()}
    assert leftovers(url) == []
    assert spark.conf.get("spark.sql.parquet.outputTimestampType", None) is None  # the setting was put back
    # every file of both jobs was written while the setting held: ts is INT64 microseconds, never INT96
    footers = [pq.read_metadata(local(data_file.file_path)) for data_file in data_files(fresh_table(url))]
    assert {footer.schema.column(3).physical_type for footer in footers} == {"INT64"}


def test_an_ingest_job_that_loses_the_commit_race_deletes_its_files(spark, lake: str) -> None:
    table = fresh_table(lake)
    with table.transaction() as transaction:
        transaction.set_properties(**{"commit.retry.num-retries": "0"})
    frames = {"job-a": keyed(spark, "job-a", 6_000), "job-b": keyed(spark, "job-b", 6_000)}
    # both jobs load the table when they start, so the one that commits second holds stale metadata
    outcome = race(
        {job: (lambda job=job: ingest(spark, lake, frames[job], report=quiet)) for job in frames}, timeout_s=120
    )
    [winner] = [job for job, result in outcome.items() if not isinstance(result, Exception)]
    [loser] = [job for job, result in outcome.items() if isinstance(result, Exception)]
    assert isinstance(outcome[loser], SluiceError) and "kept losing the race" in str(outcome[loser])
    won = cast(IngestSummary, outcome[winner])
    assert keys_by_job(lake) == {winner: won.rows}
    assert leftovers(lake) == []  # the loser's files are gone
    data = Path(local(fresh_table(lake).location())) / "data"
    assert [path.name for path in data.iterdir()] == [won.job_id]


# ---------------------------------------------------------------- files gone before the read
@pytest.fixture(scope="module")
def small_lake(spark, tmp_path_factory) -> str:
    url = lake_url(tmp_path_factory.mktemp("faults-lake-read"))
    ingest(spark, url, readings(spark, 20_000, missions=(205, 412), days=2), report=quiet)
    return url


@pytest.fixture
def lake_fed(spark, small_lake: str) -> Federation:
    federation = Federation(spark=spark)
    federation.attach("lake", small_lake)
    return federation


def set_aside(path: str, folder: Path) -> Callable[[], object]:
    """Move a data file out of the lake; returns what puts it back."""
    aside = folder / Path(path).name
    shutil.move(path, aside)
    return lambda: shutil.move(aside, path)


def planned_files(tasks: list[ReadTask]) -> list[str]:
    return [read["path"] for task in tasks for read in json.loads(task.request)["files"]]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT mission_id, ts FROM lake.telemetry.readings",
        "SELECT mission_id, ts FROM lake.telemetry.readings WHERE payload_id <> 412001",
    ],
)
def test_a_data_file_deleted_after_planning_fails_the_read(
    lake_fed: Federation, small_lake: str, tmp_path: Path, query: str
) -> None:
    """Both read paths: files streamed as they are, and files filtered by DuckDB."""
    [scan] = lake_fed.plan(query).scans
    source = open_scan_source(scan.spec, None)
    tasks = source.tasks(scan.spec)
    files = planned_files(tasks)
    gone = files[len(files) // 2]
    put_back = set_aside(local(gone), tmp_path)
    rows = 0
    try:
        with pytest.raises(SourceError) as failure:
            for task in tasks:
                for batch in source.read(task):
                    rows += batch.num_rows
    finally:
        put_back()
    assert rows < sum(len(batch) for task in tasks for batch in source.read(task))  # the whole answer, file back
    message = str(failure.value)
    assert message.startswith("source 'lake': lake table lake.telemetry.readings (snapshot "), message
    assert f"data file {gone} is missing (deleted after the scan was planned?)" in message, message


def test_a_spark_query_over_a_missing_data_file_fails_naming_it(
    lake_fed: Federation, small_lake: str, tmp_path: Path
) -> None:
    gone = local(data_files(fresh_table(small_lake))[0].file_path)
    put_back = set_aside(gone, tmp_path)
    try:
        with pytest.raises(Exception) as failure:
            lake_fed.sql("SELECT count(*) AS n FROM lake.telemetry.readings").collect()
    finally:
        put_back()
    message = str(failure.value)
    assert "source 'lake': lake table lake.telemetry.readings" in message and gone in message, message[:3000]
    assert "missing" in message, message[:3000]


def test_a_vectorised_read_over_a_data_file_missing_at_read_time_fails_naming_it(
    lake_fed: Federation, small_lake: str, tmp_path: Path
) -> None:
    """Spark's Parquet reader (a full scan): planning finds the footer cached, the read fails."""
    query = "SELECT mission_id, ts FROM lake.telemetry.readings"
    lake_fed.spark.conf.set("spark.sluice.lakeReader", "vectorised")  # a small table: auto reads it on the driver
    try:
        assert "Reader: Spark's vectorised Parquet reader" in lake_fed.explain(query)
        expected = len(lake_fed.sql(query).collect())  # every footer read and cached
        gone = local(data_files(fresh_table(small_lake))[0].file_path)
        put_back = set_aside(gone, tmp_path)
        try:
            with pytest.raises(Exception) as failure:
                lake_fed.sql(query).collect()
        finally:
            put_back()
    finally:
        lake_fed.spark.conf.unset("spark.sluice.lakeReader")
    message = str(failure.value)
    assert "lake table lake.telemetry.readings (snapshot " in message and gone in message, message[:3000]
    assert "missing (deleted after the scan was planned?)" in message, message[:3000]
    assert len(lake_fed.sql(query).collect()) == expected


def test_a_table_dropped_after_planning_reads_its_planned_snapshot_and_is_then_unknown(small_lake: str) -> None:
    """Dropping a table (files kept) does not change a planned scan; the next plan names the table as gone."""
    catalog = open_catalog(LakeLocation.from_url(small_lake))
    original = fresh_table(small_lake)
    catalog.register_table(("telemetry", "doomed"), original.metadata_location)
    rows = original.scan().to_arrow().num_rows
    source = IcebergSource("lake", small_lake)
    spec = ScanSpec.for_source(
        source, source.describe("telemetry", "doomed"), ("mission_id", "payload_id"), partitions=2
    )
    tasks = source.tasks(spec)
    catalog.drop_table(("telemetry", "doomed"))
    assert sum(len(batch) for task in tasks for batch in source.read(task)) == rows
    with pytest.raises(
        BindError,
        match=r"^source 'lake' has no table telemetry\.doomed \(none of the 1 table\(s\) in telemetry is close\)$",
    ):
        source.tasks(spec)
