"""Writes scenario: Sluice's INSERT and MERGE into SQL sources vs Spark's JDBC writer and the raw drivers.

Issue 26's targets: an INSERT of 1M rows x 6 columns (bigint, double, decimal(12,2), string,
timestamp, boolean) from a Spark DataFrame into PostgreSQL and MariaDB at least 3x faster than
``df.write.jdbc`` (default and tuned ``batchsize``) and within 1.3x of the raw driver loading
the same Arrow data; a MERGE of 100,000 changed rows into a 1M-row table with a primary key
against the usual Spark recipe (JDBC-write a staging table, then the database's own upsert by
hand), with rows moved and time. SQLite and DuckDB INSERTs against their raw drivers too.

The rows are generated once per scale into Parquet folders under the data directory: the
input, and the changes (every 20th id with new values: updates; as many new ids past the
end: inserts). Every path reads the same Parquet: Spark's paths as a DataFrame
(``spark.read.parquet``), the raw drivers as an Arrow table (``pyarrow.parquet``, inside
the timing). Each path writes its own table, emptied (INSERT) or reset to the 1M base rows
(MERGE) before each run, outside the timing. After the rounds every table's rows are
compared with the raw driver's (count and a digest of every value, by the database).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from typing import Any

from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.timing import describe, summary, warmed_rounds
from bench.write_paths import (
    DEFAULT_BATCH,
    NAMES,
    TUNED_BATCH,
    TUNED_PROPERTIES,
    Server,
    data_file,
    duckdb_create,
    duckdb_empty,
    duckdb_raw,
    local_fingerprint,
    sqlite_create,
    sqlite_empty,
    sqlite_raw,
)

KEY = "writes"
TITLE = "Writes: INSERT and MERGE into SQL sources, Sluice vs df.write.jdbc and the raw drivers"
COMMAND = "python -m bench --only writes"
FULL_ROWS = 1_000_000
#: Sluice's INSERT at least this many times faster than df.write.jdbc, and within this of the raw driver
JDBC_SPEEDUP, RAW_LIMIT = 3.0, 1.3
#: bump when the generated input changes: kept inputs are rebuilt
INPUT_VERSION = 1
#: Spark catalogs the scenario attaches, writable
CATALOGS = {"postgresql": "bench_wpg", "mariadb": "bench_wmy", "sqlite": "bench_wlite", "duckdb": "bench_wduck"}
INPUT_VIEW, CHANGES_VIEW = "bench_write_input", "bench_write_changes"
RAW, SLUICE = "raw driver", "Sluice INSERT INTO ... SELECT"
JDBC_DEFAULT, JDBC_TUNED = f"df.write.jdbc, batchsize={DEFAULT_BATCH}", f"df.write.jdbc, batchsize={TUNED_BATCH}"
MERGE_SLUICE, MERGE_RECIPE = "Sluice MERGE INTO", "df.write.jdbc staging + upsert by hand"
RAW_NOTES = {
    "postgresql": "pyarrow.parquet + ADBC adbc_ingest (binary COPY), one connection",
    "mariadb": "pyarrow.parquet + Arrow's CSV writer + LOAD DATA LOCAL INFILE, one transaction",
    "sqlite": "pyarrow.parquet + sqlite3 executemany in one transaction",
    "duckdb": "pyarrow.parquet + INSERT INTO t SELECT * FROM the Arrow table, one transaction",
}
UPSERT = {
    "postgresql": "INSERT INTO {t} SELECT * FROM {s} ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{n} = EXCLUDED.{n}" for n in NAMES[1:]),
    "mariadb": "INSERT INTO {t} SELECT * FROM {s} ON DUPLICATE KEY UPDATE "
    + ", ".join(f"{n} = VALUES({n})" for n in NAMES[1:]),
}


def _generate(ctx: BenchContext, rows: int) -> tuple[str, str, bool, float]:
    """The input's and the changes' Parquet folders (kept between runs); whether generated, seconds."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    spark, started = ctx.fed.spark, time.perf_counter()
    inputs = data_file(ctx.data_dir, f"writes-input-v{INPUT_VERSION}-{rows}")
    changes = data_file(ctx.data_dir, f"writes-changes-v{INPUT_VERSION}-{rows}")
    if all(os.path.exists(os.path.join(p, "_SUCCESS")) for p in (inputs, changes)):
        return inputs, changes, False, 0.0
    labels = F.array(*(F.lit(name) for name in ("Oslo", "Bern", "Zürich", "São Paulo", "Tōkyō", "Lima  ")))

    def rows_of(ids: DataFrame, salt: int) -> DataFrame:
        hashed = (F.col("id") * 2_654_435_761 + salt) % 1_000_003
        return ids.select(
            F.col("id"),
            (hashed / F.lit(1_000_003.0)).alias("score"),
            ((F.col("id") * 37 + salt) % 10_000_000 / 100).cast("decimal(12,2)").alias("amount"),
            F.concat(F.element_at(labels, (hashed % 6 + 1).cast("int")), F.lit(" #"), F.col("id") % 1000).alias(
                "label"
            ),
            F.timestamp_micros(F.lit(1_704_067_200_000_000) + F.col("id") * 37_000_123 + salt).alias("ts"),
            ((F.col("id") + salt) % 3 == 0).alias("flag"),
        )

    files = max(2, spark.sparkContext.defaultParallelism)
    previous = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")  # Arrow reads it as UTC instants
    try:
        rows_of(spark.range(1, rows + 1, numPartitions=files), 0).write.mode("overwrite").parquet(inputs)
        changed = spark.range(1, rows + rows // 20 + 1, numPartitions=files).where(
            (F.col("id") % 20 == 0) | (F.col("id") > rows)
        )
        rows_of(changed, 1).coalesce(files).write.mode("overwrite").parquet(changes)
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", previous or "INT96")
    return inputs, changes, True, time.perf_counter() - started


