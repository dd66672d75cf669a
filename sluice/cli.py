"""The ``sluice`` command: run or explain a federated query, or run the embedded demo.

Arguments, the catalog and every password variable are checked before Spark starts
(about 8 s), so a typo fails at once. A :class:`~sluice.errors.SluiceError` is the
user's to fix: it prints ``error: <message>`` (URLs masked) and exits 2, and so does an
error Spark raises while running the query (``1/0`` under ANSI). Any other exception is
a bug in Sluice and keeps its traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Callable, Sequence

from pyspark.errors.exceptions.captured import CapturedException
from rich.console import Console

from sluice.catalog import SourceConfig, attach_sources, load_catalog
from sluice.errors import ConfigError, SluiceError
from sluice.masking import mask_text
from sluice.render import rows_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluice.federation import Federation

Command = Callable[[argparse.Namespace, "SparkSession | None"], int]


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> int:
    """Run the command line ``argv``; ``spark`` reuses a session (tests) instead of building one."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # usage errors (2) and --help (0): a code, not an exit, for in-process callers
        return stop.code if isinstance(stop.code, int) else 2
    command: Command = args.command
    try:
        return command(args, spark)
    except SluiceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except CapturedException as error:  # Spark failed the user's query while running it (e.g. 1/0)
        print(f"error: Spark: {mask_text(str(error).splitlines()[0])}", file=sys.stderr)
        return 2


# ---------------------------------------------------------------- commands
def _sql(args: argparse.Namespace, spark: SparkSession | None) -> int:
    fed = _federation(_sources(args), spark)
    frame = fed.sql(args.query, pushdown=not args.no_pushdown)
    rows = frame.take(args.max_rows + 1)
    more = len(rows) > args.max_rows
    caption = f"first {args.max_rows} rows (more not fetched; see --max-rows)" if more else f"{len(rows)} row(s)"
    Console().print(rows_table(frame.columns, rows[:args.max_rows], caption=caption))
    return 0


def _explain(args: argparse.Namespace, spark: SparkSession | None) -> int:
    if args.json and (args.verbose or args.analyze):
        raise ConfigError("--json prints the plan only (its rules included); drop --verbose and --analyze")
    fed = _federation(_sources(args), spark)
    if args.json:
        print(json.dumps(fed.plan(args.query).to_dict(), indent=2))
    else:
        print(fed.explain(args.query, verbose=args.verbose, analyze=args.analyze))
    return 0


def _demo(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.demo.run import run_demo

    run_demo(args.data_dir, orders=args.rows, rebuild=args.rebuild, spark=spark)
    return 0


# ---------------------------------------------------------------- sources
def _sources(args: argparse.Namespace) -> list[SourceConfig]:
    """Catalog sources, overridden by ``--source`` of the same name; passwords resolved now."""
    configs = dict(load_catalog(args.catalog)) if args.catalog else {}
    given: set[str] = set()
    for config in args.source:
        if config.name.lower() in given:
            raise ConfigError(f"--source {config.name} is given twice")
        given.add(config.name.lower())
        configs = {name: c for name, c in configs.items() if name.lower() != config.name.lower()}
        configs[config.name] = config
    for config in configs.values():
        config.password()  # a missing variable fails here, before Spark starts
    return list(configs.values())


def _federation(configs: list[SourceConfig], spark: SparkSession | None) -> Federation:
    from sluice.federation import Federation

    with Console(stderr=True).status("starting Spark and attaching sources..."):
        fed = Federation(spark=spark)
        attach_sources(fed, configs)
    return fed


def _source_option(text: str) -> SourceConfig:
    """Parse ``NAME=URL``; the URL is never echoed (it may hold a password)."""
    name, equals, url = text.partition("=")
    if not equals or not name.isidentifier():
        raise argparse.ArgumentTypeError("expected NAME=URL with NAME a SQL identifier, e.g. lite=sqlite:///crm.db")
    if "://" not in url:
        raise argparse.ArgumentTypeError(f"the URL for {name} must look like scheme://...")
    return SourceConfig(name, url)


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


# ---------------------------------------------------------------- parser
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sluice", description="Federated Spark SQL with faithful pushdown.")
    commands = parser.add_subparsers(dest="name", required=True, metavar="COMMAND")

    def query_command(name: str, command: Command, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(command=command)
        sub.add_argument("query", metavar="QUERY", help="Spark SQL over source.[schema.]table names")
        sub.add_argument("--catalog", metavar="FILE", help="TOML catalog of named sources")
        sub.add_argument("--source", metavar="NAME=URL", action="append", default=[], type=_source_option,
                         help="attach a source (repeatable; overrides a catalog source of the same name)")
        return sub

    sql = query_command("sql", _sql, "run a query and print its rows")
    sql.add_argument("--no-pushdown", action="store_true", help="read every table whole (the reference path)")
    sql.add_argument("--max-rows", metavar="N", type=_positive_int, default=50, help="rows to print (default 50)")

    explain = query_command("explain", _explain, "show what each source evaluates, and why")
    explain.add_argument("--verbose", action="store_true", help="add the plan after every optimizer rule")
    explain.add_argument("--json", action="store_true", help="print the plan as JSON")
    explain.add_argument("--analyze", action="store_true", help="run the query and add rows/bytes transferred")

    demo = commands.add_parser("demo", help="build the embedded demo data and show pushdown at work")
    demo.set_defaults(command=_demo)
    demo.add_argument("--data-dir", metavar="DIR", default="demo-data", help="where the SQLite files go (default demo-data)")
    demo.add_argument("--rows", metavar="N", type=_positive_int, default=1_200_000, help="orders to generate (default 1200000)")
    demo.add_argument("--rebuild", action="store_true", help="regenerate the files even if they are current")
    return parser


if __name__ == "__main__":
    sys.exit(main())
