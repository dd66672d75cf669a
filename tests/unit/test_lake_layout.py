"""The ``--partition-by`` and ``--sort-by`` texts, and the Iceberg layout they become."""

from __future__ import annotations

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DateType, DecimalType, DoubleType, LongType, NestedField, StringType, TimestamptzType

from sluice.errors import ConfigError
from sluice.lake import layout, telemetry
from sluice.lake.layout import PartitionTerm, SortTerm
from sluice.lake.partitioning import partition_columns, partition_record

pytestmark = pytest.mark.unit

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "ts", TimestamptzType(), required=False),
    NestedField(3, "city", StringType(), required=False),
    NestedField(4, "temp", DoubleType(), required=False),
    NestedField(5, "day", DateType(), required=False),
    NestedField(6, "price", DecimalType(9, 2), required=False),
)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("day(ts), bucket(16, id)", (PartitionTerm("day", "ts"), PartitionTerm("bucket", "id", 16))),
        ("day(ts),bucket(16,id)", (PartitionTerm("day", "ts"), PartitionTerm("bucket", "id", 16))),
        (
            "bucket(id, 16)",
            (PartitionTerm("bucket", "id", 16),),
        ),  # the number first or second, as Spark versions differ
        ("city, identity(id)", (PartitionTerm("identity", "city"), PartitionTerm("identity", "id"))),
        (
            "years(ts), MONTH(ts), hours(ts)",
            (PartitionTerm("year", "ts"), PartitionTerm("month", "ts"), PartitionTerm("hour", "ts")),
        ),
        ("truncate(3, city)", (PartitionTerm("truncate", "city", 3),)),
        ("`odd, name`", (PartitionTerm("identity", "odd, name"),)),
        ("  ", ()),
    ],
)
def test_partition_by_parses(text: str, terms: tuple[PartitionTerm, ...]) -> None:
    assert layout.parse_partition_by(text) == terms


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("day(ts),, id", "an empty term"),
        ("day(ts", "unbalanced parentheses"),
        ("week(ts)", "unknown transform week"),
        ("bucket(id)", r"bucket takes a number and a column, as in bucket\(16, id\)"),
        ("bucket(0, id)", "the buckets must be at least 1"),
        ("truncate(a, b)", "truncate takes a number and a column"),
        ("day(ts, id)", "day takes one column"),
        ("day(1)", "'1' is not a column name"),
        ("id, id", r"identity\(id\) given twice"),
        ("id + 1", "is not a column name"),
    ],
)
def test_partition_by_errors_name_the_term(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        layout.parse_partition_by(text)


def test_sort_by_parses_directions_and_null_orders() -> None:
    assert layout.parse_sort_by("ts, id DESC, city asc nulls last,  temp  desc  nulls  first") == (
        SortTerm("ts"),
        SortTerm("id", descending=True, nulls_first=False),
        SortTerm("city", nulls_first=False),
        SortTerm("temp", descending=True, nulls_first=True),
    )
    with pytest.raises(ConfigError, match="sort key 'ts up'"):
        layout.parse_sort_by("ts up")


def test_terms_bind_to_a_schema_as_iceberg_spark_names_them() -> None:
    spec = layout.partition_spec(layout.parse_partition_by("day(ts), bucket(4, id), city, truncate(2, city)"), SCHEMA)
    assert [(field.name, field.source_id, str(field.transform), field.field_id) for field in spec.fields] == [
        ("ts_day", 2, "day", 1000),
        ("id_bucket", 1, "bucket[4]", 1001),
        ("city", 3, "identity", 1002),
        ("city_truncate", 3, "truncate[2]", 1003),
    ]
    order = layout.sort_order(layout.parse_sort_by("ts, id desc"), SCHEMA)
    assert [(field.source_id, str(field.direction), str(field.null_order)) for field in order.fields] == [
        (2, "ASC", "NULLS FIRST"),
        (1, "DESC", "NULLS LAST"),
    ]
    assert not layout.sort_order((), SCHEMA).fields
    with pytest.raises(ConfigError, match=r"partition term day\(nope\): no column nope \(columns: id, ts, city"):
        layout.partition_spec(layout.parse_partition_by("day(nope)"), SCHEMA)
    with pytest.raises(ConfigError, match=r"day cannot be applied to column city of type string"):
        layout.partition_spec(layout.parse_partition_by("day(city)"), SCHEMA)


def test_the_telemetry_terms_are_the_telemetry_layout() -> None:
    spec = layout.partition_spec(telemetry.PARTITION_BY, telemetry.schema())
    assert spec == telemetry.partition_spec()


def test_partition_records_of_every_kind_read_back_from_folders() -> None:
    spec = layout.partition_spec(
        layout.parse_partition_by(
            "city, month(ts), day(day), truncate(10, id), bucket(3, city), price, truncate(2, city)"
        ),
        SCHEMA,
    )
    columns = partition_columns(spec, SCHEMA)
    assert [column.kind for column in columns] == [
        "identity",
        "transform",
        "transform",
        "transform",
        "transform",
        "identity",
        "transform",
    ]
    folder = (
        "city_identity=_K%C3%B6ln%2FOst/ts_month=662/day_day=20148/id_truncate=-10/city_bucket=2/"
        "price_identity=12.50/city_truncate=_"
    )
    assert list(partition_record(columns, folder)) == ["Köln/Ost", 662, 20148, -10, 2, pytest.approx(12.5), ""]  # type: ignore[call-overload]  # pyiceberg's Record iterates through __getitem__; its types declare no __iter__
    nulls = "/".join(f"{column.folder_key}=__HIVE_DEFAULT_PARTITION__" for column in columns)
    assert list(partition_record(columns, nulls)) == [None] * len(columns)  # type: ignore[call-overload]  # as above: Record has no typed __iter__


def test_unwritable_partition_sources_are_refused() -> None:
    spec = layout.partition_spec(layout.parse_partition_by("temp"), SCHEMA)
    with pytest.raises(ConfigError, match=r"partition field temp = identity\(temp double\)"):
        partition_columns(spec, SCHEMA)


def test_spark_schemas_become_iceberg_schemas() -> None:
    from pyspark.sql import types as sp

    def struct(*fields: tuple[str, sp.DataType]) -> sp.StructType:
        return sp.StructType([sp.StructField(name, kind) for name, kind in fields])

    schema = layout.iceberg_schema(
        struct(
            ("a", sp.ByteType()),
            ("b", sp.LongType()),
            ("c", sp.TimestampType()),
            ("d", sp.TimestampNTZType()),
            ("e", sp.DecimalType(12, 3)),
        )
    )
    assert [(field.field_id, field.name, str(field.field_type), field.required) for field in schema.fields] == [
        (1, "a", "int", False),
        (2, "b", "long", False),
        (3, "c", "timestamptz", False),
        (4, "d", "timestamp", False),
        (5, "e", "decimal(12, 3)", False),
    ]
    with pytest.raises(ConfigError, match="column m: lake tables hold primitive columns only, not map<string,int>"):
        layout.iceberg_schema(struct(("m", sp.MapType(sp.StringType(), sp.IntegerType()))))
    with pytest.raises(ConfigError, match=r"column\(s\) A, a appear more than once"):
        layout.iceberg_schema(struct(("A", sp.IntegerType()), ("a", sp.IntegerType())))
