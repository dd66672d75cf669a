"""Passthrough (sluice/planner/passthrough.py): the source's own SQL, read-only, as a DataFrame.

The differential: ``fed.query(source, "SELECT * FROM edge")`` returns the rows and the Spark
types the table scan of the same table returns (edge values of every type, each source's type
mapping). Then: a statement that writes fails with the source's own error and changes nothing;
Spark's filters, aggregates and limits over it stay Spark's and EXPLAIN says so, showing the
SQL and no credential; a syntax error is one line naming the source; Flight and lake sources
refuse, naming their kind.
"""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from sluice.errors import SluiceError, SourceError
from tests.scalars import first_value
from tests.sources import EDGE_TABLES, PG_URL

pytestmark = pytest.mark.integration

#: each SQL source's edge table, as the source itself names it
NATIVE = {"pg": "sluice_test.edge", "my": "sluice_test.edge", "lite": "edge", "duck": "edge"}


def _explained(frame) -> str:
    """Spark's EXPLAIN EXTENDED of ``frame`` (its physical plan shows each scan's description)."""
    return str(frame._jdf.queryExecution().toString())


@pytest.mark.parametrize("source", [s for s in NATIVE if s in EDGE_TABLES])
def test_a_passthrough_reads_the_rows_and_types_of_the_table_scan(fed, source: str) -> None:
    passthrough = fed.query(source, f"SELECT * FROM {NATIVE[source]}")
    scanned = fed.sql(f"SELECT * FROM {EDGE_TABLES[source]}", pushdown=False)
    assert passthrough.schema == scanned.schema
    got, expected = passthrough.collect(), scanned.collect()
    assert len(got) == len(expected) > 0
    assert sorted(map(repr, got)) == sorted(map(repr, expected))  # repr: NaN equals NaN, -0.0 differs from 0.0


@pytest.mark.parametrize("source", [s for s in NATIVE if s in EDGE_TABLES])
def test_spark_filters_aggregates_and_limits_a_passthrough_itself(fed, source: str) -> None:
    sql = f"SELECT id, t FROM {NATIVE[source]} WHERE id < 40"
    frame = fed.query(source, sql)
    frame.createOrReplaceTempView("sluice_passthrough")
    query = "SELECT count(*) AS n, max(id) AS top FROM sluice_passthrough WHERE id > 3"
    reference = f"SELECT count(*) AS n, max(id) AS top FROM {EDGE_TABLES[source]} WHERE id < 40 AND id > 3"
    assert fed.spark.sql(query).collect() == fed.sql(reference, pushdown=False).collect()
    explained = _explained(fed.spark.sql(query))
    assert f"{source}.(passthrough query) on {source}" in explained, explained
    assert f"FROM ({sql}) AS sluice_query" in explained, explained
    assert "[UNSUPPORTED] >(id, 3) -- a passthrough query's result: Spark filters it" in explained.replace("'3'", "3")
    assert "Filter" in explained and "HashAggregate" in explained  # Spark's own
    assert len(frame.where("id > 3").limit(2).collect()) == 2
    limited = _explained(frame.orderBy("id").limit(2))
    assert "LIMIT" not in limited.split("RemoteQuery:")[1].split("|")[0], limited


def test_a_write_through_a_passthrough_fails_with_the_sources_error_and_changes_nothing(fed) -> None:
    """PostgreSQL: nextval() writes, and the read-only transaction refuses it; DELETE is no query."""
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SEQUENCE IF EXISTS public.sluice_passthrough_seq")
        connection.execute("CREATE SEQUENCE public.sluice_passthrough_seq")
        try:
            with pytest.raises(SluiceError, match="read-only transaction") as refused:
                fed.query("pg", "SELECT nextval('public.sluice_passthrough_seq')").collect()
            assert "'pg'" in str(refused.value)
            with pytest.raises(SluiceError, match="syntax error"):
                fed.query("pg", "DELETE FROM sluice_test.edge").collect()
            assert connection.execute("SELECT last_value, is_called FROM public.sluice_passthrough_seq").fetchone() == (
                1,
                False,
            )
            assert first_value(connection.execute("SELECT count(*) FROM sluice_test.edge").fetchone()) > 0
        finally:
            connection.execute("DROP SEQUENCE IF EXISTS public.sluice_passthrough_seq")


