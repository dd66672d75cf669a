"""The ``sluice`` command: run or explain a federated query, serve tables, ingest into a lake.

Arguments, the catalog, every password variable and every source (connected once) are
checked before Spark starts (about 8 s), so a typo or an unreachable server fails at once.
A :class:`~sluice.errors.SluiceError` is the user's to fix: it prints one line, ``error:
<message>``, and exits 2, and so does an error Spark raises while running the query
(``1/0`` under ANSI). Spark's own output goes to a log file (:mod:`sluice.cli_spark`), so
that line is all the user sees. Every message is masked, including argparse's own (which
echo the arguments) with every password the command line holds. Any other exception is a
bug in Sluice and keeps its traceback.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Any, NoReturn

from rich.console import Console

from sluice.catalog import Catalog, SourceConfig, attach_sources, open_sources, read_catalog
from sluice.cli_output import FORMATS, default_format, write_rows
from sluice.cli_progress import progress
from sluice.cli_server import server_option
from sluice.errors import ConfigError, SluiceError, spark_reason
from sluice.explain import pyramids_by_table, render_explain
from sluice.masking import mask_text
from sluice.serve.allowlist import AllowList
from sluice.urls import UrlError, parse_url, url_secrets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluice.federation import Federation

Command = Callable[[argparse.Namespace, "SparkSession | None"], int]


def main(argv: Sequence[str] | None = None, spark: SparkSession | None = None) -> int:
    """Run the command line ``argv``; ``spark`` reuses a session (tests) instead of building one."""
    argv = list(sys.argv[1:] if argv is None else argv)
    secrets = _secrets(argv)
    parser = _parser(secrets)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # usage errors (2) and --help (0): a code, not an exit, for in-process callers
        return stop.code if isinstance(stop.code, int) else 2
    command: Command = args.command
    if spark is not None:  # a caller's session: its PySpark loggers must not print on our stderr either
        from sluice.cli_spark import log_path, quiet_pyspark_loggers

        quiet_pyspark_loggers(log_path())
    try:
        return command(args, spark)
    except SluiceError as error:
        _fail(str(error), secrets)
    except Exception as error:
        if not _spark_failed(error):
            raise
        _fail(f"Spark: {spark_reason(str(error))}", secrets)
    return 2


def _spark_failed(error: Exception) -> bool:
    """Whether Spark failed the user's query while running it (e.g. 1/0), locally or on a server.

    Imported here: a command on a server never loads py4j or PySpark's classic session."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.base import PySparkException

    return isinstance(error, (PySparkException, Py4JJavaError))


def _fail(message: str, secrets: tuple[str, ...]) -> None:
    """Print ``message`` as one masked line on stderr."""
    print(f"error: {one_line(mask_text(message, secrets))}", file=sys.stderr, flush=True)


