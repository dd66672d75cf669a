"""A lake in a folder named with a space, a non-ASCII character and ``%41``, whose partition
values hold the same: every write, ALTER TABLE, optimize and a failed job's clean-up work on
the paths as written (``FileSystem.from_uri`` refused them, or decoded ``%41`` to ``A``).

Read-backs are compared with Spark's answer over the same rows as a plain DataFrame.
Catalog and table names start with ``lkodd`` (other helpers share the machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_lake_sql import canonical

pytestmark = pytest.mark.integration

FOLDER = "my lake é%41"
COLUMNS = "id bigint, s string, x string"
#: partition values Spark writes into folder names as they are (space, non-ASCII) or escaped ('%' as %25)
ROWS = [(1, "a b", "one"), (2, "é", "two"), (3, "%41", "three"), (4, "A", "four"), (5, None, "five")]


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """A lake under a folder named FOLDER, attached as ``lkodd`` with namespace ``ns``; ROWS as view ``lkodd_rows``."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lkodd") / FOLDER
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkodd", url)
    fed.sql("CREATE NAMESPACE lkodd.ns")
    frame = spark.createDataFrame(ROWS, COLUMNS)
    frame.createOrReplaceTempView("lkodd_rows")
    yield fed, url, frame
    spark.catalog.dropTempView("lkodd_rows")


def _files(url: str) -> list[Path]:
    return [path for path in Path(LakeLocation.from_url(url).warehouse).rglob("*") if path.is_file()]


def test_alter_optimize_and_a_failed_job_under_odd_folder_names(spark, lake) -> None:
    from pyspark.sql import functions as F

    from sluice.lake.maintenance import optimize

    fed, url, frame = lake
    fed.sql(f"CREATE TABLE lkodd.ns.t ({COLUMNS}) PARTITIONED BY (s)")
    fed.sql("INSERT INTO lkodd.ns.t SELECT * FROM lkodd_rows")
    fed.sql("INSERT INTO lkodd.ns.t SELECT * FROM lkodd_rows WHERE id > 2")
    written = {str(path) for path in _files(url)}
    assert any(FOLDER in path and "%2541" in path for path in written), written  # the layout this test is about
    expected = frame.unionByName(frame.where("id > 2"))
    assert canonical(fed.sql("SELECT * FROM lkodd.ns.t").collect()) == canonical(expected.collect())
    # reusing a dropped name reads every data file's schema (sluice/lake/fields.py)
    fed.sql("ALTER TABLE lkodd.ns.t DROP COLUMN x")
    fed.sql("ALTER TABLE lkodd.ns.t ADD COLUMN x string")
    expected = expected.withColumn("x", F.lit(None).cast("string"))
    assert canonical(fed.sql("SELECT * FROM lkodd.ns.t").collect()) == canonical(expected.collect())
    optimize(spark, url, "ns", "t", report=lambda _: None)
    assert canonical(fed.sql("SELECT * FROM lkodd.ns.t").collect()) == canonical(expected.collect())
    spark.conf.set("spark.sluice.lakeReader", "vectorised")  # Spark's Parquet reader opens the same paths
    try:
        assert canonical(fed.sql("SELECT * FROM lkodd.ns.t").collect()) == canonical(expected.collect())
    finally:
        spark.conf.unset("spark.sluice.lakeReader")
    for value in ("a b", "é", "%41", "A"):
        query = f"SELECT id, s FROM lkodd.ns.t WHERE s = '{value}'"
        assert sorted(fed.sql(query).collect()) == sorted(
            expected.where(F.col("s") == value).select("id", "s").collect()
        )
    before = {str(path) for path in _files(url)}
    with pytest.raises(Exception, match="the job dies"):
        fed.sql("INSERT INTO lkodd.ns.t SELECT IF(id = 4, raise_error('the job dies'), id), s, x FROM lkodd_rows")
    assert {str(path) for path in _files(url)} == before  # nothing staged is left behind
    assert canonical(fed.sql("SELECT * FROM lkodd.ns.t").collect()) == canonical(expected.collect())
