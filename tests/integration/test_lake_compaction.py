"""``optimize`` beside writers: it replaces exactly the files it read, folds delete files in,
and never loses or brings back a row.

Tables are written by PyIceberg (several appends: several files per partition) with real
delete files (tests/lake_deletes.py). The expected rows are computed here in Python from
what was appended and deleted; after optimize they are read by Sluice through Spark and by
PyIceberg's own reader as a second, independent reader. Concurrent commits are real
commits through another handle of the same catalog: from the optimize's own progress
report between its write and its commit (deterministic), and from a second process
appending in a loop (the slow tier). Catalog names start with ``lkcompact``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.manifest import ManifestContent
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from sluice.errors import SluiceError
from sluice.lake.catalog import LakeLocation, open_catalog
from tests.lake_deletes import commit_deletes, data_files, equality_deletes, position_deletes

pytestmark = pytest.mark.integration

ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.string()), pa.field("s", pa.string())])
SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "p", StringType()), NestedField(3, "s", StringType()))


def _rows(first: int, count: int) -> list[dict[str, Any]]:
    return [{"id": i, "p": "ab"[i % 2], "s": None if i % 7 == 0 else f"s{i % 5}"} for i in range(first, first + count)]


def _new_table(folder: Path, name: str) -> tuple[str, Any]:
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    catalog = open_catalog(LakeLocation.from_url(url), create=True)
    if ("ns",) not in catalog.list_namespaces():
        catalog.create_namespace("ns")
    table = catalog.create_table(
        ("ns", name),
        schema=SCHEMA,
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p")),
        properties={"format-version": "2"},
    )
    return url, table


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["id"], row["p"], row["s"])


def _pyiceberg_rows(table: Any) -> list[tuple[Any, ...]]:
    table.refresh()
    return sorted(_key(r) for r in table.scan().to_arrow().to_pylist())


def _sluice_rows(spark: Any, url: str, name: str) -> list[tuple[Any, ...]]:
    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("lkcompact", url)
    return sorted(_key(r.asDict()) for r in fed.sql(f"SELECT id, p, s FROM lkcompact.ns.{name}").collect())


def _delete_files(table: Any) -> list[str]:
    table.refresh()
    snapshot = table.current_snapshot()
    return [
        entry.data_file.file_path
        for manifest in snapshot.manifests(table.io)
        if manifest.content == ManifestContent.DELETES
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True)
    ]


@pytest.mark.slow  # 29-43 s here (the first mapInArrow starts Python workers); test_lake_deletes folds in the main tier
def test_optimize_folds_delete_files_and_drops_them(spark, tmp_path) -> None:
    """Position and equality deletes on files of both partitions: the rewrite applies them, the
    delete files go in the same snapshot, and the rows are those before (both readers)."""
    from sluice.lake.maintenance import optimize

    url, table = _new_table(tmp_path, "folded")
    appended = []
    for first in (0, 100, 200):
        rows = _rows(first, 40)
        table.append(pa.Table.from_pylist(rows, schema=ARROW))
        appended += rows
    files = data_files(table)
    first_file = files[0][0]
    with table.io.new_input(first_file).open() as handle:
        import pyarrow.parquet as pq

        in_file = pq.read_table(handle).to_pylist()
    positions = [(first_file, 0), (first_file, 3)]
    partition = next(
        e.data_file.partition
        for m in table.current_snapshot().manifests(table.io)
        for e in m.fetch_manifest_entry(table.io)
        if e.data_file.file_path == first_file
    )
    commit_deletes(table, [position_deletes(table, positions, partition=partition)])
    gone = {in_file[0]["id"], in_file[3]["id"]}
    # an equality delete on s in partition 'b': every row of the files before it whose s is 's1'
    eq = pa.Table.from_pylist([{"s": "s1"}], schema=pa.schema([pa.field("s", pa.string())]))
    b_partition = next(
        e.data_file.partition
        for m in table.current_snapshot().manifests(table.io)
        if m.content == ManifestContent.DATA
        for e in m.fetch_manifest_entry(table.io)
        if e.data_file.partition[0] == "b"
    )
    commit_deletes(table, [equality_deletes(table, eq, ["s"], partition=b_partition)])
    gone |= {r["id"] for r in appended if r["p"] == "b" and r["s"] == "s1"}
    later = _rows(1000, 10)  # appended after the deletes: its 's1' rows stay
    table.append(pa.Table.from_pylist(later, schema=ARROW))
    expected = sorted(_key(r) for r in appended if r["id"] not in gone) + [_key(r) for r in later]
    expected.sort()
    assert _sluice_rows(spark, url, "folded") == expected
    assert len(_delete_files(table)) == 2

    lines: list[str] = []
    summary = optimize(spark, url, "ns", "folded", report=lines.append)
    assert summary is not None and summary.snapshot_id is not None, lines
    assert any("dropping 2 delete file(s)" in line for line in lines), lines
    table.refresh()
    assert table.current_snapshot().summary.operation.value == "replace"
    assert _delete_files(table) == []
    assert len(data_files(table)) == 2  # one per partition
    assert _sluice_rows(spark, url, "folded") == expected
    assert _pyiceberg_rows(table) == expected


def _table_with_small_files(folder: Path, name: str) -> tuple[str, Any, list[dict[str, Any]]]:
    url, table = _new_table(folder, name)
    appended = []
    for first in range(0, 400, 100):
        rows = _rows(first, 50)
        table.append(pa.Table.from_pylist(rows, schema=ARROW))
        appended += rows
    return url, table, appended


def test_a_concurrent_append_lands_beside_the_rewrite(spark, tmp_path) -> None:
    """Appends committed between the rewrite's read and its commit are kept (PyIceberg's own
    overwrite refused this: "Added data files were found matching the filter")."""
    from sluice.lake.maintenance import optimize

    url, table, appended = _table_with_small_files(tmp_path, "appended")
    other = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "appended"))
    added: list[dict[str, Any]] = []

    def append_meanwhile(line: str) -> None:
        if line.startswith("wrote "):  # written, not committed yet
            for first in (5000, 6000):
                rows = _rows(first, 7)
                other.append(pa.Table.from_pylist(rows, schema=ARROW))
                added.extend(rows)

    summary = optimize(spark, url, "ns", "appended", report=append_meanwhile)
    assert summary is not None and added
    expected = sorted(_key(r) for r in appended + added)
    assert _sluice_rows(spark, url, "appended") == expected
    assert _pyiceberg_rows(table) == expected
    table.refresh()
    assert table.current_snapshot().summary.operation.value == "replace"
    assert len(data_files(table)) == 2 + 4  # the rewrite's one per partition, the appends' files


@pytest.mark.parametrize("how", ["copy-on-write", "position delete file"])
def test_a_concurrent_delete_from_a_rewritten_file_fails_it_in_one_line(spark, tmp_path, how: str) -> None:
    """A DELETE of a row of a file the rewrite read, committed between its read and its commit
    (a copy-on-write one replacing the file, or a merge-on-read position delete file): the
    optimize fails with one line naming that snapshot, commits nothing, and the deleted row
    stays deleted; run again, it compacts (and folds) what the delete left."""
    import pyarrow.parquet as pq

    from sluice.lake.maintenance import optimize

    name = "cow" if how == "copy-on-write" else "mor"
    url, table, appended = _table_with_small_files(tmp_path, name)
    other = open_catalog(LakeLocation.from_url(url)).load_table(("ns", name))
    before = table.current_snapshot().snapshot_id

    def delete_meanwhile(line: str) -> None:
        if not line.startswith("wrote "):
            return
        if how == "copy-on-write":
            other.delete("id = 4")
            return
        current = other.current_snapshot()
        assert current is not None
        for manifest in current.manifests(other.io):
            for entry in manifest.fetch_manifest_entry(other.io):
                with other.io.new_input(entry.data_file.file_path).open() as handle:
                    ids = pq.read_table(handle).column("id").to_pylist()
                if 4 in ids:
                    deletes = position_deletes(
                        other, [(entry.data_file.file_path, ids.index(4))], entry.data_file.partition
                    )
                    commit_deletes(other, [deletes])
                    return

    with pytest.raises(SluiceError) as raised:
        optimize(spark, url, "ns", name, report=delete_meanwhile)
    message = str(raised.value)
    assert "\n" not in message
    deleting = other.current_snapshot()
    assert deleting is not None
    verb = "removed" if how == "copy-on-write" else "added position delete file"
    assert f"snapshot {deleting.snapshot_id} (" in message and verb in message, message
    assert f"rewrite of snapshot {before} was not committed" in message, message
    table.refresh()
    now = table.current_snapshot()
    assert now is not None and now.snapshot_id == deleting.snapshot_id  # nothing after the delete
    expected = sorted(_key(r) for r in appended if r["id"] != 4)
    assert _sluice_rows(spark, url, name) == expected
    assert optimize(spark, url, "ns", name, report=lambda _: None) is not None
    assert _sluice_rows(spark, url, name) == expected
    assert _pyiceberg_rows(table) == expected
    assert _delete_files(table) == []


APPENDER = textwrap.dedent(
    """
    import os, sys, time
    import pyarrow as pa
    from sluice.lake.catalog import LakeLocation, open_catalog
    url, stop_file = sys.argv[1], sys.argv[2]
    table = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "raced"))
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.string()), pa.field("s", pa.string())])
    first, stop = 100_000, time.monotonic() + 300
    while time.monotonic() < stop and not os.path.exists(stop_file):
        rows = [{"id": i, "p": "ab"[i % 2], "s": f"s{i % 5}"} for i in range(first, first + 10)]
        table.append(pa.Table.from_pylist(rows, schema=schema))
        print(first, time.time(), flush=True)
        first += 10
        time.sleep(0.5)
    """
)


@pytest.mark.slow
def test_optimize_races_a_process_appending(spark, tmp_path) -> None:
    """A second process appends every 0.5 s while optimize runs three times: every optimize
    commits, and the rows are every row appended (both readers)."""
    from sluice.lake.maintenance import optimize

    url, table, appended = _table_with_small_files(tmp_path, "raced")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    appender = subprocess.Popen(
        [sys.executable, "-c", APPENDER, url, str(tmp_path / "stop")], stdout=subprocess.PIPE, text=True, env=env
    )
    firsts: list[int] = []
    started: list[int] = []  # each optimize's start, in ms since the epoch (snapshots' clock)
    try:
        committed = []
        since = 0.0
        for _ in range(3):
            while True:  # an append landed after the last optimize returned: there is something to compact
                line = appender.stdout.readline() if appender.stdout else ""
                assert line, "the appending process stopped"
                first, at = line.split()
                firsts.append(int(first))
                if float(at) > since:
                    break
            lines: list[str] = []
            started.append(int(time.time() * 1000))
            summary = optimize(spark, url, "ns", "raced", report=lines.append)
            assert summary is not None, lines
            table.refresh()
            assert summary.snapshot_id is not None, (
                lines,
                [(s.snapshot_id, s.summary) for s in table.snapshots()][-6:],
            )
            committed.append(summary.snapshot_id)
            since = time.time()
        (tmp_path / "stop").touch()
        out, _ = appender.communicate(timeout=120)
    finally:
        appender.kill()
    assert appender.returncode == 0
    firsts += [int(line.split()[0]) for line in out.splitlines()]
    table.refresh()
    appends = [s.timestamp_ms for s in table.snapshots() if s.summary and s.summary.operation.value == "append"]
    during = [
        sum(start <= at <= table.metadata.snapshot_by_id(s).timestamp_ms for at in appends)
        for start, s in zip(started, committed)
    ]
    assert sum(during) >= 1, f"no append landed while an optimize ran ({during}): the race was not run"
    added = [row for first in firsts for row in _rows(first, 10)]
    for row in added:
        row["s"] = f"s{row['id'] % 5}"
    expected = sorted(_key(r) for r in appended + added)
    table.refresh()
    operations = [table.metadata.snapshot_by_id(s).summary.operation.value for s in committed]
    assert operations == ["replace"] * 3
    assert _sluice_rows(spark, url, "raced") == expected
    assert _pyiceberg_rows(table) == expected
