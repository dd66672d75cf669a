"""The benchmark table, generated server-side and identical in all four SQL engines.

Every value is a pure function of ``id`` (integer hashing, IEEE double division), so the
engines hold the same data without copying rows between them, and generation stays fast
(``generate_series`` in PostgreSQL, MariaDB's ``seq_1_to_N`` sequence table, DuckDB's
``range``, a recursive CTE in SQLite). Data is kept between runs and regenerated only when
its row count or the generator version differs. ``customer_id`` carries an index in every
engine (the indexed selective shape); ``score`` carries none (the unindexed one).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import psycopg

#: bump when the generated values change, so kept tables are regenerated
GENERATOR_VERSION = 2
#: where the benchmark tables live: the PostgreSQL schema and the MariaDB database. The test
#: suite's smoke run sets ``SLUICE_BENCH_SCHEMA`` (tests/conftest.py) so that it never rebuilds
#: the tables of a benchmark running beside it, nor the other way round.
PG_SCHEMA = MYSQL_DATABASE = os.environ.get("SLUICE_BENCH_SCHEMA", "sluice_bench")
TABLE = "bench_orders"
INDEX = "bench_orders_customer"
ENGINES = ("postgresql", "mariadb", "sqlite", "duckdb")


@dataclass(frozen=True)
class BenchColumn:
    name: str
    pg_type: str
    pg_typname: str  # what psycopg's binary COPY loader is told
    mysql_type: str
    sqlite_type: str
    duckdb_type: str


COLUMNS: tuple[BenchColumn, ...] = (
    BenchColumn("id", "bigint PRIMARY KEY", "int8", "BIGINT PRIMARY KEY", "INTEGER PRIMARY KEY", "BIGINT PRIMARY KEY"),
    BenchColumn("customer_id", "int", "int4", "INT", "INTEGER", "INTEGER"),
    BenchColumn("status", "text", "text", "VARCHAR(16)", "TEXT", "VARCHAR"),
    # REAL in SQLite: its NUMERIC affinity would store 5.00 as the integer 5
    BenchColumn("amount", "numeric(12,2)", "numeric", "DECIMAL(12,2)", "REAL", "DECIMAL(12,2)"),
    # an instant in PostgreSQL; a wall-clock time elsewhere (MariaDB TIMESTAMP ends in 2038)
    BenchColumn("placed_at", "timestamptz", "timestamptz", "DATETIME(3)", "TIMESTAMP", "TIMESTAMP"),
    BenchColumn("score", "float8", "float8", "DOUBLE", "REAL", "DOUBLE"),
)
COLUMN_NAMES = tuple(c.name for c in COLUMNS)

# status: exactly 1% 'refunded' (the filter shape), ~1% NULL; score: ~2% NULL, uniform in [0, 1)
# customer_id: (id * 7919) mod 100000, so customer_id < 10 selects 0.01% of the rows.
# _PG_SELECT is a psycopg query: %% is the modulo operator, %s the row count.
_PG_SELECT = """
SELECT g,
       ((g * 7919) %% 100000)::int,
       CASE WHEN g %% 100 = 42 THEN 'refunded' WHEN g %% 97 = 0 THEN NULL
            ELSE (ARRAY['placed', 'paid', 'shipped', 'delivered'])[1 + (g * 31) %% 4] END,
       (((g * 37) %% 1000000) / 100.0)::numeric(12,2),
       to_timestamp(1704067200 + g * 37) + (g %% 1000) * interval '1 millisecond',
       CASE WHEN g %% 53 = 0 THEN NULL ELSE ((g * 2654435761) %% 1000003)::float8 / 1000003.0::float8 END
FROM generate_series(1, %s::bigint) AS g
"""
_MYSQL_SELECT = """
SELECT seq,
       (seq * 7919) % 100000,
       CASE WHEN seq % 100 = 42 THEN 'refunded' WHEN seq % 97 = 0 THEN NULL
            ELSE ELT(1 + (seq * 31) % 4, 'placed', 'paid', 'shipped', 'delivered') END,
       CAST(((seq * 37) % 1000000) / 100 AS DECIMAL(12,2)),
       TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (seq * 37) SECOND + INTERVAL (seq % 1000) * 1000 MICROSECOND,
       CASE WHEN seq % 53 = 0 THEN NULL ELSE CAST((seq * 2654435761) % 1000003 AS DOUBLE) / CAST(1000003 AS DOUBLE) END
