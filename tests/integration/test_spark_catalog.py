"""Sluice inside Spark: every attached source is a Spark catalog. Plain ``spark.sql`` and
``spark.table`` see it, Spark's own EXPLAIN shows what the source runs and why, Spark plans
joins with the statistics Sluice reports, and a failing planner fails the query clearly."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest

from sluice import BindError, Federation
from sluice.planner.catalog import CatalogPlanner
from sluice.protocol.scan import FiltersAnswer, FiltersRequest
from sluice.spark import bridge

pytestmark = pytest.mark.integration


def test_show_and_describe(spark, fed) -> None:
    namespaces = {row[0] for row in spark.sql("SHOW NAMESPACES IN pg").collect()}
    assert "sluice_test" in namespaces
    tables = {row.tableName for row in spark.sql("SHOW TABLES IN pg.sluice_test").collect()}
    assert "edge" in tables
    described = {row.col_name: row.data_type for row in spark.sql("DESCRIBE pg.sluice_test.edge").collect()}
    assert described["i"] == "int" and described["b"] == "bigint" and described["ts"] == "timestamp"
    assert {row.tableName for row in spark.sql("SHOW TABLES IN lite").collect()} >= {"edge"}


def test_plain_spark_sql_joins_a_source_with_a_temp_view(spark, fed) -> None:
    spark.createDataFrame([(1, "one"), (2, "two")], "i int, label string").createOrReplaceTempView("labels")
    try:
        rows = spark.sql(
            "SELECT e.id, l.label FROM pg.sluice_test.edge e JOIN labels l ON e.i = l.i ORDER BY e.id"
        ).collect()
        reference = fed.sql(
            "SELECT e.id, l.label FROM pg.sluice_test.edge e JOIN labels l ON e.i = l.i ORDER BY e.id", pushdown=False
        ).collect()
        assert rows == reference and rows
    finally:
        spark.catalog.dropTempView("labels")


def test_unknown_table_names_what_exists_without_a_secret(spark, fed) -> None:
    with pytest.raises(Exception, match=r"TABLE_OR_VIEW_NOT_FOUND.*no table sluice_test\.no_such_table \(") as caught:
        spark.sql("SELECT * FROM pg.sluice_test.no_such_table")
    assert "no_such_table" in str(caught.value)
    with pytest.raises(BindError, match="no_such_table"):
        fed.sql("SELECT * FROM pg.sluice_test.no_such_table")
    assert not spark.catalog.tableExists("pg.sluice_test.no_such_table")
    assert spark.catalog.tableExists("pg.sluice_test.edge")


def test_sparks_explain_shows_the_remote_query_and_every_verdict(spark, fed) -> None:
    frame = spark.sql("SELECT id FROM pg.sluice_test.edge WHERE i = 1 AND ch = 'a' AND upper(t) = 'A'")
    text = frame._jdf.queryExecution().toString()
    assert 'RemoteQuery: SELECT "id"' in text and '("i" = 1)' in text
    assert "[EXACT] `i` = 1" in text and "[INEXACT]" in text
    rows = sorted(r.id for r in frame.collect())
    assert rows == sorted(
        r.id
        for r in fed.sql(
            "SELECT id FROM pg.sluice_test.edge WHERE i = 1 AND ch = 'a' AND upper(t) = 'A'", pushdown=False
        ).collect()
    )


def test_a_small_remote_table_is_broadcast(spark, fed, tmp_path) -> None:
    """The 100-row table and the large one are in two sources, so Spark joins them (a join of two
    tables of one source is pushed into it instead) and broadcasts the small one from its statistics."""
    dims, facts = tmp_path / "dims.db", tmp_path / "facts.db"
    with sqlite3.connect(dims) as connection:
        connection.execute("CREATE TABLE dim (k INTEGER PRIMARY KEY, name TEXT)")
        connection.executemany("INSERT INTO dim VALUES (?, ?)", [(k, f"d{k}") for k in range(100)])
    with sqlite3.connect(facts) as connection:
        connection.execute("CREATE TABLE fact (id INTEGER PRIMARY KEY, k INTEGER, v REAL)")
        connection.executemany("INSERT INTO fact VALUES (?, ?, ?)", [(i, i % 100, i * 0.5) for i in range(20000)])
    fed.attach("dims", f"sqlite:///{dims}")
    fed.attach("facts", f"sqlite:///{facts}")
    try:
        frame = spark.sql("SELECT d.name, count(*) AS n FROM facts.fact f JOIN dims.dim d ON f.k = d.k GROUP BY d.name")
        plan = frame._jdf.queryExecution().executedPlan().toString()
        assert "BroadcastHashJoin" in plan, plan
        assert frame.count() == 100
    finally:
        fed.detach("dims")
        fed.detach("facts")


def _broadcast(plan: str) -> str:
    """The subtree under the plan's BroadcastExchange (the side Spark broadcasts)."""
    lines = plan.splitlines()
    start = next(i for i, line in enumerate(lines) if "BroadcastExchange" in line)
    depth = lines[start].index("BroadcastExchange")
    below = []
    for line in lines[start + 1 :]:
        text = line.lstrip(" :+-")
        if len(line) - len(text) <= depth:
            break
        below.append(text)
    return "\n".join(below)