def one_line(text: str) -> str:
    """``text`` on one line: drivers' messages span several (psycopg adds hints on their own lines)."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _secrets(argv: Sequence[str]) -> tuple[str, ...]:
    """Every password the command line holds (in NAME=URL or URL arguments), parsed or not."""
    found: list[str] = []
    for argument in argv:
        if "://" in argument:
            url = argument.split("=", 1)[1] if re.match(r"^-*\w+=", argument) else argument
            found.extend(url_secrets(url))
    return tuple(found)


class _Parser(argparse.ArgumentParser):
    """argparse's messages quote the arguments (``unrecognized arguments: --sorce pg=URL``):
    mask them before they are printed."""

    secrets: tuple[str, ...] = ()

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {one_line(mask_text(message, self.secrets))}\n")


# ---------------------------------------------------------------- commands
def _sql(args: argparse.Namespace, spark: SparkSession | None) -> int:
    query = _query(args)
    fmt = args.format or default_format(sys.stdout)
    limit = args.max_rows if args.max_rows is not None else (50 if fmt == "table" else None)
    url = _server(args, spark)
    if url is not None:
        return _sql_on_server(url, args, query, fmt, limit)
    fed = _federation(_sources(args), spark)
    with progress(fed.spark, sys.stderr):
        frame = fed.sql(query, pushdown=not args.no_pushdown)
        if limit is None:
            write_rows(fmt, frame.columns, frame.toLocalIterator(), sys.stdout)
            return 0
        rows = frame.take(limit + 1)
    _write_first(fmt, frame.columns, rows, limit)
    return 0


def _write_first(fmt: str, columns: list[str], rows: list[Any], limit: int) -> None:
    """The first ``limit`` of ``rows`` (one more was fetched: whether there are more says so)."""
    more = len(rows) > limit
    note = f"first {limit} rows (more not fetched; see --max-rows)" if more else f"{len(rows)} row(s)"
    write_rows(fmt, columns, rows[:limit], sys.stdout, caption=note)
    if more and fmt != "table":
        print(f"note: {note}", file=sys.stderr)


def _server(args: argparse.Namespace, spark: SparkSession | None) -> str | None:
    """The Spark Connect server to run on (sluice/cli_server.py), never when a caller handed a session."""
    if spark is not None:
        if args.server is not None:
            raise ConfigError("--server: this call runs on the Spark session it was given")
        return None
    from sluice.cli_server import server_url

    return server_url(args)


def _sql_on_server(url: str, args: argparse.Namespace, query: str, fmt: str, limit: int | None) -> int:
    """``_sql`` on a running server: the same rows, printed the same way, with no JVM here."""
    from sluice.cli_server import attach
    from sluice.connect_client import ConnectClient
    from sluice.spark.errors import translated_errors

    configs = _sources(args)
    with ConnectClient(url, {"spark.sluice.pushdown": "false"} if args.no_pushdown else {}) as client:
        attach(client, configs)
        with translated_errors():
            result = client.sql(query, None if limit is None else limit + 1)
            if limit is None:
                write_rows(fmt, result.columns, result.rows, sys.stdout)
                return 0
            rows = list(result.rows)
    _write_first(fmt, result.columns, rows, limit)
    return 0


def _query(args: argparse.Namespace) -> str:
    """The query: the QUERY argument, or the text of ``-f FILE`` (``-`` reads stdin)."""
    if (args.query is None) == (args.file is None):
        raise ConfigError("give the query as an argument or with -f FILE (- reads it from stdin), not both or neither")
    if args.query is not None:
        return args.query
    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            raise ConfigError(f"cannot read the query file {args.file}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"the query file {args.file} is not UTF-8 text") from None
    if not text.strip():
        raise ConfigError(f"the query {'on stdin' if args.file == '-' else f'file {args.file}'} is empty")
    return text


def _explain(args: argparse.Namespace, spark: SparkSession | None) -> int:
    if args.json and (args.verbose or args.analyze):
        raise ConfigError("--json prints the plan only (its rules included); drop --verbose and --analyze")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise ConfigError(f"--plot writes a PNG picture: give a file name ending in .png, not {args.plot!r}")
    query = _query(args)
    url = _server(args, spark)
    if url is not None:
        from sluice.cli_explain import explain_on_server

        plan, metrics, pruning = explain_on_server(url, _sources(args), query, args.analyze)
    else:
        fed = _federation(_sources(args), spark)
        if args.json:
            plan, metrics = fed.plan(query), None
        else:
            with progress(fed.spark, sys.stderr):
                plan, metrics = fed.explained(query, args.analyze)
        pruning = fed.scan_pruning(plan) if not args.json or args.plot else {}
    if args.json:
        print(json.dumps(plan.to_dict(trace=True), indent=2))
    else:
        print(render_explain(plan, verbose=args.verbose, metrics=metrics, pruning=pruning))
    if args.plot:
        from sluice.lake.plot import write_pyramid_png

        write_pyramid_png(pyramids_by_table(plan, pruning), args.plot, title=query if len(query) < 100 else "")
        print(f"pruning pyramid written to {args.plot}", file=sys.stderr)
    return 0


def _lake_ingest(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.lake.ingest import ingest

    _check_lake_args(args)
    if args.demo_rows is not None and args.source_path is not None:
        raise ConfigError("--demo-rows sizes generated demo data; it cannot be combined with --from")
    if args.demo_rows is None and args.source_path is None:  # never write millions of made-up rows unasked
        raise ConfigError(
            "say what to ingest: --from PATH (a CSV, JSON or Parquet file or folder) or --demo-rows N "
            "(N generated telemetry rows)"
        )
    summary = ingest(
        _lake_session(spark, "sluice-lake-ingest"),
        args.lake,
        args.source_path,
        rows=args.demo_rows,
        namespace=args.namespace,
        table=args.table,
        mode="overwrite" if args.overwrite else "overwrite-partitions" if args.overwrite_partitions else "append",
        **_layout(args),
    )
    print(summary)
    return 0


def _lake_create(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.lake.ingest import create_table, describe_sort, describe_spec

    _check_lake_args(args)
    if args.schema is None and args.source_path is None:
        raise ConfigError("give the new table's columns: --schema 'id bigint, ts timestamp, ...' or --from FILE")
    if args.schema is not None and args.source_path is not None:
        raise ConfigError("--schema and --from both give the columns: give one")
    table = create_table(
        _lake_session(spark, "sluice-lake-create"),
        args.lake,
        args.namespace,
        args.table,
        args.source_path,
        **_layout(args),
    )
    columns = ", ".join(f"{field.name} {field.field_type}" for field in table.schema().fields)
    print(
        f"created {args.namespace}.{args.table} ({columns}); partitioned by {describe_spec(table)}; "
        f"sorted by {describe_sort(table)}"
    )
    return 0


def _lake_optimize(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.lake.catalog import LakeLocation
    from sluice.lake.maintenance import optimize

    LakeLocation.from_url(args.lake)
    summary = optimize(_lake_session(spark, "sluice-lake-optimize"), args.lake, args.namespace, args.table)
    print(
        summary
        if summary is not None
        else f"{args.namespace}.{args.table}: every partition has one file and no deletes to apply; nothing to do"
    )
    return 0


def _lake_expire(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.lake.maintenance import expire_snapshots

    older_than = _instant(args.older_than) if args.older_than is not None else None
    print(expire_snapshots(args.lake, args.namespace, args.table, older_than=older_than, retain_last=args.retain_last))
    return 0


def _lake_remove_orphans(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.lake.orphans import remove_orphan_files

    older_than = _instant(args.older_than) if args.older_than is not None else None
    print(remove_orphan_files(args.lake, args.namespace, args.table, older_than=older_than, dry_run=args.dry_run))
    return 0


def _instant(text: str) -> dt.datetime:
    """``--older-than``'s ISO timestamp; one without a zone is the machine's local time, as a reader typing it means."""
    try:
        instant = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--older-than takes an ISO timestamp such as 2025-03-01T00:00:00Z, not {text!r}") from None
    return instant if instant.tzinfo is not None else instant.astimezone()


def _check_lake_args(args: argparse.Namespace) -> None:
    """What can be checked before Spark starts: the URL and the layout's syntax."""
    from sluice.lake.catalog import LakeLocation
    from sluice.lake.layout import parse_partition_by, parse_sort_by

    LakeLocation.from_url(args.lake)  # a malformed URL fails here, before Spark starts
    if args.partition_by is not None:
        parse_partition_by(args.partition_by)
    if args.sort_by is not None:
        parse_sort_by(args.sort_by)


