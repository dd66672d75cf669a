"""Writes to SQLite: one transaction on the driver, its rows from Spark as Arrow.

SQLite admits one writer per file, so there is nothing for Spark's tasks to do in
parallel: the driver collects the query's rows (``DataFrame.toArrow``; the statement's rows
must fit the driver's memory), takes the write lock (``BEGIN IMMEDIATE``), deletes every row
for an overwrite, inserts with ``executemany`` and commits, or rolls back on any error, so
readers see the old rows or the new ones. Values are written in the forms the reader takes
back exactly (:mod:`sluice.sources.sqlite_values`): dates and timestamps as ISO text with a
four-digit year, decimals as plain text (SQLite's NUMERIC affinity keeps 15 significant
digits, so a value with more is refused, naming column and value), booleans as 0/1. NaN is
refused: SQLite stores it as NULL.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sluice.dialects.base import wall_clock
from sluice.errors import ConfigError, SourceError
from sluice.write import delta
from sluice.write.target import KEPT, Mode, Plan, Target, replacing, statement
from sluice.write.typemap import SQLITE_DECIMAL_DIGITS, Field, column_list

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluice.sources.sqlite import SqliteSource
    from sluice.types import TableSchema


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SqliteTarget(Target):
    kind = "sqlite"
    source: SqliteSource

    def schema_of(self, namespace: list[str], what: str) -> str:
        schema = super().schema_of(namespace, what)
        if schema.lower() != "main":
            raise ConfigError(f"{what}: SQLite source {self.source.name!r} writes its main schema only, not {schema!r}")
        return "main"

    def _connect(self) -> sqlite3.Connection:
        self.source.ensure_exists()
        connection = sqlite3.connect(self.source.path, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {int(self.source.statement_timeout_s * 1000)}")
        return connection

    def create_table(self, schema: str, name: str, fields: list[Field]) -> bool:
        columns = column_list(self.kind, fields, _quote)
        return self._ddl(f"CREATE TABLE main.{_quote(name)} ({columns})", "already exists")

    def drop_table(self, schema: str, name: str) -> bool:
        return self._ddl(f"DROP TABLE main.{_quote(name)}", "no such table")

    def _ddl(self, statement: str, nothing_done: str) -> bool:
        """Run one DDL statement; False when SQLite's error says ``nothing_done`` (the table
        exists, or does not), any other failure naming the statement."""
        connection = self._connect()
        try:
            connection.execute(statement)
        except sqlite3.OperationalError as error:
            if nothing_done in str(error):
                return False
            raise SourceError(self.source.name, f"{statement.split(' (', 1)[0]}: {error}") from None
        finally:
            connection.close()
        return True

    def primary_key(self, schema: str, name: str) -> list[str]:
        """The key, when no NULL can be in it: SQLite lets a key column other than an INTEGER
        PRIMARY KEY hold NULLs unless it is declared NOT NULL."""
        connection = self._connect()
        try:
            info = connection.execute(f"PRAGMA main.table_info({_quote(name)})").fetchall()
        finally:
            connection.close()
        key = sorted((row for row in info if row[5]), key=lambda row: row[5])
        rowid = len(key) == 1 and str(key[0][2]).upper() == "INTEGER"
        if not key or not (rowid or all(row[3] for row in key)):
            return []
        return [str(row[1]) for row in key]

    def apply_delta(self, frame: DataFrame, schema: str, name: str, row_id: list[str]) -> int:
        """The delta collected here, values converted as an INSERT's; one write transaction."""
        table = self.source.describe(schema, name)
        what = delta.statement("main", table.name)
        count = len(table.columns)
        given = self.given_fields(frame, 1 + count + len(row_id), what)
        data = frame.toArrow()
        names = [c.name for c in table.columns] + row_id
        converted = [
            [convert(value) for value in data.column(1 + i).to_pylist()]
            for i, convert in enumerate(_converter(f, n, what) for f, n in zip(given[1:], names, strict=True))
        ]
        deletes, updates, inserts = [], [], []
        for op, *values in zip(data.column(0).to_pylist(), *converted, strict=True):
            row, key = tuple(values[:count]), tuple(values[count:])
            if op == delta.DELETE:
                deletes.append(key)
            elif op == delta.UPDATE:
                updates.append(row + key)
            else:
                inserts.append(row)
        delete, update = _by_key(table, row_id)
        with self._locked(f"{what}: nothing was changed") as connection:
            for sql, rows in ((delete, deletes), (update, updates)):
                done = connection.executemany(sql, rows).rowcount if rows else 0
                if done != len(rows):
                    raise delta.Miscounted(f"{len(rows)} rows to change by key but {done} changed")
            connection.executemany(_insert(table.name, [c.name for c in table.columns]), inserts)
        return int(data.num_rows)

    def write(self, frame: DataFrame, schema: str, name: str, mode: Mode) -> int:
        table = self.source.describe(schema, name)
        what = statement(mode, "main", table.name)
        given = self.given_fields(frame, len(table.columns), what)
        names = [c.name for c in table.columns]
        rows = _rows(frame, given, names, what)
        with self._locked(f"{what}: nothing was written") as connection:
            if mode == "overwrite":
                connection.execute(_delete_all(table))
            connection.executemany(_insert(table.name, names), rows)
        return len(rows)

    def replace(self, frame: DataFrame, schema: str, name: str, fields: list[Field]) -> int:
        """DROP, CREATE and INSERT in one transaction under the write lock: SQLite's DDL is transactional."""
        what = replacing("main", name)
        columns = column_list(self.kind, fields, _quote)
        given = self.given_fields(frame, len(fields), what)
        names = [f.name for f in fields]
        rows = _rows(frame, given, names, what)
        with self._locked(f"{what}: {KEPT}") as connection:
            connection.execute(f"DROP TABLE IF EXISTS main.{_quote(name)}")
            connection.execute(f"CREATE TABLE main.{_quote(name)} ({columns})")
            connection.executemany(_insert(name, names), rows)
        return len(rows)

    def explain_write(self, table: TableSchema, mode: Mode) -> Plan:
        return Plan(
            "one SQLite transaction: the driver collects the rows (Arrow) and inserts them under the write lock",
            "SQLite takes one writer per file, so Spark's tasks have nothing to do in parallel; BEGIN IMMEDIATE "
            "to COMMIT makes the statement atomic (the rows must fit the driver's memory)",
            [
                "BEGIN IMMEDIATE",
                *([_delete_all(table)] if mode == "overwrite" else []),
                f"{_insert(table.name, [c.name for c in table.columns])} -- executemany, one row each",
                "COMMIT",
            ],
        )

    def explain_delta(self, table: TableSchema, row_id: list[str]) -> Plan:
        delete, update = _by_key(table, row_id)
        return Plan(
            "row-level delta: Spark computes the changed rows, the driver collects them and applies them by the "
            "primary key in one SQLite transaction",
            "Spark evaluates every condition and SET expression itself; SQLite only deletes, updates and inserts "
            "by the key, each change checked to touch exactly its rows",
            [
                "BEGIN IMMEDIATE",
                f"{delete} -- executemany, per deleted row",
                f"{update} -- executemany, per updated row",
                f"{_insert(table.name, [c.name for c in table.columns])} -- executemany, per inserted row",
                "COMMIT",
            ],
        )

    def delete(self, table: TableSchema, where: str | None) -> int:
        """Under the write lock (``BEGIN IMMEDIATE``), as a write: committed whole or rolled back."""
        statement = self.delete_statement(table, where)
        with self._locked(self.delete_failed(table)) as connection:
            deleted = connection.execute(statement).rowcount
        return int(deleted)

    @contextmanager
    def _locked(self, failed: str) -> Iterator[sqlite3.Connection]:
        """One transaction under SQLite's write lock (``BEGIN IMMEDIATE``): committed when the
        block ends, rolled back whole when it raises; either failure says ``failed`` and why."""
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except (sqlite3.Error, delta.Miscounted) as error:
                connection.execute("ROLLBACK")
                raise SourceError(self.source.name, f"{failed}: {error}") from None
        except sqlite3.Error as error:  # the write lock was not granted in time
            raise SourceError(self.source.name, f"{failed}: {error}") from None
        finally:
            connection.close()


