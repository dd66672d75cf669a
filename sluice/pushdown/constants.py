"""Typing of Spark SQL constants, exactly as Spark types them.

Classification decides by types: ``int_col = 1.5`` compares as decimals in Spark,
``float_col = 0.1`` as doubles. So every constant in a predicate is evaluated here to a
Python value plus the Spark type Spark would give it, and then converted to the type
Spark's coercion picks for the comparison (:func:`coerce`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from sqlglot import exp

from sluice.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    Kind,
    SparkType,
)


class ZoneNameError(ValueError):
    """A session time zone that is no zone's name by its shape (checked before any lookup)."""


class NotRepresentable(Exception):
    """Spark's coercion of a constant cannot be mirrored exactly; the reason says why."""


#: meta key on a node that is a constant of a known Spark type (Spark's own typed literals,
#: as the catalog layer receives them): the :class:`Constant`, taken as it is
TYPED = "sluice_typed_constant"


@dataclass(frozen=True)
class Constant:
    """A typed constant. Timestamps (LTZ) are aware UTC datetimes; NTZ ones are naive."""

    #: its Python type follows ``type.kind`` (int, Decimal, float, str, bytes, bool, date,
    #: datetime) or None: a union no code could use without the kind, hence Any
    value: Any
    type: SparkType


_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?")
_TS_ZONE = re.compile(r"(?P<ts>.*?)\s*(?P<zone>Z|UTC|[+-]\d{2}:?\d{2})$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: a numeric literal as Spark's grammar writes one (its type suffix is sqlglot's CAST)
_NUMBER = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # ASCII digits only, as Spark's lexer
_FLOAT_WORDS = {
    "nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
}


def float32(value: float) -> float:
    """Round a double to the nearest float, as Java's (float) cast does."""
    if math.isnan(value) or math.isinf(value):
        return value
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def decimal_type(value: Decimal) -> SparkType | None:
    """Spark's type for a decimal literal such as ``1.50`` (decimal(3,2))."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    precision = max(len(digits) + max(exponent, 0), scale, 1)
    return SparkType(f"decimal({precision},{scale})") if precision <= 38 else None


def integer_type(value: int) -> SparkType | None:
    if -(1 << 31) <= value < (1 << 31):
        return INT
    if -(1 << 63) <= value < (1 << 63):
        return BIGINT
    digits = len(str(abs(value)))
    return SparkType(f"decimal({digits},0)") if digits <= 38 else None


def parse_timestamp(text: str, zone: str | None) -> dt.datetime | None:
    """Parse Spark's timestamp literal text; aware UTC when ``zone`` is given (LTZ)."""
    text = text.strip()
    explicit_zone = None
    match = _TS_ZONE.fullmatch(text)
    if match and zone is not None:
        text, explicit_zone = match["ts"], match["zone"]
    parts = _TS.fullmatch(text)
    if not parts:
        return None
    year, month, day, hour, minute, second, fraction = parts.groups()
    try:
        value = dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")),
        )
    except ValueError:
        return None
    if zone is None:
        return value
    if explicit_zone in ("Z", "UTC"):
        tz: dt.tzinfo = dt.timezone.utc
    elif explicit_zone:
        sign = -1 if explicit_zone[0] == "-" else 1
        digits = explicit_zone[1:].replace(":", "")
        tz = dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    else:
        tz = session_zone(zone)
    # fold=0: the earlier offset in an overlap and a forward shift in a gap, as java.time does.
    try:
        return value.replace(tzinfo=tz).astimezone(dt.timezone.utc)
    except OverflowError:  # an instant past year 9999 in UTC: valid in Spark, not representable here
        return None


#: the longest zone name :func:`session_zone` looks up (IANA's longest is 32 characters)
MAX_ZONE_NAME = 64
#: an IANA region name: at most four ``/``-separated parts of letters, digits, ``_``, ``+``, ``-``
#: (``Europe/Paris``, ``America/Argentina/Buenos_Aires``, ``Etc/GMT+5``)
_ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,3}")


def session_zone(zone: str) -> dt.tzinfo:
    """The tzinfo of a Spark session time zone: ``UTC``, an offset (``+05:30``, ``GMT-8``) or
    an IANA name.

    A name is checked for length and shape before :class:`~zoneinfo.ZoneInfo` sees it:
    ZoneInfo resolves a name as a resource path, one package per ``/`` part, and a name of
    a thousand parts (a Flight request can carry one) exhausts Python's recursion limit
    there. Raises :class:`ZoneNameError` for such a name, ZoneInfo's own errors for an unknown one.
    """
    if zone.upper() in ("UTC", "Z", "GMT"):
        return dt.timezone.utc
    match = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?", zone)
    if match:
        sign = -1 if match[1] == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(match[2]), minutes=int(match[3] or 0)))
    if len(zone) > MAX_ZONE_NAME or not _ZONE_NAME.fullmatch(zone):
        raise ZoneNameError(
            f"{zone[:MAX_ZONE_NAME]!r}{'...' if len(zone) > MAX_ZONE_NAME else ''} is not a time zone name: "
            f"expected an IANA name such as 'Europe/Paris' (at most {MAX_ZONE_NAME} characters, four parts) "
            "or an offset such as '+05:30'"
        )
    return ZoneInfo(zone)