def _attach(ctx: BenchContext) -> tuple[str, str]:
    """The writable catalogs; the SQLite and DuckDB files' paths."""
    os.makedirs(ctx.data_dir, exist_ok=True)
    lite, duck = data_file(ctx.data_dir, "writes.sqlite"), data_file(ctx.data_dir, "writes.duckdb")
    ctx.fed.attach(CATALOGS["postgresql"], ctx.pg_url, writable=True)
    ctx.fed.attach(CATALOGS["mariadb"], ctx.mysql_url, writable=True)
    sqlite_create(lite, "w_sluice", "w_raw")
    duckdb_create(duck, "w_sluice", "w_raw")
    ctx.fed.attach(CATALOGS["sqlite"], "sqlite:///" + lite, writable=True)
    ctx.fed.attach(CATALOGS["duckdb"], "duckdb:///" + duck, writable=True)
    return lite, duck


def _insert_cases(ctx: BenchContext, server: Server, inputs: str, rows: int) -> list[Case]:
    """PostgreSQL or MariaDB: the raw driver, Sluice, and Spark JDBC (when its jar is installed)."""
    engine, spark = server.engine, ctx.fed.spark
    group = f"{engine}-insert"
    server.create("w_raw", "w_sluice", "w_jdbc", "w_jdbc_tuned")
    streams = spark.read.parquet(inputs).rdd.getNumPartitions()
    catalog = f"{CATALOGS[engine]}.{server.schema}"

    def case(path: str, table: str, run: Callable[[], None], note: str, baseline: bool = False) -> Case:
        return Case(
            group,
            "insert",
            path,
            run,
            baseline=baseline,
            note=note,
            streams=1 if baseline else streams,
            prepare=lambda: server.truncate(table),
            measure_cpu=True,
            extra={"table": table},
        )

    found = [
        case(RAW, "w_raw", lambda: _none(server.load_raw(inputs, "w_raw")), RAW_NOTES[engine], baseline=True),
        case(
            SLUICE,
            "w_sluice",
            lambda: _none(ctx.fed.sql(f"INSERT INTO {catalog}.w_sluice SELECT * FROM {INPUT_VIEW}")),
            f"INSERT INTO {catalog}.w_sluice SELECT * FROM {INPUT_VIEW} (a view of the Parquet input)",
        ),
    ]
    if engine in ctx.jars:
        url, properties = server.jdbc()
        for path, table, extra in (
            (JDBC_DEFAULT, "w_jdbc", {}),
            (JDBC_TUNED, "w_jdbc_tuned", TUNED_PROPERTIES[engine]),
        ):
            chosen = {**properties, **extra}
            found.append(
                case(
                    path,
                    table,
                    lambda t=table, p=chosen: spark.read.parquet(inputs).write.jdbc(  # type: ignore[misc]  # loop-bound defaults
                        url, server.qualified(t), mode="append", properties=p
                    ),
                    f"spark.read.parquet(input).write.jdbc(mode='append'{''.join(f', {k}={v}' for k, v in extra.items())})",
                )
            )
    return found


