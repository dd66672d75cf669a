"""The Iceberg source without Spark: bad input and lost files give errors that name them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sluice.errors import BindError, ConfigError, SourceError, TimeTravelError
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.pushdown.pushed import Pushed
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from sluice.types import AsOf
from tests.pyramids import pyramid_of
from tests.small_lake import small_lake


@pytest.fixture()
def lake(tmp_path: Path) -> str:
    return small_lake(tmp_path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "x": [0.5, float("nan"), None]}))


def _pushed(where: tuple[str, ...]) -> tuple[Pushed, ...]:
    """Pushed conjuncts as the planner hands them over: trees (here parsed from the lake's DuckDB SQL)."""
    return tuple(Pushed(tree=cast(exp.Expression, sqlglot.parse_one(text, read="duckdb"))) for text in where)


def _read(url: str, where: tuple[str, ...] = ()) -> list[int]:
    source = open_source("lake", url)
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), ("id",), where=_pushed(where))
    return sorted(i for task in source.tasks(spec) for batch in source.read(task) for i in batch.column(0).to_pylist())


def test_reads_and_filters(lake: str) -> None:
    assert _read(lake) == [1, 2, 3]
    assert _read(lake, ("\"x\" > CAST('0.1' AS DOUBLE)",)) == [1, 2]  # NaN > 0.1 in Spark


def test_unknown_table_names_what_exists(lake: str) -> None:
    source = open_source("lake", lake)
    with pytest.raises(BindError, match=r"has no table ns\.missing \(none of the 1 table\(s\) in ns is close\)"):
        source.describe("ns", "missing")
    with pytest.raises(BindError, match="lake tables are named"):
        source.describe(None, "t")


def test_bad_urls(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown option"):
        LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/c.db?wearhouse=x")
    with pytest.raises(SourceError, match="does not exist"):
        open_source("lake", f"iceberg+sqlite:///{tmp_path}/nowhere.db").check()


@pytest.mark.parametrize("folder", ["my lake é%41", "a+b", "plain"])
def test_a_lake_under_an_odd_folder_name_opens_there(tmp_path: Path, folder: str) -> None:
    """The location's URL reads back as the same folders (its query was decoded: ``%41`` became
    ``A``, ``+`` a space), and the catalog opens the file named so (SQLAlchemy decodes its URL)."""
    location = LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/{folder}/catalog.db")
    assert LakeLocation.from_url(location.url) == location
    assert location.warehouse == str(tmp_path / folder / "warehouse")
    open_catalog(location, create=True).create_namespace("ns")
    assert (tmp_path / folder / "catalog.db").is_file()
    assert open_catalog(LakeLocation.from_url(location.url)).list_namespaces() == [("ns",)]


def test_a_lost_data_file_is_an_error_not_a_short_answer(lake: str) -> None:
    source = open_source("lake", lake)
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), ("id",))
    (task,) = source.tasks(spec)
    for path in {read["path"] for read in __import__("json").loads(task.request)["files"]}:
        os.remove(path.removeprefix("file://"))
    with pytest.raises(SourceError, match=r"lake table lake\.ns\.t \(snapshot \d+\): data file \S+ is missing"):
        list(source.read(task))


def test_a_catalog_file_made_again_is_reopened(tmp_path: Path) -> None:
    """The demo deletes a stale lake and ingests anew in one process: the cached catalog
    must not keep writing through its pool on the deleted file ("readonly database")."""
    import shutil

    from sluice.lake.telemetry import create_readings

    location = LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/lake/catalog.db")
    create_readings(open_catalog(location, create=True))
    shutil.rmtree(tmp_path / "lake")
    assert create_readings(open_catalog(location, create=True)).name() == ("telemetry", "readings")
    assert open_catalog(location) is open_catalog(location)  # still cached while the file stays


def _read_at(url: str, as_of: AsOf | None, column: str, where: tuple[str, ...] = ()) -> list:
    source = open_source("lake", url)
    table = source.describe("ns", "t") if as_of is None else source.describe_as_of("ns", "t", as_of)
    spec = ScanSpec.for_source(source, table, ("id", column), where=_pushed(where))
    return sorted(
        tuple(row.values()) for task in source.tasks(spec) for batch in source.read(task) for row in batch.to_pylist()
    )


def test_time_travel_reads_the_snapshot_and_its_schema(lake: str) -> None:
    table = open_catalog(LakeLocation.from_url(lake)).load_table(("ns", "t"))
    first = table.current_snapshot()
    assert first is not None
    with table.update_schema() as update:
        update.rename_column("x", "y")
    table.append(pa.table({"id": pa.array([4], pa.int64()), "y": [9.5]}))
    source = open_source("lake", lake)
    old = source.describe_as_of("ns", "t", AsOf(snapshot_id=first.snapshot_id))
    assert [c.name for c in old.columns] == ["id", "x"] and old.snapshot == first.snapshot_id and old.row_estimate == 3
    rows = _read_at(lake, AsOf(timestamp_ms=first.timestamp_ms), "x", ("\"x\" > CAST('0.1' AS DOUBLE)",))
    assert [row[0] for row in rows] == [1, 2]  # NaN > 0.1 in Spark
    # the current schema finds the renamed column in the old file by its field id, and prunes with its statistics
    assert [row[0] for row in _read_at(lake, None, "y", ("\"y\" > CAST('0.4' AS DOUBLE)",))] == [1, 2, 4]
    assert [r[0] for r in _read_at(lake, None, "y")] == [1, 2, 3, 4]