FROM seq_1_to_{rows}
"""
_SQLITE_SELECT = """
WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ?)
SELECT g,
       (g * 7919) % 100000,
       CASE WHEN g % 100 = 42 THEN 'refunded' WHEN g % 97 = 0 THEN NULL
            ELSE CASE (g * 31) % 4 WHEN 0 THEN 'placed' WHEN 1 THEN 'paid' WHEN 2 THEN 'shipped' ELSE 'delivered' END END,
       ((g * 37) % 1000000) / 100.0,
       strftime('%Y-%m-%d %H:%M:%S', 1704067200 + g * 37, 'unixepoch') || '.' || printf('%03d', g % 1000),
       CASE WHEN g % 53 = 0 THEN NULL ELSE CAST((g * 2654435761) % 1000003 AS REAL) / 1000003.0 END
FROM s
"""
_DUCKDB_SELECT = """
SELECT g,
       CAST((g * 7919) % 100000 AS INTEGER),
       CASE WHEN g % 100 = 42 THEN 'refunded' WHEN g % 97 = 0 THEN NULL
            ELSE ['placed', 'paid', 'shipped', 'delivered'][1 + (g * 31) % 4] END,
       CAST(CAST((g * 37) % 1000000 AS DECIMAL(12,0)) / 100 AS DECIMAL(12,2)),
       TIMESTAMP '2024-01-01 00:00:00' + to_seconds(g * 37) + to_milliseconds(g % 1000),
       CASE WHEN g % 53 = 0 THEN NULL ELSE CAST((g * 2654435761) % 1000003 AS DOUBLE) / CAST(1000003 AS DOUBLE) END
FROM range(1, ? + 1) AS t(g)
"""
# The same aggregates in every engine, in exact integer arithmetic: equal => same data.
_PG_FINGERPRINT = f"""
SELECT count(*), sum(customer_id), count(status), count(*) FILTER (WHERE status = 'refunded'),
       sum((amount * 100)::bigint), count(score), sum(floor(score * 1e6)::bigint),
       (extract(epoch FROM min(placed_at)) * 1000)::bigint, (extract(epoch FROM max(placed_at)) * 1000)::bigint
FROM {PG_SCHEMA}.{TABLE}
"""
_MYSQL_FINGERPRINT = f"""
SELECT count(*), sum(customer_id), count(status), sum(status = 'refunded'),
       sum(CAST(amount * 100 AS SIGNED)), count(score), sum(FLOOR(score * 1e6)),
       CAST(UNIX_TIMESTAMP(CONVERT_TZ(min(placed_at), '+00:00', @@session.time_zone)) * 1000 AS SIGNED),
       CAST(UNIX_TIMESTAMP(CONVERT_TZ(max(placed_at), '+00:00', @@session.time_zone)) * 1000 AS SIGNED)
FROM {MYSQL_DATABASE}.{TABLE}
"""
_SQLITE_FINGERPRINT = f"""
SELECT count(*), sum(customer_id), count(status), sum(status = 'refunded'),
       sum(CAST(round(amount * 100) AS INTEGER)), count(score), sum(CAST(score * 1e6 AS INTEGER)),
       CAST(round((julianday(min(placed_at)) - 2440587.5) * 86400000) AS INTEGER),
       CAST(round((julianday(max(placed_at)) - 2440587.5) * 86400000) AS INTEGER)
FROM {TABLE}
"""
_DUCKDB_FINGERPRINT = f"""
SELECT count(*), sum(customer_id), count(status), count(*) FILTER (WHERE status = 'refunded'),
       sum(CAST(amount * 100 AS BIGINT)), count(score), sum(CAST(floor(score * 1e6) AS BIGINT)),
       epoch_ms(min(placed_at)), epoch_ms(max(placed_at))
FROM {TABLE}
"""
FINGERPRINT_KEYS = (
    "rows",
    "sum_customer_id",
    "status_not_null",
    "refunded",
    "amount_cents",
    "score_not_null",
    "score_micro",
    "first_placed_ms",
    "last_placed_ms",
)


def _stamp(rows: int) -> str:
    return f"sluice bench generator v{GENERATOR_VERSION}, {rows} rows"


@dataclass(frozen=True)
class Prepared:
    """What ``ensure_*`` did: whether it generated, how long it took, the data's fingerprint."""

    generated: bool
    seconds: float
    fingerprint: dict[str, int]


