"""Read-only by construction, on the real servers and files.

(a) The very sessions Sluice's readers and catalogs open refuse writes (the server says
no, not Sluice). (b) Hostile literals, LIKE patterns, aliases and table names run through
``fed.sql`` leave every source byte-for-byte unchanged, and each remote query parses back
as one SELECT. (c) A slow statement stops at ``statement_timeout_s`` with an error that
names the timeout. (d) No session outlives its read: not after success, an error, an
abandoned stream, nor a cancelled Spark job.

Each source gets its own objects (PostgreSQL schema and MariaDB database ``sluice_ro``,
files in a temporary folder), so nothing here depends on other tests' tables.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, cast

import duckdb
import psycopg
import pyarrow as pa
import pymysql
import pytest
import sqlglot
from psycopg import sql

from sluice import Federation, SourceError
from sluice.sources import open_source
from sluice.sources.base import ReadTask
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.mysql import MysqlSource
from sluice.sources.postgres import PostgresSource
from sluice.sources.sqlite import SqliteSource
from tests.sources import MYSQL_SERVER, PG_URL, mariadb

pytestmark = pytest.mark.integration

MY_URL = f"mysql://root@{MYSQL_SERVER}/sluice_ro"
ONE_INT = pa.schema([("x", pa.int64())])
#: a table and a column whose names would end the statement if spliced unquoted
ODD_TABLE = "odd'\"`; DROP TABLE victim; --"
ODD_COLUMN = "c'\"`; DELETE FROM victim; --"
WRITES = (
    "CREATE TABLE intruder (x int)",
    "INSERT INTO victim (id, t) VALUES (99, 'x')",
    "DELETE FROM victim",
    "DROP TABLE victim",
)


def payloads(victim: str) -> list[str]:
    """Texts that are a write on ``victim`` if spliced into SQL of any of the four dialects."""
    return [
        f"x'; DROP TABLE {victim}; --",
        f"x\\'; DELETE FROM {victim}; -- ",
        f'x"; DROP TABLE {victim}; --',
        f"x`; DROP TABLE {victim}; #",
        f"*/; DROP TABLE {victim}; /*",
        f"$$; DROP TABLE {victim}; $$",
        "x' OR '1'='1",
        f"%'; DELETE FROM {victim}; --%",
        "plain",
    ]


def spark_string(text: str) -> str:
    """A Spark SQL string literal (backslash escapes) holding exactly ``text``."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def spark_name(name: str) -> str:
    return quoted(name, "`")


# ---------------------------------------------------------------- the four sources
def _pg(*statements: str | sql.SQL | sql.Composed, fetch: bool = False) -> list[tuple]:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        rows: list[tuple] = []
        for statement in statements:
            cursor = connection.execute(statement)
            if fetch:
                rows += cursor.fetchall()
        return rows


def _my(*statements: str, args: tuple | None = None) -> list[tuple]:
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            rows: list[tuple] = []
            for statement in statements:
                cursor.execute(statement, args)
                rows += list(cursor.fetchall())
            return rows
    finally:
        connection.close()


def quoted(name: str, mark: str = '"') -> str:
    """``name`` as an SQL identifier quoted with ``mark`` (which is doubled inside)."""
    return mark + name.replace(mark, mark * 2) + mark


