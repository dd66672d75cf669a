"""ALTER TABLE on lake tables: ADD, RENAME, DROP COLUMN and widening ALTER COLUMN ... TYPE,
applied as one PyIceberg schema update; reads follow field ids, so a renamed column reads its
old files' values, a dropped one's files still read, and an added one is NULL in older rows.
Refused changes name the column and the types, and leave the table as it was.

Every read-back is compared with Spark's answer over the expected rows. Catalog and table
names start with ``lkalt`` (other helpers share the machine).
"""

from __future__ import annotations

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_lake_sql import COLUMNS, ROWS, canonical

pytestmark = pytest.mark.integration

NUMBERS = "i int, f float, d decimal(10,2)"
NUMBER_ROWS = [
    (2**31 - 1, float("nan"), "99999999.99"),
    (-(2**31), -0.0, "-0.01"),
    (None, None, None),
    (0, 3.4e38, "0.00"),
]


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A new lake attached as ``lkalt`` with namespace ``ns``; ROWS as view ``lkalt_rows``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lkalt")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkalt", url)
    fed.sql("CREATE NAMESPACE lkalt.ns")
    frame = spark.createDataFrame(ROWS, COLUMNS)
    frame.createOrReplaceTempView("lkalt_rows")
    yield fed, url, frame
    spark.catalog.dropTempView("lkalt_rows")


def load(url: str, table: str):
    return open_catalog(LakeLocation.from_url(url)).load_table(("ns", table))


def filled(fed, table: str, partition_by: str = "days(ts), bucket(4, id)") -> None:
    fed.sql(f"CREATE TABLE lkalt.ns.{table} ({COLUMNS}) PARTITIONED BY ({partition_by})")
    fed.sql(f"INSERT INTO lkalt.ns.{table} SELECT * FROM lkalt_rows")


def test_rename_then_the_new_name_reads_and_filters_the_old_files(lake) -> None:
    fed, url, frame = lake
    filled(fed, "renamed")
    fed.sql("ALTER TABLE lkalt.ns.renamed RENAME COLUMN name TO label")
    fed.sql("ALTER TABLE lkalt.ns.renamed RENAME COLUMN ts TO at")  # a partition source keeps partitioning
    expected = frame.withColumnRenamed("name", "label").withColumnRenamed("ts", "at")
    expected.createOrReplaceTempView("lkalt_renamed_expected")
    assert fed.sql("SELECT * FROM lkalt.ns.renamed").columns == expected.columns
    for where in ("label = 'Zürich'", "label IS NULL", "at >= TIMESTAMP '2025-03-09 02:00:00'", "label > 'a'"):
        assert canonical(fed.sql(f"SELECT * FROM lkalt.ns.renamed WHERE {where}").collect()) == canonical(
            fed.sql(f"SELECT * FROM lkalt_renamed_expected WHERE {where}").collect()
        ), where
    fed.sql("INSERT INTO lkalt.ns.renamed SELECT * FROM lkalt_rows WHERE id > 5")  # new files, new names
    assert canonical(fed.sql("SELECT * FROM lkalt.ns.renamed").collect()) == canonical(
        expected.collect() + expected.where("id > 5").collect()
    )
    assert [f.name for f in load(url, "renamed").schema().fields][:3] == ["id", "at", "label"]


def test_drop_then_the_old_files_still_read_without_the_column(lake) -> None:
    fed, _, frame = lake
    filled(fed, "dropped")
    fed.sql("ALTER TABLE lkalt.ns.dropped DROP COLUMN v")
    fed.sql("ALTER TABLE lkalt.ns.dropped DROP COLUMNS IF EXISTS d, nothing_here")
    expected = frame.drop("v", "d")
    assert canonical(fed.sql("SELECT * FROM lkalt.ns.dropped").collect()) == canonical(expected.collect())
    fed.sql("INSERT INTO lkalt.ns.dropped SELECT id, ts, name, day FROM lkalt_rows WHERE id < 3")
    assert canonical(fed.sql("SELECT * FROM lkalt.ns.dropped WHERE name IS NOT NULL").collect()) == canonical(
        expected.where("name IS NOT NULL").collect() + expected.where("id < 3 AND name IS NOT NULL").collect()
    )


def test_add_then_older_rows_read_null_and_new_rows_their_values(lake, spark) -> None:
    fed, url, frame = lake
    filled(fed, "added")
    fed.sql("ALTER TABLE lkalt.ns.added ADD COLUMNS (w bigint COMMENT 'new', z string)")
    fed.sql("ALTER TABLE lkalt.ns.added ADD COLUMN first_one int FIRST")
    assert fed.sql("SELECT * FROM lkalt.ns.added").columns == ["first_one", *frame.columns, "w", "z"]
    fed.sql("INSERT INTO lkalt.ns.added SELECT -1, *, id * 2, 'é' FROM lkalt_rows WHERE id = 7")
    got = fed.sql("SELECT * FROM lkalt.ns.added").collect()
    old = frame.selectExpr(
        "CAST(NULL AS int) AS first_one", "*", "CAST(NULL AS bigint) AS w", "CAST(NULL AS string) AS z"
    )
    new = frame.where("id = 7").selectExpr("-1 AS first_one", "*", "id * 2 AS w", "'é' AS z")
    assert canonical(got) == canonical(old.collect() + new.collect())
    assert load(url, "added").schema().find_field("w").doc == "new"
    assert fed.sql("SELECT count(*) FROM lkalt.ns.added WHERE w IS NULL").collect()[0][0] == len(ROWS)


