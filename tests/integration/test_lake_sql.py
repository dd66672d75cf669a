"""Lake tables in Spark SQL: CREATE TABLE with every partition transform, INSERT, INSERT
OVERWRITE, CTAS, DROP, and failures that leave the table and warehouse as they were.

Every read-back is compared with Spark's answer over the same rows as a plain DataFrame
(edge values: NULL, NaN, -0.0, '', trailing spaces, mixed case, non-ASCII, extreme ints,
decimals, timestamps around the DST change of the shared session's America/New_York).
Catalog and table names start with ``lksql`` (other helpers share the machine).
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc
COLUMNS = "id bigint, ts timestamp, name string, v double, d decimal(20,4), day date"
ROWS = [
    (1, dt.datetime(2025, 3, 9, 6, 59, 59, tzinfo=UTC), "Zürich", float("nan"), Decimal("1.2500"), dt.date(2025, 3, 9)),
    (2, dt.datetime(2025, 3, 9, 7, 0, 0, tzinfo=UTC), "zürich", -0.0, Decimal("-0.0001"), dt.date(2025, 3, 9)),
    (3, None, None, None, None, None),
    (4, dt.datetime(2025, 11, 2, 5, 30, tzinfo=UTC), "", 0.0, Decimal("9999999999999999.9999"), dt.date(1970, 1, 1)),
    (-(2**63), dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), "a  ", float("inf"), Decimal("0"), dt.date(1, 1, 1)),
    (2**63 - 1, dt.datetime(2262, 4, 11, tzinfo=UTC), "A", float("-inf"), Decimal("-12.5"), dt.date(9999, 12, 31)),
    (7, dt.datetime(2025, 3, 9, 7, 0, 0, 1, tzinfo=UTC), "日本語", 1.0, Decimal("1.0"), dt.date(2025, 3, 10)),
    (8, dt.datetime(2025, 3, 8, 23, 0, tzinfo=UTC), "São Paulo", -1.5e300, Decimal("3.1416"), dt.date(2025, 3, 8)),
]
#: PARTITIONED BY clauses covering every transform (identity as a bare column and as identity())
SPECS = {
    "days_bucket_truncate": "days(ts), bucket(8, id), truncate(name, 2)",
    "years_identity": "years(ts), name",
    "months_bucket": "months(day), bucket(4, name)",
    "hours_identity": "hours(ts), identity(day)",
    # Spark's Arrow batches are 8-byte aligned; pyiceberg-core's decimal bucket needs 16 (it panicked)
    "bucket_decimal": "bucket(8, d), identity(day)",
}


def canonical(rows) -> list[tuple]:
    """Rows as sortable tuples that tell NaN, -0.0 and NULL apart."""

    def value(item):
        if isinstance(item, float):
            return ("nan",) if math.isnan(item) else ("float", item, math.copysign(1.0, item))
        return ("none",) if item is None else (type(item).__name__, item)

    return sorted((tuple(value(item) for item in row) for row in rows), key=repr)


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A new lake attached as ``lksql`` with namespace ``ns``, and the edge rows as view ``lksql_rows``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lksql")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lksql", url)
    fed.sql("CREATE NAMESPACE lksql.ns")
    frame = spark.createDataFrame(ROWS, COLUMNS)
    frame.createOrReplaceTempView("lksql_rows")
    yield fed, url, frame
    spark.catalog.dropTempView("lksql_rows")


def catalog_of(url: str):
    return open_catalog(LakeLocation.from_url(url))


def files_under(url: str) -> set[str]:
    warehouse = Path(LakeLocation.from_url(url).warehouse)
    return {str(path.relative_to(warehouse)) for path in warehouse.rglob("*") if path.is_file()}


@pytest.mark.parametrize("table", sorted(SPECS))
def test_every_transform_creates_and_reads_back_the_rows_spark_has(lake, table: str) -> None:
    fed, url, frame = lake
    name = f"lksql.ns.{table}"
    fed.sql(f"CREATE TABLE {name} ({COLUMNS}) PARTITIONED BY ({SPECS[table]})")
    fed.sql(f"INSERT INTO {name} SELECT * FROM lksql_rows")
    assert canonical(fed.sql(f"SELECT * FROM {name}").collect()) == canonical(frame.collect())
    wheres = ("v <> 1", "name >= 'Z'", "ts < TIMESTAMP '2025-03-09 03:00:00'", "id > 5 OR d < 0", "day IS NULL")
    for where in (*wheres, "d = 1.25", "d IN (-12.5, 0)"):
        query = f"SELECT * FROM {name} WHERE {where}"
        assert canonical(fed.sql(query).collect()) == canonical(
            fed.sql(f"SELECT * FROM lksql_rows WHERE {where}").collect()
        ), where
    spec = catalog_of(url).load_table(("ns", table)).spec()
    assert len(spec.fields) == (3 if table == "days_bucket_truncate" else 2)


def test_insert_appends_overwrite_replaces_and_each_is_one_snapshot(lake) -> None:
    fed, url, frame = lake
    fed.sql(
        f"CREATE TABLE lksql.ns.growing ({COLUMNS}) PARTITIONED BY (days(ts)) "
        "TBLPROPERTIES ('write.target-file-size-bytes'='1048576', 'sort-by'='id desc')"
    )
    table = catalog_of(url).load_table(("ns", "growing"))
    assert table.properties["write.target-file-size-bytes"] == "1048576"
    assert [f.source_id for f in table.sort_order().fields] == [table.schema().find_field("id").field_id]
    fed.sql("INSERT INTO lksql.ns.growing SELECT * FROM lksql_rows")
    fed.sql("INSERT INTO lksql.ns.growing SELECT * FROM lksql_rows WHERE id > 5")
    expected = frame.collect() + frame.where("id > 5").collect()
    assert canonical(fed.sql("SELECT * FROM lksql.ns.growing").collect()) == canonical(expected)
    fed.sql(
        "INSERT OVERWRITE lksql.ns.growing VALUES "
        "(9, TIMESTAMP '2025-03-09 01:59:59', 'neu', double('NaN'), 5.5, DATE '2025-03-09')"
    )
    assert canonical(fed.sql("SELECT * FROM lksql.ns.growing").collect()) == canonical(
        fed.sql("SELECT 9L, TIMESTAMP '2025-03-09 01:59:59', 'neu', double('NaN'), 5.5BD, DATE '2025-03-09'").collect()
    )
    snapshots = catalog_of(url).load_table(("ns", "growing")).snapshots()
    assert len(snapshots) == 3


def test_ctas_and_rtas_write_the_query_in_one_snapshot(lake) -> None:
    fed, url, frame = lake
    fed.sql("CREATE TABLE lksql.ns.copied PARTITIONED BY (bucket(2, id), months(ts)) AS SELECT * FROM lksql_rows")
    assert canonical(fed.sql("SELECT * FROM lksql.ns.copied").collect()) == canonical(frame.collect())
    assert len(catalog_of(url).load_table(("ns", "copied")).snapshots()) == 1
    fed.sql("CREATE OR REPLACE TABLE lksql.ns.copied AS SELECT id, name FROM lksql_rows WHERE id < 5")
    assert canonical(fed.sql("SELECT * FROM lksql.ns.copied").collect()) == canonical(
        frame.where("id < 5").select("id", "name").collect()
    )
    fed.sql("CREATE TABLE IF NOT EXISTS lksql.ns.copied (x int)")  # exists: nothing happens
    assert fed.sql("SELECT * FROM lksql.ns.copied").columns == ["id", "name"]


def test_a_failed_insert_leaves_the_snapshot_and_files_as_they_were(lake) -> None:
    fed, url, _ = lake
    fed.sql(f"CREATE TABLE lksql.ns.kept ({COLUMNS}) PARTITIONED BY (bucket(4, id))")
    fed.sql("INSERT INTO lksql.ns.kept SELECT * FROM lksql_rows")
    snapshot = catalog_of(url).load_table(("ns", "kept")).current_snapshot().snapshot_id
    files = files_under(url)
    dying = "SELECT IF(id = 7, raise_error('the job dies'), id), ts, name, v, d, day FROM lksql_rows"
    with pytest.raises(Exception, match="the job dies"):
        fed.sql(f"INSERT INTO lksql.ns.kept {dying}")
    with pytest.raises(Exception, match="CAST_OVERFLOW"):  # Spark's own cast to the table's column refuses it
        fed.sql("INSERT INTO lksql.ns.kept SELECT 1, ts, name, v, 1e20BD, day FROM lksql_rows")
    assert catalog_of(url).load_table(("ns", "kept")).current_snapshot().snapshot_id == snapshot
    assert files_under(url) == files
    with pytest.raises(Exception, match="the job dies"):
        fed.sql(f"CREATE TABLE lksql.ns.never PARTITIONED BY (days(ts)) AS {dying}")
    assert not catalog_of(url).table_exists(("ns", "never"))
    assert files_under(url) == files
    assert fed.sql("SELECT count(*) FROM lksql.ns.kept").collect()[0][0] == len(ROWS)


def test_pruning_works_on_a_table_made_in_sql(lake) -> None:
    fed, _, _ = lake
    fed.sql(
        "CREATE TABLE lksql.ns.pruned PARTITIONED BY (days(ts)) AS "
        "SELECT id, timestamp_seconds(1741478400 + id * 3600) AS ts, id * 0.5 AS v FROM range(200)"
    )
    query = "SELECT id, v FROM lksql.ns.pruned WHERE ts >= TIMESTAMP '2025-03-12 00:00:00'"
    (pyramid,) = fed.pruning(query).values()
    assert 0 < len(pyramid.reads) < pyramid.tiers[1].total
    assert "pruning pyramid" in fed.explain(query)
    assert sorted(fed.sql(query).collect()) == sorted(fed.sql(query, pushdown=False).collect())


def test_drop_table_removes_it_and_its_folder(lake) -> None:
    fed, url, _ = lake
    fed.sql("CREATE TABLE lksql.ns.gone AS SELECT * FROM lksql_rows")
    location = catalog_of(url).load_table(("ns", "gone")).location().removeprefix("file://")
    fed.sql("DROP TABLE lksql.ns.gone")
    assert not catalog_of(url).table_exists(("ns", "gone")) and not Path(location).exists()
    fed.sql("DROP TABLE IF EXISTS lksql.ns.gone")
    with pytest.raises(Exception, match="already exists"):
        fed.sql("CREATE NAMESPACE lksql.ns")
    fed.sql("CREATE NAMESPACE IF NOT EXISTS lksql.ns")


def test_layout_mistakes_are_refused_before_anything_is_created(lake) -> None:
    fed, url, _ = lake
    for clause, message in [
        ("PARTITIONED BY (truncate(name))", "expected truncate"),
        ("PARTITIONED BY (days(nope))", "nope"),
        ("TBLPROPERTIES ('color'='blue')", "color"),
        ("TBLPROPERTIES ('sort-by'='id sideways')", "sideways"),
    ]:
        with pytest.raises(Exception, match=message):
            fed.sql(f"CREATE TABLE lksql.ns.bad ({COLUMNS}) {clause}")
        assert not catalog_of(url).table_exists(("ns", "bad")), clause


def test_sql_sources_refuse_writes_naming_the_source(lake, spark, tmp_path) -> None:
    fed, _, _ = lake
    path = tmp_path / "lksql.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (id INTEGER)")
    fed.attach("lksqlite", f"sqlite:///{path}")
    for statement in (
        "INSERT INTO lksqlite.main.t VALUES (1)",
        "CREATE TABLE lksqlite.main.u (id int)",
        "DROP TABLE lksqlite.main.t",
    ):
        with pytest.raises(Exception, match="source 'lksqlite' is read-only"):
            fed.sql(statement)
    assert fed.sql("SELECT count(*) FROM lksqlite.main.t").collect()[0][0] == 0


def test_an_ingest_widening_the_table_is_seen_by_the_next_query_without_attaching_again(lake, spark) -> None:
    """The planner describes a table once; a lake commit (here Python's ingest adding a
    column) makes it describe the table again, so the same session sees the new column."""
    from sluice.lake.ingest import ingest

    fed, url, _ = lake
    fed.sql("CREATE TABLE lksql.ns.widened (id bigint, name string)")
    fed.sql("INSERT INTO lksql.ns.widened VALUES (1, 'a')")
    assert fed.sql("SELECT * FROM lksql.ns.widened").columns == ["id", "name"]
    wider = spark.createDataFrame([(2, "b", 2.5)], "id bigint, name string, gust double")
    ingest(spark, url, wider, namespace="ns", table="widened", report=lambda line: None)
    assert sorted(fed.sql("SELECT * FROM lksql.ns.widened").collect()) == sorted(
        spark.createDataFrame([(1, "a", None), (2, "b", 2.5)], "id bigint, name string, gust double").collect()
    )
