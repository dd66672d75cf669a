"""The rows of a lake metadata table are computed once per metadata file (sluice/lake/metadata_tables.py):
a query describes the table and then plans its scan, and both must see the same rows without
inspecting the manifests twice; a commit writes a new metadata file and so new rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import Table

from sluice.lake import metadata_tables
from sluice.lake.catalog import LakeLocation, open_catalog
from tests.small_lake import small_lake


def _batch(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "x": pa.array([float(i) for i in ids], pa.float64())})


@pytest.fixture
def table(tmp_path: Path) -> Table:
    url = small_lake(tmp_path, _batch(1, 2), _batch(3))
    return open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t"))


def test_the_second_read_of_one_metadata_file_takes_the_first_rows(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = metadata_tables.rows(table, "files")
    calls: list[str] = []
    inspected = metadata_tables._inspected

    def counted(table: Table, kind: str, snapshot_id: int | None) -> pa.Table:
        calls.append(kind)
        return inspected(table, kind, snapshot_id)

    monkeypatch.setattr(metadata_tables, "_inspected", counted)
    again = metadata_tables.rows(table, "files")
    assert again is first and calls == []
    assert sorted(again.column("record_count").to_pylist()) == [1, 2]


def test_a_commit_gives_new_rows_and_time_travel_its_own(table: Table) -> None:
    before = metadata_tables.rows(table, "snapshots")
    first_snapshot = before.column("snapshot_id")[0].as_py()
    table.append(_batch(4, 5, 6))
    after = metadata_tables.rows(table, "snapshots")
    assert (before.num_rows, after.num_rows) == (2, 3)
    assert metadata_tables.rows(table, "files", first_snapshot).column("record_count").to_pylist() == [2]
    assert sorted(metadata_tables.rows(table, "files").column("record_count").to_pylist()) == [1, 2, 3]
