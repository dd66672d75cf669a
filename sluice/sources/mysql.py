"""MySQL and MariaDB: catalog from information_schema, Arrow reads through connectorx.

Every read session is set up before the query runs: ``SET SESSION TRANSACTION READ
ONLY``, ``time_zone = '+00:00'`` (TIMESTAMP columns arrive as UTC instants), utf8mb4,
``NO_BACKSLASH_ESCAPES`` and a statement timeout. Partitions are ranges of an integer
primary key; tables without one are read whole.
"""

from __future__ import annotations

import functools
import json
import socket
import ssl
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc

from sluice.dialects.mysql import MariadbDialect, Mysql8Dialect
from sluice.errors import BindError, ConfigError, SourceError, no_such_table
from sluice.scan.statistics import TableStatistics
from sluice.sources.arrow import conform, strict_booleans
from sluice.sources.base import ReadTask, SqlSource, key_ranges
from sluice.sources.rust_panics import panic_reports_held_back
from sluice.timeouts import waited
from sluice.types import Column, Kind, SparkType, TableSchema

if TYPE_CHECKING:
    import pymysql

    from sluice.scan.spec import ScanSpec

#: the join compares names as bytes: MariaDB joins information_schema names case-insensitively
#: even where the server keeps ``Cs`` and ``cs`` apart (lower_case_table_names = 0)
_DESCRIBE = """
SELECT c.COLUMN_NAME, c.DATA_TYPE, c.COLUMN_TYPE, c.IS_NULLABLE, c.CHARACTER_SET_NAME, c.COLLATION_NAME,
       c.NUMERIC_PRECISION, c.NUMERIC_SCALE, c.COLUMN_KEY, t.TABLE_ROWS, t.TABLE_TYPE
FROM information_schema.COLUMNS c
JOIN information_schema.TABLES t ON BINARY t.TABLE_SCHEMA = BINARY c.TABLE_SCHEMA AND BINARY t.TABLE_NAME = BINARY c.TABLE_NAME
WHERE c.TABLE_SCHEMA = %s AND c.TABLE_NAME = %s
ORDER BY c.ORDINAL_POSITION
"""
#: a read's check that the table is as planned: the columns only, with _DESCRIBE's conditions
#: (MariaDB opens just that table's definition, by name as the server keeps names apart) and
#: no join (joining TABLES scans every database's tables: ~25 ms a read)
_VERIFY = """
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME, NUMERIC_PRECISION, NUMERIC_SCALE
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s
ORDER BY ORDINAL_POSITION
"""
#: the columns that lead an index of a table (the planner probes them and estimates them from the index)
_INDEXED = (
    "SELECT DISTINCT COLUMN_NAME FROM information_schema.STATISTICS "
    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND SEQ_IN_INDEX = 1"
)
#: the columns MariaDB keeps engine-independent statistics for (ANALYZE TABLE ... PERSISTENT)
_COLUMN_STATS = "SELECT column_name FROM mysql.column_stats WHERE db_name = %s AND table_name = %s"
_INTEGERS = {
    "tinyint": (8, "tinyint"),
    "smallint": (16, "smallint"),
    "mediumint": (24, "int"),
    "int": (32, "int"),
    "bigint": (64, "bigint"),
}
_UNSIGNED = {8: "smallint", 16: "int", 24: "int", 32: "bigint", 64: "decimal(20,0)"}
_TEXT = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext"}
_BINARY = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
#: exceptions that must pass through untouched (everything else from the driver is a source error)
_STOPS = (KeyboardInterrupt, SystemExit, GeneratorExit)
_SIMPLE = {"float": "float", "double": "double", "date": "date", "datetime": "timestamp_ntz", "timestamp": "timestamp"}


#: every session's sql_mode: the server's own (what its SQL means there), plus no backslash escapes
#: in literals (the dialect renders none); a writing session adds strictness (sluice/write/mysql.py)
SQL_MODE = "CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"


