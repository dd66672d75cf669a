"""Planning scenario: the time ``Federation.plan`` takes for a 10-conjunct query over three sources.

``fed.plan`` parses, binds (table descriptions are cached per attach, as in any session
that queries a table twice), runs every optimizer rule (with its EXPLAIN trace),
classifies each conjunct through its source's dialect and renders every remote query:
everything Sluice does before Spark runs anything. Three small sources of the scenario's
own (``plan_lite``, ``plan_duck``, ``plan_pg``) are attached for it; their size does not
matter, so the scenario is not scaled.

A second, profiled pass (cProfile) splits the time by stage; the profiler slows every
call, so only its shares are meaningful, not its milliseconds.
"""

from __future__ import annotations

import cProfile
import os
import pstats
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

KEY = "planning"
TITLE = "Planning: a 10-conjunct query over three sources"
COMMAND = "python -m bench --only planning"
TARGET = "planning ≤ 20 ms median"
LIMIT_S = 0.020
PLANS, QUICK_PLANS = 1_000, 200
WARM_UP_PLANS = 20
PROFILED_PLANS = 50  # cProfile makes a plan ~5x slower; 50 give stable shares
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

#: (label, file, function, caller file, caller function) of each stage the profile reports,
#: in pipeline order: the function's cumulative time under that caller (files match by
#: path fragment; a caller of None counts every call)
STAGES: tuple[tuple[str, str, str, str | None, str | None], ...] = (
    ("parse + bind", "sluice/planner/binder.py", "bind", None, None),
    ("rules", "sluice/planner/rules/", "apply", "sluice/planner/optimizer.py", "optimize"),
    ("EXPLAIN trace (render after each rule)", "sluice/planner/state.py", "render", "sluice/planner/optimizer.py", "optimize"),
    ("scan specs + remote SQL", "sluice/federation.py", "_scan_plan", None, None),
    ("Spark SQL text of the plan", "sqlglot/expressions", "sql", "sluice/federation.py", "_plan"),
    ("session time zone (py4j)", "pyspark/sql/conf.py", "get", "sluice/federation.py", "_plan"),
)
RULES_FOLDER = "sluice/planner/rules/"


# ---------------------------------------------------------------- the three sources
def ensure_sources(ctx: BenchContext) -> dict[str, str]:
    """Create (when missing) the three small tables; returns each source's URL by name."""
    folder = os.path.abspath(os.path.join(ctx.data_dir, "planning"))
    os.makedirs(folder, exist_ok=True)
    lite, duck = os.path.join(folder, "plan_lite.db"), os.path.join(folder, "plan_duck.duckdb")
    with sqlite3.connect(lite) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                           "country TEXT, region_id INTEGER, created TEXT)")
        if connection.execute("SELECT count(*) FROM customers").fetchone()[0] == 0:
            connection.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)",
                                   [(i, f"Ada {i}", ("DE", "FR", "US")[i % 3], i % 5, "2024-01-01") for i in range(1, 101)])
    connection.close()
    with duckdb.connect(duck) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS orders (id BIGINT PRIMARY KEY, customer_id BIGINT, "
                           "amount DECIMAL(12,2), status VARCHAR, placed_at TIMESTAMP, note VARCHAR)")
        if connection.execute("SELECT count(*) FROM orders").fetchone()[0] == 0:  # type: ignore[index]
            connection.execute("INSERT INTO orders SELECT i, i % 100 + 1, i * 1.5, ['paid', 'shipped', 'placed'][i % 3 + 1], "
                               "TIMESTAMP '2024-01-01' + i * INTERVAL 1 HOUR, CASE WHEN i % 2 = 0 THEN 'gift' END "
                               "FROM range(1, 1001) t(i)")
    with psycopg.connect(ctx.pg_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {data.PG_SCHEMA}")
        connection.execute(f"CREATE TABLE IF NOT EXISTS {PG_TABLE} (id int PRIMARY KEY, name text NOT NULL, "
                           "active boolean NOT NULL, population bigint)")
        connection.execute(f"INSERT INTO {PG_TABLE} SELECT i, 'region ' || i, i % 2 = 0, i * 1000000 "
                           "FROM generate_series(0, 4) AS i ON CONFLICT (id) DO NOTHING")
    return {"plan_lite": f"sqlite:///{lite}", "plan_duck": f"duckdb:///{duck}", "plan_pg": ctx.pg_url}


# ---------------------------------------------------------------- measuring
def time_plans(ctx: BenchContext, count: int) -> list[float]:
    """Seconds of each of ``count`` consecutive ``fed.plan(QUERY)`` calls."""
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        ctx.fed.plan(QUERY)
        seconds.append(time.perf_counter() - started)
    return seconds


def stage_shares(ctx: BenchContext, count: int) -> dict[str, Any]:
    """cProfile cumulative time of each stage (and of each rule) as a share of ``fed.plan``'s."""
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(count):
        ctx.fed.plan(QUERY)
    profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]

    def cumulative(file: str, function: str, caller_file: str | None = None, caller: str | None = None) -> float:
        found = 0.0
        for (path, _, name), entry in stats.items():
            if name != function or file not in _unix(path):
                continue
            if caller is None:
                found += entry[3]
            else:
                found += sum(timing[3] for (caller_path, _, caller_name), timing in entry[4].items()
                             if caller_name == caller and caller_file in _unix(caller_path))
        return found

    total = cumulative("sluice/federation.py", "plan")
    stages = {stage[0]: cumulative(*stage[1:]) for stage in STAGES}
    stages["other"] = max(0.0, total - sum(stages.values()))
    rules = {_unix(path).rsplit("/", 1)[-1][:-3]: entry[3]
             for (path, _, name), entry in stats.items() if name == "apply" and RULES_FOLDER in _unix(path)}
    share = {label: round(value / total, 3) for label, value in stages.items()} if total else {}
    return {"plans": count, "profiled_ms_per_plan": round(total / count * 1000, 2) if count else None,
            "stages": share, "rules": {name: round(value / total, 3) for name, value in sorted(rules.items(), key=lambda kv: -kv[1])}}