def test_unknown_snapshots_and_other_sources_are_time_travel_errors(lake: str, tmp_path: Path) -> None:
    import sqlite3

    source = open_source("lake", lake)
    with pytest.raises(TimeTravelError, match=r"lake table lake\.ns\.t has no snapshot 7 \(snapshots: \d+ at 20"):
        source.describe_as_of("ns", "t", AsOf(snapshot_id=7))
    with pytest.raises(TimeTravelError, match=r"no snapshot at or before 1970-01-01T00:00:00.001\+00:00"):
        source.describe_as_of("ns", "t", AsOf(timestamp_ms=1))
    with sqlite3.connect(tmp_path / "plain.db") as connection:
        connection.execute("CREATE TABLE t (id INTEGER)")
    plain = open_source("plain", f"sqlite:///{tmp_path}/plain.db")
    with pytest.raises(TimeTravelError, match=r"time travel \(VERSION AS OF 3\) is only for lake tables"):
        plain.describe_as_of(None, "t", AsOf(snapshot_id=3))


def test_files_without_field_ids_are_read_through_the_name_mapping(tmp_path: Path) -> None:
    """Spark's files (Sluice's ingest) carry no field ids: after a rename, the table's name
    mapping still finds the column under its old name, in reads and in row-group statistics."""
    import pyarrow.parquet as pq
    from pyiceberg.types import LongType

    location = LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/catalog.db")
    catalog = open_catalog(location, create=True)
    catalog.create_namespace("ns")
    table = catalog.create_table(("ns", "t"), schema=pa.schema([("id", pa.int64()), ("v", pa.string())]))
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["Zürich", ""]}), path)
    assert pq.read_schema(path).field("v").metadata is None  # no field id
    table.add_files([str(path)])
    with table.update_schema() as update:
        update.rename_column("v", "place")
        update.add_column("extra", LongType())
    url = location.url
    assert _read_at(url, None, "place") == [(1, "Zürich"), (2, "")]
    assert _read_at(url, None, "place", ("\"place\" = ''",)) == [(2, "")]
    source = open_source("lake", url)
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), ("id",), where=_pushed(("\"place\" > 'zzz'",)))
    assert pyramid_of(source, spec).tiers[-1].kept == 0  # the old name's statistics prune the new name
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), ("extra",))
    assert [v for task in source.tasks(spec) for b in source.read(task) for v in b.column(0).to_pylist()] == [
        None,
        None,
    ]


@pytest.mark.parametrize(
    ("suffix", "message"),
    [
        ("afile/x/catalog.db?create=true", r"cannot make the lake's catalog folder .*/afile/x: Not a directory"),
        ("new/catalog.db?create=true&warehouse={d}/afile/wh", r"cannot make the lake's warehouse folder .*afile/wh"),
        ("adir?create=true", r"catalog file .*/adir is a directory, not a catalog file"),
        ("new/catalog.db?create=maybe", r"create= takes true or false, not 'maybe'"),
    ],
)
def test_a_failed_create_names_what_was_wrong_and_leaves_nothing(tmp_path: Path, suffix: str, message: str) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "adir").mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises((SourceError, ConfigError), match=message):
        open_source("lk", f"iceberg+sqlite:///{tmp_path}/{suffix.format(d=tmp_path)}").check()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no catalog file, no folder made
    source = open_source("lk", f"iceberg+sqlite:///{tmp_path}/new/catalog.db?create=true")
    source.check()  # the right URL then works
    assert (tmp_path / "new" / "catalog.db").is_file() and (tmp_path / "new" / "warehouse").is_dir()


def test_a_malformed_lake_url_names_no_password() -> None:
    with pytest.raises(ConfigError, match=r"lake URLs look like") as refused:
        open_source("lk", "iceberg+sqlite://user:hunter2@host/tmp/catalog.db?create=true")
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    ("name", "arrow"),
    [
        ("map<string,string>", pa.map_(pa.string(), pa.string())),
        (
            "array<struct<a:int,`b c`:map<int,binary>>>",
            pa.list_(pa.struct([("a", pa.int32()), ("b c", pa.map_(pa.int32(), pa.binary()))])),
        ),
        ("struct<`x``y`:decimal(10,2)>", pa.struct([("x`y", pa.decimal128(10, 2))])),
    ],
)
def test_nested_spark_types_of_metadata_tables(name: str, arrow: pa.DataType) -> None:
    from sluice.types import Kind, SparkType, spark_type_of

    kind = SparkType(name)
    assert kind.kind is Kind.COMPLEX and kind.arrow() == arrow
    assert SparkType(spark_type_of(arrow).name).arrow() == arrow  # Arrow -> Spark's catalog string -> Arrow
    for bad in ("map<string>", "array<nosuch>", "struct<a:int"):
        with pytest.raises(ValueError):
            SparkType(bad)
