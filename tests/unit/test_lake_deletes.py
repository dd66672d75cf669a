"""Row-level deletes without Spark: the spec's rules for which delete file applies, and the reader.

The rules (sequence numbers, partitions, global equality deletes, path bounds) are checked on
manifest entries made here; the reading on real tables with real delete files
(tests/lake_deletes.py), through the Iceberg source as Spark's workers call it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pytest
import sqlglot
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestEntry, ManifestEntryStatus
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import DoubleType, LongType, NestedField, StringType
from sqlglot import exp

from sluice.errors import SourceError
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.deletes import EQUALITY, POSITION, DeleteIndex, DeleteRef, equality_deleted, live_rows
from sluice.pushdown.pushed import Pushed
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from tests.lake_deletes import commit_deletes, data_files, equality_deletes, position_deletes

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()), NestedField(3, "x", DoubleType()))


def _table(tmp_path: Path, partitioned: bool = False) -> Any:
    catalog = open_catalog(LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/catalog.db"), create=True)
    catalog.create_namespace("ns")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "s")) if partitioned else PartitionSpec()
    return catalog.create_table(
        ("ns", "t"), schema=SCHEMA, partition_spec=spec, properties={"write.parquet.row-group-limit": "4"}
    )


def _entry(
    content: DataFileContent,
    path: str,
    sequence: int,
    partition: Record | None = None,
    spec_id: int = 0,
    file_format: FileFormat = FileFormat.PARQUET,
    equality_ids: list[int] | None = None,
    path_bounds: tuple[str, str] | None = None,
) -> ManifestEntry:
    data_file = DataFile.from_args(
        content=content,
        file_path=path,
        file_format=file_format,
        partition=partition if partition is not None else Record(),
        record_count=1,
        file_size_in_bytes=1,
        equality_ids=equality_ids,
        lower_bounds={2147483546: path_bounds[0].encode()} if path_bounds else None,
        upper_bounds={2147483546: path_bounds[1].encode()} if path_bounds else None,
    )
    data_file.spec_id = spec_id
    return ManifestEntry.from_args(
        status=ManifestEntryStatus.ADDED, snapshot_id=1, sequence_number=sequence, data_file=data_file
    )


def _applied(index: DeleteIndex, data: ManifestEntry) -> list[str]:
    return sorted(ref.path for ref in index.for_data_file(data))


def test_sequence_numbers_position_at_or_after_equality_strictly_after(tmp_path: Path) -> None:
    table = _table(tmp_path)
    deletes = [
        _entry(DataFileContent.POSITION_DELETES, "pos-2", 2),
        _entry(DataFileContent.POSITION_DELETES, "pos-3", 3),
        _entry(DataFileContent.POSITION_DELETES, "pos-4", 4),
        _entry(DataFileContent.EQUALITY_DELETES, "eq-3", 3, equality_ids=[1]),
        _entry(DataFileContent.EQUALITY_DELETES, "eq-4", 4, equality_ids=[1, 2]),
    ]
    index = DeleteIndex(deletes, table, table.schema(), "ns.t")
    assert _applied(index, _entry(DataFileContent.DATA, "data", 3)) == ["eq-4", "pos-3", "pos-4"]
    assert _applied(index, _entry(DataFileContent.DATA, "data", 5)) == []
    assert index.total == 5
    (eq,) = [r for r in index.for_data_file(_entry(DataFileContent.DATA, "d", 3)) if r.kind == EQUALITY]
    assert eq.keys == ((1, "bigint"), (2, "string"))


def test_partitions_scope_deletes_unless_the_delete_spec_is_unpartitioned(tmp_path: Path) -> None:
    table = _table(tmp_path)  # spec 0 unpartitioned; spec 1 by identity(s)
    with table.update_spec() as update:
        update.add_identity("s")
    deletes = [
        _entry(DataFileContent.POSITION_DELETES, "pos-a", 5, Record("a"), spec_id=1),
        _entry(DataFileContent.EQUALITY_DELETES, "eq-a", 5, Record("a"), spec_id=1, equality_ids=[1]),
        _entry(DataFileContent.EQUALITY_DELETES, "eq-global", 5, spec_id=0, equality_ids=[1]),
    ]
    index = DeleteIndex(deletes, table, table.schema(), "ns.t")
    assert _applied(index, _entry(DataFileContent.DATA, "in-a", 1, Record("a"), 1)) == ["eq-a", "eq-global", "pos-a"]
    assert _applied(index, _entry(DataFileContent.DATA, "in-b", 1, Record("b"), 1)) == ["eq-global"]
    assert _applied(index, _entry(DataFileContent.DATA, "unpartitioned", 1)) == ["eq-global"]


def test_partition_values_compare_as_iceberg_does(tmp_path: Path) -> None:
    """NaN equals NaN; -0.0 and 0.0 are different partitions (Java's Double.compare)."""
    table = _table(tmp_path)
    with table.update_spec() as update:
        update.add_identity("x")
    deletes = [
        _entry(DataFileContent.EQUALITY_DELETES, "eq-nan", 2, Record(float("nan")), 1, equality_ids=[1]),
        _entry(DataFileContent.EQUALITY_DELETES, "eq-zero", 2, Record(0.0), 1, equality_ids=[1]),
        _entry(DataFileContent.POSITION_DELETES, "pos-nan", 2, Record(float("nan")), 1),
    ]
    index = DeleteIndex(deletes, table, table.schema(), "ns.t")
    assert _applied(index, _entry(DataFileContent.DATA, "nan", 1, Record(float("nan")), 1)) == ["eq-nan", "pos-nan"]
    assert _applied(index, _entry(DataFileContent.DATA, "minus-zero", 1, Record(-0.0), 1)) == []
    assert _applied(index, _entry(DataFileContent.DATA, "zero", 1, Record(0.0), 1)) == ["eq-zero"]


def test_position_deletes_whose_path_bounds_exclude_the_file_do_not_apply(tmp_path: Path) -> None:
    table = _table(tmp_path)
    deletes = [_entry(DataFileContent.POSITION_DELETES, "pos", 2, path_bounds=("f/b", "f/d"))]
    index = DeleteIndex(deletes, table, table.schema(), "ns.t")
    assert _applied(index, _entry(DataFileContent.DATA, "f/c", 1)) == ["pos"]
    assert _applied(index, _entry(DataFileContent.DATA, "f/a", 1)) == []
    assert _applied(index, _entry(DataFileContent.DATA, "f/e", 1)) == []


def test_what_cannot_be_applied_is_refused_naming_it(tmp_path: Path) -> None:
    table = _table(tmp_path)
    cases = [
        (_entry(DataFileContent.POSITION_DELETES, "dv.puffin", 2, file_format=FileFormat.PUFFIN), "deletion vector"),
        (_entry(DataFileContent.POSITION_DELETES, "d.orc", 2, file_format=FileFormat.ORC), "d.orc is ORC"),
        (_entry(DataFileContent.EQUALITY_DELETES, "eq", 2, equality_ids=[3]), "double column x, which the Iceberg"),
        (_entry(DataFileContent.EQUALITY_DELETES, "eq", 2, equality_ids=[77]), "field id 77, which no schema"),
        (_entry(DataFileContent.EQUALITY_DELETES, "eq", 2, equality_ids=[]), "names no equality field ids"),
        (_entry(DataFileContent.EQUALITY_DELETES, "eq", 2, spec_id=9, equality_ids=[1]), "spec 9, which the table"),
    ]
    for entry, message in cases:
        with pytest.raises(ValueError, match=f"lake table ns.t: .*{message}"):
            DeleteIndex([entry], table, table.schema(), "ns.t")
        # maintenance only asks whether a delete applies: every one does, conservatively
        lenient = DeleteIndex([entry], table, table.schema(), "ns.t", strict=False)
        assert lenient.for_data_file(_entry(DataFileContent.DATA, "data", 1))


def test_a_dropped_delete_column_keeps_its_type_from_an_older_schema(tmp_path: Path) -> None:
    table = _table(tmp_path)
    with table.update_schema() as update:
        update.delete_column("s")
    entry = _entry(DataFileContent.EQUALITY_DELETES, "eq", 2, equality_ids=[2])
    index = DeleteIndex([entry], table, table.schema(), "ns.t")
    (ref,) = index.for_data_file(_entry(DataFileContent.DATA, "data", 1))
    assert ref.keys == ((2, "string"),)


def test_live_rows_places_each_batch_by_its_first_position() -> None:
    import numpy as np

    batch = pa.record_batch({"v": pa.array(range(10, 15), pa.int64())})  # rows 10..14 of a file
    positions = np.array([0, 9, 10, 12, 14, 15, 99], dtype=np.int64)
    assert live_rows(batch, 10, positions, []).column(0).to_pylist() == [11, 13]
    assert live_rows(batch, 20, positions, []).num_rows == 5


@pytest.mark.parametrize(
    ("values", "deleted", "expected"),
    [
        (pa.array([1, None, 3], pa.int64()), pa.array([None], pa.int64()), [False, True, False]),
        (pa.array(["", "a", None, "Zürich", "a "]), pa.array(["", "Zürich"]), [True, False, False, True, False]),
        (pa.array([b"", b"\x00", None]), pa.array([b""]), [True, False, False]),
        (pa.array([True, False, None]), pa.array([False, None]), [False, True, True]),
        (
            pa.array([decimal.Decimal("1.50"), decimal.Decimal("-0.01"), None], pa.decimal128(9, 2)),
            pa.array([decimal.Decimal("-0.01")], pa.decimal128(9, 2)),
            [False, True, False],
        ),
        (
            pa.array([dt.date(1970, 1, 1), dt.date(2024, 2, 29), None], pa.date32()),
            pa.array([dt.date(1970, 1, 1)], pa.date32()),  # the stand-in value of NULL keys: NULL stays
            [True, False, False],
        ),
        (
            pa.array([0, 1, None], pa.timestamp("us", tz="UTC")),
            pa.array([0, None], pa.timestamp("us", tz="UTC")),
            [True, False, True],
        ),
    ],
)
def test_equality_matches_null_to_null_and_values_exactly(values: pa.Array, deleted: pa.Array, expected: list) -> None:
    assert equality_deleted([values], pa.table({"k0": deleted})).tolist() == expected


def test_several_delete_columns_must_all_match() -> None:
    ids = pa.array([1, 1, 2, None, None], pa.int64())
    texts = pa.array(["a", None, None, None, "a"])
    keys = pa.table({"k0": pa.array([1, None, 2], pa.int64()), "k1": pa.array([None, None, "a"])})
    assert equality_deleted([ids, texts], keys).tolist() == [False, True, False, True, False]


def test_file_reads_travel_with_their_delete_files() -> None:
    from sluice.lake.pyramid import FileRead

    read = FileRead(
        "d.parquet", (0, 2), 9, 100, True, (DeleteRef("p", POSITION, 2), DeleteRef("e", EQUALITY, 1, ((1, "bigint"),)))
    )
    assert FileRead.from_dict(json.loads(json.dumps(read.to_dict()))) == read


# ------------------------------------------------------------------ reading real delete files


def _read(url: str, columns: tuple[str, ...], where: tuple[str, ...] = (), batch_rows: int = 3) -> list[tuple]:
    source = open_source("lake", url)
    source.batch_rows = batch_rows  # type: ignore[misc]  # a ClassVar shadowed on this one source: batches smaller than a row group: positions placed batch by batch
    pushed = tuple(Pushed(tree=cast(exp.Expression, sqlglot.parse_one(text, read="duckdb"))) for text in where)
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), columns, where=pushed)
    return sorted(
        (
            tuple(row.values())
            for task in source.tasks(spec)
            for batch in source.read(task)
            for row in batch.to_pylist()
        ),
        key=repr,
    )


