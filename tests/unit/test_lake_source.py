"""The Iceberg source without Spark: bad input and lost files give errors that name them."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
import sqlglot

from sluice.errors import BindError, ConfigError, SourceError
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.pushdown.pushed import Pushed
from sluice.scan import ScanSpec
from sluice.sources import open_source


@pytest.fixture()
def lake(tmp_path: Path) -> str:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField

    location = LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/catalog.db")
    catalog = open_catalog(location, create=True)
    catalog.create_namespace("ns")
    table = catalog.create_table(
        ("ns", "t"),
        schema=Schema(
            NestedField(1, "id", LongType(), required=False), NestedField(2, "x", DoubleType(), required=False)
        ),
    )
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "x": [0.5, float("nan"), None]}))
    return location.url


def _read(url: str, where: tuple[str, ...] = ()) -> list[int]:
    source = open_source("lake", url)
    pushed = tuple(Pushed(tree=sqlglot.parse_one(text, read="duckdb")) for text in where)
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), ("id",), where=pushed)
    return sorted(i for task in spec.tasks(source) for batch in source.read(task) for i in batch.column(0).to_pylist())


def test_reads_and_filters(lake: str) -> None:
    assert _read(lake) == [1, 2, 3]
    assert _read(lake, ("\"x\" > CAST('0.1' AS DOUBLE)",)) == [1, 2]  # NaN > 0.1 in Spark


def test_unknown_table_names_what_exists(lake: str) -> None:
    source = open_source("lake", lake)
    with pytest.raises(BindError, match=r"no lake table ns\.missing \(tables: ns\.t\)"):
        source.describe("ns", "missing")
    with pytest.raises(BindError, match="lake tables are named"):
        source.describe(None, "t")


def test_bad_urls(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown option"):
        LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/c.db?wearhouse=x")
    with pytest.raises(SourceError, match="does not exist"):
        open_source("lake", f"iceberg+sqlite:///{tmp_path}/nowhere.db").check()


def test_a_lost_data_file_is_an_error_not_a_short_answer(lake: str) -> None:
    source = open_source("lake", lake)
    spec = ScanSpec.for_source(source, source.describe("ns", "t"), ("id",))
    (task,) = spec.tasks(source)
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
