"""The fixed in-memory tables every target binds against: one per dialect, with the
properties catalogs report (collations, padding, case-insensitivity) and hostile names.

No server is involved: the Flight targets resolve table paths through :func:`resolve` the
way the server resolves its published tables, and every target classifies with the dialect
a SQL source would use.
"""

from __future__ import annotations

from typing import Any

from sluice.dialects.base import Dialect
from sluice.dialects.duckdb import DuckdbDialect
from sluice.dialects.lake import LakeDialect
from sluice.dialects.mysql import MariadbDialect
from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.errors import BindError
from sluice.types import Column, SparkType, TableSchema

#: column names no dialect may let out of their quotes
HOSTILE_NAMES = ('we"ird', "it's", "back`tick", "sp ace", "semi;colon", "dash--x", "back\\slash", "ünï")


def _column(name: str, spark: str, remote: str, **properties: Any) -> Column:
    return Column(name, SparkType(spark), remote, **properties)


def _table(source: str, schema: str | None, text: dict[str, object], integer: str = "int") -> TableSchema:
    """One table per source: every Spark type family, plus text columns under ``text`` properties
    (``integer``: the Spark type the source reads its ``integer`` as; SQLite's is 64-bit)."""
    columns = [
        _column("id", "bigint", "bigint"),
        _column("i", integer, "integer"),
        _column("f", "double", "double"),
        _column("r", "float", "real"),
        _column("d", "decimal(10,2)", "numeric(10,2)"),
        _column("s", "string", "text", **text),
        _column("c", "string", "text", collation="C"),
        _column("dt", "date", "date"),
        _column("ts", "timestamp", "timestamp with time zone"),
        _column("tn", "timestamp_ntz", "timestamp"),
        _column("b", "boolean", "boolean"),
        *(_column(name, "string", "text", **text) for name in HOSTILE_NAMES),
    ]
    return TableSchema(source, schema, "t", tuple(columns))


TABLES: dict[str, TableSchema] = {
    "pg": _table("pg", "public", {"collation": "en-US-x-icu"}),
    "lite": _table("lite", "main", {}, integer="bigint"),
    "my": _table("my", "test", {"collation": "utf8mb4_general_ci", "case_insensitive": True}),
    "duck": _table("duck", "main", {"collation": "NOCASE"}),
    "lake": _table("lake", "db", {}),
}
DIALECTS: dict[str, Dialect] = {
    "pg": PostgresDialect(),
    "lite": SqliteDialect(),
    "my": MariadbDialect(),
    "duck": DuckdbDialect(),
    "lake": LakeDialect(),
}


def resolve(source: str, schema: str | None, name: str) -> TableSchema:
    """The source's table, or the :class:`BindError` a source raises for any other name."""
    table = TABLES[source]
    if name.lower() != table.name or (schema is not None and schema.lower() != (table.schema or "").lower()):
        raise BindError(f"source {source!r}: no table {'.'.join(p for p in (schema, name) if p)!r}")
    return table
