"""A write killed mid-staging leaves the table as it was (sluice/write/postgres.py, mysql.py).

The written query's rows pass through a Python UDF, ``gate``, in the same Spark task as the
writer's staging, upstream of it: at the partition's last row it waits for the test to let it
go. By then the task has staged the rows before it (sent on in batches of ``_BATCH``), which
the test sees in the staging table; then it kills something: the driver's writing session
(``pg_terminate_backend`` of the holder of the staging table's advisory lock), the task's own
staging session, or the Spark job. An ``INSERT OVERWRITE`` killed so must fail and leave
every row of the table as it was; a killed driver session leaves its staging table with no
lock holder, which the next statement drops. MariaDB's tasks load their rows when their input
ends (one LOAD DATA file), so there the kills come while the task is held and its staging
table is empty: the driver's session (``KILL`` of the holder of the staging table's named
lock) and the Spark job.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from sluice.errors import SluiceError
from tests.sources import MYSQL_SERVER, mariadb

_ROWS, _BATCH, _PAD = 2000, 100, 1000
_TABLE = "public.w_killed"
_BEFORE = [(1, "one"), (2, "two"), (3, "three")]
_STAGING = r"SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'sluice\_stage\_%'"


@pytest.fixture
def release(spark, tmp_path) -> Iterator[Path]:
    """The gate's release file; the gate registered as ``sluice_gate``, small batches."""
    release = tmp_path / "release"

    def gate(i: int) -> str:
        deadline = time.monotonic() + 90
        while i == _ROWS - 1 and not release.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        return str(i % 10) * _PAD

    spark.udf.register("sluice_gate", gate, "string")
    saved = {key: spark.conf.get(key) for key in _CONF}
    for key in _CONF:
        spark.conf.set(key, str(_BATCH))
    try:
        yield release
    finally:
        release.touch()
        for key, value in saved.items():
            spark.conf.set(key, value)


