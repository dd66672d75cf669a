"""Catalog scenario: the fixed cost of a 10-row query through Sluice's catalog vs Spark's JDBCTableCatalog.

Issue 13's performance target: a small query through a Sluice catalog costs at most 50 ms
more than the same query through Spark's own ``JDBCTableCatalog``. Per engine (PostgreSQL,
MariaDB) one table of 2,000,000 rows (``--quick``: the quick scale) with an integer primary
key ``id`` (``catalog_orders`` in the benchmark schema, the SQL scenario's generator), and
``SELECT * FROM <catalog>.sluice_bench.catalog_orders WHERE id < 11`` (10 rows) collected to
the driver, through:

- Sluice's catalog: ``fed.attach(...)`` then ``spark.sql(q).collect()``; ``fed.sql(q)`` (the
  same plus ``spark.sluice.pushdown`` set and restored around the analysis); and, to show what
  splitting the read costs, the same catalog attached with ``partitions=1``;
- Spark's ``JDBCTableCatalog`` (``spark.sql.catalog.<name>`` with ``url`` and ``driver``;
  Debian's JDBC jars on the session's class path, skipped with the reason when absent);
- ``spark.range(10).collect()``: the floor of any collected Spark query.

All paths share the run's one Spark session, and rounds interleave them in a shuffled
order, so the comparison is within one run. Sluice's own share is the time its Python
planner spent answering the catalog layer during the query (``CALLBACK.seconds``).
The scenario is not scaled by ``--scales``: it measures the table size the issue measured.
"""

from __future__ import annotations

import collections
import os
import statistics
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg

from bench import data, spark_paths
from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.timing import describe, measure, summary, warm_up
from sluice.spark.bridge import CALLBACK

KEY = "catalog"
TITLE = "Catalog fixed cost: a 10-row query through Sluice's catalog vs Spark's JDBCTableCatalog"
COMMAND = "python -m bench --only catalog"
ENGINES = ("postgresql", "mariadb")
ENGINE_TITLES = {"postgresql": "PostgreSQL", "mariadb": "MariaDB"}
#: the issue's table size; --quick uses the run's (smallest) scale instead
FULL_ROWS = 2_000_000
#: a fixed cost needs many rounds: each round is well under a second
FULL_ROUNDS, WARM_UP_ROUNDS, QUICK_WARM_UP_ROUNDS = 60, 5, 1
LIMIT_S = 0.050
#: issue 13's figure for the old ``fed.sql`` path (sqlglot front end), 2M-row PostgreSQL table
ISSUE_OLD_PATH_S = 0.466
#: bump when the table's layout changes: a kept table is regenerated
TABLE_VERSION = 1
TABLE = "catalog_orders"
SCHEMA = data.PG_SCHEMA  # == data.MYSQL_DATABASE: both dropped by --cleanup
WHERE = "id < 11"
#: catalog names of this scenario only: the others attach pg, my, plan_pg, ...
SLUICE_NAMES = {"postgresql": "cat_pg", "mariadb": "cat_my"}
ONE_PARTITION_NAMES = {"postgresql": "cat_pg_one", "mariadb": "cat_my_one"}
JDBC_NAMES = {"postgresql": "cat_jdbc_pg", "mariadb": "cat_jdbc_my"}
JDBC_CATALOG = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"
SLUICE_SQL = "Sluice catalog: spark.sql(q).collect()"
SLUICE_FED = "Sluice catalog: fed.sql(q).collect()"
SLUICE_ONE = "Sluice catalog, partitions=1: spark.sql(q).collect()"
JDBC = "Spark JDBCTableCatalog: spark.sql(q).collect()"
FLOOR = "spark.range(10).collect()"
FLOOR_GROUP = "catalog-floor"


def query(catalog: str) -> str:
    return f"SELECT * FROM {catalog}.{SCHEMA}.{TABLE} WHERE {WHERE}"


# ---------------------------------------------------------------- the tables
def _stamp(rows: int) -> str:
    return f"sluice catalog bench v{TABLE_VERSION} (generator v{data.GENERATOR_VERSION}), {rows} rows"


