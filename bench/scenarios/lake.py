"""Lake scenario: Sluice over Iceberg against Spark, PyIceberg and DuckDB reading the same Parquet files.

Per scale, a telemetry lake table is ingested once (``sluice.lake.ingest``, kept in
``<data_dir>/lake-<rows>/``). Every path reads the data files of the same snapshot and
discards what it reads (Spark's ``noop`` sink; Arrow streams for PyIceberg and DuckDB),
counting rows so the warm-up can check each path against the reference:
``spark.read.parquet`` with ``spark.sql.parquet.filterPushdown=false`` (Sluice's session
setting: Spark's row-group pushdown is not NaN-safe, DESIGN.md section 2).

For each selective shape the scenario also computes, outside the timing, which row groups
hold at least one matching row (DuckDB over the files with ``file_row_number``, mapped to
row groups by the footers) and their compressed bytes over the columns Sluice reads: the
least any reader that skips whole row groups could read. Issue 6's lake target compares
Sluice's bytes read with that, and Sluice's time with ``spark.read.parquet``.
"""

from __future__ import annotations

import bisect
import functools
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pyarrow.parquet as pq
import sqlglot
from sqlglot import exp

from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.timing import measure, summary, warm_up

if TYPE_CHECKING:
    import duckdb
    from pyiceberg.expressions import BooleanExpression
    from pyiceberg.table import Table
    from pyspark.sql import DataFrame

    from sluice.lake.pyramid import Pyramid

KEY = "lake"
TITLE = "Lake: Sluice over Iceberg vs spark.read.parquet, PyIceberg and DuckDB on the same files"
COMMAND = "python -m bench --only lake"
TARGET = (
    "lake selective query: bytes read ≤ 1.1x the bytes of row groups that contain matches, "
    "time ≤ spark.read.parquet on the same files"
)
#: bump when the ingested data changes (generator, layout, writer settings): kept lakes are rebuilt
LAKE_VERSION = 1
SOURCE = "bench_lake"  # the attach name: unlikely to clash with other scenarios' sources
NAMESPACE, TABLE = "telemetry", "readings"
REFERENCE = "spark.read.parquet, filterPushdown off"
PUSHDOWN_ON = "spark.read.parquet, filterPushdown on"
SLUICE = "Sluice fed.sql"
#: the same query with the reader forced (spark.sluice.lakeReader; SLUICE lets the planner choose)
SLUICE_VECTORISED = "Sluice fed.sql, Spark's Parquet reader forced"
SLUICE_PYTHON = "Sluice fed.sql, Python reader forced"
PYICEBERG = "PyIceberg scan().to_arrow_batch_reader()"
DUCKDB = "DuckDB read_parquet (same files)"


@dataclass(frozen=True)
class LakeShape:
    """One query over the telemetry table, spelled for every engine that runs it.

    ``where`` is valid in Spark SQL and DuckDB SQL alike except for timestamps, written
    ``{ts:YYYY-MM-DD HH:MM:SS}``: a wall-clock time in Spark's session zone (how a Spark
    user writes it), spelled ``TIMESTAMP '...'`` for Spark and as the same instant in UTC
    for DuckDB and PyIceberg.
    """

    key: str
    title: str
    columns: tuple[str, ...]
    where: str | None = None
    #: the same predicate as a PyIceberg expression, given the UTC ISO form of each ``{ts:...}``
    iceberg: Callable[[Callable[[str], str]], BooleanExpression] | None = None

    def spark_where(self) -> str | None:
        return _timestamps(self.where, lambda text: f"TIMESTAMP '{text}'")

    def duckdb_where(self, zone: str) -> str | None:
        return _timestamps(self.where, lambda text: f"TIMESTAMPTZ '{_utc(text, zone)}'")

    def iceberg_filter(self, zone: str) -> BooleanExpression:
        from pyiceberg.expressions import AlwaysTrue

        return AlwaysTrue() if self.iceberg is None else self.iceberg(lambda text: _utc(text, zone))

    def read_columns(self) -> tuple[str, ...]:
        """Projected columns plus those the filter refers to: what a reader must read."""
        names = list(self.columns)
        if self.where:
            for column in sqlglot.parse_one(f"SELECT 1 WHERE {self.duckdb_where('UTC')}", read="duckdb").find_all(
                exp.Column
            ):
                if column.name not in names:
                    names.append(column.name)
        return tuple(names)


