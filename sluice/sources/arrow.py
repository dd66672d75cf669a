"""Arrow helpers shared by the readers: every batch leaves with exactly Spark's schema.

A value Spark's type cannot hold (a nanosecond timestamp, a PostgreSQL ``numeric`` with
more digits than decimal(38,10), NaN in a decimal, ``infinity`` or a BC date) is an error
naming table, column and value, never a rounded value or a bare driver error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.compute as pc

from sluice.errors import SourceError

if TYPE_CHECKING:
    from sluice.types import TableSchema

#: Spark's calendar: dates and timestamps (UTC for instants) from 0001-01-01 to 9999-12-31
_FIRST_DAY, _LAST_DAY = -719162, 2932896
_FIRST_US, _LAST_US = _FIRST_DAY * 86_400_000_000, (_LAST_DAY + 1) * 86_400_000_000 - 1
#: how drivers encode ``infinity`` and ``-infinity`` (raw int32 days, int64 microseconds): the
#: type's extremes, or, from PostgreSQL through ADBC, those extremes (PostgreSQL counts from
#: 2000-01-01) moved to 1970's epoch with the wrap-around of the integer
_DAYS_INFINITY = {
    2**31 - 1: "'infinity'",
    -(2**31): "'-infinity'",
    -2147472692: "'infinity'",
    -2147472691: "'-infinity'",
}
_US_INFINITY = {
    2**63 - 1: "'infinity'",
    -(2**63): "'-infinity'",
    -9222425352054775809: "'infinity'",
    -9222425352054775808: "'-infinity'",
}
#: PostgreSQL's first timestamp (4714-11-24 BC); a raw value below it is a late timestamp
#: (after about year 294247) whose microseconds since 1970 wrapped around int64 in the driver
_PG_FIRST_US = -210866803200000000


def conform(batch: pa.RecordBatch, schema: pa.Schema, table: TableSchema | None = None) -> pa.RecordBatch:
    """Cast a driver batch to exactly the schema Spark expects (names and types).

    With ``table``, a value the cast would lose or Spark cannot hold raises a
    :class:`SourceError` naming the table, the column and the value.
    """
    arrays = []
    for index, field in enumerate(schema):
        array = batch.column(index)
        if isinstance(array.type, pa.ExtensionType):
            array = array.storage
        if array.type != field.type:
            array = _cast(array, field, table)
        if table is not None and (pa.types.is_date(field.type) or pa.types.is_timestamp(field.type)):
            _check_calendar(array, field, table)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _cast(array: pa.Array, field: pa.Field, table: TableSchema | None) -> pa.Array:
    try:
        return pc.cast(array, field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        if table is None:
            raise
        value = _first_failing(array, field.type)
        if table.find(field.name) is None:  # an aggregate the source computed (sluice/planner/aggregates.py)
            raise SourceError(
                table.source,
                f"{table.qualified_name}: an aggregate the source computed, {value}, overflows "
                f"Spark's {field.type} (Spark's own SUM raises ARITHMETIC_OVERFLOW)",
            ) from None
        raise SourceError(
            table.source,
            f"{table.qualified_name}: column {field.name!r} holds {value}, which Spark's "
            f"{field.type} cannot hold exactly ({error})",
        ) from None


def _first_failing(array: pa.Array, arrow_type: pa.DataType) -> str:
    """The first value of ``array`` whose cast to ``arrow_type`` fails, shown (halving: log n casts)."""
    while len(array) > 1:
        half = array.slice(0, len(array) // 2)
        try:
            pc.cast(half, arrow_type)
            array = array.slice(len(array) // 2)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            array = half
    if not len(array):
        return "a value"
    try:
        return repr(array[0].as_py())
    except (ValueError, OverflowError):  # nanoseconds, dates Python's datetime cannot hold
        return str(array[0])


def _check_calendar(array: pa.Array, field: pa.Field, table: TableSchema) -> None:
    """Dates and timestamps outside 0001-01-01..9999-12-31 (PostgreSQL's infinity, BC dates)."""
    unit: Literal["D", "us"] = "D" if pa.types.is_date(field.type) else "us"
    raw = array.cast(pa.int32() if unit == "D" else pa.int64())
    low, high = (_FIRST_DAY, _LAST_DAY) if unit == "D" else (_FIRST_US, _LAST_US)
    outside = pc.filter(raw, pc.or_(pc.less(raw, low), pc.greater(raw, high)))
    if len(outside) == 0:
        return
    shown = _shown_instant(outside[0].as_py(), unit)
    raise SourceError(
        table.source,
        f"{table.qualified_name}: column {field.name!r} holds {shown}, outside Spark's "
        f"{'dates' if unit == 'D' else 'timestamps'} (0001-01-01 to 9999-12-31"
        f"{' UTC' if getattr(field.type, 'tz', None) else ''})",
    )


def _shown_instant(value: int, unit: Literal["D", "us"]) -> str:
    """A raw date or timestamp outside Spark's range as the source wrote it: ``'infinity'`` only
    for the encodings of infinity, else its calendar value (astronomical years: year 0 is 1 BC)."""
    infinities = _DAYS_INFINITY if unit == "D" else _US_INFINITY
    if value in infinities:
        return infinities[value]
    if unit == "us" and value < _PG_FIRST_US:
        value += 2**64
    days, micros = divmod(value, 86_400_000_000) if unit == "us" else (value, 0)
    shown = _civil(days)
    if unit == "us":
        seconds, fraction = divmod(micros, 1_000_000)
        shown += f"T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{fraction:06d}"
    return shown + (" (astronomical years: year 0 is 1 BC)" if days < _FIRST_DAY else "")


def _civil(days: int) -> str:
    """Days since 1970-01-01 as a proleptic Gregorian date of any year (numpy and Python's
    datetime stop long before PostgreSQL's 294276 and 5874897): H. Hinnant's civil_from_days."""
    shifted = days + 719468
    era = shifted // 146097
    day_of_era = shifted - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (month <= 2)
    return f"{year:04d}-{month:02d}-{day:02d}"


def strict_booleans(integers: pa.Array) -> pa.Array:
    """Integers stored for booleans (SQLite, MySQL TINYINT(1)) as booleans; anything but
    0 and 1 raises ValueError instead of being read as TRUE."""
    if pc.any(pc.invert(pc.is_in(integers.drop_null(), pa.array([0, 1], integers.type)))).as_py():
        raise ValueError("booleans must be stored as 0 or 1")
    return pc.cast(integers, pa.bool_())