def _unix(path: str) -> str:
    return path.replace(os.sep, "/")


def _conjuncts(ctx: BenchContext) -> dict[str, Any]:
    """How the plan classified the query: per scan, its source and each conjunct's level."""
    plan = ctx.fed.plan(QUERY)
    return {scan.alias: {"source": scan.source, "levels": [v.level.name for v in scan.verdicts]} for scan in plan.scans}


ABOUT = [
    "Query: a three-way join of `plan_lite.customers` (SQLite), `plan_duck.orders` (DuckDB) and "
    f"`plan_pg.{PG_TABLE}` (PostgreSQL) with 10 WHERE conjuncts (equality, BETWEEN, LIKE, IN, IS NOT NULL, "
    "timestamp and decimal comparisons, one function call that no source takes).",
    "Measured: `fed.plan(query)` back to back in one thread (parse, bind, the optimizer rules with their EXPLAIN "
    f"trace, classification, remote SQL rendering), after {WARM_UP_PLANS} warm-up plans; table descriptions are "
    f"cached per attach. {PLANS:,} plans ({QUICK_PLANS} with --quick); median, min, max and p95.",
    f"Stage shares come from a separate cProfile pass over {PROFILED_PLANS} plans (cumulative time of each stage's "
    "function over `fed.plan`'s); the profiler inflates every call, so the shares are indicative and the timed pass "
    "has no profiler.",
]


def run(ctx: BenchContext) -> dict[str, Any]:
    """Attach the three sources, time the plans, profile the stages, detach."""
    count = QUICK_PLANS if ctx.quick else PLANS
    urls = ensure_sources(ctx)
    for name, url in urls.items():
        ctx.fed.attach(name, url)
    try:
        time_plans(ctx, WARM_UP_PLANS)
        log(f"== planning: {count:,} plans")
        started = time.perf_counter()
        seconds = time_plans(ctx, count)
        rounds = [{"seconds": round(time.perf_counter() - started, 1), "load_1min": round(os.getloadavg()[0], 2)}]
        profile = stage_shares(ctx, PROFILED_PLANS)
        classified = _conjuncts(ctx)
    finally:
        for name in urls:
            ctx.fed.detach(name)
    case = Case(KEY, "plan", "fed.plan (10 conjuncts, 3 sources)", lambda: None, seconds=seconds,
                note="parse, bind, rules, classify, render")
    record = summary(case, None)
    median, p95 = statistics.median(seconds), statistics.quantiles(seconds, n=20)[-1]
    record["p95_s"] = round(p95, 5)
    record["extra"] = {"p95": f"{p95 * 1000:.2f} ms", "plans": f"{count:,}",
                       "largest stages (cProfile share)": ", ".join(
                           f"{label} {share:.0%}" for label, share in sorted(profile["stages"].items(), key=lambda kv: -kv[1])[:3])}
    log(f"  median {median * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms; stages {profile['stages']}")
    scale = {"rows": None, "rounds": rounds, "results": [record],
             "facts": {"query": QUERY.strip(), "plans": count, "profile": profile, "scans": classified,
                       "sources": {name: url.split(":", 1)[0] for name, url in urls.items()}}}
    target = {"target": TARGET, "measured": f"{median * 1000:.2f} ms median (p95 {p95 * 1000:.2f} ms, min "
                                            f"{min(seconds) * 1000:.2f} ms) over {count:,} plans",
              "met": median <= LIMIT_S, "command": COMMAND}
    return scenario_result(KEY, TITLE, ABOUT, [scale], [target])
