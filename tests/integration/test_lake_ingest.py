"""The Spark ingest pipeline: rows in equal rows out, partitions right, failures leave no trace.

Uses the shared ``spark`` session (tests/conftest.py, America/New_York, so a UTC-day bug
shows) and a fresh lake in tmp_path per test. Inputs are slices of the generated
telemetry (a few missions and days) so each job writes a handful of files, not the
demo's two hundred. The expected partitions are computed with PyIceberg's transforms,
never with the pipeline's own code.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyiceberg.conversions import from_bytes
from pyiceberg.transforms import BucketTransform, DayTransform
from pyiceberg.types import DoubleType, LongType, TimestamptzType

from sluice.cli import main
from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, load_table, open_catalog
from sluice.lake.commit import JOB_PROPERTY
from sluice.lake.generate import telemetry
from sluice.lake.ingest import ingest

pytestmark = pytest.mark.integration

bucket = BucketTransform(4).transform(LongType())
day = DayTransform().transform(TimestamptzType())
REPO = Path(__file__).resolve().parents[2]


def quiet(line: str) -> None:
    """Progress lines are not under test."""


def lake_url(folder: Path) -> str:
    return f"iceberg+sqlite:///{folder}/catalog.db"


def readings_table(url: str):
    return load_table(open_catalog(LakeLocation.from_url(url)), "telemetry", "readings")


def readings(spark, rows: int, missions: tuple[int, ...], days: int):
    """Generated telemetry for ``missions`` on the first ``days`` days of the window."""
    from pyspark.sql import functions as F

    frame = telemetry(spark, rows)
    return frame.where(F.col("mission_id").isin(*missions) & (F.col("day") < F.date_add(F.lit("2025-03-01"), days)))


def local(path: str) -> str:
    return path.removeprefix("file://")


def data_files(table):
    return [task.file for task in table.scan().plan_files()]


def expected_partition_counts(frame) -> Counter:
    """Rows per (mission_id, day(ts), bucket(payload_id)) from Spark's groupBy and PyIceberg's transforms."""
    from pyspark.sql import functions as F

    utc_day = F.floor(F.unix_micros("ts") / 86_400_000_000).alias("utc_day")
    counts: Counter = Counter()
    for row in frame.groupBy("mission_id", "payload_id", utc_day).count().collect():
        counts[(row.mission_id, row.utc_day, bucket(row.payload_id))] += row["count"]
    return counts


def leftovers(url: str) -> list[str]:
    """Files and folders under the table's data folder that hold no file a snapshot references."""
    table = readings_table(url)
    data = Path(local(table.location())) / "data"
    referenced = {
        Path(local(task.file.file_path))
        for snapshot in table.snapshots()
        for task in table.scan(snapshot_id=snapshot.snapshot_id).plan_files()
    }
    needed = referenced | {parent for path in referenced for parent in path.parents}
    return sorted(str(path) for path in data.rglob("*") if path not in needed)


def test_rows_and_partitions_match_the_input(spark, tmp_path: Path) -> None:
    url = lake_url(tmp_path)
    frame = readings(spark, 100_000, missions=(102, 205, 412), days=2).cache()
    summary = ingest(spark, url, frame, report=quiet)

    table = readings_table(url)
    assert table.scan().to_arrow().num_rows == frame.count() == summary.rows
    assert table.current_snapshot().snapshot_id == summary.snapshot_id
    files = data_files(table)
    assert summary.files == len(files)
    partitions: Counter = Counter()
    for data_file in files:
        partitions[tuple(data_file.partition)] += data_file.record_count
    assert partitions == expected_partition_counts(frame)
    assert len(partitions) == len(files)  # one file per partition and job
    files_with_nan = 0
    for data_file in files:  # every row in a file belongs to the partition the file is filed under
        rows = pq.read_table(local(data_file.file_path))
        mission_id, day_number, payload_bucket = tuple(data_file.partition)
        assert set(rows["mission_id"].to_pylist()) == {mission_id}
        assert {day(micros) for micros in pc.cast(rows["ts"], "int64").to_pylist()} == {day_number}
        assert {bucket(payload_id) for payload_id in rows["payload_id"].to_pylist()} == {payload_bucket}
        assert rows.schema.field("ts").type.unit == "us" and str(rows.schema.field("ts").type.tz) == "UTC"
        assert rows["day"].to_pylist() == [ts.date() for ts in rows["ts"].to_pylist()]  # day is the UTC date
        order = list(zip(rows["payload_id"].to_pylist(), pc.cast(rows["ts"], "int64").to_pylist()))
        assert order == sorted(order)  # clustered by payload_id, ts
        assert data_file.sort_order_id == table.sort_order().order_id
        for name in ("voltage", "temperature"):  # bounds, where given, hold every number and are no NaN
            field_id = table.schema().find_field(name).field_id
            values = [value for value in rows[name].to_pylist() if value is not None]
            numbers = [value for value in values if not math.isnan(value)]
            files_with_nan += len(numbers) < len(values)
            if field_id in data_file.lower_bounds:
                assert from_bytes(DoubleType(), data_file.lower_bounds[field_id]) <= min(numbers)
            if field_id in data_file.upper_bounds:
                assert from_bytes(DoubleType(), data_file.upper_bounds[field_id]) >= max(numbers)
    assert files_with_nan > 0  # the generated glitches reach the files
    assert leftovers(url) == []  # no staging folder, no _SUCCESS or .crc beside the data
    assert spark.conf.get("spark.sql.parquet.outputTimestampType") != "TIMESTAMP_MICROS"  # put back
    frame.unpersist()


