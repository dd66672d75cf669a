"""SQLite files: declared types and collations from the schema, read-only reads by rowid.

SQLite columns have affinity, not types: a non-STRICT INTEGER column may hold text. The
reader converts every value to the declared type's Spark type (``sqlite_values.py``) and
fails, naming table, column and row, when a value does not fit, so a row is never
silently dropped or re-typed.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp

from sluice.dialects.sqlite import SqliteDialect
from sluice.errors import BindError, SourceError, no_such_table
from sluice.sources import sqlite_arrow
from sluice.sources.arrow import strict_booleans
from sluice.sources.base import ReadTask, SqlSource, absolute_file_url, ascii_folded, file_path, key_ranges
from sluice.sources.sqlite_values import Unfit, decimal_array, narrowed, spark_type_for
from sluice.types import Column, TableSchema

if TYPE_CHECKING:
    from sluice.scan.spec import ScanSpec

#: "no value known" in messages (None is a value: NULL)
_NOTHING = object()


class Queries(Protocol):
    """What the catalog queries use of a connection: sqlite3's, or the ADBC path's adapter."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...


#: the declared type a passthrough's undeclared result column reads as, by its values' storage classes
_DECLARED_BY_CLASSES = {
    frozenset({"integer"}): "INTEGER",
    frozenset({"real"}): "REAL",
    frozenset({"integer", "real"}): "REAL",
    frozenset({"text"}): "TEXT",
    frozenset({"blob"}): "BLOB",
}


