"""``python -m bench``: measure every read path at every scale, then write JSON and Markdown.

Full run: 1M and 4M rows, warm-up + 5 rounds. ``--quick``: 200k rows, warm-up + 3
rounds (about two minutes). Data is kept between runs (``--cleanup`` drops it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from typing import Any

from bench import data, paths_pg, paths_sqlite, report, spark_paths
from bench.cases import SHAPES, Case
from bench.machine import facts
from bench.timing import measure, summary, warm_up

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FULL_SCALES = (1_000_000, 4_000_000)
QUICK_SCALES = (200_000,)


def _rows(text: str) -> int:
    """``4M``, ``200k`` or ``4000000``."""
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if factor > 1 else text) * factor)


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200k rows, 3 rounds: a smoke run of every path")
    parser.add_argument("--scales", type=lambda t: [_rows(x) for x in t.split(",")],
                        help="comma-separated row counts, e.g. 1M,4M (default: 1M,4M; --quick: 200k)")
    parser.add_argument("--runs", type=int, help="timed rounds after the warm-up (default 5; --quick: 3)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the per-round shuffle")
    parser.add_argument("--pg-url", default=os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test"))
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "sluice-bench"),
                        help="where the SQLite file is kept between runs")
    parser.add_argument("--out", help="JSON result path (default bench/results/<date>[-quick].json)")
    parser.add_argument("--docs", help="Markdown path (default docs/benchmarks.md; --quick: next to the JSON)")
    parser.add_argument("--cleanup", action="store_true", help="drop the benchmark schema and SQLite file at the end")
    parser.add_argument("--report-from", metavar="JSON", help="only re-render the Markdown from a saved result")
    return parser.parse_args(argv)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _scale(rows: int, args: argparse.Namespace, fed: Any, jdbc: dict[str, str], sqlite_path: str,
           runs: int) -> dict[str, Any]:
    """Prepare the data for one scale, build every case, warm up, measure, summarise."""
    log(f"== {rows:,} rows: preparing data")
    prepared = {"postgresql": data.ensure_postgres(args.pg_url, rows), "sqlite": data.ensure_sqlite(sqlite_path, rows)}
    for kind, done in prepared.items():
        log(f"  {kind}: {'generated' if done.generated else 'kept'} in {done.seconds:.1f}s")
    spark_paths.attach(fed, args.pg_url, sqlite_path)
    cases: list[Case] = []
    for shape in SHAPES:
        cases += paths_pg.cases(args.pg_url, shape, rows)
        cases += paths_sqlite.cases(sqlite_path, shape, rows)
        for kind in ("postgresql", "sqlite"):
            cases += spark_paths.cases(fed, kind, args.pg_url, sqlite_path, shape, rows, kind in jdbc)
    log(f"== {rows:,} rows: warm-up of {len(cases)} cases")
    warm_up(cases, log)
    log(f"== {rows:,} rows: {runs} interleaved rounds")
    rounds = measure(cases, runs, args.seed + rows, log)
    log(f"== {rows:,} rows: rows transferred with pushdown on and off")
    transferred = {kind: {shape.key: spark_paths.transferred(fed, kind, shape) for shape in SHAPES}
                   for kind in ("postgresql", "sqlite")}
    baselines = {(c.scenario, c.shape): c for c in cases if c.baseline}
    return {
        "rows": rows,
        "data": {
            **{kind: {"generated": p.generated, "seconds": round(p.seconds, 2), "fingerprint": p.fingerprint}
               for kind, p in prepared.items()},
            "same_data": prepared["postgresql"].fingerprint == prepared["sqlite"].fingerprint,
        },
        "rounds": rounds,
        "results": [summary(c, baselines.get((c.scenario, c.shape))) for c in cases],
        "transferred": transferred,
    }


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    if args.report_from:
        with open(args.report_from, encoding="utf-8") as handle:
            result = json.load(handle)
        docs = args.docs or os.path.join(ROOT, "docs", "benchmarks.md")
        report.write_markdown(result, os.path.relpath(args.report_from, ROOT), docs)
        log(f"wrote {docs}")
        return 0
    started = time.perf_counter()
    scales = args.scales or list(QUICK_SCALES if args.quick else FULL_SCALES)
    runs = args.runs or (3 if args.quick else 5)
    today = datetime.date.today().isoformat()
    out = args.out or os.path.join(ROOT, "bench", "results", f"{today}{'-quick' if args.quick else ''}.json")
    docs = args.docs or (out[:-5] + ".md" if args.quick else os.path.join(ROOT, "docs", "benchmarks.md"))
    sqlite_path = os.path.abspath(os.path.join(args.data_dir, f"{data.TABLE}.db"))

    jars = spark_paths.available_jars()
    missing = sorted(set(spark_paths.JDBC_JARS) - set(jars))
    skipped = (f"no JDBC driver jar for {', '.join(missing)} under /usr/share/java "
               f"(install: `{spark_paths.JDBC_INSTALL}`)") if missing else None
    if skipped:
        log(f"Spark JDBC paths skipped: {skipped}")
    fed = spark_paths.start(jars)
    result: dict[str, Any] = {
        "command": "python -m bench" + "".join(f" {a}" for a in argv),
        "quick": args.quick, "runs": runs, "seed": args.seed,
        "machine": facts(args.pg_url, jars),
        "jdbc": {"jars": jars, "skipped": skipped},
        "scales": [],
    }
    try:
        for rows in scales:
            result["scales"].append(_scale(rows, args, fed, jars, sqlite_path, runs))
            result["wall_seconds"] = round(time.perf_counter() - started, 1)
            report.write_json(result, out)  # after every scale: a long run that dies keeps what it measured
    finally:
        fed.spark.stop()
        if args.cleanup:
            data.cleanup(args.pg_url, sqlite_path)
            log("dropped the benchmark schema and SQLite file")
    report.write_markdown(result, os.path.relpath(out, ROOT), docs)
    log(f"wrote {out} and {docs} in {result['wall_seconds'] / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
