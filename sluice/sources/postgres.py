"""PostgreSQL: catalog discovery with psycopg, Arrow reads through ADBC (binary COPY).

Every session is read-only (``default_transaction_read_only``) with a statement timeout;
partitions are ranges of physical blocks (``ctid``), which PostgreSQL 14+ scans with a
TID Range Scan, so any table splits evenly whatever its keys.
"""

from __future__ import annotations

import math
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote, urlencode

import pyarrow as pa
import sqlglot
from sqlglot import exp

from sluice.dialects.postgres import PostgresDialect
from sluice.errors import ConfigError, SourceError, no_such_table
from sluice.sources import pg_snapshot
from sluice.sources.arrow import conform
from sluice.sources.base import ReadTask, SqlSource
from sluice.timeouts import URL_OPTION, waited
from sluice.types import Column, Kind, SparkType, TableSchema

if TYPE_CHECKING:
    from sluice.scan.spec import ScanSpec

_SIMPLE_TYPES = {
    "int2": "smallint",
    "int4": "int",
    "int8": "bigint",
    "float4": "float",
    "float8": "double",
    "bool": "boolean",
    "text": "string",
    "varchar": "string",
    "bpchar": "string",
    "name": "string",
    "date": "date",
    "timestamp": "timestamp_ntz",
    "timestamptz": "timestamp",
    "bytea": "binary",
}
#: Spark's calendar as PostgreSQL spells its bounds, per kind (a session's TimeZone is UTC)
_CALENDAR = {
    Kind.DATE: ("0001-01-01", "9999-12-31", "DATE"),
    Kind.TIMESTAMP_NTZ: ("0001-01-01 00:00:00", "9999-12-31 23:59:59.999999", "TIMESTAMP"),
    Kind.TIMESTAMP: ("0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999999+00", "TIMESTAMPTZ"),
}
_DESCRIBE = """
SELECT a.attname, t.typname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       co.collname, co.collisdeterministic, c.reltuples::bigint
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_collation co ON co.oid = a.attcollation
WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped
  AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
ORDER BY a.attnum
"""


