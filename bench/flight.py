"""``python -m bench.flight``: Arrow Flight throughput of a Sluice server, full and filtered reads.

The server runs as its own process (``sluice serve``: client and server must not share a
GIL) over the benchmark table (bench/data.py) in PostgreSQL or SQLite. A plain
pyarrow.flight client asks for endpoints and reads them, one thread per endpoint. Each
read is timed from GetFlightInfo to the last batch; rows/s and MB/s count what arrives
(Arrow buffer bytes). The filtered read pushes ``status = 'refunded'`` (1% of the rows,
EXACT), so the server scans every row and sends one in a hundred; its "scanned" rate is
the table's rows over the same time. The same full read without Flight (the source's own
reader, in this process) is the baseline. Warm-up, then the median of ``--runs`` rounds.

    .venv/bin/python -m bench.flight                    # 1M rows in PostgreSQL
    .venv/bin/python -m bench.flight --source sqlite --rows 500k
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

import pyarrow.flight as flight

from bench import data
from bench.__main__ import _rows

PG_URL = os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test")
TOKEN = "bench-flight-token"
REFUNDED = {"op": "=", "args": [{"column": "status"}, {"literal": "refunded", "type": "string"}]}


@dataclass(frozen=True)
class Read:
    rows: int
    nbytes: int
    seconds: float


def start_server(source: str) -> tuple[subprocess.Popen, str]:  # type: ignore[type-arg]
    """``sluice serve`` on a free port in a child process; returns it and its location."""
    process = subprocess.Popen([sys.executable, "-m", "sluice.cli", "serve", "--port", "0", "--source", source],
                               env={**os.environ, "SLUICE_FLIGHT_TOKEN": TOKEN}, stdout=subprocess.PIPE, text=True)
    banner = process.stdout.readline()  # type: ignore[union-attr]
    match = re.search(r" at (grpc\S+) ", banner)
    if match is None:
        process.kill()
        raise SystemExit(f"sluice serve did not start: {banner!r}")
    return process, match[1]


def timed_read(location: str, path: list[str], conjuncts: list, partitions: int) -> Read:  # type: ignore[type-arg]
    options = flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {TOKEN}".encode())], timeout=600)
    request = {"table": path, "partitions": partitions, "filter": {"format": "sluice", "conjuncts": conjuncts} if conjuncts else None}
    totals: list[tuple[int, int]] = []
    started = time.perf_counter()
    with flight.connect(location) as client:
        info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request).encode()), options)

        def drain(endpoint: flight.FlightEndpoint) -> None:
            with flight.connect(location) as own:
                rows = nbytes = 0
                for chunk in own.do_get(endpoint.ticket, options):
                    rows += chunk.data.num_rows
                    nbytes += chunk.data.nbytes
                totals.append((rows, nbytes))

        threads = [threading.Thread(target=drain, args=(e,)) for e in info.endpoints]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return Read(sum(r for r, _ in totals), sum(b for _, b in totals), time.perf_counter() - started)


def direct_read(url: str, path: list[str], partitions: int) -> Read:
    """The same full read without Flight: the source's own tasks, one thread each, in this process."""
    from sluice.scan import ScanSpec
    from sluice.sources import open_source

    started = time.perf_counter()
    source = open_source(path[0], url)
    table = source.describe(path[1] if len(path) == 3 else None, path[-1])
    spec = ScanSpec.for_source(source, table, tuple(c.name for c in table.columns), partitions=partitions)
    totals: list[tuple[int, int]] = []

    def drain(task) -> None:  # type: ignore[no-untyped-def]
        batches = list(source.read(task))
        totals.append((sum(b.num_rows for b in batches), sum(b.nbytes for b in batches)))

    threads = [threading.Thread(target=drain, args=(task,)) for task in source.tasks(spec)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Read(sum(r for r, _ in totals), sum(b for _, b in totals), time.perf_counter() - started)


def _line(name: str, reads: list[Read], scanned_rows: int | None) -> str:
    seconds = statistics.median(r.seconds for r in reads)
    rows, nbytes = reads[0].rows, reads[0].nbytes
    scanned = f", {scanned_rows / seconds / 1e6:.2f} M rows/s scanned" if scanned_rows else ""
    return (f"  {name:<22} {rows:>10,} rows {nbytes / 1e6:>8.1f} MB in {seconds:6.2f} s: "
            f"{rows / seconds / 1e6:6.2f} M rows/s, {nbytes / seconds / 1e6:7.1f} MB/s{scanned}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.flight", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=("pg", "sqlite"), default="pg", help="where the table lives (default pg)")
    parser.add_argument("--rows", type=_rows, default=1_000_000, help="table size, e.g. 500k or 2M (default 1M)")
    parser.add_argument("--partitions", type=int, default=os.cpu_count() or 2, help="endpoints per read (default: cores)")
    parser.add_argument("--runs", type=int, default=3, help="timed rounds after a warm-up (default 3)")
    args = parser.parse_args(argv)

    if args.source == "pg":
        data.ensure_postgres(PG_URL, args.rows)
        served, path = f"pg={PG_URL}", ["pg", data.PG_SCHEMA, data.TABLE]
    else:
        sqlite_path = os.path.join(tempfile.gettempdir(), "sluice-bench", f"flight-{args.rows}.db")
        data.ensure_sqlite(sqlite_path, args.rows)
        served, path = f"lite=sqlite:///{sqlite_path}", ["lite", data.TABLE]
    process, location = start_server(served)
    try:
        print(f"Sluice Flight server on {location}: {args.rows:,} rows in {args.source}, {args.partitions} endpoints, "
              f"median of {args.runs} rounds after a warm-up ({os.cpu_count()} cores)")
        for name, conjuncts in (("full read", []), ("filtered read", [REFUNDED])):
            timed_read(location, path, conjuncts, args.partitions)
            reads = [timed_read(location, path, conjuncts, args.partitions) for _ in range(args.runs)]
            print(_line(f"Flight {name}", reads, args.rows if conjuncts else None))
        url = served.split("=", 1)[1]
        direct_read(url, path, args.partitions)
        print(_line("same full read, no Flight", [direct_read(url, path, args.partitions) for _ in range(args.runs)], None))
        load = os.getloadavg()[0]
        print(f"  (load average {load:.1f} on {os.cpu_count()} cores at the end: above the core count, other work competed)")
    finally:
        process.kill()
        process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