def _merge_cases(ctx: BenchContext, server: Server, inputs: str, changes: str) -> list[Case]:
    """A MERGE of the changes into a reset 1M-row table: Sluice, and (with the JDBC jar) the usual recipe."""
    engine, spark = server.engine, ctx.fed.spark
    group = f"{engine}-merge"
    server.create("m_base", "m_sluice", "m_recipe")
    server.create("m_stage", key=False)
    server.load_raw(inputs, "m_base")
    catalog = f"{CATALOGS[engine]}.{server.schema}"
    streams = spark.read.parquet(changes).rdd.getNumPartitions()
    statement = (
        f"MERGE INTO {catalog}.m_sluice t USING {CHANGES_VIEW} s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    found = [
        Case(
            group,
            "merge",
            MERGE_SLUICE,
            lambda: _none(ctx.fed.sql(statement)),
            baseline=True,
            note=statement,
            streams=streams,
            prepare=lambda: server.reset("m_sluice", "m_base"),
            measure_cpu=True,
            extra={"table": "m_sluice"},
        )
    ]
    if engine in ctx.jars:
        url, properties = server.jdbc()
        upsert = UPSERT[engine].format(t=server.qualified("m_recipe"), s=server.qualified("m_stage"))
        options = {**properties, **TUNED_PROPERTIES[engine], "truncate": "true"}

        def recipe() -> None:
            spark.read.parquet(changes).write.jdbc(
                url, server.qualified("m_stage"), mode="overwrite", properties=options
            )
            server.transaction(upsert)

        found.append(
            Case(
                group,
                "merge",
                MERGE_RECIPE,
                recipe,
                note=f"df.write.jdbc(staging, mode='overwrite', truncate=true, batchsize={TUNED_BATCH}, rewrite "
                f"batches), then one transaction: {upsert}",
                streams=streams,
                prepare=lambda: server.reset("m_recipe", "m_base"),
                measure_cpu=True,
                extra={"table": "m_recipe"},
            )
        )
    return found


def _local_cases(ctx: BenchContext, engine: str, path: str, inputs: str) -> list[Case]:
    """SQLite or DuckDB: the raw driver against Sluice's INSERT."""
    zone = ctx.fed.spark.conf.get("spark.sql.session.timeZone") or "UTC"
    empty = sqlite_empty if engine == "sqlite" else duckdb_empty
    raw = functools.partial(sqlite_raw, zone=zone) if engine == "sqlite" else duckdb_raw
    group, catalog = f"{engine}-insert", f"{CATALOGS[engine]}.main"
    sql = f"INSERT INTO {catalog}.w_sluice SELECT * FROM {INPUT_VIEW}"
    return [
        Case(
            group,
            "insert",
            RAW,
            lambda: _none(raw(path, inputs, "w_raw")),
            baseline=True,
            note=RAW_NOTES[engine],
            prepare=lambda: empty(path, "w_raw"),
            measure_cpu=True,
            extra={"table": "w_raw"},
        ),
        Case(
            group,
            "insert",
            SLUICE,
            lambda: _none(ctx.fed.sql(sql)),
            note=f"{sql} (the driver collects the rows as Arrow, one transaction)",
            prepare=lambda: empty(path, "w_sluice"),
            measure_cpu=True,
            extra={"table": "w_sluice"},
        ),
    ]