class SqliteSource(SqlSource):
    dialect = SqliteDialect()
    default_schema = "main"
    catalog_query = (
        "SELECT schema, name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' ORDER BY 2"
    )

    def __init__(self, name: str, url: str, **options: Any) -> None:
        super().__init__(name, url, **options)
        self.path = file_path(name, url, "SQLite", ".db")

    @property
    def portable_url(self) -> str:
        return absolute_file_url(self.url, self.path)

    def name_key(self, name: str) -> str:
        """SQLite matches identifiers ignoring ASCII case only."""
        return ascii_folded(name)

    def ensure_exists(self) -> None:
        """Opening a missing file read-only fails with a vaguer message; say which file is missing."""
        if not os.path.exists(self.path):
            raise SourceError(self.name, f"SQLite file {self.path} does not exist")

    def _connect(self) -> sqlite3.Connection:
        self.ensure_exists()
        try:
            connection = sqlite3.connect(f"file:{quote(self.path)}?mode=ro", uri=True, check_same_thread=False)
        except sqlite3.Error as error:
            raise SourceError(self.name, f"cannot open {self.path}: {error}") from None
        connection.execute(f"PRAGMA busy_timeout = {int(self.statement_timeout_s * 1000)}")
        # mode=ro binds the main file only; ATTACH would open another read-write
        if sys.version_info >= (3, 11):
            connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        else:  # no setlimit before Python 3.11: the authorizer refuses ATTACH instead
            connection.set_authorizer(_no_attach)
        return connection

    def check(self) -> None:
        """Open the file and read its schema; a writer's lock is waited for ``connect_timeout_s``
        here (the statement timeout bounds the waits of reads)."""
        with self._connect() as connection:
            connection.execute(f"PRAGMA busy_timeout = {int(self.connect_timeout_s * 1000)}")
            try:
                connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.DatabaseError as error:
                if _locked(error):
                    raise SourceError(
                        self.name, self._lock_named(str(error), "connect_timeout_s", self.connect_timeout_s)
                    ) from None
                raise SourceError(self.name, f"{self.path} is not a readable SQLite database: {error}") from None

    def describe(self, schema: str | None, table: str) -> TableSchema:
        schema = schema or self.default_schema
        connection = self._connect()
        try:
            return self._describe(connection, schema, table)
        except sqlite3.Error as error:
            raise SourceError(self.name, f"cannot describe {schema}.{table}: {self._explained(error)}") from None
        finally:
            connection.close()

    def describe_query(self, sql: str) -> tuple[Column, ...]:
        """The result's columns as SQLite declares them: a TEMP view of the query (the temp schema
        is the connection's own, writable though the file is opened read-only) described as
        :meth:`describe` describes a view, then gone with the connection."""
        connection = self._connect()
        try:
            connection.execute(f"CREATE TEMP VIEW sluice_query AS SELECT * FROM ({sql}) AS sluice_query")
            columns = self._describe(connection, "temp", "sluice_query", estimate=False).columns
            return self._typed_expressions(connection, columns)
        except sqlite3.Error as error:
            raise SourceError(self.name, f"query failed: {self._explained(error)}") from None
        finally:
            connection.close()

    def _typed_expressions(self, connection: sqlite3.Connection, columns: tuple[Column, ...]) -> tuple[Column, ...]:
        """Columns of the result no table declares (``count(*)``, ``a + 1``) typed by the storage
        classes their values have, one pass over the result: integers only are ``INTEGER``,
        numbers ``REAL``, text ``TEXT``, blobs ``BLOB``; a mix keeps no declared type (read as text,
        each value checked, as a table column without one)."""
        loose = [c for c in columns if c.remote_type == "ANY"]
        if not loose:
            return columns
        select = ", ".join(f"typeof({self.dialect.render_identifier(c.name)})" for c in loose)
        classes: list[set[str]] = [set() for _ in loose]
        for row in connection.execute(f"SELECT DISTINCT {select} FROM temp.sluice_query"):
            for seen, storage in zip(classes, row, strict=True):
                seen.add(storage)
        declared = {}
        for column, seen in zip(loose, classes, strict=True):
            seen.discard("null")
            name = _DECLARED_BY_CLASSES.get(frozenset(seen))
            if name is not None:
                declared[column.name] = replace(column, type=spark_type_for(name), remote_type=name)
        return tuple(declared.get(c.name, c) for c in columns)

    def _describe(self, connection: Queries, schema: str, table: str, estimate: bool = True) -> TableSchema:
        """The table as ``connection`` sees it (a reader checks its plan in its own snapshot, without
        ``estimate``: the row count is for planning only)."""
        listing = connection.execute(
            "SELECT type, strict, wr FROM pragma_table_list WHERE schema = ? AND name = ? COLLATE NOCASE",
            (schema, table),
        ).fetchone()
        if listing is None:
            names = [
                r[0]
                for r in connection.execute(
                    "SELECT name FROM pragma_table_list WHERE schema = ? AND name NOT LIKE 'sqlite_%' ORDER BY 1",
                    (schema,),
                )
            ]
            raise no_such_table(self.name, schema, table, names)
        info = connection.execute(
            'SELECT name, type, "notnull" FROM pragma_table_info(?, ?)', (table, schema)
        ).fetchall()
        ddl_row = connection.execute(
            f"SELECT sql FROM {self.dialect.render_identifier(schema)}.sqlite_master WHERE name = ? COLLATE NOCASE",
            (table,),
        ).fetchone()
        row_id = _row_id_name(listing, {name.lower() for name, _, _ in info})
        rows = self._row_estimate(connection, schema, table, listing[0], row_id) if estimate else None
        collations = _collations(ddl_row[0] if ddl_row else None)
        strict = bool(listing[1])
        columns = []
        for name, declared, not_null in info:
            spark = spark_type_for(declared or "")
            unpushable = None if declared else "column has no declared type (any value allowed); compared by Spark"
            columns.append(
                Column(
                    name=name,
                    type=spark,
                    remote_type=(declared or "ANY") + (" STRICT" if strict else ""),
                    nullable=not not_null,
                    collation=collations.get(name.lower()),
                    unpushable=unpushable,
                )
            )
        return TableSchema(self.name, schema, table, tuple(columns), row_estimate=rows, split_column=row_id)

    def _row_estimate(self, connection: Queries, schema: str, table: str, kind: str, row_id: str | None) -> int | None:
        """The table's row count as Spark's statistics take it (which side of a join it broadcasts).

        Exact where that is cheap: ``count(*)`` when the database file is at most
        :data:`COUNTED_BYTES` (SQLite counts a b-tree's cells page by page without decoding a row:
        ~50 ms for 3M rows, 160 MB, warm). A larger file: the count ``ANALYZE`` stored in
        ``sqlite_stat1`` (what SQLite's own planner trusts), else the row id span, an upper bound
        that errs towards a table too large to broadcast. Never ``max(rowid)`` alone: 100 rows
        with ids up to 99,000 are 100 rows. A view is not counted (its query could be costly).
        """
        if kind != "table":
            return None
        quoted_schema = self.dialect.render_identifier(schema)
        quoted_table = self.dialect.quote_table(schema, table)
        page_count = connection.execute(f"PRAGMA {quoted_schema}.page_count").fetchone()[0]
        page_size = connection.execute(f"PRAGMA {quoted_schema}.page_size").fetchone()[0]
        if page_count * page_size <= COUNTED_BYTES:
            return int(connection.execute(f"SELECT count(*) FROM {quoted_table}").fetchone()[0])
        analysed = connection.execute(
            f"SELECT 1 FROM {quoted_schema}.sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'"
        ).fetchone()
        if analysed is not None:
            stats = connection.execute(
                f"SELECT stat FROM {quoted_schema}.sqlite_stat1 WHERE tbl = ? COLLATE NOCASE", (table,)
            ).fetchall()
            counts = [int(stat.split()[0]) for (stat,) in stats if stat and stat.split()[0].isdigit()]
            if counts:  # one row per index (a partial index counts fewer rows): the largest is the table's
                return max(counts)
        if row_id is None:
            return None
        low, high = connection.execute(f"SELECT min({row_id}), max({row_id}) FROM {quoted_table}").fetchone()
        return 0 if low is None else int(high) - int(low) + 1

    def split(self, table: TableSchema, count: int) -> list[str | None]:
        row_id = table.split_column
        if count <= 1 or row_id not in _ROW_ID_NAMES:
            return [None]
        connection = self._connect()
        try:
            low, high = connection.execute(
                f"SELECT min({row_id}), max({row_id}) FROM {self.dialect.quote_table(table.schema, table.name)}"
            ).fetchone()
        finally:
            connection.close()
        return key_ranges(row_id, low, high, count)

    def read_task(self, spec: ScanSpec, partition_predicate: str | None, index: int, schema: pa.Schema) -> ReadTask:
        task = super().read_task(spec, partition_predicate, index, schema)
        guarded = self.guarded_request(spec, partition_predicate)
        if guarded is not None:
            return replace(task, request=guarded, guarded=True)
        return replace(task, fast_request=sqlite_arrow.fast_request(self, spec, partition_predicate))

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        """Arrow batches of ``task``: through ADBC when the task has a fast form (sqlite_arrow),
        else row by row through the sqlite3 module (below), converting and checking each value."""
        if task.fast_request is not None:
            batches = sqlite_arrow.read(self, task)
            if batches is not None:
                yield from batches
                return
        connection = self._connect()
        # SQLite has no statement timeout: a progress handler interrupts the statement at the deadline
        deadline = time.monotonic() + self.statement_timeout_s
        connection.set_progress_handler(lambda: time.monotonic() > deadline, 100_000)
        try:
            try:
                if task.planned_tables():
                    self._verify(connection, task.planned_tables())
                cursor = connection.execute(task.request)
            except sqlite3.Error as error:
                raise SourceError(self.name, f"query failed: {self._failure(error, deadline)}") from None
            while True:
                try:
                    rows = cursor.fetchmany(self.batch_rows)
                except sqlite3.Error as error:
                    raise SourceError(self.name, f"read failed: {self._failure(error, deadline)}") from None
                if not rows:
                    break
                marks = [row[-1] for row in rows] if task.guarded else None
                try:
                    batch = _batch([row[:-1] for row in rows] if marks else rows, task.schema)
                except _Unreadable as error:
                    raise SourceError(self.name, self.unreadable(task, error.field, error.what, error.value)) from None
                yield batch if marks is None else batch.filter(pa.array([mark is None for mark in marks]))
        finally:
            connection.close()

    def unreadable(self, task: ReadTask, field: pa.Field, what: str, value: object = _NOTHING) -> str:
        """The message of both readers for a stored value ``field``'s planned type cannot hold:
        the column, what was found, and the table and row (its rowid, when ``value`` finds it)."""
        message = sqlite_arrow.not_held(field, what)
        if task.table is None:
            return message
        where = task.table.qualified_name
        row = (
            None
            if value is _NOTHING or task.table.find(field.name) is None
            else self._locate(task.table, field.name, value)
        )
        return f"{message} (table {where}{f', row with rowid {row}' if row is not None else ''})"

    def _locate(self, table: TableSchema, column: str, value: object) -> int | None:
        """The rowid of a row whose ``column`` holds ``value`` (for messages only; None: not found)."""
        if table.split_column not in _ROW_ID_NAMES:
            return None
        quoted = self.dialect.render_identifier(table.column(column).name)
        query = f"SELECT {table.split_column} FROM {self.dialect.quote_table(table.schema, table.name)} WHERE {quoted} IS ? LIMIT 1"
        try:
            connection = self._connect()
            try:
                found = connection.execute(query, (value,)).fetchone()
            finally:
                connection.close()
        except (sqlite3.Error, SourceError):
            return None
        return None if found is None else int(found[0])

    def _failure(self, error: sqlite3.Error, deadline: float) -> str:
        if "interrupted" in str(error) and time.monotonic() > deadline:
            return f"query interrupted after statement_timeout_s={self.statement_timeout_s:g}"
        return self._explained(error)

    def _explained(self, error: sqlite3.Error) -> str:
        """The driver's message; a lock names who holds it and how long Sluice waited."""
        return self._lock_named(str(error)) if _locked(error) else str(error)

    def explained_text(self, message: str) -> str:
        """:meth:`_explained` for a driver that gives only text (ADBC): SQLITE_BUSY reads "database is locked"."""
        return self._lock_named(message) if "database is locked" in message else message

    def _lock_named(self, message: str, setting: str = "statement_timeout_s", seconds: float | None = None) -> str:
        waited_s = self.statement_timeout_s if seconds is None else seconds
        return f"{self.path} is locked by another connection writing to it ({message} after waiting {setting}={waited_s:g})"

    def _verify(self, connection: sqlite3.Connection, tables: tuple[TableSchema, ...]) -> None:
        """Fail, naming the column, if a table read (two for a pushed join) changed since it was planned.

        Checked in the query's own snapshot (one transaction). Without it a stale plan can
        return wrong rows with no error: SQLite reads the quoted name of a dropped column
        as a string literal (``"w"`` becomes ``'w'``) and converts values by the new affinity.
        """
        connection.execute("BEGIN")
        for planned in tables:
            self.verify(connection, planned)

    def verify(self, connection: Queries, planned: TableSchema) -> None:
        """:meth:`_verify` inside a transaction already open on ``connection`` (any object with
        sqlite3's ``execute(sql, params)`` shape: the ADBC path passes its own)."""
        try:
            current = self._describe(connection, planned.schema or self.default_schema, planned.name, False).columns
        except BindError:
            current = None
        self.ensure_unchanged(planned, current)


