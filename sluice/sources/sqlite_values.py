"""SQLite's declared types as Spark types, and the conversions both SQLite readers share.

SQLite keeps each value's storage class (INTEGER, REAL, TEXT, BLOB), not the declared
type: a ``SMALLINT`` column may hold 100000 and a ``DECIMAL(10,2)`` column 1.005 or
``'abc'``. The declared type decides the Spark type (the same one the other sources give
that declaration), and every stored value is converted to it by the rules here, or
refused with :class:`Unfit`, which the reader reports naming table, column and row. The
row reader (``sqlite.py``) and the ADBC reader (``sqlite_arrow.py``) both convert through
this module, so they cannot disagree.

Decimals: an INTEGER is itself; a REAL is the shortest decimal that reads back as the
stored double (Python's ``repr``; ``0.1`` stored as REAL reads as 0.1, not as the double's
binary expansion); a TEXT must be a plain decimal number (``12.50``, ``-1e3``) and is read
exactly. The result must fit ``decimal(p,s)`` without rounding; anything else (a BLOB,
infinity, 1.005 in a scale-2 column, 1e20 in a ``DECIMAL(20,0)``) is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Context, Decimal, InvalidOperation

import pyarrow as pa
import pyarrow.compute as pc

from sluice.types import SparkType

_DECIMAL = re.compile(r"\s*(?:DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*", re.IGNORECASE)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: integer declarations that name a width (as in MySQL), widest first; every other INT is 64-bit
_WIDTHS = (
    ("MEDIUMINT", "int", "int"),
    ("SMALLINT", "smallint", "int"),
    ("TINYINT", "tinyint", "smallint"),
    ("INT2", "smallint", "int"),
    ("INT4", "int", "bigint"),
)
#: Spark's decimal precision limit
MAX_PRECISION = 38
#: wide enough to quantize any decimal(38, s) value whatever its exponent (the default keeps 28 digits)
_WIDE = Context(prec=2 * MAX_PRECISION + 2)


def spark_type_for(declared: str) -> SparkType:
    """The Spark type of a column declared ``declared``, as the other sources read that declaration.

    The affinity rules of SQLite decide the family (any ``INT`` is an integer, ``CHAR``/
    ``CLOB``/``TEXT`` text, ``REAL``/``FLOA``/``DOUB`` floating point); the name refines it:
    ``TINYINT``/``SMALLINT``/``INT2``/``MEDIUMINT``/``INT4`` are the narrow integers
    (``UNSIGNED`` one width up), ``DECIMAL(p,s)``/``NUMERIC(p,s)`` are decimals. ``FLOAT``
    and ``REAL`` are doubles: SQLite stores every REAL in 8 bytes.
    """
    upper = declared.upper()
    if upper.startswith("BOOL"):
        return SparkType("boolean")
    if upper.startswith(("DATETIME", "TIMESTAMP")):
        return SparkType("timestamp_ntz")
    if upper.startswith("DATE"):
        return SparkType("date")
    if "INT" in upper:
        for word, signed, unsigned in _WIDTHS:
            if upper.startswith(word):
                return SparkType(unsigned if "UNSIGNED" in upper else signed)
        return SparkType("bigint")
    if any(word in upper for word in ("CHAR", "CLOB", "TEXT")):
        return SparkType("string")
    if "BLOB" in upper:
        return SparkType("binary")
    decimal = _DECIMAL.fullmatch(declared)
    if decimal and 0 < int(decimal[1]) <= MAX_PRECISION and int(decimal[2] or 0) <= int(decimal[1]):
        return SparkType(f"decimal({int(decimal[1])},{int(decimal[2] or 0)})")
    if any(word in upper for word in ("REAL", "FLOA", "DOUB")) or upper.startswith(("NUMERIC", "DECIMAL")):
        return SparkType("double")
    return SparkType("string")


class Unfit(ValueError):
    """A stored value the planned type cannot hold: ``value`` as SQLite returned it, and why."""

    def __init__(self, value: object, why: str) -> None:
        super().__init__(why)
        self.value = value
        self.why = why


def storage_class(value: object) -> str:
    """SQLite's name for the storage class of a value the sqlite3 module returned."""
    return {int: "INTEGER", float: "REAL", str: "TEXT", bytes: "BLOB"}.get(type(value), type(value).__name__)


def decimal_value(value: object, precision: int, scale: int) -> Decimal | None:
    """``value`` (as sqlite3 returns it) as a decimal(precision, scale), or :class:`Unfit`."""
    if value is None:
        return None
    shown = f"{storage_class(value)} {value!r}"
    if isinstance(value, bytes):  # not Unfit: a blob is not looked up again by its bytes
        raise ValueError("a BLOB value")
    if not isinstance(value, (int, float, str)):
        raise Unfit(value, f"{shown} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise Unfit(value, f"{shown} is not a finite number")
    if isinstance(value, str) and not _NUMBER.fullmatch(value):
        raise Unfit(value, f"{shown} is not a decimal number")
    try:
        number = Decimal(repr(value) if isinstance(value, float) else value)
    except InvalidOperation:
        raise Unfit(value, f"{shown} is not a decimal number") from None
    if number.adjusted() >= precision - scale and number != 0:
        raise Unfit(value, f"{shown} has more than {precision - scale} digits before the decimal point")
    exact = _WIDE.quantize(number, Decimal(1).scaleb(-scale))
    if exact != number:
        raise Unfit(value, f"{shown} has more than {scale} decimal places (reading it would round it)")
    return exact


def decimal_array(values: Iterable[object], arrow_type: pa.Decimal128Type) -> pa.Array:
    """The values as Arrow decimals of ``arrow_type``; the first that does not fit raises :class:`Unfit`."""
    return pa.array([decimal_value(v, arrow_type.precision, arrow_type.scale) for v in values], arrow_type)


def narrowed(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """An int64 array as the narrower integer ``arrow_type``; a value out of its range raises :class:`Unfit`."""
    if array.type == arrow_type:
        return array
    info = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32}[arrow_type]
    low, high = -(1 << (info - 1)), (1 << (info - 1)) - 1
    outside = pc.filter(array, pc.or_(pc.less(array, low), pc.greater(array, high)))
    if len(outside):
        value = outside[0].as_py()
        raise Unfit(value, f"INTEGER {value} is outside the range of {arrow_type} ({low} to {high})")
    return pc.cast(array, arrow_type)