def _none(_: object) -> None:
    """A write path's result is its table, checked after the rounds: nothing to compare in the warm-up."""


def _check(cases: list[Case], fingerprint: Callable[[Case], str]) -> dict[str, str]:
    """Each path's table against its group's baseline table (count and digest of every value)."""
    found: dict[str, str] = {}
    for group in dict.fromkeys(c.scenario for c in cases):
        members = [c for c in cases if c.scenario == group and c.error is None]
        prints = {}
        for case in members:
            try:
                prints[case.path] = fingerprint(case)
            except Exception as error:  # noqa: BLE001 - a benchmark reports
                case.check = f"check failed: {describe(error)}"
        reference = next((prints.get(c.path) for c in members if c.baseline), None)
        for case in members:
            if case.path not in prints:
                continue
            case.rows = int(prints[case.path].split(" ", 1)[0])
            found[f"{group}/{case.path}"] = prints[case.path]
            case.check = "reference" if case.baseline else "same" if prints[case.path] == reference else "DIFFERENT"
    return found


def run(ctx: BenchContext) -> dict[str, Any]:
    scales = [_scale(ctx, rows) for rows in ctx.rows_for(FULL_ROWS)]
    return scenario_result(KEY, TITLE, _about(ctx), scales, [t for s in scales for t in _targets(s)])


def _scale(ctx: BenchContext, rows: int) -> dict[str, Any]:
    log(f"== writes, {rows:,} rows: preparing the input, the changes and the tables")
    inputs, changes, generated, seconds = _generate(ctx, rows)
    log(f"  inputs {inputs}, {changes}: {'generated' if generated else 'kept'} in {seconds:.1f}s")
    spark = ctx.fed.spark
    spark.read.parquet(inputs).createOrReplaceTempView(INPUT_VIEW)
    spark.read.parquet(changes).createOrReplaceTempView(CHANGES_VIEW)
    lite, duck = _attach(ctx)
    servers = {engine: Server(engine, url) for engine, url in (("postgresql", ctx.pg_url), ("mariadb", ctx.mysql_url))}
    missing = sorted({"postgresql", "mariadb"} - set(ctx.jars))
    if missing:
        log(f"  NO JDBC JAR for {', '.join(missing)}: the df.write.jdbc paths are SKIPPED (`make jdbc-drivers`)")
    cases = [c for s in servers.values() for c in _insert_cases(ctx, s, inputs, rows)]
    cases += _local_cases(ctx, "sqlite", lite, inputs) + _local_cases(ctx, "duckdb", duck, inputs)
    cases += [c for s in servers.values() for c in _merge_cases(ctx, s, inputs, changes)]
    rounds = warmed_rounds(f"writes, {rows:,} rows", cases, ctx.runs, ctx.seed + rows, log)
    log(f"== writes, {rows:,} rows: every table against the raw driver's")

    def fingerprint(case: Case) -> str:
        engine = case.scenario.split("-")[0]
        table = case.extra["table"]
        if engine in servers:
            return servers[engine].fingerprint(table)
        return local_fingerprint(engine, lite if engine == "sqlite" else duck, table)

    checked = _check(cases, fingerprint)
    for key, value in checked.items():
        log(f"  {key}: {value}")
    changed = spark.read.parquet(changes)
    moved = changed.count()
    updates = changed.where(f"id <= {rows}").count()
    for case in cases:
        case.extra.pop("table", None)
        if case.shape == "merge":
            case.extra["rows moved"] = (
                f"{moved:,} into the stage + {moved:,} upserted"
                if case.path == MERGE_RECIPE
                else f"{rows:,} target rows read + {moved:,} delta rows staged and applied"
            )
    return {
        "rows": rows,
        "rounds": rounds,
        "results": [summary(c, next(b for b in cases if b.baseline and b.scenario == c.scenario)) for c in cases],
        "facts": {
            "input": {"path": inputs, "changes": changes, "generated": generated, "seconds": round(seconds, 1)},
            "changes": {"rows": moved, "updates": updates, "inserts": moved - updates},
            "jdbc_missing": missing,
            "tables": checked,
        },
    }


