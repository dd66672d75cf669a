"""Writes to PostgreSQL, SQLite and DuckDB catalogs (sluice/write): opt-in, atomic, faithful.

Rows are written by Sluice through Spark SQL (CTAS, INSERT, INSERT OVERWRITE) and
DataFrameWriterV2, then read back by the source's own driver (psycopg, sqlite3, duckdb) and by
Sluice, and compared with the values Spark held (its Arrow form: exact decimals, instants,
bytes). A failing statement (a duplicate key or NULL in a NOT NULL column among many good
rows) must leave the table as it was and no staging table behind.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from decimal import Decimal

import duckdb
import psycopg
import pytest

from sluice.dialects.base import wall_clock
from sluice.errors import SluiceError

# Edge values Spark holds; the PostgreSQL query adds what SQLite cannot store (NaN, 38 digits, instants)
_COMMON = """
SELECT * FROM VALUES
  (1, true, 9223372036854775807, CAST('-12345678901.2345' AS DECIMAL(15,4)), CAST('Infinity' AS DOUBLE),
   'trailing  ', X'00FF10', DATE'0001-01-01', TIMESTAMP_NTZ'1969-12-31 23:59:59.999999'),
  (2, false, -9223372036854775808, CAST('0.0001' AS DECIMAL(15,4)), CAST('-Infinity' AS DOUBLE),
   'Straße 日本 é', X'', DATE'1969-12-31', TIMESTAMP_NTZ'2024-03-10 02:30:00'),
  (3, NULL, NULL, NULL, CAST(-0.0 AS DOUBLE), 'CASE', NULL, DATE'9999-12-31', TIMESTAMP_NTZ'0001-01-01 00:00:00'),
  (4, true, 0, CAST('99999999999.9999' AS DECIMAL(15,4)), 1.0E-300D, '', X'7F', NULL, NULL),
  (5, NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL)
  AS t(id, b, i, d, f, s, bin, day, ntz)
"""
_PG_EXTRA = f"""
SELECT c.*, e.dd, e.ts, e.f2 FROM ({_COMMON}) c JOIN (SELECT * FROM VALUES
  (1, CAST('-1234567890123456789012345678.1234567891' AS DECIMAL(38,10)), TIMESTAMP'1900-01-01 00:00:00', CAST('NaN' AS DOUBLE)),
  (2, CAST('0.0000000001' AS DECIMAL(38,10)), TIMESTAMP'2024-03-10 03:30:00', CAST(1.5 AS FLOAT)),
  (3, NULL, TIMESTAMP'2024-11-03 01:30:00', NULL),
  (4, CAST('9999999999999999999999999999.9999999999' AS DECIMAL(38,10)), TIMESTAMP'1969-12-31 23:59:59.5', CAST('-Infinity' AS FLOAT)),
  (5, NULL, NULL, NULL) AS x(id, dd, ts, f2)) e USING (id)
"""
_QUERIES = {"wpg": _PG_EXTRA, "wlite": _COMMON, "wduck": _PG_EXTRA}  # DuckDB holds what PostgreSQL does
_SCHEMA = {"wpg": "public", "wlite": "main", "wduck": "main"}
_CATALOGS = ["wpg", "wlite", "wduck"]


@pytest.fixture(scope="module")
def writer(spark, pg_url, tmp_path_factory):
    """A Federation with PostgreSQL, SQLite and DuckDB attached writable, and PostgreSQL read-only."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("writes")
    lite, duck = folder / "w.db", folder / "w.duckdb"
    sqlite3.connect(lite).close()
    duckdb.connect(str(duck)).close()
    fed = Federation(spark=spark)
    fed.attach("wpg", pg_url, writable=True)
    fed.attach("wlite", f"sqlite:///{lite}", writable=True)
    fed.attach("wduck", f"duckdb:///{duck}", writable=True)
    fed.attach("ropg", pg_url)
    with psycopg.connect(pg_url, autocommit=True) as connection:
        for table in ("w_types", "w_keys", "w_v2", "w_ddl"):
            connection.execute(f"DROP TABLE IF EXISTS public.{table}")
    yield fed, lite, duck
    for name in ("wpg", "wlite", "wduck", "ropg"):
        fed.detach(name)


