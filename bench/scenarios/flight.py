"""Flight scenario: full and filtered reads through Sluice's Flight server vs a plain pyarrow.flight server.

Per scale, the PostgreSQL benchmark table (bench/data.py) is served by two processes on
loopback, each started for the scale and stopped after it:

- ``sluice serve`` (the real server, bearer-token auth): the filter travels with the
  request and is pushed into PostgreSQL, so only matching rows cross the socket;
- ``bench.scenarios.plain_flight``: the same table read once into memory, streamed whole
  (no pushdown); the client filters what it received.

A third path, Sluice's source reader in this process (no Flight), shows what the socket
costs. Every path reads with as many streams as the machine has cores (endpoints, or
reader tasks). rows/s and MB/s count what arrives (Arrow buffer bytes). Client and
servers share the machine's cores: that is loopback on this machine, not the network.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as flight
import sqlglot
from sqlglot import exp

from bench import data
from bench.cases import BY_KEY, Case
from bench.context import BenchContext, log, scenario_result
from bench.scenarios.plain_flight import BANNER as PLAIN_BANNER
from bench.timing import summary, warmed_rounds

KEY = "flight"
TITLE = "Flight: Sluice's server (pushdown) vs a plain pyarrow.flight server, on loopback"
SERVED = "bench_pg"  # the source name Sluice's server publishes the table under
TOKEN = "bench-flight-token"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START_TIMEOUT_S = 600.0  # the plain server reads the whole table before it listens
CALL_TIMEOUT_S = 600.0
PLAIN = "plain pyarrow.flight server (no pushdown)"
SLUICE = "Sluice Flight server"
IN_PROCESS = "Sluice reader in-process (no Flight)"
#: the 1% filter of the SQL scenario (bench/cases.py), as its shape spells it
FILTER_SQL: str = BY_KEY["filter"].where or ""


@dataclass(frozen=True)
class Received:
    """What one read delivered: rows and Arrow bytes that arrived, and the table it returns."""

    rows: int
    nbytes: int
    table: pa.Table


# ---------------------------------------------------------------- the filter, two ways
def equality_filter(sql: str) -> tuple[str, str]:
    """``column = 'text'`` (the 1% filter shape of bench/cases.py) as (column, value)."""
    tree = sqlglot.parse_one(sql)
    if not (
        isinstance(tree, exp.EQ)
        and isinstance(tree.left, exp.Column)
        and isinstance(tree.right, exp.Literal)
        and tree.right.is_string
    ):
        raise ValueError(
            f"the Flight scenario sends bench.cases' filter shape as a Sluice JSON conjunct and needs "
            f"`column = 'text'`, not {sql!r}"
        )
    return tree.left.name, tree.right.this


def sluice_conjunct(column: str, value: str) -> dict[str, Any]:
    return {"op": "=", "args": [{"column": column}, {"literal": value, "type": "string"}]}


# ---------------------------------------------------------------- servers
def start_server(argv: list[str], env: dict[str, str], banner: str) -> tuple[subprocess.Popen, str]:
    """Start a server process and wait (bounded) for its banner line; returns it and its location.

    A thread reads the server's stdout to the end, so a chatty server never blocks on a full pipe.
    """
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for text in process.stdout:
            lines.put(text)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            stop_server(process)
            raise RuntimeError(
                f"{' '.join(argv[1:4])} did not print its banner within {START_TIMEOUT_S:.0f} s"
            ) from None
        if line is None:
            stop_server(process)
            raise RuntimeError(f"{' '.join(argv[1:4])} exited with code {process.returncode} before listening")
        if banner in line:
            break
    match = re.search(r" at (grpc\S+) ", line)
    if match is None:
        stop_server(process)
        raise RuntimeError(f"server banner without a location: {line.strip()!r}")
    return process, match[1]


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---------------------------------------------------------------- reads
def flight_read(location: str, command: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> Received:
    """GetFlightInfo, then every endpoint drained by its own thread and connection."""
    options = flight.FlightCallOptions(headers=headers, timeout=CALL_TIMEOUT_S)
    with flight.connect(location) as client:
        info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(command).encode()), options)
    return _in_threads([functools.partial(_drain, location, e.ticket, options) for e in info.endpoints])


def _drain(location: str, ticket: flight.Ticket, options: flight.FlightCallOptions) -> pa.Table:
    with flight.connect(location) as client:
        return client.do_get(ticket, options).read_all()


def in_process_read(url: str, where: str | None) -> Received:
    """The same read without Flight: Sluice's source reader, one thread per task, in this process."""
    from sluice.pushdown.pushed import Pushed
    from sluice.scan.spec import ScanSpec
    from sluice.sources import open_source

    source = open_source(SERVED, url)
    table = source.describe(data.PG_SCHEMA, data.TABLE)
    spec = ScanSpec.for_source(
        source,
        table,
        tuple(c.name for c in table.columns),
        where=(Pushed(tree=cast(exp.Expression, sqlglot.parse_one(where, read="postgres"))),) if where else (),
        partitions=os.cpu_count() or 1,
    )
    schema = spec.arrow_schema()
    return _in_threads([functools.partial(_read_task, source, t, schema) for t in source.tasks(spec)])


