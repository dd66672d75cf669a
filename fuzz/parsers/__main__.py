"""``python -m fuzz.parsers``: fuzz the parsers of outside input; no server or Spark needed.

    python -m fuzz.parsers --target all --cases 20000 --seed 1
    python -m fuzz.parsers --target v2 --seed 1 --case 417      # replay one case

Exit status 1 when a case failed (an untyped exception, a RecursionError, a hang, or
remote SQL that breaks out of its statement); each failing input is written to ``--out``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from fuzz.parsers.runner import Summary, run
from fuzz.parsers.targets import TARGETS


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz.parsers", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="all", choices=[*TARGETS, "all"], help="which parser (default all)")
    parser.add_argument("--cases", type=int, default=2000, help="cases per target (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    parser.add_argument(
        "--case", type=int, action="append", dest="only", metavar="I", help="replay only case I (repeatable)"
    )
    parser.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS", help="per case (default 10)")
    parser.add_argument(
        "--out", default="fuzz-out/parsers", help="folder for failing inputs (default fuzz-out/parsers)"
    )
    return parser.parse_args(argv)


def report(summary: Summary, out: Path) -> None:
    refusals = ", ".join(f"{name} {count}" for name, count in summary.refusals.most_common())
    print(
        f"{summary.target}: {summary.cases} cases in {summary.seconds:.1f} s (slowest {summary.slowest:.2f} s): "
        f"{summary.ok} ok, {summary.refused} refused ({refusals or 'none'}), {len(summary.failures)} failed",
        flush=True,
    )
    for failure in summary.failures:
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{failure.target}-{failure.seed}-{failure.index}.bin"
        path.write_bytes(failure.data)
        print(
            f"  FAILED case {failure.index} ({len(failure.data)} bytes, {failure.seconds:.2f} s, input in {path}):\n"
            f"    {failure.error[:300]}\n    at {failure.where}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its warnings about mutants are the expected noise
    names = list(TARGETS) if args.target == "all" else [args.target]
    started = time.perf_counter()
    failed = 0
    for name in names:
        summary = run(name, args.cases, args.seed, args.time_limit, args.only)
        report(summary, Path(args.out))
        failed += len(summary.failures)
    print(f"{len(names)} target(s), seed {args.seed}: {failed} failure(s) in {time.perf_counter() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
