"""``python -m bench.lake``: Sluice's lake scans against ``spark.read.parquet`` on the same files.

Both paths read the data files of the table's current snapshot and go to Spark's
``noop`` sink, interleaved round by round (this machine is noisy: ratios measured side
by side are what to trust). Shapes: the whole table, and the three demo queries'
filters. Spark's Parquet reader runs with ``spark.sql.parquet.filterPushdown=false`` as
Sluice's session requires (DESIGN.md section 2: its row-group pushdown is not NaN-safe),
so its only pruning is its own column projection; Sluice prunes partitions, files and
row groups first, then reads with pyarrow and filters with DuckDB.

    python -m bench.lake --lake demo-data/lake/catalog.db   # after `make demo`
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from typing import Any

from bench.cases import Case
from bench.timing import measure, summary, warm_up

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = "lake.telemetry.readings"
#: (key, columns, Spark SQL filter or None): the full read and the demo queries' scans
SHAPES = (
    ("full", "*", None),
    ("partitions", "mission_id, sensor, voltage",
     "mission_id = 102 AND ts >= TIMESTAMP '2025-03-09 00:00:00' AND ts < TIMESTAMP '2025-03-10 00:00:00'"),
    ("row groups", "mission_id, payload_id, status", "payload_id BETWEEN 311002 AND 311003 AND status <> 'OK'"),
    ("NaN-safe", "mission_id, temperature", "temperature > 59.9 AND day = DATE '2025-03-12'"),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cases(fed: Any, files: list[str]) -> list[Case]:
    spark = fed.spark
    parquet = spark.read.parquet(*files)
    cases = []
    for key, columns, where in SHAPES:
        query = f"SELECT {columns} FROM {TABLE}" + (f" WHERE {where}" if where else "")
        cases.append(Case("lake", key, "spark.read.parquet (same files)",
                          lambda c=columns, w=where: _noop(parquet.selectExpr(*_split(c)).where(w or "true")), baseline=True))
        cases.append(Case("lake", key, "Sluice lake scan (pyramid + DuckDB)", lambda q=query: _noop(fed.sql(q))))
    return cases


def _split(columns: str) -> list[str]:
    return [c.strip() for c in columns.split(",")]


def _noop(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lake", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake", default="demo-data/lake/catalog.db", help="the lake's catalog file (make demo builds one)")
    parser.add_argument("--runs", type=int, default=3, help="timed rounds after the warm-up (default 3)")
    parser.add_argument("--out", help="JSON result path (default bench/results/<date>-lake.json)")
    args = parser.parse_args(argv)
    from sluice.federation import Federation
    from sluice.lake.catalog import LakeLocation

    if not os.path.isfile(args.lake):
        log(f"error: no lake catalog at {args.lake}: run `make demo` first (it ingests the demo lake), or pass --lake")
        return 2
    location = LakeLocation.from_url(f"iceberg+sqlite:///{os.path.abspath(args.lake)}")
    fed = Federation()
    fed.attach("lake", location.url)
    (pyramid,) = fed.pruning(f"SELECT * FROM {TABLE}").values()
    files = [read.path for read in pyramid.reads]
    log(f"lake: {pyramid.table_rows:,} rows in {len(files)} files, {pyramid.table_bytes / 1e6:,.1f} MB")
    cases = _cases(fed, files)
    warm_up(cases, log)
    rounds = measure(cases, args.runs, 7, log)
    baselines = {c.shape: c for c in cases if c.baseline}
    records = [summary(c, baselines[c.shape]) for c in cases]
    pruning = {}
    for key, columns, where in SHAPES:
        (scan,) = fed.pruning(f"SELECT {columns} FROM {TABLE}" + (f" WHERE {where}" if where else "")).values()
        pruning[key] = {"bytes_read": scan.bytes_read, "tiers": [t.to_dict() for t in scan.tiers]}
    result = {"date": datetime.date.today().isoformat(), "rows": pyramid.table_rows, "files": len(files),
              "table_bytes": pyramid.table_bytes, "rounds": rounds, "cases": records, "pruning": pruning}
    out = args.out or os.path.join(ROOT, "bench", "results", f"{result['date']}-lake.json")
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
    print(render(result))
    log(f"written {out}")
    return 0


def render(result: dict[str, Any]) -> str:
    lines = [f"Lake scans, {result['rows']:,} rows in {result['files']} files ({result['table_bytes'] / 1e6:,.1f} MB); "
             f"median of {len(result['rounds'])} interleaved rounds",
             "", "| shape | path | median s | ratio to spark.read.parquet | bytes read (Sluice) |", "|---|---|---|---|---|"]
    for record in result["cases"]:
        read = "" if record["baseline"] else f"{result['pruning'][record['shape']]['bytes_read'] / 1e6:,.2f} MB"
        lines.append(f"| {record['shape']} | {record['path']} | {record.get('median_s', '-')} | "
                     f"{record.get('ratio', 1.0 if record['baseline'] else '-')} | {read} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