def _read_task(source: Any, task: Any, schema: pa.Schema) -> pa.Table:
    """One read task drained into a table (a named function: a lambda binding ``task`` cannot be typed)."""
    return pa.Table.from_batches(list(source.read(task)), schema=schema)


def _in_threads(reads: list[Callable[[], pa.Table]]) -> Received:
    results: list[pa.Table | None] = [None] * len(reads)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            results[index] = reads[index]()
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(reads))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    tables = [t for t in results if t is not None]
    table = pa.concat_tables([t.replace_schema_metadata(None) for t in tables])
    return Received(table.num_rows, sum(t.nbytes for t in tables), table)


# ---------------------------------------------------------------- one scale
def _cases(
    locations: dict[str, str], url: str, partitions: int, received: dict[tuple[str, str], tuple[int, int]]
) -> list[Case]:
    """Both shapes over the three paths; each run notes the rows and bytes that arrived in ``received``."""
    column, value = equality_filter(FILTER_SQL)
    table_path = [SERVED, data.PG_SCHEMA, data.TABLE]
    token = [(b"authorization", f"Bearer {TOKEN}".encode())]

    def kept(
        shape: str, path: str, read: Callable[[], Received], after: Callable[[pa.Table], pa.Table] | None = None
    ) -> Case:
        def run() -> pa.Table:
            got = read()
            received[(shape, path)] = (got.rows, got.nbytes)
            return after(got.table) if after else got.table

        return Case(KEY, shape, path, run, baseline=path == PLAIN, streams=partitions)

    def client_filter(table: pa.Table) -> pa.Table:
        return table.filter(pc.equal(table[column], value))

    sluice_full = {"table": table_path, "partitions": partitions}
    sluice_filtered = {**sluice_full, "filter": {"format": "sluice", "conjuncts": [sluice_conjunct(column, value)]}}
    plain = {"partitions": partitions}
    return [
        kept("full", PLAIN, lambda: flight_read(locations[PLAIN], plain, [])),
        kept("full", SLUICE, lambda: flight_read(locations[SLUICE], sluice_full, token)),
        kept("full", IN_PROCESS, lambda: in_process_read(url, None)),
        kept("filtered", PLAIN, lambda: flight_read(locations[PLAIN], plain, []), client_filter),
        kept("filtered", SLUICE, lambda: flight_read(locations[SLUICE], sluice_filtered, token)),
        kept("filtered", IN_PROCESS, lambda: in_process_read(url, FILTER_SQL)),
    ]


def _servers(url: str) -> tuple[dict[str, str], list[subprocess.Popen]]:
    processes: list[subprocess.Popen] = []
    locations = {}
    try:
        process, locations[SLUICE] = start_server(
            [
                sys.executable,
                "-m",
                "sluice.cli",
                "serve",
                "--port",
                "0",
                "--source",
                f"{SERVED}={url}",
                "--namespace",
                f"{SERVED}.{data.PG_SCHEMA}",
            ],
            {**os.environ, "SLUICE_FLIGHT_TOKEN": TOKEN},
            "sluice flight: serving",
        )
        processes.append(process)
        process, locations[PLAIN] = start_server(
            [
                sys.executable,
                "-m",
                "bench.scenarios.plain_flight",
                "--url",
                url,
                "--schema",
                data.PG_SCHEMA,
                "--table",
                data.TABLE,
            ],
            {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (ROOT, os.environ.get("PYTHONPATH"))))},
            PLAIN_BANNER,
        )
        processes.append(process)
    except BaseException:
        for process in processes:
            stop_server(process)
        raise
    return locations, processes


