"""Orphan-file removal on a real PyIceberg table (no Spark): only unreferenced, old files go."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pytest

from sluice.cli import main
from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.orphans import remove_orphan_files
from tests.small_lake import small_lake

HOUR_AGO = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)


def _batch(first: int) -> pa.Table:
    return pa.table({"id": pa.array([first, first + 1], pa.int64()), "x": [0.5, float("nan")]})


def _table_folder(url: str) -> Path:
    table = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t"))
    return Path(table.location().removeprefix("file://"))


def _rows(url: str) -> list[int]:
    table = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t"))
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _plant(path: Path, age: dt.timedelta) -> Path:
    """A file no metadata names, last modified ``age`` ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PAR1 left by a killed job")
    stamp = (dt.datetime.now(dt.timezone.utc) - age).timestamp()
    os.utime(path, (stamp, stamp))
    return path


def _files(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()}


def test_old_unreferenced_files_go_and_every_referenced_file_stays(tmp_path: Path) -> None:
    url = small_lake(tmp_path, _batch(1), _batch(3))
    # an overwrite: the first snapshots' files are still named by them (time travel), so they stay
    open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t")).overwrite(_batch(10))
    folder = _table_folder(url)
    before = _files(folder)
    staging = _plant(folder / "data" / "_staging-20261101T000000Z-dead" / "part-0.parquet", dt.timedelta(days=5))
    stray = _plant(folder / "metadata" / "00099-stray.metadata.json", dt.timedelta(days=5))
    running = _plant(folder / "data" / "_staging-20261126T000000Z-live" / "part-0.parquet", dt.timedelta(minutes=1))

    dry = remove_orphan_files(url, "ns", "t", dry_run=True)
    assert set(dry.orphans) == {str(staging), str(stray)} and dry.too_new == 1 and dry.dry_run
    assert "would delete 2 orphan file(s)" in str(dry)
    assert staging.exists() and stray.exists()

    done = remove_orphan_files(url, "ns", "t")
    assert set(done.orphans) == {str(staging), str(stray)}
    assert _files(folder) == before | {running}, "a referenced file was deleted, or an orphan left"
    assert not staging.parent.exists(), "the killed job's emptied staging folder stays"
    assert (folder / "data").is_dir() and running.exists()
    assert _rows(url) == [10, 11]
    table = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t"))
    first = min(table.snapshots(), key=lambda snapshot: snapshot.timestamp_ms)
    assert sorted(table.scan(snapshot_id=first.snapshot_id).to_arrow().column("id").to_pylist()) == [1, 2]


def test_a_file_newer_than_the_cut_off_stays(tmp_path: Path) -> None:
    url = small_lake(tmp_path, _batch(1))
    folder = _table_folder(url)
    recent = _plant(folder / "data" / "copied-by-hand.parquet", dt.timedelta(minutes=30))
    assert remove_orphan_files(url, "ns", "t").orphans == ()
    assert recent.exists()
    assert remove_orphan_files(url, "ns", "t", older_than=dt.datetime.now(dt.timezone.utc)).orphans == (str(recent),)
    assert not recent.exists() and _rows(url) == [1, 2]


def test_the_cli_lists_then_deletes_and_names_a_bad_timestamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = small_lake(tmp_path, _batch(1))
    orphan = _plant(_table_folder(url) / "data" / "x" / "part-9.parquet", dt.timedelta(days=1))
    args = ["lake", "remove-orphans", url, "--namespace", "ns", "--table", "t", "--older-than", HOUR_AGO.isoformat()]
    assert main([*args, "--dry-run"]) == 0
    assert "would delete 1 orphan file(s)" in capsys.readouterr().out and orphan.exists()
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "ns.t: deleted 1 orphan file(s)" in out and str(orphan) in out and not orphan.exists()
    assert main(["lake", "remove-orphans", url, "--namespace", "ns", "--table", "t", "--older-than", "yesterday"]) != 0
    assert "--older-than takes an ISO timestamp" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="time zone"):
        remove_orphan_files(url, "ns", "t", older_than=dt.datetime(2026, 1, 1))
