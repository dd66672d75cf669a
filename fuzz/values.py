"""Edge value pools, per logical column kind.

Each pool holds the values where engines are known to disagree (see DESIGN.md §2):
NaN, ±inf, -0.0, subnormals, integer extremes, decimals at their precision limits,
strings that collations, padding, case folding and LIKE escaping treat differently, dates
at the ends of the calendar and timestamps around the America/New_York DST changes.
A table column draws a random subset of its kind's pool plus a few random ordinary
values, so values repeat (equalities between columns and literals hit) and differ from
column to column.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from collections.abc import Sequence
from decimal import Context, Decimal, localcontext

UTC = dt.timezone.utc

_INT_RANGES = {
    "smallint": (-(1 << 15), (1 << 15) - 1),
    "int": (-(1 << 31), (1 << 31) - 1),
    "bigint": (-(1 << 63), (1 << 63) - 1),
}

INTS = {
    "smallint": [0, 1, -1, 2, 7, 42, 100, -100, 255, 32767, -32768, 32766],
    "int": [0, 1, -1, 2, 7, 42, 100, -100, 1000, 65535, 2147483647, -2147483648, 2147483646, 16777217],
    "bigint": [
        0,
        1,
        -1,
        42,
        3000000000,
        -2147483649,
        2147483648,
        9007199254740992,
        9007199254740993,
        9223372036854775807,
        -9223372036854775808,
        9223372036854775806,
    ],
}
DOUBLES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    0.5,
    1.5,
    2.5,
    3.0,
    100.0,
    0.30000000000000004,
    1e16,
    9007199254740993.0,
    1e308,
    -1e308,
    1.7976931348623157e308,
    5e-324,
    2.2250738585072014e-308,
    math.inf,
    -math.inf,
    math.nan,
    42.0,
    2147483647.0,
    2147483648.0,
]


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32, as every engine's REAL stores it."""
    if math.isnan(value) or math.isinf(value):
        return value
    return struct.unpack("f", struct.pack("f", value))[0]


REALS = [
    float32(v)
    for v in (
        0.0,
        -0.0,
        1.0,
        1.5,
        0.1,
        -2.25,
        100.0,
        16777217.0,
        3.4028234663852886e38,
        1.1754943508222875e-38,
        1.401298464324817e-45,
        42.0,
    )
] + [math.inf, -math.inf, math.nan]

#: text atoms: case pairs (ß/SS, İ/ı, ǅ), accents precomposed and combining, padding,
#: LIKE metacharacters and escapes (% _ \ #), quotes, supplementary-plane characters
STRING_ATOMS = [
    "",
    " ",
    "  ",
    "a",
    "A",
    "b",
    "B",
    "z",
    "Z",
    "ab",
    "aB",
    "AB",
    "ß",
    "SS",
    "ss",
    "é",
    "É",
    "e\u0301",
    "İ",
    "ı",
    "i",
    "I",
    "ǅ",
    "ﬀ",
    "ff",
    "Ω",
    "\u2126",
    "\u00a0",
    "\t",
    "%",
    "_",
    "\\",
    "#",
    "'",
    '"',
    "日本",
    "😀",
    "😁",
    "Ærø",
    "~",
    "0",
    "1",
    "10",
    "9",
    "NULL",
    "-",
]


def random_string(rng: random.Random) -> str:
    """One to three atoms glued together, sometimes with leading or trailing spaces."""
    text = "".join(rng.choice(STRING_ATOMS) for _ in range(rng.randint(1, 3)))
    roll = rng.random()
    if roll < 0.15:
        text += " " * rng.randint(1, 3)
    elif roll < 0.22:
        text = " " + text
    return text


STRINGS = [
    "",
    " ",
    "a",
    "a ",
    "a  ",
    " a",
    "A",
    "ab",
    "aB",
    "Ab",
    "AB",
    "abc",
    "b",
    "B",
    "z",
    "zebra",
    "Zebra",
    "ß",
    "SS",
    "ss",
    "é",
    "É",
    "e\u0301",
    "İ",
    "ı",
    "Ω",
    "\u2126",
    "%",
    "_",
    "\\",
    "#",
    "'",
    "a%b",
    "a_b",
    "a\\b",
    "a#b",
    "a#%",
    "ab%",
    "%a",
    "_b",
    "日本",
    "😀",
    "a😀",
    "Ærø",
    "ærø",
    "o'brien",
    "NULL",
    "null",
    "MiXeD",
    "mixed",
    "1",
    "10",
    "9",
    "-1",
    "trail  ",
    "  lead",
    "a\u00a0",
    "\t",
]

