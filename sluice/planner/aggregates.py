"""Aggregate pushdown: which of Spark's aggregates a source answers, with Spark's exact answer.

Spark offers a scan its ``GROUP BY`` and aggregate functions (``SupportsPushDownAggregates``)
only when every filter was pushed EXACT. Sluice answers with *complete* pushdown or none: the
source runs ``SELECT keys, aggregates ... GROUP BY keys`` as one query and Spark uses its rows
as the final answer. Partial pushdown (per partition, Spark merging) is never offered, because
Spark casts each partial ``SUM`` back to the *input* type before merging (a partial sum of
``int`` values past 2**31 would raise where Spark's own sum does not).

Each grouping key and each aggregate gets a verdict and a reason, like a filter. The rules:

* A grouping key (or ``COUNT(DISTINCT x)``, ``SUM(DISTINCT x)``) must compare equal in the
  source exactly when Spark's values are equal: text under a collation that neither folds case
  nor ignores trailing spaces (MySQL's are grouped under its binary NO PAD collation), no
  floating point (Spark puts -0.0 with 0.0 and every NaN in one group and returns 0.0/NaN for it).
* ``MIN``/``MAX`` must order like Spark: the same rule as a pushed ``ORDER BY``.
* ``SUM`` of integers and decimals only, and only under ANSI mode: the source sums exactly
  (PostgreSQL ``numeric``, MySQL ``DECIMAL``, DuckDB ``HUGEINT``), Sluice reads the sum as
  ``decimal(38,s)`` and Spark casts it to its result type (``bigint``, ``decimal(p+10,s)``),
  raising on overflow as its own ``SUM`` does. Floating-point sums depend on the order of
  additions (and SQLite and DuckDB compensate rounding errors), so they stay with Spark.
* ``AVG`` is never pushed as such: Spark then rewrites it into ``SUM``/``COUNT`` of the same
  argument, asks again, and divides itself. The rewritten ``SUM`` is a plain ``SUM`` (not over a
  cast to double), so the scan tells it apart by the ``AVG`` it was offered first (the offer's
  ``averaged`` list). Spark's own ``AVG`` of integers adds *doubles*: with ``9007199254740993``
  and ``-9007199254740992`` it answers 0.0 where an exact sum gives 0.5, and it never overflows
  where a ``bigint`` sum raises. Such a ``SUM`` is pushed only where the exact sum provably
  equals the double one (every value and partial sum an integer within 2**53): decimals (Spark's
  decimal ``AVG`` sums exactly too), ``tinyint`` and ``smallint`` (a group would need 2**38 rows
  of extreme values to leave that range); ``int`` and ``bigint`` averages stay with Spark.
* Every column read must be read by the source as Spark reads it (not as text, no stored value
  the reader would refuse, SQLite only in STRICT tables).
* A key or argument that is an expression (``GROUP BY i % 10``, ``sum(a + b)``) is pushed where
  the filter classifier translates it exactly for the source (:meth:`Translator.value`: the
  same rules as in a ``WHERE``, overflow raising where Spark's does), under ANSI only, and then
  follows the rules above for its Spark type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.pushdown import nesting
from sluice.pushdown.constants import NotRepresentable
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import TextRules, Unsupported, paren
from sluice.pushdown.translator import Translator
from sluice.scan import v2
from sluice.scan.aggregation import (
    AVERAGES,
    AVG_REASON,
    CALLS,
    FILTERED,
    Aggregation,
    Decision,
    Output,
    function_label,
    is_averaged_sum,
    key_label,
)
from sluice.sources.base import Source
from sluice.types import Column, Kind, SparkType, TableSchema

#: kinds whose MIN/MAX the source may compute (booleans have no MIN in PostgreSQL)
_ORDERED = (Kind.INTEGRAL, Kind.DECIMAL, Kind.FLOAT, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ, Kind.STRING)
#: kinds whose equal values the source groups exactly as Spark does (floats: see the module doc)
_GROUPABLE = (Kind.INTEGRAL, Kind.DECIMAL, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ, Kind.STRING, Kind.BOOLEAN)
_MAX_PRECISION = 38
#: the widest integer whose AVG-derived SUM is pushed: 2**15 per value leaves 2**38 rows a group
#: before a partial sum can leave the integers a double holds exactly (2**53); an int would allow
#: only 2**22 rows, which no table's size bounds
_AVERAGED_BITS = 16


class _Refused(Exception):
    """One item cannot be pushed; the message is the reason."""


def answer(
    source: Source,
    table: TableSchema,
    offered: dict[str, Any],
    filters: list[Verdict],
    ansi: bool,
    session_zone: str = "UTC",
) -> Decision:
    """The decision on Spark's offered aggregation for ``source``: the source's own answer where it
    gives one (:meth:`Source.decide_aggregation`: a Flight server decides for itself), else
    :func:`decide`."""
    own = source.decide_aggregation(table, offered, filters, ansi, session_zone)
    return own if own is not None else decide(source, table, offered, filters, ansi, session_zone)


def decide(
    source: Any,
    table: TableSchema,
    offered: dict[str, Any],
    filters: list[Verdict],
    ansi: bool,
    session_zone: str = "UTC",
) -> Decision:
    """Classify Spark's offered aggregation (``{"group_by": [expr], "aggregates": [fn]}``) for ``source``."""
    builder = _Builder(source, table, ansi, session_zone, offered.get("averaged") or [])
    verdicts = [builder.group_key(expression) for expression in offered.get("group_by", [])]
    verdicts += [builder.aggregate(function) for function in offered.get("aggregates", [])]
    note = None
    if not getattr(source, "aggregates", False):
        note = f"{type(source).__name__} does not run aggregate queries"
    elif any(v.level is not Level.EXACT for v in filters):
        note = FILTERED
    elif builder.averages:
        note = AVERAGES
    complete = note is None and all(v.level is Level.EXACT for v in verdicts)
    aggregation = Aggregation(tuple(builder.outputs)) if complete else None
    return Decision(complete, tuple(verdicts), aggregation, note)


