"""Joins scenario: a same-source join answered by the source, and a cross-source star join with a runtime filter.

Issue 14's join shapes, over the SQL scenario's generated ``bench_orders`` table (bench/data.py):

- ``join`` (per engine: PostgreSQL, MariaDB, SQLite, DuckDB): ``bench_orders`` joined with a
  100,000-row ``bench_customers`` table of the same source on ``customer_id = id``, with a 1% filter
  (``status = 'refunded'``); Sluice pushes the join (one remote query). SQLite reads a STRICT copy of
  the orders (a join over a loose SQLite column is refused; see pushdown.md, Joins), both tables in
  one file; DuckDB a file holding a copy of the orders and the customers.
- ``star`` (fact in PostgreSQL and in DuckDB): ``bench_orders`` joined with a 100-row ``bench_dim`` in
  a DuckDB file of its own (another source) filtered to 10 keys (``region = 'north'``, pushed EXACT), grouped by the
  dimension's name; Spark joins and its dynamic pruning hands the fact scan the 10 keys at run time.

Paths, each collecting the answer to the driver: Sluice's catalog (``spark.sql(q).collect()``);
Sluice with pushdown off (``fed.sql(q, pushdown=False)``: every row moves); Spark's
``JDBCTableCatalog`` for the PostgreSQL and MariaDB ``join`` (both tables through it); and the raw
driver running the same SQL (for ``star``: in the fact's engine, over a copy of the dimension there),
the baseline. Rows transferred are measured outside the timing (``fed.transferred``; Spark's scan
metric for JDBC), and every path's rows are checked against the raw driver's.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

import psycopg

from bench import data
from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.scenarios.aggregates import _collect, _fetch, _moved, _normal, _scan_rows
from bench.scenarios.catalog import JDBC_NAMES, attach_jdbc, detach_jdbc, jdbc_options
from bench.spark_paths import JDBC_JARS
from bench.timing import describe, summary, warmed_rounds

KEY = "joins"
TITLE = "Joins: a same-source join answered by the source, a cross-source star join with a runtime filter"
COMMAND = "python -m bench --only joins"
ENGINES = ("postgresql", "mariadb", "sqlite", "duckdb")
STAR_FACTS = ("postgresql", "duckdb")
ENGINE_TITLES = {"postgresql": "PostgreSQL", "mariadb": "MariaDB", "sqlite": "SQLite (STRICT copy)", "duckdb": "DuckDB"}
JDBC_ENGINES = ("postgresql", "mariadb")
FULL_ROWS = 1_000_000
CUSTOMERS = 100_000
#: the dimension: ids 0, 1000, ..., 99000; 'north' for every tenth (10 keys, each matching 1 in 100,000 fact rows)
DIM_ROWS, DIM_STEP = 100, 1000
CUSTOMERS_TABLE, DIM_TABLE = "bench_customers", "bench_dim"
SLUICE_NAMES = {"postgresql": "jn_pg", "mariadb": "jn_my", "sqlite": "jn_lite", "duckdb": "jn_duck"}
DIM_CATALOG = "jn_dim"
SLUICE = "Sluice catalog, pushdown: spark.sql(q).collect()"
SLUICE_OFF = "Sluice, pushdown=False: fed.sql(q, pushdown=False).collect()"
JDBC = "Spark JDBCTableCatalog: spark.sql(q).collect()"
#: what the join cost rule's reasons end with (sluice/planner/join_cost.py)
KEPT_BY_COST = "; Spark joins"
RAW_DRIVERS = {"postgresql": "psycopg", "mariadb": "pymysql", "sqlite": "sqlite3", "duckdb": "duckdb"}
JOIN_SQL = (
    "SELECT o.id, o.amount, c.segment FROM {orders} o JOIN {customers} c ON o.customer_id = c.id "
    "WHERE o.status = 'refunded'"
)
STAR_SQL = (
    "SELECT d.name, count(*) AS n, sum(o.amount) AS total FROM {orders} o JOIN {dim} d ON o.customer_id = d.id "
    "WHERE d.region = 'north' GROUP BY d.name"
)


def raw_path(engine: str) -> str:
    return f"raw {RAW_DRIVERS[engine]}: connect, run q, fetchall"


def _schema(engine: str) -> str:
    return f"{data.PG_SCHEMA}." if engine in JDBC_ENGINES else ""


def _joins_file(data_dir: str, rows: int, suffix: str) -> str:
    """This scenario's own SQLite / DuckDB file (named like the bench files, so ``--cleanup`` removes it)."""
    return os.path.abspath(os.path.join(data_dir, f"{data.TABLE}-joins-{rows}.{suffix}"))


