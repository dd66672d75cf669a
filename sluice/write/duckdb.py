"""Writes to DuckDB: one transaction on the driver, Spark's rows appended as Arrow.

A DuckDB file admits one writing process and no reader beside it, so, as for SQLite, there
is nothing for Spark's tasks to do in parallel: the driver collects the query's rows
(``DataFrame.toArrow``; the statement's rows must fit the driver's memory), opens the file
for writing with the reader's session settings (UTC, binary collation), and in one
transaction deletes every row for an overwrite and inserts the Arrow table by a scan of it
(``INSERT INTO target SELECT ... FROM rows``), then commits, or rolls back on any error, so
readers see the old rows or the new ones. DuckDB holds every Spark value as it is (decimals
of up to 38 digits, instants as TIMESTAMPTZ, NaN and ±Infinity, bytes), so no value is
converted here; the INSERT casts to an existing column's type, failing on a value that does
not fit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sluice.errors import SourceError
from sluice.sources.duckdb import SESSION_SETTINGS
from sluice.write import delta
from sluice.write.target import KEPT, Mode, Plan, Target, replacing, statement
from sluice.write.typemap import Field, column_list

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from sluice.sources.duckdb import DuckdbSource
    from sluice.types import TableSchema


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _table(schema: str, name: str) -> str:
    return f"{_quote(schema)}.{_quote(name)}"


def _insert(table: TableSchema) -> str:
    """The rows from the registered Arrow table ``sluice_rows``, by position (Spark lined them up)."""
    assert table.schema is not None
    names = ", ".join(_quote(c.name) for c in table.columns)
    values = ", ".join(f"c{i}" for i in range(len(table.columns)))
    return f"INSERT INTO {_table(table.schema, table.name)} ({names}) SELECT {values} FROM sluice_rows"


def _delta_changes(table: TableSchema, row_id: list[str]) -> list[tuple[int, str]]:
    """A delta's delete and update from the registered Arrow table ``sluice_delta``, by the key."""
    assert table.schema is not None
    target = _table(table.schema, table.name)
    keys = [table.find(k) for k in row_id]
    by_key = " AND ".join(f"t.{_quote(c.name)} = s.k{i}" for i, c in enumerate(keys) if c is not None)
    assigned = ", ".join(f"{_quote(c.name)} = s.c{i}" for i, c in enumerate(table.columns))
    return [
        (delta.DELETE, f"DELETE FROM {target} AS t USING sluice_delta AS s WHERE {by_key} AND s.op = {delta.DELETE}"),
        (
            delta.UPDATE,
            f"UPDATE {target} AS t SET {assigned} FROM sluice_delta AS s WHERE {by_key} AND s.op = {delta.UPDATE}",
        ),
    ]


def _delta_insert(table: TableSchema) -> str:
    assert table.schema is not None
    names = ", ".join(_quote(c.name) for c in table.columns)
    inserts = ", ".join(str(op) for op in delta.INSERTS)
    return (
        f"INSERT INTO {_table(table.schema, table.name)} ({names}) "
        f"SELECT {', '.join(f'c{i}' for i in range(len(table.columns)))} FROM sluice_delta WHERE op IN ({inserts})"
    )


