"""AVG pushed as the SUM and COUNT Spark makes of it answers what Spark's own AVG answers (issue 23).

Declined, Spark rewrites ``avg(x)`` into ``sum(x) / count(x)`` and offers the scan a plain SUM.
Spark's own AVG of integers adds doubles: ``9007199254740993`` becomes ``9007199254740992``, so
the average of it and ``-9007199254740992`` is 0.0, where an exact sum gives 0.5; and two
``bigint`` maxima average to 9.2e18 where a ``bigint`` SUM overflows. The groups below hold those
values, the 32- and 16-bit extremes and decimals at their limits, in each SQL source; every query
must give the same rows (or the same failure) with pushdown on and off, and the averages that are
exact in a double (``smallint``, decimals) must still be pushed.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlparse

import duckdb
import psycopg
import pytest

from sluice import Federation
from tests.integration.test_aggregates import query_outcome
from tests.sources import MYSQL_URL, PG_URL, mariadb

pytestmark = pytest.mark.integration

_BIG = 9223372036854775807
_HUGE = Decimal("999999999999999999999999999999999999.99")
#: (g, b bigint, i int, s smallint, d decimal(20,2), e decimal(38,2)): per group, an average whose
#: exact sum differs from Spark's double sum (g 1), whose bigint sum overflows (g 2), plain values
#: and a NULL (g 3), NULLs only (g 4); e's sum overflows decimal(38,2) in group 2
ROWS = [
    (1, 9007199254740993, 2147483647, 32767, Decimal("999999999999999999.99"), Decimal("1.25")),
    (1, -9007199254740992, 2147483646, 32766, Decimal("999999999999999999.98"), Decimal("-1.25")),
    (2, _BIG, -2147483648, -32768, Decimal("-999999999999999999.99"), _HUGE),
    (2, _BIG, -2147483647, -32767, Decimal("0.01"), _HUGE),
    (3, 1, 1, 1, Decimal("1.00"), Decimal("0.01")),
    (3, 2, 2, 2, Decimal("2.00"), Decimal("0.02")),
    (3, None, None, None, None, None),
    (4, None, None, None, None, None),
]
#: each source's column types; SQLite (a STRICT table, which it aggregates) has only INTEGER and REAL
DECLARED = {
    "pg": ("integer", "bigint", "integer", "smallint", "numeric(20,2)", "numeric(38,2)"),
    "my": ("INT", "BIGINT", "INT", "SMALLINT", "DECIMAL(20,2)", "DECIMAL(38,2)"),
    "duck": ("INTEGER", "BIGINT", "INTEGER", "SMALLINT", "DECIMAL(20,2)", "DECIMAL(38,2)"),
    "lite": ("INTEGER", "INTEGER", "INTEGER", "INTEGER", "REAL", "REAL"),
}
_NAMES = ("g", "b", "i", "s", "d", "e")
QUERIES = [
    "SELECT avg(b) FROM {t}",
    "SELECT g, avg(b) FROM {t} GROUP BY g",
    "SELECT avg(DISTINCT b) FROM {t}",
    "SELECT g, avg(DISTINCT b), count(*) FROM {t} GROUP BY g",
    "SELECT g, avg(b + 0) FROM {t} GROUP BY g",
    "SELECT g FROM {t} GROUP BY g HAVING avg(b) > 0",
    "SELECT g, avg(b) AS a FROM {t} GROUP BY g ORDER BY a DESC NULLS LAST LIMIT 2",
    "SELECT g, avg(i), min(i) FROM {t} GROUP BY g",
    "SELECT avg(i + 1), sum(s) FROM {t}",
    "SELECT g, avg(s), avg(DISTINCT s) FROM {t} GROUP BY g",
    "SELECT g, avg(d), avg(DISTINCT d), sum(d) FROM {t} GROUP BY g",
    "SELECT g, avg(e) FROM {t} WHERE g <> 2 GROUP BY g",
    "SELECT avg(e) FROM {t}",
]
#: averages Spark adds exactly in a double: still pushed where the source has the type
EXACT_AVERAGES = {
    "SELECT g, avg(s), avg(DISTINCT s) FROM {t} GROUP BY g": ("pg", "my", "duck"),
    "SELECT g, avg(d), avg(DISTINCT d), sum(d) FROM {t} GROUP BY g": ("pg", "my", "duck"),
    "SELECT g, avg(e) FROM {t} WHERE g <> 2 GROUP BY g": ("pg", "my", "duck"),
}
#: averages of int and bigint: Spark averages them itself, and EXPLAIN says why
DOUBLE_AVERAGES = ("SELECT avg(b) FROM {t}", "SELECT g, avg(i), min(i) FROM {t} GROUP BY g")


def _create(columns: tuple[str, ...]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in zip(_NAMES, columns, strict=True))


def _load_pg() -> str:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_avg CASCADE")
        connection.execute("CREATE SCHEMA sluice_avg")
        connection.execute(f"CREATE TABLE sluice_avg.t ({_create(DECLARED['pg'])})")
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO sluice_avg.t VALUES (%s, %s, %s, %s, %s, %s)", ROWS)
    return PG_URL


def _load_my() -> str:
    database = urlparse(MYSQL_URL).path.lstrip("/")
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            cursor.execute(f"DROP TABLE IF EXISTS `{database}`.avg_t")
            cursor.execute(f"CREATE TABLE `{database}`.avg_t ({_create(DECLARED['my'])})")
            cursor.executemany(f"INSERT INTO `{database}`.avg_t VALUES (%s, %s, %s, %s, %s, %s)", ROWS)
    finally:
        connection.close()
    return MYSQL_URL


def _load_lite(folder: Path) -> str:
    path = folder / "avg.db"
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE t ({_create(DECLARED['lite'])}) STRICT")
        connection.executemany(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
            [tuple(float(v) if isinstance(v, Decimal) else v for v in row) for row in ROWS],
        )
    connection.close()
    return f"sqlite:///{path}"


def _load_duck(folder: Path) -> str:
    path = folder / "avg.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE TABLE t ({_create(DECLARED['duck'])})")
        connection.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", ROWS)
    return f"duckdb:///{path}"


TABLES = {
    "pg": "src.sluice_avg.t",
    "my": f"src.{urlparse(MYSQL_URL).path.lstrip('/')}.avg_t",
    "lite": "src.t",
    "duck": "src.t",
}


@pytest.fixture(scope="module")
def averaged(spark, tmp_path_factory):
    """Each source's table attached as ``src`` in a Federation of its own."""
    folder = tmp_path_factory.mktemp("avg")
    urls = {"pg": _load_pg(), "my": _load_my(), "lite": _load_lite(folder), "duck": _load_duck(folder)}
    federations = {}
    for name, url in urls.items():
        federations[name] = Federation(spark=spark)
        federations[name].attach("src", url)
    yield federations
    for federation in federations.values():
        federation.detach("src")