def _create_servers() -> None:
    """PostgreSQL schema and MariaDB database ``sluice_ro``: victim, hostile-named table, slow view."""
    rows = list(enumerate(payloads("sluice_ro.victim")))
    _pg(
        "DROP SCHEMA IF EXISTS sluice_ro CASCADE",
        "CREATE SCHEMA sluice_ro",
        'CREATE TABLE sluice_ro.victim (id bigint PRIMARY KEY, t text COLLATE "C")',
        f'CREATE TABLE sluice_ro.{quoted(ODD_TABLE)} (id bigint, {quoted(ODD_COLUMN)} text COLLATE "C")',
        "CREATE VIEW sluice_ro.slow AS SELECT 1::bigint AS x FROM pg_sleep(30)",
    )
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        for table in ("victim", quoted(ODD_TABLE)):
            connection.cursor().executemany(f"INSERT INTO sluice_ro.{table} VALUES (%s, %s)", rows)
    _my(
        "DROP DATABASE IF EXISTS sluice_ro",
        "CREATE DATABASE sluice_ro CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        "CREATE TABLE sluice_ro.victim (id BIGINT PRIMARY KEY, t VARCHAR(100))",
        f"CREATE TABLE sluice_ro.{quoted(ODD_TABLE, '`')} (id BIGINT PRIMARY KEY, {quoted(ODD_COLUMN, '`')} VARCHAR(100))",
        "CREATE VIEW sluice_ro.slow AS SELECT 1 AS x FROM (SELECT SLEEP(30)) s",
    )
    connection = mariadb("sluice_ro")
    with connection.cursor() as cursor:
        for table in ("victim", quoted(ODD_TABLE, "`")):
            cursor.executemany(f"INSERT INTO {table} VALUES (%s, %s)", rows)
    connection.close()


def _create_files(lite: Path, duck: Path) -> None:
    """The same tables in a SQLite and a DuckDB file, with a view that runs for minutes."""
    rows = list(enumerate(payloads("victim")))
    tables = (
        "CREATE TABLE victim (id BIGINT PRIMARY KEY, t TEXT)",
        f"CREATE TABLE {quoted(ODD_TABLE)} (id BIGINT, {quoted(ODD_COLUMN)} TEXT)",
    )
    connection = sqlite3.connect(lite)
    for statement in tables:
        connection.execute(statement.replace("BIGINT PRIMARY KEY", "INTEGER PRIMARY KEY"))  # the rowid alias
    connection.execute(
        "CREATE VIEW slow AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000000) "
        "SELECT count(*) AS x FROM n"
    )
    for table in ("victim", quoted(ODD_TABLE)):
        connection.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
    connection.commit()
    connection.close()
    writer = duckdb.connect(str(duck))
    for statement in tables:
        writer.execute(statement)
    writer.execute(
        "CREATE VIEW slow AS SELECT count(*)::BIGINT AS x FROM range(1000000) a, range(1000000) b WHERE (a.range * b.range) % 7 = 3"
    )
    for table in ("victim", quoted(ODD_TABLE)):
        writer.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
    writer.close()


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, str]:
    """Victim tables, a hostile-named table and slow views in every source; name -> URL."""
    folder = tmp_path_factory.mktemp("read_only")
    _create_servers()
    _create_files(folder / "ro.db", folder / "ro.duckdb")
    return {
        "pg": PG_URL,
        "my": MY_URL,
        "lite": f"sqlite:///{folder / 'ro.db'}",
        "duck": f"duckdb:///{folder / 'ro.duckdb'}",
    }


#: source name -> how Sluice SQL names its schema ("" for file sources)
SCHEMA = {"pg": "sluice_ro.", "my": "sluice_ro.", "lite": "", "duck": ""}


def fingerprint(name: str, url: str) -> object:
    """Everything a write could change: every table's rows (servers) or every byte (files)."""
    if name == "pg":
        tables = [
            r[0] for r in _pg("SELECT tablename FROM pg_tables WHERE schemaname = 'sluice_ro' ORDER BY 1", fetch=True)
        ]
        sums = [
            _pg(
                f"SELECT md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')), count(*) FROM sluice_ro.{quoted(table)} r",
                fetch=True,
            )[0]
            for table in tables
        ]
        return list(zip(tables, sums))
    if name == "my":
        tables = [
            r[0]
            for r in _my(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sluice_ro' "
                "AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1"
            )
        ]
        return [_my(f"CHECKSUM TABLE sluice_ro.{quoted(table, '`')} EXTENDED")[0] for table in tables]
    path = Path(url.split(":///", 1)[1])
    return sorted(p.name for p in path.parent.iterdir()), hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def ro_fed(spark, sources):
    federation = Federation(spark=spark)
    for name, url in sources.items():
        federation.attach(name, url)
    return federation


