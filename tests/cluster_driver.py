"""One Sluice driver run, printed as JSON: federated queries and a lake ingestion.

Run by ``tests/integration/test_cluster.py`` twice, as a separate process each time (the
test session already holds a SparkContext): once on a standalone cluster, once in local
mode, and the two outputs must hold the same rows. The working directory holds the
SQLite and DuckDB files, attached by *relative* URLs: an executor runs in a working
directory of its own, so a path resolved there instead of on the driver shows up here.

    python tests/cluster_driver.py --master spark://127.0.0.1:7077 --lake lake-cluster --out cluster.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
import time
from decimal import Decimal
from typing import Any

PG_URL = os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("SLUICE_MYSQL_URL", "mysql://root@127.0.0.1:3306/test")
PARTITIONS = 2  # every table is split, so reads spread over the executors
LAKE_ROWS = 20_000

JOIN = """
    SELECT c.region, count(*) AS n, sum(o.amount) AS total, count(DISTINCT p.method) AS methods, max(e.seen_at) AS last_click
    FROM pg.sluice_cluster.orders o
    JOIN lite.customers c ON o.customer_id = c.id
    JOIN my.sluice_cluster.payments p ON p.order_id = o.id
    JOIN duck.events e ON e.customer_id = c.id
    WHERE o.status = 'paid' AND c.region IN ('EU', 'US') AND p.amount > 50 AND e.kind = 'click'
      AND o.placed_at >= TIMESTAMP '2024-02-01 00:00:00'
    GROUP BY c.region"""

SOURCE_QUERIES = {
    "pg": """SELECT status, count(*) AS n, sum(amount) AS total, min(placed_at) AS first FROM pg.sluice_cluster.orders
             WHERE placed_at >= TIMESTAMP '2024-03-01 00:00:00' AND amount > 20 GROUP BY status""",
    "my": """SELECT method, count(*) AS n, sum(amount) AS total FROM my.sluice_cluster.payments
             WHERE method <> 'cash' AND amount BETWEEN 10 AND 400 GROUP BY method""",
    "rows": """SELECT o.id, o.amount, o.placed_at, c.name, p.method FROM pg.sluice_cluster.orders o
               JOIN lite.customers c ON o.customer_id = c.id LEFT JOIN my.sluice_cluster.payments p ON p.order_id = o.id
               WHERE o.id BETWEEN 100 AND 160""",
    "join": JOIN,
}

LAKE_QUERIES = {
    "lake": """SELECT mission_id, status, count(*) AS n, count(voltage) AS with_voltage, min(ts) AS first, max(ts) AS last
               FROM lake.telemetry.readings
               WHERE ts >= TIMESTAMP '2025-03-05 00:00:00' AND payload_id BETWEEN 102001 AND 102006
               GROUP BY mission_id, status""",
    "lake_join": """SELECT m.name, r.status, count(*) AS n, min(r.message) AS message FROM lake.telemetry.readings r
                    JOIN duck.missions m ON r.mission_id = m.mission_id
                    WHERE r.status <> 'OK' AND r.day < DATE '2025-03-10' GROUP BY m.name, r.status""",
}


def plain(value: Any) -> Any:
    """A JSON value that compares exactly: decimals and instants as text, NaN spelled out."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def rows(frame: Any) -> list[list[Any]]:
    """The frame's rows, as plain values, in a fixed order."""
    return sorted(([plain(v) for v in row] for row in frame.collect()), key=lambda r: json.dumps(r, default=str))


def probe(_: int) -> list[str]:
    """Where a task's Python worker runs (its working directory is its executor's) and what it imports."""
    import sluice

    time.sleep(0.3)  # long enough that every executor is offered a task
    return [os.getcwd(), sys.executable, os.path.dirname(sluice.__file__)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--master", required=True)
    parser.add_argument("--lake", required=True, help="folder of this run's lake, relative to the working directory")
    parser.add_argument("--cores", type=int, default=2, help="cores the application may use on a cluster")
    parser.add_argument("--out", required=True, help="where to write the JSON")
    args = parser.parse_args()

    from sluice import Federation
    from sluice.lake.ingest import ingest
    from sluice.spark.session import build_session
    from tools.cluster import driver_conf

    seconds: dict[str, float] = {}
    started = time.monotonic()

    def lap(step: str) -> None:
        nonlocal started
        seconds[step] = round(time.monotonic() - started, 1)
        print(f"{step}: {seconds[step]} s", file=sys.stderr, flush=True)  # in the log when a run is cut short
        started = time.monotonic()

    conf = {"spark.sql.session.timeZone": "America/New_York", "spark.sql.shuffle.partitions": "2"}
    if args.master.startswith("spark://"):
        conf.update(driver_conf(args.cores))
    spark = build_session(args.master, app_name="sluice-cluster-check", conf=conf)
    context = spark.sparkContext
    out: dict[str, Any] = {"master": context.master, "app_id": context.applicationId}
    out["probe"] = sorted(set(map(tuple, context.parallelize(range(8), 8).map(probe).collect())))

    lap("session")
    fed = Federation(spark=spark)
    fed.attach("pg", PG_URL, partitions=PARTITIONS)
    fed.attach("my", MYSQL_URL, partitions=PARTITIONS)
    fed.attach("lite", "sqlite:///shop.db", partitions=PARTITIONS)
    fed.attach("duck", "duckdb:///events.duckdb", partitions=PARTITIONS)
    lap("attach")
    results = {}
    for name, query in SOURCE_QUERIES.items():
        results[name] = rows(fed.sql(query))
        lap(name)
    results["join_reference"] = rows(fed.sql(JOIN, pushdown=False))
    lap("join_reference")

    lake_url = f"iceberg+sqlite:///{args.lake}/catalog.db"
    summary = ingest(spark, lake_url, rows=LAKE_ROWS, report=lambda line: None)
    out["ingest"] = {"rows": summary.rows, "files": summary.files, "committed": summary.snapshot_id is not None}
    lap("ingest")
    fed.attach("lake", lake_url, partitions=PARTITIONS)
    for name, query in LAKE_QUERIES.items():
        results[name] = rows(fed.sql(query))
        results[f"{name}_reference"] = rows(fed.sql(query, pushdown=False))
        lap(name)
    out["results"] = results
    out["seconds"] = seconds
    # the driver counts itself as one "executor" here: 1 in local mode, 1 + executors on a cluster
    out["block_managers"] = context._jsc.sc().getExecutorMemoryStatus().size()
    spark.stop()
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(out, handle)


if __name__ == "__main__":
    main()
