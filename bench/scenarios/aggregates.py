"""Aggregates scenario: a GROUP BY and a global count(*) answered by the source vs every row through Spark.

Issue 14's performance shapes, over the SQL scenario's generated ``bench_orders`` table
(bench/data.py) in every SQL engine:

- ``group``: ``SELECT status, count(*), sum(customer_id), min(amount), max(amount) FROM t
  GROUP BY status`` (6 groups: the table's only low-cardinality column, 5 values and NULL);
- ``count``: ``SELECT count(*) FROM t``.

Paths per engine, each collecting the answer to the driver:

- Sluice's catalog with pushdown: ``fed.attach(...)`` then ``spark.sql(q).collect()``;
- Sluice with pushdown off: ``fed.sql(q, pushdown=False).collect()`` (every row moves: what
  users had before aggregate pushdown);
- Spark's ``JDBCTableCatalog`` (PostgreSQL and MariaDB; it pushes COUNT/SUM/MIN/MAX itself;
  skipped with the reason when Debian's JDBC jars are absent);
- the raw driver (psycopg, pymysql, sqlite3, duckdb) running the same query, connecting and
  fetching every result row: the baseline.

SQLite's benchmark table is not STRICT, so Sluice pushes only its ``count(*)`` there (the planner
says why); a STRICT copy of the same rows (``sqlite-strict``, a separate file generated from the
first) shows the pushed GROUP BY. Rows transferred from the source are measured outside the timing
(``fed.transferred``; Spark's scan metrics for JDBC), and every path's rows are checked against the
raw driver's. ``--quick`` measures the run's smallest scale; a full run 1,000,000 rows, or the
scales ``--scales`` names (e.g. ``--scales 5M``).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg

from bench import data
from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.scenarios.catalog import JDBC_NAMES, attach_jdbc, detach_jdbc, jdbc_options
from bench.spark_paths import JDBC_JARS
from bench.timing import describe, summary, warmed_rounds

KEY = "aggregates"
TITLE = "Aggregate pushdown: GROUP BY and count(*) answered by the source vs every row through Spark"
COMMAND = "python -m bench --only aggregates"
ENGINES = ("postgresql", "mariadb", "sqlite", "sqlite-strict", "duckdb")
ENGINE_TITLES = {
    "postgresql": "PostgreSQL",
    "mariadb": "MariaDB",
    "sqlite": "SQLite (bench table, not STRICT)",
    "sqlite-strict": "SQLite (STRICT copy)",
    "duckdb": "DuckDB",
}
JDBC_ENGINES = ("postgresql", "mariadb")
#: the table size of a full run unless --scales names others; --quick uses the run's smallest scale
FULL_ROWS = 1_000_000
#: issue 14's targets
TIME_LIMIT = 1.2
#: issue 14's old figures: 2M-row PostgreSQL table, GROUP BY status (8 groups), count(*) and sum(amount)
ISSUE_ROWS, ISSUE_GROUPS = 2_000_000, 8
ISSUE_FIGURES = {"Sluice": 1.43, "JDBCTableCatalog": 0.45, "psycopg": 0.18}
#: catalog names of this scenario only (the JDBC ones are the catalog scenario's, attached and detached alike)
SLUICE_NAMES = {
    "postgresql": "agg_pg",
    "mariadb": "agg_my",
    "sqlite": "agg_lite",
    "sqlite-strict": "agg_strict",
    "duckdb": "agg_duck",
}
SLUICE = "Sluice catalog, pushdown: spark.sql(q).collect()"
SLUICE_OFF = "Sluice, pushdown=False: fed.sql(q, pushdown=False).collect()"
JDBC = "Spark JDBCTableCatalog: spark.sql(q).collect()"
RAW_DRIVERS = {
    "postgresql": "psycopg",
    "mariadb": "pymysql",
    "sqlite": "sqlite3",
    "sqlite-strict": "sqlite3",
    "duckdb": "duckdb",
}


@dataclass(frozen=True)
class AggShape:
    key: str
    title: str
    select: str
    group_by: str | None = None

    def sql(self, table: str) -> str:
        return f"SELECT {self.select} FROM {table}" + (f" GROUP BY {self.group_by}" if self.group_by else "")


SHAPES = (
    AggShape(
        "group",
        "GROUP BY status (6 groups), count(*), sum(customer_id), min(amount), max(amount)",
        "status, count(*), sum(customer_id), min(amount), max(amount)",
        "status",
    ),
    AggShape("count", "global count(*)", "count(*)"),
)


def raw_path(engine: str) -> str:
    return f"raw {RAW_DRIVERS[engine]}: connect, run q, fetchall"


def _native_table(engine: str) -> str:
    return f"{data.PG_SCHEMA}.{data.TABLE}" if engine in JDBC_ENGINES else data.TABLE


def _spark_table(catalog: str, engine: str) -> str:
    return f"{catalog}.{_native_table(engine)}"


def strict_path(data_dir: str, rows: int) -> str:
    """The STRICT copy's file (named like the bench files, so ``--cleanup`` removes it)."""
    return os.path.abspath(os.path.join(data_dir, f"{data.TABLE}-strict-{rows}.db"))


