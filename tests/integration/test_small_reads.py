"""Small reads answered by the driver (sluice/spark/small_reads.py): same rows, fresh rows, no read at EXPLAIN.

A scan the planner expects to return few rows is read by the driver's Python when Spark runs
it and decoded in the JVM, with no Python worker. These tests hold that path to the worker's:
the same rows as Spark reading the table whole (edge values of every type), a DataFrame
collected again after the table changed sees the change, EXPLAIN runs no remote query, a
wrong estimate falls back to the workers, and the setting turns it off.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from sluice.spark.bridge import CALLBACK
from tests.sources import EDGE_TABLES, PG_URL, mariadb

pytestmark = pytest.mark.integration

SMALL_ROWS_CONF = "spark.sluice.smallReadRows"
#: per source: queries the planner bounds (estimate, LIMIT, global aggregate), over every column
QUERIES = {
    "pg": [
        "SELECT * FROM {t} WHERE id < 30",
        "SELECT * FROM {t} WHERE t = 'a' OR t IS NULL",
        "SELECT id, d, ts FROM {t} WHERE i > 0 LIMIT 7",
        "SELECT count(*), min(id), max(b) FROM {t} WHERE id > 3",
    ],
    "my": ["SELECT * FROM {t} WHERE id < 30", "SELECT count(*), max(id) FROM {t} WHERE i > 0"],
    "lite": ["SELECT * FROM {t} LIMIT 11", "SELECT count(*) FROM {t}"],
    "duck": ["SELECT * FROM {t} LIMIT 11", "SELECT count(*), min(b), max(d) FROM {t}"],
    "lake": ["SELECT * FROM {t} LIMIT 11", "SELECT count(*) FROM {t} WHERE id > 5"],
}


@contextmanager
def fetches() -> Iterator[list[int]]:
    """How many scans the driver read itself during the block (read into the list at its end)."""
    before = CALLBACK.calls["fetch"]
    counted: list[int] = []
    yield counted
    counted.append(CALLBACK.calls["fetch"] - before)


@pytest.mark.parametrize(
    ("source", "query"),
    [(source, query) for source, queries in QUERIES.items() if source in EDGE_TABLES for query in queries],
)
def test_the_driver_reads_small_scans_and_returns_sparks_rows(fed, source: str, query: str) -> None:
    text = query.format(t=EDGE_TABLES[source])
    expected = fed.sql(text, pushdown=False).collect()
    with fetches() as read:
        got = fed.sql(text).collect()
    assert read == [1], "the scan was not read by the driver"
    if "LIMIT" in text:  # which rows a LIMIT keeps is Spark's choice; each must be a row of the table
        whole = {tuple(map(repr, row)) for row in fed.sql(text.split(" LIMIT")[0], pushdown=False).collect()}
        assert len(got) == len(expected) and all(tuple(map(repr, row)) in whole for row in got)
    else:
        assert sorted(map(repr, got)) == sorted(map(repr, expected))  # repr: NaN equals NaN, -0.0 differs from 0.0


def test_a_slow_mariadb_read_leaves_the_drivers_python_running(fed, mysql_url) -> None:
    """connectorx holds the GIL while MariaDB works, so the driver reads MariaDB in a read process:
    a slow small query (5 rows behind SLEEP(0.3) each) must not freeze the driver's other threads."""

    from sluice import Federation

    if "my" not in EDGE_TABLES:
        pytest.skip("MariaDB not selected")
    connection = mariadb()
    with connection.cursor() as cursor:
        cursor.execute("CREATE DATABASE IF NOT EXISTS sluice_small")
        cursor.execute("CREATE OR REPLACE TABLE sluice_small.five (id BIGINT PRIMARY KEY)")
        cursor.execute("INSERT INTO sluice_small.five SELECT seq FROM sluice_small.seq_1_to_5")
        cursor.execute(
            "CREATE OR REPLACE VIEW sluice_small.slow AS SELECT id FROM sluice_small.five WHERE SLEEP(0.3) = 0"
        )
    federation = Federation(spark=fed.spark)
    federation.attach("smallmy", mysql_url)
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.05):
            ticks.append(time.perf_counter())

    try:
        ticker = threading.Thread(target=tick)
        with fetches() as read:
            started = time.perf_counter()
            ticker.start()
            assert federation.sql("SELECT count(*) AS n FROM smallmy.sluice_small.slow").collect()[0].n == 5
            took = time.perf_counter() - started
        stop.set()
        ticker.join()
    finally:
        federation.detach("smallmy")
        with connection.cursor() as cursor:
            cursor.execute("DROP DATABASE sluice_small")
        connection.close()
    assert read == [1], "the count was not read by the driver"
    assert took >= 1.4  # the server slept 5 x 0.3 s
    assert len(ticks) >= 0.5 * took / 0.05, f"the driver's Python stalled: {len(ticks)} ticks in {took:.1f} s"