_ROW_ID_NAMES = ("rowid", "_rowid_", "oid")
#: the largest database file whose tables' rows are counted exactly when described (see _row_estimate)
COUNTED_BYTES = 256 * 1024 * 1024


def _locked(error: sqlite3.Error) -> bool:
    """SQLITE_BUSY: a writer holds the file and busy_timeout ran out."""
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == _SQLITE_BUSY


_SQLITE_BUSY = 5  # sqlite3.SQLITE_BUSY from Python 3.11 on


def _no_attach(action: int, *_: str | None) -> int:
    return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_ATTACH else sqlite3.SQLITE_OK


def _row_id_name(listing: tuple, declared: set[str]) -> str | None:
    """A name that reaches the table's row id, or None (views, WITHOUT ROWID tables).

    A declared column called ``rowid`` hides the row id under that name (and may hold
    NULLs or duplicates): splitting on it would lose rows, so take an alias it leaves free.
    """
    kind, _, without_rowid = listing
    if kind != "table" or without_rowid:
        return None
    return next((name for name in _ROW_ID_NAMES if name not in declared), None)


def _collations(ddl: str | None) -> dict[str, str]:
    """Column collations declared in a CREATE TABLE statement (lower-cased names)."""
    if not ddl:
        return {}
    try:
        tree = sqlglot.parse_one(ddl, read="sqlite")
    except sqlglot.errors.ParseError:
        return {}
    found = {}
    for definition in tree.find_all(exp.ColumnDef):
        for constraint in definition.args.get("constraints") or []:
            if isinstance(constraint.args.get("kind"), exp.CollateColumnConstraint):
                found[definition.name.lower()] = constraint.args["kind"].this.name.upper()
    return found


