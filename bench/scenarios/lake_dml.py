"""Lake DML scenario (issue 27): what a DELETE writes, and compaction beside a steady ingest.

One lake table per case, partitioned by ``p`` (20 values), written by Sluice's ingest in 10
appends of contiguous ``id`` ranges (so every partition holds 10 files, each with a narrow
``id`` range in its statistics). Cases, in interleaved rounds after one warm-up run each:

- **DELETE of one partition** (``DELETE FROM ... WHERE p = k``, a new ``k`` every run): proven
  whole by the partition values, so the snapshot drops the partition's files and writes no
  data file;
- **DELETE of 1% of the rows by a non-partition condition** (``id`` in a new 1% range every
  run): the file statistics keep every file but the 20 whose ``id`` bounds overlap the range,
  which Spark reads and rewrites without the deleted rows (copy-on-write);
- **optimize while an ingest appends**: a second process appends 1,000 rows (one file per
  partition) every few seconds; optimize compacts every partition and must commit (it validates
  only the files it replaces, :mod:`sluice.lake.rewrite`); timed per run, with the appends
  that landed while it ran and PyIceberg's commit retries counted.

Each run's files and bytes come from its snapshot's summary (Iceberg's own counts); the
CPU-seconds of the driver, its JVM and Spark's Python workers from ``/proc`` around each run
(:func:`bench.machine.cpu_by_class`; the appending process is left out). A lake MERGE
(the row-level API) adds its cases to :func:`_cases` beside these. Size: ``--scales`` (the
issue asks 10M rows; ``--quick`` the smallest scale).
"""

from __future__ import annotations

import logging
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any

from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.machine import cpu_by_class, process_cpu
from bench.timing import summary, warmed_rounds

KEY = "lake-dml"
TITLE = "Lake DML (issue 27): DELETE of a partition and of 1% of the rows; optimize beside an ingest"
COMMAND = "python -m bench --only lake-dml"
FULL_ROWS = 10_000_000
PARTITIONS = 20
APPENDS = 10
NAMESPACE = "dml"
APPEND_EVERY_S = 3.0
APPEND_ROWS = 1_000

#: the second process of the compaction case: appends APPEND_ROWS rows every APPEND_EVERY_S
#: seconds until the stop file appears; one line (time) per append
APPENDER = textwrap.dedent(
    """
    import os, sys, time
    import pyarrow as pa
    from sluice.lake.catalog import LakeLocation, open_catalog
    url, table_name, stop_file, every, rows, first = sys.argv[1:7]
    table = open_catalog(LakeLocation.from_url(url)).load_table(("dml", table_name))
    schema = table.schema().as_arrow()
    first, rows, every = int(first), int(rows), float(every)
    while not os.path.exists(stop_file):
        ids = list(range(first, first + rows))
        table.append(pa.table({"id": ids, "p": [i % 20 for i in ids], "v": [i * 0.5 for i in ids]}, schema=schema))
        print(time.time(), flush=True)
        first += rows
        time.sleep(every)
    """
)


@dataclass
class _Runs:
    """What each timed or warm-up run of one case did (snapshot summary counts, CPU, load)."""

    facts: list[dict[str, float]] = field(default_factory=list)

    def median(self, key: str) -> float | None:
        values = [f[key] for f in self.facts if key in f]
        return statistics.median(values) if values else None


def _lake(ctx: BenchContext, rows: int) -> str:
    root = os.path.join(ctx.data_dir, f"lake-dml-{rows}")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    return f"iceberg+sqlite:///{root}/catalog.db?create=true"


