"""Writes to MariaDB (sluice/write/mysql.py): opt-in, atomic, faithful.

Rows are written by Sluice through Spark SQL (CTAS, INSERT, INSERT OVERWRITE) and
DataFrameWriterV2, then read back by PyMySQL and by Sluice, and compared with the values
Spark held (its Arrow form). A Spark ``timestamp`` (an instant) lands in DATETIME(6), which
Sluice reads as ``timestamp_ntz``: Spark casts it to the table's type in the session time
zone, so it is compared with Spark's own ``CAST(ts AS TIMESTAMP_NTZ)``. A failing statement (a duplicate key, a NULL in a NOT
NULL column, a value too long, NaN, a decimal that does not fit or would be rounded) among
many good rows must leave the table as it was and no staging table behind.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest

from sluice.errors import SluiceError
from tests.sources import MYSQL_SERVER, mariadb

_DATABASE = "sluice_writes"
_UTC = dt.timezone.utc

_EDGES = """
SELECT * FROM VALUES
  (1, true, CAST(-128 AS TINYINT), CAST(-32768 AS SMALLINT), 9223372036854775807,
   CAST('-1234567890123456789012345678.1234567891' AS DECIMAL(38,10)), CAST('-12345678901.2345' AS DECIMAL(15,4)),
   1.0E-300D, CAST(3.4028235E38 AS FLOAT), 'trailing  ', X'00FF22', DATE'0001-01-01',
   TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', TIMESTAMP'1900-01-01 00:00:00'),
  (2, false, CAST(127 AS TINYINT), CAST(32767 AS SMALLINT), CAST('-9223372036854775808' AS BIGINT),
   CAST('0.0000000001' AS DECIMAL(38,10)), CAST('0.0001' AS DECIMAL(15,4)),
   1.7976931348623157E308D, CAST(0.1 AS FLOAT), 'Straße 日本 é 😀', X'', DATE'1969-12-31',
   TIMESTAMP_NTZ'2024-03-10 02:30:00', TIMESTAMP'2024-03-10 03:30:00'),
  (3, NULL, NULL, NULL, NULL, CAST('9999999999999999999999999999.9999999999' AS DECIMAL(38,10)), NULL,
   CAST(-0.0 AS DOUBLE), CAST(1.5 AS FLOAT), 'a"b,\\nc\\\\ "', X'5C0A2C22', DATE'9999-12-31',
   TIMESTAMP_NTZ'0001-01-01 00:00:00', TIMESTAMP'2024-11-03 01:30:00'),
  (4, true, CAST(0 AS TINYINT), CAST(0 AS SMALLINT), 0, NULL, CAST('99999999999.9999' AS DECIMAL(15,4)), 0.1D, NULL, 'NULL', NULL, NULL,
   TIMESTAMP_NTZ'9999-12-31 23:59:59.999999', TIMESTAMP'1969-12-31 23:59:59.5'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '', NULL, NULL, NULL, NULL),
  (6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
  AS t(id, b, ti, si, i, dd, d, f, f2, s, bin, day, ntz, ts)
"""


@pytest.fixture(scope="module")
def writer(spark):
    """A Federation with a MariaDB database attached writable (``wmy``) and read-only (``romy``)."""
    from sluice import Federation

    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_DATABASE}")
        cursor.execute(f"CREATE DATABASE {_DATABASE}")
    fed = Federation(spark=spark)
    fed.attach("wmy", f"mysql://root@{MYSQL_SERVER}/{_DATABASE}", writable=True)
    fed.attach("romy", f"mysql://root@{MYSQL_SERVER}/{_DATABASE}")
    yield fed
    for name in ("wmy", "romy"):
        fed.detach(name)
    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_DATABASE}")


def _run(*statements: str) -> list[tuple]:
    """Run statements on the test database with PyMySQL; the last one's rows."""
    with mariadb(_DATABASE) as connection, connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
        return list(cursor.fetchall())


def _plain(value: object) -> object:
    """A value as compared: NaN as a string, an instant as its UTC wall clock."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(_UTC).replace(tzinfo=None)
    return value


def _rows(arrow) -> list[tuple]:
    columns = [arrow.column(i).to_pylist() for i in range(arrow.num_columns)]
    return sorted((tuple(_plain(v) for v in row) for row in zip(*columns)), key=lambda row: row[0])


def _staging_left() -> list[str]:
    rows = _run(
        "SELECT TABLE_NAME FROM information_schema.TABLES "
        f"WHERE TABLE_SCHEMA = '{_DATABASE}' AND TABLE_NAME LIKE 'sluice!_stage!_%' ESCAPE '!'"
    )
    return [r[0] for r in rows]


def test_ctas_round_trip_of_edge_values(writer) -> None:
    """CTAS of edge values: PyMySQL and Sluice read back exactly what Spark held (an instant as
    Spark's cast to timestamp_ntz, in DATETIME(6)); the columns have the documented types."""
    as_table = f"SELECT * EXCEPT (ts), CAST(ts AS TIMESTAMP_NTZ) AS ts FROM ({_EDGES})"
    expected = _rows(writer.spark.sql(as_table).toArrow())
    writer.sql(f"CREATE TABLE wmy.{_DATABASE}.w_types AS {_EDGES}")
    try:
        assert _rows(writer.sql(f"SELECT * FROM wmy.{_DATABASE}.w_types").toArrow()) == expected
        # FLOAT through PyMySQL's text protocol is rounded to 6 digits: read as its exact double
        stored = _run(
            "SELECT id, b, ti, si, i, dd, d, f, CAST(f2 AS DOUBLE), s, bin, day, ntz, ts FROM w_types ORDER BY id"
        )
        assert [tuple(bool(v) if i == 1 and v is not None else v for i, v in enumerate(r)) for r in stored] == expected
        types = _run(
            "SELECT COLUMN_NAME, COLUMN_TYPE, COLLATION_NAME FROM information_schema.COLUMNS "
            f"WHERE TABLE_SCHEMA = '{_DATABASE}' AND TABLE_NAME = 'w_types' ORDER BY ORDINAL_POSITION"
        )
        assert [t[1] for t in types] == [
            "int(11)", "tinyint(1)", "tinyint(4)", "smallint(6)", "bigint(20)", "decimal(38,10)", "decimal(15,4)",
            "double", "float", "longtext", "longblob", "date", "datetime(6)", "datetime(6)",
        ]  # fmt: skip
        assert types[9][2] == "utf8mb4_nopad_bin"
    finally:
        writer.sql(f"DROP TABLE wmy.{_DATABASE}.w_types")
    assert _staging_left() == []


def test_a_timestamp_column_takes_the_instant_across_dst(writer) -> None:
    """An existing TIMESTAMP column (read as Spark's timestamp) gets Spark's instants as they
    are, whatever the session time zone (New York here, across the spring DST gap)."""
    _run("DROP TABLE IF EXISTS w_instants", "CREATE TABLE w_instants (id INT, at TIMESTAMP(6) NULL)")
    instants = "VALUES (1, TIMESTAMP'2024-03-10 01:59:59.999999'), (2, TIMESTAMP'2024-03-10 03:00:00'), (3, NULL)"
    writer.sql(f"INSERT INTO wmy.{_DATABASE}.w_instants {instants}")
    expected = _rows(writer.spark.sql(f"SELECT * FROM {instants}").toArrow())
    assert _rows(writer.sql(f"SELECT * FROM wmy.{_DATABASE}.w_instants").toArrow()) == expected
    assert _run("SET time_zone = '+00:00'", "SELECT * FROM w_instants ORDER BY id") == [
        (1, dt.datetime(2024, 3, 10, 6, 59, 59, 999999)),
        (2, dt.datetime(2024, 3, 10, 7, 0)),
        (3, None),
    ]
    _run("DROP TABLE w_instants")


def test_insert_and_overwrite_are_all_or_nothing(writer) -> None:
    """INSERT appends; each bad statement among 2,000 good rows (duplicate key, NULL for NOT NULL,
    a string too long, NaN, ±Infinity, a decimal too large or with more digits than the column
    keeps) fails naming the cause and leaves the table as it was, with no staging table behind
    (a leftover of a killed statement is dropped too); INSERT OVERWRITE replaces every row."""
    table = f"wmy.{_DATABASE}.w_keys"
    _run(
        "DROP TABLE IF EXISTS w_keys",
        "CREATE TABLE w_keys (id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, score DOUBLE, big DECIMAL(50,2))",
        "CREATE TABLE IF NOT EXISTS sluice_stage_killed (x INT)",  # a leftover: nobody holds its lock
    )
    writer.sql(f"INSERT INTO {table} VALUES (1, 'one', 1.5, '12.50'), (2, 'two', NULL, NULL), (3, 'three', -0.5, '-1')")
    before = _run("SELECT * FROM w_keys ORDER BY id")
    assert before == [(1, "one", 1.5, Decimal("12.50")), (2, "two", None, None), (3, "three", -0.5, Decimal("-1.00"))]
    good = "SELECT CAST(id AS INT), 'x', CAST(id AS DOUBLE), CAST(id AS STRING) FROM range(1000, 3000)"
    for bad, match in (
        (f"{good} UNION ALL SELECT 1500, 'dup', 0, '0'", "Duplicate entry '1500'"),
        (f"{good} UNION ALL SELECT 5000, NULL, 0, '0'", "(?i)null"),  # Spark's own check, or MariaDB's
        (f"{good} UNION ALL SELECT 5000, 'toolong', 0, '0'", "Data too long for column 'name'"),
        (f"{good} UNION ALL SELECT 5000, 'x', CAST('NaN' AS DOUBLE), '0'", "column 'score' holds NaN"),
        (f"{good} UNION ALL SELECT 5000, 'x', CAST('-Infinity' AS DOUBLE), '0'", "column 'score' holds -Infinity"),
        (f"{good} UNION ALL SELECT 5000, 'x', 0, repeat('9', 60)", "Out of range value for column 'big'"),
        (f"{good} UNION ALL SELECT 5000, 'x', 0, '1.234'", "Data truncated for column 'big'"),
    ):
        for verb in ("INSERT INTO", "INSERT OVERWRITE"):
            with pytest.raises(SluiceError, match=match):
                writer.sql(f"{verb} {table} {bad}")
            assert _run("SELECT * FROM w_keys ORDER BY id") == before
            assert _staging_left() == []
    writer.sql(f"INSERT OVERWRITE {table} SELECT CAST(id AS INT), CAST(id AS STRING), NULL, NULL FROM range(10, 15)")
    expected = [(i, str(i), None, None) for i in range(10, 15)]
    assert _run("SELECT * FROM w_keys ORDER BY id") == expected
    assert _rows(writer.sql(f"SELECT * FROM {table}").toArrow()) == expected
    _run("DROP TABLE w_keys")


def test_dataframe_writer_v2_and_ddl(writer) -> None:
    """writeTo create/append/createOrReplace, CREATE TABLE's refusal of a type MariaDB cannot
    hold, DROP TABLE, and the refusal of a table without transactions (MyISAM)."""
    table = f"wmy.{_DATABASE}.w_v2"
    spark = writer.spark
    writer.activate()
    spark.range(3).selectExpr("id", "CAST(id * 1.5 AS DECIMAL(10,2)) AS price").writeTo(table).create()
    spark.range(3, 5).selectExpr("id", "CAST(id AS DECIMAL(10,2)) AS price").writeTo(table).append()
    assert [r.id for r in writer.sql(f"SELECT id FROM {table} ORDER BY id").collect()] == [0, 1, 2, 3, 4]
    spark.range(7, 8).selectExpr("id", "'seven' AS name").writeTo(table).createOrReplace()
    assert [tuple(r) for r in writer.sql(f"SELECT * FROM {table}").collect()] == [(7, "seven")]
    writer.sql(f"DROP TABLE {table}")
    assert _run("SHOW TABLES LIKE 'w_v2'") == []
    with pytest.raises(SluiceError, match="column 'x' of Spark type"):
        writer.sql(f"CREATE TABLE wmy.{_DATABASE}.w_ddl (x ARRAY<INT>)")
    assert _run("SHOW TABLES LIKE 'w_ddl'") == []
    _run(
        "DROP TABLE IF EXISTS w_myisam",
        "CREATE TABLE w_myisam (x INT) ENGINE=MyISAM",
        "INSERT INTO w_myisam VALUES (1)",
    )
    with pytest.raises(SluiceError, match="a table of engine MyISAM, without transactions"):
        writer.sql(f"INSERT INTO wmy.{_DATABASE}.w_myisam VALUES (2)")
    assert _run("SELECT x FROM w_myisam") == [(1,)]
    _run("DROP TABLE w_myisam")


def test_writes_are_refused_without_writable(writer) -> None:
    """A MariaDB source attached without writable=true refuses every write, naming the option,
    and the table keeps its rows."""
    _run("DROP TABLE IF EXISTS w_never", "CREATE TABLE w_never (x INT)", "INSERT INTO w_never VALUES (1)")
    for statement in (
        f"INSERT INTO romy.{_DATABASE}.w_never VALUES (2)",
        f"INSERT OVERWRITE romy.{_DATABASE}.w_never VALUES (2)",
        f"DROP TABLE romy.{_DATABASE}.w_never",
        f"CREATE TABLE romy.{_DATABASE}.w_other AS SELECT 1 AS x",
    ):
        with pytest.raises(SluiceError, match=r"read-only in Sluice: .*spark\.sql\.catalog\.romy\.writable"):
            writer.sql(statement)
    assert _run("SELECT x FROM w_never") == [(1,)]
    assert _run("SHOW TABLES LIKE 'w_other'") == []
    _run("DROP TABLE w_never")


def test_the_writing_session_is_strict_on_a_lax_server(writer) -> None:
    """The writing session keeps the server's sql_mode, as the reading session does (so a DELETE's
    condition means what a read's does), and adds strictness: on a server whose own mode is lax
    (PIPES_AS_CONCAT, no STRICT_*), a string longer than its VARCHAR(n) and a number beyond a
    MEDIUMINT (both fit Spark's types) fail the INSERT, INSERT OVERWRITE or UPDATE naming the table
    and the column, and the table keeps its rows."""
    from sluice.sources import open_source
    from sluice.write.mysql import MysqlTarget

    table = f"wmy.{_DATABASE}.w_strict"
    _run(
        "DROP TABLE IF EXISTS w_strict",
        "CREATE TABLE w_strict (id INT PRIMARY KEY, code VARCHAR(3), n MEDIUMINT) ENGINE=InnoDB",
        "INSERT INTO w_strict VALUES (1, 'abc', 1)",
    )
    before = [(1, "abc", 1)]
    with mariadb() as admin, admin.cursor() as cursor:
        cursor.execute("SELECT @@GLOBAL.sql_mode")
        saved = cursor.fetchone()[0]
        cursor.execute("SET GLOBAL sql_mode = 'PIPES_AS_CONCAT'")
        try:
            source = open_source("strict", f"mysql://root@{MYSQL_SERVER}/{_DATABASE}")
            connection = MysqlTarget(source)._connect()
            try:
                with connection.cursor() as session:
                    session.execute("SELECT @@SESSION.sql_mode")
                    modes = set(session.fetchone()[0].split(","))
            finally:
                connection.close()
            assert {"PIPES_AS_CONCAT", "NO_BACKSLASH_ESCAPES", "STRICT_ALL_TABLES", "STRICT_TRANS_TABLES"} <= modes
            for statement, column in (
                (f"INSERT INTO {table} VALUES (2, 'abcd', 1)", "code"),
                (f"INSERT OVERWRITE {table} VALUES (2, 'ab', 10000000)", "n"),
                (f"UPDATE {table} SET code = 'abcdef' WHERE id = 1", "code"),
                (f"UPDATE {table} SET n = -10000000 WHERE id = 1", "n"),
            ):
                with pytest.raises(SluiceError, match=rf"{_DATABASE}\.w_strict.*column '{column}'"):
                    writer.sql(statement)
                assert _run("SELECT * FROM w_strict") == before, statement
        finally:
            cursor.execute("SET GLOBAL sql_mode = %s", (saved,))
    _run("DROP TABLE w_strict")
