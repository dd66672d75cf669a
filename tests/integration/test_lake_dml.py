"""``UPDATE`` and ``MERGE INTO`` lake tables: copy-on-write, one snapshot, Spark's semantics.

The truth is Spark computing the same change over the same rows held in a DataFrame (a
temporary view): ``CASE`` over the condition for UPDATE (a NULL condition keeps the row), and
the MERGE's joins spelled out (matched, not matched, not matched by source), with NULL keys
on both sides (NULL never matches). Each result is read by both of the lake's readers and by
PyIceberg; the snapshot before the change still holds every row (time travel). A MERGE that
matches one target row twice fails as Spark's does and changes nothing. The commit's rules
(:mod:`sluice.lake.row_level`) are checked directly: a file appended after the snapshot the
statement read is kept; a file of that snapshot removed meanwhile fails it in one line.
Catalog and table names start with ``lkdml`` (other helpers share the machine).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_lake_sql import COLUMNS, ROWS, canonical

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc
#: ROWS and a row whose key is NULL (it never matches in a MERGE)
TARGET = [*ROWS, (None, None, "nobody", 5.0, Decimal("2.0000"), dt.date(2025, 3, 9))]
SOURCE_COLUMNS = "id bigint, name string, v double, op string"
SOURCE = [
    (1, "one", 10.0, "set"),  # matched: updated
    (2, "two", 20.0, "del"),  # matched: deleted
    (4, None, None, "set"),  # matched: set to NULL
    (9, "nine", 9.0, "set"),  # not matched: inserted
    (None, "null key", 0.5, "set"),  # a NULL key matches nothing: inserted
]
PARTITIONED = "identity(day), bucket(4, id), truncate(name, 2)"
KINDS = {"parted": PARTITIONED, "flat": None}

MERGE = """
MERGE INTO {table} t USING lkdml_src s ON t.id = s.id
WHEN MATCHED AND s.op = 'del' THEN DELETE
WHEN MATCHED THEN UPDATE SET name = s.name, v = s.v
WHEN NOT MATCHED THEN INSERT (id, ts, name, v, d, day) VALUES (s.id, NULL, s.name, s.v, NULL, DATE'2025-03-09')
WHEN NOT MATCHED BY SOURCE AND t.v < 0 THEN DELETE
"""
#: the MERGE above, as Spark computes it over the views with joins
MERGE_TRUTH = """
SELECT t.id, t.ts, s.name, s.v, t.d, t.day FROM lkdml_rows t JOIN lkdml_src s ON t.id = s.id WHERE s.op <> 'del'
UNION ALL
SELECT t.* FROM lkdml_rows t LEFT ANTI JOIN lkdml_src s ON t.id = s.id WHERE NOT coalesce(t.v < 0, false)
UNION ALL
SELECT s.id, CAST(NULL AS TIMESTAMP), s.name, s.v, CAST(NULL AS DECIMAL(20,4)), DATE'2025-03-09'
FROM lkdml_src s LEFT ANTI JOIN lkdml_rows t ON t.id = s.id
"""


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A new lake attached as ``lkdml`` with namespace ``ns``; TARGET as ``lkdml_rows``, SOURCE as ``lkdml_src``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lkdml")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkdml", url)
    fed.sql("CREATE NAMESPACE lkdml.ns")
    spark.createDataFrame(TARGET, COLUMNS).createOrReplaceTempView("lkdml_rows")
    spark.createDataFrame(SOURCE, SOURCE_COLUMNS).createOrReplaceTempView("lkdml_src")
    yield fed, url
    spark.catalog.dropTempView("lkdml_rows")
    spark.catalog.dropTempView("lkdml_src")


def _table(fed, name: str, kind: str) -> str:
    """A fresh table ``lkdml.ns.<name>`` of kind ``parted`` or ``flat`` holding TARGET (one insert)."""
    partitioned = f" PARTITIONED BY ({KINDS[kind]})" if KINDS[kind] else ""
    fed.sql(f"CREATE TABLE lkdml.ns.{name} ({COLUMNS}){partitioned}")
    fed.sql(f"INSERT INTO lkdml.ns.{name} SELECT * FROM lkdml_rows")
    return f"lkdml.ns.{name}"


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


def _check(spark, fed, url: str, name: str, before: int, truth) -> None:
    """The table holds ``truth``'s rows for both readers and PyIceberg, in one new snapshot after
    ``before``, which still holds TARGET."""
    table = f"lkdml.ns.{name}"
    expected = canonical(truth.collect())
    assert expected != canonical(spark.table("lkdml_rows").collect()), "the statement must change something"
    assert _read_both(spark, fed, f"SELECT * FROM {table}") == [expected, expected]
    lake_table = _lake_table(url, name)
    assert lake_table.current_snapshot().parent_snapshot_id == before
    assert lake_table.current_snapshot().summary.operation.value == "overwrite"
    pyiceberg = lake_table.scan().to_arrow().select(["id", "name"]).to_pylist()  # a second reader
    assert sorted(map(repr, (tuple(row.values()) for row in pyiceberg))) == sorted(
        repr((row.id, row.name)) for row in truth.collect()
    )
    old = canonical(fed.sql(f"SELECT * FROM {table} VERSION AS OF {before}").collect())
    assert old == canonical(spark.table("lkdml_rows").collect())


#: the partitioned cases take over 20 s each (their files are many small ones): the slow tier
SLOW = pytest.mark.slow
UPDATES = [
    # a NULL condition (id 3's v, the NULL key) keeps the row; the SET moves rows between partitions
    pytest.param("parted", "name = upper(name), v = v + 1, id = id + 100", "v > 0 AND id < 100", marks=SLOW),
    ("flat", "name = 'renamed'", "id IS NULL OR name LIKE '%rich'"),
]


@pytest.mark.parametrize(("kind", "assignments", "condition"), UPDATES)
def test_update_changes_the_rows_spark_changes(spark, lake, kind: str, assignments: str, condition: str) -> None:
    fed, url = lake
    name = f"up_{kind}"
    table = _table(fed, name, kind)
    before = _lake_table(url, name).current_snapshot().snapshot_id
    fed.sql(f"UPDATE {table} SET {assignments} WHERE {condition}")
    columns = {"id": "id", "ts": "ts", "name": "name", "v": "v", "d": "d", "day": "day"}
    for assignment in assignments.split(", "):
        column, expression = assignment.split(" = ", 1)
        columns[column] = f"CASE WHEN coalesce({condition}, false) THEN {expression} ELSE {column} END AS {column}"
    truth = spark.sql(f"SELECT {', '.join(columns.values())} FROM lkdml_rows")
    _check(spark, fed, url, name, before, truth)


@pytest.mark.parametrize("kind", [pytest.param("parted", marks=SLOW), "flat"])
def test_merge_applies_every_clause_as_spark_does(spark, lake, kind: str) -> None:
    fed, url = lake
    name = f"merge_{kind}"
    table = _table(fed, name, kind)
    before = _lake_table(url, name).current_snapshot().snapshot_id
    fed.sql(MERGE.format(table=table))
    _check(spark, fed, url, name, before, spark.sql(MERGE_TRUTH))


def test_a_delete_by_a_subquery_rewrites_the_files(spark, lake) -> None:
    """Spark cannot hand a subquery to ``deleteWhere``: the DELETE is its copy-on-write rewrite."""
    fed, url = lake
    table = _table(fed, "subquery", "flat")
    before = _lake_table(url, "subquery").current_snapshot().snapshot_id
    fed.sql(f"DELETE FROM {table} WHERE id IN (SELECT id FROM lkdml_src)")
    truth = spark.sql("SELECT t.* FROM lkdml_rows t LEFT ANTI JOIN lkdml_src s ON t.id = s.id")
    _check(spark, fed, url, "subquery", before, truth)


def test_update_sets_a_column_added_since_the_last_snapshot(spark, lake) -> None:
    """ALTER TABLE makes no snapshot: the statement reads the current snapshot in the current columns."""
    fed, url = lake
    table = _table(fed, "added", "flat")
    fed.sql(f"ALTER TABLE {table} ADD COLUMN note string")
    fed.sql(f"UPDATE {table} SET note = concat('id ', id) WHERE id < 3")
    found = sorted(map(tuple, fed.sql(f"SELECT id, note FROM {table} WHERE note IS NOT NULL").collect()))
    assert found == sorted((row[0], f"id {row[0]}") for row in TARGET if row[0] is not None and row[0] < 3)
    assert fed.sql(f"SELECT count(*) FROM {table}").collect()[0][0] == len(TARGET)


def test_a_merge_matching_a_row_twice_fails_and_changes_nothing(spark, lake) -> None:
    fed, url = lake
    table = _table(fed, "twice", "parted")
    lake_table = _lake_table(url, "twice")
    files = sorted(p.name for p in _data_folder(lake_table).rglob("*") if p.is_file())
    spark.createDataFrame([(1, "a", 1.0, "set"), (1, "b", 2.0, "set")], SOURCE_COLUMNS).createOrReplaceTempView(
        "lkdml_twice"
    )
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION"):
        fed.sql(f"MERGE INTO {table} t USING lkdml_twice s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v")
    after = _lake_table(url, "twice")
    assert after.current_snapshot().snapshot_id == lake_table.current_snapshot().snapshot_id
    assert sorted(p.name for p in _data_folder(after).rglob("*") if p.is_file()) == files
    assert canonical(fed.sql(f"SELECT * FROM {table}").collect()) == canonical(spark.table("lkdml_rows").collect())


def test_merge_on_read_is_refused_naming_the_property(spark, lake) -> None:
    fed, url = lake
    table = _table(fed, "mor", "flat")
    lake_table = _lake_table(url, "mor")
    with lake_table.transaction() as transaction:
        transaction.set_properties({"write.update.mode": "merge-on-read"})
    with pytest.raises(Exception, match="write.update.mode is 'merge-on-read'"):
        fed.sql(f"UPDATE {table} SET v = 0")
    assert _lake_table(url, "mor").current_snapshot().snapshot_id == lake_table.current_snapshot().snapshot_id


def test_the_commit_keeps_an_append_and_refuses_a_concurrent_delete(spark, lake) -> None:
    """The write of a statement that read snapshot S (:func:`replace_data`, as the planner calls
    it): a file appended after S stays; a file of S that a DELETE removed after S fails it."""
    from sluice.errors import SluiceError
    from sluice.lake.row_level import replace_data

    fed, url = lake
    table = _table(fed, "race", "flat")
    read = _lake_table(url, "race").current_snapshot().snapshot_id
    changed = spark.sql("SELECT id, ts, name, v + 1 AS v, d, day FROM lkdml_rows")
    fed.sql(f"INSERT INTO {table} VALUES (42, NULL, 'appended', 4.2, NULL, NULL)")
    replace_data(spark, url, "ns", "race", "UPDATE", read, changed, lambda line: None)
    expected = canonical([*changed.collect(), (42, None, "appended", 4.2, None, None)])
    assert canonical(fed.sql(f"SELECT * FROM {table}").collect()) == expected

    read = _lake_table(url, "race").current_snapshot().snapshot_id
    fed.sql(f"DELETE FROM {table} WHERE id = 42")  # removes or rewrites the file holding 42
    current = _lake_table(url, "race").current_snapshot().snapshot_id
    with pytest.raises(SluiceError, match=r"UPDATE ns\.race conflicts with a concurrent commit: snapshot \d+ "):
        replace_data(spark, url, "ns", "race", "UPDATE", read, changed, lambda line: None)
    assert _lake_table(url, "race").current_snapshot().snapshot_id == current


def _data_folder(lake_table) -> Path:
    return Path(lake_table.location().removeprefix("file://")) / "data"