def _rows(arrow) -> list[tuple]:
    """Rows of an Arrow table sorted by id, NaN as a string (NaN equals nothing)."""
    columns = [arrow.column(i).to_pylist() for i in range(arrow.num_columns)]
    rows = [tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in zip(*columns)]
    return sorted(rows, key=lambda row: row[0])


def _driver_rows(fed, catalog: str, pg_url: str, table: str) -> list[tuple]:
    """The table as the source's own driver reads it, in Spark's forms (SQLite's text parsed)."""
    if catalog in ("wpg", "wduck"):
        if catalog == "wpg":
            with psycopg.connect(pg_url) as connection:
                rows = connection.execute(f"SELECT * FROM public.{table}").fetchall()
        else:
            with duckdb.connect(str(fed[2]), read_only=True) as connection:
                rows = connection.execute(f"SELECT * FROM main.{table}").fetchall()
        return sorted(
            (tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows),
            key=lambda row: row[0],
        )
    with sqlite3.connect(fed[1]) as connection:
        return sorted(connection.execute(f"SELECT * FROM {table}").fetchall(), key=lambda row: row[0])


def _as_sqlite(row: tuple) -> tuple:
    """Spark's values as the SQLite writer stores them: 0/1, ISO text, decimal as INTEGER/REAL."""
    out: list[object] = []
    for v in row:
        if isinstance(v, bool):
            out.append(int(v))
        elif isinstance(v, dt.datetime):
            out.append(wall_clock(v))
        elif isinstance(v, dt.date):
            out.append(v.isoformat())
        else:
            out.append(v)
    return tuple(out)


@pytest.mark.parametrize("catalog", _CATALOGS)
def test_ctas_round_trip_of_edge_values(writer, pg_url, catalog) -> None:
    """CTAS of edge values: the source's driver and Sluice read back exactly what Spark held."""
    fed = writer[0]
    query = _QUERIES[catalog]
    expected = _rows(fed.spark.sql(query).toArrow())
    fed.sql(f"CREATE TABLE {catalog}.{_SCHEMA[catalog]}.w_types AS {query}")
    try:
        assert _rows(fed.sql(f"SELECT * FROM {catalog}.{_SCHEMA[catalog]}.w_types").toArrow()) == expected
        stored = _driver_rows(writer, catalog, pg_url, "w_types")
        if catalog in ("wpg", "wduck"):
            assert stored == expected
        else:
            decimals = [
                tuple(Decimal(repr(v)) if i == 3 and v is not None else v for i, v in enumerate(r)) for r in stored
            ]
            assert decimals == [_as_sqlite(r) for r in expected]
    finally:
        fed.sql(f"DROP TABLE {catalog}.{_SCHEMA[catalog]}.w_types")


def _keys_table(fed, catalog: str, pg_url: str) -> None:
    ddl = "CREATE TABLE w_keys (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"
    if catalog == "wpg":
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute("DROP TABLE IF EXISTS public.w_keys")
            connection.execute(ddl.replace("w_keys", "public.w_keys"))
    elif catalog == "wduck":
        with duckdb.connect(str(fed[2])) as connection:
            connection.execute("DROP TABLE IF EXISTS w_keys")
            connection.execute(ddl)
    else:
        with sqlite3.connect(fed[1]) as connection:
            connection.execute("DROP TABLE IF EXISTS w_keys")
            connection.execute(ddl)


def _staging_left(catalog: str, pg_url: str) -> list[str]:
    if catalog != "wpg":
        return []
    with psycopg.connect(pg_url) as connection:
        rows = connection.execute(r"SELECT relname FROM pg_class WHERE relname LIKE 'sluice\_stage\_%'").fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("catalog", _CATALOGS)