def ensure_postgres(url: str, rows: int) -> bool:
    """``sluice_bench.catalog_orders`` with ``rows`` rows (bench_orders' columns, primary key ``id``); True if generated."""
    with psycopg.connect(url, autocommit=True) as connection:
        current = connection.execute(
            "SELECT obj_description(to_regclass(%s), 'pg_class')", (f"{SCHEMA}.{TABLE}",)
        ).fetchone()
        if current is not None and current[0] == _stamp(rows):
            return False
        with connection.transaction():
            connection.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            connection.execute(f"DROP TABLE IF EXISTS {SCHEMA}.{TABLE}")
            connection.execute(f"CREATE TABLE {SCHEMA}.{TABLE} ({data._ddl(lambda c: c.pg_type)})")
            connection.execute(f"INSERT INTO {SCHEMA}.{TABLE} {data._PG_SELECT}", (rows,))
            connection.execute(f"COMMENT ON TABLE {SCHEMA}.{TABLE} IS '{_stamp(rows)}'")
        connection.execute(f"VACUUM (FREEZE, ANALYZE) {SCHEMA}.{TABLE}")
    return True


def ensure_mysql(url: str, rows: int) -> bool:
    """The same table in MariaDB (InnoDB, clustered on ``id``); True if generated."""
    connection = data.mysql_connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                (SCHEMA, TABLE),
            )
            current = cursor.fetchone()
            if current is not None and current[0] == _stamp(rows):
                return False
            cursor.execute("SET time_zone = '+00:00'")
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
            cursor.execute(f"USE {SCHEMA}")  # where the seq_1_to_N sequence table is found
            cursor.execute(f"DROP TABLE IF EXISTS {SCHEMA}.{TABLE}")
            cursor.execute(f"CREATE TABLE {SCHEMA}.{TABLE} ({data._ddl(lambda c: c.mysql_type)}) ENGINE=InnoDB")
            cursor.execute(f"INSERT INTO {SCHEMA}.{TABLE} {data._MYSQL_SELECT.format(rows=int(rows))}")
            cursor.execute(f"ANALYZE TABLE {SCHEMA}.{TABLE}")
            cursor.execute(f"ALTER TABLE {SCHEMA}.{TABLE} COMMENT = %s", (_stamp(rows),))
    finally:
        connection.close()
    return True


# ---------------------------------------------------------------- the catalogs
def jdbc_options(engine: str, url: str) -> dict[str, str]:
    """``spark.sql.catalog.<name>.*`` of Spark's JDBCTableCatalog over the same server (the report records only the URL)."""
    parts = urlsplit(url)
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    if engine == "postgresql":
        options = {"url": f"jdbc:postgresql://{parts.hostname}:{parts.port or 5432}{parts.path}"}
    else:
        # Spark picks its MySQL dialect by the jdbc:mysql: prefix, which MariaDB's driver accepts with
        # permitMysqlScheme (as in bench/spark_paths.py); the namespace names the database
        options = {
            "url": f"jdbc:mysql://{parts.hostname}:{parts.port or 3306}/{SCHEMA}?permitMysqlScheme",
            "sessionVariables": "time_zone='+00:00'",
        }
    options.update(driver=spark_paths.JDBC_DRIVERS[engine], user=user)
    if password:
        options["password"] = password
    return options


def attach_jdbc(ctx: BenchContext, engine: str, url: str) -> None:
    name = JDBC_NAMES[engine]
    ctx.fed.spark.conf.set(f"spark.sql.catalog.{name}", JDBC_CATALOG)
    for option, value in jdbc_options(engine, url).items():
        ctx.fed.spark.conf.set(f"spark.sql.catalog.{name}.{option}", value)


def detach_jdbc(ctx: BenchContext, engine: str) -> None:
    prefix = f"spark.sql.catalog.{JDBC_NAMES[engine]}"
    for key in [k for k in ctx.fed.spark.conf.getAll if k == prefix or k.startswith(prefix + ".")]:
        ctx.fed.spark.conf.unset(key)


