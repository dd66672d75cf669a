"""The demo's lake: ten million telemetry readings in Iceberg, and the missions they belong to.

``space.db`` (SQLite) holds the five missions; ``lake/`` holds an Iceberg catalog and
warehouse with ``telemetry.readings``, written by the Spark ingestion pipeline
(:mod:`sluice.lake.ingest`) in two jobs, one per week of readings. A lake that already
holds exactly the requested rows in those two snapshots is reused, so a second
``make demo`` does not ingest again.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from sluice.lake import telemetry
from sluice.lake.catalog import LakeLocation
from tools.demo.queries import DemoQuery

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_READINGS = 10_000_000
#: the demo ingests in one job per week of readings (see :func:`_weeks`)
INGEST_JOBS = ("first week", "second week")
#: mission id (as the generator draws them) -> name, agency, launch date, orbit
MISSIONS = {
    101: ("Kestrel", "ESA", dt.date(2019, 4, 2), "LEO"),
    102: ("Ørsted Relay", "DTU Space", dt.date(2021, 9, 14), "GEO"),
    205: ("Tanager", "NASA", dt.date(2022, 1, 30), "SSO"),
    311: ("Hayabusa-Ξ", "JAXA", dt.date(2023, 6, 8), "heliocentric"),
    412: ("Colibrí", "AEM", dt.date(2024, 11, 21), "LEO"),
}

LAKE_QUERIES = (
    DemoQuery(
        "lake: partitions",
        "Lake: one mission, one day (identity + day partitions)",
        """
SELECT m.name, r.sensor, count(*) AS readings, count_if(isnan(r.voltage)) AS nan_glitches,
       round(min(r.voltage), 3) AS min_voltage
FROM lake.telemetry.readings r
JOIN space.missions m ON m.mission_id = r.mission_id
WHERE r.mission_id = 102
  AND r.ts >= TIMESTAMP '2025-03-09 00:00:00' AND r.ts < TIMESTAMP '2025-03-10 00:00:00'
GROUP BY m.name, r.sensor
ORDER BY r.sensor""",
        "mission_id is an identity partition and the ts range covers exactly one day(ts) partition: the "
        "manifests' and files' partition values decide, every kept file matches entirely and is read "
        "without a row filter. (The session time zone is UTC, so midnight is a day boundary.)",
    ),
    DemoQuery(
        "lake: row groups",
        "Lake: a payload range (clustering column) joined with missions",
        """
SELECT m.name, m.agency, r.payload_id, r.status, count(*) AS readings
FROM lake.telemetry.readings r
JOIN space.missions m ON m.mission_id = r.mission_id
WHERE r.payload_id BETWEEN 311002 AND 311003 AND r.status <> 'OK'
GROUP BY m.name, m.agency, r.payload_id, r.status
ORDER BY r.payload_id, r.status""",
        "payload_id is bucketed, and bucket() cannot prune a range: the partition level keeps everything. "
        "But rows are sorted by payload_id within each file, so file and row-group statistics do the "
        "pruning; DuckDB applies both conjuncts exactly to what is read.",
    ),
    DemoQuery(
        "lake: NaN-safe",
        "Lake: hot readings by agency (float comparison, NaN-safe pruning)",
        """
SELECT m.agency, count(*) AS hot_readings, max(r.temperature) AS hottest
FROM lake.telemetry.readings r
JOIN space.missions m ON m.mission_id = r.mission_id
WHERE r.temperature > 59.9 AND r.day = DATE '2025-03-12'
GROUP BY m.agency
ORDER BY m.agency""",
        "In Spark NaN > 59.9 is TRUE (NaN sorts above everything): the sensor glitches count as hot, "
        "which is why 'hottest' is NaN. Min/max statistics leave NaN out, so the conjunct prunes as "
        "'temperature > 59.9 OR is_nan(temperature)' and no file holding a NaN is skipped. day is not a "
        "partition column, but its file statistics are tight (day follows ts).",
    ),
)

FLIGHT_QUERY = DemoQuery(
    "flight",
    "Arrow Flight: missions served by an in-process Sluice Flight server",
    """
