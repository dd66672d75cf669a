"""PostgreSQL: typed literals, ``COLLATE "C"`` for text ranges, ``#`` for XOR.

Facts this module relies on (each covered by a differential test on a real server):
deterministic collations make ``=`` byte-exact, but ``<``/``>`` follow the locale, so
ranges are pushed under ``COLLATE "C"`` (code point order, like Spark's UTF-8 bytes);
``bpchar`` ignores trailing spaces; NaN equals NaN and sorts above every number, as in
Spark; integer arithmetic raises on overflow as ANSI Spark does once its operands have
Spark's result type (literals are ``int4`` otherwise); the planner folds only
all-constant expressions and never moves constants across a comparison.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from sluice.dialects.base import Dialect, wall_clock
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import TextRules, Unsupported, Value, paren
from sluice.types import Column, Kind, SparkType

_C_COLLATIONS = {"C", "POSIX"}
_EXACT_INTEGER_OPS = (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.BitwiseXor, exp.BitwiseAnd, exp.BitwiseOr)


class PostgresDialect(Dialect):
    name = "PostgreSQL"
    sqlglot = "postgres"
    refuses_nul = "PostgreSQL text cannot hold it (no stored value equals it; Spark compares)"
    type_names = {
        "boolean": "BOOLEAN",
        "smallint": "SMALLINT",
        "int": "INT",
        "bigint": "BIGINT",
        "float": "REAL",
        "double": "DOUBLE PRECISION",
        "string": "TEXT",
        "date": "DATE",
        "timestamp": "TIMESTAMPTZ",
        "timestamp_ntz": "TIMESTAMP",
    }

    def cast(self, sql: exp.Expression, target: SparkType, source: SparkType) -> exp.Expression:
        if target.kind is Kind.DECIMAL:
            precision, scale = target.precision_scale
            return exp.Cast(
                this=paren(sql), to=exp.DataType.build(f"NUMERIC({precision}, {scale})", dialect="postgres")
            )
        return super().cast(sql, target, source)

    def float_literal(self, value: float, spark_type: SparkType) -> exp.Expression:
        return self.spelled_float_literal(value, spark_type)

    def date_literal(self, value: dt.date) -> exp.Expression:
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE"))

    def timestamp_literal(self, value: dt.datetime) -> exp.Expression:
        text = wall_clock(value.astimezone(dt.timezone.utc)) + "+00:00"
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMPTZ", dialect="postgres"))

    def timestamp_ntz_literal(self, value: dt.datetime) -> exp.Expression:
        text = wall_clock(value)
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMP", dialect="postgres"))

    def text_rules(self, column: Column) -> TextRules:
        described = column.describe()
        if column.padded:
            return TextRules(
                Level.INEXACT,
                None,
                f"{described} is blank-padded: PostgreSQL ignores trailing spaces, Spark does not",
                functions_ok=False,
            )
        if column.case_insensitive:
            return TextRules(
                Level.INEXACT, None, f"{described}: nondeterministic collation, = may match more than Spark's binary ="
            )
        if column.collation in _C_COLLATIONS:
            return TextRules(Level.EXACT, "native", f"{described}: binary collation orders like Spark")
        return TextRules(
            Level.EXACT,
            "collate_c",
            f'{described}: deterministic collation makes = exact; ranges pushed under COLLATE "C" (code point order, no index use)',
        )

    def binary_collation(self, sql: exp.Expression) -> exp.Expression:
        return exp.Paren(this=exp.Collate(this=paren(sql), expression=exp.Identifier(this="C", quoted=True)))

    def arithmetic(self, op: type[exp.Expression], left: Value, right: Value) -> Value:
        kinds = {left.type.kind, right.type.kind}
        if kinds == {Kind.INTEGRAL} and op in _EXACT_INTEGER_OPS:
            wider = left.type if left.type.bits >= right.type.bits else right.type
            return Value(op(this=self._typed(left, wider), expression=self._typed(right, wider)), wider)
        if op is exp.Div:
            raise Unsupported("division: Spark's / returns a fraction, PostgreSQL divides integers as integers")
        if Kind.FLOAT in kinds:
            raise Unsupported("floating-point arithmetic: PostgreSQL raises on overflow where Spark returns Infinity")
        raise Unsupported(f"{op.__name__} over {left.type} and {right.type}: result types differ from Spark's")

    def _typed(self, value: Value, target: SparkType) -> exp.Expression:
        """``value`` as a PostgreSQL expression of Spark's result type ``target``.

        PostgreSQL types an integer literal ``int4`` whatever Spark calls it: ``s + 1S``
        would compute (and overflow) in ``int4`` where Spark raises at 32767, and ``i + 1L``
        would raise at 2147483647 where Spark computes in ``bigint``. Literals and values of
        another type are cast; columns and results of the type already have it. No
        PostgreSQL type computes like Spark's ``tinyint``: such arithmetic is not pushed.
        """
        if value.type == target and not isinstance(value.sql, (exp.Literal, exp.Neg)):
            return paren(value.sql)
        return self.cast(value.sql, target, value.type)