# ---------------------------------------------------------------- (a) the sessions refuse writes
def _refused_by_reader(source_name: str, url: str) -> list[str]:
    """Each write, sent through the source's own reader session: the error texts."""
    source = open_source(source_name, url)
    source.check()
    messages = []
    for statement in WRITES:
        with pytest.raises(SourceError) as refused:
            list(source.read(ReadTask(statement.replace("victim", f"{SCHEMA[source_name]}victim"), ONE_INT)))
        messages.append(str(refused.value))
    return messages


def _refused_by_catalog(connect: Callable[[], Any], error: type[Exception], prefix: str) -> list[str]:
    """Each write on the source's own catalog connection: the error texts."""
    messages = []
    for statement in WRITES:
        connection = connect()
        try:
            with pytest.raises(error) as refused:
                connection.cursor().execute(statement.replace("victim", f"{prefix}victim"))
            messages.append(str(refused.value))
        finally:
            connection.close()
    return messages


def test_postgres_reader_and_catalog_sessions_refuse_writes(sources) -> None:
    before = fingerprint("pg", sources["pg"])
    assert all("in a read-only transaction" in m for m in _refused_by_reader("pg", sources["pg"]))
    source = open_source("pg", sources["pg"])
    assert all(
        "in a read-only transaction" in m
        for m in _refused_by_catalog(
            cast(PostgresSource, source)._catalog, psycopg.errors.ReadOnlySqlTransaction, "sluice_ro."
        )
    )
    settings = ReadTask(
        "SELECT current_setting('default_transaction_read_only') || ' ' || current_setting('statement_timeout') "
        "|| ' ' || current_setting('application_name') || ' ' || current_setting('client_connection_check_interval') AS s",
        pa.schema([("s", pa.string())]),
    )
    assert [b.column(0)[0].as_py() for b in source.read(settings)] == ["on 10min sluice 1s"]
    assert fingerprint("pg", sources["pg"]) == before


def test_mariadb_reader_and_catalog_sessions_refuse_writes(sources) -> None:
    before = fingerprint("my", sources["my"])
    assert all("READ ONLY transaction" in m for m in _refused_by_reader("my", sources["my"]))
    source = open_source("my", sources["my"])
    assert all(
        "READ ONLY transaction" in m
        for m in _refused_by_catalog(cast(MysqlSource, source)._catalog, pymysql.err.MySQLError, "")
    )
    assert fingerprint("my", sources["my"]) == before


@pytest.mark.parametrize("name", ["lite", "duck"])
def test_file_sessions_refuse_writes_and_cannot_attach_another_file(sources, name: str, tmp_path: Path) -> None:
    before = fingerprint(name, sources[name])
    words = {"lite": "readonly database", "duck": "read-only mode"}[name]
    assert all(words in m for m in _refused_by_reader(name, sources[name]))
    source = cast(SqliteSource | DuckdbSource, open_source(name, sources[name]))
    error = sqlite3.Error if name == "lite" else duckdb.Error
    assert all(words in m for m in _refused_by_catalog(source._connect, error, ""))
    other = tmp_path / "other.db"
    connection = source._connect()
    try:
        with pytest.raises(
            error
        ):  # SQLite would create the file read-write; DuckDB refuses a new file in read-only mode
            connection.execute(f"ATTACH '{other}' AS other")
    finally:
        connection.close()
    assert not other.exists()
    assert fingerprint(name, sources[name]) == before