def ensure_sqlite_strict(data_dir: str, rows: int) -> bool:
    """A STRICT copy of the SQLite bench table (its rows copied, not regenerated); True if generated."""
    path = strict_path(data_dir, rows)
    if data._sqlite_current(path, rows):
        return False
    building = data._fresh(path)
    connection = sqlite3.connect(building)
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        # STRICT tables know INTEGER, REAL, TEXT, BLOB, ANY: placed_at is kept as its text
        connection.execute(
            f"CREATE TABLE {data.TABLE} (id INTEGER PRIMARY KEY, customer_id INTEGER, status TEXT, "
            "amount REAL, placed_at TEXT, score REAL) STRICT"
        )
        connection.execute("ATTACH DATABASE ? AS src", (data.sqlite_path(data_dir, rows),))
        connection.execute(f"INSERT INTO {data.TABLE} SELECT * FROM src.{data.TABLE}")
        connection.commit()
        connection.execute("DETACH DATABASE src")
        connection.execute(f"PRAGMA user_version = {data.GENERATOR_VERSION}")
        connection.execute("ANALYZE")
        connection.commit()
    finally:
        connection.close()
    os.replace(building, path)
    return True


def _prepare(ctx: BenchContext, rows: int) -> dict[str, Any]:
    prepared: dict[str, Any] = {}
    for engine, ensure in (
        ("postgresql", lambda: data.ensure_postgres(ctx.pg_url, rows)),
        ("mariadb", lambda: data.ensure_mysql(ctx.mysql_url, rows)),
        ("sqlite", lambda: data.ensure_sqlite(data.sqlite_path(ctx.data_dir, rows), rows)),
        ("duckdb", lambda: data.ensure_duckdb(data.duckdb_path(ctx.data_dir, rows), rows)),
    ):
        done = ensure()
        prepared[engine] = {
            "generated": done.generated,
            "seconds": round(done.seconds, 2),
            "fingerprint": done.fingerprint,
        }
        log(f"  {engine}: {'generated' if done.generated else 'kept'} in {done.seconds:.1f}s")
    started = time.perf_counter()
    generated = ensure_sqlite_strict(ctx.data_dir, rows)
    prepared["sqlite-strict"] = {"generated": generated, "seconds": round(time.perf_counter() - started, 2)}
    log(f"  sqlite-strict: {'copied' if generated else 'kept'} in {prepared['sqlite-strict']['seconds']:.1f}s")
    return prepared


def _urls(ctx: BenchContext, rows: int) -> dict[str, str]:
    return {
        "postgresql": ctx.pg_url,
        "mariadb": ctx.mysql_url,
        "sqlite": "sqlite:///" + data.sqlite_path(ctx.data_dir, rows),
        "sqlite-strict": "sqlite:///" + strict_path(ctx.data_dir, rows),
        "duckdb": "duckdb:///" + data.duckdb_path(ctx.data_dir, rows),
    }


