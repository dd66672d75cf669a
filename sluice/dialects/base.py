"""What every SQL dialect answers; the defaults are the conservative ones.

A dialect module subclasses :class:`Dialect`, sets a few attributes and overrides only
what differs. Nothing outside ``dialects/`` asks "which database is this?": the
translator asks the dialect.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, ClassVar

from sqlglot import exp

from sluice.dialects import functions
from sluice.pushdown import nesting
from sluice.pushdown.constants import Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.like import LikePattern
from sluice.pushdown.terms import TextRules, Translation, Unsupported, Value, paren
from sluice.types import Column, Kind, SparkType

if TYPE_CHECKING:
    from sluice.pushdown.translator import (
        Translator,  # the dialects answer its questions; it imports them only for types
    )

FunctionHandler = Callable[["Translator", exp.Expression], Value]


def check_text(text: str, refuses_nul: str | None) -> None:
    """Raise :class:`Unsupported` for text no SQL driver can send (a lone surrogate is not
    UTF-8), or holding NUL where the engine refuses it (``refuses_nul`` says why)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unsupported("string constant is not valid Unicode (a lone surrogate)") from None
    if refuses_nul and "\x00" in text:
        raise Unsupported(f"string constant holds NUL (U+0000): {refuses_nul}")


def wall_clock(value: dt.datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS.ffffff`` with a four-digit year (strftime drops zeros before 1000)."""
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


class Dialect:
    """Base dialect. Subclasses set ``name``, ``sqlglot`` and ``type_names``."""

    name: ClassVar[str] = "base"
    sqlglot: ClassVar[str] = ""
    #: remote spelling of each Spark type, for casts and typed literals
    type_names: ClassVar[dict[str, str]] = {}
    functions: ClassVar[dict[type[exp.Expression], FunctionHandler]] = functions.COMMON
    #: whether ORDER BY on timestamps orders like Spark (top-N pushdown)
    orders_timestamps: ClassVar[bool] = True
    #: why a string literal holding NUL (U+0000) cannot be sent, or None when it can
    refuses_nul: ClassVar[str | None] = None
    #: deepest pushed predicate (sqlglot nodes) the engine's parser takes; deeper stays with Spark
    max_depth: ClassVar[int] = nesting.MAX_PUSH_DEPTH

    # ------------------------------------------------------------- rendering
    def render(self, node: exp.Expression) -> str:
        """Target SQL text, every identifier quoted by the dialect's rules."""
        return node.sql(dialect=self.sqlglot, identify=True)

    def render_identifier(self, name: str) -> str:
        return self.render(exp.to_identifier(name, quoted=True))

    def quote_table(self, schema: str | None, table: str) -> str:
        return self.render(exp.table_(table, db=schema, quoted=True))

    def cast(self, sql: exp.Expression, target: SparkType, source: SparkType) -> exp.Expression:
        name = self.type_names.get(target.name)
        if name is None:
            raise Unsupported(f"{self.name} cannot cast {source} to {target} the way Spark does")
        return exp.Cast(this=paren(sql), to=exp.DataType.build(name, dialect=self.sqlglot))

    def literal(self, constant: Constant, context: Value | None) -> exp.Expression:
        """The constant spelled in this dialect, typed exactly; raise if it has no spelling."""
        value, kind = constant.value, constant.type.kind
        if value is None:
            return exp.Null()
        if kind is Kind.BOOLEAN:
            return exp.Boolean(this=bool(value))
        if kind is Kind.INTEGRAL:
            return exp.Literal.number(int(value))
        if kind is Kind.DECIMAL:
            return exp.Literal.number(format(Decimal(value), "f"))
        if kind is Kind.FLOAT:
            return self.float_literal(float(value), constant.type)
        if kind is Kind.STRING:
            return self.string_literal(str(value))
        if kind is Kind.DATE:
            return self.date_literal(value)
        if kind is Kind.TIMESTAMP:
            return self.timestamp_literal(value)
        if kind is Kind.TIMESTAMP_NTZ:
            return self.timestamp_ntz_literal(value)
        raise Unsupported(f"{self.name} has no literal for {constant.type}")

    def string_literal(self, text: str) -> exp.Expression:
        """``text`` as a quoted literal; :class:`Unsupported` when the engine could not receive
        it as sent, so the predicate stays with Spark instead of failing or matching wrongly."""
        check_text(text, self.refuses_nul)
        return exp.Literal.string(text)

    def float_literal(self, value: float, spark_type: SparkType) -> exp.Expression:
        if math.isnan(value) or math.isinf(value):
            raise Unsupported(f"{self.name} cannot store or spell {value}")
        return self.cast(exp.Literal.number(repr(value)), spark_type, spark_type)

    def spelled_float_literal(self, value: float, spark_type: SparkType) -> exp.Expression:
        """``value`` as a string cast to the column's float type: for engines (PostgreSQL,
        DuckDB) that store NaN and the infinities and spell them 'NaN', 'Infinity',
        '-Infinity', so a comparison with them is pushed like any other."""
        text = (
            "NaN"
            if math.isnan(value)
            else ("Infinity" if value > 0 else "-Infinity")
            if math.isinf(value)
            else repr(value)
        )
        return self.cast(exp.Literal.string(text), spark_type, spark_type)

    def date_literal(self, value: dt.date) -> exp.Expression:
        raise Unsupported(f"{self.name} has no date literal")

    def timestamp_literal(self, value: dt.datetime) -> exp.Expression:
        raise Unsupported(f"{self.name} has no timestamp literal")

    def timestamp_ntz_literal(self, value: dt.datetime) -> exp.Expression:
        raise Unsupported(f"{self.name} has no timestamp_ntz literal")

    def order_key(self, sql: str, descending: bool, nulls_first: bool) -> str:
        """One ORDER BY key with Spark's NULL placement spelled out."""
        return f"{sql} {'DESC' if descending else 'ASC'} {'NULLS FIRST' if nulls_first else 'NULLS LAST'}"

    # ------------------------------------------------------------- semantics
    def incomparable(self, column: Column) -> str | None:
        """Why the source's stored values of ``column`` cannot be compared remotely (None: they can)."""
        return None

    def suspect(self, column: Column) -> tuple[exp.Expression, str] | None:
        """SQL true on the rows whose stored ``column`` value the source compares differently from
        the value Spark reads (or the reader refuses), and why; None when there are none.

        A pushed conjunct reading the column also returns those rows (``conjunct OR suspect``,
        INEXACT): Spark judges them on the value it reads, and a value the reader refuses
        fails the query as it fails without pushdown, instead of being filtered out remotely.
        """
        return None

    def aggregated(self, column: Column) -> str | None:
        """Why the source's aggregates over ``column`` could differ from Spark's over the values it
        reads (None: they cannot). Called after :meth:`incomparable` and :meth:`suspect`."""
        return None

    def joined(self, column: Column) -> str | None:
        """Why a join the source runs over ``column`` could answer where Spark reading the tables
        would fail or convert (a stored value the reader refuses, on a row the join skips); None:
        it cannot. Called after :meth:`suspect`."""
        return None

    def text_rules(self, column: Column) -> TextRules:
        raise NotImplementedError

    def derived_text(self, rules: TextRules | None) -> TextRules | None:
        """Text rules of a function result computed from a value with ``rules``."""
        return rules

    def binary_collation(self, sql: exp.Expression) -> exp.Expression:
        raise Unsupported(f"{self.name} has no binary collation to force")

    def keep_index(self, native: exp.Expression, exact: exp.Expression) -> exp.Expression:
        """An exact equality, given the native one that is a superset (and may use an index).

        Equal under binary comparison implies equal under any collation, so
        ``native AND exact`` means ``exact`` in three-valued logic; dialects whose
        binary comparison defeats indexes return that conjunction.
        """
        return exact

    def boolean_test(self, sql: exp.Expression) -> exp.Expression:
        return sql

    def like(self, value: Value, pattern: LikePattern) -> Translation:
        """Default: SQL LIKE with backslash escape, exact when text equality is exact."""
        text = value.text
        if text is not None and text.equality is not Level.EXACT:
            raise Unsupported(f"LIKE follows the collation: {text.why}")
        spelled = pattern.render("%", "_", lambda c: "\\" + c if c in "%_\\" else c)
        like = exp.Like(this=paren(value.sql), expression=self.string_literal(spelled))
        return Translation(
            Level.EXACT,
            "LIKE with an explicit escape character",
            exp.Escape(this=like, expression=exp.Literal.string("\\")),
        )

    def arithmetic(self, op: type[exp.Expression], left: Value, right: Value) -> Value:
        raise Unsupported(f"{self.name}: arithmetic is not pushed")

    def upper_lower(self, value: Value, function: str) -> Value:
        raise Unsupported(f"{function}(): Spark uses Java's full Unicode case mapping (ß -> SS); {self.name}'s differs")