def _scale(ctx: BenchContext, rows: int) -> dict[str, Any]:
    log(f"== flight, {rows:,} rows: preparing data")
    prepared = data.ensure_postgres(ctx.pg_url, rows)
    log(f"  postgresql: {'generated' if prepared.generated else 'kept'} in {prepared.seconds:.1f}s")
    partitions = os.cpu_count() or 1
    locations, processes = _servers(ctx.pg_url)
    received: dict[tuple[str, str], tuple[int, int]] = {}
    try:
        log(f"  servers: Sluice at {locations[SLUICE]}, plain at {locations[PLAIN]}")
        cases = _cases(locations, ctx.pg_url, partitions, received)
        rounds = warmed_rounds(f"flight, {rows:,} rows", cases, ctx.runs, ctx.seed + rows, log)
    finally:
        for process in processes:
            stop_server(process)
    baselines = {c.shape: c for c in cases if c.baseline}
    in_process = {c.shape: c for c in cases if c.path == IN_PROCESS}
    results = []
    for case in cases:
        record: dict[str, Any] = summary(case, baselines[case.shape])
        got = received.get((case.shape, case.path))
        if got is not None and record.get("median_s"):
            record["extra"] = _rates(got, rows, float(record["median_s"]))
            if case.path == SLUICE:  # what the socket adds to Sluice's own reader
                ratio = summary(case, in_process[case.shape]).get("ratio")
                record["extra"]["× in-process reader"] = f"{ratio:.2f}x" if ratio is not None else "—"
        results.append(record)
    return {
        "rows": rows,
        "rounds": rounds,
        "results": results,
        "facts": {
            "postgresql": {
                "generated": prepared.generated,
                "seconds": round(prepared.seconds, 2),
                "fingerprint": prepared.fingerprint,
            },
            "endpoints": partitions,
            "filter": FILTER_SQL,
            "received": {f"{shape} / {path}": {"rows": r, "bytes": b} for (shape, path), (r, b) in received.items()},
        },
    }


def _rates(got: tuple[int, int], table_rows: int, seconds: float) -> dict[str, str]:
    """Display columns: what arrived, how fast, and the table's rows per second (what was scanned)."""
    rows, nbytes = got
    return {
        "received": f"{rows:,} rows, {_number(nbytes)}B",
        "rows/s received": _number(rows / seconds),
        "MB/s received": f"{nbytes / seconds / 1e6:,.{1 if nbytes / seconds >= 1e7 else 3}f}",
        "table rows/s": _number(table_rows / seconds),
    }


def _number(value: float) -> str:
    """1.66 M, 15.2 k, 500: three significant figures and an SI prefix."""
    for size, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g} {prefix}"
    return f"{value:.3g} "


ABOUT = [
    f"Data: the PostgreSQL benchmark table `{data.PG_SCHEMA}.{data.TABLE}` of `bench/data.py` at each scale.",
    f"Paths: **{SLUICE}** (`sluice serve`, its own process, bearer token; the filter is sent as a Sluice JSON conjunct "
    f"and pushed into PostgreSQL); **{PLAIN}** (`bench/scenarios/plain_flight.py`, its own process: the table read "
    "once into memory at start, every row streamed, the client filters after receiving; the baseline); "
    f"**{IN_PROCESS}** (the same reads without a socket).",
    f"Shapes: the full table, and `{FILTER_SQL}` (1% of the rows). Every path reads with one stream per core "
    "(Flight endpoints, each drained by its own client thread and connection; reader tasks in process).",
    "Each read is timed from GetFlightInfo to the last batch received; *received* counts Arrow buffer bytes and rows "
    "that arrived (before the client's filter), *table rows/s* the table's rows over the same time. The warm-up "
    "compares every path's rows with the plain server's (column *check*). *× in-process reader*: Sluice's Flight "
    "read over the same read without a socket, i.e. what Flight adds.",
    "Client and servers share this machine's cores over loopback: the figures are CPU-bound transfer, not network.",
    "Timing: one warm-up, then interleaved rounds in a shuffled order; median, min and max; ratio to the plain server.",
]


def run(ctx: BenchContext) -> dict[str, Any]:
    """Every scale, largest first; issue 6 sets no Flight target, so ``targets`` is empty.

    Largest first: the SQL scenario leaves the PostgreSQL table at the largest scale, so only
    the smaller ones are regenerated (and the next run's SQL scenario starts from the smallest).
    """
    scales = [_scale(ctx, rows) for rows in sorted(ctx.scales, reverse=True)]
    return scenario_result(KEY, TITLE, ABOUT, sorted(scales, key=lambda s: s["rows"]), [])