def is_fixed_offset(zone: str) -> bool:
    """True when the zone never changes offset, so wall clock and instant order agree."""
    tz = session_zone(zone)
    if isinstance(tz, dt.timezone):
        return True
    return zone.startswith("Etc/") or zone in ("UCT", "Universal", "Zulu")


def evaluate(node: exp.Expression, zone: str) -> Constant | None:
    """The typed value of a constant expression, or None if ``node`` is not one we type."""
    if node._meta and TYPED in node._meta:
        return node._meta[TYPED]  # set only by sluice.spark.v2.literal
    if isinstance(node, exp.Paren):
        return evaluate(node.this, zone)
    if isinstance(node, exp.Null):
        return Constant(None, NULL)
    if isinstance(node, exp.Boolean):
        return Constant(bool(node.this), BOOLEAN)
    if isinstance(node, exp.Neg):
        inner = evaluate(node.this, zone)
        if inner is None or not inner.type.is_numeric or inner.value is None:
            return None
        value = -inner.value
        if inner.type.kind is Kind.INTEGRAL:
            kind = integer_type(value)
            return Constant(value, kind) if kind else None
        return Constant(value, inner.type)
    if isinstance(node, exp.Literal):
        return _literal(node)
    if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, (exp.Literal, exp.Neg, exp.Null)):
        return _cast_literal(node, zone)
    return None


def _literal(node: exp.Literal) -> Constant | None:
    text = node.this
    if node.is_string:
        return Constant(text, STRING)
    if not _NUMBER.fullmatch(text):
        return None  # sqlglot reads some malformed numbers as one token ('1e', '1e308-9'); Spark does not
    if re.search(r"[eE]", text):
        return Constant(float(text), DOUBLE)
    if "." in text:
        value = Decimal(text)
        kind = decimal_type(value)
        return Constant(value, kind) if kind else Constant(float(text), DOUBLE)
    value_int = int(text)
    kind = integer_type(value_int)
    return Constant(value_int, kind) if kind else None


def _cast_literal(node: exp.Cast, zone: str) -> Constant | None:
    inner = evaluate(node.this, zone)
    if inner is None:
        return None
    target = node.to
    if inner.value is None:
        spark = spark_type_of(target)
        return Constant(None, spark) if spark else None
    text = str(inner.value)
    dtype = target.this
    DT = exp.DataType.Type
    try:
        if dtype in (DT.DOUBLE, DT.FLOAT):
            value = _FLOAT_WORDS.get(text.strip().lower())
            number = float(text) if value is None else value
            return Constant(number, DOUBLE) if dtype is DT.DOUBLE else Constant(float32(number), SparkType("float"))
        if dtype in (DT.BIGINT, DT.INT, DT.SMALLINT, DT.TINYINT) and inner.type.kind is Kind.INTEGRAL:
            spark = spark_type_of(target)
            assert spark is not None
            low, high = spark.integral_range()
            return Constant(int(text), spark) if low <= int(text) <= high else None
        if dtype is DT.DECIMAL and (inner.type.is_numeric or inner.type.kind is Kind.STRING):
            spark = spark_type_of(target)
            exact = Decimal(text.strip())
            if spark is None or not exact.is_finite():
                return None
            precision, scale = spark.precision_scale
            fits = exact == exact.quantize(Decimal(1).scaleb(-scale)) and abs(exact) < Decimal(10) ** (
                precision - scale
            )
            return Constant(exact, spark) if fits else None  # rounding casts are left to Spark
        if dtype is DT.DATE and inner.type.kind is Kind.STRING and _DATE.fullmatch(text.strip()):
            return Constant(dt.date.fromisoformat(text.strip()), DATE)
        if dtype in (DT.TIMESTAMPTZ, DT.TIMESTAMPLTZ) and inner.type.kind is Kind.STRING:
            stamp = parse_timestamp(text, zone)
            return Constant(stamp, TIMESTAMP) if stamp else None
        if dtype in (DT.TIMESTAMPNTZ, DT.TIMESTAMP) and inner.type.kind is Kind.STRING:
            stamp = parse_timestamp(text, None)
            return Constant(stamp, TIMESTAMP_NTZ) if stamp else None
        if dtype is DT.BOOLEAN and inner.type.kind is Kind.BOOLEAN:
            return inner
    except (ValueError, InvalidOperation):
        return None
    return None