# ---------------------------------------------------------------- the raw drivers
def _fetch_postgres(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as connection:
        return connection.execute(sql).fetchall()


def _fetch_mysql(url: str, sql: str) -> list[tuple[Any, ...]]:
    connection = data.mysql_connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())
    finally:
        connection.close()


def _fetch_duckdb(url: str, sql: str) -> list[tuple[Any, ...]]:
    import duckdb

    with duckdb.connect(url.split(":///", 1)[1], read_only=True) as connection:
        return connection.execute(sql).fetchall()


def _fetch_sqlite(url: str, sql: str) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(f"file:{url.split(':///', 1)[1]}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


_FETCH = {
    "postgresql": _fetch_postgres,
    "mariadb": _fetch_mysql,
    "sqlite": _fetch_sqlite,
    "sqlite-strict": _fetch_sqlite,
    "duckdb": _fetch_duckdb,
}


def _fetch(engine: str, url: str, sql: str) -> list[tuple[Any, ...]]:
    """Connect, run ``sql``, fetch every row, close."""
    return _FETCH[engine](url, sql)


# ---------------------------------------------------------------- the cases
@dataclass
class Query:
    """One engine x shape: the text each path runs, and what the planner decided."""

    engine: str
    shape: AggShape
    sluice: str
    raw: str
    jdbc: str | None
    pushed: bool
    remote: str
    reasons: list[str]


def _query(ctx: BenchContext, engine: str, shape: AggShape) -> Query:
    sluice_q = shape.sql(_spark_table(SLUICE_NAMES[engine], engine))
    jdbc_q = (
        shape.sql(_spark_table(JDBC_NAMES[engine], engine)) if engine in ctx.jars and engine in JDBC_ENGINES else None
    )
    scan = ctx.fed.plan(sluice_q).scans[0]
    reasons = [f"{v.sql}: {v.reason}" for v in scan.aggregates if v.level.value != "EXACT"]
    return Query(
        engine,
        shape,
        sluice_q,
        shape.sql(_native_table(engine)),
        jdbc_q,
        scan.spec.aggregate is not None,
        scan.remote_query,
        reasons,
    )


def _collect(ctx: BenchContext, text: str, pushdown: bool | None) -> Callable[[], None]:
    """``spark.sql(text).collect()`` (``pushdown`` None: the session as it is), or ``fed.sql(text, pushdown)``."""

    def run() -> None:
        frame = ctx.fed.spark.sql(text) if pushdown is None else ctx.fed.sql(text, pushdown=pushdown)
        frame.collect()

    return run


def _cases(ctx: BenchContext, queries: list[Query], urls: dict[str, str]) -> list[Case]:
    cases: list[Case] = []
    for q in queries:
        group, key = f"{q.engine}-aggregates", q.shape.key

        def raw(engine: str = q.engine, text: str = q.raw) -> None:
            _fetch(engine, urls[engine], text)

        cases.append(Case(group, key, raw_path(q.engine), raw, baseline=True, note=q.raw))
        pushed = "pushed" if q.pushed else "NOT pushed: " + "; ".join(q.reasons or ["(see the plan)"])
        cases.append(
            Case(group, key, SLUICE, _collect(ctx, q.sluice, None), note=f"{pushed}; remote query: {q.remote}")
        )
        cases.append(
            Case(
                group,
                key,
                SLUICE_OFF,
                _collect(ctx, q.sluice, False),
                note="reads every row of the table; Spark aggregates",
            )
        )
        if q.jdbc is not None:
            cases.append(
                Case(
                    group,
                    key,
                    JDBC,
                    _collect(ctx, q.jdbc, None),
                    note=f"{os.path.basename(JDBC_JARS[q.engine])}, {jdbc_options(q.engine, urls[q.engine])['url']}",
                )
            )
    return cases


# ---------------------------------------------------------------- outside the timing
def _normal(rows: list[Any]) -> list[tuple[Any, ...]]:
    """Rows as comparable tuples (decimals and floats as floats), ordered by the first column."""
    found = [tuple(float(v) if isinstance(v, (Decimal, float)) else v for v in row) for row in rows]
    return sorted(found, key=lambda r: (r[0] is None, str(r[0])))


def _scan_rows(frame: Any) -> int | None:
    """Rows Spark's scans output in ``frame``'s last execution (its BatchScan's numOutputRows)."""

    def visit(node: Any) -> list[int]:
        name = node.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            return visit(node.executedPlan())
        if name.endswith("QueryStageExec"):
            return visit(node.plan())
        if name in ("BatchScanExec", "RowDataSourceScanExec"):  # JDBC's scan is a V1 scan in a V2 table
            metric = node.metrics().get("numOutputRows")
            return [int(metric.get().value())] if metric.isDefined() else []
        found, children = [], node.children().iterator()
        while children.hasNext():
            found += visit(children.next())
        return found

    counts = visit(frame._jdf.queryExecution().executedPlan())
    return sum(counts) if counts else None


def _jdbc_pushed(frame: Any) -> str:
    text = frame._jdf.queryExecution().executedPlan().toString()
    start = text.find("PushedAggregates: [")
    if start < 0:
        return "no PushedAggregates in Spark's plan"
    return text[start : text.find("]", start) + 1]


def _moved(measured: dict[str, dict[str, int]]) -> dict[str, int]:
    return {key: sum(scan[key] for scan in measured.values()) for key in ("rows", "bytes", "reads")}


def _check(ctx: BenchContext, queries: list[Query], cases: list[Case], urls: dict[str, str]) -> dict[str, Any]:
    """Rows out, rows transferred and whether every path returns the raw driver's rows."""
    facts: dict[str, Any] = {}
    for q in queries:
        mine = {c.path: c for c in cases if c.scenario == f"{q.engine}-aggregates" and c.shape == q.shape.key}
        results: dict[str, list[tuple[Any, ...]]] = {}
        fact: dict[str, Any] = {
            "sluice_query": q.sluice,
            "raw_query": q.raw,
            "jdbc_query": q.jdbc,
            "pushed": q.pushed,
            "remote_query": q.remote,
            "not_pushed_because": q.reasons,
        }
        for path, case in mine.items():
            if case.error is not None:
                continue
            try:
                if path == raw_path(q.engine):
                    results[path] = _normal(_fetch(q.engine, urls[q.engine], q.raw))
                    case.extra["rows from source"] = f"{len(results[path]):,}"
                    continue
                text = q.jdbc if path == JDBC and q.jdbc is not None else q.sluice
                frame = ctx.fed.sql(text, pushdown=False) if path == SLUICE_OFF else ctx.fed.spark.sql(text)
                results[path] = _normal(frame.collect())
                if path == JDBC:
                    scanned = _scan_rows(frame)
                    fact["jdbc"] = {"pushed": _jdbc_pushed(frame), "scan_rows": scanned}
                    case.extra["rows from source"] = (
                        f"{scanned:,} (Spark's scan metric)" if scanned is not None else "—"
                    )
                else:
                    moved = _moved(ctx.fed.transferred(q.sluice, pushdown=path != SLUICE_OFF))
                    fact["pushdown" if path == SLUICE else "no_pushdown"] = moved
                    case.streams = max(moved["reads"], 1)
                    case.extra["rows from source"] = f"{moved['rows']:,} ({moved['bytes'] / 1e6:,.2f} MB)"
            except Exception as error:  # noqa: BLE001 - a benchmark reports
                case.check = f"check failed: {describe(error)}"
                log(f"  {q.engine} {q.shape.key} {path}: check failed: {describe(error)}")
        reference = results.get(raw_path(q.engine))
        for path, case in mine.items():
            if path not in results:
                continue
            case.rows = len(results[path])
            case.check = (
                "reference"
                if path == raw_path(q.engine)
                else "no reference"
                if reference is None
                else "same"
                if results[path] == reference
                else "DIFFERENT rows"
            )
        fact["groups"] = len(reference) if reference is not None else None
        facts[f"{q.engine}/{q.shape.key}"] = fact
    return facts


# ---------------------------------------------------------------- run
def run(ctx: BenchContext) -> dict[str, Any]:
    scales = [_scale(ctx, rows) for rows in ctx.rows_for(FULL_ROWS)]
    targets = [t for s in scales for t in _targets(s)] + [_issue_reference(scales[-1])]
    return scenario_result(KEY, TITLE, _about(ctx), scales, targets)


def _scale(ctx: BenchContext, rows: int) -> dict[str, Any]:
    log(f"== aggregates, {rows:,} rows: preparing data")
    prepared = _prepare(ctx, rows)
    urls = _urls(ctx, rows)
    for engine in ENGINES:
        ctx.fed.attach(SLUICE_NAMES[engine], urls[engine])
    for engine in JDBC_ENGINES:
        if engine in ctx.jars:
            attach_jdbc(ctx, engine, urls[engine])
        else:
            log(f"  {engine}: JDBCTableCatalog path skipped: no driver jar {JDBC_JARS[engine]}")
    try:
        queries = [_query(ctx, engine, shape) for engine in ENGINES for shape in SHAPES]
        for q in queries:
            log(
                f"  {q.engine:13} {q.shape.key:5}: {'pushed' if q.pushed else 'NOT pushed'}: {q.remote}"
                + (f" ({'; '.join(q.reasons)})" if q.reasons else "")
            )
        cases = _cases(ctx, queries, urls)
        rounds = warmed_rounds(f"aggregates, {rows:,} rows", cases, ctx.runs, ctx.seed + rows, log)
        log(f"== aggregates, {rows:,} rows: rows transferred and the answers' check")
        facts = _check(ctx, queries, cases, urls)
    finally:
        for engine in ENGINES:
            ctx.fed.detach(SLUICE_NAMES[engine])
        for engine in JDBC_ENGINES:
            detach_jdbc(ctx, engine)
    baselines = {(c.scenario, c.shape): c for c in cases if c.baseline}
    skipped = {e: f"no JDBC driver jar {JDBC_JARS[e]}" for e in JDBC_ENGINES if e not in ctx.jars}
    return {
        "rows": rows,
        "rounds": rounds,
        "results": [summary(c, baselines.get((c.scenario, c.shape))) for c in cases],
        "facts": {"data": prepared, "queries": facts, "jdbc_skipped": skipped},
    }


# ---------------------------------------------------------------- targets
def _record(scale: dict[str, Any], engine: str, shape: str, path: str) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in scale["results"]
            if r["scenario"] == f"{engine}-aggregates" and r["shape"] == shape and r["path"] == path
        ),
        None,
    )


