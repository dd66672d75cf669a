"""REPLACE TABLE ... AS SELECT, CREATE OR REPLACE and createOrReplace() on every writable SQL source.

Spark stages a replace (io.sluice.spark.StagedReplace) and Sluice replaces the table in one
step of the source (sluice/write, ``Target.replace``): PostgreSQL, SQLite and DuckDB drop,
create and load in one transaction; MariaDB builds the new table under a staging name and
swaps it in by one RENAME TABLE. Each test fails a replace in Spark's query (the job fails
while the rows are produced) and in the source (a CREATE or a value the source refuses), and
checks with the source's own driver that the old table keeps its columns and rows and that no
staging table is left behind; then a replace that succeeds.
"""

from __future__ import annotations

import sqlite3

import duckdb
import psycopg
import pytest

from sluice.errors import SluiceError
from tests.sources import MYSQL_SERVER, mariadb

_DATABASE = "sluice_replace"
_CATALOGS = ["rpg", "rlite", "rduck", "rmy"]
_SCHEMA = {"rpg": "public", "rlite": "main", "rduck": "main", "rmy": _DATABASE}
#: the Spark job fails half way through producing the rows
_FAILING_QUERY = "SELECT IF(id = 1500, raise_error('boom at 1500'), id) AS id, 'new' AS label FROM range(3000)"
#: a CREATE the source refuses, though Spark takes it: PostgreSQL keeps 63 bytes of a name (the
#: two columns collide), MariaDB takes 64 characters, SQLite and DuckDB fold case in column names
_LONG = "c" * 63
_REFUSED_CREATE = {
    "rpg": (f"SELECT 1 AS {_LONG}a, 2 AS {_LONG}b", "(?i)specified more than once"),
    "rlite": ("SELECT 1 AS a, 2 AS A", "(?i)duplicate column"),
    "rduck": ("SELECT 1 AS a, 2 AS A", "(?i)duplicate|already exists"),
    "rmy": (f"SELECT 1 AS {'c' * 65}", "(?i)too long"),
}


@pytest.fixture(scope="module")
def replacer(spark, pg_url, tmp_path_factory):
    """A Federation with PostgreSQL, SQLite, DuckDB and MariaDB attached writable."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("replace")
    lite, duck = folder / "r.db", folder / "r.duckdb"
    sqlite3.connect(lite).close()
    duckdb.connect(str(duck)).close()
    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_DATABASE}")
        cursor.execute(f"CREATE DATABASE {_DATABASE}")
    fed = Federation(spark=spark)
    fed.attach("rpg", pg_url, writable=True)
    fed.attach("rlite", f"sqlite:///{lite}", writable=True)
    fed.attach("rduck", f"duckdb:///{duck}", writable=True)
    fed.attach("rmy", f"mysql://root@{MYSQL_SERVER}/{_DATABASE}", writable=True)
    yield fed, pg_url, lite, duck
    for name in _CATALOGS:
        fed.detach(name)
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.w_replace")
    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_DATABASE}")


def _driver(replacer, catalog: str, sql: str) -> list[tuple]:
    """``sql``'s rows as the source's own driver reads them."""
    _, pg_url, lite, duck = replacer
    if catalog == "rpg":
        with psycopg.connect(pg_url) as connection:
            return [tuple(r) for r in connection.execute(sql).fetchall()]
    if catalog == "rduck":
        with duckdb.connect(str(duck), read_only=True) as connection:
            return [tuple(r) for r in connection.execute(sql).fetchall()]
    if catalog == "rlite":
        with sqlite3.connect(lite) as connection:
            return [tuple(r) for r in connection.execute(sql).fetchall()]
    with mariadb(_DATABASE) as connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return [tuple(r) for r in cursor.fetchall()]


def _tables(replacer, catalog: str) -> list[str]:
    """The tables of the test's schema whose name starts ``w_replace`` or ``sluice_stage_``."""
    listing = {
        "rpg": "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
        "rduck": "SELECT table_name FROM duckdb_tables()",
        "rlite": "SELECT name FROM sqlite_master WHERE type = 'table'",
        "rmy": f"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{_DATABASE}'",
    }[catalog]
    names = [str(r[0]) for r in _driver(replacer, catalog, listing)]
    return sorted(n for n in names if n.startswith(("w_replace", "sluice_stage_")))


def _columns(replacer, catalog: str) -> list[str]:
    """The names of w_replace's columns, in order, as the source's catalog lists them."""
    if catalog == "rmy":
        rows = _driver(replacer, catalog, "SHOW COLUMNS FROM w_replace")
    elif catalog == "rlite":
        rows = [(r[1],) for r in _driver(replacer, catalog, "PRAGMA table_info(w_replace)")]
    else:
        schema = _SCHEMA[catalog]
        rows = _driver(
            replacer,
            catalog,
            "SELECT column_name FROM information_schema.columns "
            f"WHERE table_schema = '{schema}' AND table_name = 'w_replace' ORDER BY ordinal_position",
        )
    return [str(r[0]) for r in rows]