SELECT m.name, m.orbit, count(*) AS faults
FROM lake.telemetry.readings r
JOIN fl.space.missions m ON m.mission_id = r.mission_id
WHERE r.status = 'FAULT' AND m.orbit = 'LEO'
GROUP BY m.name, m.orbit
ORDER BY m.name""",
    "fl is a Flight service (here: a Sluice Flight server on loopback publishing space.db, "
    "bearer-token protected). The client sends the filter with its request; the server "
    "pushes orbit = 'LEO' into SQLite and answers, in the FlightInfo, that it applied it "
    "EXACTLY, so Spark does not filter again.",
)


def build_space(path: Path) -> None:
    """``space.db``: the missions table (rewritten each run: five rows)."""
    temporary = path.with_name(path.name + ".building")
    temporary.unlink(missing_ok=True)
    with sqlite3.connect(temporary) as connection:
        connection.execute(
            "CREATE TABLE missions (mission_id INTEGER PRIMARY KEY, name TEXT NOT NULL, agency TEXT, "
            "launched DATE, orbit TEXT)"
        )
        connection.executemany(
            "INSERT INTO missions VALUES (?, ?, ?, ?, ?)",
            [
                (mid, name, agency, launched.isoformat(), orbit)
                for mid, (name, agency, launched, orbit) in MISSIONS.items()
            ],
        )
    connection.close()
    os.replace(temporary, path)


def build_lake(spark: SparkSession, directory: Path, readings: int, rebuild: bool, console: Console) -> str:
    """The lake URL, after ingesting ``readings`` rows unless a lake with exactly those is there."""
    from sluice.lake.ingest import ingest

    location = LakeLocation.from_url(f"iceberg+sqlite:///{directory / 'lake' / 'catalog.db'}")
    if not rebuild and _holds(location, readings):
        console.print(f"lake: {readings:,} readings already ingested in {directory / 'lake'}")
        return location.url
    shutil.rmtree(directory / "lake", ignore_errors=True)
    console.print(f"lake: ingesting {readings:,} telemetry readings with Spark, one job per week (progress below)")
    for week, frame in _weeks(spark, readings):
        summary = ingest(
            spark, location.url, source=frame, report=lambda line: console.print(f"  {line}", highlight=False)
        )
        console.print(f"lake: {week}: {summary}", highlight=False)
    return location.url


def _weeks(spark: SparkSession, readings: int) -> list[tuple[str, DataFrame]]:
    """The generated readings split at mid-window: two appends, so two manifests whose
    partition summaries (day ranges) let a one-day query skip a whole manifest."""
    from pyspark.sql import functions as F

    from sluice.lake.generate import WINDOW_DAYS, WINDOW_START
    from sluice.lake.generate import telemetry as generated

    frame = generated(spark, readings)
    middle = F.lit(WINDOW_START + dt.timedelta(days=WINDOW_DAYS // 2))
    return list(zip(INGEST_JOBS, (frame.where(F.col("ts") < middle), frame.where(F.col("ts") >= middle)), strict=True))


def _holds(location: LakeLocation, readings: int) -> bool:
    """True when the lake's readings table holds the two weekly snapshots of ``readings`` rows."""
    if not os.path.isfile(location.catalog_path):
        return False
    from sluice.lake.catalog import open_catalog

    try:
        table = open_catalog(location).load_table((telemetry.NAMESPACE, telemetry.TABLE))
    except Exception:  # noqa: BLE001 - a missing or unreadable table means: build it again
        return False
    snapshot = table.current_snapshot()
    if snapshot is None or len(table.snapshots()) != len(INGEST_JOBS) or snapshot.summary is None:
        return False
    return int(snapshot.summary.additional_properties.get("total-records", -1)) == readings
