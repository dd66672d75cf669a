"""``DELETE FROM`` lake tables: exactly the rows Spark's condition is TRUE for leave, in one snapshot.

The truth is Spark filtering the same rows held in a DataFrame (``NOT coalesce(condition,
false)``: a NULL condition keeps the row, as Spark's DELETE does), on edge values (NULL,
NaN, ±0.0, '', trailing spaces, case, non-ASCII, bigint extremes, timestamps around the
session zone's DST change, decimals), over a table partitioned by identity, bucket, days and
truncate and an unpartitioned one. Each result is read by both of the lake's readers and
by PyIceberg; the snapshot before the delete still holds every row (time travel). Catalog
and table names start with ``lkdel`` (other helpers share the machine).
"""

from __future__ import annotations

import logging

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_lake_sql import COLUMNS, ROWS, canonical

pytestmark = pytest.mark.integration

PARTITIONED = "identity(day), bucket(4, id), days(ts), truncate(name, 2)"
TABLES = {"parted": PARTITIONED, "flat": None}


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A new lake attached as ``lkdel`` with namespace ``ns``; ROWS as view ``lkdel_rows``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lkdel")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkdel", url)
    fed.sql("CREATE NAMESPACE lkdel.ns")
    spark.createDataFrame(ROWS, COLUMNS).createOrReplaceTempView("lkdel_rows")
    yield fed, url
    spark.catalog.dropTempView("lkdel_rows")


def _table(fed, name: str, kind: str):
    """A fresh table ``lkdel.ns.<name>`` of kind ``parted`` or ``flat`` holding ROWS (one insert)."""
    partitioned = f" PARTITIONED BY ({TABLES[kind]})" if TABLES[kind] else ""
    fed.sql(f"CREATE TABLE lkdel.ns.{name} ({COLUMNS}){partitioned}")
    fed.sql(f"INSERT INTO lkdel.ns.{name} SELECT * FROM lkdel_rows")
    return f"lkdel.ns.{name}"


def _lake_table(url: str, name: str):
    return open_catalog(LakeLocation.from_url(url)).load_table(("ns", name))


def _read_both(spark, fed, sql: str) -> list[list[tuple]]:
    """``sql``'s rows as each of the lake's readers (vectorised, Python) reads them."""
    read = []
    for reader in ("vectorised", "python"):
        spark.conf.set("spark.sluice.lakeReader", reader)
        try:
            read.append(canonical(fed.sql(sql).collect()))
        finally:
            spark.conf.unset("spark.sluice.lakeReader")
    return read


CASES = [
    ("flat", "v > 0"),  # NaN is above every double in Spark; NULL keeps its row
    ("flat", "v = 0.0 OR name = ''"),  # -0.0 = 0.0 in Spark
    ("parted", "name = 'zürich'"),  # case: Zürich stays
    ("parted", "name LIKE 'a%' OR id < 0"),  # 'a  ' keeps its trailing spaces; bigint minimum
    ("parted", "ts >= TIMESTAMP'2025-03-09 03:00:00'"),  # New York's DST gap, the session zone
    ("parted", "d IN (1.25, -0.0001) OR id = 9223372036854775807"),
    ("parted", "upper(name) <> 'A  ' AND v < 1"),
    ("flat", "day = DATE'2025-03-09' AND name <> '日本語'"),
]


@pytest.mark.parametrize(("kind", "condition"), CASES)
def test_delete_leaves_the_rows_spark_keeps(spark, lake, kind: str, condition: str) -> None:
    fed, url = lake
    name = f"{kind}_{CASES.index((kind, condition))}"
    table = _table(fed, name, kind)
    before = _lake_table(url, name).current_snapshot().snapshot_id
    fed.sql(f"DELETE FROM {table} WHERE {condition}")
    truth = spark.table("lkdel_rows").where(f"NOT coalesce({condition}, false)")
    expected = canonical(truth.collect())
    every = canonical(spark.table("lkdel_rows").collect())
    assert expected != every, "the condition must delete something"
    assert _read_both(spark, fed, f"SELECT * FROM {table}") == [expected, expected]
    lake_table = _lake_table(url, name)
    assert len(lake_table.snapshots()) == 2  # the insert's and the delete's
    assert lake_table.current_snapshot().parent_snapshot_id == before
    ids = sorted(lake_table.scan().to_arrow().column("id").to_pylist())  # PyIceberg, a second reader
    assert ids == sorted(row.id for row in truth.collect())
    assert canonical(fed.sql(f"SELECT * FROM {table} VERSION AS OF {before}").collect()) == every


def test_a_whole_partition_delete_writes_no_data_file(spark, lake, caplog) -> None:
    """Proven by the identity partition: the files are dropped unread (no Spark job rewrites them)."""
    fed, url = lake
    table = _table(fed, "whole", "parted")
    with caplog.at_level(logging.INFO, logger="sluice.planner.deletes"):
        fed.sql(f"DELETE FROM {table} WHERE day = DATE'2025-03-09'")
    said = [r.getMessage() for r in caplog.records if r.name == "sluice.planner.deletes"]
    assert any("remove" in line and "whole file" in line for line in said), said
    assert not any("rewrite" in line for line in said), said
    summary = _lake_table(url, "whole").current_snapshot().summary
    assert summary.get("added-data-files") in (None, "0") and int(summary["deleted-data-files"]) >= 1
    expected = canonical(spark.table("lkdel_rows").where("NOT coalesce(day = DATE'2025-03-09', false)").collect())
    assert _read_both(spark, fed, f"SELECT * FROM {table}") == [expected, expected]


def test_delete_without_where_empties_the_table_in_one_snapshot(spark, lake) -> None:
    fed, url = lake
    table = _table(fed, "everything", "parted")
    fed.sql(f"DELETE FROM {table}")
    lake_table = _lake_table(url, "everything")
    assert len(lake_table.snapshots()) == 2
    assert lake_table.current_snapshot().summary.get("added-data-files") in (None, "0")
    assert fed.sql(f"SELECT count(*) FROM {table}").collect()[0][0] == 0


def test_a_failing_delete_leaves_the_table_as_it_was(spark, lake) -> None:
    """Spark fails the rewrite (ANSI: 'Zürich' is no int): no snapshot, no file left behind."""
    fed, url = lake
    table = _table(fed, "failing", "flat")
    lake_table = _lake_table(url, "failing")
    files = sorted(p.name for p in _data_folder(lake_table).rglob("*") if p.is_file())
    with pytest.raises(Exception, match="(?i)cast|number|format"):
        fed.sql(f"DELETE FROM {table} WHERE CAST(name AS INT) = 1")
    after = _lake_table(url, "failing")
    assert after.current_snapshot().snapshot_id == lake_table.current_snapshot().snapshot_id
    assert sorted(p.name for p in _data_folder(after).rglob("*") if p.is_file()) == files
    assert canonical(fed.sql(f"SELECT * FROM {table}").collect()) == canonical(spark.table("lkdel_rows").collect())


def _data_folder(lake_table):
    from pathlib import Path

    return Path(lake_table.location().removeprefix("file://")) / "data"
