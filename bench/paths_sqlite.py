"""SQLite into Arrow, one function per driver path, each returning Sluice's schema.

SQLite stores ``placed_at`` as ISO text; Sluice reads it as ``timestamp_ntz``, so a
driver that hands back strings pays for the cast to timestamp inside the timing.
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa

from bench.cases import Case, Shape, read_sluice, sluice_task, to_schema

#: connectorx's partitioned mode: one range of ``id`` per core of the benchmark machine
CX_PARTITIONS = 2


def read_adbc(path: str, sql: str, schema: pa.Schema) -> pa.Table:
    """ADBC SQLite driver (C, types inferred from the first rows of each batch)."""
    import adbc_driver_sqlite.dbapi as adbc

    with adbc.connect(path) as connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return to_schema(cursor.fetch_record_batch().read_all(), schema)


def read_connectorx(path: str, sql: str, schema: pa.Schema, partitions: int = 1) -> pa.Table:
    """connectorx (Rust, rusqlite); with ``partitions`` > 1 it splits the query on ``id``."""
    import connectorx as cx

    url = "sqlite://" + path
    if partitions > 1:
        return to_schema(cx.read_sql(url, sql, return_type="arrow", partition_on="id", partition_num=partitions), schema)
    return to_schema(cx.read_sql(url, sql, return_type="arrow"), schema)


def read_connectorx_queries(path: str, queries: list[str], schema: pa.Schema) -> pa.Table:
    """connectorx reading several queries in parallel (for results without ``id``)."""
    import connectorx as cx

    return to_schema(cx.read_sql("sqlite://" + path, queries, return_type="arrow"), schema)


def cases(path: str, shape: Shape, rows: int) -> list[Case]:
    """Every SQLite path for ``shape``, the Sluice reader (sqlite3 + pyarrow) first."""
    source, spec, task = sluice_task("lite", "sqlite:///" + path, None, shape)
    sql, schema = task.request, task.schema
    scenario = "sqlite-raw"

    def case(name: str, run: Callable[[], pa.Table], note: str = "", baseline: bool = False, streams: int = 1) -> Case:
        return Case(scenario, shape.key, name, run, baseline=baseline, note=note, streams=streams)

    if "id" in shape.columns:
        partitioned = case("connectorx, partition_on=id", lambda: read_connectorx(path, sql, schema, CX_PARTITIONS),
                           streams=CX_PARTITIONS)
    else:  # connectorx can only partition on a column of the result: split the query by hand
        queries = [spec.query(source, f"id > {rows * i // CX_PARTITIONS} AND id <= {rows * (i + 1) // CX_PARTITIONS}")
                   for i in range(CX_PARTITIONS)]
        partitioned = case("connectorx, queries on id ranges", lambda: read_connectorx_queries(path, queries, schema),
                           note="partition_on needs the column in the result; the query list form splits on id instead",
                           streams=CX_PARTITIONS)
    return [
        case(f"sluice {type(source).__name__}.read (sqlite3 + pa.array)", lambda: read_sluice(source, task), baseline=True),
        case("adbc_driver_sqlite", lambda: read_adbc(path, sql, schema)),
        case("connectorx", lambda: read_connectorx(path, sql, schema)),
        partitioned,
    ]
