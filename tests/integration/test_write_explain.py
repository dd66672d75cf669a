"""EXPLAIN of a write (sluice/planner/write_explain.py): the path, the remote statements and why.

Spark's ``EXPLAIN INSERT/DELETE/UPDATE/MERGE`` plans the statement without running it and
prints Sluice's write node by its ``toString``, which is the planner's one line. Per source
(PostgreSQL, MariaDB, SQLite) the line must name the path the write takes (the bulk load,
a pushed DELETE, the row-level delta, a refusal) and the statements the source would run,
must not show the password of the source's URL (PostgreSQL's), and the table must be exactly as it was
afterwards, with no staging table left.
"""

from __future__ import annotations

import sqlite3
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.sources import MYSQL_URL, mariadb, mariadb_execute

pytestmark = pytest.mark.integration

_SECRET = "not-a-real-password-7"  # in the PostgreSQL URL: the server trusts the test user, EXPLAIN must not show it
_ROWS = [("a", 5, None), ("b", 0, "empty"), ("c", 2, "x")]
_DB = "sluice_wx"  # the MariaDB database of these tables


def _with_password(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.username or 'root'}:{_SECRET}@{parts.hostname}:{parts.port}"))


@pytest.fixture(scope="module")
def explained(spark, pg_url, tmp_path_factory):
    """A Federation with PostgreSQL (a password in the URL), MariaDB and SQLite attached writable,
    each holding ``wx_stock`` (a primary key) and ``wx_bag`` (none) with the same rows."""
    from sluice import Federation

    lite = tmp_path_factory.mktemp("explain") / "w.db"
    with sqlite3.connect(lite) as db:
        db.execute("CREATE TABLE wx_stock (sku TEXT NOT NULL PRIMARY KEY, qty INT NOT NULL, note TEXT)")
        db.execute("CREATE TABLE wx_bag (sku TEXT COLLATE NOCASE, qty INT)")
        db.executemany("INSERT INTO wx_stock VALUES (?, ?, ?)", _ROWS)
        db.executemany("INSERT INTO wx_bag VALUES (?, ?)", [r[:2] for r in _ROWS])
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.wx_stock, public.wx_bag")
        connection.execute("CREATE TABLE public.wx_stock (sku text PRIMARY KEY, qty int NOT NULL, note text)")
        connection.execute("CREATE TABLE public.wx_bag (sku text, qty int)")
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO public.wx_stock VALUES (%s, %s, %s)", _ROWS)
            cursor.executemany("INSERT INTO public.wx_bag VALUES (%s, %s)", [r[:2] for r in _ROWS])
    mariadb_execute(
        f"DROP DATABASE IF EXISTS {_DB}",
        f"CREATE DATABASE {_DB}",
        f"CREATE TABLE {_DB}.wx_stock (sku VARCHAR(10) PRIMARY KEY, qty INT NOT NULL, note TEXT) ENGINE=InnoDB",
        f"CREATE TABLE {_DB}.wx_bag (sku VARCHAR(10), qty INT) ENGINE=InnoDB",
        f"INSERT INTO {_DB}.wx_stock VALUES ('a', 5, NULL), ('b', 0, 'empty'), ('c', 2, 'x')",
        f"INSERT INTO {_DB}.wx_bag VALUES ('a', 5), ('b', 0), ('c', 2)",
    )
    fed = Federation(spark=spark)
    fed.attach("xpg", _with_password(pg_url), writable=True)
    fed.attach("xmy", MYSQL_URL.rsplit("/", 1)[0] + f"/{_DB}", writable=True)  # MariaDB checks any password given
    fed.attach("xlite", f"sqlite:///{lite}", writable=True)
    fed.attach("xro", f"sqlite:///{lite}")  # read-only
    yield fed, lite, pg_url
    for name in ("xpg", "xmy", "xlite", "xro"):
        fed.detach(name)


_SCHEMA = {"xpg": "public", "xmy": _DB, "xlite": "main"}
#: the words naming each source's bulk load, and how an overwrite empties the table first
_BULK = {
    "xpg": ("COPY (binary)", 'TRUNCATE "public"."wx_stock"'),
    "xmy": ("LOAD DATA LOCAL INFILE", f"DELETE FROM `{_DB}`.`wx_stock`"),
    "xlite": ("one SQLite transaction", 'DELETE FROM main."wx_stock"'),
}


def _explain(fed, statement: str) -> str:
    """Spark's physical plan of ``EXPLAIN statement``, checked to carry no password."""
    text = fed.spark.sql(f"EXPLAIN {statement}").collect()[0][0]
    assert _SECRET not in text
    return text


