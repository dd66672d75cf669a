"""``python -m bench.snapshot_join``: the fixed cost of a partitioned PostgreSQL read's shared
snapshot, without Spark (issue 29).

Reads a 40,000-row table (``sluice_snapshot_join.t``, made if missing) in N partitions one
after another in this process, as Spark does on a busy executor, and the same table
unsplit (no snapshot to share), and prints the median seconds of each over the runs after
the first. The difference is what starting the holder and joining its snapshot cost. Two
checkouts compare by running this under each ``PYTHONPATH`` in turn, interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sluice.sources.base import ReadTask, Source

SCHEMA = "sluice_snapshot_join"
ROWS = 40_000


def _read(source: Source, tasks: list[ReadTask]) -> float:
    """Seconds to read ``tasks`` one after another (each a session of its own)."""
    started = time.perf_counter()
    rows = sum(batch.num_rows for task in tasks for batch in source.read(task))
    assert rows == ROWS, rows
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-url", default=os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test"))
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    import psycopg

    from sluice.scan.spec import ScanSpec
    from sluice.sources import open_source

    with psycopg.connect(args.pg_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        if connection.execute(f"SELECT to_regclass('{SCHEMA}.t')").fetchone() == (None,):
            connection.execute(
                f"CREATE TABLE {SCHEMA}.t AS SELECT g AS id, repeat('x', 280) AS pad FROM generate_series(1, {ROWS}) g"
            )
            connection.execute(f"ANALYZE {SCHEMA}.t")
    split = open_source("split", args.pg_url, partitions=args.partitions)
    unsplit = open_source("unsplit", args.pg_url, partitions=1)
    table = split.describe(SCHEMA, "t")
    split_s, unsplit_s = [], []
    for _ in range(args.runs + 1):  # the first run of each warms up; a new scan is a new shared snapshot
        tasks = split.tasks(ScanSpec.for_source(split, table, ("id",), partitions=args.partitions))
        split_s.append(_read(split, tasks))
        unsplit_s.append(_read(unsplit, unsplit.tasks(ScanSpec.for_source(unsplit, table, ("id",), partitions=1))))
    print(
        json.dumps(
            {
                "partitions": len(tasks),
                "split_s": round(statistics.median(split_s[1:]), 4),
                "unsplit_s": round(statistics.median(unsplit_s[1:]), 4),
                "load": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
