"""Planning scenario: the time a 10-conjunct query over three sources takes to plan.

``fed.plan`` is ``spark.sql`` (Spark parses and analyses; Sluice's catalogs describe the
tables, cached per attach) plus Spark's optimiser, which offers every scan its filters,
columns and limit and asks Sluice's planner (py4j callbacks: classification, remote query
rendering, the scan's description); then the decisions are read back from the plan.
Everything before Spark runs anything. Three small sources of the scenario's own
(``plan_lite``, ``plan_duck``, ``plan_pg``) are attached; their size does not matter, so
the scenario is not scaled.

Two figures: the whole ``fed.plan`` (Spark's share included), and Sluice's own share, the
time its Python planner spent answering the catalog layer (``sluice.spark.bridge.CALLBACK``
adds it up per method), which is what the target bounds.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import time
from typing import Any

import duckdb
import psycopg

from bench import data
from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.timing import summary
from sluice.spark.bridge import CALLBACK

KEY = "planning"
TITLE = "Planning: a 10-conjunct query over three sources"
COMMAND = "python -m bench --only planning"
TARGET = "Sluice's own planning ≤ 20 ms median"
LIMIT_S = 0.020
PLANS, QUICK_PLANS = 300, 60
WARM_UP_PLANS = 20
#: the PostgreSQL table lives in the benchmark schema, so ``--cleanup`` drops it too
PG_TABLE = f"{data.PG_SCHEMA}.plan_regions"

QUERY = f"""
SELECT c.name, o.amount, r.name AS region
FROM plan_lite.customers c
JOIN plan_duck.orders o ON o.customer_id = c.id
JOIN plan_pg.{PG_TABLE} r ON r.id = c.region_id
WHERE c.country = 'DE'
  AND c.id BETWEEN 1 AND 100000
  AND c.name LIKE 'A%'
  AND upper(c.name) <> 'ADA'
  AND o.amount > 100
  AND o.status IN ('paid', 'shipped')
  AND o.placed_at >= TIMESTAMP '2024-01-01 00:00:00'
  AND o.note IS NOT NULL
  AND r.active = true
  AND r.population < 5000000