# ---------------------------------------------------------------- (b) hostile text through fed.sql
def like_matches(pattern: str, text: str) -> bool:
    """Spark's LIKE for patterns without ``_`` or escapes."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("%")), text, re.DOTALL) is not None


@pytest.mark.parametrize("name", ["pg", "my", "lite", "duck"])
def test_hostile_literals_patterns_aliases_and_names_change_nothing(ro_fed, sources, name: str) -> None:
    """Two scans push hostile text: ``IN``, ``LIKE`` and ``NOT =`` conjuncts, then a hostile table and column."""
    victim_name = "sluice_ro.victim" if name in ("pg", "my") else "victim"
    values = payloads(victim_name)
    victim, odd = f"{name}.{SCHEMA[name]}victim", f"{name}.{SCHEMA[name]}{spark_name(ODD_TABLE)}"
    patterns = ["x'%", f"%; DROP TABLE {victim_name}; %", "%'; DELETE%", "%$$%"]
    every = ", ".join(spark_string(value) for value in values)
    likes = " OR ".join(f"t LIKE {spark_string(p)}" for p in patterns)
    query = (
        f"SELECT 'victim' AS {spark_name(ODD_COLUMN)}, id FROM {victim} WHERE t IN ({every}) AND ({likes}) "
        f"AND NOT t = {spark_string(values[1])}\n"
        f"UNION ALL SELECT 'odd', id FROM {odd} WHERE {spark_name(ODD_COLUMN)} IN ({every})"
    )
    expected = [("victim", i) for i, v in enumerate(values) if i != 1 and any(like_matches(p, v) for p in patterns)]
    expected += [("odd", i) for i in range(len(values))]
    assert len(expected) > len(values) + 2  # the LIKE patterns match several payloads

    before = fingerprint(name, sources[name])
    plan = ro_fed.plan(query)
    dialect = ro_fed._sources[name].dialect.sqlglot
    for scan in plan.scans:
        assert scan.verdicts and all(v.level.pushed for v in scan.verdicts), (
            f"{scan.alias}: not every hostile conjunct reached the source: {[(v.sql, v.level.value) for v in scan.verdicts]}"
        )
        statements = sqlglot.parse(scan.remote_query, read=dialect)
        assert len(statements) == 1 and isinstance(statements[0], sqlglot.exp.Select), scan.remote_query
    frame = ro_fed.sql(query)
    assert frame.columns == [ODD_COLUMN, "id"]
    assert sorted((r[0], r[1]) for r in frame.collect()) == sorted(expected)
    with pytest.raises(Exception, match="no table"):
        ro_fed.sql(f"SELECT * FROM {name}.{SCHEMA[name]}{spark_name('victim; DROP TABLE victim; --')}")
    assert fingerprint(name, sources[name]) == before


# ---------------------------------------------------------------- (c) statement timeouts
@pytest.mark.parametrize(
    "name,says", [("pg", "canceling statement due to statement timeout"), ("my", "(max_statement_time exceeded)")]
)
def test_a_slow_remote_statement_stops_at_the_timeout(spark, sources, name: str, says: str) -> None:
    federation = Federation(spark=spark)
    federation.attach(name, sources[name], statement_timeout_s=1)
    assert federation.sql(f"SELECT count(*) AS n FROM {name}.sluice_ro.victim").collect()[0].n == len(
        payloads("")
    )  # warm workers
    started = time.monotonic()
    with pytest.raises(Exception) as failed:
        federation.sql(f"SELECT x FROM {name}.sluice_ro.slow").collect()
    elapsed = time.monotonic() - started
    assert elapsed < 6, f"the 1 s timeout took {elapsed:.1f} s"
    message = f"{type(failed.value).__name__}: {failed.value}"
    assert f"SourceError: source '{name}'" in message and says in message and "statement_timeout_s=1" in message, (
        message[:3000]
    )


@pytest.mark.parametrize("name", ["lite", "duck"])
def test_a_slow_file_query_stops_at_the_timeout(sources, name: str) -> None:
    """SQLite and DuckDB have no server timeout: the reader interrupts its own connection."""
    source = open_source(name, sources[name], statement_timeout_s=1)
    started = time.monotonic()
    with pytest.raises(SourceError, match=f"^source '{name}': .*query interrupted after statement_timeout_s=1$"):
        list(source.read(ReadTask("SELECT x FROM slow", ONE_INT)))
    assert time.monotonic() - started < 3


# ---------------------------------------------------------------- (d) no session outlives its read
def _pg_sessions(application: str) -> list[tuple]:
    return _pg(
        sql.SQL("SELECT pid, state FROM pg_stat_activity WHERE application_name = {}").format(sql.Literal(application)),
        fetch=True,
    )


def _my_sessions(marker: str) -> set[int]:
    """MariaDB sessions running a statement that mentions ``marker`` (its processlist has no
    application name): their connection ids."""
    return {
        r[0]
        for r in _my(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE %s AND ID <> CONNECTION_ID()",
            args=(f"%{marker}%",),
        )
    }


def _my_alive(ids: set[int]) -> set[int]:
    return {r[0] for r in _my("SELECT ID FROM information_schema.PROCESSLIST")} & ids


def _until(check: Callable[[], bool], seconds: float, what: str) -> float:
    """Poll ``check`` until true; the seconds it took, or fail after ``seconds``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"{what}: still not true after {seconds} s")
        time.sleep(0.1)
    return time.monotonic() - started