def _rows(catalog: str, lite, pg_url: str, table: str) -> list[tuple]:
    """The table as the source's own driver reads it, sorted."""
    if catalog == "xlite":
        with sqlite3.connect(lite) as db:
            return sorted(db.execute(f"SELECT * FROM {table}").fetchall())
    if catalog == "xpg":
        with psycopg.connect(pg_url) as connection:
            found = connection.execute(f"SELECT * FROM public.{table}").fetchall()
            staged = connection.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sluice_stage_%'")
            assert staged.fetchone() == (0,), "EXPLAIN left a staging table"
            return sorted(found)
    connection = mariadb(_DB)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {table}")
            found = list(cursor.fetchall())
            cursor.execute(f"SHOW TABLES FROM {_DB} LIKE 'sluice_stage_%'")
            assert cursor.fetchall() == (), "EXPLAIN left a staging table"
            return sorted(found)
    finally:
        connection.close()


@pytest.mark.parametrize("catalog", ["xpg", "xmy", "xlite"])
def test_explain_shows_the_write_and_writes_nothing(explained, catalog: str) -> None:
    fed, lite, pg_url = explained
    table = f"{catalog}.{_SCHEMA[catalog]}.wx_stock"
    before = _rows(catalog, lite, pg_url, "wx_stock"), _rows(catalog, lite, pg_url, "wx_bag")
    bulk, emptied = _BULK[catalog]

    insert = _explain(fed, f"INSERT INTO {table} VALUES ('z', 1, 'new')")
    assert "SluiceWrite INSERT INTO" in insert and bulk in insert, insert
    assert "Remote: INSERT INTO" in insert and "Why: " in insert, insert
    assert emptied not in insert, insert

    overwrite = _explain(fed, f"INSERT OVERWRITE {table} VALUES ('z', 1, 'new')")
    assert "SluiceWrite INSERT OVERWRITE" in overwrite and f"Remote: {emptied}" in overwrite, overwrite

    pushed = _explain(fed, f"DELETE FROM {table} WHERE qty > 2")
    assert "Path: pushed DELETE" in pushed, pushed
    assert "Remote: DELETE FROM" in pushed and "WHERE" in pushed and "[EXACT]" in pushed, pushed

    by_key = _explain(fed, f"DELETE FROM {table} WHERE reverse(sku) = 'a'")  # no V2 form: Spark's rewrite
    assert "SluiceWrite DELETE" in by_key and "Path: row-level delta" in by_key, by_key

    update = _explain(fed, f"UPDATE {table} SET qty = qty + 1 WHERE qty < 3")
    assert "SluiceWrite UPDATE" in update and "Path: row-level delta" in update, update
    assert "Remote: UPDATE" in update and "Remote: DELETE" in update, update

    merge = _explain(
        fed,
        f"MERGE INTO {table} t USING (SELECT 'a' AS sku, 9 AS qty) s ON t.sku = s.sku "
        "WHEN MATCHED THEN UPDATE SET qty = s.qty WHEN NOT MATCHED THEN INSERT (sku, qty, note) VALUES (s.sku, s.qty, 'm')",
    )
    assert "SluiceWrite MERGE" in merge and "Path: row-level delta" in merge and "Remote: INSERT INTO" in merge, merge

    after = _rows(catalog, lite, pg_url, "wx_stock"), _rows(catalog, lite, pg_url, "wx_bag")
    assert after == before


def test_explain_shows_refusals(explained) -> None:
    fed, lite, pg_url = explained
    before = _rows("xlite", lite, pg_url, "wx_bag")
    # NOCASE: 'a' = 'A' in SQLite, not in Spark; the table has no key to delete by
    refused = _explain(fed, "DELETE FROM xlite.main.wx_bag WHERE sku = 'a'")
    assert "Path: refused" in refused and "not EXACT" in refused and "NOCASE" in refused, refused
    read_only = _explain(fed, "INSERT INTO xro.main.wx_bag VALUES ('z', 1)")
    assert "Path: refused" in read_only and "writable=true" in read_only, read_only
    assert _rows("xlite", lite, pg_url, "wx_bag") == before


def test_pushed_delete_still_runs(explained) -> None:
    """The DELETE Spark plans on Sluice's explained table deletes as before (the wrapper delegates)."""
    fed, lite, pg_url = explained
    fed.sql("INSERT INTO xlite.main.wx_bag VALUES ('gone', 99)")
    fed.sql("DELETE FROM xlite.main.wx_bag WHERE qty = 99")
    assert ("gone", 99) not in _rows("xlite", lite, pg_url, "wx_bag")