"""


def ensure_sources(ctx: BenchContext) -> dict[str, str]:
    """Create (when missing) the three small tables; returns each source's URL by name."""
    folder = os.path.abspath(os.path.join(ctx.data_dir, "planning"))
    os.makedirs(folder, exist_ok=True)
    lite, duck = os.path.join(folder, "plan_lite.db"), os.path.join(folder, "plan_duck.duckdb")
    with sqlite3.connect(lite) as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "country TEXT, region_id INTEGER, created TEXT)"
        )
        if connection.execute("SELECT count(*) FROM customers").fetchone()[0] == 0:
            connection.executemany(
                "INSERT INTO customers VALUES (?, ?, ?, ?, ?)",
                [(i, f"Ada {i}", ("DE", "FR", "US")[i % 3], i % 5, "2024-01-01") for i in range(1, 101)],
            )
    connection.close()
    with duckdb.connect(duck) as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS orders (id BIGINT PRIMARY KEY, customer_id BIGINT, "
            "amount DECIMAL(12,2), status VARCHAR, placed_at TIMESTAMP, note VARCHAR)"
        )
        if connection.execute("SELECT count(*) FROM orders").fetchone() == (0,):
            connection.execute(
                "INSERT INTO orders SELECT i, i % 100 + 1, i * 1.5, ['paid', 'shipped', 'placed'][i % 3 + 1], "
                "TIMESTAMP '2024-01-01' + i * INTERVAL 1 HOUR, CASE WHEN i % 2 = 0 THEN 'gift' END "
                "FROM range(1, 1001) t(i)"
            )
    with psycopg.connect(ctx.pg_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {data.PG_SCHEMA}")
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {PG_TABLE} (id int PRIMARY KEY, name text NOT NULL, "
            "active boolean NOT NULL, population bigint)"
        )
        connection.execute(
            f"INSERT INTO {PG_TABLE} SELECT i, 'region ' || i, i % 2 = 0, i * 1000000 "
            "FROM generate_series(0, 4) AS i ON CONFLICT (id) DO NOTHING"
        )
    return {"plan_lite": f"sqlite:///{lite}", "plan_duck": f"duckdb:///{duck}", "plan_pg": ctx.pg_url}


# ---------------------------------------------------------------- measuring
def time_plans(ctx: BenchContext, count: int) -> tuple[list[float], list[float], dict[str, float]]:
    """Per ``fed.plan(QUERY)`` of ``count``: whole seconds, Sluice's seconds; Sluice's ms per method."""
    whole, own = [], []
    before = dict(CALLBACK.seconds)
    for _ in range(count):
        answered = sum(CALLBACK.seconds.values())
        started = time.perf_counter()
        ctx.fed.plan(QUERY)
        whole.append(time.perf_counter() - started)
        own.append(sum(CALLBACK.seconds.values()) - answered)
    methods = {
        method: round((CALLBACK.seconds[method] - before.get(method, 0.0)) / count * 1000, 2)
        for method in CALLBACK.seconds
    }
    return whole, own, methods


def _conjuncts(ctx: BenchContext) -> dict[str, Any]:
    """How the plan classified the query: per scan, its source and each conjunct's level."""
    plan = ctx.fed.plan(QUERY)
    return {scan.table: {"source": scan.source, "levels": [v.level.name for v in scan.verdicts]} for scan in plan.scans}


ABOUT = [
    "Query: a three-way join of `plan_lite.customers` (SQLite), `plan_duck.orders` (DuckDB) and "
    f"`plan_pg.{PG_TABLE}` (PostgreSQL) with 10 WHERE conjuncts (equality, BETWEEN, LIKE, IN, IS NOT NULL, "
    "timestamp and decimal comparisons, one function call that no source takes).",
    "Measured: `fed.plan(query)` back to back in one thread (Spark's parse, analysis and optimisation with "
    f"Sluice's catalog callbacks), after {WARM_UP_PLANS} warm-up plans; table descriptions are cached per attach. "
    f"{PLANS:,} plans ({QUICK_PLANS} with --quick); median, min, max and p95. Sluice's own share is the time its "
    "planner spent answering the callbacks of each plan (describe, filters, plan).",
]


def run(ctx: BenchContext) -> dict[str, Any]:
    """Attach the three sources, time the plans, detach."""
    count = QUICK_PLANS if ctx.quick else PLANS
    urls = ensure_sources(ctx)
    for name, url in urls.items():
        ctx.fed.attach(name, url)
    try:
        time_plans(ctx, WARM_UP_PLANS)
        log(f"== planning: {count:,} plans")
        started = time.perf_counter()
        whole, own, methods = time_plans(ctx, count)
        rounds = [{"seconds": round(time.perf_counter() - started, 1), "load_1min": round(os.getloadavg()[0], 2)}]
        classified = _conjuncts(ctx)
    finally:
        for name in urls:
            ctx.fed.detach(name)
    records = []
    for key, label, seconds, note in (
        (
            "plan",
            "fed.plan (10 conjuncts, 3 sources)",
            whole,
            "Spark's analysis and optimisation, with Sluice's callbacks",
        ),
        ("sluice", "Sluice's planner within it", own, "describe + filters + plan callbacks"),
    ):
        record = summary(Case(KEY, key, label, lambda: None, seconds=seconds, note=note), None)
        record["p95_s"] = round(statistics.quantiles(seconds, n=20)[-1], 5)
        records.append(record)
    median, p95 = statistics.median(own), statistics.quantiles(own, n=20)[-1]
    records[1]["extra"] = {
        "p95": f"{p95 * 1000:.2f} ms",
        "plans": f"{count:,}",
        "ms per plan by method": ", ".join(f"{m} {v}" for m, v in sorted(methods.items())),
    }
    log(
        f"  fed.plan median {statistics.median(whole) * 1000:.2f} ms; Sluice's share median {median * 1000:.2f} ms, "
        f"p95 {p95 * 1000:.2f} ms; by method {methods}"
    )
    scale = {
        "rows": None,
        "rounds": rounds,
        "results": records,
        "facts": {
            "query": QUERY.strip(),
            "plans": count,
            "sluice_ms_per_method": methods,
            "scans": classified,
            "sources": {name: url.split(":", 1)[0] for name, url in urls.items()},
        },
    }
    target = {
        "target": TARGET,
        "measured": f"{median * 1000:.2f} ms median (p95 {p95 * 1000:.2f} ms) of Sluice's own "
        f"planning within fed.plan's {statistics.median(whole) * 1000:.1f} ms, over {count:,} plans",
        "met": median <= LIMIT_S,
        "command": COMMAND,
    }
    return scenario_result(KEY, TITLE, ABOUT, [scale], [target])
