"""The read partitions follow the data and the cores (issue 29), on real tables: a full scan
takes no more tasks than Spark's default parallelism, a filtered read is sized by the rows the
source expects it to *return* (MariaDB: ``rows x filtered``), an explicit ``partitions=``
wins, and a PostgreSQL partition arrives in batches of about 1 MiB, not one 16 MiB batch."""

from __future__ import annotations

from typing import cast

import psycopg
import pytest

from sluice import Federation
from sluice.sources.base import SqlSource, read_partitions
from tests.sources import mariadb_execute

pytestmark = pytest.mark.integration

PG_TABLE = "pg.sluice_test.parts"
MY_TABLE = "my.sluice_test.parts"
ROWS = 1_200_000
MY_ROWS = 1_000_000


@pytest.fixture(scope="module")
def pg_parts(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("CREATE SCHEMA IF NOT EXISTS sluice_test")
        connection.execute("DROP TABLE IF EXISTS sluice_test.parts")
        connection.execute(
            "CREATE TABLE sluice_test.parts AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, %s) g",
            (ROWS,),
        )
        connection.execute("VACUUM ANALYZE sluice_test.parts")  # reltuples: the table's row estimate
    return pg_url


@pytest.fixture(scope="module")
def my_parts(mysql_url):
    mariadb_execute(
        "CREATE DATABASE IF NOT EXISTS sluice_test",
        "DROP TABLE IF EXISTS sluice_test.parts",
        "CREATE TABLE sluice_test.parts (id INT PRIMARY KEY, k INT)",  # k unindexed: 100 rows per value
        f"INSERT INTO sluice_test.parts SELECT seq, seq % 10000 FROM sluice_test.seq_1_to_{MY_ROWS}",
        "ANALYZE TABLE sluice_test.parts PERSISTENT FOR ALL",  # k's histogram: MariaDB's filtered
    )
    return mysql_url


def _tasks(fed: Federation, source: str, query: str) -> list:
    scan = fed.plan(query).scans[0]
    return fed._sources[source].tasks(scan.spec)


def test_a_postgres_full_scan_takes_no_more_tasks_than_cores(spark, pg_parts) -> None:
    cores = spark.sparkContext.defaultParallelism
    fed = Federation(spark=spark)
    fed.attach("pg", pg_parts)
    tasks = _tasks(fed, "pg", f"SELECT id, v FROM {PG_TABLE}")
    assert len(tasks) == read_partitions(ROWS, cores) == min(cores, 4)
    # a filter PostgreSQL expects to return 240,000 rows: one task
    assert len(_tasks(fed, "pg", f"SELECT id FROM {PG_TABLE} WHERE id <= 240000")) == 1
    explicit = Federation(spark=spark)
    explicit.attach("pg", pg_parts, partitions=4)
    assert len(_tasks(explicit, "pg", f"SELECT id, v FROM {PG_TABLE}")) == 4
    assert len(_tasks(explicit, "pg", f"SELECT id FROM {PG_TABLE} WHERE id <= 240000")) == 4


def test_a_postgres_partition_arrives_in_many_batches(spark, pg_parts) -> None:
    """250,000 rows of about 40 bytes: ten 1 MiB batches (ADBC's default 16 MiB hint: one)."""
    fed = Federation(spark=spark)
    fed.attach("pg", pg_parts)
    (task,) = _tasks(fed, "pg", f"SELECT id, v FROM {PG_TABLE} WHERE id <= 250000")
    sizes = [batch.num_rows for batch in fed._sources["pg"].read(task)]
    assert sum(sizes) == 250_000 and len(sizes) >= 5, sizes


def test_a_mariadb_filter_is_sized_by_the_rows_it_returns(spark, my_parts) -> None:
    cores = spark.sparkContext.defaultParallelism
    fed = Federation(spark=spark)
    fed.attach("my", my_parts)
    scan = fed.plan(f"SELECT id, k FROM {MY_TABLE}").scans[0]
    full = fed._sources["my"].tasks(scan.spec)
    # InnoDB's estimate of the table's rows: about 1,000,000 (4 tasks before issue 29)
    assert len(full) == read_partitions(scan.spec.table.row_estimate or 0, cores) <= cores
    query = f"SELECT id FROM {MY_TABLE} WHERE k = 7"
    spec = fed.plan(query).scans[0].spec
    # EXPLAIN's rows is 1,000,000 examined; filtered (0.01%) makes it the 100 returned
    expected = cast(SqlSource, fed._sources["my"]).estimated_rows(spec)
    assert expected is not None and expected < 1000, expected
    (task,) = fed._sources["my"].tasks(spec)
    assert task.expected_rows == expected
    assert sorted(r.id for r in fed.sql(query).collect()) == list(range(7, MY_ROWS, 10_000))