def test_deletes_apply_across_row_groups_and_batches_and_follow_a_renamed_column(tmp_path: Path) -> None:
    table = _table(tmp_path)
    texts = ["", "a", None, "Zürich", "b", "a", None, "c", "", "d", "e"]
    table.append(pa.table({"id": pa.array(range(11), pa.int64()), "s": texts, "x": [0.5] * 11}))
    ((path, rows),) = data_files(table)
    assert rows == 11
    commit_deletes(table, [position_deletes(table, [(path, 0), (path, 4), (path, 5), (path, 10)])])
    commit_deletes(table, [equality_deletes(table, pa.table({"s": [None, "Zürich"]}), ["s"])])
    url = f"iceberg+sqlite:///{tmp_path}/catalog.db"
    live = [1, 7, 8, 9]  # 0, 4, 5, 10 by position; 2, 6 (NULL) and 3 by value
    assert [r[0] for r in _read(url, ("id",))] == live
    assert [r[0] for r in _read(url, ("id",), ('"id" >= 3',))] == [7, 8, 9]
    with table.update_schema() as update:
        update.rename_column("s", "label")
    assert [r[0] for r in _read(url, ("id", "label"))] == live  # the delete column found by its field id
    # deletes apply before the pushed filter, limit and aggregate
    assert [r[0] for r in _read(url, ("id",), ("\"label\" = ''",))] == [8]


def test_a_delete_file_that_cannot_be_read_fails_naming_it_and_its_data_file(tmp_path: Path) -> None:
    table = _table(tmp_path)
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"], "x": [0.5, 1.5]}))
    ((path, _),) = data_files(table)
    delete = position_deletes(table, [(path, 1)])
    commit_deletes(table, [delete])
    Path(delete.file_path.removeprefix("file://")).write_bytes(b"not parquet")
    with pytest.raises(SourceError, match=rf"delete file {delete.file_path} cannot be read: .* data file {path}"):
        _read(f"iceberg+sqlite:///{tmp_path}/catalog.db", ("id",))
