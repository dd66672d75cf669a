"""Faults on the SQL sources: a clear error naming the source, or the right answer, never a short one.

Everything is real: backends are terminated (PostgreSQL) or killed (MariaDB) from a
separate session while Sluice streams a table of a few million rows; servers "go away"
behind a loopback TCP proxy (``tests/faults.py``) that the test cuts; SQLite files are
locked and replaced; tables are dropped and altered between planning and reading. Each
fault is checked on the source reader itself (what a Spark task runs) and, where Spark
adds a layer, through ``fed.sql(...)``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any, cast

import duckdb
import psycopg
import pytest

from sluice import Federation, SourceError
from sluice.sources import open_scan_source
from sluice.sources.base import ReadTask, Source
from tests.faults import TcpProxy, kill_mariadb, terminate_postgres, wait_for
from tests.sources import MYSQL_SERVER, mariadb_execute

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SCHEMA = "sluice_faults"
PG_BIG_ROWS = 3_000_000  # ~90 MB of COPY data: ADBC takes ~15 MB per batch, loopback buffers hold < 40 MB
MY_BIG_ROWS = 1_000_000
PG_BIG = f'"{SCHEMA}"."big"'  # how the big table appears in the remote query text
MY_SLOW = f"`{SCHEMA}`.`slow`"
SMALL_ROWS = [(i, i * 10, f"w{i}") for i in range(1, 41)]


def _postgres(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


@pytest.fixture(scope="module")
def servers(pg_url: str, mysql_url: str) -> Iterator[dict[str, str]]:
    """Schema ``sluice_faults`` in PostgreSQL and MariaDB, each with a big narrow table.

    PostgreSQL sends only as fast as the reader takes rows (ADBC reads in the caller's
    thread), so its stream is still open after the first batch. connectorx reads MariaDB's
    result in a thread of its own; the view ``slow`` pauses 0.5 s every 100,000 rows, so the
    server is still sending when the test kills it (or cuts the network), however far that
    thread has read ahead.
    """
    _postgres(
        pg_url,
        f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE",
        f"CREATE SCHEMA {SCHEMA}",
        f"CREATE TABLE {SCHEMA}.big AS SELECT g::bigint AS id, g::bigint * 2 AS v FROM generate_series(1, {PG_BIG_ROWS}) g",
        f"ANALYZE {SCHEMA}.big",
    )
    mariadb_execute(
        f"DROP DATABASE IF EXISTS {SCHEMA}",
        f"CREATE DATABASE {SCHEMA}",
        f"CREATE TABLE {SCHEMA}.big (id BIGINT PRIMARY KEY, v BIGINT)",
        f"INSERT INTO {SCHEMA}.big SELECT seq, seq * 2 FROM {SCHEMA}.seq_1_to_{MY_BIG_ROWS}",
        f"CREATE VIEW {SCHEMA}.slow AS SELECT id, v FROM {SCHEMA}.big WHERE id % 100000 <> 0 OR SLEEP(0.5) = 0",
    )
    yield {"pg": pg_url, "my": mysql_url}
    _postgres(pg_url, f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    mariadb_execute(f"DROP DATABASE IF EXISTS {SCHEMA}")


def _reader(fed: Federation, query: str, password: str | None = None) -> tuple[Source, list[ReadTask]]:
    """What a Spark task gets for the query's only scan: a fresh source and its read tasks."""
    spec = fed.plan(query).scans[0].spec
    source = open_scan_source(spec, password)
    return source, source.tasks(spec)


def _spark_failure(action: Callable[[], object]) -> str:
    """Run a Spark action that must fail; the text of its error."""
    try:
        result = action()
    except Exception as error:  # noqa: BLE001 - a Sluice error, or Spark's own types
        return f"{type(error).__name__}: {error}"
    raise AssertionError(f"expected the query to fail, it returned {result!r}")


# ---------------------------------------------------------------- 1. killed mid-read
#: per server: the table to stream, its rows, and how to kill the session reading it
KILLERS = {
    "pg": ("big", PG_BIG_ROWS, lambda url: terminate_postgres(url, PG_BIG)),
    "my": ("slow", MY_BIG_ROWS, lambda url: kill_mariadb(MY_SLOW)),
}


@pytest.mark.parametrize("kind", ["pg", "my"])
def test_reader_raises_when_its_session_is_killed_mid_read(spark, servers, kind: str) -> None:
    """The stream must fail, not end: a short stream would be a short, wrong answer."""
    table, total, kill = KILLERS[kind]
    fed = Federation(spark=spark)
    fed.attach(f"{kind}kill", servers[kind], partitions=1)
    source, tasks = _reader(fed, f"SELECT id, v FROM {kind}kill.{SCHEMA}.{table}")
    assert len(tasks) == 1
    with closing(cast(Generator[Any, None, None], source.read(tasks[0]))) as batches:  # read() is a generator
        rows = next(batches).num_rows  # the server is streaming now
        assert kill(servers[kind]), "the reading session was not found on the server"
        with pytest.raises(SourceError) as failure:
            for batch in batches:
                rows += batch.num_rows
    assert failure.value.source == f"{kind}kill"
    assert rows < total


