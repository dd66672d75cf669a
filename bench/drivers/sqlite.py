"""SQLite into Arrow, one function per driver path, each returning Sluice's schema.

SQLite stores ``placed_at`` as ISO text; Sluice reads it as ``timestamp_ntz``, so a
driver that hands back strings pays for the cast to timestamp inside the timing.
"""

from __future__ import annotations

from typing import cast

import pyarrow as pa

from bench.cases import Case, SluiceRead, to_schema
from sluice.sources.sqlite import SqliteSource

#: connectorx's partitioned mode: one range of ``id`` per core of the benchmark machine
CX_PARTITIONS = 2


def read_adbc(path: str, sql: str, schema: pa.Schema) -> pa.Table:
    """ADBC SQLite driver (C, types inferred from the first rows of each batch)."""
    import adbc_driver_sqlite.dbapi as adbc

    with adbc.connect(path) as connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return to_schema(cursor.fetch_record_batch().read_all(), schema)


def read_connectorx(path: str, sql: str, schema: pa.Schema) -> pa.Table:
    """connectorx (Rust, rusqlite), one stream."""
    import connectorx as cx

    return to_schema(cx.read_sql("sqlite://" + path, sql, return_type="arrow"), schema)


def read_connectorx_queries(path: str, queries: list[str], schema: pa.Schema) -> pa.Table:
    """connectorx reading several queries in parallel (for results without ``id``)."""
    import connectorx as cx

    return to_schema(cx.read_sql("sqlite://" + path, queries, return_type="arrow"), schema)


def cases(read: SluiceRead) -> list[Case]:
    """Every SQLite path for one shape, Sluice's reader (sqlite3 + pyarrow) first: the baseline."""
    path, sql, schema = cast(SqliteSource, read.source).path, read.sql, read.schema
    found = [
        read.baseline("sqlite3 + pa.array"),
        read.case("adbc_driver_sqlite", lambda: read_adbc(path, sql, schema)),
        read.case("connectorx", lambda: read_connectorx(path, sql, schema)),
    ]
    queries = read.id_range_queries(CX_PARTITIONS)
    if queries:
        found.append(
            read.case(
                "connectorx, queries on id ranges",
                lambda: read_connectorx_queries(path, queries, schema),
                streams=CX_PARTITIONS,
            )
        )
    return found
