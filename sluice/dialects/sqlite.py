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

from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.pushdown.constants import Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.like import LikePattern
from sluice.pushdown.translator import TextRules, Translation, Unsupported, Value, paren
from sluice.types import Column, Kind, SparkType

_BINARY = TextRules(Level.EXACT, "native", "BINARY collation compares UTF-8 bytes like Spark")
_GLOB_META = "*?["


class SqliteDialect(Dialect):
    name = "SQLite"
    sqlglot = "sqlite"
    type_names = {"bigint": "INTEGER", "int": "INTEGER", "double": "REAL", "string": "TEXT"}
    orders_timestamps = False  # timestamps are text in no fixed format
    refuses_nul = "Python's sqlite3 refuses SQL text holding it (and GLOB stops at it)"
    #: SQLite's parser stack (100 entries) overflows at 33 levels of nested function calls
    #: ("parser stack overflow"); 28 still takes about 2,000 OR-ed terms, regrouped balanced
    max_depth = 28

    def literal(self, constant: Constant, context: Value | None) -> exp.Expression:
        if constant.type.kind is Kind.DECIMAL and constant.value is not None:
            return self._decimal_literal(Decimal(constant.value))  # type: ignore[arg-type]
        if constant.type.kind is Kind.BOOLEAN and constant.value is not None:
            return exp.Literal.number(int(bool(constant.value)))
        return super().literal(constant, context)

    def _decimal_literal(self, value: Decimal) -> exp.Expression:
        """SQLite has no decimals: spell as INTEGER, or REAL only where order is preserved."""
        if value == value.to_integral_value() and -(1 << 63) <= value < (1 << 63):
            return exp.Literal.number(int(value))
        as_float = float(value)
        floor = value.to_integral_value(rounding="ROUND_FLOOR")
        if not floor < Decimal(as_float) < floor + 1 or abs(as_float) >= 2.0**52:
            raise Unsupported(f"decimal {value} has no REAL that keeps its order against integers")
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
        return None

    def text_rules(self, column: Column) -> TextRules:
        collation = (column.collation or "BINARY").upper()
        if collation == "BINARY":
            return TextRules(Level.EXACT, "native", f"{column.describe()}: BINARY collation compares UTF-8 bytes like Spark")
        if collation in ("NOCASE", "RTRIM"):
            folds = "ASCII case" if collation == "NOCASE" else "trailing spaces"
            return TextRules(Level.INEXACT, None, f"{column.describe()}: {collation} ignores {folds}; = kept as a superset")
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
        raise Unsupported("SQLite arithmetic: integer overflow becomes REAL and NaN becomes NULL, where Spark raises or keeps NaN")
