"""The check that a pushed scan skips no value the reference read would refuse.

Without pushdown Spark reads every row of the columns a query uses, and a value Spark's type
cannot hold (PostgreSQL's ``infinity`` or a BC date, an unconstrained ``numeric`` with more
digits than decimal(38,10)) fails the read. A pushed filter, aggregate or top-N reads fewer
rows, or none of a column it only filters on or counts, so it would succeed on the same table.
Such columns are possible in almost every PostgreSQL table and present in almost none, so
instead of leaving their predicates to Spark (or widening each to an INEXACT superset, which
costs limits, aggregates and the column's index) the source runs one query before it reads:
the first row holding such a value in one of the scan's columns, read through the scan's own
reader, which refuses it with the message the reference read gives. The check is a range test
on each column, which an index on it answers by two probes.

A pushed join checks both of its tables: the reference read reads every row of each side's
columns, and the joined query returns only the rows that meet (and those its side filters keep).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sluice.types import Column, TableSchema

if TYPE_CHECKING:
    from sluice.scan.spec import ScanSpec


@dataclass(frozen=True)
class Check:
    """The rows of one table a pushed scan may skip whose values its reader refuses, and why they are checked."""

    table: TableSchema
    columns: tuple[str, ...]
    #: true on a row holding a value of one of ``columns`` the reader refuses
    condition: exp.Expression
    reason: str


def columns_used(spec: ScanSpec) -> tuple[str, ...]:
    """The table's columns the reference read of ``spec``'s query reads: those read, those its
    pushed conjuncts test, those its pushed ORDER BY sorts by and those its pushed aggregates
    compute from."""
    trees = [conjunct.sql_tree() for conjunct in spec.where]
    if spec.aggregate is not None:  # its columns are the table's (Spark prunes no column of an aggregated scan)
        trees += [o.argument.sql_tree() for o in spec.aggregate.outputs if o.argument is not None]
    names = [] if spec.aggregate is not None else list(spec.columns)
    names += [key.column for key in spec.order]
    return _found(spec.table, names, trees)


def _found(table: TableSchema, names: list[str], trees: list[exp.Expression]) -> tuple[str, ...]:
    """``names`` and the columns ``trees`` refer to, as ``table`` spells them, once each."""
    names = names + [column.name for tree in trees for column in tree.find_all(exp.Column)]
    found = (table.find(name) for name in names)
    return tuple(dict.fromkeys(column.name for column in found if column is not None))


def scan_checks(spec: ScanSpec, refused: Callable[[Column], exp.Expression | None]) -> tuple[Check, ...]:
    """The checks for ``spec``, one per table it reads that needs one (none: nothing to check).
    ``refused`` is the source's condition on a column's values its reader refuses (None: it
    reads every value the column can hold).

    Needed only when the pushed query may skip rows the reference read reads: a pushed filter,
    aggregate, ORDER BY (Spark sorts every row) or join (it returns the rows that meet). A plain
    read or LIMIT reads what it returns."""
    if spec.join is not None:
        join = spec.join
        sides = (
            (join.left, join.left_columns, join.left_where),
            (join.right, join.right_columns, join.right_where),
        )
        found = (
            _table_check(table, _found(table, list(names), [p.sql_tree() for p in where]), refused)
            for table, names, where in sides
        )
        return tuple(check for check in found if check is not None)
    if not (spec.where or spec.aggregate is not None or spec.order):
        return ()
    check = _table_check(spec.table, columns_used(spec), refused)
    return () if check is None else (check,)


def condition_check(
    table: TableSchema, trees: list[exp.Expression], refused: Callable[[Column], exp.Expression | None]
) -> Check | None:
    """The check for a condition on ``table`` run by the source itself (a pushed ``DELETE``): a row
    where a column the condition tests holds a value the reader refuses has no value in Spark, so
    Spark's condition has no truth value there (None: nothing to check)."""
    return _table_check(table, _found(table, [], trees), refused)


def _table_check(
    table: TableSchema, used: tuple[str, ...], refused: Callable[[Column], exp.Expression | None]
) -> Check | None:
    guards = [(name, guard) for name in used if (guard := refused(table.column(name))) is not None]
    if not guards:
        return None
    condition: exp.Expression = exp.Paren(this=guards[0][1])
    for _, guard in guards[1:]:
        condition = exp.Or(this=condition, expression=exp.Paren(this=guard))
    names = tuple(name for name, _ in guards)
    reason = (
        f"a row holding a value Spark cannot read in {table.qualified_name} ({', '.join(names)}) fails the "
        "query, as it fails the reference read; the pushed query could skip it"
    )
    return Check(table, names, condition, reason)


def check_schema(check: Check) -> pa.Schema:
    """The Arrow schema the check's row is read with: the checked columns as the scan reads them."""
    return pa.schema([pa.field(c.name, c.type.arrow()) for c in map(check.table.column, check.columns)])