DATES = [
    dt.date(1, 1, 1),
    dt.date(9999, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(1969, 12, 31),
    dt.date(2000, 1, 1),
    dt.date(2024, 2, 29),
    dt.date(2024, 3, 10),
    dt.date(2024, 3, 11),
    dt.date(2024, 11, 3),
    dt.date(1900, 1, 1),
    dt.date(1582, 10, 10),
    dt.date(1000, 1, 1),
    dt.date(2038, 1, 19),
    dt.date(1883, 11, 18),
]

#: instants (aware UTC): both America/New_York DST changes of 2024, the epoch, the ends of
#: MySQL's TIMESTAMP range, a local-mean-time instant (1800) and the ends of the calendar
INSTANTS = [
    dt.datetime(2024, 3, 10, 6, 59, 59, 999999, UTC),
    dt.datetime(2024, 3, 10, 7, 0, tzinfo=UTC),
    dt.datetime(2024, 3, 10, 7, 30, tzinfo=UTC),
    dt.datetime(2024, 3, 10, 8, 0, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 6, 0, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 6, 30, tzinfo=UTC),
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, UTC),
    dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC),
    dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC),
    dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC),
    dt.datetime(1800, 1, 1, 5, 0, tzinfo=UTC),
    dt.datetime(2000, 1, 1, 5, 0, tzinfo=UTC),
    dt.datetime(1, 1, 2, tzinfo=UTC),
    dt.datetime(9999, 12, 30, 23, 59, 59, 999999, UTC),
]

#: wall-clock readings: a reading that does not exist in New York (02:30 on 2024-03-10),
#: one that exists twice (01:30 on 2024-11-03), and their neighbours
WALLS = [
    dt.datetime(2024, 3, 10, 2, 30),
    dt.datetime(2024, 3, 10, 1, 59, 59, 999999),
    dt.datetime(2024, 3, 10, 3, 0),
    dt.datetime(2024, 11, 3, 1, 30),
    dt.datetime(2024, 11, 3, 0, 59, 59),
    dt.datetime(2024, 11, 3, 2, 0),
    dt.datetime(2000, 1, 1),
    dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
    dt.datetime(1970, 1, 1),
    dt.datetime(1, 1, 1),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    dt.datetime(1000, 1, 1),
    dt.datetime(2024, 2, 29, 12, 0),
    dt.datetime(1800, 1, 1),
]


#: decimal arithmetic wide enough for decimal(38, s) (the default context keeps 28 digits)
WIDE = Context(prec=100)


def decimal_pool(precision: int, scale: int) -> list[Decimal]:
    """Decimals that fit ``decimal(precision, scale)``, at its limits and around 0 and 1."""
    with localcontext(WIDE):
        return _decimal_pool(precision, scale)


def _decimal_pool(precision: int, scale: int) -> list[Decimal]:
    unit = Decimal(1).scaleb(-scale)
    largest = Decimal(10) ** (precision - scale) - unit
    out = [Decimal(0).quantize(unit), (-Decimal(0)).quantize(unit), largest, -largest, unit, -unit]
    for value in (
        Decimal(1),
        Decimal("1.5"),
        Decimal("-1.5"),
        Decimal("0.1"),
        Decimal("100"),
        Decimal("2.5"),
        Decimal("42"),
        Decimal("-99.99"),
        Decimal("9007199254740993"),
        Decimal("0.30000000000000004"),
    ):
        quantized = value.quantize(unit, rounding="ROUND_HALF_EVEN")
        if abs(quantized) <= largest:
            out.append(quantized)
    return out


def pool(kind: str, rng: random.Random, precision: int = 0, scale: int = 0) -> Sequence[object]:
    """The edge pool of ``kind`` plus a few random ordinary values (seeded by ``rng``)."""
    if kind in INTS:
        low, high = _INT_RANGES[kind]
        return INTS[kind] + [rng.randint(max(low, -1000), min(high, 1000)) for _ in range(3)]
    if kind == "double":
        return DOUBLES + [round(rng.uniform(-100, 100), rng.randint(0, 3)) for _ in range(3)]
    if kind == "real":
        return REALS + [float32(round(rng.uniform(-100, 100), 2)) for _ in range(3)]
    if kind == "decimal":
        with localcontext(WIDE):
            unit = Decimal(1).scaleb(-scale)
            largest = Decimal(10) ** (precision - scale) - unit
            randoms = [
                (Decimal(rng.randint(-(10**6), 10**6)) / 1000).quantize(unit, rounding="ROUND_HALF_EVEN")
                for _ in range(3)
            ]
            return decimal_pool(precision, scale) + [d for d in randoms if abs(d) <= largest]
    if kind == "string":
        return STRINGS + [random_string(rng) for _ in range(8)]
    if kind == "date":
        return DATES + [dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(-400, 400)) for _ in range(2)]
    if kind == "timestamp":
        return INSTANTS + [
            dt.datetime(2024, 3, 10, 7, tzinfo=UTC) + dt.timedelta(minutes=rng.randint(-600, 600)) for _ in range(2)
        ]
    if kind == "timestamp_ntz":
        return WALLS + [dt.datetime(2024, 11, 3, 1) + dt.timedelta(minutes=rng.randint(-300, 300)) for _ in range(2)]
    if kind == "boolean":
        return [True, False]
    raise ValueError(f"unknown column kind {kind!r}")
