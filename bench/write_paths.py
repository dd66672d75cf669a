"""The write benchmark's tables and the paths that fill them without Sluice: the raw drivers
loading the Arrow rows, and Spark's ``df.write.jdbc``.

Every path of an engine writes into its own table with the same definition (primary key on
``id``); the scenario (:mod:`bench.scenarios.writes`) empties or resets a path's table before
each run, outside the timing. The raw paths are the fastest way each driver loads Arrow data
that we know of: ADBC's ``adbc_ingest`` (binary ``COPY``) on PostgreSQL, Arrow's CSV writer and
``LOAD DATA LOCAL INFILE`` on MariaDB, one ``executemany`` transaction on SQLite, an Arrow scan
appended in one statement on DuckDB.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from bench import data
from bench.spark_paths import JDBC_DRIVERS

#: the six columns: name, then the type in PostgreSQL, MariaDB, SQLite, DuckDB
COLUMNS: tuple[tuple[str, str, str, str, str], ...] = (
    ("id", "bigint PRIMARY KEY", "BIGINT PRIMARY KEY", "INTEGER PRIMARY KEY", "BIGINT PRIMARY KEY"),
    ("score", "double precision", "DOUBLE", "REAL", "DOUBLE"),
    ("amount", "numeric(12,2)", "DECIMAL(12,2)", "NUMERIC(12,2)", "DECIMAL(12,2)"),
    ("label", "text", "VARCHAR(64)", "TEXT", "VARCHAR"),
    # an instant everywhere Spark's TIMESTAMP can land as one (MariaDB's TIMESTAMP ends in 2038)
    ("ts", "timestamptz", "TIMESTAMP(6) NULL", "TIMESTAMP", "TIMESTAMPTZ"),
    ("flag", "boolean", "BOOLEAN", "BOOLEAN", "BOOLEAN"),
)
NAMES = tuple(c[0] for c in COLUMNS)
_ENGINE_INDEX = {"postgresql": 1, "mariadb": 2, "sqlite": 3, "duckdb": 4}
#: Spark JDBC's batchsize: its default, and the tuned size with the driver's batch rewriting
DEFAULT_BATCH, TUNED_BATCH = 1000, 10000
TUNED_PROPERTIES = {
    "postgresql": {"batchsize": str(TUNED_BATCH), "reWriteBatchedInserts": "true"},
    "mariadb": {"batchsize": str(TUNED_BATCH), "rewriteBatchedStatements": "true"},
}


def ddl(engine: str, table: str, key: bool = True) -> str:
    """``CREATE TABLE`` of the benchmark's six columns (``key=False``: no primary key, a staging table)."""
    index = _ENGINE_INDEX[engine]
    columns = ", ".join(f"{c[0]} {c[index] if key else c[index].replace(' PRIMARY KEY', '')}" for c in COLUMNS)
    suffix = " ENGINE=InnoDB" if engine == "mariadb" else ""
    return f"CREATE TABLE {table} ({columns}){suffix}"