@pytest.fixture
def gated(spark, pg_url, release) -> Iterator[tuple]:
    """A writable PostgreSQL source, the table with :data:`_BEFORE`, and the gate's release file."""
    from sluice import Federation

    with psycopg.connect(pg_url, autocommit=True) as connection:
        for (name,) in connection.execute(_STAGING).fetchall():  # an earlier run's: the tests count staged rows
            connection.execute(f'DROP TABLE IF EXISTS public."{name}"')
        connection.execute(f"DROP TABLE IF EXISTS {_TABLE}")
        connection.execute(f"CREATE TABLE {_TABLE} (id bigint PRIMARY KEY, pad text NOT NULL)")
        connection.execute(f"INSERT INTO {_TABLE} VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    fed = Federation(spark=spark)
    fed.attach("wkill", pg_url, writable=True)
    try:
        yield fed, release
    finally:
        fed.detach("wkill")
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute(f"DROP TABLE IF EXISTS {_TABLE}")


_CONF = ("spark.sql.execution.arrow.maxRecordsPerBatch", "spark.sql.execution.python.udf.maxRecordsPerBatch")


def _killed_write(fed, release: Path, pg_url: str, kill: Callable[[psycopg.Connection], None]) -> BaseException:
    """The gated INSERT OVERWRITE on PostgreSQL; ``kill`` once its task has staged rows."""

    def killer() -> None:
        with psycopg.connect(pg_url, autocommit=True) as connection:
            _until(lambda: _staged(connection), "the task staged no rows while the gate held it")
            kill(connection)

    return _gated_write(fed, release, f"wkill.{_TABLE}", killer)


def _until(ready: Callable[[], object], failure: str) -> None:
    deadline = time.monotonic() + 60
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ready(), failure


def _gated_write(fed, release: Path, table: str, killer: Callable[[], None]) -> BaseException:
    """Run the gated INSERT OVERWRITE of ``table`` in a thread, ``killer`` beside it, then let
    the gate go; what the statement raised."""
    raised: list[BaseException] = []

    def write() -> None:
        try:
            fed.sql(f"INSERT OVERWRITE {table} SELECT id, sluice_gate(id) FROM range(0, {_ROWS}, 1, 1)")
        except BaseException as error:  # noqa: BLE001 - handed to the test
            raised.append(error)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        killer()
    finally:
        release.touch()
        thread.join(120)
    assert not thread.is_alive()
    assert raised, "the killed statement succeeded"
    return raised[0]


def _staged(connection: psycopg.Connection) -> int:
    tables = [r[0] for r in connection.execute(_STAGING).fetchall()]
    return sum(connection.execute(f'SELECT count(*) FROM public."{t}"').fetchone()[0] for t in tables)  # type: ignore[index]  # one row


def _table(pg_url: str) -> list[tuple]:
    with psycopg.connect(pg_url) as connection:
        return connection.execute(f"SELECT id, pad FROM {_TABLE} ORDER BY id").fetchall()


def _staging_tables(pg_url: str) -> list[str]:
    with psycopg.connect(pg_url) as connection:
        return [r[0] for r in connection.execute(_STAGING).fetchall()]


def _terminate(query: str) -> Callable[[psycopg.Connection], None]:
    """Terminate the backends of this database that ``query`` finds (one column: pids)."""

    def kill(connection: psycopg.Connection) -> None:
        def found() -> list[int]:
            return [r[0] for r in connection.execute(query).fetchall()]

        # the session is looked for until it shows; a failure lists what the database had instead
        deadline = time.monotonic() + 10
        while not (pids := found()) and time.monotonic() < deadline:
            time.sleep(0.1)
        sessions = connection.execute(_SESSIONS).fetchall() if not pids else []
        assert pids, f"{query}\nfound no session; the database had: {sessions}"
        for pid in pids:
            connection.execute("SELECT pg_terminate_backend(%s)", (pid,))

    return kill


#: every other session of this database, for a failure's message
_SESSIONS = """SELECT pid, state, left(query, 120) FROM pg_stat_activity
               WHERE datname = current_database() AND pid <> pg_backend_pid()"""
#: the driver's writing session: the holder of the staging table's advisory lock
_DRIVER = """SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"""
#: the task's staging session: the one that COPYs into the staging table
_TASK = r"""SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
            AND query ILIKE 'COPY %sluice\_stage\_%'"""


def test_a_killed_driver_session_leaves_the_table_and_the_next_statement_drops_its_staging(gated, pg_url) -> None:
    fed, release = gated
    error = _killed_write(fed, release, pg_url, _terminate(_DRIVER))
    assert isinstance(error, SluiceError) and "nothing was written" in str(error), error
    assert _table(pg_url) == _BEFORE
    assert len(_staging_tables(pg_url)) == 1  # its session died before it could drop it; nobody holds its lock
    fed.sql(f"INSERT INTO wkill.{_TABLE} VALUES (4, 'four')")
    assert _staging_tables(pg_url) == []
    assert _table(pg_url) == [*_BEFORE, (4, "four")]


def test_a_killed_task_session_fails_the_statement_and_leaves_the_table(gated, pg_url) -> None:
    fed, release = gated
    error = _killed_write(fed, release, pg_url, _terminate(_TASK))
    assert isinstance(error, SluiceError), error
    assert _table(pg_url) == _BEFORE
    assert _staging_tables(pg_url) == []


def test_a_cancelled_job_leaves_the_table(gated, pg_url) -> None:
    fed, release = gated
    error = _killed_write(fed, release, pg_url, lambda _: fed.spark.sparkContext.cancelAllJobs())
    assert isinstance(error, SluiceError) and "cancelled" in str(error), error
    assert _table(pg_url) == _BEFORE
    assert _staging_tables(pg_url) == []


_MY_DATABASE = "sluice_killed"


@pytest.fixture
def my_gated(spark, release) -> Iterator[tuple]:
    """A writable MariaDB source, its table with :data:`_BEFORE`, and the gate's release file."""
    from sluice import Federation

    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_MY_DATABASE}")
        cursor.execute(f"CREATE DATABASE {_MY_DATABASE}")
        cursor.execute(f"CREATE TABLE {_MY_DATABASE}.w_killed (id bigint PRIMARY KEY, pad longtext NOT NULL)")
        cursor.execute(f"INSERT INTO {_MY_DATABASE}.w_killed VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    fed = Federation(spark=spark)
    fed.attach("mykill", f"mysql://root@{MYSQL_SERVER}/{_MY_DATABASE}", writable=True)
    try:
        yield fed, release
    finally:
        fed.detach("mykill")
        with mariadb() as connection, connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {_MY_DATABASE}")


def _my_run(statement: str, *args: object) -> list[tuple]:
    with mariadb(_MY_DATABASE) as connection, connection.cursor() as cursor:
        cursor.execute(statement, args)
        return list(cursor.fetchall())


def _my_staging() -> list[str]:
    return [
        r[0]
        for r in _my_run(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
            "AND TABLE_NAME LIKE 'sluice!_stage!_%%' ESCAPE '!'",
            _MY_DATABASE,
        )
    ]


def _my_killed_write(fed, release: Path, kill: Callable[[str], None]) -> BaseException:
    """The gated INSERT OVERWRITE on MariaDB; ``kill(staging table)`` once the task is held."""

    def killer() -> None:
        _until(_my_staging, "no staging table while the gate held the task")
        kill(_my_staging()[0])

    return _gated_write(fed, release, f"mykill.{_MY_DATABASE}.w_killed", killer)


def _my_table() -> list[tuple]:
    return _my_run("SELECT id, pad FROM w_killed ORDER BY id")


def _kill_lock_holder(staging: str) -> None:
    """KILL the session holding the staging table's named lock: the driver's writing session."""
    holder = _my_run("SELECT IS_USED_LOCK(%s)", staging)[0][0]
    assert holder is not None
    _my_run(f"KILL {int(holder)}")


def test_a_killed_driver_session_on_mariadb_leaves_the_table_and_the_next_statement_drops_its_staging(
    my_gated,
) -> None:
    fed, release = my_gated
    error = _my_killed_write(fed, release, _kill_lock_holder)
    assert isinstance(error, SluiceError), error
    assert _my_table() == _BEFORE
    assert len(_my_staging()) == 1  # its session died before it could drop it; nobody holds its lock
    fed.sql(f"INSERT INTO mykill.{_MY_DATABASE}.w_killed VALUES (4, 'four')")
    assert _my_staging() == []
    assert _my_table() == [*_BEFORE, (4, "four")]


def test_a_cancelled_job_on_mariadb_leaves_the_table(my_gated) -> None:
    fed, release = my_gated
    error = _my_killed_write(fed, release, lambda _: fed.spark.sparkContext.cancelAllJobs())
    assert isinstance(error, SluiceError) and "cancelled" in str(error), error
    assert _my_table() == _BEFORE
    assert _my_staging() == []
