"""The benchmark table, generated server-side and identical in PostgreSQL and SQLite.

Every value is a pure function of ``id`` (integer hashing, IEEE double division), so the
two engines hold the same data without copying rows between them, and generation stays
fast (``generate_series`` in PostgreSQL, a recursive CTE in SQLite). Data is kept between
runs and regenerated only when its row count or the generator version differs.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass

import psycopg

#: bump when the generated values change, so kept tables are regenerated
GENERATOR_VERSION = 1
PG_SCHEMA = "sluice_bench"
TABLE = "bench_orders"


@dataclass(frozen=True)
class BenchColumn:
    name: str
    pg_type: str
    pg_typname: str  # what psycopg's binary COPY loader is told
    sqlite_type: str


COLUMNS: tuple[BenchColumn, ...] = (
    BenchColumn("id", "bigint PRIMARY KEY", "int8", "INTEGER PRIMARY KEY"),
    BenchColumn("customer_id", "int", "int4", "INTEGER"),
    BenchColumn("status", "text", "text", "TEXT"),
    BenchColumn("amount", "numeric(12,2)", "numeric", "REAL"),  # REAL: SQLite's NUMERIC would store 5.00 as integer 5
    BenchColumn("placed_at", "timestamptz", "timestamptz", "TIMESTAMP"),  # SQLite: ISO text, read as timestamp_ntz
    BenchColumn("score", "float8", "float8", "REAL"),
)
COLUMN_NAMES = tuple(c.name for c in COLUMNS)

# status: exactly 1% 'refunded' (the filter shape), ~1% NULL; score: ~2% NULL.
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
# The same aggregates in both engines, in exact integer arithmetic: equal => same data.
_PG_FINGERPRINT = f"""
SELECT count(*), sum(customer_id), count(status), count(*) FILTER (WHERE status = 'refunded'),
       sum((amount * 100)::bigint), count(score), sum(floor(score * 1e6)::bigint),
       (extract(epoch FROM min(placed_at)) * 1000)::bigint, (extract(epoch FROM max(placed_at)) * 1000)::bigint
FROM {PG_SCHEMA}.{TABLE}
"""
_SQLITE_FINGERPRINT = f"""
SELECT count(*), sum(customer_id), count(status), sum(status = 'refunded'),
       sum(CAST(round(amount * 100) AS INTEGER)), count(score), sum(CAST(score * 1e6 AS INTEGER)),
       CAST(round((julianday(min(placed_at)) - 2440587.5) * 86400000) AS INTEGER),
       CAST(round((julianday(max(placed_at)) - 2440587.5) * 86400000) AS INTEGER)
FROM {TABLE}
"""
FINGERPRINT_KEYS = ("rows", "sum_customer_id", "status_not_null", "refunded", "amount_cents", "score_not_null",
                    "score_micro", "first_placed_ms", "last_placed_ms")


def _stamp(rows: int) -> str:
    return f"sluice bench generator v{GENERATOR_VERSION}, {rows} rows"


@dataclass(frozen=True)
class Prepared:
    """What ``ensure_*`` did: whether it generated, how long it took, the data's fingerprint."""

    generated: bool
    seconds: float
    fingerprint: dict[str, int]


def ensure_postgres(url: str, rows: int) -> Prepared:
    """``sluice_bench.bench_orders`` with ``rows`` rows, generated unless already there."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as connection:
        current = connection.execute("SELECT obj_description(to_regclass(%s), 'pg_class')", (f"{PG_SCHEMA}.{TABLE}",)).fetchone()
        generated = current is None or current[0] != _stamp(rows)
        if generated:
            with connection.transaction():
                connection.execute(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}")
                connection.execute(f"DROP TABLE IF EXISTS {PG_SCHEMA}.{TABLE}")
                ddl = ", ".join(f"{c.name} {c.pg_type}" for c in COLUMNS)
                connection.execute(f"CREATE TABLE {PG_SCHEMA}.{TABLE} ({ddl})")
                connection.execute(f"INSERT INTO {PG_SCHEMA}.{TABLE} {_PG_SELECT}", (rows,))
                connection.execute(f"COMMENT ON TABLE {PG_SCHEMA}.{TABLE} IS '{_stamp(rows)}'")
            # Set hint bits and the visibility map now, and give the planner (and Sluice's
            # partition count, from reltuples) real statistics: the first timed read must
            # not be the one that pays for post-load housekeeping.
            connection.execute(f"VACUUM (FREEZE, ANALYZE) {PG_SCHEMA}.{TABLE}")
        fingerprint = connection.execute(_PG_FINGERPRINT).fetchone()
    return Prepared(generated, time.perf_counter() - started, dict(zip(FINGERPRINT_KEYS, map(int, fingerprint))))


def ensure_sqlite(path: str, rows: int) -> Prepared:
    """A SQLite file at ``path`` holding the same ``bench_orders``; built atomically."""
    started = time.perf_counter()
    generated = not _sqlite_current(path, rows)
    if generated:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        building = path + ".building"
        if os.path.exists(building):
            os.remove(building)
        connection = sqlite3.connect(building)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            ddl = ", ".join(f"{c.name} {c.sqlite_type}" for c in COLUMNS)
            connection.execute(f"CREATE TABLE {TABLE} ({ddl})")
            connection.execute(f"INSERT INTO {TABLE} {_SQLITE_SELECT}", (rows,))
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
    return Prepared(generated, time.perf_counter() - started, dict(zip(FINGERPRINT_KEYS, map(int, fingerprint))))


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


def cleanup(url: str, sqlite_path: str) -> None:
    """Drop the benchmark schema and delete the SQLite file (``--cleanup``)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE")
    for leftover in (sqlite_path, sqlite_path + ".building"):
        if os.path.exists(leftover):
            os.remove(leftover)
