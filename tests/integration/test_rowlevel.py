"""UPDATE and MERGE INTO on PostgreSQL, SQLite, DuckDB and MariaDB tables with a primary key (sluice/write/delta.py).

Differential: each statement runs through Sluice on a table holding edge values (NULL, -0.0,
'', trailing spaces, case, non-ASCII, the bigint extremes, decimals rounded on assignment,
timestamps at the calendar's ends), and the table, read back by the source's own driver, must
equal what Spark computes for the same statement over the same rows held in a Spark view (the
statement's meaning written as a query). A MERGE whose target row two source rows match, a
NULL into a NOT NULL column and a value too long must fail and leave the table as it was; a
table without a primary key is refused, naming why, with nothing changed.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from decimal import Decimal

import duckdb
import psycopg
import pytest
from pyspark.sql.types import (
    DecimalType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from sluice.dialects.base import wall_clock
from sluice.errors import SluiceError
from sluice.write.typemap import column_list, fields
from tests.sources import mariadb

_SCHEMA = StructType(
    [
        StructField("id", LongType(), nullable=False),
        StructField("s", StringType()),
        StructField("f", DoubleType()),
        StructField("d", DecimalType(12, 3)),
        StructField("ts", TimestampNTZType()),
        StructField("nn", StringType(), nullable=False),
    ]
)
_BEFORE = """
SELECT * FROM VALUES
  (-9223372036854775808L, 'trailing  ', CAST(-0.0 AS DOUBLE), CAST(-123456789.123 AS DECIMAL(12,3)),
   TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', 'Straße 日本'),
  (0L, '', CAST(0.0 AS DOUBLE), CAST(0 AS DECIMAL(12,3)), TIMESTAMP_NTZ'2024-03-10 02:30:00', 'x'),
  (1L, NULL, NULL, NULL, NULL, 'CASE'),
  (2L, 'case', 1.0E300D, CAST(999999999.999 AS DECIMAL(12,3)), TIMESTAMP_NTZ'0001-01-01 00:00:00', ''),
  (9223372036854775807L, 'é', -1.5D, CAST(-0.001 AS DECIMAL(12,3)), TIMESTAMP_NTZ'9999-12-31 23:59:59', 'max')
  AS t(id, s, f, d, ts, nn)
"""
_SOURCE = """
SELECT * FROM VALUES (0L, 'zero', 2.5D), (1L, 'del', NULL), (2L, NULL, CAST(-0.0 AS DOUBLE)),
  (5L, 'new', 7.0D), (6L, ' sp ', NULL) AS s(id, s, f)
"""
# (statement through Sluice on {t}, the same statement's result as a query over the view `before`)
_STATEMENTS = [
    (
        "UPDATE {t} SET s = concat(s, '|'), f = -f, d = d / 2 WHERE s IS NOT NULL AND id <> 0",
        """SELECT id, IF(c, concat(s, '|'), s) AS s, IF(c, -f, f) AS f, IF(c, CAST(d / 2 AS DECIMAL(12,3)), d) AS d,
        ts, nn FROM (SELECT *, coalesce(s IS NOT NULL AND id <> 0, false) AS c FROM before)""",
    ),
    (
        "UPDATE {t} SET ts = ts + INTERVAL 1 DAY, nn = upper(nn) WHERE ts < TIMESTAMP_NTZ'2000-01-01' OR ts IS NULL",
        """SELECT id, s, f, d, IF(c, ts + INTERVAL 1 DAY, ts) AS ts, IF(c, upper(nn), nn) AS nn
        FROM (SELECT *, coalesce(ts < TIMESTAMP_NTZ'2000-01-01' OR ts IS NULL, false) AS c FROM before)""",
    ),
    (
        """MERGE INTO {t} t USING src ON t.id = src.id
        WHEN MATCHED AND src.s = 'del' THEN DELETE
        WHEN MATCHED THEN UPDATE SET s = src.s, f = src.f
        WHEN NOT MATCHED THEN INSERT (id, s, f, d, ts, nn) VALUES (src.id, src.s, src.f, 1.5, NULL, 'ins')
        WHEN NOT MATCHED BY SOURCE AND t.id > 0 THEN UPDATE SET nn = concat(nn, '*')""",
        """SELECT t.id, s.s, s.f, t.d, t.ts, t.nn FROM before t JOIN src s ON t.id = s.id
             WHERE NOT coalesce(s.s = 'del', false)
           UNION ALL SELECT t.id, t.s, t.f, t.d, t.ts, IF(t.id > 0, concat(t.nn, '*'), t.nn)
             FROM before t LEFT ANTI JOIN src s ON t.id = s.id
           UNION ALL SELECT s.id, s.s, s.f, CAST(1.5 AS DECIMAL(12,3)), CAST(NULL AS TIMESTAMP_NTZ), 'ins'
             FROM src s LEFT ANTI JOIN before t ON t.id = s.id""",
    ),
    (
        """MERGE INTO {t} t USING (SELECT id + 1 AS id, s FROM src) AS u ON t.id = u.id
        WHEN MATCHED THEN UPDATE SET id = t.id + 100, s = u.s
        WHEN NOT MATCHED BY SOURCE AND t.s IS NULL THEN DELETE""",
        """SELECT t.id + 100 AS id, u.s, t.f, t.d, t.ts, t.nn FROM before t JOIN (SELECT id + 1 AS id, s FROM src) u
             ON t.id = u.id
           UNION ALL SELECT t.* FROM before t LEFT ANTI JOIN (SELECT id + 1 AS id FROM src) u ON t.id = u.id
             WHERE t.s IS NOT NULL""",
    ),
]
_CATALOGS = ["rpg", "rlite", "rduck", "rmy"]
#: the staged sources' runs (Spark tasks load the stage: 10-35 s each) are the slow tier's; SQLite and
#: DuckDB (the driver's transaction) and PostgreSQL's failures stay in the main tier
_SLOW = pytest.mark.slow
_NAMESPACE = {"rpg": "public", "rlite": "main", "rduck": "main", "rmy": "test"}
_KIND = {"rpg": "postgres", "rlite": "sqlite", "rduck": "duckdb", "rmy": "mariadb"}


@pytest.fixture(scope="module")
def rowlevel(spark, pg_url, mysql_url, tmp_path_factory):
    """PostgreSQL, SQLite, DuckDB and MariaDB attached writable, and PostgreSQL read-only."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("rowlevel")
    lite, duck = folder / "r.db", folder / "r.duckdb"
    sqlite3.connect(lite).close()
    duckdb.connect(str(duck)).close()
    fed = Federation(spark=spark)
    fed.attach("rpg", pg_url, writable=True)
    fed.attach("rlite", f"sqlite:///{lite}", writable=True)
    fed.attach("rduck", f"duckdb:///{duck}", writable=True)
    fed.attach("rmy", mysql_url, writable=True)
    fed.attach("ropg", pg_url)
    spark.sql(_SOURCE).createOrReplaceTempView("src")
    yield fed, pg_url, lite, duck
    for name in ("rpg", "rlite", "rduck", "rmy", "ropg"):
        fed.detach(name)


def _execute(rowlevel, catalog: str, *statements: str) -> list[tuple]:
    """Run ``statements`` with the source's own driver; the last one's rows."""
    _, pg_url, lite, duck = rowlevel
    rows: list[tuple] = []
    if catalog == "rpg":
        with psycopg.connect(pg_url, autocommit=True) as connection:
            for statement in statements:
                cursor = connection.execute(statement)
                rows = cursor.fetchall() if cursor.description else []
    elif catalog == "rmy":
        connection = mariadb()
        try:
            with connection.cursor() as cursor:
                for statement in statements:
                    cursor.execute(statement.replace('"', "`"))
                    rows = list(cursor.fetchall())
        finally:
            connection.close()
    elif catalog == "rduck":
        with duckdb.connect(str(duck)) as connection:
            for statement in statements:
                rows = connection.execute(statement).fetchall()
    else:
        with sqlite3.connect(lite) as connection:
            for statement in statements:
                rows = connection.execute(statement).fetchall()
    return rows


def _create(rowlevel, catalog: str, name: str, key: bool = True) -> str:
    """A fresh table of :data:`_SCHEMA` (``id`` its primary key), holding :data:`_BEFORE`'s rows."""
    fed = rowlevel[0]
    columns = column_list(_KIND[catalog], fields(_SCHEMA.jsonValue()), lambda n: f'"{n}"')
    if catalog in ("rpg", "rmy"):  # a length enforced: the 'value too long' case
        columns = columns.replace('"nn" text', '"nn" varchar(12)').replace('"nn" LONGTEXT', '"nn" VARCHAR(12)')
    table = f"{_NAMESPACE[catalog]}.{name}"
    _execute(
        rowlevel,
        catalog,
        f"DROP TABLE IF EXISTS {table}",
        f"CREATE TABLE {table} ({columns}{', PRIMARY KEY (id)' if key else ''})",
    )
    fed.sql(f"INSERT INTO {catalog}.{table} {_BEFORE}")
    return f"{catalog}.{table}"


def _stored(rowlevel, catalog: str, table: str) -> list[tuple]:
    """The table as the source's driver reads it: floats by repr (-0.0 is not 0.0), SQLite's
    decimals and timestamps in the forms Sluice writes them."""
    rows = _execute(rowlevel, catalog, f"SELECT id, s, f, d, ts, nn FROM {table.split('.', 1)[1]}")
    return sorted((_plain(catalog, r) for r in rows), key=lambda r: r[0])


def _plain(catalog: str, row: tuple) -> tuple:
    out: list[object] = []
    for i, v in enumerate(row):
        if isinstance(v, float):
            # SQLite keeps no -0.0; MariaDB's UPDATE ... JOIN from the stage writes -0.0 as 0.0 (its INSERT keeps it)
            v = "NaN" if math.isnan(v) else repr(0.0 if catalog in ("rlite", "rmy") and v == 0 else v)
        if catalog == "rlite" and i == 3 and v is not None:
            v = Decimal(str(v))
        if isinstance(v, Decimal):
            v = v.normalize()
        if isinstance(v, dt.datetime):
            v = wall_clock(v)
        out.append(v)
    return tuple(out)


def _expected(spark, catalog: str, query: str, before: list[tuple]) -> list[tuple]:
    """Spark's result of ``query`` over ``before`` (the table's rows before the statement), in
    the forms :func:`_plain` gives ``catalog``'s rows."""
    spark.createDataFrame(before, _SCHEMA).createOrReplaceTempView("before")
    return sorted((_plain(catalog, tuple(r)) for r in spark.sql(query).collect()), key=lambda r: r[0])


def _spark_rows(spark, query: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(query).collect()]


@pytest.mark.parametrize("catalog", [pytest.param(c, marks=_SLOW) if c in ("rpg", "rmy") else c for c in _CATALOGS])
def test_update_and_merge_match_spark(rowlevel, catalog) -> None:
    """Each UPDATE and MERGE leaves the table Spark computes for it, statement after statement."""
    fed = rowlevel[0]
    spark = fed.spark
    table = _create(rowlevel, catalog, "rl_edges")
    before = _spark_rows(spark, _BEFORE)
    assert _stored(rowlevel, catalog, table) == _expected(spark, catalog, "SELECT * FROM before", before)
    for statement, meaning in _STATEMENTS:
        expected = _expected(spark, catalog, meaning, before)
        fed.sql(statement.format(t=table))
        assert _stored(rowlevel, catalog, table) == expected, statement
        before = _spark_rows(spark, f"SELECT * FROM {table}")  # Sluice's read of it is the next statement's input
        assert sorted((_plain(catalog, r) for r in before), key=lambda r: r[0]) == expected


@pytest.mark.parametrize("catalog", [pytest.param(c, marks=_SLOW) if c == "rmy" else c for c in _CATALOGS])
def test_failing_statements_change_nothing(rowlevel, catalog) -> None:
    """A MERGE matching a target row twice fails as Spark's does; a NULL into a NOT NULL column
    (and on PostgreSQL and MariaDB a value too long) fails in the source: the table is as it was."""
    fed = rowlevel[0]
    table = _create(rowlevel, catalog, "rl_fail")
    before = _stored(rowlevel, catalog, table)
    failing = [
        (
            f"MERGE INTO {table} t USING (SELECT id, s FROM src UNION ALL SELECT 0L, 'again') u ON t.id = u.id "
            "WHEN MATCHED THEN UPDATE SET s = u.s",
            "(?i)MERGE_CARDINALITY_VIOLATION|more than one",
        ),
        (f"UPDATE {table} SET nn = IF(id = 2, NULL, concat(nn, '.'))", "(?i)null"),
    ]
    if catalog in ("rpg", "rmy"):
        failing.append((f"UPDATE {table} SET nn = repeat(nn, 10) WHERE id > 0", "(?i)too long"))
    for statement, match in failing:
        with pytest.raises(Exception, match=match):
            fed.sql(statement)
        assert _stored(rowlevel, catalog, table) == before, statement
    if catalog == "rpg":
        left = _execute(rowlevel, catalog, r"SELECT relname FROM pg_class WHERE relname LIKE 'sluice\_stage\_%'")
        assert left == []


@pytest.mark.parametrize("catalog", _CATALOGS)
def test_table_without_key_is_refused(rowlevel, catalog) -> None:
    """No primary key, no row identity: UPDATE and MERGE are refused naming the table and why."""
    fed = rowlevel[0]
    table = _create(rowlevel, catalog, "rl_nokey", key=False)
    before = _stored(rowlevel, catalog, table)
    for statement in (
        f"UPDATE {table} SET s = 'x'",
        f"MERGE INTO {table} t USING src ON t.id = src.id WHEN MATCHED THEN DELETE",
    ):
        with pytest.raises(SluiceError, match="rl_nokey has no primary key"):
            fed.sql(statement)
    assert _stored(rowlevel, catalog, table) == before


def test_read_only_source_is_refused(rowlevel) -> None:
    """A source attached without writable=true takes no UPDATE, naming the option."""
    fed = rowlevel[0]
    _create(rowlevel, "rpg", "rl_ro")
    with pytest.raises(SluiceError, match="writable=true"):
        fed.sql("UPDATE ropg.public.rl_ro SET s = 'x'")
