"""What every accepted input must give (a :class:`Violation` otherwise): remote SQL that is
UTF-8, holds no NUL where the engine refuses it, stays within the pushed-text budget, and
runs in the real engine (SQLite, DuckDB and the lake's DuckDB, in process, over empty
copies of the fuzz tables) or parses back as one SELECT (PostgreSQL, MariaDB, which need a
server); the lake's pruning re-reads each pushed conjunct and masking scans the query, as
every plan does."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from fuzz.parsers.tables import DIALECTS, TABLES
from sluice.lake.expressions import conjunct_filter
from sluice.masking import mask_text
from sluice.pushdown.translator import MAX_PUSHED_CHARS
from sluice.scan.query import build_query
from sluice.types import TableSchema


class Violation(Exception):
    """An accepted input produced something no input may produce (see the module docstring)."""


def check_remote(source: str, table: TableSchema, pushed: list[str]) -> str:
    """The remote query a SQL source would send for ``pushed``; raise :class:`Violation`
    if it is not something the engine receives as one SELECT."""
    dialect = DIALECTS[source]
    select = [dialect.render_identifier(c.name) for c in table.columns]
    query = build_query(select, dialect.quote_table(table.schema, table.name), pushed, None, None)
    mask_text(query)  # what EXPLAIN and every plan show of it
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        raise Violation(f"{source}: the remote query is not UTF-8 (a lone surrogate)") from None
    if dialect.refuses_nul and "\x00" in query:
        raise Violation(f"{source}: the remote query holds NUL, which {dialect.name} refuses")
    if len(query) > MAX_PUSHED_CHARS + 20_000:
        raise Violation(f"{source}: the remote query is {len(query):,} characters")
    if source == "lake":  # the lake reader re-reads each pushed conjunct to prune files
        for predicate in pushed:
            conjunct_filter(predicate, _iceberg_schema())
    engine = _engine(source)
    if engine is not None:  # the real engine, in process, over an empty copy of the table
        try:
            engine.execute(query).fetchall()
        except Exception as error:  # noqa: BLE001 - any engine error is the finding
            raise Violation(f"{source}: the remote query fails in {dialect.name}: {str(error)[:300]}") from None
        return query
    try:
        statements = sqlglot.parse(query, read=dialect.sqlglot)
    except RecursionError:
        return query  # deeper than sqlglot re-reads; the server's own parser is not recursive in Python
    except sqlglot.errors.SqlglotError as error:
        raise Violation(f"{source}: the remote query does not parse back: {str(error)[:300]}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        raise Violation(f"{source}: the remote query parses back as {len(statements)} statement(s): {query[:300]}")
    return query


@lru_cache(maxsize=1)
def _iceberg_schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import (
        BooleanType,
        DateType,
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        NestedField,
        StringType,
        TimestampType,
        TimestamptzType,
    )

    types = {
        "bigint": LongType(),
        "int": IntegerType(),
        "double": DoubleType(),
        "float": FloatType(),
        "decimal(10,2)": DecimalType(10, 2),
        "string": StringType(),
        "date": DateType(),
        "timestamp": TimestamptzType(),
        "timestamp_ntz": TimestampType(),
        "boolean": BooleanType(),
    }
    return Schema(*(NestedField(i + 1, c.name, types[c.type.name]) for i, c in enumerate(TABLES["lake"].columns)))


_SQLITE_TYPES = {"bigint": "INTEGER", "int": "INTEGER", "boolean": "INTEGER", "double": "REAL", "float": "REAL"}


@cache
def _engine(source: str) -> Any:
    """An in-memory SQLite or DuckDB holding an empty ``t`` like the source's table; None for
    the engines that need a server (PostgreSQL, MariaDB: their SQL is parsed back instead)."""
    table = TABLES[source]
    dialect = DIALECTS[source]
    if source == "lite":
        import sqlite3

        connection = sqlite3.connect(":memory:", check_same_thread=False)
        columns = ", ".join(
            f"{dialect.render_identifier(c.name)} {_SQLITE_TYPES.get(c.type.name, 'TEXT')}" for c in table.columns
        )
    elif source in ("duck", "lake"):
        import duckdb

        connection = duckdb.connect(":memory:")
        if table.schema != "main":
            connection.execute(f"CREATE SCHEMA {dialect.render_identifier(table.schema or 'main')}")
        columns = ", ".join(f"{dialect.render_identifier(c.name)} {_duckdb_type(c)}" for c in table.columns)
    else:
        return None
    connection.execute(f"CREATE TABLE {dialect.quote_table(table.schema, table.name)} ({columns})")
    return connection


def _duckdb_type(column: Any) -> str:
    spark = DIALECTS["duck"].type_names.get(column.type.name) or column.remote_type.upper()
    collation = column.collation if column.type.name == "string" and column.collation not in (None, "C") else None
    return f"{spark} COLLATE {collation}" if collation else spark
