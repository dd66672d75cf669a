"""The remote query of a scan: projection, pushed filters, order and limit, in dialect SQL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.types import Kind, SparkType, TableSchema


class Selects(Protocol):
    """What writing a select list asks of the source that reads it: its dialect, and how it
    selects a computed value (an aggregate). A protocol, not :class:`~sluice.sources.base.Source`,
    so this package stays below the sources that import it."""

    @property
    def dialect(self) -> Dialect: ...

    def select_value(self, sql: str, spark_type: SparkType) -> str: ...


class SqlReader(Selects, Protocol):
    """A source that reads a scan with one SQL query (a :class:`~sluice.sources.base.SqlSource`):
    it also says how it selects a column (a cast for types Arrow cannot carry as-is)."""

    def select_expression(self, column_name: str, table: TableSchema) -> str: ...


@dataclass(frozen=True)
class OrderKey:
    """One key of a pushed ORDER BY, NULL placement explicit (as Spark's sort order states it)."""

    column: str
    descending: bool
    nulls_first: bool


#: pushed conjuncts per flat AND chain (see :func:`_conjunction`)
AND_CHUNK = 256


def order_by(dialect: Dialect, table: TableSchema, keys: tuple[OrderKey, ...], qualify: bool = True) -> str | None:
    """``ORDER BY`` with NULL placement spelled out and text under a binary collation.

    With ``qualify`` each key names its table (``"orders"."amount"``): ORDER BY binds a bare
    name to a select-list output of that name first (PostgreSQL, MySQL, SQLite and DuckDB
    alike), and a reader selects some columns through a cast (PostgreSQL's ``"amount"::text``
    is an output named ``amount``), so a bare key would sort the cast's text, not the column.
    Only a query that selects from another relation (the lake's DuckDB reader, whose select
    list is the bare columns) renders them bare.
    """
    if not keys:
        return None
    parts = []
    for key in keys:
        column = table.column(key.column)
        sql: exp.Expression = exp.column(column.name, table=table.name if qualify else None, quoted=True)
        if column.type.kind is Kind.STRING and dialect.text_rules(column).ordering == "collate_c":
            sql = dialect.binary_collation(sql)
        parts.append(dialect.order_key(dialect.render(sql), key.descending, key.nulls_first))
    return "ORDER BY " + ", ".join(parts)


def build_query(
    select_list: list[str],
    table_sql: str,
    where: list[str],
    order: str | None,
    limit: int | None,
    group_by: tuple[str, ...] = (),
) -> str:
    """Assemble the query; every pushed predicate is parenthesised on its own."""
    sql = f"SELECT {', '.join(select_list)} FROM {table_sql}"
    if where:
        sql += " WHERE " + _conjunction([f"({w})" for w in where])
    if group_by:
        sql += " GROUP BY " + ", ".join(group_by)
    if order:
        sql += f" {order}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql


def _conjunction(parts: list[str]) -> str:
    """``a AND b AND ...``; past :data:`AND_CHUNK` parts, grouped in parenthesised chunks:
    SQLite nests a flat AND chain one level per AND and refuses 1,000 levels, while each
    parenthesis costs its parser a little stack (it overflows at about 100), so chunks
    stay flat and few."""
    while len(parts) > AND_CHUNK:
        parts = [f"({' AND '.join(parts[i : i + AND_CHUNK])})" for i in range(0, len(parts), AND_CHUNK)]
    return " AND ".join(parts)
