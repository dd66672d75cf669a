"""Top-N over columns a reader selects through a cast: pushed, it returns Spark's rows (issue 23, item 1).

A reader selects some columns through a cast (PostgreSQL ``"amount"::text`` for numeric, MySQL
``CAST(d AS CHAR)`` for decimals and ``CAST(b AS UNSIGNED)`` for BIT and YEAR, DuckDB's casts of
unsigned and huge integers). PostgreSQL names ``"amount"::text`` ``amount``, and ORDER BY binds a
bare name to the select list first, so a pushed ``ORDER BY "amount"`` sorted the text. Each
query below runs every direction and NULL placement of one column as one Spark query (a UNION
ALL of top-N subqueries, each pushed to its own scan), with pushdown and without.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import duckdb
import psycopg
import pytest

from sluice import Federation
from tests.sources import MYSQL_URL, PG_URL, mariadb

pytestmark = pytest.mark.integration

#: values whose text order differs from their numeric order, a tie and a NULL
AMOUNTS = ["999.67", "1666.33", "99.50", "-5.00", "10.00", "999.67", None]
ORDERS = [(d, n) for d in ("ASC", "DESC") for n in ("NULLS FIRST", "NULLS LAST")]


def _rows(values: list[list[str | None]]) -> str:
    """``(1, v, w), (2, ...)``: SQL VALUES rows, id first."""
    return ", ".join(f"({i}, {', '.join('NULL' if v is None else v for v in row)})" for i, row in enumerate(values, 1))


@pytest.fixture(scope="module")
def topn(spark, tmp_path_factory):
    """One table per SQL source whose columns the reader selects through a cast."""
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_topn CASCADE")
        connection.execute("CREATE SCHEMA sluice_topn")
        connection.execute("CREATE TABLE sluice_topn.orders (id int, amount numeric(12,2), wide numeric(38,0))")
        wide = ["9" * 38, "10", "-" + "9" * 38, "2", "100", "10", None]
        connection.execute(f"INSERT INTO sluice_topn.orders VALUES {_rows([list(p) for p in zip(AMOUNTS, wide)])}")
    database = urlparse(MYSQL_URL).path.lstrip("/")
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            cursor.execute(f"DROP TABLE IF EXISTS `{database}`.topn_orders")
            cursor.execute(
                f"CREATE TABLE `{database}`.topn_orders (id INT PRIMARY KEY, amount DECIMAL(12,2), b BIT(8), y YEAR)"
            )
            bits = ["b'1010'", "b'10000001'", "b'10'", "b'0'", "b'1100100'", "b'1010'", None]
            years = ["2024", "1999", "1901", "2155", "2000", "2024", None]
            cursor.execute(
                f"INSERT INTO `{database}`.topn_orders VALUES {_rows([list(p) for p in zip(AMOUNTS, bits, years)])}"
            )
    finally:
        connection.close()
    folder = tmp_path_factory.mktemp("topn")
    lite = sqlite3.connect(folder / "topn.db")
    lite.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount DECIMAL(12,2))")
    lite.execute(f"INSERT INTO orders VALUES {_rows([[a] for a in AMOUNTS])}")
    lite.commit()
    lite.close()
    duck = duckdb.connect(str(folder / "topn.duckdb"))
    duck.execute("CREATE TABLE orders (id INTEGER, amount DECIMAL(12,2), u UTINYINT, ub UBIGINT, h HUGEINT)")
    small = ["9", "100", "10", "255", "0", "9", None]
    huge = ["18446744073709551615", "9", "10", "100", "0", "9", None]
    duck.execute(f"INSERT INTO orders VALUES {_rows([list(p) for p in zip(AMOUNTS, small, huge, huge)])}")
    duck.close()
    federation = Federation(spark=spark)
    federation.attach("pg", PG_URL)
    federation.attach("my", MYSQL_URL)
    federation.attach("lite", "sqlite:///" + str(Path(folder) / "topn.db"))
    federation.attach("duck", "duckdb:///" + str(Path(folder) / "topn.duckdb"))
    return federation, database


def _query(table: str, column: str) -> str:
    """Every direction and NULL placement of ``column`` as top-3 subqueries, one UNION ALL."""
    parts = [
        f"SELECT '{d} {n}' AS k, id, CAST({column} AS STRING) AS v "
        f"FROM (SELECT id, {column} FROM {table} ORDER BY {column} {d} {n}, id LIMIT 3)"
        for d, n in ORDERS
    ]
    return " UNION ALL ".join(parts)


#: (source, table, columns read through a cast, those whose top-N the source must apply): MySQL
#: BIT and YEAR and SQLite decimals (which may hold text) are ordered by Spark
CASES = [
    ("pg", "pg.sluice_topn.orders", ("amount", "wide"), ("amount", "wide")),
    ("my", "my.{db}.topn_orders", ("amount", "b", "y"), ("amount",)),
    ("duck", "duck.orders", ("amount", "u", "ub", "h"), ("amount", "u", "ub", "h")),
    ("lite", "lite.orders", ("amount",), ()),
]


@pytest.mark.parametrize(("source", "table", "columns", "pushed"), CASES, ids=[c[0] for c in CASES])
def test_top_n_over_cast_columns_is_sparks(
    topn, source: str, table: str, columns: tuple[str, ...], pushed: tuple[str, ...]
) -> None:
    federation, database = topn
    table = table.format(db=database)
    failures = []
    for column in columns:
        query = _query(table, column)
        got = Counter(map(tuple, federation.sql(query).collect()))
        want = Counter(map(tuple, federation.sql(query, pushdown=False).collect()))
        if got != want:
            failures.append(f"{column}: pushed {sorted(got - want)}, Spark {sorted(want - got)}")
        scans = federation.plan(query).scans
        assert len(scans) == len(ORDERS), [s.remote_query for s in scans]
        if column in pushed:  # else the test could pass without the source sorting anything
            assert all(s.spec.order for s in scans), [s.remote_query for s in scans]
    assert not failures, "\n".join(failures)


def test_postgres_remote_order_names_the_table_column(topn) -> None:
    federation, _ = topn
    query = "SELECT id, amount FROM pg.sluice_topn.orders ORDER BY amount DESC LIMIT 3"
    (scan,) = federation.plan(query).scans
    assert 'ORDER BY "orders"."amount" DESC NULLS LAST' in scan.remote_query, scan.remote_query
    assert [str(r.amount) for r in federation.sql(query).collect()] == ["1666.33", "999.67", "999.67"]