def _dim_file(data_dir: str) -> str:
    return os.path.abspath(os.path.join(data_dir, f"{data.TABLE}-joins-dim.duckdb"))


def _customer_rows() -> list[tuple[int, str, int]]:
    return [(i, "abcdefghij"[i % 10], (i * 37) % 1000) for i in range(CUSTOMERS)]


def _dim_rows() -> list[tuple[int, str, str]]:
    return [(k * DIM_STEP, f"d{k}", "north" if k % 10 == 0 else "south") for k in range(DIM_ROWS)]


# ---------------------------------------------------------------- data
def _ensure_postgres(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        for table, ddl, rows in (
            (CUSTOMERS_TABLE, "id int PRIMARY KEY, segment text, credit int", _customer_rows()),
            (DIM_TABLE, "id int PRIMARY KEY, name text, region text", _dim_rows()),
        ):
            found = connection.execute("SELECT to_regclass(%s)", (f"{data.PG_SCHEMA}.{table}",)).fetchone()
            if found and found[0] is not None:
                count = connection.execute(f"SELECT count(*) FROM {data.PG_SCHEMA}.{table}").fetchone()
                if count and count[0] == len(rows):
                    continue
            connection.execute(f"DROP TABLE IF EXISTS {data.PG_SCHEMA}.{table}")
            connection.execute(f"CREATE TABLE {data.PG_SCHEMA}.{table} ({ddl})")
            with connection.cursor().copy(f"COPY {data.PG_SCHEMA}.{table} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            connection.execute(f"VACUUM (FREEZE, ANALYZE) {data.PG_SCHEMA}.{table}")


def _ensure_mysql(url: str) -> None:
    connection = data.mysql_connect(url)
    try:
        with connection.cursor() as cursor:
            table = f"{data.MYSQL_DATABASE}.{CUSTOMERS_TABLE}"
            cursor.execute(
                "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                (data.MYSQL_DATABASE, CUSTOMERS_TABLE),
            )
            found = cursor.fetchone()
            if found and found[0]:
                cursor.execute(f"SELECT count(*) FROM {table}")
                count = cursor.fetchone()
                if count and count[0] == CUSTOMERS:
                    return
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
            cursor.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, segment VARCHAR(4), credit INT) ENGINE=InnoDB")
            rows = _customer_rows()
            for start in range(0, len(rows), 10_000):
                cursor.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s)", rows[start : start + 10_000])
            cursor.execute(f"ANALYZE TABLE {table}")
        connection.commit()
    finally:
        connection.close()


