"""Which files an overwrite by a filter replaces (``sluice.lake.overwrite``), on real PyIceberg
tables: kept when no row can match, replaced when every row matches, refused otherwise; and
Spark's ``PARTITION (c = v)`` filter read as the equality it means (``sluice.planner.writes``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.overwrite import files_to_replace
from sluice.planner.writes import _null_safe_as_equal


@pytest.fixture()
def table(tmp_path: Path):
    """Partitioned by identity(region); one file per region: eu (ids 1, 2), us (id 3), NULL region (id 4)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType

    catalog = open_catalog(LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/catalog.db"), create=True)
    catalog.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", LongType()), NestedField(2, "region", StringType()), NestedField(3, "v", DoubleType())
    )
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    created = catalog.create_table(("ns", "t"), schema=schema, partition_spec=spec)
    for ids, region in (([1, 2], "eu"), ([3], "us"), ([4], None)):
        created.append(
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "region": pa.array([region] * len(ids), pa.string()),
                    "v": pa.array([1.0] * len(ids), pa.float64()),
                }
            )
        )
    return catalog.load_table(("ns", "t"))


def _replaced(table, where: list[str]) -> list[tuple[object, ...]]:
    current = [task.file for task in table.scan().plan_files()]
    return sorted((f.partition[0] or "",) for f in files_to_replace(table, where, current))


def test_a_partition_filter_replaces_its_files_and_keeps_the_rest(table) -> None:
    assert _replaced(table, ["\"region\" = 'eu'"]) == [("eu",)]
    assert _replaced(table, ["\"region\" IN ('eu', 'us')"]) == [("eu",), ("us",)]
    assert _replaced(table, ['"region" IS NULL']) == [("",)]  # a NULL partition is selected only by IS NULL
    assert _replaced(table, ["\"region\" = 'asia'"]) == []


def test_bounds_prove_whole_files_on_other_columns(table) -> None:
    assert _replaced(table, ['"id" >= 3']) == [("",), ("us",)]  # us holds id 3, the NULL region id 4
    assert _replaced(table, ['"id" > 100']) == []  # no file can hold such a row: all kept
    assert _replaced(table, []) == [("",), ("eu",), ("us",)]  # no filter: the whole table


def test_a_filter_that_splits_a_file_is_refused_naming_it(table) -> None:
    with pytest.raises(ConfigError, match=r"region=eu/.* may hold rows that match it and rows that do not"):
        _replaced(table, ['"id" = 1'])


def test_a_filter_not_exact_in_iceberg_terms_is_refused(table) -> None:
    with pytest.raises(ConfigError, match="cannot be proven to match it whole"):
        _replaced(table, ['"v" > 0.0'])  # a float comparison is never exact (NaN)


def test_spark_static_partition_filter_is_read_as_an_equality() -> None:
    column, value = {"ref": ["region"]}, {"lit": "eu", "type": "string"}
    assert _null_safe_as_equal({"op": "<=>", "args": [column, value]}) == {"op": "=", "args": [column, value]}
    assert _null_safe_as_equal({"op": "<=>", "args": [value, column]}) == {"op": "=", "args": [column, value]}
    null = {"lit": None, "type": "string"}
    assert _null_safe_as_equal({"op": "<=>", "args": [column, null]}) == {"op": "IS_NULL", "args": [column]}
    other = {"op": "<=>", "args": [column, {"ref": ["other"]}]}
    assert _null_safe_as_equal(other) is other
