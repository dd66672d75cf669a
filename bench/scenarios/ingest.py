"""Ingest scenario: Sluice's lake ingest with ``day(ts), bucket(16, id)`` vs Spark's plain
``df.write.partitionBy(...).parquet`` of the same rows, side by side.

Issue 16's targets: an ingest of N rows with a day x bucket spec in at most 1.3x the time of
a plain partitioned Parquet write of the same rows, and at most one file per partition
after a 2,000-row ingest.

The rows (``id``, ``ts`` over 30 days, ``station``, ``temp``) are generated once per scale
into a Parquet folder under the data directory (outside the timing); both paths read that
folder, so reading and decoding the input costs the same in each. Paths, each writing a
new folder (or table) per run:

- baseline: ``spark.read.parquet(input)`` plus Spark's own day and bucket columns
  (``to_date(ts)``, ``pmod(hash(id), 16)``: Spark has no Iceberg bucket) and
  ``.write.partitionBy("ts_day", "id_bucket").parquet(out)``: what a Spark user without a
  table format writes;
- Sluice: ``sluice.lake.ingest`` of the same DataFrame into a new lake table partitioned by
  ``day(ts), bucket(16, id)`` (Iceberg's bucket in an Arrow UDF, one file per partition,
  sorted, footers read back and one Iceberg commit).

Outside the timing: every path's output is counted back (rows and files), and a 2,000-row
ingest's files are counted against its partitions. ``--quick`` measures the run's smallest
scale; a full run 1,000,000 rows, or the scales ``--scales`` names (e.g. ``--scales 10M``).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.timing import describe, summary, warmed_rounds

KEY = "ingest"
TITLE = "Lake ingest: Sluice with day(ts), bucket(16, id) vs a plain partitioned df.write.parquet"
COMMAND = "python -m bench --only ingest"
FULL_ROWS = 1_000_000
TIME_LIMIT = 1.3
SMALL_ROWS = 2_000
PARTITION_BY = "day(ts), bucket(16, id)"
DAYS = 30
NAMESPACE = "bench"
BASELINE = "Spark df.write.partitionBy(ts_day, id_bucket).parquet"
SLUICE = "Sluice ingest, day(ts), bucket(16, id)"
#: bump when the generated input changes: kept inputs are rebuilt
INPUT_VERSION = 1


def _input_path(ctx: BenchContext, rows: int) -> str:
    return os.path.abspath(os.path.join(ctx.data_dir, f"ingest-input-v{INPUT_VERSION}-{rows}"))


def _ensure_input(ctx: BenchContext, rows: int) -> tuple[str, bool, float]:
    """The generated input's Parquet folder (kept between runs); whether it was generated, seconds."""
    from pyspark.sql import functions as F

    path, started = _input_path(ctx, rows), time.perf_counter()
    if os.path.exists(os.path.join(path, "_SUCCESS")):
        return path, False, 0.0
    spark = ctx.fed.spark
    stations = F.array(*(F.lit(name) for name in ("Oslo", "Bern", "Zürich", "São Paulo", "Tōkyō", "Lima")))
    frame = spark.range(rows, numPartitions=max(1, rows // 250_000)).select(
        F.col("id"),
        F.timestamp_seconds(F.lit(1_740_787_200) + (F.col("id") * 7_919) % (DAYS * 86_400)).alias("ts"),
        F.element_at(stations, (F.col("id") % 6 + 1).cast("int")).alias("station"),
        (F.rand(seed=7) * 60 - 20).alias("temp"),
    )
    frame.write.mode("overwrite").parquet(path)
    return path, True, time.perf_counter() - started


def _files(folder: str) -> int:
    return sum(1 for path in Path(folder).rglob("*.parquet"))


class _Outputs:
    """A new output folder (or lake table) per run; all removed when the scale ends."""

    def __init__(self, root: str) -> None:
        self.root, self.count = root, 0
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)

    def next(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    @property
    def lake_url(self) -> str:
        return f"iceberg+sqlite:///{self.root}/lake/catalog.db"

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _cases(ctx: BenchContext, input_path: str, outputs: _Outputs, last: dict[str, str]) -> list[Case]:
    from pyspark.sql import functions as F

    from sluice.lake.ingest import ingest

    spark = ctx.fed.spark

    def plain() -> None:
        folder = os.path.join(outputs.root, outputs.next("plain-"))
        last[BASELINE] = folder
        (
            spark.read.parquet(input_path)
            .withColumn("ts_day", F.to_date("ts"))
            .withColumn("id_bucket", F.pmod(F.hash("id"), F.lit(16)))
            .write.partitionBy("ts_day", "id_bucket")
            .parquet(folder)
        )

    def sluice() -> None:
        table = outputs.next("t")
        last[SLUICE] = table
        ingest(
            spark,
            outputs.lake_url,
            spark.read.parquet(input_path),
            namespace=NAMESPACE,
            table=table,
            partition_by=PARTITION_BY,
            report=lambda _: None,
        )

    return [
        Case(KEY, "ingest", BASELINE, plain, baseline=True, note="to_date(ts), pmod(hash(id), 16); no repartition"),
        Case(KEY, "ingest", SLUICE, sluice, note="one Iceberg snapshot; one file per partition, sorted"),
    ]


def _count_back(ctx: BenchContext, cases: list[Case], outputs: _Outputs, last: dict[str, str]) -> dict[str, Any]:
    """Rows and files of each path's last output, outside the timing."""
    from sluice.lake.catalog import LakeLocation, open_catalog

    facts: dict[str, Any] = {}
    for case in cases:
        if case.error is not None or case.path not in last:
            continue
        try:
            if case.path == BASELINE:
                folder = last[BASELINE]
                rows = ctx.fed.spark.read.parquet(folder).count()
                files, partitions = _files(folder), sum(1 for p in Path(folder).glob("*/*") if p.is_dir())
            else:
                table = open_catalog(LakeLocation.from_url(outputs.lake_url)).load_table((NAMESPACE, last[SLUICE]))
                tasks = list(table.scan().plan_files())
                rows = sum(task.file.record_count for task in tasks)
                files = len(tasks)
                partitions = len({tuple(task.file.partition[i] for i in range(2)) for task in tasks})
            case.rows = rows
            case.extra.update({"files": f"{files:,}", "partitions": f"{partitions:,}"})
            facts[case.path] = {"rows": rows, "files": files, "partitions": partitions}
        except Exception as error:  # noqa: BLE001 - a benchmark reports
            case.check = f"check failed: {describe(error)}"
    return facts


def _small_ingest(ctx: BenchContext, input_path: str, outputs: _Outputs) -> dict[str, Any]:
    """Files after a 2,000-row ingest with the day x bucket spec, against its partitions."""
    from pyspark.sql import functions as F

    from sluice.lake.catalog import LakeLocation, open_catalog
    from sluice.lake.ingest import ingest

    spark = ctx.fed.spark
    small = spark.read.parquet(input_path).limit(SMALL_ROWS)
    summary_ = ingest(
        spark,
        outputs.lake_url,
        small,
        namespace=NAMESPACE,
        table="small",
        partition_by=PARTITION_BY,
        report=lambda _: None,
    )
    table = open_catalog(LakeLocation.from_url(outputs.lake_url)).load_table((NAMESPACE, "small"))
    tasks = list(table.scan().plan_files())
    partitions = len({tuple(task.file.partition[i] for i in range(2)) for task in tasks})
    folder = os.path.join(outputs.root, "plain-small")
    (
        small.withColumn("ts_day", F.to_date("ts"))
        .withColumn("id_bucket", F.pmod(F.hash("id"), F.lit(16)))
        .write.partitionBy("ts_day", "id_bucket")
        .parquet(folder)
    )
    plain_partitions = sum(1 for p in Path(folder).glob("*/*") if p.is_dir())
    return {
        "rows": summary_.rows,
        "sluice_files": len(tasks),
        "sluice_partitions": partitions,
        "plain_files": _files(folder),
        "plain_partitions": plain_partitions,
        "input_tasks": small.rdd.getNumPartitions(),
    }


def run(ctx: BenchContext) -> dict[str, Any]:
    scales = [_scale(ctx, rows) for rows in ctx.rows_for(FULL_ROWS)]
    return scenario_result(KEY, TITLE, _about(ctx), scales, [t for s in scales for t in _targets(s)])


def _scale(ctx: BenchContext, rows: int) -> dict[str, Any]:
    log(f"== ingest, {rows:,} rows: preparing the input")
    input_path, generated, seconds = _ensure_input(ctx, rows)
    log(f"  input {input_path}: {'generated' if generated else 'kept'} in {seconds:.1f}s")
    outputs = _Outputs(os.path.abspath(os.path.join(ctx.data_dir, f"ingest-out-{rows}")))
    last: dict[str, str] = {}
    try:
        cases = _cases(ctx, input_path, outputs, last)
        rounds = warmed_rounds(f"ingest, {rows:,} rows", cases, ctx.runs, ctx.seed + rows, log)
        log(f"== ingest, {rows:,} rows: rows and files written, and a {SMALL_ROWS:,}-row ingest")
        written = _count_back(ctx, cases, outputs, last)
        small = _small_ingest(ctx, input_path, outputs)
        log(f"  {SMALL_ROWS:,}-row ingest: {small}")
    finally:
        outputs.remove()
    baseline = next(c for c in cases if c.baseline)
    for case in cases:
        if case.rows is not None:
            case.check = "reference" if case.baseline else "same" if case.rows == baseline.rows else "DIFFERENT rows"
    return {
        "rows": rows,
        "rounds": rounds,
        "results": [summary(c, None if c.baseline else baseline) for c in cases],
        "facts": {
            "input": {"path": input_path, "generated": generated, "seconds": round(seconds, 1)},
            "written": written,
            "small_ingest": small,
        },
    }


def _targets(scale: dict[str, Any]) -> list[dict[str, Any]]:
    rows = scale["rows"]
    records = {r["path"]: r for r in scale["results"]}
    sluice, plain = records.get(SLUICE, {}), records.get(BASELINE, {})
    target = f"{rows:,} rows, {PARTITION_BY}: Sluice's ingest ≤ {TIME_LIMIT}x a plain partitioned df.write.parquet"
    if sluice.get("median_s") is None or plain.get("median_s") is None:
        found = [{"target": target, "met": None, "command": COMMAND, "measured": "not measured"}]
    else:
        ratio = sluice["median_s"] / plain["median_s"]
        loads = [r["load_1min"] for r in scale["rounds"]]
        found = [
            {
                "target": target,
                "met": ratio <= TIME_LIMIT,
                "command": COMMAND,
                "measured": f"{ratio:.2f}x ({sluice['median_s']:.2f} s vs {plain['median_s']:.2f} s; "
                f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores)",
            }
        ]
    small = scale["facts"]["small_ingest"]
    found.append(
        {
            "target": f"files after a {SMALL_ROWS:,}-row ingest: one per partition at most",
            "met": small["sluice_files"] <= small["sluice_partitions"],
            "command": COMMAND,
            "measured": f"{small['sluice_files']} files for {small['sluice_partitions']} partitions "
            f"(plain partitionBy: {small['plain_files']} files for {small['plain_partitions']} partitions "
            f"from {small['input_tasks']} input task(s))",
        }
    )
    return found


def _about(ctx: BenchContext) -> list[str]:
    return [
        f"Rows `id` (0..N-1), `ts` (30 days from 2025-03-01 UTC), `station` (6 names, non-ASCII), `temp` (double), "
        f"generated once into a Parquet folder under `{ctx.data_dir}`; both paths read it.",
        f"{BASELINE}: Spark's own day and bucket columns (`to_date(ts)`, `pmod(hash(id), 16)`), no repartition "
        "(each task writes a file per partition it holds).",
        f"{SLUICE}: `sluice.lake.ingest` into a new table per run (Iceberg's day and bucket, one file per "
        "partition, sorted, one commit).",
        f"Each run writes a new folder or table; all are removed at the end. Spark session: "
        f"{ctx.fed.spark.sparkContext.master}, spark.sql.shuffle.partitions="
        f"{ctx.fed.spark.conf.get('spark.sql.shuffle.partitions')}.",
    ]