def _ensure_sqlite(data_dir: str, rows: int) -> None:
    """A STRICT copy of the orders and the customers in one file."""
    path = _joins_file(data_dir, rows, "db")
    if not data._sqlite_current(path, rows):
        building = data._fresh(path)
        connection = sqlite3.connect(building)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute(
                f"CREATE TABLE {data.TABLE} (id INTEGER PRIMARY KEY, customer_id INTEGER, status TEXT, "
                "amount REAL, placed_at TEXT, score REAL) STRICT"
            )
            connection.execute("ATTACH DATABASE ? AS src", (data.sqlite_path(data_dir, rows),))
            connection.execute(f"INSERT INTO {data.TABLE} SELECT * FROM src.{data.TABLE}")
            connection.commit()
            connection.execute("DETACH DATABASE src")
            connection.execute(
                f"CREATE TABLE {CUSTOMERS_TABLE} (id INTEGER PRIMARY KEY, segment TEXT, credit INTEGER) STRICT"
            )
            connection.executemany(f"INSERT INTO {CUSTOMERS_TABLE} VALUES (?, ?, ?)", _customer_rows())
            connection.execute(f"PRAGMA user_version = {data.GENERATOR_VERSION}")
            connection.execute("ANALYZE")
            connection.commit()
        finally:
            connection.close()
        os.replace(building, path)


def _ensure_dim(data_dir: str) -> None:
    """The dimension in its own DuckDB file: another source for both facts (``id INTEGER`` like
    ``customer_id``: Spark hands a runtime filter over the key column itself, not over a cast of it)."""
    import duckdb

    path = _dim_file(data_dir)
    if os.path.exists(path):
        os.remove(path)
    with duckdb.connect(path) as connection:
        connection.execute(f"CREATE TABLE {DIM_TABLE} (id INTEGER PRIMARY KEY, name VARCHAR, region VARCHAR)")
        connection.executemany(f"INSERT INTO {DIM_TABLE} VALUES (?, ?, ?)", _dim_rows())


def _ensure_duckdb(data_dir: str, rows: int) -> None:
    import duckdb

    path = _joins_file(data_dir, rows, "duckdb")
    if os.path.exists(path):
        with duckdb.connect(path, read_only=True) as connection:
            found = connection.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_name IN (?, ?, ?)",
                [data.TABLE, CUSTOMERS_TABLE, DIM_TABLE],
            ).fetchone()
            count = connection.execute(f"SELECT count(*) FROM {data.TABLE}").fetchone() if found and found[0] else None
        if found and found[0] == 3 and count and count[0] == rows:
            return
    building = data._fresh(path)
    with duckdb.connect(building) as connection:
        connection.execute(f"ATTACH '{data.duckdb_path(data_dir, rows)}' AS src (READ_ONLY)")
        connection.execute(f"CREATE TABLE {data.TABLE} AS SELECT * FROM src.{data.TABLE}")
        connection.execute("DETACH src")
        connection.execute(f"CREATE TABLE {CUSTOMERS_TABLE} (id INTEGER PRIMARY KEY, segment VARCHAR, credit INTEGER)")
        connection.executemany(f"INSERT INTO {CUSTOMERS_TABLE} VALUES (?, ?, ?)", _customer_rows())
        connection.execute(f"CREATE TABLE {DIM_TABLE} (id INTEGER PRIMARY KEY, name VARCHAR, region VARCHAR)")
        connection.executemany(f"INSERT INTO {DIM_TABLE} VALUES (?, ?, ?)", _dim_rows())
    os.replace(building, path)


def _prepare(ctx: BenchContext, rows: int) -> None:
    data.ensure_postgres(ctx.pg_url, rows)
    data.ensure_mysql(ctx.mysql_url, rows)
    data.ensure_sqlite(data.sqlite_path(ctx.data_dir, rows), rows)
    data.ensure_duckdb(data.duckdb_path(ctx.data_dir, rows), rows)
    _ensure_postgres(ctx.pg_url)
    _ensure_mysql(ctx.mysql_url)
    _ensure_sqlite(ctx.data_dir, rows)
    _ensure_duckdb(ctx.data_dir, rows)
    _ensure_dim(ctx.data_dir)


def _urls(ctx: BenchContext, rows: int) -> dict[str, str]:
    return {
        "postgresql": ctx.pg_url,
        "mariadb": ctx.mysql_url,
        "sqlite": "sqlite:///" + _joins_file(ctx.data_dir, rows, "db"),
        "duckdb": "duckdb:///" + _joins_file(ctx.data_dir, rows, "duckdb"),
    }