@dataclass(frozen=True)
class _Operand:
    """A grouping key or an aggregate's argument as the source computes it: a column, or an
    expression the classifier translates exactly (:meth:`Translator.value`)."""

    sql: exp.Expression
    type: SparkType
    text: TextRules | None
    shown: str
    column: Column | None = None

    def describe(self) -> str:
        return self.column.describe() if self.column is not None else f"{self.shown} ({self.type})"


class _Builder:
    def __init__(
        self, source: Any, table: TableSchema, ansi: bool, session_zone: str, averaged: list[dict[str, Any]]
    ) -> None:
        self.source = source
        #: the AVG functions Spark offered before it rewrote them into SUM and COUNT
        self.averaged = averaged
        self.dialect: Dialect = source.dialect
        self.table = table
        self.ansi = ansi
        self.zone = session_zone
        self.outputs: list[Output] = []
        self.averages = False

    # ------------------------------------------------------------ items
    def group_key(self, expression: dict[str, Any]) -> Verdict:
        shown = key_label(expression)
        try:
            operand = self._operand(expression)
            grouped = self._grouped(operand)
        except _Refused as why:
            return Verdict(shown, Level.UNSUPPORTED, str(why))
        self.outputs.append(Output(f"sluice_{len(self.outputs)}", operand.type, argument=Pushed(tree=grouped)))
        reason = _computed(operand, "grouped exactly as Spark groups these values")
        return Verdict(shown, Level.EXACT, reason, f"GROUP BY {self.dialect.render(grouped)}")

    def aggregate(self, function: dict[str, Any]) -> Verdict:
        name = str(function.get("fn", "?"))
        distinct = bool(function.get("distinct"))
        args = function.get("args") or []
        shown = function_label(function)
        try:
            argument, read_type, reason, operand = self._function(name, distinct, args)
        except _Refused as why:
            return Verdict(shown, Level.UNSUPPORTED, str(why))
        column = operand.column.name if operand is not None and operand.column is not None else None
        output = Output(
            f"sluice_{len(self.outputs)}",
            read_type,
            name,
            Pushed(tree=argument) if argument is not None else None,
            distinct,
            column,
        )
        self.outputs.append(output)
        return Verdict(shown, Level.EXACT, reason, self.dialect.render(output.sql_tree()))

    def _function(
        self, name: str, distinct: bool, args: list[Any]
    ) -> tuple[exp.Expression | None, SparkType, str, _Operand | None]:
        """The function's argument as the source computes it, the type it is read as and why it is exact."""
        if name == "COUNT_STAR":
            return None, SparkType("bigint"), "rows counted by the source", None
        if name == "AVG":
            self.averages = True
            raise _Refused(AVG_REASON)
        if name not in CALLS:
            raise _Refused(f"{name} is not pushed: only COUNT, SUM, MIN, MAX (and AVG as SUM/COUNT) are")
        if len(args) != 1:
            raise _Refused(f"{name} over {len(args)} arguments")
        operand = self._operand(args[0])
        value = self._grouped(operand) if distinct else operand.sql
        if name == "COUNT":
            return value, SparkType("bigint"), _computed(operand, "non-NULL values counted by the source"), operand
        if name == "SUM":
            read_type, reason = self._sum(operand)
            if is_averaged_sum({"fn": name, "distinct": distinct, "args": args}, self.averaged):
                reason = f"{self._averaged_sum(operand)}; {reason}"
            return value, read_type, reason, operand
        if operand.type.kind not in _ORDERED:
            raise _Refused(f"{name} of {operand.type}: not pushed")
        ordered = self._ordered(operand, value)
        reason = _computed(operand, f"{self.dialect.name} orders {operand.shown} like Spark")
        return ordered, operand.type, reason, operand

    def _sum(self, operand: _Operand) -> tuple[SparkType, str]:
        kind = operand.type.kind
        if kind not in (Kind.INTEGRAL, Kind.DECIMAL):
            raise _Refused(
                f"SUM of {operand.type}: floating-point sums depend on the order of additions "
                "(and some engines compensate rounding), so Spark sums them itself"
            )
        if not self.ansi:
            raise _Refused(
                "SUM with spark.sql.ansi.enabled=false: Spark wraps or nulls an overflowing sum; "
                "the source's exact sum would not"
            )
        scale = operand.type.precision_scale[1] if kind is Kind.DECIMAL else 0
        read_type = SparkType(f"decimal({_MAX_PRECISION},{scale})")
        reason = _computed(
            operand,
            "summed exactly by the source, read as decimal(38) and cast by Spark to its SUM type (raising on overflow)",
        )
        return read_type, reason

    def _averaged_sum(self, operand: _Operand) -> str:
        """Why the SUM Spark made of an AVG equals that AVG's sum, or :class:`_Refused`: Spark's AVG
        adds each value cast to double, which equals the exact sum only while every value and every
        partial sum is an integer within 2**53 (decimals: Spark's decimal AVG sums exactly)."""
        if operand.type.kind is Kind.DECIMAL:
            return "AVG's sum: Spark's decimal AVG sums exactly too"
        if operand.type.bits > _AVERAGED_BITS:
            raise _Refused(
                f"AVG of {operand.describe()}: Spark's AVG adds the values as doubles, which round past 2**53 "
                "(and never overflow), so the source's exact SUM could differ: Spark averages the rows itself"
            )
        return (
            f"AVG's sum: every partial sum of {operand.type} values stays an integer a double holds exactly "
            f"(within 2**53) below 2**{53 - _AVERAGED_BITS + 1} rows, so Spark's double sum is the exact one"
        )

    # ------------------------------------------------------------ operands
    def _operand(self, expression: Any) -> _Operand:
        """A key or argument: a column (``{"ref": [name]}``), or an expression (Spark's V2 JSON, or
        ``{"tree": ...}`` as a Flight server reads one) the classifier
        translates exactly for this source (its verdict machinery: :mod:`sluice.scan.v2`, then
        :meth:`Translator.value`), every column it reads passing the column checks."""
        ref = expression.get("ref") if isinstance(expression, dict) else None
        if isinstance(ref, list) and len(ref) == 1:
            column = self._column(str(ref[0]))
            text = self.dialect.text_rules(column) if column.type.kind is Kind.STRING else None
            return _Operand(exp.column(column.name, quoted=True), column.type, text, column.name, column)
        if isinstance(expression, dict) and "refused" in expression:  # a Flight server could not read it
            raise _Refused(str(expression["refused"]))
        try:
            tree = (
                expression["tree"] if isinstance(expression, dict) and "tree" in expression else v2.to_tree(expression)
            )
        except Unsupported as reason:
            raise _Refused(str(reason)) from None
        shown = tree.sql(dialect="spark")
        if not self.ansi:
            raise _Refused(
                f"{shown}: with spark.sql.ansi.enabled=false Spark wraps overflowing arithmetic "
                "where sources raise; only columns are pushed"
            )
        if nesting.depth(tree) > nesting.MAX_PUSH_DEPTH:
            raise _Refused(f"{shown}: nested deeper than {nesting.MAX_PUSH_DEPTH} levels")
        names = list(dict.fromkeys(node.name for node in tree.find_all(exp.Column)))
        if not names:  # GROUP BY 1 is a position in SQL; Spark drops constant keys itself
            raise _Refused(f"{shown} reads no column: a constant is left to Spark")
        for name in names:
            self._column(name)
        try:
            value = Translator(self.dialect, self.table, self.zone).value(tree)
        except (Unsupported, NotRepresentable, OverflowError) as reason:
            raise _Refused(f"{shown}: {reason}") from None
        if value.type.kind is Kind.STRING and value.text is None:
            raise _Refused(f"{shown}: the text rules of its value are not known")
        return _Operand(paren(value.sql), value.type, value.text, shown)

    def _column(self, name: str) -> Column:
        column = self.table.column(name)
        why = (
            column.unpushable
            or (f"{column.describe()} is read as text" if column.read_as_text else None)
            or self.dialect.incomparable(column)
            or self.dialect.aggregated(column)
        )
        suspect = self.dialect.suspect(column)
        if why is None and suspect is not None:
            why = suspect[1]
        if why is not None:
            raise _Refused(why)
        return column

    def _grouped(self, operand: _Operand) -> exp.Expression:
        """The operand as the source must group it (equal exactly when Spark's values are equal)."""
        if operand.type.kind not in _GROUPABLE:
            raise _Refused(f"{operand.describe()}: Spark groups -0.0 with 0.0 and every NaN together; not pushed")
        value = operand.sql
        if operand.type.kind is Kind.STRING:
            rules = operand.text
            assert rules is not None  # _operand refuses text of unknown rules
            if rules.equality is not Level.EXACT:
                raise _Refused(rules.why)
            if rules.binary_equality:
                value = self.dialect.binary_collation(value)
        return value

    def _ordered(self, operand: _Operand, value: exp.Expression) -> exp.Expression:
        if operand.type.kind in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ) and not self.dialect.orders_timestamps:
            raise _Refused(f"{self.dialect.name} orders {operand.describe()} differently from Spark")
        if operand.type.kind is not Kind.STRING:
            return value
        rules = operand.text
        assert rules is not None  # _operand refuses text of unknown rules
        if rules.ordering is None:
            raise _Refused(rules.why)
        if rules.ordering == "collate_c":
            return self.dialect.binary_collation(operand.sql)
        return value


def _computed(operand: _Operand | None, reason: str) -> str:
    """``reason``, saying first that the source computes an expression operand as Spark does."""
    if operand is None or operand.column is not None:
        return reason
    return f"{operand.shown} computed by the source exactly as Spark computes it; {reason}"