@pytest.mark.parametrize("kind", ["pg", "my"])
def test_spark_query_fails_naming_the_source_when_its_session_is_killed(spark, servers, kind: str) -> None:
    table, total, kill = KILLERS[kind]
    fed = Federation(spark=spark)
    fed.attach(f"{kind}kill", servers[kind], partitions=1)
    frame = fed.sql(f"SELECT id, v FROM {kind}kill.{SCHEMA}.{table}")
    with ThreadPoolExecutor(1) as pool:
        counting = pool.submit(frame.count)
        killed = wait_for(lambda: kill(servers[kind]) or (counting.done() and ["finished"]), 60, f"the read of {table}")
        assert killed != ["finished"], "the read ended before it could be killed"
        try:
            count = counting.result(timeout=90)
        except Exception as error:  # noqa: BLE001 - Spark's error types wrap the worker's
            assert isinstance(error, SourceError) and f"source '{kind}kill'" in str(error)
        else:  # a retried task (cluster mode) reads the whole table again
            assert count == total


# ---------------------------------------------------------------- 2. SQLite: locked, replaced
def _sqlite_file(path: Path, rows: list[tuple[int, int, str]], table: str = "t") -> Path:
    connection = sqlite3.connect(path)
    connection.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, v INTEGER, w TEXT)")
    connection.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows)
    connection.commit()
    connection.close()
    return path


def test_sqlite_locked_by_a_writer_fails_clearly_at_attach_planning_and_read(spark, tmp_path: Path) -> None:
    path = _sqlite_file(tmp_path / "locked.db", SMALL_ROWS)
    _sqlite_file(path, SMALL_ROWS, table="u")
    url = f"sqlite:///{path}"
    fed = Federation(spark=spark)
    fed.attach("lite", url, statement_timeout_s=0.5)
    frame = fed.sql("SELECT id, v, w FROM lite.t")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(
            SourceError, match=r"source 'lite2'.*is locked by another connection.*connect_timeout_s=0.5"
        ):
            fed.attach("lite2", url, connect_timeout_s=0.5)
        with pytest.raises(
            SourceError, match=r"source 'lite'.*cannot describe main.u.*is locked by another connection"
        ):
            fed.sql("SELECT id FROM lite.u")
        started = time.monotonic()
        message = _spark_failure(frame.collect)
        assert "SourceError: source 'lite'" in message and "locked" in message
        assert time.monotonic() - started < 30
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert sorted(tuple(row) for row in frame.collect()) == SMALL_ROWS  # the same plan reads once the lock is gone


def test_sqlite_file_replaced_between_planning_and_reading(spark, tmp_path: Path) -> None:
    """A replaced file is the database now: its rows, or an error naming what is missing."""
    path = _sqlite_file(tmp_path / "live.db", SMALL_ROWS)
    fed = Federation(spark=spark)
    fed.attach("lite", f"sqlite:///{path}", partitions=2)
    query = "SELECT id, v, w FROM lite.t"

    frame = fed.sql(query)
    newer = [(i, -i, f"new{i}") for i in range(1, 8)]
    os.replace(_sqlite_file(tmp_path / "newer.db", newer), path)
    assert sorted(tuple(row) for row in frame.collect()) == newer

    source, tasks = _reader(fed, query)
    frame = fed.sql(query)
    os.replace(_sqlite_file(tmp_path / "other.db", SMALL_ROWS, table="other"), path)
    message = _spark_failure(frame.collect)
    assert "SourceError: source 'lite'" in message and "main.t" in message

    (tmp_path / "junk.db").write_bytes(b"not a database " * 1000)
    os.replace(tmp_path / "junk.db", path)
    with pytest.raises(SourceError, match="source 'lite'.*file is not a database"):
        list(source.read(tasks[0]))


def test_sqlite_real_in_an_integer_column_is_an_error_not_truncated(spark, tmp_path: Path) -> None:
    """A non-STRICT INTEGER column keeps 10.5 as REAL; Arrow would truncate it to 10 without a word."""
    path = _sqlite_file(tmp_path / "real.db", SMALL_ROWS)
    fed = Federation(spark=spark)
    fed.attach("lite", f"sqlite:///{path}")
    source, tasks = _reader(fed, "SELECT id, v FROM lite.t")
    assert sum(batch.num_rows for batch in source.read(tasks[0])) == len(SMALL_ROWS)
    connection = sqlite3.connect(path)
    connection.execute("UPDATE t SET v = v + 0.5 WHERE id = 7")
    connection.commit()
    connection.close()
    with pytest.raises(SourceError, match=r"source 'lite': column 'v' holds a value that is not int64.*REAL"):
        list(source.read(tasks[0]))


