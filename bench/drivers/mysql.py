"""MariaDB into Arrow, one function per driver path, each returning Sluice's schema.

Sluice reads MariaDB through connectorx with its read-only session set-up and decimals
selected as text (connectorx would read them as ``decimal(38,10)``); the raw paths run the
same SQL text, so the text-to-decimal cast is paid by every path alike.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pyarrow as pa

from bench.cases import Case, SluiceRead, rows_to_batch, to_schema

FETCH_ROWS = 65_536
#: connectorx's query-list mode: one range of ``id`` per core of the benchmark machine
CX_PARTITIONS = 2
#: PyMySQL decodes every value in Python: above this size only for selective shapes
NAIVE_MAX_ROWS = 1_000_000


def _cx_url(url: str) -> str:
    parts = urlsplit(url)
    return f"mysql://{parts.username or 'root'}{':' + parts.password if parts.password else ''}@{parts.hostname}:{parts.port or 3306}/"


def read_connectorx(url: str, sql: str | list[str], schema: pa.Schema) -> pa.Table:
    """connectorx (Rust, MySQL binary protocol); a list of queries is read in parallel."""
    import connectorx as cx

    return to_schema(cx.read_sql(_cx_url(url), sql, return_type="arrow"), schema)


def read_pymysql(url: str, sql: str, schema: pa.Schema) -> pa.Table:
    """The naive baseline: PyMySQL's unbuffered cursor, ``fetchmany``, then ``pa.array``."""
    import pymysql
    import pymysql.cursors

    parts = urlsplit(url)
    connection = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or ""),
        cursorclass=pymysql.cursors.SSCursor,
    )
    batches = []
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET time_zone = '+00:00'")
            cursor.execute(sql)
            while rows := cursor.fetchmany(FETCH_ROWS):
                batches.append(rows_to_batch(rows, schema))
    finally:
        connection.close()
    return pa.Table.from_batches(batches, schema=schema)


def cases(read: SluiceRead) -> list[Case]:
    """Every MariaDB path for one shape, Sluice's reader (connectorx stream) first: the baseline."""
    url, sql, schema = read.url, read.sql, read.schema
    found = [
        read.baseline("connectorx arrow_stream"),
        read.case("connectorx", lambda: read_connectorx(url, sql, schema)),
    ]
    queries = read.id_range_queries(CX_PARTITIONS)
    if queries:
        found.append(
            read.case(
                "connectorx, queries on id ranges", lambda: read_connectorx(url, queries, schema), streams=CX_PARTITIONS
            )
        )
    if read.rows <= NAIVE_MAX_ROWS or read.shape.where or read.shape.limit:
        found.append(read.case("PyMySQL SSCursor + pa.array (naive)", lambda: read_pymysql(url, sql, schema)))
    return found
