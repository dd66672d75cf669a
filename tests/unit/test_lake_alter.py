"""ALTER TABLE decisions (sluice.lake.alter) on a real PyIceberg table, without Spark: what is
taken, what is refused with which words, and that one refused change applies none."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluice.errors import ConfigError
from sluice.lake.alter import alter_table
from sluice.lake.catalog import LakeLocation, open_catalog

INT = '"integer"'
BIGINT = '"long"'
DOUBLE = '"double"'


@pytest.fixture()
def table(tmp_path: Path):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table import TableProperties
    from pyiceberg.transforms import DayTransform
    from pyiceberg.types import DecimalType, FloatType, IntegerType, NestedField, StringType, TimestamptzType

    catalog = open_catalog(LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/catalog.db"), create=True)
    catalog.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", IntegerType()),
        NestedField(2, "ts", TimestamptzType()),
        NestedField(3, "name", StringType()),
        NestedField(4, "f", FloatType()),
        NestedField(5, "d", DecimalType(10, 2)),
    )
    spec = PartitionSpec(PartitionField(2, 1000, DayTransform(), "ts_day"))
    created = catalog.create_table(("ns", "t"), schema=schema, partition_spec=spec)
    with created.transaction() as transaction:  # as the first ingest does: Spark's files are read by names
        transaction.set_properties({TableProperties.DEFAULT_NAME_MAPPING: schema.name_mapping.model_dump_json()})
    return catalog.load_table(("ns", "t"))


def names(table) -> list[str]:
    return [field.name for field in table.refresh().schema().fields]


def test_taken_changes_are_one_schema_update(table) -> None:
    before = len(table.metadata.schemas)
    done = alter_table(
        table,
        [
            {"kind": "rename_column", "column": ["name"], "new_name": "label"},
            {"kind": "update_column_type", "column": ["id"], "type": BIGINT},
            {"kind": "update_column_type", "column": ["d"], "type": '"decimal(14,2)"'},
            {"kind": "add_column", "column": ["w"], "type": INT, "nullable": True, "comment": "c", "first": True},
            {"kind": "drop_column", "column": ["f"], "if_exists": False},
            {"kind": "drop_column", "column": ["gone"], "if_exists": True},
        ],
    )
    assert names(table) == ["w", "id", "ts", "label", "d"]
    assert len(table.metadata.schemas) == before + 1
    assert str(table.schema().find_field("id").field_type) == "long"
    assert table.schema().find_field("w").doc == "c"
    assert done[0] == "RENAME COLUMN name TO label"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"kind": "update_column_type", "column": ["id"], "type": DOUBLE},
            r"ALTER COLUMN id TYPE double: column id is int \(Iceberg int\); Iceberg widens only",
        ),
        (
            {"kind": "update_column_type", "column": ["d"], "type": '"decimal(12,3)"'},
            r"column d is decimal\(10,2\) \(Iceberg decimal\(10, 2\)\)",
        ),
        ({"kind": "update_column_type", "column": ["name"], "type": INT}, "column name is string"),
        ({"kind": "drop_column", "column": ["ts"], "if_exists": False}, r"the table is partitioned by day\(ts\)"),
        ({"kind": "drop_column", "column": ["nope"], "if_exists": False}, "the table has no column nope"),
        ({"kind": "add_column", "column": ["x"], "type": INT, "nullable": False}, "NOT NULL cannot be added"),
        ({"kind": "add_column", "column": ["x"], "type": INT, "nullable": True, "default": "1"}, "DEFAULT"),
        ({"kind": "add_column", "column": ["NAME"], "type": INT, "nullable": True}, "names are compared ignoring case"),
        (
            {
                "kind": "add_column",
                "column": ["x"],
                "type": '{"type":"array","elementType":"integer","containsNull":true}',
                "nullable": True,
            },
            "primitive columns only",
        ),
        ({"kind": "add_column", "column": ["s", "x"], "type": INT, "nullable": True}, "top-level columns only"),
        ({"kind": "update_column_nullability", "column": ["id"], "nullable": False}, "SET NOT NULL"),
        ({"kind": "other", "description": "SetProperty k=v"}, "SetProperty k=v: lake tables take column changes only"),
    ],
)
def test_a_refused_change_names_the_column_and_applies_nothing(table, change, message) -> None:
    schema_id = table.metadata.current_schema_id
    with pytest.raises(ConfigError, match=message):
        alter_table(table, [{"kind": "rename_column", "column": ["f"], "new_name": "ff"}, change])
    assert table.refresh().metadata.current_schema_id == schema_id
    assert "f" in names(table)


def _one_row(table, tmp_path: Path, *, field_ids: bool) -> None:
    """A data file with one row: PyIceberg's append (field ids), or a plain Parquet file
    added as it is (no ids, read through the name mapping, as Sluice's files before ids)."""
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = pa.table(
        {
            "id": pa.array([1], pa.int32()),
            "ts": pa.array([dt.datetime(2025, 3, 9, tzinfo=dt.timezone.utc)], pa.timestamp("us", "UTC")),
            "name": ["a"],
            "f": pa.array([1.0], pa.float32()),
            "d": pa.array([Decimal("1.00")], pa.decimal128(10, 2)),
        }
    )
    if field_ids:
        table.append(rows)
        return
    path = tmp_path / "plain.parquet"
    pq.write_table(rows, path)
    table.add_files([str(path)])


def test_a_name_older_files_hold_without_ids_is_not_given_to_another_field(table, tmp_path: Path) -> None:
    _one_row(table, tmp_path, field_ids=False)
    alter_table(table, [{"kind": "drop_column", "column": ["f"], "if_exists": False}])
    alter_table(table, [{"kind": "rename_column", "column": ["name"], "new_name": "label"}])
    for change in (
        {"kind": "add_column", "column": ["f"], "type": DOUBLE, "nullable": True},
        {"kind": "add_column", "column": ["name"], "type": INT, "nullable": True},
        {"kind": "rename_column", "column": ["d"], "new_name": "f"},
    ):
        with pytest.raises(ConfigError, match="older data files hold a column named"):
            alter_table(table, [change])
    alter_table(table, [{"kind": "rename_column", "column": ["label"], "new_name": "name"}])  # its own old name
    assert names(table) == ["id", "ts", "name", "d"]


def test_a_dropped_name_is_reused_when_every_file_carries_field_ids(table, tmp_path: Path) -> None:
    _one_row(table, tmp_path, field_ids=True)
    alter_table(table, [{"kind": "drop_column", "column": ["f"], "if_exists": False}])
    alter_table(table, [{"kind": "rename_column", "column": ["name"], "new_name": "label"}])
    alter_table(table, [{"kind": "add_column", "column": ["f"], "type": DOUBLE, "nullable": True}])
    alter_table(table, [{"kind": "add_column", "column": ["name"], "type": INT, "nullable": True}])
    assert names(table) == ["id", "ts", "label", "d", "f", "name"]
    assert table.refresh().scan().to_arrow().to_pylist()[0] | {"ts": None, "d": None} == {
        "id": 1,
        "ts": None,
        "label": "a",
        "d": None,
        "f": None,  # a new field: the old file's f (1.0) is another one
        "name": None,
    }


def test_nothing_to_change_commits_nothing(table) -> None:
    schemas = len(table.metadata.schemas)
    assert (
        alter_table(
            table,
            [
                {"kind": "drop_column", "column": ["gone"], "if_exists": True},
                {"kind": "update_column_type", "column": ["id"], "type": INT},
            ],
        )
        == []
    )
    assert len(table.refresh().metadata.schemas) == schemas