def test_appending_twice_makes_two_snapshots(spark, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    url = lake_url(tmp_path)
    first = readings(spark, 40_000, missions=(205,), days=1)
    second = readings(spark, 40_000, missions=(412,), days=2).withColumn("payload_id", F.col("payload_id").cast("int"))
    one = ingest(spark, url, first, report=quiet)
    two = ingest(spark, url, second, report=quiet)  # an int payload_id widens to the table's long

    table = readings_table(url)
    assert [snapshot.snapshot_id for snapshot in table.snapshots()] == [one.snapshot_id, two.snapshot_id]
    assert table.current_snapshot().summary[JOB_PROPERTY] == two.job_id
    assert table.scan().to_arrow().num_rows == one.rows + two.rows == first.count() + second.count()
    assert table.scan(snapshot_id=one.snapshot_id).to_arrow().num_rows == one.rows

    nothing = ingest(spark, url, first.limit(0), report=quiet)  # no rows: no snapshot, no folder
    assert nothing.snapshot_id is None and nothing.rows == 0
    assert len(readings_table(url).snapshots()) == 2 and leftovers(url) == []


def test_schema_mismatch_names_the_column(spark, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    url = lake_url(tmp_path)
    frame = (
        readings(spark, 1_000, missions=(205,), days=1)
        .withColumn("voltage", F.col("voltage").cast("string"))
        .drop("status")
        .withColumn("spare", F.lit(1))
    )
    with pytest.raises(ConfigError) as caught:
        ingest(spark, url, frame, report=quiet)
    message = str(caught.value)
    assert "column voltage: the table has double" in message and "the input has string" in message
    assert "missing column(s) status" in message  # spare would be added: the table evolves
    # the lake the job created (catalog file, warehouse, table) is gone again
    assert not (tmp_path / "catalog.db").exists() and not (tmp_path / "warehouse").exists()

    with pytest.raises(ConfigError, match="column ts: the table has timestamp .* the input has timestamp_ntz"):
        ingest(
            spark,
            url,
            readings(spark, 1_000, missions=(205,), days=1).withColumn("ts", F.col("ts").cast("timestamp_ntz")),
            report=quiet,
        )


def test_required_column_rejects_a_nullable_input(spark) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import NestedField

    from sluice.lake.conform import conform

    schema = Schema(NestedField(1, "payload_id", LongType(), required=True))
    with pytest.raises(ConfigError, match="column payload_id: the table requires a value"):
        conform(spark.sql("SELECT CAST(NULL AS BIGINT) AS payload_id"), schema, "t.required")


def test_a_failed_job_leaves_the_table_as_it_was(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pyiceberg.table import Transaction
    from pyspark.sql import functions as F

    url = lake_url(tmp_path)
    before = ingest(spark, url, readings(spark, 20_000, missions=(205,), days=1), report=quiet)

    # 1. Spark fails while running the job: an executor raises on one row
    poisoned = readings(spark, 20_000, missions=(412,), days=1)
    poisoned = poisoned.withColumn(
        "voltage", F.when(F.col("payload_id") == 412002, F.raise_error(F.lit("injected"))).otherwise(F.col("voltage"))
    )
    with pytest.raises(Exception, match="injected"):
        ingest(spark, url, poisoned, report=quiet)

    # 2. every file is written, then the catalog refuses the commit
    def refuse(self: Transaction) -> None:
        raise RuntimeError("catalog unavailable")

    monkeypatch.setattr(Transaction, "commit_transaction", refuse)
    with pytest.raises(RuntimeError, match="catalog unavailable"):
        ingest(spark, url, readings(spark, 20_000, missions=(412,), days=1), report=quiet)
    monkeypatch.undo()

    table = readings_table(url)
    assert [snapshot.snapshot_id for snapshot in table.snapshots()] == [before.snapshot_id]
    assert table.scan().to_arrow().num_rows == before.rows
    assert leftovers(url) == []
    assert [path.name for path in (Path(local(table.location())) / "data").iterdir()] == [before.job_id]


KILLED_JOB = """
import sys
from sluice.lake.ingest import ingest
from sluice.spark.session import build_session
spark = build_session(conf={"spark.sql.shuffle.partitions": "2"})
ingest(spark, sys.argv[1], rows=100_000)
"""


def test_a_killed_job_leaves_no_referenced_file(spark, tmp_path: Path) -> None:
    url = lake_url(tmp_path)
    before = ingest(spark, url, readings(spark, 20_000, missions=(205,), days=1), report=quiet)
    data = Path(local(readings_table(url).location())) / "data"

    job = subprocess.Popen(
        [sys.executable, "-c", KILLED_JOB, url],
        cwd=REPO,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while not any(data.glob("_staging-*/**/*.parquet")) and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job.poll() is None, "the job ended before it wrote a file"
        assert any(data.glob("_staging-*/**/*.parquet")), "no staged file appeared in time"
    finally:
        os.killpg(job.pid, signal.SIGKILL)  # the job's own process group: its Python and its Spark JVM
        job.wait()

    table = readings_table(url)
    assert [snapshot.snapshot_id for snapshot in table.snapshots()] == [before.snapshot_id]
    assert table.scan().to_arrow().num_rows == before.rows
    referenced = [local(data_file.file_path) for data_file in data_files(table)]
    assert all(os.path.isfile(path) and "/_staging-" not in path for path in referenced)
    assert any(path.name.startswith("_staging-") for path in data.iterdir())  # left behind, as documented


def test_cli_ingests_a_csv_file(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pyspark.sql import functions as F

    frame = readings(spark, 60_000, missions=(205,), days=1)
    csv = tmp_path / "readings-csv"
    frame.write.csv(str(csv), header=True)
    url = lake_url(tmp_path / "lake")

    assert main(["lake", "ingest", url, "--from", str(csv), "--format", "csv"], spark=spark) == 0
    assert "snapshot" in capsys.readouterr().out
    ingested = readings_table(url).scan().to_arrow()
    assert ingested.num_rows == frame.count()
    expected = frame.agg(
        F.count_if(F.isnan("voltage")),
        F.count_if(F.col("voltage").isNull()),
        F.count_if(F.col("message") == ""),
        F.count_if(F.col("message").isNull()),
    ).first()
    found = (
        pc.sum(pc.is_nan(ingested["voltage"])).as_py(),
        ingested["voltage"].null_count,
        pc.sum(pc.equal(ingested["message"], "")).as_py(),
        ingested["message"].null_count,
    )
    assert found == tuple(expected)  # NaN, NULL and '' survive the CSV round trip
    assert all(count > 0 for count in found)

    assert main(["lake", "ingest", url, "--from", str(csv)], spark=spark) == 2  # a folder: which format?
    assert "give a format" in capsys.readouterr().err
    assert main(["lake", "ingest", url, "--from", str(csv), "--demo-rows", "5"]) == 2  # no Spark needed to refuse these
    assert "cannot be combined with --from" in capsys.readouterr().err
    assert main(["lake", "ingest", "sqlite:///lake.db"]) == 2
    assert "lake URLs start with iceberg+sqlite://" in capsys.readouterr().err


def test_cli_generates_demo_rows_only_when_asked(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bare ``sluice lake ingest URL`` once wrote 10M made-up rows into the user's lake: now it
    says what it needs and writes nothing; ``--demo-rows N`` writes exactly N."""
    url = lake_url(tmp_path / "lake")
    assert main(["lake", "ingest", url, "--demo-rows", "7"], spark=spark) == 0
    assert readings_table(url).scan().to_arrow().num_rows == 7
    capsys.readouterr()
    assert main(["lake", "ingest", url], spark=spark) == 2
    refusal = capsys.readouterr().err
    assert "--from PATH" in refusal and "--demo-rows N" in refusal
    assert len(readings_table(url).snapshots()) == 1  # nothing written
