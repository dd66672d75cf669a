"""``python -m tools.demo`` (``make demo``): build the embedded world and show pushdown at work."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sluice.cli import non_negative_int, one_line, positive_int
from sluice.errors import SluiceError
from tools.demo.lake import DEFAULT_READINGS
from tools.demo.run import run_demo
from tools.demo.world import DEFAULT_ORDERS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.demo", description="Build the embedded demo data and show pushdown at work."
    )
    parser.add_argument(
        "--data-dir", metavar="DIR", default="demo-data", help="where the SQLite files go (default demo-data)"
    )
    parser.add_argument(
        "--rows",
        metavar="N",
        type=positive_int,
        default=DEFAULT_ORDERS,
        help=f"orders to generate (default {DEFAULT_ORDERS})",
    )
    parser.add_argument(
        "--readings",
        metavar="N",
        type=non_negative_int,
        default=DEFAULT_READINGS,
        help=f"telemetry rows to ingest into the demo lake (default {DEFAULT_READINGS}; 0 leaves the lake out)",
    )
    parser.add_argument("--rebuild", action="store_true", help="regenerate the files even if they are current")
    args = parser.parse_args(argv)
    try:
        run_demo(args.data_dir, orders=args.rows, rebuild=args.rebuild, readings=args.readings)
    except SluiceError as error:  # a pushed answer that differs, a source that fails: one line, as `sluice` prints it
        print(f"error: {one_line(str(error))}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