def _insert(table: str, names: list[str]) -> str:
    """``INSERT INTO main.table (names) VALUES (?, ...)``."""
    columns = ", ".join(_quote(n) for n in names)
    return f"INSERT INTO main.{_quote(table)} ({columns}) VALUES ({', '.join('?' * len(names))})"


def _rows(frame: DataFrame, given: list[Field], names: list[str], what: str) -> list[tuple[Any, ...]]:
    """``frame``'s rows collected here, each value in the form the reader takes back (:func:`_converter`)."""
    data = frame.toArrow()
    columns = [
        [convert(value) for value in data.column(i).to_pylist()]
        for i, convert in enumerate(_converter(f, n, what) for f, n in zip(given, names, strict=True))
    ]
    return list(zip(*columns, strict=True)) if columns else []


def _target(table: TableSchema) -> str:
    return f"main.{_quote(table.name)}"


def _delete_all(table: TableSchema) -> str:
    """An overwrite's first statement."""
    return f"DELETE FROM {_target(table)}"


def _by_key(table: TableSchema, row_id: list[str]) -> tuple[str, str]:
    """A delta's delete and update of one row by its key (bound per row)."""
    by_key = " AND ".join(f"{_quote(k)} = ?" for k in row_id)
    assigned = ", ".join(f"{_quote(c.name)} = ?" for c in table.columns)
    return f"DELETE FROM {_target(table)} WHERE {by_key}", f"UPDATE {_target(table)} SET {assigned} WHERE {by_key}"


def _converter(field: Field, column: str, what: str) -> Callable[[Any], Any]:
    """How one column's Python values (from Arrow) are bound: the forms the reader takes back."""

    def unfit(value: object, why: str) -> SourceError:
        return SourceError("sqlite", f"{what}: column {column!r} value {value!r}: {why}; nothing was written")

    if field.type.startswith("decimal"):

        def number(value: decimal.Decimal | None) -> str | None:
            if value is None:
                return None
            if len(value.normalize().as_tuple().digits) > SQLITE_DECIMAL_DIGITS:
                raise unfit(value, f"SQLite keeps {SQLITE_DECIMAL_DIGITS} significant digits of a decimal")
            return format(value, "f")

        return number
    if field.type in ("float", "double"):

        def double(value: float | None) -> float | None:
            if value is not None and math.isnan(value):
                raise unfit(value, "SQLite stores NaN as NULL")
            return value

        return double
    if field.type == "date":
        return lambda value: None if value is None else value.isoformat()
    if field.type in ("timestamp", "timestamp_ntz"):

        def stamp(value: dt.datetime | None) -> str | None:
            if value is None:
                return None
            if value.tzinfo is not None:
                raise unfit(value, "SQLite has no time-zone-aware type; cast to timestamp_ntz")
            return wall_clock(value)

        return stamp
    if field.type in ("string", "binary", "boolean", "tinyint", "smallint", "int", "bigint"):
        return lambda value: value
    raise unfit("(any)", f"Spark type {field.type} has no SQLite form Sluice reads back")