class _Unreadable(Exception):
    """A value of ``field`` the row reader cannot convert (``value`` when it is known)."""

    def __init__(self, field: pa.Field, what: str, value: object = _NOTHING) -> None:
        super().__init__(what)
        self.field, self.what, self.value = field, what, value


def _batch(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True))
    arrays = []
    for field, values in zip(schema, columns, strict=True):
        try:
            arrays.append(_array(values, field.type))
        except Unfit as unfit:
            raise _Unreadable(field, unfit.why, unfit.value) from None
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as error:
            raise _Unreadable(field, str(error)) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _array(values: tuple, arrow_type: pa.DataType) -> pa.Array:
    if pa.types.is_decimal(arrow_type):
        return decimal_array(values, arrow_type)
    if (pa.types.is_integer(arrow_type) or pa.types.is_boolean(arrow_type)) and float in set(map(type, values)):
        raise ValueError("a REAL value")  # Arrow would truncate 10.5 to 10
    if pa.types.is_boolean(arrow_type):
        return strict_booleans(pa.array(values, pa.int64()))
    if pa.types.is_integer(arrow_type):
        return narrowed(pa.array(values, pa.int64()), arrow_type)
    if pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type):
        return pc.cast(pa.array(values, pa.string()), arrow_type)
    if pa.types.is_floating(arrow_type):
        # Arrow refuses every integer beyond 2**53; take those the double holds exactly (1e16)
        values = tuple(float(v) if type(v) is int and int(float(v)) == v else v for v in values)
    return pa.array(values, arrow_type)
