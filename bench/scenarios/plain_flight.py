"""A plain pyarrow.flight server: one table read once into memory, streamed whole, no pushdown.

The Flight scenario's baseline. It stands for "any Flight server" a client could read the
same data from: it knows no filter, so every row crosses the socket and the client filters
after receiving. It holds the table in memory (read once, at start, with Sluice's own
reader, so the Arrow types are exactly what Sluice's server sends), which makes it the
upper bound of what Flight transfer costs on this machine: no source is read per request.

Protocol: GetFlightInfo with a command descriptor ``{"partitions": n}`` answers ``n``
endpoints, each a contiguous slice of the table; DoGet streams a slice in batches of the
size Sluice's readers use. Run as its own process (client and server must not share a GIL):

    python -m bench.scenarios.plain_flight --url postgresql://... --schema sluice_bench --table bench_orders
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from sluice.sources.base import Source

BANNER = "plain flight: serving"


class PlainFlightServer(flight.FlightServerBase):
    """Serves one in-memory table in ``partitions`` slices; ignores everything else a request says."""

    def __init__(self, table: pa.Table, batch_rows: int, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(f"grpc+tcp://{host}:{port}")
        self.table, self.batch_rows = table, batch_rows
        self.location = f"grpc://{host}:{self.port}"

    def get_flight_info(
        self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor
    ) -> flight.FlightInfo:
        request: dict[str, Any] = json.loads(descriptor.command or b"{}")
        count = max(1, min(int(request.get("partitions", 1)), 64))
        endpoints = [flight.FlightEndpoint(f"{index}/{count}".encode(), [self.location]) for index in range(count)]
        return flight.FlightInfo(self.table.schema, descriptor, endpoints, self.table.num_rows, self.table.nbytes)

    def do_get(self, context: flight.ServerCallContext, ticket: flight.Ticket) -> flight.FlightDataStream:
        index, count = (int(part) for part in ticket.ticket.decode().split("/"))
        rows = self.table.num_rows
        start, stop = rows * index // count, rows * (index + 1) // count
        part = self.table.slice(start, stop - start)
        return flight.GeneratorStream(self.table.schema, iter(part.to_batches(max_chunksize=self.batch_rows)))


def read_table(url: str, schema: str | None, name: str) -> tuple[pa.Table, Source]:
    """The whole table through Sluice's reader (one stream): the same Arrow types Sluice serves."""
    source = open_source("plain", url)
    table = source.describe(schema, name)
    spec = ScanSpec.for_source(source, table, tuple(c.name for c in table.columns), partitions=1)
    batches = [batch for task in source.tasks(spec) for batch in source.read(task)]
    return pa.Table.from_batches(batches, schema=spec.arrow_schema()), source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scenarios.plain_flight",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", required=True, help="the source holding the table (a Sluice source URL)")
    parser.add_argument("--schema", help="the table's schema, if not the source's default")
    parser.add_argument("--table", required=True)
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default 0: a free one)")
    args = parser.parse_args(argv)
    table, source = read_table(args.url, args.schema, args.table)
    server = PlainFlightServer(table, source.batch_rows, port=args.port)
    print(f"{BANNER} {table.num_rows} rows ({table.nbytes} bytes) at {server.location} ", flush=True)
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
