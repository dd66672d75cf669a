"""DuckDB: typed literals, ``COLLATE "binary"`` for collated text, explicitly typed arithmetic.

Facts this module relies on, each checked against DuckDB 2.0 and Spark 4.3 (ANSI on) and
covered by the contract and differential suites on a real file:

* ``NaN = NaN`` is true and NaN sorts above +Infinity; ``-0.0 = 0.0``; NULLs are placed as
  ``NULLS FIRST/LAST`` says. Same as Spark.
* Plain ``VARCHAR`` (no collation) compares bytes: UTF-8 byte order, Spark's order (checked
  with non-ASCII, U+FF61 against emoji). ``CHAR(n)`` is ``VARCHAR``: no padding.
* Collations (``NOCASE``, ``NOACCENT``, ``NFC``, ICU locales, chains such as
  ``nocase.noaccent``) apply to ``=``, ``IN``, ranges, ``LIKE``, ``GLOB``,
  ``starts_with`` and to function results (``substring``, ``coalesce``). DuckDB exposes
  them only in the ``CREATE TABLE`` text of ``duckdb_tables()``. ``x COLLATE "binary"``
  (quoted: ``COLLATE BINARY`` does not parse) overrides any of them with byte comparison,
  so every text comparison on a collated value is pushed under it and is exact.
  ``binary``, ``C`` and ``POSIX`` are byte order already.
* ``LIKE`` is case-sensitive, ``%`` matches newlines, ``_`` one code point; there is no
  default escape character, so patterns carry ``ESCAPE '\\'``. Strings have no backslash
  escapes. ``length`` and ``substring`` count code points, as Spark does.
* ``^`` is power, not XOR: XOR is the function ``xor(a, b)`` (sqlglot renders it).
  Integer ``+ - * %``, ``xor``, ``abs`` raise on overflow and ``%`` raises on a zero
  divisor (``error_on_division_by_zero``, pinned per session by the reader), like ANSI
  Spark; ``%`` truncates toward zero like Java. But an integer literal takes the type of
  the other operand (``127::TINYINT + 1`` overflows; in Spark it is an int), so operands
  are cast to Spark's result type. ``/`` returns Infinity on a zero divisor where ANSI
  Spark raises: never pushed.
* The optimizer rewrites the operators before evaluating them: ``MoveConstantsRule``
  turns ``x + 1 > 5`` into ``x > 4``, ``1 - x < 0`` into ``x > 1`` and ``x * 2 = 7`` into
  FALSE, so a row where ``x + 1`` overflows (ANSI Spark raises) is answered instead. The
  rule matches the functions named ``+``, ``-`` and ``*``; the same checked functions
  under their other names, ``add``, ``subtract``, ``multiply``, are evaluated as written
  (``ArithmeticSimplificationRule`` and ``MonotonePreimageRule`` match by the same names
  or need one argument). So ``+ - *`` are pushed as ``add(a, b)``, ``subtract(a, b)``,
  ``multiply(a, b)``. ``%``, ``xor``, ``&``, ``|`` have no rewrite rule, and no
  rewrite of the others changes whether they raise (``x + 0``, ``x * 1`` cannot overflow;
  statistics prune a filter only when they prove no overflow). The integration test
  ``test_arithmetic_overflow.py`` checks every operator, width and near-overflow value
  against Spark, so a DuckDB that learns the other names fails it.
* Float ``+ - *`` overflow to Infinity and propagate NaN as Spark does; Spark computes
  float with any integer in double (only float with float stays float), so operands are
  cast to that type.
* ``CAST(DECIMAL(p,0) AS DOUBLE)`` and ``CAST(HUGEINT AS DOUBLE)`` are not correctly
  rounded (hundreds of mismatches in 50,000 samples) where Spark's are; through ``VARCHAR``
  they are, so decimals reach doubles that way. Integer to double or real is exact.
* Literals are spelled with their type (``CAST('0.1' AS DOUBLE)``, ``CAST('1.5' AS
  DECIMAL(2, 1))``): a bare ``1.5`` would be DuckDB's DECIMAL and a 39-digit number a
  DOUBLE. ``TIMESTAMPTZ`` literals carry ``+00:00`` and ``TIMESTAMP`` ones no zone, so
  neither depends on the session ``TimeZone`` (the reader pins it to UTC anyway).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal

from sqlglot import exp

from sluice.dialects import functions
from sluice.dialects.base import Dialect, wall_clock
from sluice.pushdown.constants import Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.like import LikePattern
from sluice.pushdown.terms import TextRules, Translation, Unsupported, Value, paren
from sluice.types import DOUBLE, Column, Kind, SparkType

#: collations that compare bytes (DuckDB resolves these names to no collation at all)
BINARY_COLLATIONS = {"binary", "c", "posix"}
#: what the source records when DuckDB's catalog does not tell (view columns, unreadable DDL)
UNKNOWN_COLLATION = "unknown"
_INTEGER_OPS = (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.BitwiseXor, exp.BitwiseAnd, exp.BitwiseOr)
#: the operators the optimizer rewrites (MoveConstantsRule), pushed as functions it leaves alone
_NAMED = {exp.Add: "add", exp.Sub: "subtract", exp.Mul: "multiply"}
_FLOAT_OPS = (exp.Add, exp.Sub, exp.Mul)
#: the DuckDB type a column must have for its values to need no cast in arithmetic
_NATIVE = {
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
}


#: types Spark has no exact match for: the reader casts them remotely to a wider Spark type
#: (HUGEINT and UHUGEINT leave Arrow as decimal128(38,0) with no check: 2**128-1 arrives as -1)
WIDENED_TYPES = {
    "UTINYINT": "smallint",
    "USMALLINT": "int",
    "UINTEGER": "bigint",
    "UBIGINT": "decimal(20,0)",
    "HUGEINT": "decimal(38,0)",
    "UHUGEINT": "decimal(38,0)",
}


class DuckdbDialect(Dialect):
    name = "DuckDB"
    sqlglot = "duckdb"
    type_names = {
        "boolean": "BOOLEAN",
        "tinyint": "TINYINT",
        "smallint": "SMALLINT",
        "int": "INTEGER",
        "bigint": "BIGINT",
        "float": "REAL",
        "double": "DOUBLE",
        "string": "VARCHAR",
        "date": "DATE",
        "timestamp": "TIMESTAMPTZ",
        "timestamp_ntz": "TIMESTAMP",
    }
    functions = {**functions.COMMON}

    # ------------------------------------------------------------- literals and casts
    def cast(self, sql: exp.Expression, target: SparkType, source: SparkType) -> exp.Expression:
        if target.kind is Kind.DECIMAL:
            precision, scale = target.precision_scale
            return exp.Cast(this=paren(sql), to=exp.DataType.build(f"DECIMAL({precision}, {scale})", dialect="duckdb"))
        if target.kind is Kind.FLOAT and source.kind is Kind.DECIMAL:
            sql = exp.Cast(this=paren(sql), to=exp.DataType.build("VARCHAR", dialect="duckdb"))  # correctly rounded
        return super().cast(sql, target, source)

    def literal(self, constant: Constant, context: Value | None) -> exp.Expression:
        if constant.type.kind is Kind.DECIMAL and constant.value is not None:
            text = exp.Literal.string(format(Decimal(constant.value), "f"))
            return self.cast(text, constant.type, constant.type)
        return super().literal(constant, context)

    def float_literal(self, value: float, spark_type: SparkType) -> exp.Expression:
        return self.spelled_float_literal(value, spark_type)

    def date_literal(self, value: dt.date) -> exp.Expression:
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE", dialect="duckdb"))

    def timestamp_literal(self, value: dt.datetime) -> exp.Expression:
        text = wall_clock(value.astimezone(dt.timezone.utc)) + "+00:00"
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMPTZ", dialect="duckdb"))

    def timestamp_ntz_literal(self, value: dt.datetime) -> exp.Expression:
        return exp.Cast(
            this=exp.Literal.string(wall_clock(value)), to=exp.DataType.build("TIMESTAMP", dialect="duckdb")
        )

    # ------------------------------------------------------------- text
    def aggregated(self, column: Column) -> str | None:
        if column.remote_type in WIDENED_TYPES:
            return f"{column.describe()} is read through a cast to {WIDENED_TYPES[column.remote_type]}"
        return None

    def text_rules(self, column: Column) -> TextRules:
        described = column.describe()
        if column.collation is None or column.collation.lower() in BINARY_COLLATIONS:
            return TextRules(
                Level.EXACT, "native", f"{described}: no collation, DuckDB compares UTF-8 bytes like Spark"
            )
        if column.collation == UNKNOWN_COLLATION:
            why = f"{described}: DuckDB's catalog does not tell this column's collation"
        else:
            why = f"{described}: DuckDB collation {column.collation} folds what Spark compares"
        return TextRules(
            Level.EXACT,
            "collate_c",
            why + '; pushed under COLLATE "binary" (byte comparison, like Spark)',
            binary_equality=True,
        )

    def binary_collation(self, sql: exp.Expression) -> exp.Expression:
        if isinstance(sql, exp.Null):
            return sql  # DuckDB refuses to collate an untyped NULL (it compares as NULL anyway)
        return exp.Paren(this=exp.Collate(this=paren(sql), expression=exp.Identifier(this="binary", quoted=True)))

    def like(self, value: Value, pattern: LikePattern) -> Translation:
        """LIKE follows the collation in DuckDB: collated values are matched as bytes."""
        if value.text is not None and value.text.binary_equality:
            value = replace(value, sql=self.binary_collation(value.sql))
        return super().like(value, pattern)

    # ------------------------------------------------------------- arithmetic
    def arithmetic(self, op: type[exp.Expression], left: Value, right: Value) -> Value:
        kinds = {left.type.kind, right.type.kind}
        if op is exp.Div:
            raise Unsupported("division: DuckDB returns Infinity for a zero divisor where ANSI Spark raises")
        if kinds == {Kind.INTEGRAL} and op in _INTEGER_OPS:
            result = left.type if left.type.bits >= right.type.bits else right.type
        elif Kind.FLOAT in kinds and kinds <= {Kind.FLOAT, Kind.INTEGRAL} and op in _FLOAT_OPS:
            result = left.type if left.type == right.type else DOUBLE  # Spark: float op integer is double
        else:
            raise Unsupported(
                f"{op.__name__} over {left.type} and {right.type}: DuckDB's result type or rounding differs from Spark's"
            )
        operands = [self._typed(left, result), self._typed(right, result)]
        name = _NAMED.get(op)
        return Value(
            op(this=operands[0], expression=operands[1])
            if name is None
            else exp.Anonymous(this=name, expressions=operands),
            result,
        )

    def _typed(self, value: Value, target: SparkType) -> exp.Expression:
        """``value`` as a DuckDB expression of exactly Spark's type ``target``.

        Columns of the native type, casts and this method's own results (an operator of
        ``_INTEGER_OPS`` or a function of ``_NAMED``) already have it; anything else is cast.
        """
        native = (
            isinstance(value.sql, exp.Column)
            and value.column is not None
            and value.column.remote_type == _NATIVE[target.name]
        )
        ours = isinstance(value.sql, exp.Anonymous) and value.sql.name in _NAMED.values()
        typed = (ours or isinstance(value.sql, (exp.Cast, *_INTEGER_OPS))) and value.type == target
        return paren(value.sql) if native or typed else self.cast(value.sql, target, value.type)