# ---------------------------------------------------------------- the queries
def _queries(ctx: BenchContext) -> list[dict[str, Any]]:
    """One entry per (engine, shape): the text each path runs."""
    found = []
    for engine in ENGINES:
        schema = _schema(engine)
        found.append(
            {
                "engine": engine,
                "shape": "join",
                "sluice": JOIN_SQL.format(
                    orders=f"{SLUICE_NAMES[engine]}.{schema}{data.TABLE}",
                    customers=f"{SLUICE_NAMES[engine]}.{schema}{CUSTOMERS_TABLE}",
                ),
                "raw": JOIN_SQL.format(orders=f"{schema}{data.TABLE}", customers=f"{schema}{CUSTOMERS_TABLE}"),
                "jdbc": JOIN_SQL.format(
                    orders=f"{JDBC_NAMES[engine]}.{schema}{data.TABLE}",
                    customers=f"{JDBC_NAMES[engine]}.{schema}{CUSTOMERS_TABLE}",
                )
                if engine in JDBC_ENGINES and engine in ctx.jars
                else None,
            }
        )
    for engine in STAR_FACTS:
        schema = _schema(engine)
        found.append(
            {
                "engine": engine,
                "shape": "star",
                "sluice": STAR_SQL.format(
                    orders=f"{SLUICE_NAMES[engine]}.{schema}{data.TABLE}", dim=f"{DIM_CATALOG}.{DIM_TABLE}"
                ),
                "raw": STAR_SQL.format(orders=f"{schema}{data.TABLE}", dim=f"{schema}{DIM_TABLE}"),
                "jdbc": None,
            }
        )
    return found


def _plan(ctx: BenchContext, q: dict[str, Any]) -> None:
    """What the planner decided: the join pushed (``join``) or the fact's runtime filter (``star``)."""
    plan = ctx.fed.plan(q["sluice"])
    if q["shape"] == "join":
        scan = plan.scans[0]
        q["pushed"] = scan.spec.join is not None
        q["remote"] = scan.remote_query
        q["why"] = scan.join_note or "; ".join(f"{v.sql}: {v.reason}" for v in scan.joins if v.level.value != "EXACT")
    else:
        dim = next(s for s in plan.scans if s.table.endswith(DIM_TABLE))
        q["pushed"] = all(v.level.value == "EXACT" for v in dim.verdicts)
        q["remote"] = " / ".join(s.remote_query for s in plan.scans)
        q["why"] = ""


def _cases(ctx: BenchContext, queries: list[dict[str, Any]], urls: dict[str, str]) -> list[Case]:
    cases: list[Case] = []
    for q in queries:
        group, key, engine = f"{q['engine']}-joins", q["shape"], q["engine"]

        def raw(engine: str = engine, text: str = q["raw"]) -> None:
            _fetch(engine, urls[engine], text)

        cases.append(Case(group, key, raw_path(engine), raw, baseline=True, note=q["raw"]))
        note = (
            ("join pushed" if q["pushed"] else f"join NOT pushed: {q['why']}")
            if key == "join"
            else "dimension filter pushed EXACT; Spark joins with a runtime filter on the fact scan"
        )
        cases.append(Case(group, key, SLUICE, _collect(ctx, q["sluice"], None), note=f"{note}; remote: {q['remote']}"))
        cases.append(
            Case(group, key, SLUICE_OFF, _collect(ctx, q["sluice"], False), note="reads every row; Spark joins")
        )
        if q["jdbc"] is not None:
            cases.append(
                Case(
                    group,
                    key,
                    JDBC,
                    _collect(ctx, q["jdbc"], None),
                    note=f"{os.path.basename(JDBC_JARS[engine])}, {jdbc_options(engine, urls[engine])['url']}",
                )
            )
    return cases


