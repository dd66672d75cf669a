"""Bind a Spark SQL query to attached sources and qualify every column.

Each table reference ``source.schema.table`` (or ``source.table``) becomes a scan: a
placeholder table named by the scan id, which Spark will resolve to a temp view. Two
trees come out: the *reference* tree (only table names replaced; what Spark runs when
pushdown is off, and what decides result column names) and the *qualified* tree the
optimizer works on, where every column names its table by a query-unique alias.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from sluice.errors import BindError, QuerySyntaxError
from sluice.planner.state import ScanState
from sluice.types import TableSchema

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
Resolver = Callable[[str, str | None, str], TableSchema]


@dataclass(frozen=True)
class BoundQuery:
    reference: exp.Expression
    qualified: exp.Expression
    scans: tuple[ScanState, ...]


def parse(sql: str) -> exp.Expression:
    try:
        statements = [s for s in sqlglot.parse(sql, read="spark") if s is not None]
    except ParseError as error:
        message = _ANSI.sub("", str(error))  # sqlglot underlines the culprit with terminal codes
        raise QuerySyntaxError(f"cannot parse the query: {message}") from None
    if len(statements) != 1:
        raise QuerySyntaxError(f"expected one SQL query, found {len(statements)} statements")
    if not isinstance(statements[0], exp.Query):
        raise QuerySyntaxError(f"only queries are supported (SELECT ...), not {statements[0].key.upper()}")
    return statements[0].transform(_signed_typed_literal)


def _signed_typed_literal(node: exp.Expression) -> exp.Expression:
    """``-9223372036854775808L`` is one literal in Spark's grammar; sqlglot reads it as
    ``-(9223372036854775808L)``, which overflows when Spark runs the regenerated SQL."""
    inner = node.this if isinstance(node, exp.Neg) else None
    if isinstance(inner, (exp.Cast, exp.TryCast)) and isinstance(inner.this, exp.Literal) and not inner.this.is_string \
            and inner.to.this in exp.DataType.INTEGER_TYPES:
        return exp.Cast(this=exp.Literal.number("-" + inner.this.name), to=inner.to.copy())
    return node


def bind(sql: str, resolve: Resolver, sources: list[str], prefix: str) -> BoundQuery:
    """Resolve every table of ``sql``; ``resolve(source, schema, table)`` describes one."""
    reference = parse(sql)
    ctes = {cte.alias_or_name.lower() for cte in reference.find_all(exp.CTE)}
    scans: list[ScanState] = []
    for table in list(reference.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            continue  # table-valued function: Spark's business
        if not table.args.get("db") and table.name.lower() in ctes:
            continue
        source, schema = (table.catalog, table.db) if table.catalog else (table.db, None)
        if not source:
            raise BindError(f"table {table.name!r}: name it source.table or source.schema.table (attached sources: {', '.join(sources) or 'none'})")
        if source.lower() not in sources:
            raise BindError(f"unknown source {source!r} in {table.sql(dialect='spark')} (attached sources: {', '.join(sources) or 'none'})")
        schema_ = resolve(source.lower(), schema or None, table.name)
        scan_id = f"{prefix}_s{len(scans)}"
        alias = table.alias or table.name
        table.replace(exp.Table(this=exp.to_identifier(scan_id), alias=exp.TableAlias(this=exp.to_identifier(alias))))
        scans.append(ScanState(scan_id=scan_id, alias=alias, source=source.lower(), table=schema_))
    qualified, scans = _qualify(reference.copy(), scans)
    return BoundQuery(reference, qualified, tuple(scans))


def _qualify(tree: exp.Expression, scans: list[ScanState]) -> tuple[exp.Expression, list[ScanState]]:
    mapping = {s.scan_id: {c.name: c.type.name for c in s.table.columns} for s in scans}
    try:
        tree = qualify(tree, dialect="spark", schema=MappingSchema(mapping, dialect="spark"), quote_identifiers=False,
                       identify=False, canonicalize_table_aliases=True)
    except OptimizeError as error:
        columns = "; ".join(f"{s.table.qualified_name}: {', '.join(c.name for c in s.table.columns)}" for s in scans)
        raise BindError(f"{error} (columns: {columns})") from None
    # Canonical aliases (_0, _1, ...) are unique; give scans readable unique ones.
    renames: dict[str, str] = {}
    by_id = {s.scan_id: s for s in scans}
    bound = []
    for table in tree.find_all(exp.Table):
        scan = by_id.get(table.name)
        if scan is not None:
            alias = f"{scan.alias}__{scan.scan_id.rsplit('_', 1)[-1]}".lower()
            renames[table.alias_or_name] = alias
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
            bound.append(ScanState(scan.scan_id, alias, scan.source, scan.table))
    for column in tree.find_all(exp.Column):
        if column.table in renames:
            column.set("table", exp.to_identifier(renames[column.table]))
    return tree, sorted(bound, key=lambda s: int(s.scan_id.rsplit("_s", 1)[-1]))
