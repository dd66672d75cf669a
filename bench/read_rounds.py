"""``python -m bench.read_rounds``: one PostgreSQL full scan, timed in rounds, with the CPU
each process class spent (issue 29's measure of the read partitions and batch sizes).

It times the Sluice code on ``PYTHONPATH``, so two versions compare by running this in turn
under each (interleaved, one process per round block): ``sluice fed.sql`` of
``SELECT * FROM pg.sluice_bench.bench_orders`` into Spark's ``noop`` sink after one warm-up,
and prints one JSON line per round: wall seconds, the read partitions, and the CPU-seconds of
the driver, the JVM and Spark's Python workers (read from ``/proc`` before and after the
round: live processes only, with what they reaped). The table is the full bench's
(:func:`bench.data.ensure_postgres`), made if missing.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bench import data
from bench.machine import cpu_by_class
from bench.spark_paths import noop, sluice_partitions

QUERY = f"SELECT * FROM pg.{data.PG_SCHEMA}.{data.TABLE}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-url", default=os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=None, help="attach with this many (default: Sluice's)")
    args = parser.parse_args()
    from sluice import Federation

    data.ensure_postgres(args.pg_url, args.rows)
    fed = Federation()
    fed.attach("pg", args.pg_url, partitions=args.partitions)
    partitions = sluice_partitions(fed, QUERY)
    noop(fed.sql(QUERY))  # warm-up
    for _ in range(args.runs):
        before, started = cpu_by_class(), time.perf_counter()
        noop(fed.sql(QUERY))
        wall, after = time.perf_counter() - started, cpu_by_class()
        cpu = {kind: round(after[kind] - before[kind], 2) for kind in after}
        print(json.dumps({"wall": round(wall, 3), "partitions": partitions, "cpu": cpu, "load": os.getloadavg()[0]}))
    fed.spark.stop()


if __name__ == "__main__":
    main()
