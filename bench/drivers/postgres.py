"""PostgreSQL into Arrow, one function per driver path, each returning Sluice's schema.

Each function opens its own connection (connect time is part of every path), runs the
SQL text Sluice pushes for the shape, and casts to the scan's Spark schema, so a driver
that leaves e.g. ``numeric`` as text or ``decimal(38,10)`` pays for the cast here. Sluice's
SQL selects ``numeric`` columns as ``::text`` (the server's ``numeric_out`` is faster than
ADBC's client-side conversion), so every path gets text and casts it to decimal in Arrow.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.csv as pacsv

from bench.cases import Case, SluiceRead, rows_to_batch, to_schema
from bench.data import COLUMNS

FETCH_ROWS = 65_536
#: connectorx's partitioned mode: one range of ``id`` per core of the benchmark machine
CX_PARTITIONS = 2
#: the Python-row paths run 4-5x slower than Sluice: above this size only for selective shapes
NAIVE_MAX_ROWS = 1_000_000


def read_adbc(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """ADBC libpq driver: binary COPY parsed to Arrow in C++; numeric arrives as text."""
    import adbc_driver_postgresql.dbapi as adbc

    with adbc.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return to_schema(cursor.fetch_record_batch().read_all(), schema)


def read_connectorx(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """connectorx, one stream (Rust, binary protocol); numeric arrives as decimal(38,10)."""
    import connectorx as cx

    return to_schema(cx.read_sql(url, sql, return_type="arrow"), schema)


def read_connectorx_queries(url: str, queries: list[str], schema: pa.Schema) -> pa.Table:
    """connectorx reading several queries in parallel (for results without ``id``)."""
    import connectorx as cx

    return to_schema(cx.read_sql(url, queries, return_type="arrow"), schema)


def read_copy_csv(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """psycopg ``COPY ... TO STDOUT (FORMAT csv)``, parsed by pyarrow's multithreaded CSV reader."""
    import psycopg

    with psycopg.connect(url) as connection:
        with connection.cursor().copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
    return pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=schema.names),
        # PostgreSQL's CSV writes NULL unquoted and the empty string as "": keep them apart
        convert_options=pacsv.ConvertOptions(
            column_types=schema, strings_can_be_null=True, quoted_strings_can_be_null=False
        ),
    )


def read_copy_binary(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """psycopg ``COPY ... (FORMAT binary)`` decoded by psycopg's C loaders into Python rows."""
    import psycopg

    # Sluice's SQL selects numeric columns as text (see the module docstring)
    types = [
        "text" if pa.types.is_decimal(f.type) else next(c.pg_typname for c in COLUMNS if c.name == f.name)
        for f in schema
    ]
    batches = []
    with psycopg.connect(url) as connection:
        with connection.cursor().copy(f"COPY ({sql}) TO STDOUT (FORMAT binary)") as copy:
            copy.set_types(types)
            rows = []
            for row in copy.rows():
                rows.append(row)
                if len(rows) == FETCH_ROWS:
                    batches.append(rows_to_batch(rows, schema))
                    rows = []
            if rows:
                batches.append(rows_to_batch(rows, schema))
    return pa.Table.from_batches(batches, schema=schema)


def read_psycopg(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """The naive baseline: a plain psycopg cursor, ``fetchmany``, then ``pa.array`` per column."""
    import psycopg

    batches = []
    with psycopg.connect(url) as connection:
        cursor = connection.execute(sql)
        while rows := cursor.fetchmany(FETCH_ROWS):
            batches.append(rows_to_batch(rows, schema))
    return pa.Table.from_batches(batches, schema=schema)


def cases(read: SluiceRead) -> list[Case]:
    """Every PostgreSQL path for one shape, Sluice's reader (ADBC) first: the baseline."""
    url, sql, schema = read.url, read.sql, read.schema
    found = [
        read.baseline("ADBC"),
        read.case("adbc_driver_postgresql", lambda: read_adbc(url, sql, schema)),
        read.case("connectorx", lambda: read_connectorx(url, sql, schema)),
    ]
    queries = read.id_range_queries(CX_PARTITIONS)
    if queries:
        found.append(
            read.case(
                "connectorx, queries on id ranges",
                lambda: read_connectorx_queries(url, queries, schema),
                streams=CX_PARTITIONS,
            )
        )
    found.append(read.case("psycopg COPY csv + pyarrow.csv", lambda: read_copy_csv(url, sql, schema)))
    if read.rows <= NAIVE_MAX_ROWS or read.shape.where or read.shape.limit:
        found += [
            read.case("psycopg COPY binary (rows) + pa.array", lambda: read_copy_binary(url, sql, schema)),
            read.case("psycopg cursor + pa.array (naive)", lambda: read_psycopg(url, sql, schema)),
        ]
    return found
