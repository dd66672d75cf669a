"""The DataFrame API goes through the same negotiation as SQL: ``spark.table`` over a Sluice
catalog and ``spark.read.format("sluice")`` (the catalog layer's provider). Spark offers the
filters, columns and limits; Sluice's planner answers; nothing is opt-in any more."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.integration

FILTERS = [
    "i = 1",
    "t = 'a'",
    "ch = 'a'",
    "tc LIKE 'a%'",
    "f > 1.5",
    "f = double('NaN')",
    "i IN (1, 2)",
    "t IS NULL",
    "NOT (i = 1)",
    "dt >= DATE '2000-01-01'",
    "ts > TIMESTAMP '2024-03-10 02:30:00'",
    "tn < TIMESTAMP_NTZ '2024-03-10 02:30:00'",
    "d > 1.5",
    "b = 9223372036854775807",
    "flag",
    "t <=> NULL",
    "t LIKE '%b'",
    "t LIKE '%a_b%'",
    "r > 0.1",
    "i = 1 OR t = 'a'",
    "coalesce(i, 0) = 0",
    "coalesce(t, 'x') = 'x'",
]


def load(spark, url: str, table: str):
    return spark.read.format("sluice").option("url", url).option("table", table).load()


@pytest.fixture(scope="module")
def frame(spark, pg_url, fed):
    return load(spark, pg_url, "sluice_test.edge")


@pytest.fixture(scope="module")
def reference(spark, fed):
    return fed.sql("SELECT * FROM pg.sluice_test.edge", pushdown=False).cache()


def _optimized_plan(frame) -> str:
    return frame._jdf.queryExecution().optimizedPlan().toString()


def _ids(frame) -> list[int]:
    return sorted(row.id for row in frame.select("id").collect())


@pytest.mark.parametrize("condition", FILTERS)
def test_filtered_frame_equals_reference(frame, reference, condition: str) -> None:
    assert _ids(frame.filter(condition)) == _ids(reference.filter(condition))


@pytest.mark.parametrize("condition", FILTERS)
def test_catalog_table_filtered_equals_reference(spark, reference, condition: str) -> None:
    assert _ids(spark.table("pg.sluice_test.edge").where(condition)) == _ids(reference.filter(condition))


def test_exact_filters_vanish_from_sparks_plan_and_inexact_stay(frame) -> None:
    exact = _optimized_plan(frame.filter("i = 1 AND t = 'a'"))
    assert "Filter" not in exact, exact
    inexact = _optimized_plan(frame.filter("ch = 'a'"))  # bpchar: a superset is pushed, Spark rechecks
    assert "Filter" in inexact and "ch" in inexact, inexact


def test_same_frame_filtered_two_ways_and_then_not_at_all(spark, pg_url, reference) -> None:
    """Spark 4.3 reused a Python data source's filtered reader for a later unfiltered query on
    the same DataFrame; the catalog layer plans every query afresh."""
    frame = load(spark, pg_url, "sluice_test.edge")
    first, second = _ids(frame.filter("i = 1")), _ids(frame.filter("i = 2147483647"))
    assert first == _ids(reference.filter("i = 1")) and second == _ids(reference.filter("i = 2147483647"))
    assert first != second
    assert frame.count() == reference.count()


def test_one_frame_twice_in_one_query_with_different_filters(spark, reference) -> None:
    frame = spark.table("pg.sluice_test.edge")
    union = frame.where("i = 1").select("id").unionAll(frame.where("t = 'a'").select("id"))
    expected = reference.where("i = 1").select("id").unionAll(reference.where("t = 'a'").select("id"))
    assert sorted(r.id for r in union.collect()) == sorted(r.id for r in expected.collect())
    left, right = frame.where("i = 1").alias("l"), frame.where("i IS NOT NULL AND t IS NULL").alias("r")
    joined = left.join(right, "id").select("id")
    ref_left, ref_right = reference.where("i = 1").alias("l"), reference.where("i IS NOT NULL AND t IS NULL").alias("r")
    assert _ids(joined) == _ids(ref_left.join(ref_right, "id").select("id"))


def test_only_the_columns_spark_needs_are_read(spark, pg_url) -> None:
    """A view whose other column fails when read: selecting ``id`` must not read it."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute(
            "CREATE OR REPLACE VIEW sluice_test.boom AS SELECT id, 1 / (id - id) AS broken FROM sluice_test.edge"
        )
    frame = load(spark, pg_url, "sluice_test.boom")
    assert len(frame.select("id").collect()) == 80
    assert spark.table("pg.sluice_test.boom").select("id").count() == 80
    with pytest.raises(Exception, match="division by zero"):
        frame.select("broken").collect()


def _remote_query(frame) -> str:
    """The remote query the scan's description shows in Spark's physical plan."""
    return frame._jdf.queryExecution().executedPlan().toString().split("RemoteQuery: ", 1)[1].split(" | ", 1)[0]


def test_a_limit_is_pushed_only_over_exact_filters(spark) -> None:
    assert _remote_query(spark.table("pg.sluice_test.edge").where("i = 1").limit(2)).endswith("LIMIT 2")
    assert "LIMIT" not in _remote_query(spark.table("pg.sluice_test.edge").where("ch = 'a'").limit(2))