@pytest.mark.parametrize("source", [s for s in ("my", "lite", "duck") if s in EDGE_TABLES])
def test_a_delete_through_a_passthrough_fails_and_changes_nothing(fed, source: str) -> None:
    before = fed.sql(f"SELECT count(*) FROM {EDGE_TABLES[source]}", pushdown=False).collect()
    with pytest.raises(SourceError, match=f"source '{source}'"):
        fed.query(source, f"DELETE FROM {NATIVE[source]}").collect()
    assert fed.sql(f"SELECT count(*) FROM {EDGE_TABLES[source]}", pushdown=False).collect() == before


def test_duckdb_refuses_a_passthrough_that_writes_a_sequence(fed, tmp_path) -> None:
    """DuckDB's read_only connection refuses nextval(): the source's own error, the sequence untouched."""
    import duckdb

    from sluice import Federation

    path = tmp_path / "seq.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SEQUENCE s")
    own = Federation(spark=fed.spark)
    own.attach("seqduck", f"duckdb:///{path}")
    try:
        with pytest.raises(SourceError, match="source 'seqduck'") as refused:
            own.query("seqduck", "SELECT nextval('s') AS n").collect()
        assert "\n" not in str(refused.value)
    finally:
        own.detach("seqduck")
    with duckdb.connect(str(path)) as connection:
        assert connection.execute("SELECT nextval('s')").fetchone() == (1,)


@pytest.mark.parametrize("source", [s for s in NATIVE if s in EDGE_TABLES])
def test_a_syntax_error_is_one_line_naming_the_source(fed, source: str) -> None:
    with pytest.raises(SourceError) as failed:
        fed.query(source, "SELEC id FROM nowhere")
    message = str(failed.value)
    assert message.startswith(f"source '{source}': passthrough query failed:") and "\n" not in message, message


def test_the_dataframe_reader_takes_option_query(fed, spark) -> None:
    if "lite" not in EDGE_TABLES:
        pytest.skip("SQLite not selected")
    url = fed._options["lite"]["url"]
    frame = spark.read.format("sluice").option("url", url).option("query", "SELECT id FROM edge WHERE id < 3").load()
    assert sorted(row.id for row in frame.collect()) == sorted(
        row.id for row in fed.sql(f"SELECT id FROM {EDGE_TABLES['lite']} WHERE id < 3", pushdown=False).collect()
    )


def test_flight_and_lake_sources_refuse_a_passthrough_naming_their_kind(fed, tmp_path) -> None:
    from sluice import Federation
    from sluice.serve.server import serve_in_background

    if "lake" in EDGE_TABLES:
        with pytest.raises(
            SluiceError, match=r"source 'lake' is a lake \(Iceberg\) source: a passthrough query runs on a SQL source"
        ):
            fed.query("lake", "SELECT 1")
    database = tmp_path / "served.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE t (id INTEGER)")
    location, stop = serve_in_background({"lite": f"sqlite:///{database}"}, token="passthrough-token-123")
    own = Federation(spark=fed.spark)
    try:
        own.attach("fl", location, password="passthrough-token-123")
        with pytest.raises(SluiceError, match="source 'fl' is an Arrow Flight source: a passthrough") as refused:
            own.query("fl", "SELECT 1")
        assert "passthrough-token-123" not in str(refused.value)
    finally:
        own.detach("fl")
        stop()


def test_sqlite_types_a_computed_column_by_its_values(fed) -> None:
    """No table declares ``count(*)`` or ``avg(i)``: SQLite's result column is typed by the storage
    classes its values have (integers: bigint, numbers: double), as Spark's own aggregate types them."""
    if "lite" not in EDGE_TABLES:
        pytest.skip("SQLite not selected")
    frame = fed.query("lite", "SELECT count(*) AS n, avg(i) AS mean, max(t) AS top FROM edge")
    reference = fed.sql(
        f"SELECT count(*) AS n, avg(i) AS mean, max(t) AS top FROM {EDGE_TABLES['lite']}", pushdown=False
    )
    assert [(f.name, f.dataType.simpleString()) for f in frame.schema] == [
        ("n", "bigint"),
        ("mean", "double"),
        ("top", "string"),
    ]
    [got], [expected] = frame.collect(), reference.collect()
    assert got.n == expected.n and got.mean == pytest.approx(expected.mean) and got.top == expected.top