def _check(ctx: BenchContext, queries: list[dict[str, Any]], cases: list[Case], urls: dict[str, str]) -> dict:
    """Rows out, rows transferred and whether every path returns the raw driver's rows."""
    facts: dict[str, Any] = {}
    for q in queries:
        engine = q["engine"]
        mine = {c.path: c for c in cases if c.scenario == f"{engine}-joins" and c.shape == q["shape"]}
        results: dict[str, list[tuple[Any, ...]]] = {}
        fact: dict[str, Any] = {k: q[k] for k in ("sluice", "raw", "jdbc", "pushed", "remote", "why")}
        for path, case in mine.items():
            if case.error is not None:
                continue
            try:
                if path == raw_path(engine):
                    results[path] = _normal(_fetch(engine, urls[engine], q["raw"]))
                    case.extra["rows from source"] = f"{len(results[path]):,}"
                    continue
                text = q["jdbc"] if path == JDBC else q["sluice"]
                frame = ctx.fed.sql(text, pushdown=False) if path == SLUICE_OFF else ctx.fed.spark.sql(text)
                results[path] = _normal(frame.collect())
                if path == JDBC:
                    scanned = _scan_rows(frame)
                    fact["jdbc_scan_rows"] = scanned
                    case.extra["rows from source"] = (
                        f"{scanned:,} (Spark's scan metric)" if scanned is not None else "—"
                    )
                else:
                    moved = _moved(ctx.fed.transferred(q["sluice"], pushdown=path != SLUICE_OFF))
                    fact["pushdown" if path == SLUICE else "no_pushdown"] = moved
                    case.streams = max(moved["reads"], 1)
                    case.extra["rows from source"] = f"{moved['rows']:,} ({moved['bytes'] / 1e6:,.2f} MB)"
            except Exception as error:  # noqa: BLE001 - a benchmark reports
                case.check = f"check failed: {describe(error)}"
                log(f"  {engine} {q['shape']} {path}: check failed: {describe(error)}")
        reference = results.get(raw_path(engine))
        for path, case in mine.items():
            if path in results:
                case.rows = len(results[path])
                case.check = (
                    "reference"
                    if path == raw_path(engine)
                    else "no reference"
                    if reference is None
                    else "same"
                    if results[path] == reference
                    else "DIFFERENT rows"
                )
        fact["result_rows"] = len(reference) if reference is not None else None
        if q["shape"] == "star" and reference is not None:
            fact["matching_fact_rows"] = sum(int(row[1]) for row in reference)
        facts[f"{engine}/{q['shape']}"] = fact
    return facts


# ---------------------------------------------------------------- run
def run(ctx: BenchContext) -> dict[str, Any]:
    scales = [_scale(ctx, rows) for rows in ctx.rows_for(FULL_ROWS)]
    return scenario_result(KEY, TITLE, _about(ctx), scales, [t for s in scales for t in _targets(s)])


def _scale(ctx: BenchContext, rows: int) -> dict[str, Any]:
    log(f"== joins, {rows:,} rows: preparing data")
    _prepare(ctx, rows)
    urls = _urls(ctx, rows)
    for engine in ENGINES:
        ctx.fed.attach(SLUICE_NAMES[engine], urls[engine])
    ctx.fed.attach(DIM_CATALOG, "duckdb:///" + _dim_file(ctx.data_dir))
    for engine in JDBC_ENGINES:
        if engine in ctx.jars:
            attach_jdbc(ctx, engine, urls[engine])
        else:
            log(f"  {engine}: JDBCTableCatalog path skipped: no driver jar {JDBC_JARS[engine]}")
    try:
        queries = _queries(ctx)
        for q in queries:
            _plan(ctx, q)
            log(f"  {q['engine']:10} {q['shape']:4}: {'pushed' if q['pushed'] else 'NOT pushed'}: {q['remote']}")
        cases = _cases(ctx, queries, urls)
        rounds = warmed_rounds(f"joins, {rows:,} rows", cases, ctx.runs, ctx.seed + rows, log)
        log(f"== joins, {rows:,} rows: rows transferred and the answers' check")
        facts = _check(ctx, queries, cases, urls)
    finally:
        for engine in ENGINES:
            ctx.fed.detach(SLUICE_NAMES[engine])
        ctx.fed.detach(DIM_CATALOG)
        for engine in JDBC_ENGINES:
            detach_jdbc(ctx, engine)
    baselines = {(c.scenario, c.shape): c for c in cases if c.baseline}
    return {
        "rows": rows,
        "rounds": rounds,
        "results": [summary(c, baselines.get((c.scenario, c.shape))) for c in cases],
        "facts": {"queries": facts},
    }