def _fingerprint(row: tuple | None) -> dict[str, int]:
    assert row is not None, "the fingerprint query returns one row"
    return dict(zip(FINGERPRINT_KEYS, (int(v) for v in row)))


def _ddl(type_of: Callable[[BenchColumn], str]) -> str:
    return ", ".join(f"{c.name} {type_of(c)}" for c in COLUMNS)


def ensure_postgres(url: str, rows: int) -> Prepared:
    """``sluice_bench.bench_orders`` with ``rows`` rows, generated unless already there."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as connection:
        current = connection.execute(
            "SELECT obj_description(to_regclass(%s), 'pg_class')", (f"{PG_SCHEMA}.{TABLE}",)
        ).fetchone()
        generated = current is None or current[0] != _stamp(rows)
        if generated:
            with connection.transaction():
                connection.execute(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}")
                connection.execute(f"DROP TABLE IF EXISTS {PG_SCHEMA}.{TABLE}")
                connection.execute(f"CREATE TABLE {PG_SCHEMA}.{TABLE} ({_ddl(lambda c: c.pg_type)})")
                connection.execute(f"INSERT INTO {PG_SCHEMA}.{TABLE} {_PG_SELECT}", (rows,))
                connection.execute(f"CREATE INDEX {INDEX} ON {PG_SCHEMA}.{TABLE} (customer_id)")
                connection.execute(f"COMMENT ON TABLE {PG_SCHEMA}.{TABLE} IS '{_stamp(rows)}'")
            # Set hint bits and the visibility map now, and give the planner (and Sluice's
            # partition count, from reltuples) real statistics: the first timed read must
            # not be the one that pays for post-load housekeeping.
            connection.execute(f"VACUUM (FREEZE, ANALYZE) {PG_SCHEMA}.{TABLE}")
        fingerprint = connection.execute(_PG_FINGERPRINT).fetchone()
    return Prepared(generated, time.perf_counter() - started, _fingerprint(fingerprint))


def mysql_connect(url: str):
    import pymysql

    parts = urlsplit(url)
    return pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or ""),
        autocommit=True,
        read_timeout=3600,
    )


def ensure_mysql(url: str, rows: int) -> Prepared:
    """``sluice_bench.bench_orders`` in MariaDB (InnoDB), generated unless already there."""
    started = time.perf_counter()
    connection = mysql_connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET time_zone = '+00:00'")
            cursor.execute(
                "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                (MYSQL_DATABASE, TABLE),
            )
            current = cursor.fetchone()
            generated = current is None or current[0] != _stamp(rows)
            if generated:
                cursor.execute(f"CREATE DATABASE IF NOT EXISTS {MYSQL_DATABASE}")
                cursor.execute(f"USE {MYSQL_DATABASE}")  # where the seq_1_to_N sequence table is found
                cursor.execute(f"DROP TABLE IF EXISTS {MYSQL_DATABASE}.{TABLE}")
                cursor.execute(f"CREATE TABLE {MYSQL_DATABASE}.{TABLE} ({_ddl(lambda c: c.mysql_type)}) ENGINE=InnoDB")
                cursor.execute(f"INSERT INTO {MYSQL_DATABASE}.{TABLE} {_MYSQL_SELECT.format(rows=int(rows))}")
                cursor.execute(f"CREATE INDEX {INDEX} ON {MYSQL_DATABASE}.{TABLE} (customer_id)")
                cursor.execute(f"ANALYZE TABLE {MYSQL_DATABASE}.{TABLE}")
                cursor.execute(f"ALTER TABLE {MYSQL_DATABASE}.{TABLE} COMMENT = %s", (_stamp(rows),))
            cursor.execute(_MYSQL_FINGERPRINT)
            fingerprint = cursor.fetchone()
    finally:
        connection.close()
    return Prepared(generated, time.perf_counter() - started, _fingerprint(fingerprint))


def ensure_sqlite(path: str, rows: int) -> Prepared:
    """A SQLite file at ``path`` holding the same ``bench_orders``; built atomically."""
    started = time.perf_counter()
    generated = not _sqlite_current(path, rows)
    if generated:
        building = _fresh(path)
        connection = sqlite3.connect(building)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            connection.execute(f"CREATE TABLE {TABLE} ({_ddl(lambda c: c.sqlite_type)})")
            connection.execute(f"INSERT INTO {TABLE} {_SQLITE_SELECT}", (rows,))
            connection.execute(f"CREATE INDEX {INDEX} ON {TABLE} (customer_id)")
            connection.execute("ANALYZE")
            connection.execute(f"PRAGMA user_version = {GENERATOR_VERSION}")
            connection.commit()
        finally:
            connection.close()
        os.replace(building, path)
    connection = sqlite3.connect(path)
    try:
        fingerprint = connection.execute(_SQLITE_FINGERPRINT).fetchone()
    finally:
        connection.close()
    return Prepared(generated, time.perf_counter() - started, _fingerprint(fingerprint))


def _sqlite_current(path: str, rows: int) -> bool:
    if not os.path.exists(path):
        return False
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        count = connection.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
    except sqlite3.Error:
        return False
    finally:
        connection.close()
    return version == GENERATOR_VERSION and count == rows


def ensure_duckdb(path: str, rows: int) -> Prepared:
    """A DuckDB file at ``path`` holding the same ``bench_orders``; built atomically."""
    import duckdb

    started = time.perf_counter()
    generated = not _duckdb_current(path, rows)
    if generated:
        building = _fresh(path)
        with duckdb.connect(building) as connection:
            connection.execute(f"CREATE TABLE {TABLE} ({_ddl(lambda c: c.duckdb_type)})")
            connection.execute(f"INSERT INTO {TABLE} {_DUCKDB_SELECT}", (rows,))
            connection.execute(f"CREATE INDEX {INDEX} ON {TABLE} (customer_id)")
            connection.execute(f"COMMENT ON TABLE {TABLE} IS '{_stamp(rows)}'")
            connection.execute("CHECKPOINT")
        os.replace(building, path)
    with duckdb.connect(path, read_only=True) as connection:
        fingerprint = connection.execute(_DUCKDB_FINGERPRINT).fetchone()
    return Prepared(generated, time.perf_counter() - started, _fingerprint(fingerprint))


def _duckdb_current(path: str, rows: int) -> bool:
    import duckdb

    if not os.path.exists(path):
        return False
    try:
        with duckdb.connect(path, read_only=True) as connection:
            found = connection.execute("SELECT comment FROM duckdb_tables() WHERE table_name = ?", (TABLE,)).fetchone()
    except duckdb.Error:
        return False
    return found is not None and found[0] == _stamp(rows)


def _fresh(path: str) -> str:
    """A clean ``<path>.building`` to generate into (then renamed over ``path``)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    building = path + ".building"
    for leftover in (building, building + ".wal"):
        if os.path.exists(leftover):
            os.remove(leftover)
    return building


