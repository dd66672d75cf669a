"""Overwrite by a filter of lake tables: static ``INSERT OVERWRITE ... PARTITION (p = v)`` and
``DataFrameWriterV2.overwrite(condition)`` replace exactly the rows the filter selects, in
one snapshot, or are refused (the filter must select whole files) and change nothing.

Expected rows are computed by Spark over plain DataFrames of the same rows: the old rows
the filter does not select (a NULL filter keeps the row, as Spark's overwrite does) plus
the new ones. Catalog and table names start with ``lkof`` (other helpers share the machine).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_lake_overwrite import NEW_ROWS, files_under
from tests.integration.test_lake_sql import COLUMNS, ROWS, canonical

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A new lake attached as ``lkof`` with namespace ``ns``; ROWS as view ``lkof_rows``, NEW_ROWS as ``lkof_new``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lkof")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkof", url)
    fed.sql("CREATE NAMESPACE lkof.ns")
    spark.createDataFrame(ROWS, COLUMNS).createOrReplaceTempView("lkof_rows")
    spark.createDataFrame(NEW_ROWS, COLUMNS).createOrReplaceTempView("lkof_new")
    yield fed, url
    spark.catalog.dropTempView("lkof_rows")
    spark.catalog.dropTempView("lkof_new")


def load(url: str, table: str):
    return open_catalog(LakeLocation.from_url(url)).load_table(("ns", table))


def expected(spark, condition: str, new_rows_sql: str) -> list[tuple]:
    """Spark over plain DataFrames: ROWS where ``condition`` is not true, plus the new rows."""
    kept = spark.table("lkof_rows").where(f"NOT coalesce({condition}, false)")
    return canonical(kept.unionByName(spark.sql(new_rows_sql)).collect())


@pytest.mark.parametrize(
    ("table", "partition_by", "static", "condition"),
    [
        ("by_name", "name", "name = 'zürich'", "name = 'zürich'"),
        ("by_date", "identity(day)", "day = DATE'2025-03-09'", "day = DATE'2025-03-09'"),
        ("by_date_and_bucket", "identity(day), bucket(4, id)", "day = DATE'2025-03-09'", "day = DATE'2025-03-09'"),
    ],
)
def test_static_insert_overwrite_replaces_exactly_the_partition(spark, lake, table, partition_by, static, condition):
    fed, url = lake
    fed.sql(f"CREATE TABLE lkof.ns.{table} ({COLUMNS}) PARTITIONED BY ({partition_by})")
    fed.sql(f"INSERT INTO lkof.ns.{table} SELECT * FROM lkof_rows")
    column, _, value = static.partition(" = ")
    others = ", ".join(c.split()[0] for c in COLUMNS.split(", ") if c.split()[0] != column)
    fed.sql(f"INSERT OVERWRITE lkof.ns.{table} PARTITION ({static}) SELECT {others} FROM lkof_new")
    new_rows = f"SELECT {others}, {value} AS {column} FROM lkof_new"
    assert canonical(fed.sql(f"SELECT * FROM lkof.ns.{table}").collect()) == expected(spark, condition, new_rows)
    lake_table = load(url, table)
    assert len(lake_table.snapshots()) == 2  # the create's empty table has none; the insert, the overwrite
    summary = lake_table.current_snapshot().summary
    assert summary.operation.value == "overwrite" and int(summary["deleted-data-files"]) >= 1


def test_dataframe_writer_v2_overwrite_replaces_the_days_the_condition_selects(spark, lake) -> None:
    from pyspark.sql import functions as F

    fed, _ = lake
    fed.sql(f"CREATE TABLE lkof.ns.by_day ({COLUMNS}) PARTITIONED BY (days(ts))")
    fed.sql("INSERT INTO lkof.ns.by_day SELECT * FROM lkof_rows")
    since = dt.datetime(2025, 3, 9, tzinfo=UTC)
    spark.table("lkof_new").writeTo("lkof.ns.by_day").overwrite(F.col("ts") >= F.lit(since))
    condition = "ts >= TIMESTAMP'2025-03-09 00:00:00+00:00'"
    assert canonical(fed.sql("SELECT * FROM lkof.ns.by_day").collect()) == expected(
        spark, condition, "SELECT * FROM lkof_new"
    )


def test_a_filter_that_splits_a_file_is_refused_and_changes_nothing(spark, lake) -> None:
    from pyspark.sql import functions as F

    fed, url = lake
    fed.sql(f"CREATE TABLE lkof.ns.split ({COLUMNS}) PARTITIONED BY (identity(day))")
    fed.sql("INSERT INTO lkof.ns.split SELECT * FROM lkof_rows")
    snapshot, files = load(url, "split").current_snapshot().snapshot_id, files_under(url)
    # day 2025-03-09 holds ids 1 and 2 in one file: id = 1 selects half of it
    with pytest.raises(Exception, match=r"(?s)may hold rows that match it and rows that do not.*Nothing was written"):
        spark.table("lkof_new").writeTo("lkof.ns.split").overwrite(F.expr("id = 1"))
    assert load(url, "split").current_snapshot().snapshot_id == snapshot
    assert files_under(url) == files
    assert canonical(fed.sql("SELECT * FROM lkof.ns.split").collect()) == canonical(spark.table("lkof_rows").collect())


def test_a_filter_sluice_cannot_prove_is_refused(spark, lake) -> None:
    from pyspark.sql import functions as F

    fed, url = lake
    fed.sql(f"CREATE TABLE lkof.ns.floats ({COLUMNS}) PARTITIONED BY (bucket(4, id))")
    fed.sql("INSERT INTO lkof.ns.floats SELECT * FROM lkof_rows")
    snapshot = load(url, "floats").current_snapshot().snapshot_id
    # float comparisons are never exact in Iceberg's terms (NaN): no file is proven to match whole
    with pytest.raises(Exception, match="cannot be proven to match it whole"):
        spark.table("lkof_new").writeTo("lkof.ns.floats").overwrite(F.expr("v > -1e308"))
    assert load(url, "floats").current_snapshot().snapshot_id == snapshot


def test_an_overwrite_whose_partition_holds_nothing_yet_only_adds(spark, lake) -> None:
    fed, _ = lake
    fed.sql(f"CREATE TABLE lkof.ns.fresh ({COLUMNS}) PARTITIONED BY (identity(day))")
    fed.sql("INSERT INTO lkof.ns.fresh SELECT * FROM lkof_rows")
    fed.sql(
        "INSERT OVERWRITE lkof.ns.fresh PARTITION (day = DATE'2040-01-01') "
        f"SELECT 5, NULL, 'new', 1.0, {Decimal('1.5')}"
    )
    assert fed.sql("SELECT count(*) FROM lkof.ns.fresh").collect()[0][0] == len(ROWS) + 1