def _targets(scale: dict[str, Any]) -> list[dict[str, Any]]:
    rows, found = scale["rows"], []
    for key, fact in scale["facts"]["queries"].items():
        engine, shape = key.split("/")
        title = ENGINE_TITLES[engine]
        moved = fact.get("pushdown")
        if shape == "join":
            found.append(
                {
                    "target": f"{title}, {rows:,} rows: the same-source join with a 1% filter is pushed, or kept "
                    "with Spark by the join cost rule (docs/pushdown.md, Joins: Cost)",
                    "met": bool(fact.get("pushed")) or KEPT_BY_COST in str(fact.get("why")),
                    "command": COMMAND,
                    "measured": ("pushed" if fact.get("pushed") else f"not pushed: {fact.get('why')}")
                    + (
                        f"; {moved['rows']:,} rows transferred for {fact.get('result_rows')} result rows"
                        if moved
                        else ""
                    ),
                }
            )
        else:
            matching = fact.get("matching_fact_rows")
            fact_rows = moved["rows"] - 10 if moved else None  # the dimension's 10 rows are the rest
            found.append(
                {
                    "target": f"{title} fact, {rows:,} rows, star join: transfers <= 2x the fact rows that match",
                    "met": None if fact_rows is None or matching is None else fact_rows <= 2 * matching,
                    "command": COMMAND,
                    "measured": f"{moved['rows']:,} rows transferred in all (10 of them the dimension's) for "
                    f"{matching} matching fact rows"
                    if moved
                    else "not measured",
                }
            )
    return found


def _about(ctx: BenchContext) -> list[str]:
    return [
        f"- `join`: `{JOIN_SQL.format(orders='bench_orders', customers='bench_customers')}` in each engine "
        f"(`bench_orders` of bench/data.py; `bench_customers` {CUSTOMERS:,} rows, `id int` like `customer_id`; "
        "`status = 'refunded'` is exactly 1% of the orders). SQLite: a STRICT copy of the orders and the customers "
        "in one file; DuckDB: a file holding a copy of the orders and the customers.",
        f"- `star`: `{STAR_SQL.format(orders='bench_orders', dim='bench_dim')}` with the fact in PostgreSQL or "
        f"DuckDB and `bench_dim` ({DIM_ROWS} rows, 10 of them 'north') in a DuckDB file of its own, another source: Spark joins, and "
        "its dynamic pruning hands the fact scan the 10 keys (docs/pushdown.md, Runtime filters). The raw driver "
        "runs the same SQL in the fact's engine over a copy of the dimension there.",
        f"- Paths: `{SLUICE}`; `{SLUICE_OFF}` (every row read, Spark joins); `{JDBC}` (the `join` shape on "
        "PostgreSQL and MariaDB, both tables through Spark's JDBCTableCatalog); and the bold baseline, the raw "
        "driver connecting, running the query and fetching every row, so *× baseline* is the path's time over the "
        "raw driver's (medians). *rows from source*: `fed.transferred(q)` (one extra run outside the timing), "
        "Spark's scan metric for JDBC, the result rows for the raw driver; *check*: rows against the raw driver's.",
        f"- One Spark session; one warm-up run per path, then {ctx.runs} interleaved rounds in a shuffled order.",
    ]