# SQLite's case (10 s) is the main tier's; the others take 20-75 s each (pytest --durations, loaded machine)
@pytest.mark.parametrize("catalog", [c if c == "rlite" else pytest.param(c, marks=pytest.mark.slow) for c in _CATALOGS])
def test_a_failing_replace_leaves_the_old_table(replacer, catalog) -> None:
    """A replace whose Spark job fails, or whose CREATE the source refuses, or (MariaDB) whose
    value the source cannot store, fails naming why and leaves the old table, its columns and
    rows, and no staging table; CREATE OR REPLACE, REPLACE TABLE AS SELECT and createOrReplace()
    then replace it, and REPLACE TABLE without a query leaves it empty with the new columns."""
    fed = replacer[0]
    table = f"{catalog}.{_SCHEMA[catalog]}.w_replace"
    fed.sql(f"DROP TABLE IF EXISTS {table}")
    fed.sql(f"CREATE TABLE {table} AS SELECT CAST(id AS INT) AS old_id, 'old' AS old_label FROM range(3)")
    before = sorted(_driver(replacer, catalog, "SELECT * FROM w_replace"))
    assert before == [(0, "old"), (1, "old"), (2, "old")]
    failures = [
        (f"CREATE OR REPLACE TABLE {table} AS {_FAILING_QUERY}", "boom at 1500"),
        (f"REPLACE TABLE {table} AS {_FAILING_QUERY}", "boom at 1500"),
        (f"REPLACE TABLE {table} AS {_REFUSED_CREATE[catalog][0]}", _REFUSED_CREATE[catalog][1]),
    ]
    if catalog == "rmy":  # MariaDB stores no NaN: the stage refuses it before the swap
        failures.append((f"REPLACE TABLE {table} AS SELECT CAST('NaN' AS DOUBLE) AS f", "(?i)nan"))
    fed.spark.conf.set("spark.sql.caseSensitive", "true")  # Spark takes the columns a and A
    try:
        for statement, match in failures:
            with pytest.raises(Exception, match=match):
                fed.sql(statement)
            assert sorted(_driver(replacer, catalog, "SELECT * FROM w_replace")) == before, statement
            assert _columns(replacer, catalog) == ["old_id", "old_label"], statement
            assert _tables(replacer, catalog) == ["w_replace"], statement
    finally:
        fed.spark.conf.unset("spark.sql.caseSensitive")
    fed.sql(f"REPLACE TABLE {table} AS SELECT id, CAST(id * 2 AS DECIMAL(10,2)) AS twice FROM range(5)")
    assert _columns(replacer, catalog) == ["id", "twice"]
    assert [tuple(r) for r in fed.sql(f"SELECT id, CAST(twice AS STRING) FROM {table} ORDER BY id").collect()] == [
        (i, f"{2 * i}.00") for i in range(5)
    ]
    fed.activate()
    fed.spark.range(7, 9).selectExpr("id AS n").writeTo(table).createOrReplace()
    assert sorted(_driver(replacer, catalog, "SELECT * FROM w_replace")) == [(7,), (8,)]
    fed.sql(f"REPLACE TABLE {table} (k BIGINT, v STRING)")
    assert _columns(replacer, catalog) == ["k", "v"]
    assert _driver(replacer, catalog, "SELECT * FROM w_replace") == []
    fed.sql(f"DROP TABLE {table}")
    fed.sql(f"CREATE OR REPLACE TABLE {table} AS SELECT 1 AS one")  # no table before: created
    assert _driver(replacer, catalog, "SELECT * FROM w_replace") == [(1,)]
    assert _tables(replacer, catalog) == ["w_replace"]
    fed.sql(f"DROP TABLE {table}")


def test_a_replace_of_a_missing_table_is_refused(replacer) -> None:
    """REPLACE TABLE (without OR CREATE) of a table that does not exist fails as Spark's does, creating nothing."""
    fed = replacer[0]
    fed.sql("DROP TABLE IF EXISTS rlite.main.w_replace")
    with pytest.raises(Exception, match="(?i)cannot be found|not found|REPLACE"):
        fed.sql("REPLACE TABLE rlite.main.w_replace AS SELECT 1 AS one")
    assert _tables(replacer, "rlite") == []


def test_a_replace_is_refused_on_a_source_not_writable(replacer, pg_url) -> None:
    """A source attached read-only refuses a replace, naming the option; the table stays."""
    fed = replacer[0]
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.w_replace")
        connection.execute("CREATE TABLE public.w_replace AS SELECT 1 AS x")
    fed.attach("rropg", pg_url)
    try:
        with pytest.raises(SluiceError, match=r"read-only in Sluice: REPLACE TABLE needs it attached with writable"):
            fed.sql("CREATE OR REPLACE TABLE rropg.public.w_replace AS SELECT 2 AS y")
    finally:
        fed.detach("rropg")
    assert _driver(replacer, "rpg", "SELECT * FROM public.w_replace") == [(1,)]


def test_a_lake_replace_is_still_sparks_drop_create_and_write(replacer, tmp_path) -> None:
    """A lake catalog's replace goes through the same staged table and stays Spark's own: the
    table is dropped, created with the new columns and written (docs/writes.md)."""
    from sluice.lake.catalog import LakeLocation, open_catalog

    fed = replacer[0]
    url = f"iceberg+sqlite:///{tmp_path}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed.attach("rlake", url)
    try:
        fed.sql("CREATE NAMESPACE rlake.ns")
        fed.sql("CREATE TABLE rlake.ns.t AS SELECT id FROM range(3)")
        fed.sql(
            "CREATE OR REPLACE TABLE rlake.ns.t AS SELECT CAST(id AS STRING) AS name, id * 2 AS twice FROM range(2)"
        )
        rows = fed.sql("SELECT * FROM rlake.ns.t ORDER BY twice").collect()
        assert [tuple(r) for r in rows] == [("0", 0), ("1", 2)]
        assert fed.spark.table("rlake.ns.t").columns == ["name", "twice"]
    finally:
        fed.detach("rlake")