def _write(ctx: BenchContext, url: str, table: str, rows: int) -> None:
    """``rows`` rows in APPENDS appends of contiguous ids, partitioned by p = id % PARTITIONS."""
    from pyspark.sql import functions as F

    from sluice.lake.ingest import ingest

    spark = ctx.fed.spark
    step = rows // APPENDS
    for first in range(0, step * APPENDS, step):
        frame = spark.range(first, first + step, numPartitions=max(1, step // 500_000)).select(
            F.col("id"), (F.col("id") % PARTITIONS).cast("int").alias("p"), (F.col("id") * 0.5).alias("v")
        )
        ingest(spark, url, frame, namespace=NAMESPACE, table=table, partition_by="p", report=lambda _: None)


def _snapshot_facts(url: str, table: str, snapshot_id: int | None) -> dict[str, float]:
    """Iceberg's counts of one snapshot (None: the current one)."""
    from sluice.lake.catalog import LakeLocation, open_catalog

    lake_table = open_catalog(LakeLocation.from_url(url)).load_table((NAMESPACE, table))
    snapshot = lake_table.current_snapshot() if snapshot_id is None else lake_table.snapshot_by_id(snapshot_id)
    assert snapshot is not None and snapshot.summary is not None
    got = snapshot.summary
    return {
        "files_written": float(got.get("added-data-files") or 0),
        "bytes_written": float(got.get("added-files-size") or 0),
        "files_removed": float(got.get("deleted-data-files") or 0),
        "rows_deleted": float(got.get("deleted-records") or 0) - float(got.get("added-records") or 0),
    }


def _measured(runs: _Runs, work: Any, url: str, table: str) -> Any:
    """``work()``, with its snapshot's counts, the CPU-seconds per process class and the load after it."""
    before = cpu_by_class()
    result = work()
    after = cpu_by_class()
    # optimize names its snapshot (an append may land right after it); a DELETE's is the current one
    facts = _snapshot_facts(url, table, getattr(result, "snapshot_id", None))
    facts.update({f"cpu_{kind}": after[kind] - before[kind] for kind in after})
    facts["load"] = os.getloadavg()[0]
    runs.facts.append(facts)
    return result


def _cases(ctx: BenchContext, url: str, rows: int) -> tuple[list[Case], dict[str, _Runs]]:
    spark = ctx.fed.spark
    runs = {name: _Runs() for name in ("partition", "one-percent")}
    partition = iter(range(PARTITIONS))
    ranges = iter(range(100))
    width = rows // 100

    def delete_partition() -> None:
        k = next(partition)
        _measured(
            runs["partition"],
            lambda: spark.sql(f"DELETE FROM dmllake.{NAMESPACE}.bypart WHERE p = {k}").collect(),
            url,
            "bypart",
        )

    def delete_one_percent() -> None:
        # the r-th 1% range of the r-th append: 20 files (one per partition) overlap it
        r = next(ranges)
        low = (r % APPENDS) * (rows // APPENDS) + (r // APPENDS) * width
        sql = f"DELETE FROM dmllake.{NAMESPACE}.byrange WHERE id >= {low} AND id < {low + width}"
        _measured(runs["one-percent"], lambda: spark.sql(sql).collect(), url, "byrange")

    cases = [
        Case(KEY, "delete", "DELETE one partition (p = k)", delete_partition, note="metadata only: no file read"),
        Case(KEY, "delete", "DELETE 1% of rows (an id range)", delete_one_percent, note="copy-on-write of 20 files"),
    ]
    return cases, runs


def _optimize_beside_ingest(ctx: BenchContext, url: str, rows: int) -> tuple[Case, _Runs]:
    """optimize, each run after the appender added a file per partition, while it keeps appending."""
    from sluice.lake.maintenance import optimize

    runs = _Runs()
    case = Case(KEY, "optimize", f"optimize while an ingest appends every {APPEND_EVERY_S:g} s", lambda: None)
    root = url.split("///", 1)[1].rsplit("/", 1)[0]
    stop = os.path.join(root, "stop")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    appender = subprocess.Popen(
        [sys.executable, "-c", APPENDER, url.split("?")[0], "compact", stop, str(APPEND_EVERY_S), str(APPEND_ROWS)]
        + [str(10 * rows)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    retries: list[logging.LogRecord] = []

    class _Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "retrying" in record.getMessage():
                retries.append(record)

    counter = _Count()
    logging.getLogger("pyiceberg").addHandler(counter)
    appended: list[float] = []
    try:
        for run in range(ctx.runs + 1):
            line = appender.stdout.readline() if appender.stdout else ""  # wait for an append to compact
            if not line:
                raise RuntimeError("the appending process stopped")
            appended.append(float(line))
            before, started_at = len(retries), time.time()
            appender_cpu = process_cpu(appender.pid)
            started = time.perf_counter()
            done = _measured(
                runs, lambda: optimize(ctx.fed.spark, url, NAMESPACE, "compact", report=lambda _: None), url, "compact"
            )
            seconds = time.perf_counter() - started
            runs.facts[-1]["cpu_driver"] -= process_cpu(appender.pid) - appender_cpu
            runs.facts[-1]["retries"] = float(len(retries) - before)
            runs.facts[-1]["started_at"] = started_at
            runs.facts[-1]["finished_at"] = time.time()
            if done is None or done.snapshot_id is None:
                raise RuntimeError(f"optimize run {run} committed nothing")
            if run:  # the first run is the warm-up
                case.seconds.append(seconds)
    finally:
        logging.getLogger("pyiceberg").removeHandler(counter)
        open(stop, "w").close()
        out, _ = appender.communicate(timeout=120)
    appended += [float(t) for t in out.split()]
    for facts in runs.facts:
        facts["appends_during"] = float(sum(facts["started_at"] <= t <= facts["finished_at"] for t in appended))
    runs.facts = runs.facts[1:]
    return case, runs


def _extra(case: Case, runs: _Runs) -> None:
    def shown(key: str, form: str) -> str:
        value = runs.median(key)
        return "—" if value is None else format(value, form)

    case.extra.update(
        {
            "files written": shown("files_written", ",.0f"),
            "MiB written": _mib(runs.median("bytes_written")),
            "files removed": shown("files_removed", ",.0f"),
            "rows deleted": shown("rows_deleted", ",.0f"),
            "CPU s driver/JVM/workers": "/".join(shown(f"cpu_{k}", ".1f") for k in ("driver", "jvm", "workers")),
            "appends during / retries": (
                f"{shown('appends_during', '.0f')} / {shown('retries', '.0f')}"
                if runs.median("retries") is not None
                else "—"
            ),
        }
    )


def _mib(value: float | None) -> str:
    return "—" if value is None else f"{value / 2**20:,.1f}"


def run(ctx: BenchContext) -> dict[str, Any]:
    scales = [_scale(ctx, rows) for rows in ctx.rows_for(FULL_ROWS)]
    about = [
        f"Command: `{COMMAND}` (size: `--scales`; the issue's figure is 10M rows). Each table: {PARTITIONS} "
        f"partitions, {APPENDS} appends of contiguous ids. Medians over the timed runs; files, bytes and rows "
        "from each run's snapshot summary; CPU-seconds per process class from /proc around each run.",
    ]
    return scenario_result(KEY, TITLE, about, scales, [])


def _scale(ctx: BenchContext, rows: int) -> dict[str, Any]:
    url = _lake(ctx, rows)
    ctx.fed.attach("dmllake", url)
    log(f"== lake-dml, {rows:,} rows: writing three tables")
    for table in ("bypart", "byrange", "compact"):
        _write(ctx, url, table, rows)
    cases, runs = _cases(ctx, url, rows)
    rounds = warmed_rounds(f"lake-dml, {rows:,} rows", cases, ctx.runs, ctx.seed + rows, log)
    for case, name in zip(cases, ("partition", "one-percent"), strict=True):
        _extra(case, runs[name])
    log(f"== lake-dml, {rows:,} rows: optimize beside an ingest, {ctx.runs} timed runs after a warm-up")
    compact, compact_runs = _optimize_beside_ingest(ctx, url, rows)
    _extra(compact, compact_runs)
    cases.append(compact)
    ctx.fed.detach("dmllake")
    return {
        "rows": rows,
        "rounds": rounds,
        "results": [summary(c, None) for c in cases],
        "facts": {"runs": {k: v.facts for k, v in runs.items()} | {"optimize": compact_runs.facts}},
    }