def _timestamps(text: str | None, spell: Callable[[str], str]) -> str | None:
    """Replace every ``{ts:YYYY-MM-DD HH:MM:SS}`` in ``text`` by ``spell(value)``."""
    if text is None:
        return None
    while "{ts:" in text:
        start = text.index("{ts:")
        end = text.index("}", start)
        text = text[:start] + spell(text[start + 4 : end]) + text[end + 1 :]
    return text


def _utc(wall_clock: str, zone: str) -> str:
    """A wall-clock time in Spark's session zone as an ISO instant in UTC."""
    local = datetime.fromisoformat(wall_clock).replace(tzinfo=ZoneInfo(zone))
    return local.astimezone(timezone.utc).isoformat()


def _partitions_filter(utc: Callable[[str], str]) -> BooleanExpression:
    from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan

    return And(
        EqualTo("mission_id", 102),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
        GreaterThanOrEqual("ts", utc("2025-03-09 00:00:00")),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
        LessThan("ts", utc("2025-03-10 00:00:00")),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    )


def _row_groups_filter(utc: Callable[[str], str]) -> BooleanExpression:
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThanOrEqual, NotEqualTo

    return And(
        GreaterThanOrEqual("payload_id", 311002),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
        LessThanOrEqual("payload_id", 311003),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
        NotEqualTo("status", "OK"),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    )


def _nan_filter(utc: Callable[[str], str]) -> BooleanExpression:
    from pyiceberg.expressions import And, EqualTo, GreaterThan, IsNaN, Or

    # Spark and DuckDB order NaN above every number; Arrow compute (PyIceberg's row filter)
    # does not, so the equivalent expression names the NaN rows explicitly.
    return And(Or(GreaterThan("temperature", 59.9), IsNaN("temperature")), EqualTo("day", "2025-03-12"))  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__


ALL_COLUMNS = ("mission_id", "payload_id", "sensor", "ts", "day", "voltage", "temperature", "status", "message")
#: the full read and the three demo queries' scans (the window is 2025-03-01 + 14 days, UTC)
SHAPES: tuple[LakeShape, ...] = (
    LakeShape("full", "full scan, all 9 columns", ALL_COLUMNS),
    LakeShape(
        "partitions",
        "mission 102 on one day (partition pruning, ~2.5%)",
        ("mission_id", "sensor", "voltage"),
        "mission_id = 102 AND ts >= {ts:2025-03-09 00:00:00} AND ts < {ts:2025-03-10 00:00:00}",
        _partitions_filter,
    ),
    LakeShape(
        "row groups",
        "two payloads, status not OK (row-group pruning, ~0.3%)",
        ("mission_id", "payload_id", "status"),
        "payload_id BETWEEN 311002 AND 311003 AND status <> 'OK'",
        _row_groups_filter,
    ),
    LakeShape(
        "NaN-safe",
        "temperature > 59.9 on one day (NaN counts as above, ~0.02%)",
        ("mission_id", "temperature"),
        "temperature > 59.9 AND day = DATE '2025-03-12'",
        _nan_filter,
    ),
)


# ---------------------------------------------------------------- data
@dataclass(frozen=True)
class Lake:
    url: str
    generated: bool
    seconds: float


def ensure_lake(ctx: BenchContext, rows: int) -> Lake:
    """The lake of ``rows`` generated readings under ``<data_dir>/lake-<rows>/``, ingested unless current."""
    from sluice.lake.ingest import ingest

    folder = os.path.abspath(os.path.join(ctx.data_dir, f"lake-{rows}"))
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    stamp_path, stamp = os.path.join(folder, "generator"), f"sluice bench lake v{LAKE_VERSION}, {rows} rows"
    started = time.perf_counter()
    if _stamp(stamp_path) == stamp and _lake_rows(ctx, url) == rows:
        return Lake(url, False, time.perf_counter() - started)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    done = ingest(ctx.fed.spark, url, rows=rows, report=lambda message: log(f"  {message}"))
    if done.rows != rows:
        raise RuntimeError(f"lake ingest at {folder} wrote {done.rows:,} rows, expected {rows:,}")
    with open(stamp_path, "w", encoding="utf-8") as handle:
        handle.write(stamp)
    return Lake(url, True, time.perf_counter() - started)