def _targets(scale: dict[str, Any]) -> list[dict[str, Any]]:
    rows, found = scale["rows"], []
    for engine in ENGINES:
        title = ENGINE_TITLES[engine]
        fact = scale["facts"]["queries"].get(f"{engine}/group", {})
        moved, groups = fact.get("pushdown"), fact.get("groups")
        target = f"{title}, {rows:,} rows: a pushed GROUP BY transfers at most (groups x partitions) rows"
        if not fact.get("pushed"):
            found.append(
                {
                    "target": target,
                    "met": False,
                    "command": COMMAND,
                    "measured": "GROUP BY not pushed: "
                    + "; ".join(fact.get("not_pushed_because") or ["?"])
                    + (f"; {moved['rows']:,} rows transferred" if moved else ""),
                }
            )
        elif moved and groups is not None:
            limit = groups * max(moved["reads"], 1)
            found.append(
                {
                    "target": target,
                    "met": moved["rows"] <= limit,
                    "command": COMMAND,
                    "measured": f"{moved['rows']:,} rows ({moved['bytes']:,} bytes) for {groups} groups x "
                    f"{moved['reads']} partition read(s) = {limit}",
                }
            )
        for shape in SHAPES:
            sluice, raw = _record(scale, engine, shape.key, SLUICE), _record(scale, engine, shape.key, raw_path(engine))
            target = f"{title}, {rows:,} rows, `{shape.key}`: Sluice ≤ {TIME_LIMIT}x the raw driver's time"
            if not sluice or not raw or sluice.get("median_s") is None or raw.get("median_s") is None:
                found.append({"target": target, "met": None, "command": COMMAND, "measured": "not measured"})
                continue
            ratio = sluice["median_s"] / raw["median_s"]
            pushed = scale["facts"]["queries"].get(f"{engine}/{shape.key}", {}).get("pushed")
            found.append(
                {
                    "target": target,
                    "met": ratio <= TIME_LIMIT,
                    "command": COMMAND,
                    "measured": f"{ratio:.2f}x ({sluice['median_s']:.3f} s vs {RAW_DRIVERS[engine]} "
                    f"{raw['median_s']:.3f} s){'' if pushed else '; not pushed'}",
                }
            )
    return found


