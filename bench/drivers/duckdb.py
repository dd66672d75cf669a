"""DuckDB into Arrow: Sluice's reader against DuckDB's own Arrow export of the same SQL.

Sluice streams ``to_arrow_reader`` batches from a read-only connection with a timeout
timer; the raw paths open the same file read-only and export the whole result at once
(``to_arrow_table``), or in parallel over ``id`` ranges from two cursors.
"""

from __future__ import annotations

import threading
from typing import cast

import pyarrow as pa

from bench.cases import Case, SluiceRead, to_schema
from sluice.sources.duckdb import DuckdbSource

PARTITIONS = 2


def read_arrow(path: str, sql: str | list[str], schema: pa.Schema) -> pa.Table:
    """DuckDB's ``to_arrow_table``; a list of queries runs on one thread per query."""
    import duckdb

    queries = [sql] if isinstance(sql, str) else sql
    tables: list[pa.Table | None] = [None] * len(queries)
    with duckdb.connect(path, read_only=True) as connection:

        def run(index: int) -> None:
            with connection.cursor() as cursor:
                tables[index] = cursor.sql(queries[index]).to_arrow_table()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(queries))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return to_schema(pa.concat_tables([t for t in tables if t is not None]), schema)


def cases(read: SluiceRead) -> list[Case]:
    """Every DuckDB path for one shape, Sluice's reader first: the baseline."""
    path, sql, schema = cast(DuckdbSource, read.source).path, read.sql, read.schema
    found = [
        read.baseline("to_arrow_reader"),
        read.case("duckdb to_arrow_table", lambda: read_arrow(path, sql, schema)),
    ]
    queries = read.id_range_queries(PARTITIONS)
    if queries:
        found.append(
            read.case("duckdb, 2 cursors on id ranges", lambda: read_arrow(path, queries, schema), streams=PARTITIONS)
        )
    return found