# ---------------------------------------------------------------- 3. unreachable
@pytest.mark.parametrize("kind", ["pg", "my"])
def test_attach_to_a_closed_port_fails_at_once(spark, servers, kind: str) -> None:
    proxy = TcpProxy.to(servers[kind])
    proxy.stop()  # nothing listens on its port any more
    started = time.monotonic()
    with pytest.raises(SourceError, match=f"source 'down': cannot connect to .*127.0.0.1:{proxy.port}.*[Rr]efused"):
        Federation(spark=spark).attach("down", proxy.url(servers[kind]))
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    "url", ["postgresql://root@no-such-host.invalid/test", "mysql://root@no-such-host.invalid/test"]
)
def test_unknown_host_names_the_host(spark, url: str) -> None:
    with pytest.raises(SourceError, match="source 'nodns': cannot connect to .*no-such-host.invalid"):
        Federation(spark=spark).attach("nodns", url)


@pytest.mark.parametrize("kind", ["pg", "my"])
def test_server_gone_at_planning(spark, servers, kind: str) -> None:
    with TcpProxy.to(servers[kind]) as proxy:
        fed = Federation(spark=spark)
        fed.attach("gone", proxy.url(servers[kind]))
    with pytest.raises(SourceError, match=f"source 'gone': cannot connect to .*127.0.0.1:{proxy.port}"):
        fed.sql(f"SELECT id FROM gone.{SCHEMA}.big WHERE id = 1")


@pytest.mark.parametrize("kind", ["pg", "my"])
def test_server_gone_at_read(spark, servers, kind: str) -> None:
    """Attached and planned while the server answered; it is gone when Spark reads.

    MariaDB reads go through connectorx, whose pool retries for 30 s: the reader logs in
    with PyMySQL first, so the failure comes at once.
    """
    with TcpProxy.to(servers[kind]) as proxy:
        fed = Federation(spark=spark)
        fed.attach("gone", proxy.url(servers[kind]), partitions=1)  # no split: the read itself meets the dead port
        frame = fed.sql(f"SELECT id, v FROM gone.{SCHEMA}.big WHERE id <= 10")
    started = time.monotonic()
    message = _spark_failure(frame.collect)
    assert "SourceError: source 'gone': cannot connect to" in message and f"127.0.0.1:{proxy.port}" in message
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("kind", ["pg", "my"])
def test_network_cut_mid_read_raises(spark, servers, kind: str) -> None:
    with TcpProxy.to(servers[kind]) as proxy:
        fed = Federation(spark=spark)
        fed.attach("cut", proxy.url(servers[kind]), partitions=1)
        source, tasks = _reader(fed, f"SELECT id, v FROM cut.{SCHEMA}.{KILLERS[kind][0]}")
        with closing(cast(Generator[Any, None, None], source.read(tasks[0]))) as batches:  # read() is a generator
            rows = next(batches).num_rows
            proxy.stop()
            with pytest.raises(SourceError, match="source 'cut'"):
                for batch in batches:
                    rows += batch.num_rows
    assert rows < (PG_BIG_ROWS if kind == "pg" else MY_BIG_ROWS)


def test_mariadb_wrong_password_names_the_user_never_a_password(spark, servers) -> None:
    user, right, wrong, changed = "sluice_faults_pw", "Right-Pass-42", "Wr0ng-Pass-17", "Chang3d-Pass-99"
    mariadb_execute(
        f"DROP USER IF EXISTS '{user}'@'%'",
        f"CREATE USER '{user}'@'%' IDENTIFIED BY '{right}'",
        f"GRANT SELECT ON {SCHEMA}.* TO '{user}'@'%'",
    )
    try:
        url = f"mysql://{user}@{MYSQL_SERVER}/{SCHEMA}"
        fed = Federation(spark=spark)
        with pytest.raises(SourceError) as refused:
            fed.attach("pw", url, password=wrong)
        with pytest.raises(SourceError) as refused_in_url:
            fed.attach("pw", url.replace(f"{user}@", f"{user}:{wrong}@"))
        for failure in (refused, refused_in_url):
            message = str(failure.value)
            assert "source 'pw'" in message and "Access denied" in message and user in message
            assert wrong not in message and right not in message

        fed.attach("pw", url, password=right)
        source, tasks = _reader(fed, f"SELECT id, v FROM pw.{SCHEMA}.big WHERE id <= 3", password=right)
        assert sum(batch.num_rows for batch in source.read(tasks[0])) == 3
        mariadb_execute(f"ALTER USER '{user}'@'%' IDENTIFIED BY '{changed}'")
        started = time.monotonic()
        with pytest.raises(SourceError, match="source 'pw'.*Access denied") as at_read:
            list(source.read(tasks[0]))
        assert time.monotonic() - started < 10
        assert all(secret not in str(at_read.value) for secret in (right, wrong, changed))
    finally:
        mariadb_execute(f"DROP USER IF EXISTS '{user}'@'%'")