@pytest.mark.parametrize("source", sorted(DECLARED))
def test_pushed_averages_equal_sparks_own(averaged, source: str) -> None:
    fed = averaged[source]
    fed.activate()
    failures, pushed = [], []
    for template in QUERIES:
        query = template.format(t=TABLES[source])
        expected, actual = query_outcome(fed, query, False), query_outcome(fed, query, True)
        [scan] = fed.plan(query).scans
        if scan.spec.aggregate is not None:
            pushed.append(template)
        if expected != actual:
            failures.append(f"{query}\n  Spark: {expected}\n  pushed: {actual}\n  {scan.remote_query}")
    assert not failures, f"{len(failures)} averages differ on {source}:\n" + "\n".join(failures)
    assert {t for t, sources in EXACT_AVERAGES.items() if source in sources} <= set(pushed), pushed


@pytest.mark.parametrize("source", sorted(DECLARED))
def test_int_and_bigint_averages_stay_with_spark_and_say_why(averaged, source: str) -> None:
    fed = averaged[source]
    fed.activate()
    for template in DOUBLE_AVERAGES:
        query = template.format(t=TABLES[source])
        [scan] = fed.plan(query).scans
        assert scan.spec.aggregate is None, scan.remote_query
        assert "Spark's AVG adds the values as doubles" in fed.explain(query)