class DuckdbTarget(Target):
    kind = "duckdb"
    source: DuckdbSource

    def _connect(self) -> duckdb.DuckDBPyConnection:
        """A writing connection with the reader's session settings; a clear error when another
        process holds the file."""
        import duckdb

        try:
            connection = duckdb.connect(self.source.path)
        except duckdb.Error as error:
            raise SourceError(self.source.name, self.source._open_failure(str(error))) from None
        for setting in SESSION_SETTINGS:
            connection.execute(setting)
        return connection

    def create_table(self, schema: str, name: str, fields: list[Field]) -> bool:
        columns = column_list(self.kind, fields, _quote)
        return self._ddl(f"CREATE TABLE {_table(schema, name)} ({columns})", "already exists")

    def drop_table(self, schema: str, name: str) -> bool:
        return self._ddl(f"DROP TABLE {_table(schema, name)}", "Table with name")

    def _ddl(self, statement: str, nothing_done: str) -> bool:
        """Run one DDL statement; False when DuckDB's catalog error says ``nothing_done`` (the
        table exists, or does not), any other failure naming the statement."""
        import duckdb

        connection = self._connect()
        try:
            connection.execute(statement)
        except duckdb.Error as error:
            if isinstance(error, duckdb.CatalogException) and nothing_done in str(error):
                return False
            raise SourceError(self.source.name, f"{statement.split(' (', 1)[0]}: {error}") from None
        finally:
            connection.close()
        return True

    def primary_key(self, schema: str, name: str) -> list[str]:
        connection = self._connect()
        try:
            found = connection.execute(
                "SELECT constraint_column_names FROM duckdb_constraints() "
                "WHERE schema_name = ? AND table_name = ? AND constraint_type = 'PRIMARY KEY'",
                [schema, name],
            ).fetchall()
        finally:
            connection.close()
        return [str(c) for c in found[0][0]] if found else []

    def apply_delta(self, frame: DataFrame, schema: str, name: str, row_id: list[str]) -> int:
        """The delta collected here (as an INSERT's rows are), applied from a scan of it in one transaction."""

        table = self.source.describe(schema, name)
        assert table.schema is not None
        what = delta.statement(table.schema, table.name)
        count = len(table.columns)
        self.given_fields(frame, 1 + count + len(row_id), what)
        rows = frame.toArrow()
        rows = rows.rename_columns(["op", *(f"c{i}" for i in range(count)), *(f"k{i}" for i in range(len(row_id)))])
        with self._transaction(f"{what}: nothing was changed", sluice_delta=rows) as connection:
            counts = dict(connection.execute("SELECT op, count(*) FROM sluice_delta GROUP BY op").fetchall())
            for op, sql in _delta_changes(table, row_id):
                done = connection.execute(sql).fetchone()
                if (done[0] if done else 0) != counts.get(op, 0):
                    raise delta.Miscounted(f"{counts.get(op, 0)} rows to change by key but {done} changed")
            connection.execute(_delta_insert(table))
        return int(rows.num_rows)

    def write(self, frame: DataFrame, schema: str, name: str, mode: Mode) -> int:

        table = self.source.describe(schema, name)
        assert table.schema is not None
        target = _table(table.schema, table.name)
        what = statement(mode, table.schema, table.name)
        self.given_fields(frame, len(table.columns), what)
        rows = frame.toArrow()
        rows = rows.rename_columns([f"c{i}" for i in range(rows.num_columns)])  # by position, as Spark lined them up
        with self._transaction(f"{what}: nothing was written", sluice_rows=rows) as connection:
            if mode == "overwrite":
                connection.execute(f"DELETE FROM {target}")
            connection.execute(_insert(table))
        return int(rows.num_rows)

    def replace(self, frame: DataFrame, schema: str, name: str, fields: list[Field]) -> int:
        """DROP, CREATE and INSERT in one transaction: DuckDB's DDL is transactional."""
        what = replacing(schema, name)
        columns = column_list(self.kind, fields, _quote)
        self.given_fields(frame, len(fields), what)
        rows = frame.toArrow()
        rows = rows.rename_columns([f"c{i}" for i in range(rows.num_columns)])
        target = _table(schema, name)
        values = ", ".join(f"c{i}" for i in range(rows.num_columns))
        with self._transaction(f"{what}: {KEPT}", sluice_rows=rows) as connection:
            connection.execute(f"DROP TABLE IF EXISTS {target}")
            connection.execute(f"CREATE TABLE {target} ({columns})")
            connection.execute(f"INSERT INTO {target} SELECT {values} FROM sluice_rows")
        return int(rows.num_rows)

    def explain_write(self, table: TableSchema, mode: Mode) -> Plan:
        assert table.schema is not None
        return Plan(
            "DuckDB Arrow append: the driver collects the rows as Arrow and inserts them from a scan of them in "
            "one DuckDB transaction",
            "a DuckDB file takes one writer, and DuckDB scans Arrow in place (no conversion per row); the "
            "transaction makes the statement atomic (the rows must fit the driver's memory)",
            [
                "BEGIN TRANSACTION",
                *([f"DELETE FROM {_table(table.schema, table.name)}"] if mode == "overwrite" else []),
                f"{_insert(table)} -- sluice_rows: the collected Arrow table",
                "COMMIT",
            ],
        )

    def explain_delta(self, table: TableSchema, row_id: list[str]) -> Plan:
        return Plan(
            "row-level delta: Spark computes the changed rows, the driver collects them as Arrow and applies "
            "them by the primary key in one DuckDB transaction",
            "Spark evaluates every condition and SET expression itself; DuckDB only deletes, updates and inserts "
            "by the key, each change checked to touch exactly its rows",
            [
                "BEGIN TRANSACTION",
                *(sql for _, sql in _delta_changes(table, row_id)),
                f"{_delta_insert(table)} -- sluice_delta: the collected Arrow table",
                "COMMIT",
            ],
        )

    def delete(self, table: TableSchema, where: str | None) -> int:
        """One DuckDB transaction on a writing connection with the reader's session settings
        (UTC, binary collation), so the condition means what it means to a read."""

        statement = self.delete_statement(table, where)
        with self._transaction(self.delete_failed(table)) as connection:
            row = connection.execute(statement).fetchone()  # DuckDB answers the count as a row
        return int(row[0]) if row is not None else 0

    @contextmanager
    def _transaction(self, failed: str, **tables: pa.Table) -> Iterator[duckdb.DuckDBPyConnection]:
        """One DuckDB transaction on a writing connection, ``tables`` registered by name: committed
        when the block ends, rolled back whole when it raises; a failure says ``failed`` and why."""
        import duckdb

        connection = self._connect()
        try:
            for name, rows in tables.items():
                connection.register(name, rows)
            connection.execute("BEGIN TRANSACTION")
            try:
                yield connection
                connection.execute("COMMIT")
            except (duckdb.Error, delta.Miscounted) as error:
                connection.execute("ROLLBACK")
                raise SourceError(self.source.name, f"{failed}: {error}") from None
        finally:
            connection.close()
