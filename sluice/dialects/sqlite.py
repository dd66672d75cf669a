"""SQLite: GLOB for LIKE, collations from the table's DDL, no NaN and no XOR.

Facts this module relies on (each covered by a differential test on real files):
LIKE folds ASCII case, so patterns are pushed as GLOB (case-sensitive, binary) with
metacharacters bracketed; BINARY collation compares UTF-8 bytes like Spark, NOCASE and
RTRIM do not; NaN cannot be stored (it becomes NULL); integer overflow silently becomes
REAL and NaN results become NULL, so arithmetic other than ``&``/``|`` is not pushed;
timestamps are text in no fixed format, so they are compared by Spark.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sluice.dialects import functions
from sluice.dialects.base import Dialect
from sluice.pushdown.constants import Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.like import LikePattern
from sluice.pushdown.terms import TextRules, Translation, Unsupported, Value, paren
from sluice.types import Column, Kind, SparkType

if TYPE_CHECKING:
    from sluice.pushdown.translator import (
        Translator,  # the dialects answer its questions; it imports them only for types
    )

#: integer digits below 2**53: every INTEGER a decimal of this many digits holds is a double
_EXACT_DIGITS = 15
_BINARY = TextRules(Level.EXACT, "native", "BINARY collation compares UTF-8 bytes like Spark")
_GLOB_META = "*?["


def _absolute(translator: Translator, node: exp.Expression) -> Value:
    value = translator.value(node.this)
    if value.type.kind is Kind.INTEGRAL and value.type.bits < 64:
        raise Unsupported(
            f"abs() over {value.type}: SQLite computes in 64 bits where Spark raises at {value.type}'s minimum"
        )
    return functions.absolute(translator, node)


class SqliteDialect(Dialect):
    name = "SQLite"
    sqlglot = "sqlite"
    type_names = {"bigint": "INTEGER", "int": "INTEGER", "double": "REAL", "string": "TEXT"}
    functions = {**functions.COMMON, exp.Abs: _absolute}
    orders_timestamps = False  # timestamps are text in no fixed format
    refuses_nul = "Python's sqlite3 refuses SQL text holding it (and GLOB stops at it)"
    #: SQLite's parser stack (100 entries) overflows at 33 levels of nested function calls
    #: ("parser stack overflow"); 28 still takes about 2,000 OR-ed terms, regrouped balanced
    max_depth = 28

    def literal(self, constant: Constant, context: Value | None) -> exp.Expression:
        if constant.type.kind is Kind.DECIMAL and constant.value is not None:
            return self._decimal_literal(Decimal(constant.value))
        if constant.type.kind is Kind.BOOLEAN and constant.value is not None:
            return exp.Literal.number(int(bool(constant.value)))
        return super().literal(constant, context)

    def _decimal_literal(self, value: Decimal) -> exp.Expression:
        """SQLite has no decimals: spell as INTEGER, or as a REAL that keeps the order.

        Against INTEGER values the REAL must fall between the same two integers as the
        decimal. Against REAL values (a decimal column's) the decimal must be the REAL's
        shortest spelling, the form Spark reads a stored REAL as: then two doubles order
        as their shortest spellings do.
        """
        if value == value.to_integral_value() and -(1 << 63) <= value < (1 << 63):
            return exp.Literal.number(int(value))
        as_float = float(value)
        floor = value.to_integral_value(rounding="ROUND_FLOOR")
        if not floor < Decimal(as_float) < floor + 1 or abs(as_float) >= 2.0**52:
            raise Unsupported(f"decimal {value} has no REAL that keeps its order against integers")
        if Decimal(repr(as_float)) != value:
            raise Unsupported(f"decimal {value} is not the shortest spelling of a REAL; a stored REAL reads as one")
        return exp.Literal.number(repr(as_float))

    def float_literal(self, value: float, spark_type: SparkType) -> exp.Expression:
        if math.isnan(value):
            raise Unsupported("SQLite cannot store NaN (it becomes NULL), so no NaN comparison is pushed")
        if math.isinf(value):
            return exp.Literal.number("9e999" if value > 0 else "-9e999")
        return exp.Literal.number(repr(value))

    def date_literal(self, value: dt.date) -> exp.Expression:
        return exp.Literal.string(value.isoformat())

    def timestamp_literal(self, value: dt.datetime) -> exp.Expression:
        raise Unsupported("SQLite stores timestamps as text in no fixed format; compared by Spark")

    timestamp_ntz_literal = timestamp_literal

    def incomparable(self, column: Column) -> str | None:
        if column.type.kind in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ):
            # '2024-01-01 00:00:00' and '2024-01-01T00:00:00' read as one instant but differ as text
            return "SQLite stores timestamps as text in no fixed format; compared by Spark"
        if column.type.kind is Kind.DECIMAL and _integer_digits(column) > _EXACT_DIGITS:
            return (
                f"SQLite holds these decimals as INTEGER or REAL; past {_EXACT_DIGITS} integer digits a REAL's binary "
                "value and the decimal Spark reads from it can order differently against an INTEGER"
            )
        return None

    def aggregated(self, column: Column) -> str | None:
        return _loose(column, ", which SQLite aggregates where the reader would refuse or convert them")

    def joined(self, column: Column) -> str | None:
        return _loose(column, " (text in a DATE column), which the reader refuses or converts")

    def suspect(self, column: Column) -> tuple[exp.Expression, str] | None:
        """Booleans and narrow integers outside their type (``_out_of_range``), and a decimal column's TEXT or BLOB values (SQLite orders them after every number) and
        the values the reader refuses (more decimals than the scale, more integer digits than
        the precision): rows holding them are returned for Spark to read and judge.

        Among INTEGER and REAL values the comparison is Spark's: a REAL reads as its shortest
        decimal, which orders against other doubles as the doubles do, and below 2**53 (15
        integer digits) every INTEGER is a double; literals are spelled so (``_decimal_literal``).
        """
        if column.type.kind is Kind.BOOLEAN or (column.type.kind is Kind.INTEGRAL and column.type.bits < 64):
            return self._out_of_range(column)
        if column.type.kind is Kind.DATE:
            return self._loose_date(column)
        if column.type.kind is not Kind.DECIMAL:
            return None
        _, scale = column.type.precision_scale
        value = exp.column(column.name, quoted=True)
        limit = exp.Literal.number(10 ** _integer_digits(column))
        storage = exp.Anonymous(this="typeof", expressions=[value.copy()])
        numbers = exp.In(this=storage, expressions=[exp.Literal.string(k) for k in ("integer", "real", "null")])
        rounded = exp.NEQ(
            this=value.copy(), expression=exp.Round(this=value.copy(), decimals=exp.Literal.number(scale))
        )
        guard = _or(
            exp.Not(this=exp.Paren(this=numbers)),
            exp.and_(exp.EQ(this=storage.copy(), expression=exp.Literal.string("real")), rounded),
            exp.GTE(this=value.copy(), expression=limit),
            exp.LTE(this=value.copy(), expression=exp.Neg(this=limit.copy())),
        )
        why = (
            f"{column.describe()}: SQLite may hold a decimal as TEXT (ordered after every number) or hold one "
            f"decimal({','.join(map(str, column.type.precision_scale))}) cannot read; rows holding such values are "
            "returned for Spark to read and judge"
        )
        return guard, why

    def _out_of_range(self, column: Column) -> tuple[exp.Expression, str]:
        """A boolean or narrow integer column's values the reader refuses: another storage class,
        or an INTEGER outside the type (SQLite stores 2 in a BOOLEAN and 40000 in a SMALLINT)."""
        low, high = (0, 1) if column.type.kind is Kind.BOOLEAN else column.type.integral_range()
        value = exp.column(column.name, quoted=True)
        storage = exp.In(
            this=exp.Anonymous(this="typeof", expressions=[value.copy()]),
            expressions=[exp.Literal.string("integer"), exp.Literal.string("null")],
        )
        guard = _or(
            exp.Not(this=exp.Paren(this=storage)),
            exp.LT(this=value.copy(), expression=exp.Literal.number(low)),
            exp.GT(this=value.copy(), expression=exp.Literal.number(high)),
        )
        why = (
            f"{column.describe()}: SQLite may hold values {column.type} cannot (another storage class, or outside "
            f"{low}..{high}); rows holding them are returned so the read fails as it does without pushdown"
        )
        return guard, why

    def _loose_date(self, column: Column) -> tuple[exp.Expression, str]:
        """A DATE column's values the reader refuses or reads as a date SQLite does not compare as
        one: anything but TEXT spelled ``YYYY-MM-DD`` of a real day from 0001-01-01 (SQLite keeps
        ``'garbage'``, ``'2024-02-30'`` and a BLOB in a DATE column; ``date(v, '+0 days')`` spells
        a real day back unchanged and normalises or rejects everything else)."""
        value = exp.column(column.name, quoted=True)
        storage = exp.In(
            this=exp.Anonymous(this="typeof", expressions=[value.copy()]),
            expressions=[exp.Literal.string("text"), exp.Literal.string("null")],
        )
        spelled = exp.Anonymous(this="date", expressions=[value.copy(), exp.Literal.string("+0 days")])
        guard = _or(
            exp.Not(this=exp.Paren(this=storage)),
            exp.Not(this=exp.Paren(this=exp.NullSafeEQ(this=spelled, expression=value.copy()))),
            exp.LT(this=value.copy(), expression=exp.Literal.string("0001-01-01")),
        )
        why = (
            f"{column.describe()}: SQLite may hold values that are no date in a DATE column (text in another "
            "spelling, numbers, BLOBs); rows holding them are returned so the read fails as it does without pushdown"
        )
        return guard, why

    def text_rules(self, column: Column) -> TextRules:
        collation = (column.collation or "BINARY").upper()
        if collation == "BINARY":
            return TextRules(
                Level.EXACT, "native", f"{column.describe()}: BINARY collation compares UTF-8 bytes like Spark"
            )
        if collation in ("NOCASE", "RTRIM"):
            folds = "ASCII case" if collation == "NOCASE" else "trailing spaces"
            return TextRules(
                Level.INEXACT, None, f"{column.describe()}: {collation} ignores {folds}; = kept as a superset"
            )
        return TextRules(Level.UNSUPPORTED, None, f"{column.describe()}: unknown collation {collation}")

    def derived_text(self, rules: TextRules | None) -> TextRules | None:
        # Function results carry no collating sequence in SQLite: they compare as BINARY.
        return _BINARY

    def boolean_test(self, sql: exp.Expression) -> exp.Expression:
        return exp.EQ(this=paren(sql), expression=exp.Literal.number(1))

    def like(self, value: Value, pattern: LikePattern) -> Translation:
        spelled = pattern.render("*", "?", lambda c: f"[{c}]" if c in _GLOB_META else c)
        glob = exp.Glob(this=paren(value.sql), expression=self.string_literal(spelled))
        return Translation(Level.EXACT, "LIKE pushed as GLOB: case-sensitive and binary like Spark's LIKE", glob)

    def arithmetic(self, op: type[exp.Expression], left: Value, right: Value) -> Value:
        if {left.type.kind, right.type.kind} == {Kind.INTEGRAL} and op in (exp.BitwiseAnd, exp.BitwiseOr):
            wider = left.type if left.type.bits >= right.type.bits else right.type
            return Value(op(this=paren(left.sql), expression=paren(right.sql)), wider)
        if op is exp.BitwiseXor:
            raise Unsupported("SQLite has no XOR operator")
        raise Unsupported(
            "SQLite arithmetic: integer overflow becomes REAL and NaN becomes NULL, where Spark raises or keeps NaN"
        )


def _integer_digits(column: Column) -> int:
    precision, scale = column.type.precision_scale
    return precision - scale


def _or(*conditions: exp.Expr) -> exp.Expression:
    """sqlglot's ``or_``, typed as what it returns (an Or node; sqlglot types it as the Condition mixin)."""
    return cast(exp.Expression, exp.or_(*conditions))


def _loose(column: Column, consequence: str) -> str | None:
    """Why a column outside a STRICT table cannot be trusted to hold its declared type, or None."""
    if column.remote_type.endswith(" STRICT"):
        return None
    return (
        f"{column.describe()}: outside a STRICT table a SQLite column may hold values of any storage class{consequence}"
    )
