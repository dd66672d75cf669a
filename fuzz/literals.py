"""Spark SQL spellings of typed constants: many spellings per value, on purpose.

The same value written ``1``, ``1L``, ``1.0``, ``1D``, ``1BD`` or ``CAST('1' AS BIGINT)``
gets a different Spark type, so a comparison with a column takes a different implicit
cast — the part of pushdown that is easiest to get subtly wrong. Timestamps are spelled
as the session zone's wall clock, with an explicit offset, as a TIMESTAMP_NTZ, as a
string or as a DATE, each of which Spark coerces differently.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal
from typing import cast
from zoneinfo import ZoneInfo


def string(text: str) -> str:
    """A Spark string literal: backslash and quote escaped with a backslash.

    (``''`` is not an escaped quote in Spark: ``'o''b'`` is two adjacent literals, ``ob``.)
    """
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _wall(value: dt.datetime) -> str:
    """ISO text without zone; ``isoformat`` keeps four-digit years (strftime may not)."""
    return value.replace(tzinfo=None).isoformat(sep=" ")


def integer(rng: random.Random, value: int) -> str:
    forms = [str(value), f"{value}L", f"{value}.0", f"{value}D", f"{value}BD", f"CAST({string(str(value))} AS BIGINT)"]
    if -(1 << 31) <= value < (1 << 31):
        forms += [f"CAST({value} AS INT)", str(value)]
    if -(1 << 15) <= value < (1 << 15):
        forms.append(f"{value}S")
    if -128 <= value < 128:
        forms.append(f"{value}Y")
    return rng.choice(forms)


def floating(rng: random.Random, value: float, real: bool = False) -> str:
    if math.isnan(value):
        return rng.choice(["double('NaN')", "CAST('NaN' AS DOUBLE)", "float('NaN')", "CAST('NaN' AS FLOAT)"])
    if math.isinf(value):
        sign = "-" if value < 0 else ""
        return rng.choice(
            [f"double('{sign}inf')", f"CAST('{sign}Infinity' AS DOUBLE)", f"CAST('{sign}Infinity' AS FLOAT)"]
        )
    text = repr(value)
    forms = [text if "e" in text else f"{text}D", f"CAST({text} AS DOUBLE)"]
    if "e" not in text:
        forms.append(text)  # a decimal literal: Spark compares it as a double against a double column
    if real or abs(value) < 3.4e38:
        forms += [f"CAST({text} AS FLOAT)"] + ([f"{text}F"] if "e" not in text else [])
    return rng.choice(forms)


def decimal_type(value: Decimal) -> tuple[int, int]:
    """The smallest (precision, scale) that holds ``value`` exactly."""
    _, digits, exponent = value.as_tuple()
    scale = max(0, -int(exponent))
    return max(1, len(digits) + max(0, int(exponent)), scale), scale


def decimal(rng: random.Random, value: Decimal, precision: int, scale: int) -> str:
    text = format(value, "f")
    forms = [text, f"{text}BD", f"CAST({string(text)} AS DECIMAL({precision},{scale}))"]
    digits = len(value.as_tuple().digits)
    if digits <= 15:
        forms.append(f"{float(value)!r}D")
    if value == value.to_integral_value() and abs(value) < (1 << 63):
        forms.append(str(int(value)))
    return rng.choice(forms)


def date(rng: random.Random, value: dt.date) -> str:
    text = value.isoformat()
    return rng.choice(
        [
            f"DATE {string(text)}",
            f"DATE {string(text)}",
            string(text),
            f"CAST({string(text)} AS DATE)",
            f"TIMESTAMP {string(text + ' 00:00:00')}",
            f"TIMESTAMP_NTZ {string(text + ' 00:00:00')}",
        ]
    )


def instant(rng: random.Random, value: dt.datetime, zone: str) -> str:
    """An aware instant, spelled in one of the ways Spark accepts for a TIMESTAMP."""
    wall = _wall(value.astimezone(ZoneInfo(zone)))
    utc = _wall(value.astimezone(dt.timezone.utc))
    return rng.choice(
        [
            f"TIMESTAMP {string(wall)}",
            f"TIMESTAMP {string(wall)}",
            f"TIMESTAMP {string(utc + 'Z')}",
            f"TIMESTAMP {string(utc + '+00:00')}",
            f"TIMESTAMP_LTZ {string(wall)}",
            f"TIMESTAMP_NTZ {string(wall)}",
            string(wall),
            f"CAST({string(wall)} AS TIMESTAMP)",
            f"DATE {string(wall[:10])}",
        ]
    )


def wall_clock(rng: random.Random, value: dt.datetime) -> str:
    """A zone-less reading, spelled as TIMESTAMP_NTZ or as something Spark coerces to it."""
    wall = _wall(value)
    return rng.choice(
        [
            f"TIMESTAMP_NTZ {string(wall)}",
            f"TIMESTAMP_NTZ {string(wall)}",
            f"TIMESTAMP {string(wall)}",
            string(wall),
            f"CAST({string(wall)} AS TIMESTAMP_NTZ)",
            f"DATE {string(wall[:10])}",
        ]
    )


_SQL_TYPES = {
    "smallint": "SMALLINT",
    "int": "INT",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "real": "FLOAT",
    "decimal": "DECIMAL(10,2)",
    "string": "STRING",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "TIMESTAMP_NTZ",
    "boolean": "BOOLEAN",
}


def spell(rng: random.Random, value: object, kind: str, zone: str, precision: int = 38, scale: int = 0) -> str:
    """``value`` of logical ``kind`` as a Spark SQL constant; ``None`` as a (typed) NULL."""
    if value is None:
        return rng.choice(["NULL", "NULL", f"CAST(NULL AS {_SQL_TYPES[kind]})"])
    if kind in ("smallint", "int", "bigint"):
        return integer(rng, cast(int, value))  # the kind says what value is
    if kind in ("double", "real"):
        return floating(rng, cast(float, value), kind == "real")
    if kind == "decimal":
        return decimal(rng, cast(Decimal, value), precision, scale)
    if kind == "string":
        return string(cast(str, value))
    if kind == "date":
        return date(rng, cast(dt.date, value))
    if kind == "timestamp":
        return instant(rng, cast(dt.datetime, value), zone)
    if kind == "timestamp_ntz":
        return wall_clock(rng, cast(dt.datetime, value))
    if kind == "boolean":
        return "TRUE" if value else "FALSE"
    raise ValueError(f"unknown kind {kind!r}")
