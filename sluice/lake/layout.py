"""A new lake table's layout from text: partition spec, sort order, and the Iceberg schema of a Spark schema.

The command line and :func:`sluice.lake.ingest.ingest` take the layout as text, as
Iceberg's Spark DDL writes it:

- partitioning, ``--partition-by 'day(ts), bucket(16, id)'``: comma-separated terms, each a
  column name (identity), ``identity(c)``, ``year(c)``, ``month(c)``, ``day(c)``,
  ``hour(c)`` (or Spark's plural ``years``/``months``/``days``/``hours``),
  ``bucket(N, c)`` or ``truncate(W, c)`` (the number may come first or second);
- sort order, ``--sort-by 'ts, id desc nulls last'``: comma-separated column names, each
  optionally ``asc``/``desc`` and ``nulls first``/``nulls last`` (Iceberg's defaults:
  ascending with nulls first, descending with nulls last).

Parsing knows nothing about the table; :func:`partition_spec` and :func:`sort_order` bind
the terms to a schema, and a name the schema lacks is a :class:`ConfigError` naming it
and the columns there are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sluice.errors import ConfigError

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table.sorting import SortOrder
    from pyiceberg.transforms import Transform
    from pyiceberg.types import IcebergType, NestedField
    from pyspark.sql.types import DataType, StructType

#: Iceberg's name of each transform the text may use (Spark's plural spellings included)
TRANSFORMS = {
    "identity": "identity",
    "year": "year",
    "years": "year",
    "month": "month",
    "months": "month",
    "day": "day",
    "days": "day",
    "hour": "hour",
    "hours": "hour",
    "bucket": "bucket",
    "truncate": "truncate",
}
#: transforms that take a number (buckets, width)
WITH_NUMBER = ("bucket", "truncate")

_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)"
_CALL = re.compile(r"^(?P<function>[A-Za-z_]+)\s*\(\s*(?P<arguments>[^()]*)\)$")
_SORT = re.compile(rf"^(?P<name>{_NAME})(?:\s+(?P<direction>asc|desc))?(?:\s+nulls\s+(?P<nulls>first|last))?$", re.I)


@dataclass(frozen=True)
class PartitionTerm:
    """One partition field as written: a transform of a column (``number`` for bucket and truncate)."""

    transform: str  # Iceberg's name: identity, year, month, day, hour, bucket, truncate
    column: str
    number: int = 0

    def __str__(self) -> str:
        if self.transform in WITH_NUMBER:
            return f"{self.transform}({self.number}, {self.column})"
        return f"{self.transform}({self.column})"


@dataclass(frozen=True)
class SortTerm:
    """One sort key: a column, its direction and where NULLs go."""

    column: str
    descending: bool = False
    nulls_first: bool = True

    def __str__(self) -> str:
        return f"{self.column} {'desc' if self.descending else 'asc'} nulls {'first' if self.nulls_first else 'last'}"


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses and backquotes; blank items are an error."""
    items, depth, quoted, current = [], 0, False, ""
    for char in text:
        if char == "`":
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
            if depth < 0:
                raise ConfigError(f"unbalanced parentheses in {text!r}")
        if char == "," and depth == 0 and not quoted:
            items.append(current.strip())
            current = ""
        else:
            current += char
    if depth or quoted:
        raise ConfigError(f"unbalanced {'backquote' if quoted else 'parentheses'} in {text!r}")
    items.append(current.strip())
    if any(not item for item in items):
        raise ConfigError(f"an empty term in {text!r} (terms are separated by single commas)")
    return items


def _column(text: str, where: str) -> str:
    text = text.strip()
    if not re.fullmatch(_NAME, text):
        raise ConfigError(f"{where}: {text!r} is not a column name")
    return text[1:-1] if text.startswith("`") else text


def parse_partition_by(text: str) -> tuple[PartitionTerm, ...]:
    """The terms of ``--partition-by`` text (see the module's docstring); an empty text is no partitioning."""
    if not text.strip():
        return ()
    terms = []
    for item in _split(text):
        call = _CALL.match(item)
        if not call:
            terms.append(PartitionTerm("identity", _column(item, f"partition term {item!r}")))
            continue
        function = call["function"].lower()
        if function not in TRANSFORMS:
            raise ConfigError(
                f"partition term {item!r}: unknown transform {call['function']} "
                "(identity, year, month, day, hour, bucket(N, c), truncate(W, c))"
            )
        transform = TRANSFORMS[function]
        arguments = [argument.strip() for argument in call["arguments"].split(",")]
        if transform not in WITH_NUMBER:
            if len(arguments) != 1:
                raise ConfigError(f"partition term {item!r}: {transform} takes one column")
            terms.append(PartitionTerm(transform, _column(arguments[0], f"partition term {item!r}")))
            continue
        numbers = [argument for argument in arguments if re.fullmatch(r"\d+", argument)]
        names = [argument for argument in arguments if argument not in numbers]
        if len(arguments) != 2 or len(numbers) != 1:
            raise ConfigError(
                f"partition term {item!r}: {transform} takes a number and a column, as in {transform}(16, id)"
            )
        number = int(numbers[0])
        if number < 1:
            raise ConfigError(
                f"partition term {item!r}: the {'buckets' if transform == 'bucket' else 'width'} must be at least 1"
            )
        terms.append(PartitionTerm(transform, _column(names[0], f"partition term {item!r}"), number))
    duplicates = sorted({str(term) for term in terms if terms.count(term) > 1})
    if duplicates:
        raise ConfigError(f"partition term(s) {', '.join(duplicates)} given twice")
    return tuple(terms)


