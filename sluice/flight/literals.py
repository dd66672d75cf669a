"""Typed constants: from a filter encoding to the node the pushdown core types the same way.

Classification decides by types (``int_col = 1.5`` compares as decimals, a float constant
is rounded to float), so a constant must reach the core with exactly the Spark type its
sender meant. :func:`constant_node` spells a :class:`Constant` as the Spark SQL node that
:func:`sluice.pushdown.constants.evaluate` types back to the same value and type;
:func:`from_json` / :func:`to_json` are the Sluice JSON spelling of a constant, checked
strictly: a value that is not of its declared type is the client's error, never guessed.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from sluice.dialects.base import wall_clock
from sluice.flight.protocol import RequestError
from sluice.pushdown.constants import Constant, float32, integer_type
from sluice.pushdown.terms import Unsupported
from sluice.types import Kind, SparkType

_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _data_type(spark: SparkType) -> exp.DataType:
    return exp.DataType.build(spark.name, dialect="spark")


def constant_node(constant: Constant) -> exp.Expression:
    """The Spark SQL node whose typed value is ``constant`` (see the module docstring)."""
    value, spark = constant.value, constant.type
    kind = spark.kind
    if value is None:
        return exp.Null() if kind is Kind.NULL else exp.Cast(this=exp.Null(), to=_data_type(spark))
    if kind is Kind.BOOLEAN:
        return exp.Boolean(this=bool(value))
    if kind is Kind.INTEGRAL:
        number = exp.Literal.number(int(value))
        return number if integer_type(int(value)) == spark else exp.Cast(this=number, to=_data_type(spark))
    if kind is Kind.DECIMAL:
        return exp.Cast(this=exp.Literal.string(format(Decimal(value), "f")), to=_data_type(spark))
    if kind is Kind.FLOAT:
        return exp.Cast(this=exp.Literal.string(_float_text(float(value))), to=_data_type(spark))
    if kind is Kind.STRING:
        return exp.Literal.string(str(value))
    if kind is Kind.DATE:
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=_data_type(spark))
    if kind is Kind.TIMESTAMP:
        utc = value.astimezone(dt.timezone.utc)
        return exp.Cast(this=exp.Literal.string(wall_clock(utc) + "Z"), to=_data_type(spark))
    if kind is Kind.TIMESTAMP_NTZ:
        return exp.Cast(this=exp.Literal.string(wall_clock(value)), to=_data_type(spark))
    raise Unsupported(f"{spark} constants are not pushed")


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def to_json(constant: Constant) -> dict[str, Any]:
    """``{"literal": value, "type": spark type}``: the Sluice JSON spelling of ``constant``."""
    value, spark = constant.value, constant.type
    kind = spark.kind
    if value is None or kind in (Kind.BOOLEAN, Kind.STRING):
        spelled: Any = value
    elif kind is Kind.INTEGRAL:
        spelled = int(value)
    elif kind is Kind.DECIMAL:
        spelled = format(Decimal(value), "f")
    elif kind is Kind.FLOAT:
        number = float(value)
        spelled = _float_text(number) if math.isnan(number) or math.isinf(number) else number
    elif kind is Kind.DATE:
        spelled = value.isoformat()
    elif kind is Kind.TIMESTAMP:
        spelled = wall_clock(value.astimezone(dt.timezone.utc)).replace(" ", "T") + "Z"
    elif kind is Kind.TIMESTAMP_NTZ:
        spelled = wall_clock(value).replace(" ", "T")
    else:
        raise Unsupported(f"{spark} constants are not pushed")
    return {"literal": spelled, "type": spark.name}


def from_json(value: Any, type_name: Any) -> Constant:
    """The constant ``{"literal": value, "type": type_name}``; a value not of its type is a :class:`RequestError`."""
    if not isinstance(type_name, str):
        raise RequestError(f'a literal needs a "type" (a Spark type name such as "bigint"), not {type_name!r}')
    try:
        spark = SparkType(type_name)
    except ValueError:
        raise RequestError(
            f"literal type {type_name!r} is not a Spark type Sluice knows (boolean, tinyint, smallint, int, "
            "bigint, float, double, decimal(p,s), string, binary, date, timestamp, timestamp_ntz, null)"
        ) from None
    check_decimal(spark)
    if value is None:
        return Constant(None, spark)
    kind = spark.kind
    mismatch = RequestError(f"literal {_shown(value)} is not a valid {spark}")
    if kind is Kind.NULL:
        raise mismatch
    if kind is Kind.BOOLEAN:
        if not isinstance(value, bool):
            raise mismatch
        return Constant(value, spark)
    if kind is Kind.INTEGRAL:
        if type(value) is not int:
            raise mismatch
        low, high = spark.integral_range()
        if not low <= value <= high:
            raise RequestError(f"literal {value} is out of range for {spark} ({low}..{high})")
        return Constant(value, spark)
    if kind is Kind.DECIMAL:
        return Constant(_decimal(value, spark, mismatch), spark)
    if kind is Kind.FLOAT:
        number = _float(value, mismatch)
        return Constant(number if spark.bits == 64 else float32(number), spark)
    if kind is Kind.STRING:
        if not isinstance(value, str):
            raise mismatch
        return Constant(value, spark)
    if kind is Kind.BINARY:
        raise Unsupported("binary constants are not pushed")
    if not isinstance(value, str):
        raise mismatch
    if kind is Kind.DATE:
        return Constant(_date(value, mismatch), spark)
    return Constant(_timestamp(value, kind is Kind.TIMESTAMP, spark), spark)


def check_decimal(spark: SparkType) -> None:
    """Spark's decimals have 1 to 38 digits and a scale of at most the precision; a wider one
    (``decimal(999999999,2)``) would overflow the arithmetic that types its constants."""
    if spark.kind is Kind.DECIMAL:
        precision, scale = spark.precision_scale
        if not 0 < precision <= 38 or scale > precision:
            raise RequestError(f"{spark} is not a Spark decimal type (precision 1 to 38, scale at most the precision)")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _decimal(value: Any, spark: SparkType, mismatch: RequestError) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise mismatch
    try:
        number = Decimal(value)
    except InvalidOperation:
        raise mismatch from None
    precision, scale = spark.precision_scale
    if not number.is_finite():
        raise mismatch
    wide = Context(prec=100)  # decimal(38, s) needs more than the default 28 digits
    quantized = (
        number.quantize(Decimal(1).scaleb(-scale), context=wide) if abs(number) < Decimal(10) ** precision else None
    )
    if quantized is None or quantized != number or abs(quantized) >= Decimal(10) ** (precision - scale):
        raise RequestError(f"literal {_shown(value)} does not fit {spark}")
    return quantized


def _float(value: Any, mismatch: RequestError) -> float:
    if isinstance(value, str):
        if value not in _FLOAT_WORDS:
            raise mismatch
        return _FLOAT_WORDS[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise mismatch
    try:
        return float(value)
    except OverflowError:  # an integer beyond the double range
        raise mismatch from None


def _date(value: str, mismatch: RequestError) -> dt.date:
    try:
        if len(value) != 10:
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        raise mismatch from None


def _timestamp(value: str, instant: bool, spark: SparkType) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        raise RequestError(
            f"literal {_shown(value)} is not a valid {spark} (ISO 8601, e.g. 2024-03-10T07:00:00Z)"
        ) from None
    if instant and parsed.tzinfo is None:
        raise RequestError(
            f"timestamp literal {_shown(value)} has no zone offset; a timestamp is an instant "
            "(write ...Z or ...+01:00, or use type timestamp_ntz for a wall-clock reading)"
        )
    if not instant and parsed.tzinfo is not None:
        raise RequestError(
            f"timestamp_ntz literal {_shown(value)} has a zone offset; a timestamp_ntz is a wall-clock reading"
        )
    try:
        return parsed.astimezone(dt.timezone.utc) if instant else parsed
    except OverflowError:
        raise RequestError(f"timestamp literal {_shown(value)} is out of range in UTC") from None