# ---------------------------------------------------------------- 4. the table changed after planning
class Small:
    """One small table ``t (id, v bigint, w text)`` per source kind, and the DDL that changes it."""

    def __init__(self, kind: str, servers: dict[str, str], folder: Path) -> None:
        self.kind = kind
        self.servers = servers
        self.sqlite_path = folder / "small.db"
        self.duckdb_path = folder / "small.duckdb"

    @property
    def url(self) -> str:
        return {
            "pg": self.servers["pg"],
            "my": self.servers["my"],
            "lite": f"sqlite:///{self.sqlite_path}",
            "duck": f"duckdb:///{self.duckdb_path}",
        }[self.kind]

    @property
    def table(self) -> str:
        """The table in Sluice SQL (the source is attached under its kind)."""
        return f"{self.kind}.{SCHEMA}.t" if self.kind in ("pg", "my") else f"{self.kind}.t"

    def run(self, *statements: str) -> None:
        if self.kind == "pg":
            _postgres(self.servers["pg"], *statements)
        elif self.kind == "my":
            mariadb_execute(*statements)
        elif self.kind == "lite":
            connection = sqlite3.connect(self.sqlite_path)
            for statement in statements:
                connection.execute(statement)
            connection.commit()
            connection.close()
        else:
            with duckdb.connect(str(self.duckdb_path)) as connection:
                for statement in statements:
                    connection.execute(statement)

    def create(self) -> None:
        qualified = f"{SCHEMA}.t" if self.kind in ("pg", "my") else "t"
        text = "VARCHAR(20)" if self.kind == "my" else "TEXT"
        values = ", ".join(f"({i}, {v}, '{w}')" for i, v, w in SMALL_ROWS)
        self.run(
            f"DROP TABLE IF EXISTS {qualified}",
            f"CREATE TABLE {qualified} (id BIGINT PRIMARY KEY, v BIGINT, w {text})",
            f"INSERT INTO {qualified} VALUES {values}",
        )

    def change(self, what: str) -> None:
        qualified = f"{SCHEMA}.t" if self.kind in ("pg", "my") else "t"
        if what == "drop_table":
            self.run(f"DROP TABLE {qualified}")
        elif what == "drop_column":
            self.run(f"ALTER TABLE {qualified} DROP COLUMN w")
        elif self.kind == "lite":  # SQLite cannot alter a type: the table is rebuilt, as tools do
            self.run(
                "ALTER TABLE t RENAME TO t_old",
                "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT, w TEXT)",
                "INSERT INTO t SELECT id, printf('%05d', v), w FROM t_old",
                "DROP TABLE t_old",
            )
        elif self.kind == "my":
            self.run(f"ALTER TABLE {qualified} MODIFY v VARCHAR(20)", f"UPDATE {qualified} SET v = LPAD(v, 5, '0')")
        else:  # text that would cast back to the old integers: '00010' must not be read as 10
            self.run(f"ALTER TABLE {qualified} ALTER COLUMN v TYPE TEXT USING lpad(v::text, 5, '0')")


@pytest.mark.parametrize("change", ["drop_table", "drop_column", "retype_column"])
@pytest.mark.parametrize("kind", ["pg", "my", "lite", "duck"])
def test_table_changed_between_planning_and_reading(spark, servers, tmp_path: Path, kind: str, change: str) -> None:
    """A stale plan fails naming the source and what changed; it never reads the new table as the old."""
    small = Small(kind, servers, tmp_path)
    small.create()
    fed = Federation(spark=spark)
    fed.attach(kind, small.url, partitions=2)  # two partitions: the split is planned against the changed table too
    query = f"SELECT id, v, w FROM {small.table} WHERE id > 0"
    frame = fed.sql(query)  # plans (and describes) now
    small.change(change)
    message = _spark_failure(frame.collect)
    assert f"SourceError: source '{kind}'" in message
    if change == "drop_table":
        assert (f"{SCHEMA}.t" if kind in ("pg", "my") else "main.t") in message
    else:
        column = "w" if change == "drop_column" else "v"
        assert f"column '{column}'" in message or f'column "{column}"' in message
    if change == "retype_column":
        assert "attach the source again" in message
    if change == "retype_column" and kind == "lite":  # attaching again reads the new schema, as the message says
        fed.attach(kind, small.url)
        rows = fed.sql(f"SELECT id, v FROM {small.table} WHERE id <= 2").collect()
        assert sorted(tuple(row) for row in rows) == [(1, "00010"), (2, "00020")]
