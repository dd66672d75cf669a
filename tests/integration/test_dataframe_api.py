"""``spark.read.format("sluice")``: Spark's pushFilters answered by the same classifier."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

FILTERS = [
    "i = 1", "t = 'a'", "ch = 'a'", "tc LIKE 'a%'", "f > 1.5", "f = double('NaN')", "i IN (1, 2)", "t IS NULL",
    "NOT (i = 1)", "dt >= DATE '2000-01-01'", "ts > TIMESTAMP '2024-03-10 02:30:00'", "tn < TIMESTAMP_NTZ '2024-03-10 02:30:00'",
    "d > 1.5", "b = 9223372036854775807", "flag", "t <=> NULL", "t LIKE '%b'", "t LIKE '%a_b%'", "r > 0.1",
]


@pytest.fixture(scope="module")
def frame(spark, pg_url, fed):  # type: ignore[no-untyped-def]
    return spark.read.format("sluice").option("url", pg_url).option("table", "sluice_test.edge").load()


@pytest.fixture(scope="module")
def reference(spark, fed):  # type: ignore[no-untyped-def]
    return fed.sql("SELECT * FROM pg.sluice_test.edge", pushdown=False).cache()


def _optimized_plan(frame) -> str:  # type: ignore[no-untyped-def]
    return frame._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize("condition", FILTERS)
def test_filtered_frame_equals_reference(frame, reference, condition: str) -> None:  # type: ignore[no-untyped-def]
    pushed = sorted(r.id for r in frame.filter(condition).select("id").collect())
    expected = sorted(r.id for r in reference.filter(condition).select("id").collect())
    assert pushed == expected


def test_exact_filters_vanish_from_sparks_plan_and_inexact_stay(frame) -> None:  # type: ignore[no-untyped-def]
    exact = _optimized_plan(frame.filter("i = 1 AND t = 'a'"))
    assert "Filter" not in exact, exact
    inexact = _optimized_plan(frame.filter("ch = 'a'"))  # bpchar: a superset is pushed, Spark rechecks
    assert "Filter" in inexact and "ch" in inexact, inexact


def test_same_frame_filtered_two_ways(frame, reference) -> None:  # type: ignore[no-untyped-def]
    first = sorted(r.id for r in frame.filter("i = 1").collect())
    second = sorted(r.id for r in frame.filter("i = 2147483647").collect())
    unfiltered = frame.count()
    assert first == sorted(r.id for r in reference.filter("i = 1").collect())
    assert second == sorted(r.id for r in reference.filter("i = 2147483647").collect())
    assert unfiltered == reference.count() == 80


def test_sqlite_through_the_dataframe_api(spark, edge_tables) -> None:  # type: ignore[no-untyped-def]
    frame = spark.read.format("sluice").option("url", "sqlite:///" + edge_tables["sqlite_path"]).option("table", "edge").load()
    assert "Filter" not in _optimized_plan(frame.filter("t LIKE 'a%'"))  # GLOB: exact
    assert "Filter" in _optimized_plan(frame.filter("tc = 'a'"))  # NOCASE: superset
    assert frame.filter("tc = 'a'").count() == frame.filter("t = 'a' OR t IS NULL OR t IS NOT NULL").filter("tc = 'a'").count()
