"""MariaDB specifics on the real server: partitions, strict booleans, read-only sessions, errors."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from sluice import Federation, SourceError
from sluice.sources.base import ReadTask
from tests.plans import stated
from tests.sources import MYSQL_SERVER, mariadb_execute

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def my_tables(edge_tables, mysql_url):
    mariadb_execute(
        "CREATE DATABASE IF NOT EXISTS sluice_test",
        "DROP TABLE IF EXISTS sluice_test.numbers, sluice_test.flags",
        "CREATE TABLE sluice_test.numbers (n INT PRIMARY KEY, word VARCHAR(10))",
        "INSERT INTO sluice_test.numbers WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) "
        "SELECT n, IF(n % 2 = 0, 'Even', 'odd') FROM s",
        "CREATE TABLE sluice_test.flags (id INT PRIMARY KEY, flag BOOLEAN)",
        "INSERT INTO sluice_test.flags VALUES (1, 1), (2, 0), (3, 2)",
    )
    return mysql_url


def test_primary_key_ranges_cover_every_row_once(spark, my_tables: str) -> None:
    split = Federation(spark=spark)
    split.attach("my", my_tables, partitions=4)
    query = "SELECT n FROM my.sluice_test.numbers WHERE word = 'even'"
    scan = split.plan(query).scans[0]
    assert len(split._sources["my"].tasks(scan.spec)) == 4
    assert split.sql(query).count() == 0  # 'even' = 'Even' under utf8mb4_general_ci, not in Spark
    rows = [r.n for r in split.sql("SELECT n FROM my.sluice_test.numbers WHERE word = 'Even'").collect()]
    assert sorted(rows) == list(range(2, 1001, 2))


def test_a_tinyint_1_holding_2_is_an_error_not_a_guess(spark, my_tables: str) -> None:
    """Pushdown on or off: a pushed filter (``id < 3``) must not skip the row holding 2 where
    the reference read, which reads it, fails (issue 15, item 12)."""
    federation = Federation(spark=spark)
    federation.attach("my", my_tables)
    for query in (
        "SELECT * FROM my.sluice_test.flags",
        "SELECT id FROM my.sluice_test.flags WHERE id < 3 AND flag",
        "SELECT id, flag FROM my.sluice_test.flags WHERE id < 3",
        "SELECT id FROM my.sluice_test.flags WHERE NOT flag",
    ):
        for pushdown in (True, False):
            with pytest.raises(Exception, match="flag.*sluice_test.flags is TINYINT.1. but holds 2"):
                federation.sql(query, pushdown=pushdown).collect()
    levels = [
        v.level.value
        for v in stated(federation.plan("SELECT id FROM my.sluice_test.flags WHERE flag").scans[0].verdicts)
    ]
    assert levels == ["INEXACT"]  # returns the rows holding 2 too, for the reader to refuse
    # a query that does not read the column is not stopped by it (the reference reads every column)
    assert sorted(r.id for r in federation.sql("SELECT id FROM my.sluice_test.flags WHERE id < 3").collect()) == [1, 2]


def test_reads_are_read_only(fed) -> None:
    source = fed._sources["my"]
    with pytest.raises(SourceError, match="READ ONLY"):
        list(source.read(ReadTask("DELETE FROM sluice_test.edge", None)))
    assert fed.sql("SELECT count(*) AS n FROM my.sluice_test.edge").collect()[0].n == 80


def test_unreachable_server_and_wrong_password_name_the_problem_not_the_secret(spark) -> None:
    federation = Federation(spark=spark)
    with pytest.raises(SourceError) as unreachable:
        federation.attach("down", "mysql://root:hunter2secret@127.0.0.1:1/test")
    assert "cannot connect" in str(unreachable.value) and "hunter2secret" not in str(unreachable.value)
    with pytest.raises(SourceError) as denied:
        federation.attach("bad", f"mysql://root@{MYSQL_SERVER}/test", password="topsecret42")
    assert "Access denied" in str(denied.value) and "topsecret42" not in str(denied.value)


def test_unknown_database_table_and_column(fed) -> None:
    with pytest.raises(Exception, match="no table sluice_test.missing"):
        fed.sql("SELECT * FROM my.sluice_test.missing")
    with pytest.raises(Exception, match="`nope` cannot be resolved"):
        fed.sql("SELECT nope FROM my.sluice_test.edge")


def test_a_login_reuses_the_processes_tls_context(fed, monkeypatch) -> None:
    """PyMySQL 1.2 builds a TLS context for its PREFERRED mode at every login, loading the CA
    store (~20 ms): Sluice makes it once per process, and only for a server that offers TLS
    (every planned scan and every read logs in)."""
    import ssl

    made = []
    real = ssl.create_default_context

    def counted(*a, **k):
        made.append(1)
        return real(*a, **k)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    source = fed._sources["my"]
    for _ in range(3):
        source._catalog().close()
    assert len(made) <= 1
    table = source.describe("sluice_test", "edge")
    list(
        source.read(ReadTask("SELECT id FROM sluice_test.edge WHERE id < 3", pa.schema([("id", pa.int64())]), 0, table))
    )
    assert len(made) <= 1


def test_a_failure_mid_read_shows_no_rust_panic_report(fed, capfd) -> None:
    """connectorx reports a server error mid-stream (ERROR 1690, a BIGINT overflow in a pushed
    predicate) and a value it cannot convert (a zero DATE, which MariaDB's default sql_mode
    stores) as Rust panics, whose reports (with a backtrace under RUST_BACKTRACE) Rust
    writes to stderr before the clean error: stderr must hold nothing of them (issue 23),
    and other output written while a read runs must still get through."""
    source = fed._sources["my"]
    database = source.database
    mariadb_execute(
        "SET SESSION sql_mode = ''",
        f"DROP TABLE IF EXISTS {database}.panics",
        f"CREATE TABLE {database}.panics (id INT PRIMARY KEY, b BIGINT, d DATE)",
        f"INSERT INTO {database}.panics VALUES (1, 1, '2024-01-01'), (2, 9223372036854775807, '0000-00-00')",
    )
    table = source.describe(database, "panics")
    capfd.readouterr()
    rows = source.read(ReadTask(f"SELECT id FROM {database}.panics", pa.schema([("id", pa.int64())]), 0, table))
    next(rows)  # a reader is running
    os.write(2, b"other output\n")
    assert list(rows) == []
    failing = {
        f"SELECT b FROM {database}.panics WHERE b + 1 > 0": (pa.int64(), "BIGINT value is out of range"),
        f"SELECT d FROM {database}.panics": (pa.date32(), "0000-00-00"),
    }
    for query, (kind, message) in failing.items():
        with pytest.raises(SourceError, match=message):
            list(source.read(ReadTask(query, pa.schema([("x", kind)]), 0, table)))
    assert capfd.readouterr().err == "other output\n"