def spark_type_of(target: exp.DataType) -> SparkType | None:
    """Map a sqlglot data type (parsed as Spark SQL) to a Spark type."""
    DT = exp.DataType.Type
    simple = {
        DT.BOOLEAN: "boolean",
        DT.TINYINT: "tinyint",
        DT.SMALLINT: "smallint",
        DT.INT: "int",
        DT.BIGINT: "bigint",
        DT.FLOAT: "float",
        DT.DOUBLE: "double",
        DT.TEXT: "string",
        DT.VARCHAR: "string",
        DT.DATE: "date",
        DT.TIMESTAMPTZ: "timestamp",
        DT.TIMESTAMPLTZ: "timestamp",
        DT.TIMESTAMPNTZ: "timestamp_ntz",
        DT.TIMESTAMP: "timestamp_ntz",
        DT.BINARY: "binary",
    }
    if target.this in simple:
        return SparkType(simple[target.this])
    if target.this is DT.DECIMAL:
        texts = [p.this.this if isinstance(p.this, exp.Literal) else p.name for p in target.expressions]
        if len(texts) > 2 or not all(text.isascii() and text.isdigit() for text in texts):
            return None
        precision, scale = ([int(text) for text in texts] + [10, 0][len(texts) :])[:2]
        return SparkType(f"decimal({precision},{scale})") if 0 < precision <= 38 and scale <= precision else None
    return None


def common_type(column: SparkType, constant: SparkType) -> SparkType | None:
    """The type Spark compares ``column`` and ``constant`` in, or None if we don't mirror it.

    Only the coercions that Sluice reproduces exactly are listed; anything else (a string
    constant against a number, which ANSI Spark casts and may reject) is not pushed.
    """
    a, b = column.kind, constant.kind
    if b is Kind.NULL or column == constant:
        return column
    if a is Kind.INTEGRAL and b is Kind.INTEGRAL:
        return column if column.bits >= constant.bits else constant
    if {a, b} <= {Kind.INTEGRAL, Kind.DECIMAL}:
        return constant if b is Kind.DECIMAL else column  # exact decimal comparison
    if a is Kind.FLOAT and b in (Kind.INTEGRAL, Kind.DECIMAL):
        return DOUBLE  # ANSI Spark compares float with integers and decimals as doubles (16777217 != float 16777216)
    if b is Kind.FLOAT and a in (Kind.INTEGRAL, Kind.DECIMAL, Kind.FLOAT):
        return DOUBLE if DOUBLE in (column, constant) or a is not Kind.FLOAT else constant
    if a is Kind.STRING and b is Kind.STRING:
        return STRING
    if a is Kind.DATE and b is Kind.STRING:
        return DATE
    if a in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ) and b in (Kind.STRING, Kind.DATE):
        return column
    if {a, b} == {Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ} or (a is Kind.DATE and b in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ)):
        return TIMESTAMP if Kind.TIMESTAMP in (a, b) else TIMESTAMP_NTZ
    return None


def coerce(constant: Constant, target: SparkType, zone: str) -> Constant:
    """Convert ``constant`` to ``target`` as Spark's implicit cast would, or raise."""
    value, source = constant.value, constant.type
    if value is None or source == target:
        return Constant(value, target)
    kind = target.kind
    if kind is Kind.INTEGRAL and source.kind is Kind.INTEGRAL:
        return Constant(value, target)
    if kind is Kind.DECIMAL and source.kind in (Kind.INTEGRAL, Kind.DECIMAL):
        return Constant(Decimal(value), target)
    if kind is Kind.FLOAT and source.is_numeric:
        number = float(value)
        return Constant(number if target.bits == 64 else float32(number), target)
    if kind is Kind.DATE and source.kind is Kind.STRING and _DATE.fullmatch(str(value).strip()):
        return Constant(dt.date.fromisoformat(str(value).strip()), target)
    if kind in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ):
        instant = kind is Kind.TIMESTAMP
        if source.kind is Kind.STRING:
            stamp = parse_timestamp(str(value), zone if instant else None)
            if stamp is None:
                raise NotRepresentable(f"{value!r} is not a timestamp Sluice parses like Spark")
            return Constant(stamp, target)
        wall = dt.datetime.combine(value, dt.time()) if source.kind is Kind.DATE else value
        if source.kind is Kind.DATE and not instant:
            return Constant(wall, target)
        if instant and source.kind in (Kind.DATE, Kind.TIMESTAMP_NTZ):
            return Constant(wall.replace(tzinfo=session_zone(zone)).astimezone(dt.timezone.utc), target)
    raise NotRepresentable(f"Spark's cast of {source} {value!r} to {target} is not mirrored")