@dataclass(frozen=True)
class Server:
    """PostgreSQL or MariaDB holding the benchmark's tables (in :data:`bench.data.PG_SCHEMA` /
    :data:`bench.data.MYSQL_DATABASE`)."""

    engine: str
    url: str

    @property
    def schema(self) -> str:
        return data.PG_SCHEMA if self.engine == "postgresql" else data.MYSQL_DATABASE

    def qualified(self, table: str) -> str:
        return f"{self.schema}.{table}"

    def execute(self, *statements: str) -> None:
        """Run ``statements`` in order in one session, autocommitted."""
        if self.engine == "postgresql":
            with psycopg.connect(self.url, autocommit=True) as connection:
                for statement in statements:
                    connection.execute(statement.encode())
            return
        connection = data.mysql_connect(self.url)
        try:
            with connection.cursor() as cursor:
                for statement in statements:
                    cursor.execute(statement)
        finally:
            connection.close()

    def transaction(self, statement: str) -> int:
        """Run one statement in one transaction; the rows it reports."""
        if self.engine == "postgresql":
            with psycopg.connect(self.url) as connection:  # commits when the block ends
                return int(connection.execute(statement.encode()).rowcount)
        connection = data.mysql_connect(self.url)
        try:
            connection.begin()
            with connection.cursor() as cursor:
                done = int(cursor.execute(statement))
            connection.commit()
            return done
        finally:
            connection.close()

    def create(self, *tables: str, key: bool = True) -> None:
        """(Re)create ``tables`` empty, in the benchmark's schema."""
        setup = (
            f"CREATE SCHEMA IF NOT EXISTS {self.schema}"
            if self.engine == "postgresql"
            else f"CREATE DATABASE IF NOT EXISTS {self.schema}"
        )
        drops = [f"DROP TABLE IF EXISTS {self.qualified(t)}" for t in tables]
        self.execute(setup, *drops, *(ddl(self.engine, self.qualified(t), key) for t in tables))

    def truncate(self, table: str) -> None:
        self.execute(f"TRUNCATE TABLE {self.qualified(table)}")

    def reset(self, table: str, base: str) -> None:
        """``table`` emptied and refilled with ``base``'s rows (a MERGE's target, before each run)."""
        self.execute(
            f"TRUNCATE TABLE {self.qualified(table)}",
            f"INSERT INTO {self.qualified(table)} SELECT * FROM {self.qualified(base)}",
        )

    def jdbc(self) -> tuple[str, dict[str, str]]:
        """Spark JDBC's URL and connection properties for this server."""
        parts = urlsplit(self.url)
        properties = {
            "driver": JDBC_DRIVERS[self.engine],
            "user": unquote(parts.username or ""),
            "password": unquote(parts.password or ""),
        }
        if self.engine == "postgresql":
            return f"jdbc:postgresql://{parts.hostname}:{parts.port or 5432}{parts.path}", properties
        # Spark picks its MySQL dialect by the jdbc:mysql: prefix, which MariaDB's driver accepts with permitMysqlScheme
        properties["sessionVariables"] = "time_zone='+00:00'"
        return f"jdbc:mysql://{parts.hostname}:{parts.port or 3306}/{self.schema}?permitMysqlScheme", properties

    def load_raw(self, parquet: str, table: str) -> int:
        """The raw driver's load of the Parquet rows into ``table``: read as Arrow, then one bulk load."""
        rows = pq.read_table(parquet)
        if self.engine == "postgresql":
            import adbc_driver_postgresql.dbapi as adbc

            with adbc.connect(self.url) as connection, connection.cursor() as cursor:
                done = cursor.adbc_ingest(table, rows, mode="append", db_schema_name=self.schema)
                connection.commit()
            return int(done)
        return _load_data(self.url, self.qualified(table), rows)

    def fingerprint(self, table: str) -> str:
        """Row count and an order-free digest of every value, computed by the server."""
        if self.engine == "postgresql":
            digest = (
                "sum(('x' || substr(md5(concat_ws('|', id, score::text, amount, label, "
                "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), flag::int)), 1, 8))::bit(32)::bigint)"
            )
            with psycopg.connect(self.url, autocommit=True) as connection:
                found = connection.execute(
                    f"SELECT count(*), {digest} FROM {self.qualified(table)}".encode()
                ).fetchone()
        else:
            digest = (
                "sum(conv(substr(md5(concat_ws('|', id, score, amount, label, "
                "date_format(ts, '%Y-%m-%d %H:%i:%s.%f'), flag + 0)), 1, 8), 16, 10))"
            )
            connection = data.mysql_connect(self.url)
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SET time_zone = '+00:00'")
                    cursor.execute(f"SELECT count(*), {digest} FROM {self.qualified(table)}")
                    found = cursor.fetchone()
            finally:
                connection.close()
        assert found is not None
        return f"{found[0]} rows, digest {found[1]}"