# ---------------------------------------------------------------- per-run figures
class PathStats:
    """Per timed run of one SQL path: ``spark.sql``'s share (parse and analysis, the catalog's
    ``loadTable``) and, for a Sluice path, its planner's time (``CALLBACK.seconds``) and calls."""

    def __init__(self) -> None:
        self.analysis: list[float] = []
        self.seconds: list[float] = []
        self.by_method: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]  # a reset is the fresh state __init__ builds

    def run(self, ctx: BenchContext, text: str, through_fed: bool = False, sluice: bool = True) -> Callable[[], None]:
        """The query collected to the driver; None, as bench.timing expects of a path that returns no Arrow table."""

        def measured() -> None:
            seconds, calls = dict(CALLBACK.seconds), dict(CALLBACK.calls)
            started = time.perf_counter()
            frame = ctx.fed.sql(text) if through_fed else ctx.fed.spark.sql(text)
            self.analysis.append(time.perf_counter() - started)
            frame.collect()
            if sluice:
                spent = {m: CALLBACK.seconds[m] - seconds.get(m, 0.0) for m in CALLBACK.seconds}
                self.seconds.append(sum(spent.values()))
                self.by_method.update(spent)
                self.calls.update({m: CALLBACK.calls[m] - calls.get(m, 0) for m in CALLBACK.calls})

        return measured

    def facts(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.analysis:
            found["spark_sql_median_ms"] = round(statistics.median(self.analysis) * 1000, 2)
        runs = len(self.seconds)
        if runs:
            found.update(
                planning_median_ms=round(statistics.median(self.seconds) * 1000, 2),
                planning_max_ms=round(max(self.seconds) * 1000, 2),
                planning_ms_per_query_by_method={
                    m: round(s / runs * 1000, 2) for m, s in sorted(self.by_method.items()) if s
                },
                calls_per_query={m: round(c / runs, 2) for m, c in sorted(self.calls.items()) if c},
            )
        return found


def _floor(ctx: BenchContext) -> None:
    ctx.fed.spark.range(10).collect()


def _partitions(ctx: BenchContext, text: str) -> int:
    """How many partitions Sluice reads ``text`` with (1 when it cannot plan: the warm-up reports why)."""
    try:
        return spark_paths.sluice_partitions(ctx.fed, text)
    except Exception as error:  # noqa: BLE001
        log(f"  could not plan {text}: {describe(error)}")
        return 1


def _cases(ctx: BenchContext, urls: dict[str, str]) -> tuple[list[Case], dict[int, PathStats], dict[str, str]]:
    """Every engine's paths and the floor; each SQL path's figures (by ``id(case)``); why JDBC paths were skipped."""
    cases: list[Case] = []
    stats_by_case: dict[int, PathStats] = {}
    skipped: dict[str, str] = {}
    for engine in ENGINES:
        group = f"{engine}-catalog"
        sluice_q = query(SLUICE_NAMES[engine])
        one_q = query(ONE_PARTITION_NAMES[engine])
        for path, text, fed_sql, note in (
            (SLUICE_SQL, sluice_q, False, sluice_q),
            (SLUICE_FED, sluice_q, True, "fed.sql sets spark.sluice.pushdown around spark.sql"),
            (SLUICE_ONE, one_q, False, f"{one_q}; the same source attached with partitions=1"),
        ):
            stats = PathStats()
            case = Case(group, engine, path, stats.run(ctx, text, fed_sql), streams=_partitions(ctx, text), note=note)
            stats_by_case[id(case)] = stats
            cases.append(case)
        if engine not in ctx.jars:
            # no JDBC path to compare with: Sluice's spark.sql path is the group's baseline
            next(c for c in cases if c.shape == engine and c.path == SLUICE_SQL).baseline = True
            skipped[engine] = (
                f"no JDBC driver jar {spark_paths.JDBC_JARS[engine]} on the session's class path "
                f"(`make jdbc-drivers`, then rerun)"
            )
            log(f"  {engine}: JDBCTableCatalog path skipped: {skipped[engine]}")
            continue
        jdbc_q = query(JDBC_NAMES[engine])
        stats = PathStats()
        cases.append(
            Case(
                group,
                engine,
                JDBC,
                stats.run(ctx, jdbc_q, sluice=False),
                baseline=True,
                note=f"{jdbc_q}; {os.path.basename(spark_paths.JDBC_JARS[engine])}, "
                f"{jdbc_options(engine, urls[engine])['url']}",
            )
        )
        stats_by_case[id(cases[-1])] = stats
    cases.append(
        Case(
            FLOOR_GROUP,
            "floor",
            FLOOR,
            lambda: _floor(ctx),
            note="the least any collected Spark query costs in this session",
        )
    )
    return cases, stats_by_case, skipped


def _check(ctx: BenchContext, cases: list[Case]) -> None:
    """Outside the timing: rows out, partitions, and whether every path returns JDBCTableCatalog's rows
    (Sluice's ``spark.sql`` path's when JDBC is skipped)."""
    for engine in ENGINES:
        live = [c for c in cases if c.shape == engine and c.error is None]
        results = {}
        for case in live:
            catalog = {JDBC: JDBC_NAMES, SLUICE_ONE: ONE_PARTITION_NAMES}.get(case.path, SLUICE_NAMES)[engine]
            frame = ctx.fed.spark.sql(query(catalog))
            rows = sorted((tuple(r) for r in frame.collect()), key=lambda r: r[0])
            results[case.path] = rows
            case.rows = len(rows)
            if case.path == JDBC:
                case.streams = frame.rdd.getNumPartitions()
        reference_path = JDBC if JDBC in results else SLUICE_SQL
        reference = results.get(reference_path)
        for case in live:
            if case.path == reference_path:
                case.check = "reference"
            elif reference is not None:
                found = results[case.path]
                case.check = (
                    "same"
                    if found == reference
                    else "same ids, values differ"
                    if [r[0] for r in found] == [r[0] for r in reference]
                    else "DIFFERENT rows"
                )
    for case in cases:
        if case.path == FLOOR and case.error is None:
            case.rows = 10


def _median(case: Case | None) -> float | None:
    return statistics.median(case.seconds) if case is not None and case.seconds else None


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# ---------------------------------------------------------------- run
def run(ctx: BenchContext) -> dict[str, Any]:
    rows = min(ctx.scales) if ctx.quick else FULL_ROWS
    rounds = ctx.runs if ctx.quick else max(ctx.runs, FULL_ROUNDS)
    warm_rounds = QUICK_WARM_UP_ROUNDS if ctx.quick else WARM_UP_ROUNDS
    urls = {"postgresql": ctx.pg_url, "mariadb": ctx.mysql_url}
    log(f"== catalog, {rows:,} rows: preparing {SCHEMA}.{TABLE}")
    prepared = {}
    for engine, ensure in (("postgresql", ensure_postgres), ("mariadb", ensure_mysql)):
        started = time.perf_counter()
        generated = ensure(urls[engine], rows)
        prepared[engine] = {"generated": generated, "seconds": round(time.perf_counter() - started, 2)}
        log(f"  {engine}: {'generated' if generated else 'kept'} in {prepared[engine]['seconds']:.1f}s")
    for engine in ENGINES:
        ctx.fed.attach(SLUICE_NAMES[engine], urls[engine])
        ctx.fed.attach(ONE_PARTITION_NAMES[engine], urls[engine], partitions=1)
        if engine in ctx.jars:
            attach_jdbc(ctx, engine, urls[engine])
    try:
        cases, stats_by_case, skipped = _cases(ctx, urls)
        log(f"== catalog: warm-up of {len(cases)} cases, then {warm_rounds} untimed round(s)")
        warm_up(cases, log)
        measure(cases, warm_rounds, ctx.seed - 1, log)
        for case in cases:
            case.seconds.clear()
        for stats in stats_by_case.values():
            stats.reset()
        log(f"== catalog: {rounds} interleaved rounds")
        timed_rounds = measure(cases, rounds, ctx.seed + rows, log)
        _check(ctx, cases)
    finally:
        for engine in ENGINES:
            ctx.fed.detach(SLUICE_NAMES[engine])
            ctx.fed.detach(ONE_PARTITION_NAMES[engine])
            detach_jdbc(ctx, engine)
    return _record(cases, stats_by_case, skipped, rows, timed_rounds, prepared, urls)


def _record(
    cases: list[Case],
    stats_by_case: dict[int, PathStats],
    skipped: dict[str, str],
    rows: int,
    rounds: list[dict[str, float]],
    prepared: dict[str, Any],
    urls: dict[str, str],
) -> dict[str, Any]:
    floor_case = next(c for c in cases if c.path == FLOOR)
    floor = _median(floor_case)
    records, targets, per_path = [], [], {}
    for engine in ENGINES:
        mine = [c for c in cases if c.shape == engine]
        jdbc_case = next((c for c in mine if c.path == JDBC), None)
        jdbc = _median(jdbc_case)
        baseline = next(c for c in mine if c.baseline)
        for case in mine:
            median = _median(case)
            if median is not None:
                if jdbc is not None and case is not jdbc_case:
                    case.extra["vs JDBCTableCatalog"] = f"{(median - jdbc) * 1000:+.1f} ms"
                if floor is not None:
                    case.extra["above the floor"] = f"{(median - floor) * 1000:+.1f} ms"
            facts = stats_by_case[id(case)].facts() if id(case) in stats_by_case else {}
            if facts:
                per_path[f"{engine}: {case.path}"] = facts
                case.extra["spark.sql() (median)"] = f"{facts['spark_sql_median_ms']:.1f} ms"
            if "planning_median_ms" in facts:
                case.extra["Sluice's planning (median)"] = f"{facts['planning_median_ms']:.1f} ms"
                case.extra["ms/query by method"] = ", ".join(
                    f"{m} {v}" for m, v in facts["planning_ms_per_query_by_method"].items()
                )
            records.append(summary(case, baseline))
        sluice_case = next(c for c in mine if c.path == SLUICE_SQL)
        one_case = next(c for c in mine if c.path == SLUICE_ONE)
        targets.append(
            _target(engine, rows, sluice_case, one_case, jdbc_case, stats_by_case, floor, skipped.get(engine))
        )
        log(
            f"  {engine}: "
            + "; ".join(f"{c.path} {_ms(m)}" for c in mine if (m := _median(c)) is not None)
            + (f"; floor {_ms(floor)}" if floor is not None else "")
        )
    records.append(summary(floor_case, None))
    sluice_pg = _median(next(c for c in cases if c.shape == "postgresql" and c.path == SLUICE_SQL))
    targets.append(
        {
            "target": f"PostgreSQL: the old `fed.sql` path took {ISSUE_OLD_PATH_S * 1000:.0f} ms for this query on a 2M-row "
            "table (issue 13's figure; that path no longer exists and is not re-measured)",
            "measured": (
                f"{_ms(sluice_pg)} through the catalog now on {rows:,} rows, {sluice_pg / ISSUE_OLD_PATH_S:.2f}x "
                "the issue's figure (not the same run)"
            )
            if sluice_pg
            else "not measured",
            "met": None,
            "command": COMMAND,
        }
    )
    scale = {
        "rows": rows,
        "rounds": rounds,
        "results": records,
        "facts": {
            "queries": {e: {"sluice": query(SLUICE_NAMES[e]), "jdbc": query(JDBC_NAMES[e])} for e in ENGINES},
            "jdbc_urls": {e: jdbc_options(e, urls[e])["url"] for e in ENGINES},
            "jdbc_skipped": skipped,
            "data": prepared,
            "per_path": per_path,
            "floor_ms": round(floor * 1000, 2) if floor is not None else None,
        },
    }
    return scenario_result(KEY, TITLE, _about(rows, len(rounds), skipped), [scale], targets)


def _target(
    engine: str,
    rows: int,
    sluice: Case,
    one: Case,
    jdbc: Case | None,
    stats_by_case: dict[int, PathStats],
    floor: float | None,
    skipped: str | None,
) -> dict[str, Any]:
    title = (
        f"{ENGINE_TITLES[engine]}: 10-row query through the catalog within {LIMIT_S * 1000:.0f} ms of "
        f"JDBCTableCatalog (median, same run; {rows:,}-row table)"
    )
    s, j = _median(sluice), _median(jdbc)
    if skipped:
        return {"target": title, "measured": f"JDBC path skipped: {skipped}", "met": None, "command": COMMAND}
    if s is None or j is None:
        failed = "; ".join(f"{c.path}: {c.error}" for c in (sluice, jdbc) if c is not None and c.error)
        return {"target": title, "measured": f"failed: {failed or 'no timings'}", "met": None, "command": COMMAND}
    share = stats_by_case[id(sluice)].facts().get("planning_median_ms")
    measured = f"{(s - j) * 1000:+.1f} ms ({_ms(s)} vs {_ms(j)}, {s / j:.2f}x, {sluice.streams} partitions)"
    if share is not None:
        measured += f"; Sluice's planning {share:.1f} ms of it"
    if (o := _median(one)) is not None:
        measured += f"; attached with partitions=1: {(o - j) * 1000:+.1f} ms ({_ms(o)})"
    if floor is not None:
        measured += f"; spark.range(10) floor {_ms(floor)}"
    return {"target": title, "measured": measured, "met": s - j <= LIMIT_S, "command": COMMAND}


def _about(rows: int, rounds: int, skipped: dict[str, str]) -> list[str]:
    lines = [
        f"- Query: `SELECT * FROM <catalog>.{SCHEMA}.{TABLE} WHERE {WHERE}` (10 rows, all 6 columns of the SQL "
        f"scenario's table, primary key `id`), on a {rows:,}-row table in PostgreSQL and in MariaDB, collected to "
        "the driver. Every path runs the whole query each time: parse, analysis (the catalog's `loadTable`), "
        "optimisation, planning, the read and the collect.",
        f"- Paths: `{SLUICE_SQL}` after `fed.attach`; `{SLUICE_FED}` (the same, with `spark.sluice.pushdown` set and "
        f"restored around the analysis); `{SLUICE_ONE}` (the same source attached again with "
        "`partitions=1`: what splitting a 10-row read into *streams* partitions costs); `{JDBC}` (Spark's `JDBCTableCatalog` over Debian's JDBC jars, the bold "
        f"baseline, or Sluice's `spark.sql` path where JDBC is skipped; it reads in one partition and asks the server for the schema at every `loadTable`); `{FLOOR}`, "
        "the floor of any collected Spark query in this session. Sluice describes a table once per attach.",
        f"- One Spark session; one warm-up run per path, then untimed rounds, then {rounds} interleaved rounds in a "
        "shuffled order. *spark.sql()* is the median time of `spark.sql(q)` itself (parse and analysis, with the "
        "catalog's `loadTable`); the rest of a path is `collect()` (optimisation, planning, the read). *Sluice's "
        "planning* is the time Sluice's Python planner spent answering the catalog layer (py4j callbacks: describe, "
        "filters, plan, read) during each run of the path: its median, and the mean per query by method. The rest "
        "is Spark's, py4j's and the read's.",
        f"- Issue 13 measured {ISSUE_OLD_PATH_S * 1000:.0f} ms for this query through the old `fed.sql` path "
        "(sqlglot front end) on a 2M-row PostgreSQL table; that path no longer exists, so the figure is the issue's.",
        f"- Not scaled by `--scales`: {FULL_ROWS:,} rows, the issue's table size (`--quick`: the run's quick scale).",
    ]
    lines += [f"- {ENGINE_TITLES[e]}: JDBCTableCatalog path skipped: {why}." for e, why in skipped.items()]
    return lines