def test_the_side_with_fewer_rows_is_broadcast_whatever_its_largest_key(spark, fed, tmp_path) -> None:
    """100 dimension rows with keys up to 99,000 against 20,000 facts: SQLite's row estimate is
    the row count, not the largest key, so Spark broadcasts the dimension (an estimate of 99,000
    rows made it broadcast the facts)."""
    dims, facts = tmp_path / "sparse_dims.db", tmp_path / "dense_facts.db"
    with sqlite3.connect(dims) as connection:
        connection.execute("CREATE TABLE dim (k INTEGER PRIMARY KEY, name TEXT)")
        connection.executemany("INSERT INTO dim VALUES (?, ?)", [(k * 1000, f"d{k}") for k in range(100)])
    with sqlite3.connect(facts) as connection:
        connection.execute("CREATE TABLE fact (id INTEGER PRIMARY KEY, k INTEGER)")
        connection.executemany("INSERT INTO fact VALUES (?, ?)", [(i, (i % 100) * 1000) for i in range(20000)])
    fed.attach("sdims", f"sqlite:///{dims}")
    fed.attach("dfacts", f"sqlite:///{facts}")
    try:
        query = "SELECT d.name, f.id FROM dfacts.fact f JOIN sdims.dim d ON f.k = d.k"
        frame = spark.sql(query)
        plan = frame._jdf.queryExecution().executedPlan().toString()
        broadcast = _broadcast(plan)
        assert "dim" in broadcast and "fact" not in broadcast, plan
        assert frame.count() == 20000 == fed.sql(query, pushdown=False).count()
    finally:
        fed.detach("sdims")
        fed.detach("dfacts")


def test_a_catalog_from_spark_configuration_alone(spark, fed, edge_tables, monkeypatch) -> None:
    """``spark.sql.catalog.NAME`` set by hand (no Federation.attach) works, password from an
    environment variable; detaching leaves a clear error."""
    spark.conf.set("spark.sql.catalog.byhand", "io.sluice.spark.SluiceCatalog")
    spark.conf.set("spark.sql.catalog.byhand.url", edge_tables["urls"]["lite"])
    try:
        assert (
            spark.sql("SELECT count(*) AS n FROM byhand.edge WHERE i = 1").collect()[0].n
            == fed.sql("SELECT count(*) AS n FROM lite.edge WHERE i = 1", pushdown=False).collect()[0].n
        )
    finally:
        spark.conf.unset("spark.sql.catalog.byhand.url")
    with pytest.raises(Exception, match="byhand"):
        spark.sql("SELECT * FROM byhand.edge").collect()


def test_a_failing_planner_fails_the_query_clearly(spark, fed, monkeypatch) -> None:
    """Fault injection (a planner bug cannot be caused for real): the query fails naming the
    planner step; it never runs with a different pushdown."""

    def broken(self: CatalogPlanner, request: FiltersRequest) -> FiltersAnswer:
        raise RuntimeError("injected fault")

    # the bridge dispatches by its method table: the fault goes in the handler it holds
    monkeypatch.setitem(bridge.METHODS, "filters", replace(bridge.METHODS["filters"], handler=broken))
    with pytest.raises(Exception, match=r"internal error in the Sluice planner \(filters\).*injected fault"):
        spark.sql("SELECT id FROM pg.sluice_test.edge WHERE i = 1").collect()


def test_pushdown_off_reads_only_the_columns_used_and_pushes_nothing(fed) -> None:
    """Column pruning is no semantic change, so the reference path prunes too (a value in a column the
    query never uses cannot fail it: test_unreadable_values.py); it pushes no filter and no limit."""
    plan = fed.plan("SELECT id FROM pg.sluice_test.edge WHERE i = 1 LIMIT 3")
    assert [v.level.value for v in plan.scans[0].verdicts] and plan.scans[0].spec.columns == ("id",)
    frame = fed.sql("SELECT id FROM pg.sluice_test.edge WHERE i = 1 LIMIT 3", pushdown=False)
    reference = Federation._plan_of(fed, "", frame)
    scan = reference.scans[0]
    assert scan.verdicts == () and scan.spec.limit is None and sorted(scan.spec.columns) == ["i", "id"]


def test_a_callers_session_keeps_its_settings(spark, caplog) -> None:
    """Federation(spark=theirs) changes none of their settings; what is unsafe is said, once."""
    spark.conf.set("spark.sql.parquet.filterPushdown", "true")
    try:
        with caplog.at_level("WARNING", logger="sluice.spark.session"):
            Federation(spark=spark)
        assert spark.conf.get("spark.sql.parquet.filterPushdown") == "true"
        assert "spark.sql.parquet.filterPushdown=true" in caplog.text and "drop NaN rows" in caplog.text
        assert "README.md, 'Spark settings'" in caplog.text  # a page the repository has (no DESIGN.md)
    finally:
        spark.conf.set("spark.sql.parquet.filterPushdown", "false")
