"""``python -m bench``: every scenario (SQL sources, lake, Flight, planning) in one run.

Full run: 1M and 5M rows, warm-up + 5 rounds (``--scales 1M,5M,20M`` to see further).
``--quick``: 100k rows, warm-up + 3 rounds, fewer plans (about five minutes; CI's smoke
test runs a smaller one). Data is kept between runs in ``--data-dir`` and the benchmark
schemas (``--cleanup`` drops them). Writes ``bench/results/<date>[-quick].json`` and
``docs/benchmarks.md`` with one plot per scenario.
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

from bench import data, report, scenarios, spark_paths
from bench.context import BenchContext, log, scenario_result
from bench.machine import facts
from bench.timing import describe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FULL_SCALES = (1_000_000, 5_000_000)
QUICK_SCALES = (100_000,)


def rows_arg(text: str) -> int:
    """``5M``, ``200k`` or ``4000000``."""
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if factor > 1 else text) * factor)


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="100k rows, 3 rounds: a smoke run of every path")
    parser.add_argument(
        "--only",
        type=lambda t: [x.strip() for x in t.split(",")],
        help=f"comma-separated scenarios (default all: {','.join(scenarios.ORDER)})",
    )
    parser.add_argument(
        "--scales",
        type=lambda t: [rows_arg(x) for x in t.split(",")],
        help="comma-separated row counts, e.g. 1M,5M,20M (default: 1M,5M; --quick: 100k)",
    )
    parser.add_argument(
        "--shapes",
        type=lambda t: [x.strip() for x in t.split(",")],
        help="comma-separated SQL shapes (default all: full,filter,indexed,unindexed,project,topn)",
    )
    parser.add_argument("--runs", type=int, help="timed rounds after the warm-up (default 5; --quick: 3)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the per-round shuffle")
    parser.add_argument("--pg-url", default=os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test"))
    parser.add_argument("--mysql-url", default=os.environ.get("SLUICE_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"))
    parser.add_argument(
        "--data-dir",
        default=os.path.join(tempfile.gettempdir(), "sluice-bench"),
        help="where generated files (SQLite, DuckDB, lakes) are kept between runs",
    )
    parser.add_argument("--out", help="JSON result path (default bench/results/<date>[-quick].json)")
    parser.add_argument("--docs", help="Markdown path (default docs/benchmarks.md; --quick: next to the JSON)")
    parser.add_argument("--cleanup", action="store_true", help="drop the benchmark schemas and files at the end")
    parser.add_argument("--report-from", metavar="JSON", help="only re-render the Markdown from a saved result")
    return parser.parse_args(argv)


def _rerender(args: argparse.Namespace) -> int:
    with open(args.report_from, encoding="utf-8") as handle:
        result = json.load(handle)
    docs = args.docs or os.path.join(ROOT, "docs", "benchmarks.md")
    report.write_markdown(result, os.path.relpath(args.report_from, ROOT), docs)
    log(f"wrote {docs}")
    return 0


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    if args.report_from:
        return _rerender(args)
    modules = scenarios.load(args.only)
    started = time.perf_counter()
    today = datetime.date.today().isoformat()
    out = args.out or os.path.join(ROOT, "bench", "results", f"{today}{'-quick' if args.quick else ''}.json")
    docs = args.docs or (out[:-5] + ".md" if args.quick else os.path.join(ROOT, "docs", "benchmarks.md"))

    jars = spark_paths.available_jars()
    missing = sorted(set(spark_paths.JDBC_JARS) - set(jars))
    if missing:
        log(
            f"Spark JDBC paths skipped for {', '.join(missing)}: no driver jar under /usr/share/java "
            f"(install: `{spark_paths.JDBC_INSTALL}`)"
        )
    from sluice import Federation
    from sluice.spark.session import build_session

    conf = {"spark.jars": ",".join(jars.values())} if jars else {}
    fed = Federation(spark=build_session(app_name="sluice-bench", conf=conf))
    ctx = BenchContext(
        fed=fed,
        scales=args.scales or list(QUICK_SCALES if args.quick else FULL_SCALES),
        runs=args.runs or (3 if args.quick else 5),
        seed=args.seed,
        quick=args.quick,
        data_dir=os.path.abspath(args.data_dir),
        pg_url=args.pg_url,
        mysql_url=args.mysql_url,
        jars=jars,
        shapes=args.shapes,
        scales_chosen=bool(args.scales),
    )
    result: dict[str, Any] = {
        "command": "python -m bench" + "".join(f" {a}" for a in argv),
        "quick": args.quick,
        "runs": ctx.runs,
        "seed": args.seed,
        "scales": ctx.scales,
        "machine": facts(args.pg_url, args.mysql_url, jars),
        "jdbc_missing": missing,
        "scenarios": [],
    }
    try:
        for module in modules:
            log(f"=== scenario {module.KEY}: {module.TITLE}")
            begun = time.perf_counter()
            try:
                record = module.run(ctx)
            except Exception as error:  # noqa: BLE001 - a benchmark reports; the other scenarios still run
                log(f"scenario {module.KEY} failed: {describe(error)}")
                record = scenario_result(module.KEY, module.TITLE, [f"- **failed**: {describe(error)}"], [], [])
                record["error"] = describe(error)
            record["seconds"] = round(time.perf_counter() - begun, 1)
            result["scenarios"].append(record)
            result["wall_seconds"] = round(time.perf_counter() - started, 1)
            report.write_json(result, out)  # after every scenario: a long run that dies keeps what it measured
    finally:
        fed.spark.stop()
        if args.cleanup:
            data.cleanup(args.pg_url, args.mysql_url, ctx.data_dir)
            log("dropped the benchmark schemas and generated files (tables, lakes, planning sources)")
    report.write_markdown(result, os.path.relpath(out, ROOT), docs)
    log(f"wrote {out} and {docs} in {result['wall_seconds'] / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
