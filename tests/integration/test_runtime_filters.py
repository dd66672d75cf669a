"""Runtime filtering: the keys of a selective, broadcast join side restrict a Sluice scan at run time.

A star join: a fact table in PostgreSQL (and in DuckDB) and a small dimension Spark filters
itself (Parquet). Spark's dynamic pruning hands the fact scan ``dim_id IN (...)``; the planner
pushes it, so the source returns only the rows that can join, and EXPLAIN ANALYZE shows it.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.sources import PG_URL

pytestmark = pytest.mark.integration

FACT_ROWS, DIMENSIONS = 20_000, 1_000
QUERY = (
    "SELECT d.name, count(*) AS n, sum(f.amount) AS total FROM {fact} f JOIN rt_dim d ON f.dim_id = d.id "
    "WHERE d.region = 'north' GROUP BY d.name"
)


@pytest.fixture(scope="module")
def star(spark, tmp_path_factory):
    import duckdb
    import psycopg

    from sluice import Federation

    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_rt CASCADE")
        connection.execute("CREATE SCHEMA sluice_rt")
        connection.execute(
            f"CREATE TABLE sluice_rt.fact AS SELECT g::bigint AS id, (g % {DIMENSIONS})::bigint AS dim_id, "
            f"g * 2 AS amount FROM generate_series(1, {FACT_ROWS}) g"
        )
        connection.execute("ANALYZE sluice_rt.fact")
    folder = tmp_path_factory.mktemp("runtime")
    duck = duckdb.connect(str(folder / "fact.duckdb"))
    duck.execute(
        f"CREATE TABLE fact AS SELECT g::BIGINT AS id, (g % {DIMENSIONS})::BIGINT AS dim_id, g * 2 AS amount "
        f"FROM range(1, {FACT_ROWS + 1}) t(g)"
    )
    duck.close()
    lite = sqlite3.connect(folder / "dim.sqlite")
    lite.execute("CREATE TABLE dim (id INTEGER PRIMARY KEY, name TEXT, region TEXT) STRICT")
    lite.executemany(
        "INSERT INTO dim VALUES (?, ?, ?)",
        [(i, f"d{i}", "north" if i % 50 == 0 else "south") for i in range(DIMENSIONS)],
    )
    lite.commit()
    lite.close()
    rows = [(i, f"d{i}", "north" if i % 50 == 0 else "south") for i in range(DIMENSIONS)]
    spark.createDataFrame(rows, "id bigint, name string, region string").write.parquet(str(folder / "dim"))
    spark.read.parquet(str(folder / "dim")).createOrReplaceTempView("rt_dim")
    federation = Federation(spark=spark)
    federation.attach("rtpg", PG_URL)
    federation.attach("rtduck", f"duckdb:///{folder / 'fact.duckdb'}")
    federation.attach("rtlite", f"sqlite:///{folder / 'dim.sqlite'}")
    yield federation
    federation.detach("rtpg")
    federation.detach("rtduck")
    federation.detach("rtlite")
    spark.catalog.dropTempView("rt_dim")


@pytest.mark.parametrize("fact", ["rtpg.sluice_rt.fact", "rtduck.fact"])
def test_join_keys_restrict_the_fact_scan(star, fact: str) -> None:
    query = QUERY.format(fact=fact)
    expected = sorted(star.sql(query, pushdown=False).collect())
    assert sorted(star.sql(query).collect()) == expected
    assert len(expected) == DIMENSIONS // 50
    explained = star.explain(query, analyze=True)
    assert "[RUNTIME EXACT] `dim_id` IN (0, 50, 100" in explained, explained
    plan, moved = star._measure(query, pushdown=True)
    scan = next(s for s in plan.scans if s.table.endswith("fact"))
    matching = FACT_ROWS // 50
    assert moved[scan.scan_id]["rows"] <= 2 * matching, moved  # the target: at most 2x the fact rows that join
    plan, moved = star._measure(query, pushdown=False)  # the reference path reads the fact table whole
    scan = next(s for s in plan.scans if s.table.endswith("fact"))
    assert moved[scan.scan_id]["rows"] == FACT_ROWS and not scan.runtime


SLUICE_DIM = (
    "SELECT d.name, count(*) AS n, sum(f.amount) AS total FROM {fact} f JOIN rtlite.dim d ON f.dim_id = d.id "
    "WHERE d.region = 'north' GROUP BY d.name"
)


@pytest.mark.parametrize("fact", ["rtpg.sluice_rt.fact", "rtduck.fact"])
def test_a_sluice_dimension_filtered_exactly_restricts_the_fact_scan(star, fact: str) -> None:
    """The dimension is a Sluice (SQLite) table whose filter is pushed EXACT, so Spark keeps no
    Filter over it: Sluice's optimizer rule shows Spark's dynamic pruning the scan is selective."""
    query = SLUICE_DIM.format(fact=fact)
    expected = sorted(star.sql(query, pushdown=False).collect())
    assert len(expected) == DIMENSIONS // 50
    assert sorted(star.sql(query).collect()) == expected
    plan, moved = star._measure(query, pushdown=True)
    dim = next(s for s in plan.scans if s.table.endswith("dim"))
    assert {v.level.value for v in dim.verdicts} == {"EXACT"}, dim.verdicts  # pushed, and none kept by Spark
    scan = next(s for s in plan.scans if s.table.endswith("fact"))
    assert [v.level.value for v in scan.runtime] == ["EXACT"], scan.runtime
    assert scan.runtime[0].sql.startswith("`dim_id` IN (0, 50, 100"), scan.runtime
    matching = FACT_ROWS // 50
    assert moved[scan.scan_id]["rows"] <= 2 * matching, moved  # issue 14's target
    assert moved[dim.scan_id]["rows"] == DIMENSIONS // 50, moved  # the dimension is read once (broadcast reused)
    explained = star.explain(query, analyze=True)
    assert "[RUNTIME EXACT] `dim_id` IN (0, 50, 100" in explained, explained
    assert "sluice: filters pushed EXACT" not in star.sql(query)._jdf.queryExecution().toString()


def test_without_a_join_a_selective_sluice_scan_is_planned_as_before(star) -> None:
    """Only joins are touched: a filtered Sluice scan alone keeps its pushed aggregate and no Filter."""
    query = "SELECT count(*) FROM rtlite.dim WHERE region = 'north'"
    assert star.sql(query).collect()[0][0] == DIMENSIONS // 50
    plan = star.plan(query)
    assert plan.scans[0].to_dict()["aggregates_pushed"], plan.scans[0].to_dict()
