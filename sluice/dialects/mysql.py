"""MySQL and MariaDB: binary collation for exact text, hex string literals, signed bitwise.

Facts this module relies on (each covered by the contract and differential suites against
a real MariaDB server):

* The default collations (``utf8mb4_general_ci``, ``utf8mb4_unicode_ci``, ...) fold case
  and accents, and every ``PAD SPACE`` collation (``utf8mb4_bin`` included) ignores
  trailing spaces in ``=``. Binary equality implies equality under any of them, so for
  ``=``/``IN`` Sluice pushes ``col = v AND <col under a NO PAD binary collation> = v``:
  the first conjunct can use the column's index, the second makes the answer exact.
  Ranges and ``LIKE`` run under the binary collation alone (no index use). A NO PAD
  binary collation compares code points, which is the order of Spark's UTF-8 bytes.
* Readers set ``NO_BACKSLASH_ESCAPES`` and ``time_zone = '+00:00'`` on every session,
  but literals never depend on that: text other than plain ASCII is spelled as
  ``_utf8mb4 X'…'`` and LIKE uses ``!`` as its escape character.
* Booleans are ``TINYINT(1)``; the reader refuses values other than 0 and 1, and a pushed
  filter returns the rows holding one (``suspect``) so it cannot hide them.
* No NaN or infinity can be stored; float overflow raises where Spark returns Infinity.
* ``&``, ``|``, ``^`` (XOR) work on unsigned 64-bit values; ``CAST(… AS SIGNED)`` gives
  back Spark's two's-complement result. ``+ - *`` compute in BIGINT and raise on
  overflow, so they are pushed only where Spark's result is BIGINT too. Division and
  ``%`` by zero return NULL where ANSI Spark raises.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import TYPE_CHECKING

from sqlglot import exp

from sluice.dialects import functions
from sluice.dialects.base import Dialect, check_text, wall_clock
from sluice.pushdown.constants import Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.like import LikePattern
from sluice.pushdown.terms import TextRules, Translation, Unsupported, Value, paren
from sluice.types import Column, Kind, SparkType

if TYPE_CHECKING:
    from sluice.pushdown.translator import (
        Translator,  # the dialects answer its questions; it imports them only for types
    )

_PLAIN_TEXT = re.compile(r"[A-Za-z0-9 .,:;=<>()@#$%^&*+\-/?!\[\]{}|~_]*")
_LIKE_ESCAPE = "!"
_BITWISE = (exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor)
_WIDENING = (exp.Add, exp.Sub, exp.Mul)


def _signed(value: Value) -> bool:
    column = value.column
    return column is None or "unsigned" not in column.remote_type.lower()


class MariadbDialect(Dialect):
    name = "MariaDB"
    sqlglot = "mysql"
    #: a NO PAD collation comparing code points (= Spark's UTF-8 byte order)
    binary_collation_name = "utf8mb4_nopad_bin"
    type_names = {
        "boolean": "SIGNED",
        "tinyint": "SIGNED",
        "smallint": "SIGNED",
        "int": "SIGNED",
        "bigint": "SIGNED",
        "float": "FLOAT",
        "double": "DOUBLE",
        "date": "DATE",
    }
    functions = {**functions.COMMON}

    def statement_timeout(self, seconds: float) -> str:
        """Session setting that aborts a statement after ``seconds``."""
        return f"SET SESSION max_statement_time = {seconds:g}"

    def order_key(self, sql: str, descending: bool, nulls_first: bool) -> str:
        # No NULLS FIRST/LAST in MySQL: order by the NULL test first (TRUE sorts after FALSE).
        return f"({sql} IS NULL) {'DESC' if nulls_first else 'ASC'}, {sql} {'DESC' if descending else 'ASC'}"

    # ------------------------------------------------------------- literals
    def literal(self, constant: Constant, context: Value | None) -> exp.Expression:
        if constant.type.kind is Kind.STRING and constant.value is not None:
            return self.text_literal(str(constant.value))
        return super().literal(constant, context)

    def text_literal(self, text: str) -> exp.Expression:
        """Plain ASCII as a quoted string; anything else as UTF-8 hex, immune to sql_mode."""
        if _PLAIN_TEXT.fullmatch(text):
            return exp.Literal.string(text)
        check_text(text, self.refuses_nul)
        encoded = text.encode("utf-8")
        if not encoded:
            return exp.Literal.string("")
        return exp.Introducer(this="_utf8mb4", expression=exp.HexString(this=encoded.hex().upper()))

    def float_literal(self, value: float, spark_type: SparkType) -> exp.Expression:
        if math.isnan(value) or math.isinf(value):
            raise Unsupported(f"{self.name} cannot store or spell {value}")
        return exp.Cast(
            this=exp.Literal.number(repr(value)),
            to=exp.DataType.build(self.type_names[spark_type.name], dialect="mysql"),
        )

    def date_literal(self, value: dt.date) -> exp.Expression:
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE", dialect="mysql"))

    def timestamp_literal(self, value: dt.datetime) -> exp.Expression:
        # Readers run with time_zone '+00:00': a TIMESTAMP column compares as its UTC wall time.
        return self.timestamp_ntz_literal(value.astimezone(dt.timezone.utc).replace(tzinfo=None))

    def timestamp_ntz_literal(self, value: dt.datetime) -> exp.Expression:
        return exp.Cast(
            this=exp.Literal.string(wall_clock(value)), to=exp.DataType.build("DATETIME(6)", dialect="mysql")
        )

    def cast(self, sql: exp.Expression, target: SparkType, source: SparkType) -> exp.Expression:
        if target.kind is Kind.DECIMAL:
            precision, scale = target.precision_scale
            return exp.Cast(this=paren(sql), to=exp.DataType.build(f"DECIMAL({precision}, {scale})", dialect="mysql"))
        if target.kind is Kind.FLOAT and source.kind in (Kind.FLOAT, Kind.INTEGRAL):
            return super().cast(sql, target, source)
        if target.kind is Kind.INTEGRAL and source.kind is Kind.INTEGRAL and target.bits >= source.bits:
            # Spark widens an int compared with a bigint; MySQL compares and computes integers as
            # BIGINT already (and raises on its overflow), so the widened value is the value itself
            return sql
        raise Unsupported(f"{self.name} cannot cast {source} to {target} the way Spark does")

    # ------------------------------------------------------------- text
    def text_rules(self, column: Column) -> TextRules:
        collation = (column.collation or "").lower()
        if collation.endswith(("_nopad_bin", "_0900_bin")) and collation.startswith("utf8"):
            return TextRules(
                Level.EXACT, "native", f"{column.describe()}: NO PAD binary collation compares code points like Spark"
            )
        if collation == "binary":
            return TextRules(
                Level.UNSUPPORTED, None, f"{column.describe()}: binary string compared as bytes of an unknown encoding"
            )
        folds = "case and accents, and trailing spaces" if collation.endswith("_ci") else "trailing spaces (PAD SPACE)"
        return TextRules(
            Level.EXACT,
            "collate_c",
            f"{column.describe()} ignores {folds}: = pushed as `= AND COLLATE {self.binary_collation_name} =` "
            f"(the index narrows, the binary comparison decides); ranges and LIKE under {self.binary_collation_name} (no index use)",
            binary_equality=True,
        )

    def aggregated(self, column: Column) -> str | None:
        if column.remote_type.startswith(("bit(", "year")):
            return f"{column.describe()} is read as the number it holds, which MySQL's aggregates do not compute on"
        return None

    def suspect(self, column: Column) -> tuple[exp.Expression, str] | None:
        """A ``TINYINT(1)`` holding something other than 0 or 1, which the reader refuses to
        read as a boolean: rows holding one are returned, so the read fails as it does unpushed."""
        if column.type.kind is not Kind.BOOLEAN:
            return None
        value = exp.column(column.name, quoted=True)
        guard = exp.Not(
            this=exp.Paren(this=exp.In(this=value, expressions=[exp.Literal.number(0), exp.Literal.number(1)]))
        )
        return guard, (
            f"{column.describe()} may hold values other than 0 and 1, which Sluice refuses to read as booleans; "
            "rows holding them are returned so the read fails as it does without pushdown"
        )

    def binary_collation(self, sql: exp.Expression) -> exp.Expression:
        if isinstance(sql, (exp.Literal, exp.Introducer, exp.Null)):
            return sql  # the other side's explicit COLLATE decides the comparison
        converted = exp.Cast(
            this=paren(sql), to=exp.DataType(this=exp.DType.CHARACTER_SET, kind=exp.Var(this="utf8mb4"))
        )
        return exp.Paren(this=exp.Collate(this=converted, expression=exp.Var(this=self.binary_collation_name)))

    def keep_index(self, native: exp.Expression, exact: exp.Expression) -> exp.Expression:
        return exp.And(this=paren(native), expression=paren(exact))

    def boolean_test(self, sql: exp.Expression) -> exp.Expression:
        return exp.EQ(this=paren(sql), expression=exp.Boolean(this=True))

    def like(self, value: Value, pattern: LikePattern) -> Translation:
        spelled = pattern.render("%", "_", lambda c: _LIKE_ESCAPE + c if c in "%_" + _LIKE_ESCAPE else c)
        subject = value.sql
        reason = "LIKE with an explicit escape character"
        if value.text is not None and value.text.ordering == "collate_c":
            subject = self.binary_collation(subject)
            reason = f"LIKE under {self.binary_collation_name}: case-, accent- and space-exact like Spark"
        like = exp.Like(this=paren(subject), expression=self.text_literal(spelled))
        return Translation(Level.EXACT, reason, exp.Escape(this=like, expression=exp.Literal.string(_LIKE_ESCAPE)))

    # ------------------------------------------------------------- numbers
    def arithmetic(self, op: type[exp.Expression], left: Value, right: Value) -> Value:
        if {left.type.kind, right.type.kind} != {Kind.INTEGRAL}:
            raise Unsupported(
                f"{self.name} arithmetic over {left.type} and {right.type}: overflow and result types differ from Spark's"
            )
        if not (_signed(left) and _signed(right)):
            raise Unsupported(
                f"{self.name} arithmetic on UNSIGNED columns stays unsigned (3 - 5 is an error), Spark's does not"
            )
        wider = left.type if left.type.bits >= right.type.bits else right.type
        computed = op(this=paren(left.sql), expression=paren(right.sql))
        if op in _BITWISE:
            return Value(exp.Cast(this=computed, to=exp.DataType.build("SIGNED", dialect="mysql")), wider)
        if op in _WIDENING and wider.bits == 64:
            return Value(computed, wider)
        if op is exp.Mod and isinstance(right.sql, exp.Literal) and int(right.sql.this) != 0:
            return Value(computed, wider)
        if op in _WIDENING:
            raise Unsupported(
                f"{self.name} computes {wider} arithmetic in BIGINT: Spark raises on {wider} overflow, {self.name} does not"
            )
        raise Unsupported(f"{self.name}: division and % by zero return NULL where ANSI Spark raises")


def _absolute(translator: Translator, node: exp.Expression) -> Value:
    value = translator.value(node.this)
    if value.type.kind is Kind.INTEGRAL and value.type.bits < 64:
        raise Unsupported(f"abs() over {value.type}: MySQL widens to BIGINT where Spark raises on overflow")
    return functions.absolute(translator, node)


MariadbDialect.functions[exp.Abs] = _absolute


class Mysql8Dialect(MariadbDialect):
    """MySQL 8: the NO PAD code point collation is ``utf8mb4_0900_bin``."""

    name = "MySQL"
    binary_collation_name = "utf8mb4_0900_bin"

    def statement_timeout(self, seconds: float) -> str:
        return f"SET SESSION max_execution_time = {int(seconds * 1000)}"