def _layout(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords ``ingest`` and ``create`` share: how the input is read and how the table is laid out."""
    return {
        "source_format": args.format,
        "encoding": args.encoding,
        "schema": args.schema,
        "partition_by": args.partition_by,
        "sort_by": args.sort_by,
        "target_file_size": args.target_file_size,
    }


def _lake_session(spark: SparkSession | None, app_name: str) -> SparkSession:
    if spark is not None:
        return spark
    from sluice.cli_spark import quiet_session

    with Console(stderr=True).status("starting Spark..."):
        return quiet_session(app_name=app_name)


def _serve(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice.flight.auth import Credentials
    from sluice.serve.server import Tls, serve

    if bool(args.tls_cert) != bool(args.tls_key):
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    credentials = Credentials.from_environment()
    if credentials is None and not args.no_auth:
        raise ConfigError(
            "set SLUICE_FLIGHT_TOKEN (or SLUICE_FLIGHT_USER and SLUICE_FLIGHT_PASSWORD) to require "
            "authentication, or pass --no-auth to serve without it (trusted networks only)"
        )
    catalog = _catalog(args)
    configs = _sources(args, catalog)
    if not configs:
        raise ConfigError("nothing to serve: give --catalog FILE or --source NAME=URL")
    named = AllowList.parse(args.namespace, args.table, "--namespace/--table")
    publish = named or catalog.publish  # the command line replaces the catalog's [serve] list
    unknown = sorted(publish.sources() - {config.name.lower() for config in configs})
    if unknown:
        raise ConfigError(f"--namespace/--table name unknown source(s) {', '.join(unknown)}")
    sources = open_sources(configs)
    serve(
        sources,
        args.host,
        args.port,
        credentials,
        Tls(args.tls_cert, args.tls_key) if args.tls_cert else None,
        publish=publish,
    )
    return 0


def _server_start(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice import server

    kind = server.THRIFT if args.name == "thrift" else server.CONNECT
    configs = _sources(args)
    with Console(stderr=True).status("connecting to the sources..."):
        open_sources(configs)  # an unreachable source fails now, not at the first query
    started = time.monotonic()
    with Console(stderr=True).status(f"starting the {kind.label}..."):
        state = server.start(configs, args.port, kind=kind)
    print(f"started: {state.url} (pid {state.pid}, {time.monotonic() - started:.0f} s; log {state.log})")
    return 0


def _server_status(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice import server

    state, said = server.status(server.THRIFT if args.name == "thrift" else server.CONNECT)
    print(said)
    return 0 if state is not None else 1


def _server_stop(args: argparse.Namespace, spark: SparkSession | None) -> int:
    from sluice import server

    state = server.stop(kind=server.THRIFT if args.name == "thrift" else server.CONNECT)
    print(f"stopped: {state.url} (pid {state.pid})")
    return 0


# ---------------------------------------------------------------- sources
def _catalog(args: argparse.Namespace) -> Catalog:
    return read_catalog(args.catalog) if args.catalog else Catalog({}, AllowList())


def _sources(args: argparse.Namespace, catalog: Catalog | None = None) -> list[SourceConfig]:
    """Catalog sources, overridden by ``--source`` of the same name; passwords resolved now."""
    configs = dict((catalog or _catalog(args)).sources)
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
    """Every source checked (connected once) before Spark starts, then attached to a Federation."""
    from sluice.federation import Federation

    with Console(stderr=True).status("connecting to the sources..."):
        open_sources(configs)
    with Console(stderr=True).status("starting Spark and attaching sources..."):
        if spark is None:
            from sluice.cli_spark import quiet_session

            spark = quiet_session()
        fed = Federation(spark=spark)
        attach_sources(fed, configs)
    return fed


def _source_option(text: str) -> SourceConfig:
    """Parse ``NAME=URL``; the URL is shown masked only (it may hold a password)."""
    name, equals, url = text.partition("=")
    if not equals or not name.isidentifier():
        raise argparse.ArgumentTypeError("expected NAME=URL with NAME a SQL identifier, e.g. lite=sqlite:///crm.db")
    try:
        parse_url(url)
    except UrlError as error:
        raise argparse.ArgumentTypeError(f"the URL for {name}: {error}") from None
    return SourceConfig(name, url)


def non_negative_int(text: str) -> int:
    if text.strip() == "0":
        return 0
    return positive_int(text)


def positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def source_arguments(sub: argparse.ArgumentParser, verb: str) -> None:
    """``--catalog FILE`` and ``--source NAME=URL`` (what :func:`_sources` reads)."""
    sub.add_argument("--catalog", metavar="FILE", help="TOML catalog of named sources")
    sub.add_argument(
        "--source",
        metavar="NAME=URL",
        action="append",
        default=[],
        type=_source_option,
        help=f"{verb} a source (repeatable; overrides a catalog source of the same name)",
    )


# ---------------------------------------------------------------- parser
def server_arguments(sub: argparse.ArgumentParser) -> None:
    """``--server sc://HOST:PORT`` or ``--local`` (what :func:`_server` reads)."""
    on = sub.add_mutually_exclusive_group()
    on.add_argument(
        "--server",
        metavar="sc://HOST:PORT",
        type=server_option,
        help="run on this Spark Connect server (default: the running `sluice server`, if any)",
    )
    on.add_argument("--local", action="store_true", help="start Spark here even when a `sluice server` runs")


def server_commands(commands: argparse._SubParsersAction[Any], port: int, whose: str) -> None:
    """``start``, ``status`` and ``stop`` of ``sluice server`` and ``sluice thrift``."""
    start = commands.add_parser("start", help="start the server; returns once it answers")
    start.set_defaults(command=_server_start)
    source_arguments(start, "attach")
    start.add_argument(
        "--port",
        type=non_negative_int,
        default=port,
        help=f"port on 127.0.0.1 (default {port}, {whose}; 0 picks a free one)",
    )
    commands.add_parser("status", help="whether the server runs and answers (exit 0), else exit 1").set_defaults(
        command=_server_status
    )
    commands.add_parser("stop", help="stop the server (its JVM, planner process and workers)").set_defaults(
        command=_server_stop
    )


def _parser(secrets: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    _Parser.secrets = secrets
    parser = _Parser(
        prog="sluice",
        description="Federated Spark SQL with faithful pushdown.",
        epilog="Spark's own output goes to a temporary log file; set SLUICE_SPARK_LOG=FILE to keep it.",
    )
    parser.add_argument("--version", action="version", version=f"sluice {version('sluice')}")
    commands = parser.add_subparsers(dest="name", required=True, metavar="COMMAND", parser_class=_Parser)

    def query_command(name: str, command: Command, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(command=command)
        sub.add_argument("query", metavar="QUERY", nargs="?", help="Spark SQL over source.[schema.]table names")
        sub.add_argument("-f", "--file", metavar="FILE", help="read the query from FILE (- reads stdin)")
        source_arguments(sub, "attach")
        return sub

    sql = query_command("sql", _sql, "run a query and print its rows")
    sql.add_argument("--no-pushdown", action="store_true", help="read every table whole (the reference path)")
    server_arguments(sql)
    sql.add_argument("--format", choices=FORMATS, help="table (default on a terminal), csv (default otherwise) or json")
    sql.add_argument(
        "--max-rows",
        metavar="N",
        type=positive_int,
        help="rows to print (default 50 for a table, every row for csv and json)",
    )

    explain = query_command("explain", _explain, "show what each source evaluates, and why")
    server_arguments(explain)
    explain.add_argument("--verbose", action="store_true", help="add the plan after every optimizer rule")
    explain.add_argument("--json", action="store_true", help="print the plan as JSON")
    explain.add_argument("--analyze", action="store_true", help="run the query and add rows/bytes transferred")
    explain.add_argument(
        "--plot", metavar="PNG", help="also draw the pruning pyramid of the query's lake scans to this file"
    )

    serve = commands.add_parser(
        "serve",
        help="publish the sources' tables over Arrow Flight (docs/flight.md)",
        description="Publish the sources' tables over Arrow Flight, with pushdown: those the "
        "--namespace/--table options or the catalog's [serve] table name, else each "
        "source's default namespace; nothing else is listed or read. Secrets come from "
        "SLUICE_FLIGHT_TOKEN or SLUICE_FLIGHT_USER/SLUICE_FLIGHT_PASSWORD.",
    )
    serve.set_defaults(command=_serve)
    source_arguments(serve, "serve")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8815, help="port to listen on (default 8815; 0 picks a free one)")
    serve.add_argument("--tls-cert", metavar="PEM", help="certificate chain: serve grpc+tls (with --tls-key)")
    serve.add_argument("--tls-key", metavar="PEM", help="private key of --tls-cert")
    serve.add_argument("--no-auth", action="store_true", help="accept unauthenticated calls (trusted networks only)")
    serve.add_argument(
        "--namespace",
        metavar="SOURCE.SCHEMA",
        action="append",
        default=[],
        help="publish every table of this namespace (repeatable; replaces the catalog's [serve] list)",
    )
    serve.add_argument(
        "--table",
        metavar="SOURCE.[SCHEMA.]TABLE",
        action="append",
        default=[],
        help="publish this table (repeatable; replaces the catalog's [serve] list)",
    )

    server = commands.add_parser(
        "server",
        help="a local Spark Connect server with the sources as catalogs (start, stop, status)",
        description="A Spark Connect server from the pyspark wheel, in the background, on 127.0.0.1: "
        "its catalogs are the sources of --catalog/--source; query them from "
        "SparkSession.builder.remote('sc://127.0.0.1:PORT'), or with `sluice sql`. State and log in "
        "$SLUICE_SERVER_DIR (default ~/.sluice/server).",
    ).add_subparsers(dest="server_command", required=True, metavar="SERVER_COMMAND")
    server_commands(server, 15002, "Spark Connect's")
    thrift = commands.add_parser(
        "thrift",
        help="a local Thrift JDBC/ODBC server with the sources as catalogs (start, stop, status)",
        description="Spark's Thrift JDBC/ODBC server (HiveServer2's protocol) from the pyspark wheel, in the "
        "background, on 127.0.0.1: its catalogs are the sources of --catalog/--source; query them with "
        "any HiveServer2 JDBC/ODBC client, e.g. the wheel's own `beeline -u jdbc:hive2://127.0.0.1:PORT`. "
        "State, log and its Derby metastore in $SLUICE_SERVER_DIR (default ~/.sluice/server).",
    ).add_subparsers(dest="thrift_command", required=True, metavar="THRIFT_COMMAND")
    server_commands(thrift, 10000, "HiveServer2's")

    lake = commands.add_parser("lake", help="manage Iceberg lake tables").add_subparsers(
        dest="lake_command", required=True, metavar="LAKE_COMMAND"
    )
    lake_ingest = lake.add_parser(
        "ingest",
        help="append generated telemetry, files or a table's rows to a lake table",
        description="Append rows to a lake table (or replace them, --overwrite, or the partitions they fall in, "
        "--overwrite-partitions) in one "
        "snapshot, with Spark: a file or folder (--from) or, with --demo-rows N, N rows of synthetic "
        "spacecraft telemetry. A "
        "missing table is created from the input's columns (types inferred, or --schema) with "
        "--partition-by and --sort-by; telemetry.readings gets the telemetry layout. New "
        "columns are added and int/float/decimal columns widened; other changes are refused.",
    )
    lake_ingest.set_defaults(command=_lake_ingest)
    lake_ingest.add_argument(
        "--demo-rows", metavar="N", type=positive_int, help="generate N rows of demo telemetry instead of --from"
    )
    replacing = lake_ingest.add_mutually_exclusive_group()
    replacing.add_argument("--overwrite", action="store_true", help="replace the table's rows instead of appending")
    replacing.add_argument(
        "--overwrite-partitions",
        action="store_true",
        help="replace only the partitions the input's rows fall in (dynamic partition overwrite)",
    )
    lake_create = lake.add_parser(
        "create",
        help="create an empty lake table from a schema or a file's columns",
        description="Create an empty lake table: its columns from --schema or from a CSV, "
        "JSON or Parquet file (types inferred), its layout from --partition-by and --sort-by.",
    )
    lake_create.set_defaults(command=_lake_create)
    lake_optimize = lake.add_parser(
        "optimize",
        help="rewrite each partition's small files into one, sorted, deletes applied",
        description="Rewrite every partition of a lake table that holds several data "
        "files, or a file row-level delete files apply to, into one file (sorted by the table's "
        "sort order; split past the target file size; deletes applied and the delete files "
        "dropped), in one snapshot, with Spark. Appends committed meanwhile are kept; a "
        "concurrent commit that removed a rewritten file fails it in one line.",
    )
    lake_optimize.set_defaults(command=_lake_optimize)
    lake_expire = lake.add_parser(
        "expire-snapshots",
        help="remove old snapshots of a lake table and the files only they referenced",
        description="Expire the snapshots older than --older-than (default: 5 days ago, "
        "Iceberg's own default age) except the newest --retain-last, then delete the data and manifest files no "
        "remaining snapshot references. No Spark.",
    )
    lake_expire.set_defaults(command=_lake_expire)
    lake_expire.add_argument(
        "--older-than",
        metavar="TIMESTAMP",
        help="expire snapshots made before this instant (ISO, e.g. 2025-03-01T00:00:00Z; default: 5 days ago)",
    )
    lake_expire.add_argument(
        "--retain-last",
        metavar="N",
        type=positive_int,
        default=1,
        help="keep the newest N snapshots whatever their age (default 1)",
    )
    lake_orphans = lake.add_parser(
        "remove-orphans",
        help="delete files under a lake table's folder that no snapshot or metadata file names",
        description="Delete the files under the table's folder that its metadata does not "
        "reach (e.g. a killed job's staging folder) and that are older than --older-than "
        "(default: 3 days ago, so a running job's files are kept). No Spark.",
    )
    lake_orphans.set_defaults(command=_lake_remove_orphans)
    lake_orphans.add_argument(
        "--older-than",
        metavar="TIMESTAMP",
        help="only files last modified before this instant (ISO, e.g. 2025-03-01T00:00:00Z; default: 3 days ago)",
    )
    lake_orphans.add_argument("--dry-run", action="store_true", help="list the orphan files, delete nothing")
    for sub in (lake_optimize, lake_expire, lake_orphans):
        sub.add_argument(
            "lake",
            metavar="LAKE_URL",
            nargs="?",
            default="iceberg+sqlite:///demo-data/lake/catalog.db",
            help="iceberg+sqlite:///catalog.db[?warehouse=DIR] (default: demo-data/lake/catalog.db)",
        )
        sub.add_argument("--namespace", default="telemetry", help="the table's namespace (default telemetry)")
        sub.add_argument("--table", default="readings", help="the table (default readings)")
    for sub in (lake_ingest, lake_create):
        sub.add_argument(
            "lake",
            metavar="LAKE_URL",
            nargs="?",
            default="iceberg+sqlite:///demo-data/lake/catalog.db",
            help="iceberg+sqlite:///catalog.db[?warehouse=DIR] (default: demo-data/lake/catalog.db)",
        )
        sub.add_argument("--from", dest="source_path", metavar="PATH", help="a CSV, JSON or Parquet file or folder")
        sub.add_argument(
            "--format", choices=("csv", "json", "parquet"), help="the format of --from (default: its suffix)"
        )
        sub.add_argument(
            "--encoding",
            metavar="CHARSET",
            help="the text encoding of a CSV --from, as in latin1 or utf-16 (default UTF-8; a byte "
            "that does not decode fails the job, naming the file and line)",
        )
        sub.add_argument("--namespace", default="telemetry", help="the table's namespace (default telemetry)")
        sub.add_argument("--table", default="readings", help="the table (default readings, the telemetry table)")
        sub.add_argument(
            "--schema",
            metavar="DDL",
            help="the columns, as in 'id bigint, ts timestamp, temp double' "
            "(CSV and JSON are parsed as these types; default: inferred)",
        )
        sub.add_argument(
            "--partition-by",
            metavar="SPEC",
            help="a new table's partitioning, as in 'day(ts), "
            "bucket(16, id)': columns, year/month/day/hour(c), bucket(N, c), truncate(W, c)",
        )
        sub.add_argument("--sort-by", metavar="COLUMNS", help="a new table's sort order, as in 'ts, id desc'")
        sub.add_argument(
            "--target-file-size",
            metavar="BYTES",
            type=positive_int,
            help="a new table's data file size (table property write.target-file-size-bytes; "
            "default 134217728, 128 MiB)",
        )
    return parser


if __name__ == "__main__":
    sys.exit(main())
