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
    if args.plot and not args.plot.lower().endswith(".png"):
        raise ConfigError(f"--plot writes a PNG picture: give a file name ending in .png, not {args.plot!r}")
    fed = _federation(_sources(args), spark)
    if args.json:
        print(json.dumps(fed.plan(args.query).to_dict(trace=True), indent=2))
    else:
        print(fed.explain(args.query, verbose=args.verbose, analyze=args.analyze))
    if args.plot:
        from sluice.lake.plot import write_pyramid_png

        write_pyramid_png(fed.pruning(args.query), args.plot, title=args.query if len(args.query) < 100 else "")
        print(f"pruning pyramid written to {args.plot}", file=sys.stderr)
    return 0


def _demo(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.demo.run import run_demo

    run_demo(args.data_dir, orders=args.rows, rebuild=args.rebuild, spark=spark, readings=args.readings)
    return 0


def _lake_ingest(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.lake.catalog import LakeLocation
    from sluice.lake.ingest import ingest

    LakeLocation.from_url(args.lake)  # a malformed URL fails here, before Spark starts
    if args.rows is not None and args.source_path is not None:
        raise ConfigError("--rows sizes generated data; it cannot be combined with --from")
    if spark is None:
        from sluice.spark.session import build_session

        with Console(stderr=True).status("starting Spark..."):
            spark = build_session(app_name="sluice-lake-ingest")
    summary = ingest(spark, args.lake, args.source_path, rows=args.rows, source_format=args.format,
                     namespace=args.namespace, table=args.table)
    print(summary)
    return 0


def _serve(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.flight.auth import Credentials
    from sluice.flight.server import Tls, open_sources, serve

    if bool(args.tls_cert) != bool(args.tls_key):
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    credentials = Credentials.from_environment()
    if credentials is None and not args.no_auth:
        raise ConfigError("set SLUICE_FLIGHT_TOKEN (or SLUICE_FLIGHT_USER and SLUICE_FLIGHT_PASSWORD) to require "
                          "authentication, or pass --no-auth to serve without it (trusted networks only)")
    configs = _sources(args)
    if not configs:
        raise ConfigError("nothing to serve: give --catalog FILE or --source NAME=URL")
    serve(open_sources(configs), args.host, args.port, credentials, Tls(args.tls_cert, args.tls_key) if args.tls_cert else None)
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


def _non_negative_int(text: str) -> int:
    if text.strip() == "0":
        return 0
    return _positive_int(text)


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
    explain.add_argument("--plot", metavar="PNG", help="also draw the pruning pyramid of the query's lake scans to this file")

    serve = commands.add_parser("serve", help="publish the sources' tables over Arrow Flight (docs/flight.md)",
                                description="Publish every table of the sources over Arrow Flight, with pushdown. "
                                            "Secrets come from SLUICE_FLIGHT_TOKEN or SLUICE_FLIGHT_USER/SLUICE_FLIGHT_PASSWORD.")
    serve.set_defaults(command=_serve)
    serve.add_argument("--catalog", metavar="FILE", help="TOML catalog of named sources")
    serve.add_argument("--source", metavar="NAME=URL", action="append", default=[], type=_source_option,
                       help="serve a source (repeatable; overrides a catalog source of the same name)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8815, help="port to listen on (default 8815; 0 picks a free one)")
    serve.add_argument("--tls-cert", metavar="PEM", help="certificate chain: serve grpc+tls (with --tls-key)")
    serve.add_argument("--tls-key", metavar="PEM", help="private key of --tls-cert")
    serve.add_argument("--no-auth", action="store_true", help="accept unauthenticated calls (trusted networks only)")

    demo = commands.add_parser("demo", help="build the embedded demo data and show pushdown at work")
    demo.set_defaults(command=_demo)
    demo.add_argument("--data-dir", metavar="DIR", default="demo-data", help="where the SQLite files go (default demo-data)")
    demo.add_argument("--rows", metavar="N", type=_positive_int, default=1_200_000, help="orders to generate (default 1200000)")
    demo.add_argument("--readings", metavar="N", type=_non_negative_int, default=10_000_000,
                      help="telemetry rows to ingest into the demo lake (default 10000000; 0 leaves the lake out)")
    demo.add_argument("--rebuild", action="store_true", help="regenerate the files even if they are current")

    lake = commands.add_parser("lake", help="manage Iceberg lake tables").add_subparsers(
        dest="lake_command", required=True, metavar="LAKE_COMMAND")
    lake_ingest = lake.add_parser("ingest", help="append generated telemetry or files to a lake table with Spark",
                                  description="Append rows to a lake table in one snapshot, with Spark. Without "
                                  "--from, generates synthetic spacecraft telemetry.")
    lake_ingest.set_defaults(command=_lake_ingest)
    lake_ingest.add_argument("lake", metavar="LAKE_URL", nargs="?", default="iceberg+sqlite:///demo-data/lake/catalog.db",
                             help="iceberg+sqlite:///catalog.db[?warehouse=DIR] (default: demo-data/lake/catalog.db)")
    lake_ingest.add_argument("--rows", metavar="N", type=_positive_int,
                             help="rows to generate (default 10000000)")
    lake_ingest.add_argument("--from", dest="source_path", metavar="PATH", help="a CSV, JSON or Parquet file or folder")
    lake_ingest.add_argument("--format", choices=("csv", "json", "parquet"), help="the format of --from (default: its suffix)")
    lake_ingest.add_argument("--namespace", default="telemetry", help="the table's namespace (default telemetry)")
    lake_ingest.add_argument("--table", default="readings", help="the table, created with the telemetry layout "
                             "if missing (default readings)")
    return parser


if __name__ == "__main__":
    sys.exit(main())