def parse_sort_by(text: str) -> tuple[SortTerm, ...]:
    """The keys of ``--sort-by`` text; an empty text is no sort order."""
    if not text.strip():
        return ()
    terms = []
    for item in _split(text):
        match = _SORT.match(" ".join(item.split()))
        if not match:
            raise ConfigError(
                f"sort key {item!r}: expected a column name, then optionally asc or desc and nulls first or nulls last"
            )
        descending = (match["direction"] or "asc").lower() == "desc"
        nulls = match["nulls"]
        terms.append(
            SortTerm(
                _column(match["name"], f"sort key {item!r}"),
                descending,
                not descending if nulls is None else nulls.lower() == "first",
            )
        )
    return tuple(terms)


def _field(schema: Schema, name: str, what: str) -> NestedField:
    try:
        return schema.find_field(name, case_sensitive=False)
    except ValueError:
        raise ConfigError(
            f"{what}: no column {name} (columns: {', '.join(field.name for field in schema.fields)})"
        ) from None


def _transform(term: PartitionTerm) -> Transform[Any, Any]:
    from pyiceberg.transforms import (
        BucketTransform,
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        TruncateTransform,
        YearTransform,
    )

    if term.transform == "bucket":
        return BucketTransform(term.number)
    if term.transform == "truncate":
        return TruncateTransform(term.number)
    return {
        "identity": IdentityTransform,
        "year": YearTransform,
        "month": MonthTransform,
        "day": DayTransform,
        "hour": HourTransform,
    }[term.transform]()


def partition_spec(terms: tuple[PartitionTerm, ...], schema: Schema) -> PartitionSpec:
    """The Iceberg partition spec of ``terms`` over ``schema``; field names as Iceberg's Spark names them
    (``id_bucket``, ``ts_day``; identity keeps the column's name)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec

    fields = []
    for number, term in enumerate(terms):
        source = _field(schema, term.column, f"partition term {term}")
        transform = _transform(term)
        if not transform.can_transform(source.field_type):
            raise ConfigError(
                f"partition term {term}: {term.transform} cannot be applied to column {source.name} "
                f"of type {source.field_type}"
            )
        name = source.name if term.transform == "identity" else f"{source.name}_{term.transform}"
        fields.append(PartitionField(source_id=source.field_id, field_id=1000 + number, transform=transform, name=name))
    return PartitionSpec(*fields)


def sort_order(terms: tuple[SortTerm, ...], schema: Schema) -> SortOrder:
    """The Iceberg sort order of ``terms`` over ``schema`` (unsorted when there are none)."""
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, NullOrder, SortDirection, SortField, SortOrder
    from pyiceberg.transforms import IdentityTransform

    if not terms:
        return UNSORTED_SORT_ORDER
    return SortOrder(
        *(
            SortField(
                source_id=_field(schema, term.column, f"sort key {term}").field_id,
                transform=IdentityTransform(),
                direction=SortDirection.DESC if term.descending else SortDirection.ASC,
                null_order=NullOrder.NULLS_FIRST if term.nulls_first else NullOrder.NULLS_LAST,
            )
            for term in terms
        )
    )


def iceberg_type(spark_type: DataType, column: str) -> IcebergType:
    """The Iceberg type of a Spark column (small integers widen to int); a type a lake column
    cannot have (nested, interval, ...) is a ConfigError naming the column."""
    from pyiceberg import types as ice
    from pyspark.sql import types as sp

    simple: dict[type[DataType], Callable[[], IcebergType]] = {
        sp.BooleanType: ice.BooleanType,
        sp.ByteType: ice.IntegerType,
        sp.ShortType: ice.IntegerType,
        sp.IntegerType: ice.IntegerType,
        sp.LongType: ice.LongType,
        sp.FloatType: ice.FloatType,
        sp.DoubleType: ice.DoubleType,
        sp.DateType: ice.DateType,
        sp.TimestampType: ice.TimestamptzType,
        sp.TimestampNTZType: ice.TimestampType,
        sp.StringType: ice.StringType,
        sp.BinaryType: ice.BinaryType,
    }
    if type(spark_type) in simple:
        return simple[type(spark_type)]()
    if isinstance(spark_type, sp.DecimalType):
        return ice.DecimalType(spark_type.precision, spark_type.scale)
    if isinstance(spark_type, sp.NullType):
        raise ConfigError(f"column {column}: no type (every value is NULL); give the schema")
    raise ConfigError(f"column {column}: lake tables hold primitive columns only, not {spark_type.simpleString()}")


def iceberg_schema(spark_schema: StructType) -> Schema:
    """The Iceberg schema of a Spark schema: every column optional, field ids from 1 in order."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import NestedField

    names = [field.name for field in spark_schema.fields]
    twice = sorted({name for name in names if [other.lower() for other in names].count(name.lower()) > 1})
    if twice:
        raise ConfigError(f"column(s) {', '.join(twice)} appear more than once (names are compared ignoring case)")
    return Schema(
        *(
            NestedField(number, field.name, iceberg_type(field.dataType, field.name), required=False)
            for number, field in enumerate(spark_schema.fields, 1)
        )
    )