class PostgresSource(SqlSource):
    dialect = PostgresDialect()
    default_schema = "public"

    def __init__(self, name: str, url: str, **options: Any) -> None:
        super().__init__(name, url, **options)
        if "connect_timeout" in self.parsed.options:  # two settings for one wait: say which one counts
            raise ConfigError(
                f"source {name!r}: give the connect timeout as {URL_OPTION}=SECONDS "
                f"(Sluice sets libpq's connect_timeout from it), not connect_timeout"
            )

    # ------------------------------------------------------------ connections
    def _libpq_url(self) -> str:
        """The URL with read-only session settings and the password (never shown).

        libpq's ``connect_timeout`` (connecting, TLS negotiation and the login) takes whole
        seconds and waits at least 2 whatever it is given, so ``connect_timeout_s`` is rounded
        up to that."""
        parts = self.parsed
        query = parts.options
        query.pop("partitions", None)
        query.pop(URL_OPTION, None)
        timeout_ms = int(self.statement_timeout_s * 1000)
        # client_connection_check_interval: a backend whose reader died (a cancelled Spark
        # task's worker is killed) stops within a second instead of running to the timeout
        query["options"] = (
            query.get("options", "") + f" -c default_transaction_read_only=on -c statement_timeout={timeout_ms}"
            " -c standard_conforming_strings=on -c TimeZone=UTC -c client_connection_check_interval=1000"
        ).strip()
        query["connect_timeout"] = str(max(2, math.ceil(self.connect_timeout_s)))  # see _connect_failure
        query.setdefault("application_name", "sluice")
        user = quote(parts.username, safe="") if parts.username is not None else ""
        secret = self.credential
        userinfo = f"{user}:{quote(secret, safe='')}@" if secret else (f"{user}@" if user else "")
        return f"postgresql://{userinfo}{parts.netloc_host}{parts.path}?{urlencode(query, quote_via=quote)}"

    def _connect_failure(self, error: Exception) -> SourceError:
        """The driver's reason, masked; a connect timeout that ran out is named."""
        message = self.masked(str(error)).strip()
        if "timeout expired" in message:
            libpq_s = max(2, math.ceil(self.connect_timeout_s))
            rounded = (
                f"; libpq waits whole seconds, at least 2: {libpq_s} s" if libpq_s != self.connect_timeout_s else ""
            )
            message = f"{message}: {waited('connecting and logging in', self.connect_timeout_s)}{rounded}"
        return SourceError(self.name, f"cannot connect to {self.display_url}: {message}")

    def _catalog(self):
        import psycopg

        try:
            return psycopg.connect(self._libpq_url(), autocommit=True)
        except psycopg.OperationalError as error:
            raise self._connect_failure(error) from None

    def check(self) -> None:
        with self._catalog() as connection:
            connection.execute("SELECT 1")

    # ------------------------------------------------------------ catalog
    def describe(self, schema: str | None, table: str) -> TableSchema:
        schema = schema or self.default_schema
        with self._catalog() as connection:
            rows = connection.execute(_DESCRIBE, (schema, table)).fetchall()
            if not rows:
                names = connection.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
                ).fetchall()
                raise no_such_table(self.name, schema, table, (r[0] for r in names))
            default_collation = connection.execute(
                "SELECT coalesce(nullif(daticulocale, ''), datcollate) FROM pg_database WHERE datname = current_database()"
            ).fetchone()[0]
        columns = tuple(self._column(row, default_collation) for row in rows)
        return TableSchema(self.name, schema, table, columns, row_estimate=max(0, int(rows[0][6])))

    def describe_query(self, sql: str) -> tuple[Column, ...]:
        """The result's columns from the row description of the query run with LIMIT 0 (in the
        session's read-only transaction), each type named by ``format_type`` as the catalog names
        a table's, so typed as :meth:`describe` types them; text in the database's collation."""
        import psycopg

        with self._catalog() as connection:
            try:
                cursor = connection.execute(f"SELECT * FROM ({sql}) AS sluice_query LIMIT 0")
            except psycopg.Error as error:
                raise SourceError(self.name, f"query failed: {self.masked(str(error)).strip()}") from None
            result = cursor.pgresult
            assert result is not None  # a SELECT has a result
            described = [
                (column.name, result.ftype(i), result.fmod(i)) for i, column in enumerate(cursor.description or ())
            ]
            default_collation = connection.execute(
                "SELECT coalesce(nullif(daticulocale, ''), datcollate) FROM pg_database WHERE datname = current_database()"
            ).fetchone()[0]
            rows = [
                (
                    name,
                    *connection.execute(
                        "SELECT typname, format_type(oid, %s) FROM pg_type WHERE oid = %s", (mod, oid)
                    ).fetchone(),
                    False,
                    "default",
                    True,
                    0,
                )
                for name, oid, mod in described
            ]
        return tuple(self._column(row, default_collation) for row in rows)

    def _column(self, row: tuple, default_collation: str) -> Column:
        name, typname, formatted, not_null, collation, deterministic, _ = row
        collation = default_collation if collation == "default" else collation
        common = {"name": name, "remote_type": formatted, "nullable": not not_null}
        if typname == "numeric":
            match = re.fullmatch(r"numeric\((\d+),(\d+)\)", formatted)
            if match and int(match[1]) <= 38:
                return Column(type=SparkType(f"decimal({match[1]},{match[2]})"), **common)
            return Column(
                type=SparkType("decimal(38,10)"),
                unpushable="unconstrained numeric is read as decimal(38,10) (a value with "
                "more digits, NaN or Infinity fails the read); a remote comparison could skip such a value",
                **common,
            )
        if typname in _SIMPLE_TYPES:
            spark = SparkType(_SIMPLE_TYPES[typname])
            if spark.kind.value == "string":
                return Column(
                    type=spark,
                    collation=collation,
                    padded=typname == "bpchar",
                    case_insensitive=deterministic is False,
                    **common,
                )
            return Column(type=spark, **common)
        return Column(
            type=SparkType("string"),
            read_as_text=True,
            unpushable=f"{formatted} is read as its text form; PostgreSQL compares the typed value",
            **common,
        )

    def select_expression(self, column_name: str, table: TableSchema) -> str:
        column = table.column(column_name)
        quoted = self.dialect.render_identifier(column.name)
        # numeric travels as text: ADBC's own binary-numeric-to-text step costs more than the
        # server's (bench: 0.56x on a 4M-row scan); conform() casts the text to decimal128.
        return f"{quoted}::text" if column.read_as_text else self.select_value(quoted, column.type)

    def select_value(self, sql: str, spark_type: SparkType) -> str:
        # ``sql`` is a column or a function call, which bind tighter than ``::``
        return f"{sql}::text" if spark_type.kind is Kind.DECIMAL else sql

    def refused(self, column: Column) -> exp.Expression | None:
        """Dates and timestamps outside Spark's 0001-01-01..9999-12-31 (``infinity``, BC, year
        10000 and later) and an unconstrained numeric's values decimal(38,10) cannot hold (NaN,
        Infinity, 28 integer digits, more than 10 decimals)."""
        quoted = self.dialect.render_identifier(column.name)
        if column.remote_type.startswith("numeric") and column.unpushable is not None:  # read as decimal(38,10)
            sql = f"abs({quoted}) >= 1e28 OR {quoted} <> round({quoted}, 10)"
        elif column.type.kind in _CALENDAR:
            low, high, kind = _CALENDAR[column.type.kind]
            sql = f"NOT ({quoted} BETWEEN CAST('{low}' AS {kind}) AND CAST('{high}' AS {kind}))"
        else:
            return None
        return cast(exp.Expression, sqlglot.parse_one(sql, read="postgres"))  # typed as the Expr mixin

    # ------------------------------------------------------------ reading
    def split(self, table: TableSchema, count: int) -> list[str | None]:
        if count <= 1:
            return [None]
        with self._catalog() as connection:
            blocks = connection.execute(
                "SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int)::bigint, c.relkind "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
                (table.schema, table.name),
            ).fetchone()
        if blocks is None or blocks[1] != "r" or blocks[0] < count:
            return [None]  # views, partitioned parents and tiny tables are read whole
        step = -(-blocks[0] // count)
        bounds = [i * step for i in range(1, count)]
        parts: list[str | None] = []
        low = None
        for high in bounds + [None]:
            conditions = []
            if low is not None:
                conditions.append(f"ctid >= '({low},0)'::tid")
            if high is not None:
                conditions.append(f"ctid < '({high},0)'::tid")
            parts.append(" AND ".join(conditions))
            low = high
        return parts

    def estimated_rows(self, spec: ScanSpec) -> int | None:
        """PostgreSQL's own estimate of the pushed query's rows (EXPLAIN, nothing run)."""
        try:
            with self._catalog() as connection:
                plan = connection.execute("EXPLAIN (FORMAT JSON) " + spec.query(self)).fetchone()[0]
            return int(plan[0]["Plan"]["Plan Rows"])
        except Exception:  # noqa: BLE001 - an estimate only sizes the read; the read reports real failures
            return None

    def tasks(self, spec: ScanSpec) -> list[ReadTask]:
        """The partitions' tasks, sharing one snapshot token when there are several."""
        tasks = super().tasks(spec)
        if len(tasks) < 2:
            return tasks
        group = uuid.uuid4().hex
        return [replace(task, snapshot_group=group, group_size=len(tasks)) for task in tasks]

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        import adbc_driver_manager

        try:
            connection = adbc_driver_manager.AdbcConnection(_database(self._libpq_url()))
        except Exception as error:  # noqa: BLE001 - driver errors have no common base
            raise self._connect_failure(error) from None
        try:
            statement = adbc_driver_manager.AdbcStatement(connection)
            try:
                try:
                    if task.snapshot_group is not None:
                        pg_snapshot.join(connection, self._libpq_url(), task, self.statement_timeout_s, self.name)
                    statement.set_options(**{BATCH_SIZE_HINT: str(BATCH_HINT_BYTES)})
                    statement.set_sql_query(task.request)
                    stream, _ = statement.execute_query()
                    with pa.RecordBatchReader.from_stream(stream) as reader:
                        for batch in reader:
                            yield conform(self.checked(batch, task), task.schema, task.table)
                except SourceError:
                    raise
                except Exception as error:  # noqa: BLE001
                    raise SourceError(
                        self.name, f"query failed: {self.timeout_named(self.masked(str(error)).strip())}"
                    ) from None
            finally:
                statement.close()
        finally:
            connection.close()


#: the Arrow bytes ADBC gathers before it hands a batch on (its default: 16 MiB). At 1 MiB a
#: 250,000-row partition arrives as 17 batches, the first after 31 ms, instead of 2 batches, the
#: first after 450 ms of a 451 ms read: Spark starts on the first rows while PostgreSQL still
#: sends the rest, in the same total time (docs/benchmarks.md, "Read partitions")
BATCH_HINT_BYTES = 1 << 20
#: ``adbc_driver_postgresql.StatementOptions.BATCH_SIZE_HINT_BYTES`` (ADBC 0.9+), not imported:
#: the driver loads only where a read runs
BATCH_SIZE_HINT = "adbc.postgresql.batch_size_hint_bytes"

_databases: dict[str, object] = {}
_databases_lock = threading.Lock()


def _database(libpq_url: str):
    """The ADBC database for ``libpq_url``, made once per process.

    Making one costs ~30 ms (the driver logs in and loads the server's type catalog); a
    connection made from it costs ~2 ms and is a fresh session with the URL's read-only
    settings. Python workers are reused across Spark tasks, so a query's reads skip that
    fixed cost after the first. The database holds no open session. Every column Sluice
    reads has a built-in type (others are selected ``::text``), so the cached type catalog
    never needs a type created later.
    """
    import adbc_driver_postgresql

    with _databases_lock:
        database = _databases.get(libpq_url)
        if database is None:
            database = _databases[libpq_url] = adbc_driver_postgresql.connect(libpq_url)
        return database