def _issue_reference(scale: dict[str, Any]) -> dict[str, Any]:
    figures = {
        "Sluice": _record(scale, "postgresql", "group", SLUICE),
        "JDBCTableCatalog": _record(scale, "postgresql", "group", JDBC),
        "psycopg": _record(scale, "postgresql", "group", raw_path("postgresql")),
    }
    now = ", ".join(
        f"{name} {r['median_s']:.3f} s" for name, r in figures.items() if r and r.get("median_s") is not None
    )
    moved = scale["facts"]["queries"].get("postgresql/group", {}).get("pushdown")
    return {
        "target": (
            f"PostgreSQL, for reference: issue 14's figures on a {ISSUE_ROWS:,}-row table, GROUP BY status "
            f"({ISSUE_GROUPS} groups) with count(*) and sum(amount): "
            + ", ".join(f"{k} {v:.2f} s" for k, v in ISSUE_FIGURES.items())
            + f" (Sluice moving {ISSUE_ROWS:,} rows); not re-measured"
        ),
        "measured": (
            f"this run ({scale['rows']:,} rows, 4 aggregates): {now or 'not measured'}"
            + (f"; Sluice moved {moved['rows']:,} rows" if moved else "")
        ),
        "met": None,
        "command": COMMAND,
    }


def _about(ctx: BenchContext) -> list[str]:
    return [
        "- Table: the SQL scenario's `bench_orders` (bench/data.py) in PostgreSQL, MariaDB, SQLite and DuckDB; "
        "`status` is its only low-cardinality column (5 values and NULL: 6 groups).",
        "- Shapes: " + "; ".join(f"`{s.key}` = `{s.sql('t')}`" for s in SHAPES) + ".",
        f"- Paths: `{SLUICE}` after `fed.attach` (aggregates pushed where the planner accepts them); `{SLUICE_OFF}` "
        f"(every row read, Spark aggregates: what users had before); `{JDBC}` (Spark's JDBCTableCatalog over Debian's "
        "JDBC jars, PostgreSQL and MariaDB only; it pushes the aggregates itself, see *PushedAggregates* in the JSON); "
        "and the bold baseline, the raw driver (psycopg, pymysql, sqlite3, duckdb) connecting, running the same query "
        "and fetching every result row, so *× baseline* is the path's time over the raw driver's (medians).",
        "- *rows from source*: what Sluice's scans transferred (`fed.transferred(q)`, one extra run outside the "
        "timing; *streams* is its partition reads), Spark's scan metric for JDBC, the result rows for the raw driver. "
        "*check*: every path's rows against the raw driver's.",
        "- SQLite: the benchmark table is not STRICT, so Sluice pushes only its `count(*)` (a column of a non-STRICT "
        "table may hold any type; the planner's reason is in the notes); `sqlite-strict` is a STRICT copy of the "
        "same rows (placed_at as TEXT), where the GROUP BY is pushed.",
        f"- One Spark session; one warm-up run per path, then {ctx.runs} interleaved rounds in a shuffled order. "
        f"A full run measures {FULL_ROWS:,} rows (`--scales 5M` for 5,000,000); `--quick` the run's quick scale.",
    ]
