"""Spark's Python Data Source filters as Spark SQL predicate trees.

Spark hands ``pushFilters`` AND-ed simple filters (EqualTo, In, Not, StringStartsWith,
...). Each becomes the sqlglot tree of the same predicate, so the one classifier that
serves ``Federation.sql`` answers them too.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

from pyspark.sql import datasource as ds
from sqlglot import exp

from sluice.dialects.base import wall_clock
from sluice.pushdown.constants import decimal_type
from sluice.pushdown.translator import Unsupported

_COMPARISONS = {
    ds.EqualTo: exp.EQ,
    ds.EqualNullSafe: exp.NullSafeEQ,
    ds.GreaterThan: exp.GT,
    ds.GreaterThanOrEqual: exp.GTE,
    ds.LessThan: exp.LT,
    ds.LessThanOrEqual: exp.LTE,
}


def _column(attribute: tuple[str, ...]) -> exp.Column:
    if len(attribute) != 1:
        raise Unsupported(f"nested field {'.'.join(attribute)} is filtered by Spark")
    return exp.column(attribute[0], quoted=True)


def literal(value: object) -> exp.Expression:
    """A Spark SQL constant for a Python value handed over by Spark."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):
        text = "NaN" if math.isnan(value) else repr(value)
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("DOUBLE"))
    if isinstance(value, Decimal):
        if decimal_type(value) is None or not value.is_finite():
            raise Unsupported(f"decimal {value} exceeds Spark's precision")
        return exp.Literal.number(format(value, "f"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise Unsupported("timestamp filter value without a time zone: its instant is ambiguous")
        text = wall_clock(value.astimezone(dt.timezone.utc)) + "Z"
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMPTZ"))
    if isinstance(value, dt.date):
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE"))
    raise Unsupported(f"filter value of type {type(value).__name__}")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def to_expression(spark_filter: ds.Filter) -> exp.Expression:
    """The predicate tree of one Spark filter, or raise :class:`Unsupported`."""
    kind = type(spark_filter)
    if kind in _COMPARISONS:
        return _COMPARISONS[kind](this=_column(spark_filter.attribute), expression=literal(spark_filter.value))
    if isinstance(spark_filter, ds.In):
        return exp.In(this=_column(spark_filter.attribute), expressions=[literal(v) for v in spark_filter.value])
    if isinstance(spark_filter, ds.IsNull):
        return exp.Is(this=_column(spark_filter.attribute), expression=exp.Null())
    if isinstance(spark_filter, ds.IsNotNull):
        return exp.Not(this=exp.Is(this=_column(spark_filter.attribute), expression=exp.Null()))
    if isinstance(spark_filter, ds.Not):
        return exp.Not(this=exp.Paren(this=to_expression(spark_filter.child)))
    patterns = {ds.StringStartsWith: "{}%", ds.StringEndsWith: "%{}", ds.StringContains: "%{}%"}
    if kind in patterns:
        pattern = patterns[kind].format(_like_escape(spark_filter.value))
        return exp.Like(this=_column(spark_filter.attribute), expression=exp.Literal.string(pattern))
    raise Unsupported(f"filter {kind.__name__} is evaluated by Spark")