def test_widening_a_type_reads_the_old_files_as_the_wider_type(lake, spark) -> None:
    from decimal import Decimal

    fed, url, _ = lake
    rows = [(i, f, None if d is None else Decimal(d)) for i, f, d in NUMBER_ROWS]
    spark.createDataFrame(rows, NUMBERS).createOrReplaceTempView("lkalt_numbers")
    fed.sql(f"CREATE TABLE lkalt.ns.widened ({NUMBERS}) PARTITIONED BY (bucket(2, i))")
    fed.sql("INSERT INTO lkalt.ns.widened SELECT * FROM lkalt_numbers")
    fed.sql("ALTER TABLE lkalt.ns.widened ALTER COLUMN i TYPE bigint")
    fed.sql("ALTER TABLE lkalt.ns.widened ALTER COLUMN f TYPE double")
    fed.sql("ALTER TABLE lkalt.ns.widened ALTER COLUMN d TYPE decimal(14,2)")
    widened = "CAST(i AS bigint) AS i, CAST(f AS double) AS f, CAST(d AS decimal(14,2)) AS d"
    expected = fed.sql(f"SELECT {widened} FROM lkalt_numbers")
    frame = fed.sql("SELECT * FROM lkalt.ns.widened")
    assert frame.schema == expected.schema
    assert canonical(frame.collect()) == canonical(expected.collect())
    fed.sql("INSERT INTO lkalt.ns.widened VALUES (9223372036854775807, 1e300, 123456789012.34)")
    assert fed.sql("SELECT i, f, d FROM lkalt.ns.widened WHERE i > 2147483647").collect() == [
        (2**63 - 1, 1e300, Decimal("123456789012.34"))
    ]
    assert str(load(url, "widened").schema().find_field("d").field_type) == "decimal(14, 2)"


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("ALTER COLUMN id TYPE double", r"ALTER COLUMN id TYPE double: column id is bigint \(Iceberg long\); Iceberg"),
        (
            "ALTER COLUMN d TYPE decimal(24,6)",
            r"column d is decimal\(20,4\) \(Iceberg decimal\(20, 4\)\); Iceberg widens",
        ),
        ("DROP COLUMN ts", r"DROP COLUMN ts: the table is partitioned by day\(ts\)"),
        ("ADD COLUMN nn int NOT NULL", "NOT NULL"),
        ("SET TBLPROPERTIES ('sort-by' = 'id')", "lake tables take column changes only"),
        ("RENAME COLUMN name TO ID", "FIELD_ALREADY_EXISTS"),  # Spark's own check, names ignoring case
    ],
)
def test_refused_changes_name_the_column_and_leave_the_table_as_it_was(lake, statement, message) -> None:
    fed, url, frame = lake
    table = "refused_" + str(abs(hash(statement)) % 10_000)
    filled(fed, table)
    before = load(url, table).metadata
    with pytest.raises(Exception, match=message):
        fed.sql(f"ALTER TABLE lkalt.ns.{table} {statement}")
    after = load(url, table).metadata
    assert (after.current_schema_id, after.properties) == (before.current_schema_id, before.properties)
    assert canonical(fed.sql(f"SELECT * FROM lkalt.ns.{table}").collect()) == canonical(frame.collect())


@pytest.mark.parametrize("reader", ["python", "vectorised"])
def test_a_dropped_name_is_reused_and_old_rows_read_null(lake, spark, reader) -> None:
    """Sluice's files carry field ids: a new column under a dropped column's name is a new
    field, which no older file holds, so its old rows read NULL, through either reader and
    after optimize rewrote the old files."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from sluice.lake.maintenance import optimize

    fed, url, frame = lake
    table = f"reused_{reader}"
    filled(fed, table)
    fed.sql(f"ALTER TABLE lkalt.ns.{table} ADD COLUMN extra string")
    earlier = {task.file.file_path for task in load(url, table).scan().plan_files()}
    fed.sql(f"INSERT INTO lkalt.ns.{table} SELECT *, 'old ' || id FROM lkalt_rows WHERE id > 0")
    extra_id = load(url, table).schema().find_field("extra").field_id
    # the insert's own files (job folders of one second sort by their random suffix, not by age)
    added = [task.file.file_path for task in load(url, table).scan().plan_files() if task.file.file_path not in earlier]
    assert added
    for path in added:
        written = pq.read_schema(path.removeprefix("file://"))
        assert written.field("extra").metadata[b"PARQUET:field_id"] == str(extra_id).encode()  # the id Spark wrote
    fed.sql(f"ALTER TABLE lkalt.ns.{table} DROP COLUMN extra")
    fed.sql(f"ALTER TABLE lkalt.ns.{table} ADD COLUMN extra string")
    fed.sql(f"INSERT INTO lkalt.ns.{table} SELECT *, 'new' FROM lkalt_rows WHERE id = 1")
    no_extra = F.lit(None).cast("string")
    expected = (
        frame.withColumn("extra", no_extra)
        .unionByName(frame.where("id > 0").withColumn("extra", no_extra))
        .unionByName(frame.where("id = 1").withColumn("extra", F.lit("new")))
    )
    spark.conf.set("spark.sluice.lakeReader", reader)
    try:
        assert canonical(fed.sql(f"SELECT * FROM lkalt.ns.{table}").collect()) == canonical(expected.collect())
        assert fed.sql(f"SELECT count(*) FROM lkalt.ns.{table} WHERE extra IS NOT NULL").collect()[0][0] == 1
        optimize(spark, url, "ns", table, report=lambda _: None)  # reads the old files by field id too
        assert canonical(fed.sql(f"SELECT * FROM lkalt.ns.{table}").collect()) == canonical(expected.collect())
    finally:
        spark.conf.unset("spark.sluice.lakeReader")
