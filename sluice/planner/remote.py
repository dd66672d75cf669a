"""The remote query of a scan: projection, pushed filters, order and limit, in dialect SQL."""

from __future__ import annotations

from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.planner.state import OrderKey
from sluice.types import Kind, TableSchema


def order_by(dialect: Dialect, table: TableSchema, keys: tuple[OrderKey, ...]) -> str | None:
    """``ORDER BY`` with NULL placement spelled out and text under a binary collation."""
    if not keys:
        return None
    parts = []
    for key in keys:
        column = table.column(key.column)
        sql: exp.Expression = exp.column(column.name, quoted=True)
        if column.type.kind is Kind.STRING and dialect.text_rules(column).ordering == "collate_c":
            sql = dialect.binary_collation(sql)
        parts.append(dialect.order_key(dialect.render(sql), key.descending, key.nulls_first))
    return "ORDER BY " + ", ".join(parts)


def build_query(select_list: list[str], table_sql: str, where: list[str], order: str | None, limit: int | None) -> str:
    """Assemble the query; every pushed predicate is parenthesised on its own."""
    sql = f"SELECT {', '.join(select_list)} FROM {table_sql}"
    if where:
        sql += " WHERE " + " AND ".join(f"({w})" for w in where)
    if order:
        sql += f" {order}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql
