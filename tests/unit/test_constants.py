"""Spark's typing of constants and its implicit casts, as Sluice mirrors them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.pushdown.constants import NotRepresentable, coerce, common_type, evaluate, float32
from sluice.types import DOUBLE, SparkType


def const(text: str, zone: str = "UTC"):
    return evaluate(cast(exp.Expression, sqlglot.parse_one(text, read="spark")), zone)


@pytest.mark.parametrize(
    "text,type_name",
    [
        ("1", "int"),
        ("2147483648", "bigint"),
        ("-2147483648", "int"),
        ("1.50", "decimal(3,2)"),
        ("0.5", "decimal(1,1)"),
        ("1e3", "double"),
        ("1.5D", "double"),
        ("1L", "bigint"),
        ("1.5BD", "decimal(2,1)"),
        ("'x'", "string"),
        ("DATE '2024-02-29'", "date"),
        ("TIMESTAMP '2024-01-01 00:00:00'", "timestamp"),
        ("TIMESTAMP_NTZ '2024-01-01 00:00:00'", "timestamp_ntz"),
        ("TRUE", "boolean"),
        ("double('NaN')", "double"),
    ],
)
def test_literal_types(text: str, type_name: str) -> None:
    assert const(text).type.name == type_name


def test_timestamp_literals_use_the_session_zone_like_java_time() -> None:
    gap = const("TIMESTAMP '2024-03-10 02:30:00'", "America/New_York").value  # in the spring-forward gap
    assert gap == dt.datetime(2024, 3, 10, 7, 30, tzinfo=dt.timezone.utc)
    overlap = const("TIMESTAMP '2024-11-03 01:30:00'", "America/New_York").value  # earlier offset wins
    assert overlap == dt.datetime(2024, 11, 3, 5, 30, tzinfo=dt.timezone.utc)
    explicit = const("TIMESTAMP '2024-01-01 00:00:00+02:00'", "America/New_York").value
    assert explicit == dt.datetime(2023, 12, 31, 22, 0, tzinfo=dt.timezone.utc)


def test_common_types_follow_spark() -> None:
    assert common_type(SparkType("float"), SparkType("decimal(1,1)")) == DOUBLE
    assert (
        common_type(SparkType("float"), SparkType("int")) == DOUBLE
    )  # ANSI: CAST(16777216 AS FLOAT) = 16777217 is false
    assert common_type(SparkType("int"), SparkType("decimal(2,1)")) == SparkType("decimal(2,1)")
    assert common_type(SparkType("bigint"), SparkType("double")) == DOUBLE
    assert common_type(SparkType("int"), SparkType("string")) is None


def test_coercion_rounds_like_java() -> None:
    assert coerce(const("0.1"), SparkType("float"), "UTC").value == float32(0.1)
    assert coerce(const("'2024-02-29'"), SparkType("date"), "UTC").value == dt.date(2024, 2, 29)
    assert coerce(const("1"), SparkType("decimal(5,2)"), "UTC").value == Decimal(1)
    with pytest.raises(NotRepresentable):
        coerce(const("'nope'"), SparkType("timestamp"), "UTC")


def test_an_instant_past_year_9999_in_utc_is_not_representable() -> None:
    """Valid in Spark (its range reaches year 294247), past Python's datetime: Sluice leaves it to Spark
    instead of raising OverflowError (found by recording the walkers: 37 of 586 predicates broke the Flight encoder)."""
    from sluice.pushdown.constants import parse_timestamp

    assert parse_timestamp("9999-12-31 23:59:59.999999", "America/New_York") is None
    assert parse_timestamp("9999-12-31 23:59:59.999999", None) is not None  # a wall-clock value still fits
