"""Dynamic partition overwrite of lake tables: ``INSERT OVERWRITE`` with Spark's
``partitionOverwriteMode=dynamic``, ``DataFrameWriterV2.overwritePartitions()`` and
``ingest(mode="overwrite-partitions")`` replace the partitions the new rows fall in and keep
every other partition's rows, in one snapshot; a failed statement changes nothing.

The expected rows are computed here, independently of Sluice's partitioning code: a row's
partition is its identity value, its UTC day, or Iceberg's bucket of its id (PyIceberg's
reference transform), and the read-back is compared with Spark's collect of the expected
rows. Catalog and table names start with ``lkow`` (other helpers share the machine).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_lake_sql import COLUMNS, ROWS, canonical

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc
#: rows that fall in some of ROWS' partitions (and a new one) under each spec below
NEW_ROWS = [
    (2, dt.datetime(2025, 3, 9, 12, 0, tzinfo=UTC), "zürich", 2.5, Decimal("2.0000"), dt.date(2025, 3, 9)),
    (11, None, None, float("nan"), Decimal("-1.0000"), None),
    (12, dt.datetime(2030, 1, 1, tzinfo=UTC), "neu ", -0.0, Decimal("0.0001"), dt.date(2030, 1, 1)),
]


def _bucket4(value: Any) -> Any:
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType

    return None if value is None else BucketTransform(4).transform(LongType())(value)


def _utc_day(value: Any) -> Any:
    return None if value is None else value.astimezone(UTC).date()


#: table -> (PARTITIONED BY, the partition of a row as ROWS spells it)
SPECS: dict[str, tuple[str, Callable[[tuple], Any]]] = {
    "by_name": ("name", lambda row: row[2]),
    "by_date": ("identity(day)", lambda row: row[5]),
    "by_day": ("days(ts)", lambda row: _utc_day(row[1])),
    "by_bucket": ("bucket(4, id)", lambda row: _bucket4(row[0])),
    "by_day_and_bucket": ("days(ts), bucket(4, id)", lambda row: (_utc_day(row[1]), _bucket4(row[0]))),
}


@contextmanager
def dynamic_mode(spark) -> Iterator[None]:
    key = "spark.sql.sources.partitionOverwriteMode"
    before = spark.conf.get(key)
    spark.conf.set(key, "dynamic")
    try:
        yield
    finally:
        spark.conf.set(key, before)


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A new lake attached as ``lkow`` with namespace ``ns``; ROWS as view ``lkow_rows``, NEW_ROWS as ``lkow_new``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lkow")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkow", url)
    fed.sql("CREATE NAMESPACE lkow.ns")
    spark.createDataFrame(ROWS, COLUMNS).createOrReplaceTempView("lkow_rows")
    spark.createDataFrame(NEW_ROWS, COLUMNS).createOrReplaceTempView("lkow_new")
    yield fed, url
    spark.catalog.dropTempView("lkow_rows")
    spark.catalog.dropTempView("lkow_new")


def load(url: str, table: str):
    return open_catalog(LakeLocation.from_url(url)).load_table(("ns", table))


def files_under(url: str) -> set[str]:
    warehouse = Path(LakeLocation.from_url(url).warehouse)
    return {str(path.relative_to(warehouse)) for path in warehouse.rglob("*") if path.is_file()}


def expected_after_overwrite(spark, partition_of: Callable[[tuple], Any]) -> list[tuple]:
    """ROWS in partitions NEW_ROWS do not touch, plus NEW_ROWS, as Spark collects them."""
    touched = {partition_of(row) for row in NEW_ROWS}
    kept = [row for row in ROWS if partition_of(row) not in touched]
    assert kept and len(kept) < len(ROWS), "the new rows must replace some partitions and keep others"
    return spark.createDataFrame(kept + NEW_ROWS, COLUMNS).collect()


@pytest.mark.parametrize("table", sorted(SPECS))
def test_insert_overwrite_in_dynamic_mode_replaces_only_the_partitions_the_rows_touch(spark, lake, table) -> None:
    fed, url = lake
    partition_by, partition_of = SPECS[table]
    fed.sql(f"CREATE TABLE lkow.ns.{table} ({COLUMNS}) PARTITIONED BY ({partition_by})")
    fed.sql(f"INSERT INTO lkow.ns.{table} SELECT * FROM lkow_rows")
    with dynamic_mode(spark):
        fed.sql(f"INSERT OVERWRITE lkow.ns.{table} SELECT * FROM lkow_new")
    assert canonical(fed.sql(f"SELECT * FROM lkow.ns.{table}").collect()) == canonical(
        expected_after_overwrite(spark, partition_of)
    )
    lake_table = load(url, table)
    assert len(lake_table.snapshots()) == 2
    summary = lake_table.current_snapshot().summary
    assert (summary.operation.value, summary["replace-partitions"]) == ("overwrite", "true")


def test_overwrite_partitions_of_dataframe_writer_v2_is_the_same_overwrite(spark, lake) -> None:
    fed, _ = lake
    partition_by, partition_of = SPECS["by_day"]
    fed.sql(f"CREATE TABLE lkow.ns.v2 ({COLUMNS}) PARTITIONED BY ({partition_by})")
    fed.sql("INSERT INTO lkow.ns.v2 SELECT * FROM lkow_rows")
    spark.table("lkow_new").writeTo("lkow.ns.v2").overwritePartitions()
    assert canonical(fed.sql("SELECT * FROM lkow.ns.v2").collect()) == canonical(
        expected_after_overwrite(spark, partition_of)
    )


def test_static_mode_still_replaces_the_whole_table(spark, lake) -> None:
    fed, _ = lake
    fed.sql(f"CREATE TABLE lkow.ns.static ({COLUMNS}) PARTITIONED BY (bucket(4, id))")
    fed.sql("INSERT INTO lkow.ns.static SELECT * FROM lkow_rows")
    fed.sql("INSERT OVERWRITE lkow.ns.static SELECT * FROM lkow_new")
    assert canonical(fed.sql("SELECT * FROM lkow.ns.static").collect()) == canonical(spark.table("lkow_new").collect())


def test_an_unpartitioned_table_is_replaced_whole_and_no_rows_change_nothing(spark, lake) -> None:
    fed, url = lake
    fed.sql(f"CREATE TABLE lkow.ns.flat ({COLUMNS})")
    fed.sql("INSERT INTO lkow.ns.flat SELECT * FROM lkow_rows")
    with dynamic_mode(spark):
        fed.sql("INSERT OVERWRITE lkow.ns.flat SELECT * FROM lkow_new")
        assert canonical(fed.sql("SELECT * FROM lkow.ns.flat").collect()) == canonical(
            spark.table("lkow_new").collect()
        )
        snapshots, files = len(load(url, "flat").snapshots()), files_under(url)
        fed.sql("INSERT OVERWRITE lkow.ns.flat SELECT * FROM lkow_new WHERE id < 0")
    assert len(load(url, "flat").snapshots()) == snapshots
    assert files_under(url) == files
    assert fed.sql("SELECT count(*) FROM lkow.ns.flat").collect()[0][0] == len(NEW_ROWS)


def test_a_failed_dynamic_overwrite_leaves_the_table_as_it_was(spark, lake) -> None:
    fed, url = lake
    fed.sql(f"CREATE TABLE lkow.ns.kept ({COLUMNS}) PARTITIONED BY (days(ts))")
    fed.sql("INSERT INTO lkow.ns.kept SELECT * FROM lkow_rows")
    snapshot, files = load(url, "kept").current_snapshot().snapshot_id, files_under(url)
    dying = "SELECT IF(id = 12, raise_error('the job dies'), id), ts, name, v, d, day FROM lkow_new"
    with dynamic_mode(spark), pytest.raises(Exception, match="the job dies"):
        fed.sql(f"INSERT OVERWRITE lkow.ns.kept {dying}")
    assert load(url, "kept").current_snapshot().snapshot_id == snapshot
    assert files_under(url) == files
    assert canonical(fed.sql("SELECT * FROM lkow.ns.kept").collect()) == canonical(spark.table("lkow_rows").collect())


def test_ingest_overwrite_partitions_replaces_the_partitions_of_its_rows(spark, tmp_path: Path) -> None:
    from sluice import Federation
    from sluice.lake.ingest import ingest

    url = f"iceberg+sqlite:///{tmp_path}/catalog.db"
    _, partition_of = SPECS["by_day_and_bucket"]
    rows, new = spark.createDataFrame(ROWS, COLUMNS), spark.createDataFrame(NEW_ROWS, COLUMNS)
    ingest(spark, url, rows, namespace="ns", table="t", partition_by="day(ts), bucket(4, id)", report=lambda _: None)
    summary = ingest(spark, url, new, namespace="ns", table="t", mode="overwrite-partitions", report=lambda _: None)
    assert summary.rows == len(NEW_ROWS)
    fed = Federation(spark=spark)
    fed.attach("lkowingest", url)
    assert canonical(fed.sql("SELECT * FROM lkowingest.ns.t").collect()) == canonical(
        expected_after_overwrite(spark, partition_of)
    )
    assert len(open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t")).snapshots()) == 2
    # rows only in partitions the table does not have yet: nothing replaced, still a replace-partitions overwrite
    later = spark.createDataFrame([(99, dt.datetime(2031, 1, 1, tzinfo=UTC), "x", 1.0, Decimal(1), None)], COLUMNS)
    ingest(spark, url, later, namespace="ns", table="t", mode="overwrite-partitions", report=lambda _: None)
    snapshot = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t")).current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    summary = snapshot.summary
    assert (summary.operation.value, summary["replace-partitions"], summary["deleted-data-files"]) == (
        "overwrite",
        "true",
        None,  # no file deleted
    )
    assert (
        fed.sql("SELECT count(*) FROM lkowingest.ns.t").collect()[0][0]
        == len(expected_after_overwrite(spark, partition_of)) + 1
    )