class MysqlSource(SqlSource):
    """``mysql://user@host:3306/database`` (MariaDB and MySQL 8)."""

    dialect = MariadbDialect()
    #: connectorx holds the GIL while the server works on the query (a 6 s COUNT(*) froze every
    #: other Python thread of the driver for 6 s)
    holds_gil_while_reading = True

    def __init__(self, name: str, url: str, **options: Any) -> None:
        super().__init__(name, url, **options)
        self.database = self.parsed.database
        if not self.parsed.host:
            raise ConfigError(
                f"source {name!r}: MySQL URLs look like mysql://user@host:3306/database, not {self.display_url}"
            )

    @property
    def default_schema(self) -> str | None:  # type: ignore[override]  # the other sources' class attribute is the URL's database here
        return self.database

    #: the server's setting (read by :meth:`check`): 0 compares database and table names as
    #: written, 1 and 2 in lower case
    lower_case_table_names: int = 0

    def name_key(self, name: str) -> str:
        return name if int(self.lower_case_table_names) == 0 else name.lower()

    # ------------------------------------------------------------ connections
    def estimated_rows(self, spec: ScanSpec) -> int | None:
        """The server's estimate of the rows the pushed query *returns* (EXPLAIN, nothing run):
        each table's rows examined times the share its conditions keep (``filtered``, a
        percentage), from ``EXPLAIN FORMAT=JSON``, which both servers give it in (MariaDB's
        tabular EXPLAIN has no ``filtered``; MySQL 8 has no ``EXPLAIN EXTENDED``). ``rows`` alone
        is rows examined: a 100-row filter on an unindexed column of a 1M-row table would read
        as 1M rows. MariaDB knows an unindexed column's selectivity only from its histograms
        (``ANALYZE TABLE ... PERSISTENT FOR ALL``); without them it says 100%."""
        try:
            connection = self._catalog()
            try:
                with connection.cursor() as cursor:
                    cursor.execute("EXPLAIN FORMAT=JSON " + spec.query(self))
                    return returned_rows(json.loads(cursor.fetchone()[0]))
            finally:
                connection.close()
        except Exception:  # noqa: BLE001 - an estimate only sizes the read; the read reports real failures
            return None

    def statistics(self, table: TableSchema) -> TableStatistics | None:
        """MariaDB's statistics for ``table``: the columns leading an index
        (information_schema.STATISTICS) and those with engine-independent statistics
        (``mysql.column_stats``, written by ``ANALYZE TABLE ... PERSISTENT``). MariaDB joins
        by nested loops only (no hash join at the default ``join_cache_level``) and sees a
        filter's selectivity only through these, so the join cost rule needs them. MySQL 8
        (hash joins, other statistics) is not measured: None, its joins are pushed."""
        if isinstance(self.dialect, Mysql8Dialect):
            return None
        schema = table.schema or self.database
        connection = self._catalog()
        try:
            with connection.cursor() as cursor:
                cursor.execute(_INDEXED, (schema, table.name))
                indexed = frozenset(str(row[0]).lower() for row in cursor.fetchall())
                try:
                    cursor.execute(_COLUMN_STATS, (schema, table.name))
                    histograms = frozenset(str(row[0]).lower() for row in cursor.fetchall())
                except Exception:  # noqa: BLE001 - no right to read mysql.column_stats: as if none were kept
                    histograms = frozenset()
        finally:
            connection.close()
        remedy = f"`ANALYZE TABLE {schema}.{{table}} PERSISTENT FOR COLUMNS ({{columns}}) INDEXES ()`"
        return TableStatistics(indexed, histograms, remedy)

    def _catalog(self):
        """A PyMySQL session for catalog queries; connecting and the login are bounded by
        ``connect_timeout_s``. PyMySQL's ``connect_timeout`` covers the TCP connect only: the
        server's greeting and the login are read under ``read_timeout``, so that is the connect
        timeout until the session is up, and the statement timeout after."""
        import pymysql

        parts = self.parsed
        try:
            connection = _session_class()(
                host=parts.host,
                port=parts.port or 3306,
                user=parts.username or "root",
                password=self.credential or "",
                database=self.database,
                charset="utf8mb4",
                connect_timeout=self.connect_timeout_s,
                read_timeout=self.connect_timeout_s,
                write_timeout=self.connect_timeout_s,
                autocommit=True,
                init_command="SET SESSION TRANSACTION READ ONLY",
                program_name="sluice",
            )
        except pymysql.MySQLError as error:
            message = self.masked(str(error.args[-1]))
            if "timed out" in message:
                message = f"{message}: {waited('connecting and logging in', self.connect_timeout_s)}"
            raise SourceError(self.name, f"cannot connect to {self.display_url}: {message}") from None
        # applied at the next read/write
        connection._read_timeout = connection._write_timeout = self.statement_timeout_s  # type: ignore[attr-defined]  # private: PyMySQL has no setter for an open connection's timeouts
        return connection

    def check(self) -> None:
        connection = self._catalog()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT VERSION(), @@lower_case_table_names")
                version, self.lower_case_table_names = cursor.fetchone()
        finally:
            connection.close()
        # MySQL 8 names its NO PAD binary collation differently; everything else is shared.
        self.dialect = MariadbDialect() if "mariadb" in version.lower() else Mysql8Dialect()

    def _session_setup(self) -> list[str]:
        return [
            "SET SESSION TRANSACTION READ ONLY",
            "SET time_zone = '+00:00'",
            "SET NAMES utf8mb4",
            f"SET SESSION sql_mode = {SQL_MODE}",
            self.dialect.statement_timeout(self.statement_timeout_s),
        ]

    def _reader_url(self) -> str:
        parts = self.parsed
        user = _quote(parts.username or "root")
        password = self.credential
        auth = f"{user}:{_quote(password)}" if password else user
        # prefer_socket=false: on a loopback address connectorx would otherwise reconnect to the
        # Unix socket the server names (@@socket), which on this machine may be another server
        # than the one behind the port (an SSH tunnel, a proxy)
        return f"mysql://{auth}@{parts.url_host}:{parts.port or 3306}/{_quote(self.database or '')}?prefer_socket=false"

    # ------------------------------------------------------------ catalog
    def describe(self, schema: str | None, table: str) -> TableSchema:
        schema = schema or self.default_schema
        if schema is None:
            raise BindError(f"source {self.name!r}: name the database (my.database.table) or put it in the URL")
        connection = self._catalog()
        try:
            with connection.cursor() as cursor:
                cursor.execute(_DESCRIBE, (schema, table))
                rows = cursor.fetchall()
                if not rows:
                    cursor.execute(
                        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (schema,)
                    )
                    raise no_such_table(self.name, schema, table, (r[0] for r in cursor.fetchall()))
        finally:
            connection.close()
        columns = tuple(catalog_column(row) for row in rows)
        keys = [row for row in rows if row[8] == "PRI"]
        split = keys[0][0] if len(keys) == 1 and keys[0][1] in _INTEGERS and rows[0][10] == "BASE TABLE" else None
        return TableSchema(self.name, schema, table, columns, row_estimate=int(rows[0][9] or 0), split_column=split)

    def describe_query(self, sql: str) -> tuple[Column, ...]:
        """The result's columns from the field metadata the server sends for the query run with
        LIMIT 0 (read-only session), spelled as information_schema.COLUMNS rows and typed by
        :func:`catalog_column` as :meth:`describe` types a table's (collations by their id)."""
        import pymysql

        connection = self._catalog()
        try:
            with connection.cursor() as cursor:
                try:
                    cursor.execute(f"SELECT * FROM ({sql}) AS sluice_query LIMIT 0")
                except pymysql.MySQLError as error:
                    raise SourceError(self.name, f"query failed: {self.masked(str(error.args[-1])).strip()}") from None
                fields = list(
                    cursor._result.fields if cursor._result is not None else ()
                )  # PyMySQL keeps the server's field packets (charset, flags) only there
                collations = {
                    field.charsetnr: _collation(cursor, field.charsetnr)
                    for field in fields
                    if field.charsetnr != _BINARY_CHARSET
                }
        finally:
            connection.close()
        return tuple(catalog_column(_field_row(field, collations.get(field.charsetnr))) for field in fields)

    def read_task(self, spec: ScanSpec, partition_predicate: str | None, index: int, schema: pa.Schema) -> ReadTask:
        task = super().read_task(spec, partition_predicate, index, schema)
        guarded = self.guarded_request(spec, partition_predicate)
        return task if guarded is None else replace(task, request=guarded, guarded=True)

    def select_expression(self, column_name: str, table: TableSchema) -> str:
        column = table.column(column_name)
        quoted = self.dialect.render_identifier(column.name)
        if column.remote_type.startswith(("bit(", "year")):  # BIT and YEAR are read as the numbers they hold
            quoted = f"CAST({quoted} AS {'UNSIGNED' if column.remote_type.startswith('bit(') else 'SIGNED'})"
        # decimals travel as text: connectorx reads them as decimal(38,10), losing digits
        if column.read_as_text:
            return f"CAST({quoted} AS CHAR)"
        return self.select_value(quoted, column.type)

    def select_value(self, sql: str, spark_type: SparkType) -> str:
        return f"CAST({sql} AS CHAR)" if spark_type.kind is Kind.DECIMAL else sql

    # ------------------------------------------------------------ reading
    def split(self, table: TableSchema, count: int) -> list[str | None]:
        if count <= 1 or table.split_column is None:
            return [None]
        key = self.dialect.render_identifier(table.split_column)
        connection = self._catalog()
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT MIN({key}), MAX({key}) FROM {self.dialect.quote_table(table.schema, table.name)}"
                )
                low, high = cursor.fetchone()
        finally:
            connection.close()
        return key_ranges(key, low, high, count)

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        """The task's rows from connectorx, as Arrow batches.

        connectorx reports a failure mid-stream (a server error, a value it cannot convert)
        as a Rust panic, whose report Rust writes to stderr before Python sees it: the read
        runs with such reports held back (:mod:`sluice.sources.rust_panics`), so the one
        :class:`SourceError` is all the user sees.
        """
        self._verify(task)
        with panic_reports_held_back():
            yield from self._stream(task)

    def _stream(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        import connectorx

        try:
            reader = connectorx.read_sql(
                self._reader_url(),
                task.request,
                return_type="arrow_stream",
                batch_size=self.batch_rows,
                pre_execution_query=self._session_setup(),
            )
        except _STOPS:
            raise
        except BaseException as error:  # noqa: BLE001 - connectorx raises RuntimeErrors and Rust panics
            raise SourceError(
                self.name, f"query failed: {self.timeout_named(self.masked(str(error)).strip())}"
            ) from None
        try:
            for batch in reader:
                marks = batch.column(batch.num_columns - 1) if task.guarded else None
                if marks is not None:  # rows returned only to be checked (SqlSource.guarded_request)
                    batch = batch.select(range(batch.num_columns - 1))
                batch = conform(self.checked(_check_booleans(batch, task, self.name), task), task.schema, task.table)
                yield batch if marks is None else batch.filter(pc.is_null(marks))
        except (SourceError, *_STOPS):
            raise
        except BaseException as error:  # noqa: BLE001 - a server error mid-stream arrives as a Rust panic
            raise SourceError(
                self.name, f"read failed: {self.timeout_named(self.masked(str(error)).strip())}"
            ) from None

    def _verify(self, task: ReadTask) -> None:
        """Log in with PyMySQL and fail, naming the column, if the table changed since it was planned.

        The login fails at once where connectorx's pool retries an unreachable server for
        30 s. MySQL compares text with numbers by converting, so a stale plan would return
        wrong rows rather than fail.
        """
        import pymysql

        connection = self._catalog()
        found = []
        try:
            for table in task.planned_tables():
                with connection.cursor() as cursor:
                    try:
                        cursor.execute(_VERIFY, (table.schema, table.name))
                    except pymysql.MySQLError as error:
                        raise SourceError(
                            self.name, f"cannot read the catalog of {table.qualified_name}: {self.masked(str(error))}"
                        ) from None
                    found.append((table, cursor.fetchall()))
        finally:
            connection.close()
        for table, rows in found:
            self.ensure_unchanged(table, [catalog_column(row) for row in rows] if rows else None)


@functools.cache
def _session_class() -> type[pymysql.connections.Connection[Any]]:
    """PyMySQL's connection, with the TLS context of its PREFERRED mode (no TLS option given:
    TLS if the server offers it, else plain) made only when a server offers TLS, and then once
    per process. PyMySQL 1.2 builds that context for every connection, loading the system's
    CA certificates (~20 ms), even for a server without TLS; every planned scan and every read
    logs in, so that was most of a small query's fixed cost. The context is the same each
    time (no CA, no certificate check), and an ``ssl.SSLContext`` is made to be shared."""
    import pymysql

    class Session(pymysql.connections.Connection):
        def _create_ssl_ctx(self, sslp: object) -> object:
            make = super()._create_ssl_ctx  # type: ignore[misc]  # PyMySQL's private method (1.1, 1.2), not in its stubs
            if isinstance(sslp, dict) and not sslp:
                return _PreferredTls(lambda: make(sslp))
            return make(sslp)

    return Session


class _PreferredTls:
    """Stands in for PyMySQL's PREFERRED-mode ``SSLContext`` (PyMySQL only calls ``wrap_socket``,
    and only when the server offers TLS): the real context is made at the first TLS handshake
    of the process and shared by every later one."""

    context: ssl.SSLContext | None = None

    def __init__(self, make: Callable[[], ssl.SSLContext]) -> None:
        self._make = make

    def wrap_socket(self, sock: socket.socket, server_hostname: str | None = None) -> ssl.SSLSocket:
        if _PreferredTls.context is None:
            _PreferredTls.context = self._make()
        return _PreferredTls.context.wrap_socket(sock, server_hostname=server_hostname)


def _quote(text: str) -> str:
    return quote(text, safe="")


#: the server's field type codes (MySQL protocol), as information_schema names the types
_FIELD_TYPES = {
    0: "decimal",
    246: "decimal",
    1: "tinyint",
    2: "smallint",
    9: "mediumint",
    3: "int",
    8: "bigint",
    4: "float",
    5: "double",
    10: "date",
    14: "date",
    12: "datetime",
    7: "timestamp",
    11: "time",
    13: "year",
    16: "bit",
    245: "json",
    255: "geometry",
    15: "varchar",
    253: "varchar",
    254: "char",
    249: "tinytext",
    250: "mediumtext",
    251: "longtext",
    252: "text",
}
_AS_BINARY = {
    "varchar": "varbinary",
    "char": "binary",
    "tinytext": "tinyblob",
    "text": "blob",
    "mediumtext": "mediumblob",
    "longtext": "longblob",
}
_BINARY_CHARSET = 63
_UNSIGNED_FLAG, _ENUM_FLAG, _SET_FLAG, _NOT_NULL_FLAG = 32, 256, 2048, 1


def _collation(cursor: Any, charset_id: int) -> tuple[str, str] | None:
    """(collation, character set) the server numbers ``charset_id``; None when it names none."""
    import pymysql

    for query in (
        "SELECT FULL_COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY WHERE ID = %s",
        "SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE ID = %s",
    ):
        try:
            cursor.execute(query, (charset_id,))
        except pymysql.MySQLError:  # MySQL and MariaDB before 10.10 have no FULL_COLLATION_NAME
            continue
        row = cursor.fetchone()
        if row is not None:
            return str(row[0]), str(row[1])
    return None


def _field_row(field: Any, collation: tuple[str, str] | None) -> tuple:
    """A result field as the information_schema.COLUMNS row :func:`catalog_column` reads."""
    data_type = _FIELD_TYPES.get(field.type_code, "varchar")
    if field.flags & _ENUM_FLAG:
        data_type = "enum"
    elif field.flags & _SET_FLAG:
        data_type = "set"
    elif field.charsetnr == _BINARY_CHARSET and data_type in _AS_BINARY:
        data_type = _AS_BINARY[data_type]
    unsigned = bool(field.flags & _UNSIGNED_FLAG)
    precision, scale = field.length, field.scale
    if data_type == "decimal":
        precision = field.length - (1 if field.scale else 0) - (0 if unsigned else 1)
        column_type = f"decimal({precision},{scale})"
    elif data_type in _INTEGERS or data_type == "bit":
        column_type = f"{data_type}({field.length})"
    elif data_type in ("datetime", "timestamp", "time") and field.scale:
        column_type = f"{data_type}({field.scale})"
    else:
        column_type = data_type
    if unsigned and data_type in _INTEGERS | {"decimal": None}:
        column_type += " unsigned"
    nullable = "NO" if field.flags & _NOT_NULL_FLAG else "YES"
    charset, name = (collation[1], collation[0]) if collation is not None else (None, None)
    return (field.name, data_type, column_type, nullable, charset, name, precision, scale)


def catalog_column(row: tuple) -> Column:
    """The column as Spark reads it, from an information_schema.COLUMNS row (see _DESCRIBE)."""
    name, data_type, column_type, nullable, charset, collation, precision, scale = row[:8]
    data_type, column_type = data_type.lower(), column_type.lower()
    common = {"name": name, "remote_type": column_type, "nullable": nullable == "YES"}
    if column_type == "tinyint(1)":
        return Column(type=SparkType("boolean"), **common)
    if data_type in _INTEGERS:
        bits, spark = _INTEGERS[data_type]
        return Column(type=SparkType(_UNSIGNED[bits] if "unsigned" in column_type else spark), **common)
    if data_type == "decimal":
        if int(precision) <= 38:
            return Column(type=SparkType(f"decimal({int(precision)},{int(scale)})"), **common)
        return Column(
            type=SparkType("string"),
            read_as_text=True,
            unpushable=f"{column_type} has more digits than Spark's decimal(38); read as text",
            **common,
        )
    if data_type in _SIMPLE:
        return Column(type=SparkType(_SIMPLE[data_type]), **common)
    if data_type == "bit":  # b'10000001' is 129: bit strings are unsigned numbers (as Spark's JDBC reader has them)
        return Column(
            type=SparkType("bigint" if int(precision) < 64 else "decimal(20,0)"),
            **common,
            unpushable=f"{column_type} compares as a binary string in MySQL; compared by Spark",
        )
    if data_type == "year":
        return Column(
            type=SparkType("int"),
            **common,
            unpushable="MySQL reads a two-digit number compared with a YEAR as a year (24 is 2024); compared by Spark",
        )
    if data_type in _TEXT:
        return Column(
            type=SparkType("string"), collation=collation, case_insensitive=(collation or "").endswith("_ci"), **common
        )
    if data_type in _BINARY:
        return Column(type=SparkType("binary"), **common)
    reason = (
        "ENUM and SET compare by member position, not by text"
        if data_type in ("enum", "set")
        else f"{column_type} is read as its text form; {data_type} compares the typed value"
    )
    return Column(type=SparkType("string"), read_as_text=True, collation=collation, unpushable=reason, **common)


def _check_booleans(batch: pa.RecordBatch, task: ReadTask, source: str) -> pa.RecordBatch:
    """TINYINT(1) may hold any small integer: refuse what is not 0 or 1 instead of guessing."""
    arrays = list(batch.columns)
    for index, field in enumerate(task.schema):
        if pa.types.is_boolean(field.type) and pa.types.is_integer(arrays[index].type):
            try:
                arrays[index] = strict_booleans(arrays[index])
            except ValueError:
                stored = arrays[index].drop_null()
                value = pc.filter(stored, pc.invert(pc.is_in(stored, pa.array([0, 1], stored.type))))[0]
                where = f" of {task.table.qualified_name}" if task.table is not None else ""
                raise SourceError(
                    source,
                    f"column {field.name!r}{where} is TINYINT(1) but holds {value.as_py()}, a value other "
                    "than 0 or 1; it cannot be read as a boolean",
                ) from None
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def returned_rows(plan: object) -> int:
    """The rows an ``EXPLAIN FORMAT=JSON`` plan expects to return: every table access's rows
    examined (MariaDB ``rows``, MySQL 8 ``rows_examined_per_scan``) times its ``filtered``
    percentage (a number in MariaDB, a string in MySQL 8), summed."""
    if isinstance(plan, list):
        return sum(returned_rows(item) for item in plan)
    if not isinstance(plan, dict):
        return 0
    total = 0
    for key, value in plan.items():
        if key == "table" and isinstance(value, dict):
            examined = value.get("rows", value.get("rows_examined_per_scan"))
            if examined is not None:
                total += round(float(examined) * float(value.get("filtered", 100)) / 100)
        total += returned_rows(value)
    return total
