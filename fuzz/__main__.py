"""``python -m fuzz``: the differential fuzzer (pushdown on vs off) over real sources.

    python -m fuzz --cases 2000 --seed 7 --sources pg,lite
    python -m fuzz --seed 7 --round 12 --sources pg      # replay one round of a campaign
    python -m fuzz --regressions-only                    # replay fuzz/regressions.json
    python -m fuzz --case fuzz-out/7-0-pg.json           # replay a found case, and shrink it

Progress goes to stdout; Spark's and its Python workers' own logs (stack traces of
predicates Spark rejects, which the fuzzer provokes on purpose) go to ``<out>/spark.log``. Exit
status 1 when any mismatch was found, the regressions included. See docs/correctness.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path

from fuzz import loaders as loader_registry
from fuzz import regressions
from fuzz.campaign import Campaign, Summary
from fuzz.loaders.base import Loader
from fuzz.runner import quiet
from fuzz.writes import WriteRound, WriteSummary

ZONE = "America/New_York"  # DST makes timestamp pushdown earn its keep (as in tests/conftest.py)


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=2000, help="cases to run, all sources together (default 2000)")
    parser.add_argument(
        "--seed", type=int, default=int(f"{dt.date.today():%Y%m%d}"), help="campaign seed (default: today, YYYYMMDD)"
    )
    parser.add_argument(
        "--sources", help="comma-separated, of pg,lite,my,duck (default: every one Sluice has a source for)"
    )
    parser.add_argument("--time-budget", type=float, metavar="SECONDS", help="stop starting new rounds after this long")
    parser.add_argument(
        "--round", type=int, action="append", dest="rounds", metavar="R", help="run only round R (repeatable)"
    )
    parser.add_argument("--per-round", type=int, default=120, help="predicates per table (default 120)")
    parser.add_argument("--batch", type=int, default=60, help="cases per Spark query (default 60)")
    parser.add_argument(
        "--write-rounds",
        type=int,
        default=3,
        metavar="W",
        help="write rounds after the read cases (fuzz/writes.py: edge rows written by Sluice, read back; default 3)",
    )
    parser.add_argument("--no-regressions", action="store_true", help="skip replaying fuzz/regressions.json first")
    parser.add_argument("--regressions-only", action="store_true", help="only replay fuzz/regressions.json")
    parser.add_argument(
        "--case", action="append", default=[], metavar="JSON", help="replay (and shrink) a found case (repeatable)"
    )
    parser.add_argument("--no-shrink", action="store_true", help="report mismatches as found, unshrunk")
    parser.add_argument(
        "--max-shrinks", type=int, default=5, help="mismatches to shrink (default 5; more of one kind are rarely new)"
    )
    parser.add_argument("--record", action="store_true", help="append every mismatch found to fuzz/regressions.json")
    parser.add_argument(
        "--out", default="fuzz-out", help="folder for found cases (JSON) and the Spark log (default fuzz-out)"
    )
    return parser.parse_args(argv)


def _sources(wanted: str | None, folder: Path) -> dict[str, Loader]:
    names = [n.strip() for n in wanted.split(",")] if wanted else list(loader_registry.LOADERS)
    built = loader_registry.build(names, folder)
    usable = {}
    for name, loader in built.items():
        problem = loader.problem()
        if problem is None:
            usable[name] = loader
        elif wanted:
            raise SystemExit(f"source {name}: {problem}")
        else:
            print(f"skipping {name}: {problem}")
    if not usable:
        raise SystemExit("no source to fuzz")
    return usable


def _quiet_spark(log_path: Path) -> None:
    """Send fd 2 (inherited by the JVM and Python workers) to ``log_path``; keep ``sys.stderr``."""
    terminal = os.dup(2)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 2)
    os.close(log)
    sys.stderr = os.fdopen(terminal, "w", buffering=1)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="sluice-fuzz-") as folder:  # the SQLite and DuckDB files
        return _run(args, Path(folder))


def _run(args: argparse.Namespace, folder: Path) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    loaders = _sources(args.sources, folder)
    _quiet_spark(out / "spark.log")

    from sluice import Federation
    from sluice.spark.session import build_session

    spark = build_session(
        app_name="sluice-fuzz", conf={"spark.sql.session.timeZone": ZONE, "spark.sql.shuffle.partitions": "4"}
    )
    fed = Federation(spark=spark)
    campaign = Campaign(
        fed,
        loaders,
        args.seed,
        log=lambda line: print(line, flush=True),
        per_round=args.per_round,
        batch=args.batch,
        shrink=not args.no_shrink,
        max_shrinks=args.max_shrinks,
    )
    campaign.runner.attach()
    print(
        f"fuzz: seed {args.seed}, sources {','.join(loaders)}, {args.cases} cases"
        + (f", budget {args.time_budget:.0f}s" if args.time_budget else "")
        + f" (Spark log: {out / 'spark.log'})",
        flush=True,
    )

    summary = Summary()
    with quiet(spark):
        if args.case:
            entries = [json.loads(Path(path).read_text(encoding="utf-8")) for path in args.case]
            campaign.replay(entries, summary, shrink=not args.no_shrink)
        elif not args.no_regressions or args.regressions_only:
            campaign.replay(regressions.load(), summary)
        if not args.regressions_only and not args.case:
            campaign.run(args.cases, args.time_budget, args.rounds, summary)
    written = WriteSummary()
    if not args.regressions_only and not args.case and args.write_rounds:
        writer = WriteRound(fed, list(loaders), str(folder), args.seed)
        for number in range(args.write_rounds):
            writer.run(number, written)
        print(written.render())
        for found in written.found:
            print(f"write mismatch: {found}")

    for index, found in enumerate(summary.found):
        path = out / f"{args.seed}-{index}-{found.mismatch.source}.json"
        path.write_text(json.dumps(found.case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"case written: {path} ({'shrunk' if found.shrunk else 'as found'})")
    if args.record:
        regressions.append([f.case for f in summary.found if not f.regression])
    print(summary.render())
    if summary.mismatches:
        print(
            f"replay: python -m fuzz --seed {args.seed} --sources {','.join(loaders)} --round R (R from the origins above)"
        )
    return 1 if summary.mismatches or written.found else 0


if __name__ == "__main__":
    sys.exit(main())