def _targets(scale: dict[str, Any]) -> list[dict[str, Any]]:
    rows, found = scale["rows"], []
    loads = [r["load_1min"] for r in scale["rounds"]]
    load = f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores" if loads else ""
    for engine in ("postgresql", "mariadb"):
        records = {r["path"]: r for r in scale["results"] if r["scenario"] == f"{engine}-insert"}
        sluice = records.get(SLUICE, {}).get("median_s")
        for path in (JDBC_DEFAULT, JDBC_TUNED):
            other = records.get(path, {}).get("median_s")
            target = f"{rows:,} rows into {engine}: Sluice's INSERT ≥ {JDBC_SPEEDUP:.0f}x faster than {path}"
            if sluice is None or other is None:
                why = "skipped: no JDBC jar" if engine in scale["facts"]["jdbc_missing"] else "not measured"
                found.append({"target": target, "met": None, "command": COMMAND, "measured": why})
                continue
            found.append(
                {
                    "target": target,
                    "met": other / sluice >= JDBC_SPEEDUP,
                    "command": COMMAND,
                    "measured": f"{other / sluice:.1f}x ({sluice:.2f} s vs {other:.2f} s; {load})",
                }
            )
        raw = records.get(RAW, {}).get("median_s")
        target = f"{rows:,} rows into {engine}: Sluice's INSERT ≤ {RAW_LIMIT}x the raw driver"
        if sluice is None or raw is None:
            found.append({"target": target, "met": None, "command": COMMAND, "measured": "not measured"})
            continue
        found.append(
            {
                "target": target,
                "met": sluice / raw <= RAW_LIMIT,
                "command": COMMAND,
                "measured": f"{sluice / raw:.2f}x ({sluice:.2f} s vs {raw:.2f} s; {load})",
            }
        )
    return found


def _about(ctx: BenchContext) -> list[str]:
    return [
        "Rows: `id bigint` (1..N, the primary key), `score double`, `amount decimal(12,2)`, `label string` "
        "(non-ASCII, trailing spaces), `ts timestamp`, `flag boolean`, generated once into Parquet under "
        f"`{ctx.data_dir}`; Spark's paths read it as a DataFrame, the raw drivers as an Arrow table (inside the timing).",
        "INSERT: each path appends every row to its own emptied table (same definition, primary key on `id`). "
        f"The raw driver is each group's baseline; `df.write.jdbc` runs with Spark's default batchsize ({DEFAULT_BATCH}) "
        f"and a tuned one ({TUNED_BATCH}, with the driver's batch rewriting: PostgreSQL `reWriteBatchedInserts`, "
        "MariaDB `rewriteBatchedStatements`).",
        "MERGE: N/20 updates (every 20th id, every column changed) and N/20 inserts (new ids past N) into a table "
        "reset to the N base rows before each run. Sluice: `MERGE INTO ... WHEN MATCHED THEN UPDATE SET * WHEN NOT "
        "MATCHED THEN INSERT *` (Spark's row-level plan reads the target and joins; Sluice stages the delta and applies "
        "it in one transaction). The recipe: `df.write.jdbc` of the changes into a staging table, then the database's "
        "own upsert (`INSERT ... ON CONFLICT DO UPDATE` / `ON DUPLICATE KEY UPDATE`) in one transaction.",
        "CPU seconds: median per timed run of this Python driver (raw paths, Sluice's driver side), its JVM (Spark, "
        "JDBC) and Spark's Python workers (Sluice's staging tasks); the database servers' CPU is not counted. "
        f"After the rounds each table is compared with the raw driver's by the database (row count and a digest "
        f"of every value). Spark session: {ctx.fed.spark.sparkContext.master}.",
    ]
