"""The driver half of an ingest commit, without Spark: partition records from folder names,
and float bounds that never claim more than the file holds."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import DoubleType, NestedField

from sluice.errors import ConfigError, SluiceError
from sluice.lake import telemetry
from sluice.lake.commit import make_float_bounds_safe
from sluice.lake.partitioning import partition_columns, partition_record

pytestmark = pytest.mark.unit


def test_partition_folders_name_every_field_without_shadowing_a_column() -> None:
    columns = partition_columns(telemetry.partition_spec(), telemetry.schema())
    assert [(column.folder_key, column.kind) for column in columns] == [
        ("mission_id_identity", "identity"),
        ("ts_day", "day"),
        ("payload_id_bucket", "transform"),  # pyiceberg-core's bucket
    ]


def test_partition_record_from_folders() -> None:
    columns = partition_columns(telemetry.partition_spec(), telemetry.schema())
    folder = "mission_id_identity=102/ts_day=2025-03-09/payload_id_bucket=3"
    assert partition_record(columns, folder) == Record(102, 20156, 3)  # 2025-03-09 is day 20156 since 1970
    before_1970 = "mission_id_identity=__HIVE_DEFAULT_PARTITION__/ts_day=1969-12-31/payload_id_bucket=0"
    assert partition_record(columns, before_1970) == Record(None, -1, 0)  # Spark's folder for NULL
    with pytest.raises(SluiceError, match="does not name the partition keys"):
        partition_record(columns, "mission_id_identity=102/ts_day=2025-03-09")


def test_unwritable_transforms_are_refused() -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform, TruncateTransform

    schema = telemetry.schema()
    truncate = PartitionSpec(PartitionField(source_id=6, field_id=1000, transform=TruncateTransform(2), name="v"))
    with pytest.raises(ConfigError, match=r"v = truncate\[2\]\(voltage double\)"):
        partition_columns(truncate, schema)
    instant = PartitionSpec(PartitionField(source_id=4, field_id=1000, transform=IdentityTransform(), name="t"))
    with pytest.raises(ConfigError, match="identity of int/long/string/date/boolean/decimal"):
        partition_columns(instant, schema)


def test_zero_bounds_cover_both_zeros(tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "low", DoubleType(), required=False), NestedField(2, "high", DoubleType(), required=False)
    )
    path = tmp_path / "zeros.parquet"
    pq.write_table(pa.table({"low": [0.0, 2.5], "high": [-4.0, -0.0]}), path)
    footer = pq.read_metadata(path)
    statistics = data_file_statistics_from_parquet_metadata(
        footer, compute_statistics_plan(schema, {}), parquet_path_to_id_mapping(schema)
    )
    make_float_bounds_safe(statistics, footer, parquet_path_to_id_mapping(schema), {1, 2})
    lower, upper = statistics.column_aggregates[1].current_min, statistics.column_aggregates[2].current_max
    assert lower == 0.0 and math.copysign(1.0, lower) == -1.0  # -0.0 rows are not below the bound
    assert upper == 0.0 and math.copysign(1.0, upper) == 1.0


def test_a_dynamic_overwrite_replaces_the_files_of_the_partitions_written_only() -> None:
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    from sluice.lake.ingest import files_in_partitions

    def data_file(path: str, spec_id: int, *values: object) -> DataFile:
        made = DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=path,
            file_format=FileFormat.PARQUET,
            partition=Record(*values),
            record_count=1,
            file_size_in_bytes=1,
        )
        made.spec_id = spec_id
        return made

    current = [
        data_file("a", 0, 20_000, 3),
        data_file("b", 0, 20_000, 4),
        data_file("c", 0, None, 3),  # NULL day: a partition of its own
        data_file("d", 1, 20_000, 3),  # same values under another spec: another partition
        data_file("e", 0, 20_000, 3),
    ]
    written = [data_file("new1", 0, 20_000, 3), data_file("new2", 0, None, 3), data_file("new3", 0, 1, 1)]
    assert [f.file_path for f in files_in_partitions(current, written)] == ["a", "c", "e"]
    assert files_in_partitions(current, []) == []
    unpartitioned = [data_file("x", 0), data_file("y", 0)]
    assert [f.file_path for f in files_in_partitions(unpartitioned, [data_file("z", 0)])] == ["x", "y"]