@pytest.fixture()
def changing(spark):
    """A small PostgreSQL table the test changes between two actions on one DataFrame."""
    from sluice import Federation

    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.sluice_small_reads")
        connection.execute("CREATE TABLE public.sluice_small_reads (id bigint PRIMARY KEY, v text)")
        connection.execute("INSERT INTO public.sluice_small_reads SELECT g, 'v' || g FROM generate_series(1, 50000) g")
        connection.execute("ANALYZE public.sluice_small_reads")
    federation = Federation(spark=spark)
    federation.attach("smallpg", PG_URL)
    yield federation
    federation.detach("smallpg")
    spark.conf.unset(SMALL_ROWS_CONF)
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.sluice_small_reads")


def test_a_dataframe_collected_again_reads_the_table_again(changing) -> None:
    """Spark keeps a DataFrame's physical plan for every action on it; the driver's rows answer the first only."""
    frame = changing.sql("SELECT id, v FROM smallpg.public.sluice_small_reads WHERE id <= 3")
    with fetches() as read:
        assert sorted(frame.collect()) == [(1, "v1"), (2, "v2"), (3, "v3")]
    assert read == [1]
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("UPDATE public.sluice_small_reads SET v = 'changed' WHERE id = 2")
    assert sorted(frame.collect()) == [(1, "v1"), (2, "changed"), (3, "v3")]


def test_explain_runs_no_remote_query(changing) -> None:
    frame = changing.sql("SELECT id, v FROM smallpg.public.sluice_small_reads WHERE id <= 3")
    with fetches() as read:
        frame.explain()
        changing.explain("SELECT count(*) FROM smallpg.public.sluice_small_reads")
        changing.plan("SELECT id FROM smallpg.public.sluice_small_reads LIMIT 4")
    assert read == [0]


def test_a_scan_larger_than_expected_is_read_by_the_workers(changing) -> None:
    """Allowed up to 100,000 rows, a LIMIT 45,000 scan outgrows the driver's bound (40,000 rows) midway:
    the driver lets it go and the workers read it, whole."""
    changing.spark.conf.set(SMALL_ROWS_CONF, "100000")
    with fetches() as read:
        rows = changing.sql("SELECT id FROM smallpg.public.sluice_small_reads ORDER BY id LIMIT 45000").collect()
    assert read == [1]  # asked, and the driver answered "too large"
    assert [row.id for row in rows] == list(range(1, 45001))


def test_the_setting_turns_driver_reads_off(changing) -> None:
    changing.spark.conf.set(SMALL_ROWS_CONF, "0")
    with fetches() as read:
        rows = changing.sql("SELECT id FROM smallpg.public.sluice_small_reads WHERE id <= 3").collect()
    assert read == [0] and sorted(row.id for row in rows) == [1, 2, 3]


def test_a_failed_driver_read_names_the_source(changing) -> None:
    """Planned, then the table is dropped: the driver's read fails naming the source, no other rows."""
    frame = changing.sql("SELECT id, v FROM smallpg.public.sluice_small_reads WHERE id <= 3")
    frame.explain()  # planned now
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP TABLE public.sluice_small_reads")
    with pytest.raises(Exception, match="smallpg") as failure:
        frame.collect()
    assert "sluice_small_reads" in str(failure.value)


def test_transferred_counts_a_small_scan_read_once_as_one_read(changing) -> None:
    """``fed.transferred`` runs the query as one SQL execution, so the driver's read answers the
    scan and the workers do not read it again: one scan of one partition reports one read."""
    queries = (
        "SELECT id, v FROM smallpg.public.sluice_small_reads WHERE id <= 3",  # the estimate
        "SELECT id FROM smallpg.public.sluice_small_reads LIMIT 4",  # a pushed LIMIT
        "SELECT count(*) FROM smallpg.public.sluice_small_reads",  # a global aggregate
    )
    for query in queries:
        with fetches() as read:
            measured = changing.transferred(query)
        assert read == [1], query
        assert list(measured.values())[0]["reads"] == 1, (query, measured)