def _reads(source_name: str, url: str, big: str, table: str) -> Iterator[str]:
    """Read to the end, fail, and abandon a stream after one batch; yield after each."""
    source = open_source(source_name, url)
    source.check()
    assert sum(batch.num_rows for batch in source.read(ReadTask(big, ONE_INT))) == 1_000_000
    yield "end of stream"
    with pytest.raises(SourceError):
        list(source.read(ReadTask(f"SELECT x FROM {table}_missing", ONE_INT)))
    yield "error"
    stream = cast(Generator[Any, None, None], source.read(ReadTask(big, ONE_INT)))  # read() is a generator
    next(stream)
    stream.close()
    yield "abandoned stream"


def test_postgres_sessions_end_with_every_read(sources) -> None:
    application = f"sluice_ro_{uuid.uuid4().hex[:8]}"
    url = f"{sources['pg']}?application_name={application}"
    for path in _reads("pg", url, "SELECT g::bigint AS x FROM generate_series(1, 1000000) g", "sluice_ro.victim"):
        _until(lambda: not _pg_sessions(application), 10, f"PostgreSQL session closed after {path}")


def test_mariadb_sessions_end_with_every_read(sources) -> None:
    marker = f"m{uuid.uuid4().hex[:8]}"
    big = f"SELECT a.seq * 1000 + b.seq AS x FROM seq_0_to_999 a, seq_0_to_999 b WHERE '{marker}' <> ''"
    source = open_source("my", sources["my"])
    source.check()
    stream = cast(Generator[Any, None, None], source.read(ReadTask(big, ONE_INT)))  # read() is a generator
    next(stream)
    ids = _my_sessions(marker)
    assert ids, "the reader's session is not in the processlist"
    stream.close()
    _until(lambda: not _my_alive(ids), 10, "MariaDB session closed after an abandoned stream")
    for path in _reads("my", sources["my"], big, "sluice_ro.victim"):
        _until(lambda: not _my_sessions(marker), 10, f"MariaDB session closed after {path}")


def test_a_cancelled_spark_job_leaves_no_session(spark, sources) -> None:
    """One job reads a slow PostgreSQL view and a slow MariaDB view; cancelling it ends both sessions."""
    application = f"sluice_ro_{uuid.uuid4().hex[:8]}"
    federation = Federation(spark=spark)
    federation.attach("pg", f"{sources['pg']}?application_name={application}")
    federation.attach("my", sources["my"])
    group = f"sluice-ro-cancel-{uuid.uuid4().hex[:8]}"
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        spark.sparkContext.setJobGroup(group, "read-only test: cancelled on purpose", interruptOnCancel=True)
        try:
            federation.sql("SELECT x FROM pg.sluice_ro.slow UNION ALL SELECT x FROM my.sluice_ro.slow").collect()
        except BaseException as error:  # noqa: BLE001 - the cancellation is the expected outcome
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    pg_ids: set[int] = set()
    my_ids: set[int] = set()

    def both_running() -> bool:
        pg_ids.update(pid for pid, state in _pg_sessions(application) if state == "active")
        my_ids.update(_my_sessions("`sluice_ro`.`slow`"))
        return bool(pg_ids) and bool(my_ids)

    _until(both_running, 30, "both slow reads run remotely")
    spark.sparkContext.cancelJobGroup(group)
    thread.join(15)
    assert not thread.is_alive() and "cancelled" in str(outcome.get("error", "")).lower()
    _until(lambda: not _pg_sessions(application), 15, f"the PostgreSQL sessions {sorted(pg_ids)} end")
    _until(lambda: not _my_alive(my_ids), 15, f"the MariaDB sessions {sorted(my_ids)} end")