def _load_data(url: str, table: str, rows: pa.Table) -> int:
    """Arrow's CSV writer into a file, then ``LOAD DATA LOCAL INFILE`` in one transaction:
    instants as their UTC wall clock (the session's time zone is UTC), booleans as 0/1."""
    import pymysql

    prepared = rows.set_column(NAMES.index("ts"), "ts", pc.cast(rows.column("ts"), pa.timestamp("us"))).set_column(
        NAMES.index("flag"), "flag", pc.cast(rows.column("flag"), pa.int8())
    )
    parts = urlsplit(url)
    with tempfile.NamedTemporaryFile("wb", suffix=".csv") as spool:
        pacsv.write_csv(prepared, spool, pacsv.WriteOptions(include_header=False))
        spool.flush()
        connection = pymysql.connect(
            host=parts.hostname,
            port=parts.port or 3306,
            user=unquote(parts.username or "root"),
            password=unquote(parts.password or ""),
            local_infile=True,
            charset="utf8mb4",
        )
        try:
            with connection.cursor() as cursor:
                cursor.execute("SET time_zone = '+00:00'")
                done = cursor.execute(
                    f"LOAD DATA LOCAL INFILE %s INTO TABLE {table} CHARACTER SET utf8mb4 "
                    "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\n'",
                    (spool.name,),
                )
            connection.commit()
        finally:
            connection.close()
    return int(done)


def sqlite_create(path: str, *tables: str) -> None:
    connection = sqlite3.connect(path)
    try:
        for table in tables:
            connection.execute(f"DROP TABLE IF EXISTS {table}")
            connection.execute(ddl("sqlite", table))
        connection.commit()
    finally:
        connection.close()


def sqlite_empty(path: str, table: str) -> None:
    connection = sqlite3.connect(path)
    try:
        connection.execute(f"DELETE FROM {table}")
        connection.commit()
    finally:
        connection.close()


def sqlite_raw(path: str, parquet: str, table: str, zone: str) -> int:
    """The rows as Python values, bound by one ``executemany`` in one transaction: decimals as
    text, instants as ISO text of their wall clock in ``zone`` (Spark's session time zone: Sluice
    reads a SQLite TIMESTAMP as ``timestamp_ntz``, which Spark's INSERT casts to in that zone),
    booleans as 0/1 (the forms Sluice's reader takes back)."""
    rows = pq.read_table(parquet)
    local = pc.local_timestamp(pc.cast(rows.column("ts"), pa.timestamp("us", zone)))
    rows = rows.set_column(NAMES.index("ts"), "ts", local)
    converters: list[Any] = [
        None,
        None,
        str,
        None,
        lambda v: v.strftime("%Y-%m-%d %H:%M:%S.%f"),
        int,
    ]
    columns = []
    for index, convert in enumerate(converters):
        values = rows.column(index).to_pylist()
        columns.append(values if convert is None else [None if v is None else convert(v) for v in values])
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)", zip(*columns, strict=True))
    finally:
        connection.close()
    return rows.num_rows


def duckdb_create(path: str, *tables: str) -> None:
    import duckdb

    with duckdb.connect(path) as connection:
        for table in tables:
            connection.execute(f"DROP TABLE IF EXISTS {table}")
            connection.execute(ddl("duckdb", table))


def duckdb_empty(path: str, table: str) -> None:
    import duckdb

    with duckdb.connect(path) as connection:
        connection.execute(f"DELETE FROM {table}")


def duckdb_raw(path: str, parquet: str, table: str) -> int:
    """The Arrow table appended by one ``INSERT ... SELECT`` over it (one transaction)."""
    import duckdb

    rows = pq.read_table(parquet)
    with duckdb.connect(path) as connection:
        connection.register("arrow_rows", rows)
        connection.execute(f"INSERT INTO {table} SELECT * FROM arrow_rows")
    return rows.num_rows


def local_fingerprint(engine: str, path: str, table: str) -> str:
    """Row count and an order-free digest of every value, for SQLite or DuckDB."""
    if engine == "sqlite":
        connection = sqlite3.connect(path)
        try:
            found = connection.execute(
                f"SELECT count(*), sum(id), total(score), sum(CAST(amount AS TEXT) = printf('%.2f', amount)), "
                f"sum(amount), sum(length(label)), min(ts), max(ts), sum(flag) FROM {table}"
            ).fetchone()
        finally:
            connection.close()
    else:
        import duckdb

        with duckdb.connect(path, read_only=True) as connection:
            found = connection.execute(
                f"SELECT count(*), sum(hash(id, score, amount, label, ts, flag) % 1000000007) FROM {table}"
            ).fetchone()
    assert found is not None
    return f"{found[0]} rows, digest {'/'.join(str(v) for v in found[1:])}"


def data_file(data_dir: str, name: str) -> str:
    return os.path.abspath(os.path.join(data_dir, name))