def sqlite_path(data_dir: str, rows: int) -> str:
    return os.path.abspath(os.path.join(data_dir, f"{TABLE}-{rows}.db"))


def duckdb_path(data_dir: str, rows: int) -> str:
    return os.path.abspath(os.path.join(data_dir, f"{TABLE}-{rows}.duckdb"))


def ensure_all(pg_url: str, mysql_url: str, data_dir: str, rows: int) -> dict[str, Prepared]:
    """Every engine's table at ``rows`` rows (one file per scale for the embedded engines)."""
    return {
        "postgresql": ensure_postgres(pg_url, rows),
        "mariadb": ensure_mysql(mysql_url, rows),
        "sqlite": ensure_sqlite(sqlite_path(data_dir, rows), rows),
        "duckdb": ensure_duckdb(duckdb_path(data_dir, rows), rows),
    }


def cleanup(pg_url: str, mysql_url: str, data_dir: str) -> None:
    """Drop the benchmark schema/database and the data folder: tables, lakes, planning sources (``--cleanup``)."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE")
    connection = mysql_connect(mysql_url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {MYSQL_DATABASE}")
    finally:
        connection.close()
    if not os.path.isdir(data_dir):
        return
    for name in os.listdir(data_dir):  # only what the scenarios generate: --data-dir may be a shared folder
        path = os.path.join(data_dir, name)
        if name.startswith(TABLE) and os.path.isfile(path):
            os.remove(path)
        elif (name.startswith("lake-") or name == "planning") and os.path.isdir(path):
            shutil.rmtree(path)