def _stamp(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _lake_rows(ctx: BenchContext, url: str) -> int | None:
    """Rows of the kept table's current snapshot, or None when it cannot be read."""
    try:
        ctx.fed.attach(SOURCE, url)
        return ctx.fed.table(SOURCE, NAMESPACE, TABLE).row_estimate
    except Exception as error:  # noqa: BLE001 - an unreadable kept lake is rebuilt
        log(f"  kept lake at {url} unreadable ({type(error).__name__}): rebuilding")
        return None


# ---------------------------------------------------------------- paths
def _query(shape: LakeShape) -> str:
    where = shape.spark_where()
    return f"SELECT {', '.join(shape.columns)} FROM {SOURCE}.{NAMESPACE}.{TABLE}" + (f" WHERE {where}" if where else "")


def _spark_rows(frame: DataFrame) -> int:
    """Run ``frame`` into the noop sink and return its row count (observed on the way)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation()
    frame.observe(observation, F.count(F.lit(1)).alias("rows")).write.format("noop").mode("overwrite").save()
    return int(observation.get["rows"])


def _with_parquet_pushdown(spark: Any, enabled: bool, work: Callable[[], int]) -> int:
    """Run ``work`` with Spark's Parquet filter pushdown set as asked, then restore the setting."""
    key = "spark.sql.parquet.filterPushdown"
    previous = spark.conf.get(key)
    spark.conf.set(key, str(enabled).lower())
    try:
        return work()
    finally:
        spark.conf.set(key, previous)


def _with_lake_reader(spark: Any, reader: str, work: Callable[[], int]) -> int:
    """Run ``work`` with Sluice's lake reader forced (sluice/lake/vectorised.py), then let the planner choose again."""
    spark.conf.set("spark.sluice.lakeReader", reader)
    try:
        return work()
    finally:
        spark.conf.unset("spark.sluice.lakeReader")


def _arrow_rows(reader: Any) -> int:
    """Drain an Arrow stream, keeping nothing (the equivalent of Spark's noop sink)."""
    return sum(batch.num_rows for batch in reader)


def _cases(
    ctx: BenchContext,
    shape: LakeShape,
    parquet: DataFrame,
    table: Table,
    duck: duckdb.DuckDBPyConnection,
    zone: str,
    counts: dict[tuple[str, str], int],
) -> list[Case]:
    """The paths of one shape; each run stores its row count in ``counts`` for the check.

    ``parquet`` is ``spark.read.parquet`` over the snapshot's data files, built once per
    scale: its file listing (a Spark job above 32 paths) is not part of a query's time.
    """
    spark = ctx.fed.spark
    where, duck_where = shape.spark_where(), shape.duckdb_where(zone)
    query = _query(shape)

    def counted(path: str, work: Callable[[], int]) -> Callable[[], None]:
        def run() -> None:
            counts[(shape.key, path)] = work()

        return run

    def parquet_frame() -> DataFrame:
        frame = parquet.select(*shape.columns)
        return frame.where(where) if where else frame

    duck_sql = f"SELECT {', '.join(shape.columns)} FROM lake_files" + (f" WHERE {duck_where}" if duck_where else "")
    scan = table.scan(row_filter=shape.iceberg_filter(zone), selected_fields=shape.columns)
    cores = os.cpu_count() or 1

    def parquet_case(path: str, pushdown: bool) -> Case:
        return Case(
            KEY,
            shape.key,
            path,
            counted(path, lambda: _with_parquet_pushdown(spark, pushdown, lambda: _spark_rows(parquet_frame()))),
            baseline=path == REFERENCE,
            note="correctness reference" if path == REFERENCE else "",
            streams=cores,
        )

    cases = [parquet_case(REFERENCE, False)]
    if where:  # without a filter the setting changes nothing
        cases.append(parquet_case(PUSHDOWN_ON, True))
    return cases + [
        Case(KEY, shape.key, SLUICE, counted(SLUICE, lambda: _spark_rows(ctx.fed.sql(query))), streams=cores),
        *(
            Case(
                KEY,
                shape.key,
                path,
                counted(
                    path,
                    functools.partial(_with_lake_reader, spark, reader, lambda: _spark_rows(ctx.fed.sql(query))),
                ),
                streams=cores,
            )
            for path, reader in ((SLUICE_VECTORISED, "vectorised"), (SLUICE_PYTHON, "python"))
        ),
        Case(KEY, shape.key, PYICEBERG, counted(PYICEBERG, lambda: _arrow_rows(scan.to_arrow_batch_reader()))),
        Case(
            KEY,
            shape.key,
            DUCKDB,
            counted(DUCKDB, lambda: _arrow_rows(duck.cursor().sql(duck_sql).fetch_record_batch())),
            streams=cores,
        ),
    ]


def _check_counts(cases: list[Case], counts: dict[tuple[str, str], int]) -> None:
    """What warm_up does for Arrow results, by row count: every path against the reference."""
    for case in cases:
        count = counts.get((case.shape, case.path))
        reference = counts.get((case.shape, REFERENCE))
        if count is None:
            continue
        case.rows = count
        if case.baseline:
            case.check = "reference"
        elif reference is not None:
            case.check = "same count" if count == reference else f"row count differs: {count:,} vs {reference:,}"
            if count != reference:
                log(f"  {case.shape} {case.path}: {case.check}")


# ---------------------------------------------------------------- row groups with matches
@dataclass(frozen=True)
class RowGroupLayout:
    """One data file's row groups: where each starts, and its compressed bytes per column."""

    starts: list[int]
    column_bytes: list[dict[str, int]]


def _layouts(files: list[str]) -> dict[str, RowGroupLayout]:
    layouts = {}
    for path in files:
        metadata = pq.read_metadata(path)
        starts, sizes, offset = [], [], 0
        for index in range(metadata.num_row_groups):
            group = metadata.row_group(index)
            starts.append(offset)
            offset += group.num_rows
            sizes.append(
                {
                    group.column(c).path_in_schema: group.column(c).total_compressed_size
                    for c in range(group.num_columns)
                }
            )
        layouts[path] = RowGroupLayout(starts, sizes)
    return layouts


def matching_row_groups(
    duck: duckdb.DuckDBPyConnection, layouts: dict[str, RowGroupLayout], duck_where: str, columns: tuple[str, ...]
) -> tuple[int, int, int]:
    """Rows that satisfy ``duck_where``, the row groups holding them, and those groups' bytes over ``columns``."""
    found = duck.cursor().sql(f"SELECT filename, file_row_number FROM lake_rows WHERE {duck_where}").fetchall()
    groups = {(path, bisect.bisect_right(layouts[path].starts, row) - 1) for path, row in found}
    nbytes = sum(layouts[path].column_bytes[index].get(c, 0) for path, index in groups for c in columns)
    return len(found), len(groups), nbytes


# ---------------------------------------------------------------- one scale
def _scale(ctx: BenchContext, rows: int, duck: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    log(f"== lake, {rows:,} rows: preparing the lake")
    lake = ensure_lake(ctx, rows)
    log(f"  lake {'ingested' if lake.generated else 'kept'} in {lake.seconds:.1f}s")
    ctx.fed.attach(SOURCE, lake.url)
    zone = ctx.fed.spark.conf.get("spark.sql.session.timeZone") or "UTC"
    whole = _single(ctx.fed.pruning(_query(SHAPES[0])))
    files = [_local(read.path) for read in whole.reads]
    layouts = _layouts(files)
    table = _iceberg_table(lake.url)
    listed = "[" + ", ".join("'" + path.replace("'", "''") + "'" for path in files) + "]"
    duck.execute(f"CREATE OR REPLACE VIEW lake_files AS SELECT * FROM read_parquet({listed})")
    duck.execute(
        f"CREATE OR REPLACE VIEW lake_rows AS SELECT * FROM read_parquet({listed}, filename = true, file_row_number = true)"
    )

    counts: dict[tuple[str, str], int] = {}
    parquet = ctx.fed.spark.read.parquet(*files)
    cases = [case for shape in SHAPES for case in _cases(ctx, shape, parquet, table, duck, zone, counts)]
    log(f"== lake, {rows:,} rows ({len(files)} files): warm-up of {len(cases)} cases")
    warm_up(cases, log)
    _check_counts(cases, counts)
    log(f"== lake, {rows:,} rows: {ctx.runs} interleaved rounds")
    rounds = measure(cases, ctx.runs, ctx.seed + rows, log)

    baselines = {c.shape: c for c in cases if c.baseline}
    results, pruning = [], {}
    for shape in SHAPES:
        pyramid = _single(ctx.fed.pruning(_query(shape)))
        facts = _pruning_facts(pyramid)
        if shape.where:
            matches, groups, nbytes = matching_row_groups(
                duck, layouts, shape.duckdb_where(zone) or "", shape.read_columns()
            )
            facts.update(matching_rows=matches, matching_row_groups=groups, matching_bytes=nbytes)
        pruning[shape.key] = facts
        for case in (c for c in cases if c.shape == shape.key):
            record = summary(case, baselines[shape.key])
            if case.path == SLUICE:
                record["extra"] = _extra(facts)
            results.append(record)
    return {
        "rows": rows,
        "rounds": rounds,
        "results": results,
        "facts": {
            "lake": {"generated": lake.generated, "seconds": round(lake.seconds, 1), "version": LAKE_VERSION},
            "files": len(files),
            "row_groups": whole.tiers[-1].total,
            "table_bytes": whole.table_bytes,
            "session_zone": zone,
            "queries": {s.key: _query(s) for s in SHAPES},
            "pruning": pruning,
        },
    }


def _iceberg_table(url: str) -> Table:
    from sluice.lake.catalog import LakeLocation, load_table, open_catalog

    return load_table(open_catalog(LakeLocation.from_url(url), name=SOURCE), NAMESPACE, TABLE, SOURCE)


def _local(path: str) -> str:
    """A data file's path for every reader (the catalog writes local files as ``file://`` URIs)."""
    return path[len("file://") :] if path.startswith("file://") else path


def _single(pyramids: dict[str, Pyramid]) -> Pyramid:
    (pyramid,) = pyramids.values()
    return pyramid


def _pruning_facts(pyramid: Pyramid) -> dict[str, Any]:
    files = next(t for t in pyramid.tiers if t.level == "file statistics")
    groups = pyramid.tiers[-1]
    return {
        "bytes_read": pyramid.bytes_read,
        "files_total": pyramid.tiers[1].total,
        "files_kept": files.kept,
        "files_read": len(pyramid.reads),
        "row_groups_total": groups.total,
        "row_groups_kept": groups.kept,
        "rows_kept": groups.rows_kept,
        "tiers": [t.to_dict() for t in pyramid.tiers],
    }


def _extra(facts: dict[str, Any]) -> dict[str, str]:
    extra = {
        "bytes read (Sluice)": _size(facts["bytes_read"]),
        "files kept": f"{facts['files_read']:,} of {facts['files_total']:,}",
        "row groups kept": f"{facts['row_groups_kept']:,} of {facts['row_groups_total']:,}",
    }
    if "matching_bytes" in facts:
        extra["row groups with matches"] = f"{facts['matching_row_groups']:,} ({_size(facts['matching_bytes'])})"
    return extra


def _size(nbytes: int) -> str:
    from sluice.lake.pyramid import size_text

    return size_text(nbytes)


# ---------------------------------------------------------------- targets
def _targets(scale: dict[str, Any]) -> list[dict[str, Any]]:
    """The lake target per selective shape, at the largest scale."""
    targets = []
    for shape in SHAPES:
        facts = scale["facts"]["pruning"][shape.key]
        if "matching_bytes" not in facts:
            continue
        by_path = {r["path"]: r for r in scale["results"] if r["shape"] == shape.key}
        sluice = by_path[SLUICE].get("median_s")
        spark = [(by_path[p]["median_s"], p) for p in (PUSHDOWN_ON, REFERENCE) if by_path.get(p, {}).get("median_s")]
        byte_ratio = facts["bytes_read"] / facts["matching_bytes"] if facts["matching_bytes"] else None
        text = (
            f"bytes {byte_ratio:.2f}x ({_size(facts['bytes_read'])} vs {_size(facts['matching_bytes'])})"
            if byte_ratio is not None
            else f"no row group matches; Sluice read {_size(facts['bytes_read'])}"
        )
        met = facts["bytes_read"] == 0 if byte_ratio is None else byte_ratio <= 1.1
        if sluice is not None and spark:
            fastest, path = min(spark)
            text += (
                f"; time {sluice / fastest:.2f}x the faster Spark setting ({sluice:.3f} s vs {fastest:.3f} s, {path})"
            )
            met = met and sluice <= fastest
        else:
            text += "; time not measured (a path failed)"
            met = False
        targets.append(
            {
                "target": f"{TARGET} — {shape.key}, {scale['rows']:,} rows",
                "measured": text,
                "met": met,
                "command": COMMAND,
            }
        )
    return targets


ABOUT = [
    "Data: the telemetry table of `sluice/lake/generate.py` (9 columns, two weeks of readings from 2025-03-01 UTC), "
    "ingested per scale with `sluice.lake.ingest.ingest` into an Iceberg table partitioned by mission, UTC day and "
    "4 payload buckets, sorted by payload and time within files, zstd, 1 MiB row groups; kept in "
    "`<data-dir>/lake-<rows>/` between runs.",
    f"Paths, all over the data files of the same snapshot: **{SLUICE}** (the pruning pyramid, then the reader the "
    "planner chooses, `docs/lake.md` Reading); "
    f"**{SLUICE_VECTORISED}** (`spark.sluice.lakeReader=vectorised`: Spark's Parquet reader over byte ranges of the "
    f"kept row groups, Spark filtering); **{SLUICE_PYTHON}** (`spark.sluice.lakeReader=python`: pyarrow + DuckDB "
    f"inside Spark's Python Data Source); **{REFERENCE}** (the correctness reference, Sluice's session setting); "
    f"**{PUSHDOWN_ON}** (set for that case only, then restored); **{PYICEBERG}** with the equivalent PyIceberg "
    "expression (NaN named explicitly: Arrow compute does not order NaN above numbers as Spark does); "
    f"**{DUCKDB}** with the same filter in DuckDB SQL.",
    "`spark.read.parquet` is called once per scale (its file listing is not timed); each Sluice query is planned "
    "in its time (catalog lookup, reader choice, read tasks); its pruning pyramid is kept per table metadata file, "
    "so the timed rounds reuse the warm-up's, as repeated queries on an unchanged table do. Spark paths write to the `noop` sink and count rows with "
    "`DataFrame.observe`; PyIceberg and DuckDB drain an Arrow stream. The warm-up compares every path's row count with the reference's (column *check*).",
    "Shapes: the full table, and the three demo queries' scans (partition pruning on mission and day; row-group "
    "pruning on the sorted payload id; a NaN-aware float comparison on one day).",
    "*bytes read*: compressed bytes of the columns Sluice reads in the row groups its pyramid keeps (`fed.pruning`). "
    "*row groups with matches*: row groups holding at least one matching row (found exactly, by DuckDB over "
    "`file_row_number` and the footers' row-group boundaries) and their bytes over the same columns.",
    "Timing: one warm-up, then interleaved rounds in a shuffled order; median, min and max; ratio to the reference.",
]


def run(ctx: BenchContext) -> dict[str, Any]:
    """Measure every shape and path at every scale; the lake target at the largest."""
    import duckdb

    duck = duckdb.connect(":memory:")
    duck.execute("SET TimeZone = 'UTC'")
    scales = []
    try:
        for rows in ctx.scales:
            scales.append(_scale(ctx, rows, duck))
    finally:
        duck.close()
        ctx.fed.detach(SOURCE)
    targets = _targets(max(scales, key=lambda s: s["rows"])) if scales else []
    return scenario_result(KEY, TITLE, ABOUT, scales, targets)
