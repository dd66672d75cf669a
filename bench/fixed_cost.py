"""A query's fixed cost, two checkouts side by side: ``python -m bench.fixed_cost OLD NEW``.

Times ``fed.sql(q).collect()`` for a 101-row selective PostgreSQL query (20,000-row table,
no index: the server's share is a few milliseconds, the rest is Sluice and Spark), and a
SQLite full scan written to Spark's ``noop`` sink. Each checkout runs in its own Python
process (Spark's Python workers import ``sluice`` from ``PYTHONPATH``, so two checkouts
cannot share a session); processes alternate OLD, NEW, OLD, NEW ... so machine load hits
both alike. Prints per-round medians, the median over rounds, NEW/OLD and the load average.

``--pg-scan-rows N`` adds a full scan of an N-row PostgreSQL table, partitioned as Sluice
partitions it by default, written to ``noop``: the cost of a partitioned read as a whole
(e.g. the shared snapshot of ``sluice/sources/pg_snapshot.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

PG_URL = os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test")
SCHEMA = "sluice_fixed_cost"
PG_QUERY = f"SELECT id, status, amount FROM pg.{SCHEMA}.t WHERE customer_id < 500"
SETUP = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
DROP TABLE IF EXISTS {SCHEMA}.t;
CREATE TABLE {SCHEMA}.t AS
SELECT g::bigint AS id, (g * 7919 % 100000)::int AS customer_id, (ARRAY['a', 'b', 'c', 'd'])[1 + g % 4] AS status,
       ((g * 37 % 1000000) / 100.0)::numeric(12,2) AS amount, (g % 1000) / 1000.0::float8 AS score
FROM generate_series(1, 20000) AS g;
ANALYZE {SCHEMA}.t;
"""
SCAN_SETUP = """
DROP TABLE IF EXISTS {schema}.scan;
CREATE TABLE {schema}.scan AS
SELECT g AS id, (g * 7919 % 100000)::int AS customer_id, (ARRAY['open', 'done', 'void'])[1 + g % 3] AS status,
       (g % 1000) / 1000.0::float8 AS score, TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' AS placed_at
FROM generate_series(1::bigint, {rows}) AS g;
ANALYZE {schema}.scan;
"""


def _child(runs: int, sqlite_url: str | None, pg_scan: bool) -> None:
    """In a checkout's process: warm up, then time ``runs`` of each query; JSON on stdout."""
    from sluice import Federation

    fed = Federation()
    fed.attach("pg", PG_URL)
    queries: dict[str, Callable[[], object]] = {"pg_selective_collect": lambda: fed.sql(PG_QUERY).collect()}
    if sqlite_url:
        fed.attach("lite", sqlite_url)
        queries["sqlite_full_scan_noop"] = lambda: (
            fed.sql("SELECT * FROM lite.bench_orders").write.format("noop").mode("overwrite").save()
        )
    if pg_scan:
        queries["pg_partitioned_full_scan_noop"] = lambda: (
            fed.sql(f"SELECT * FROM pg.{SCHEMA}.scan").write.format("noop").mode("overwrite").save()
        )
    times: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(3):
        for run in queries.values():
            run()
    for _ in range(runs):
        for name, run in queries.items():
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    print(json.dumps({name: statistics.median(values) for name, values in times.items()}))
    fed.spark.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fixed_cost", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=9, help="timed runs per query in each process")
    parser.add_argument("--sqlite", help="a file made by bench.data.ensure_sqlite: adds its full scan")
    parser.add_argument(
        "--pg-scan-rows", type=int, help="adds a partitioned full scan of a PostgreSQL table of this many rows"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sqlite_url = f"sqlite:///{os.path.abspath(args.sqlite)}" if args.sqlite else None
    if args.child:
        _child(args.runs, sqlite_url, bool(args.pg_scan_rows))
        return 0
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute(SETUP)
        if args.pg_scan_rows:
            connection.execute(SCAN_SETUP.format(schema=SCHEMA, rows=args.pg_scan_rows))
    medians: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    loads = []
    for round_ in range(args.rounds):
        for label, checkout in (("old", args.old), ("new", args.new)):
            # this file by path: the OLD checkout need not have it; ``sluice`` comes from PYTHONPATH
            command = [
                sys.executable,
                os.path.abspath(__file__),
                "--child",
                "--runs",
                str(args.runs),
                args.old,
                args.new,
            ]
            command += ["--sqlite", args.sqlite] if args.sqlite else []
            command += ["--pg-scan-rows", str(args.pg_scan_rows)] if args.pg_scan_rows else []
            env = {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
            done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            for name, seconds in result.items():
                medians[label].setdefault(name, []).append(seconds)
            loads.append(os.getloadavg()[0])
            print(f"round {round_ + 1} {label}: " + ", ".join(f"{k} {v:.3f} s" for k, v in result.items()), flush=True)
    for name in medians["old"]:
        old, new = statistics.median(medians["old"][name]), statistics.median(medians["new"][name])
        print(f"{name}: old {old:.3f} s, new {new:.3f} s, new/old {new / old:.2f}")
    print(f"load average (1 min) after each process: {', '.join(f'{x:.1f}' for x in loads)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
