"""PostgreSQL into Arrow, one function per driver path, each returning Sluice's schema.

Each function opens its own connection (connect time is part of every path), runs the
SQL text Sluice pushes for the shape, and casts to the scan's Spark schema, so a driver
that leaves e.g. ``numeric`` as text or ``decimal(38,10)`` pays for the cast here.
"""

from __future__ import annotations

import io
from typing import Callable

import pyarrow as pa
import pyarrow.csv as pacsv

from bench.cases import Case, Shape, read_sluice, rows_to_batch, sluice_task, to_schema
from bench.data import COLUMNS, PG_SCHEMA

FETCH_ROWS = 65_536
#: connectorx's partitioned mode: one range of ``id`` per core of the benchmark machine
CX_PARTITIONS = 2


def read_adbc(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """ADBC libpq driver: binary COPY parsed to Arrow in C++; numeric arrives as text."""
    import adbc_driver_postgresql.dbapi as adbc

    with adbc.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return to_schema(cursor.fetch_record_batch().read_all(), schema)


def numeric_as_text(sql: str, schema: pa.Schema) -> str:
    """``sql`` with every decimal column selected as ``::text`` (same values, cast in Arrow).

    ADBC turns binary ``numeric`` into text on the client, slowly; PostgreSQL's own
    ``numeric_out`` followed by Arrow's string-to-decimal cast gives the same decimals
    faster. Only the select list (before the first ``FROM``) is rewritten.
    """
    select, keyword, rest = sql.partition(" FROM ")
    for field in schema:
        if pa.types.is_decimal(field.type):
            quoted = f'"{field.name}"'
            select = select.replace(quoted, f"{quoted}::text AS {quoted}")
    return select + keyword + rest


def read_connectorx(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """connectorx, one stream (Rust, binary protocol); numeric arrives as decimal(38,10)."""
    import connectorx as cx

    return to_schema(cx.read_sql(url, sql, return_type="arrow"), schema)


def read_connectorx_partitioned(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """connectorx splitting the query on ``id`` (min/max query first, then parallel reads)."""
    import connectorx as cx

    table = cx.read_sql(url, sql, return_type="arrow", partition_on="id", partition_num=CX_PARTITIONS)
    return to_schema(table, schema)


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
        convert_options=pacsv.ConvertOptions(column_types=schema, strings_can_be_null=True, quoted_strings_can_be_null=False),
    )


def read_copy_binary(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """psycopg ``COPY ... (FORMAT binary)`` decoded by psycopg's C loaders into Python rows."""
    import psycopg

    types = [next(c.pg_typname for c in COLUMNS if c.name == name) for name in schema.names]
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


def cases(url: str, shape: Shape, rows: int) -> list[Case]:
    """Every PostgreSQL path for ``shape``, the Sluice reader first (the baseline)."""
    source, spec, task = sluice_task("pg", url, PG_SCHEMA, shape)
    sql, schema = task.request, task.schema
    text_sql = numeric_as_text(sql, schema)
    scenario = "postgresql-raw"

    def case(path: str, run: Callable[[], pa.Table], note: str = "", baseline: bool = False, streams: int = 1) -> Case:
        return Case(scenario, shape.key, path, run, baseline=baseline, note=note, streams=streams)

    if "id" in shape.columns:
        partitioned = case("connectorx, partition_on=id", lambda: read_connectorx_partitioned(url, sql, schema),
                           streams=CX_PARTITIONS)
    else:  # connectorx can only partition on a column of the result: split the query by hand
        queries = [spec.query(source, f"id > {rows * i // CX_PARTITIONS} AND id <= {rows * (i + 1) // CX_PARTITIONS}")
                   for i in range(CX_PARTITIONS)]
        partitioned = case("connectorx, queries on id ranges", lambda: read_connectorx_queries(url, queries, schema),
                           note="partition_on needs the column in the result; the query list form splits on id instead",
                           streams=CX_PARTITIONS)
    return [
        case(f"sluice {type(source).__name__}.read (ADBC)", lambda: read_sluice(source, task), baseline=True),
        case("adbc_driver_postgresql", lambda: read_adbc(url, sql, schema)),
        case("adbc_driver_postgresql, numeric as ::text", lambda: read_adbc(url, text_sql, schema),
             note="the select list reads numeric columns as text; Arrow casts them back to decimal"),
        case("connectorx", lambda: read_connectorx(url, sql, schema)),
        partitioned,
        case("psycopg COPY csv + pyarrow.csv", lambda: read_copy_csv(url, sql, schema)),
        case("psycopg COPY binary (rows) + pa.array", lambda: read_copy_binary(url, sql, schema)),
        case("psycopg cursor + pa.array (naive)", lambda: read_psycopg(url, sql, schema)),
    ]