def test_insert_and_overwrite_are_all_or_nothing(writer, pg_url, catalog) -> None:
    """INSERT appends; a duplicate key or a NULL for a NOT NULL column among 2,000 good rows
    fails the statement naming the constraint and leaves the table as it was, with no
    staging table behind; INSERT OVERWRITE replaces every row."""
    fed = writer[0]
    table = f"{catalog}.{_SCHEMA[catalog]}.w_keys"
    _keys_table(writer, catalog, pg_url)
    fed.sql(f"INSERT INTO {table} VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    before = sorted(_driver_rows(writer, catalog, pg_url, "w_keys"))
    assert before == [(1, "one"), (2, "two"), (3, "three")]
    # the leftover of a killed statement (nobody holds its lock) is dropped by the next one
    if catalog == "wpg":
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute("CREATE TABLE IF NOT EXISTS public.sluice_stage_killed (x int)")
    for bad, match in (
        ("SELECT CAST(id AS INT), 'x' FROM range(1000, 3000) UNION ALL SELECT 1500, 'dup'", "(?i)unique|duplicate"),
        ("SELECT CAST(id AS INT), IF(id = 1500, NULL, 'x') FROM range(1000, 3000)", "(?i)null"),
    ):
        for verb in ("INSERT INTO", "INSERT OVERWRITE"):
            with pytest.raises(SluiceError, match=match):
                fed.sql(f"{verb} {table} {bad}")
            assert sorted(_driver_rows(writer, catalog, pg_url, "w_keys")) == before
            assert _staging_left(catalog, pg_url) == []
    fed.sql(f"INSERT OVERWRITE {table} SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(10, 15)")
    assert sorted(_driver_rows(writer, catalog, pg_url, "w_keys")) == [(i, str(i)) for i in range(10, 15)]
    assert _rows(fed.sql(f"SELECT * FROM {table}").toArrow()) == [(i, str(i)) for i in range(10, 15)]


@pytest.mark.parametrize("catalog", _CATALOGS)
def test_dataframe_writer_v2_and_ddl(writer, pg_url, catalog) -> None:
    """writeTo create/append/createOrReplace, CREATE TABLE's refusals and DROP TABLE."""
    fed = writer[0]
    schema = _SCHEMA[catalog]
    table = f"{catalog}.{schema}.w_v2"
    spark = fed.spark
    fed.activate()
    spark.range(3).selectExpr("id", "CAST(id * 1.5 AS DECIMAL(10,2)) AS price").writeTo(table).create()
    spark.range(3, 5).selectExpr("id", "CAST(id AS DECIMAL(10,2)) AS price").writeTo(table).append()
    assert [r.id for r in fed.sql(f"SELECT id FROM {table} ORDER BY id").collect()] == [0, 1, 2, 3, 4]
    spark.range(7, 8).selectExpr("id", "'seven' AS name").writeTo(table).createOrReplace()
    assert [tuple(r) for r in fed.sql(f"SELECT * FROM {table}").collect()] == [(7, "seven")]
    fed.sql(f"DROP TABLE {table}")
    assert _driver_tables(writer, catalog, pg_url, "w_v2") == []
    unheld = "TIMESTAMP" if catalog == "wlite" else "ARRAY<INT>"
    with pytest.raises(SluiceError, match="column 'x' of Spark type"):
        fed.sql(f"CREATE TABLE {catalog}.{schema}.w_ddl (x {unheld})")
    assert _driver_tables(writer, catalog, pg_url, "w_ddl") == []


def _driver_tables(fed, catalog: str, pg_url: str, name: str) -> list[str]:
    if catalog == "wpg":
        with psycopg.connect(pg_url) as connection:
            return [r[0] for r in connection.execute("SELECT tablename FROM pg_tables WHERE tablename = %s", (name,))]
    if catalog == "wduck":
        with duckdb.connect(str(fed[2]), read_only=True) as connection:
            return [
                r[0]
                for r in connection.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE table_name = ?", [name]
                ).fetchall()
            ]
    with sqlite3.connect(fed[1]) as connection:
        return [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE name = ?", (name,))]


def test_writes_are_refused_without_writable(writer, pg_url) -> None:
    """A source attached without writable=true refuses every write, naming the option, and
    the table keeps its rows."""
    fed = writer[0]
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.w_never")
        connection.execute("CREATE TABLE public.w_never AS SELECT 1 AS x")
    for statement in (
        "INSERT INTO ropg.public.w_never VALUES (2)",
        "INSERT OVERWRITE ropg.public.w_never VALUES (2)",
        "DROP TABLE ropg.public.w_never",
        "CREATE TABLE ropg.public.w_other (x INT)",
        "CREATE TABLE ropg.public.w_other AS SELECT 1 AS x",
    ):
        with pytest.raises(
            SluiceError, match=r"read-only in Sluice: .*writable=true.*spark\.sql\.catalog\.ropg\.writable"
        ):
            fed.sql(statement)
    with psycopg.connect(pg_url, autocommit=True) as connection:
        assert connection.execute("SELECT x FROM public.w_never").fetchall() == [(1,)]
        connection.execute("DROP TABLE public.w_never")
