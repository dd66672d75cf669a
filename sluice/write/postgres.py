"""Writes to PostgreSQL: Spark's tasks COPY into a staging table, the driver commits one INSERT.

Each statement creates an UNLOGGED staging table ``sluice_stage_<hex>`` beside the target,
typed from Spark's schema (:mod:`sluice.write.typemap`), and holds a session advisory lock
named after it on the driver's connection while the statement runs. Spark's tasks fill it
through ADBC's ``adbc_ingest`` (binary ``COPY``, one per task, in parallel); then one
transaction on the driver moves the rows: ``TRUNCATE`` (transactional in PostgreSQL; readers
wait for the commit and then see the new rows) for an overwrite, and ``INSERT INTO target
SELECT ... FROM staging``. Any failure (a duplicate key, a NOT NULL column given NULL, a
value too long) rolls the transaction back, so the target is as it was. The staging table is
dropped in every case; one left by a killed driver has no lock holder, and the next
statement's :func:`_drop_leftovers` removes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluice.errors import SourceError
from sluice.types import TableSchema
from sluice.write.target import STAGING_PREFIX, Mode, Target
from sluice.write.typemap import Field, column_list, fields

if TYPE_CHECKING:
    import psycopg
    from pyspark.sql import DataFrame

    from sluice.sources.postgres import PostgresSource

_LEFTOVERS = r"""
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND c.relname LIKE 'sluice\_stage\_%'
"""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _table(schema: str, name: str) -> str:
    return f"{_quote(schema)}.{_quote(name)}"


@dataclass(frozen=True)
class Stager:
    """What each Spark task runs: its Arrow batches appended to the staging table by binary COPY.

    Carries the login (as the reader tasks do); never shown in a repr."""

    url: str = field(repr=False)
    schema: str
    table: str

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import adbc_driver_postgresql.dbapi as dbapi

        rows = 0
        with dbapi.connect(self.url, autocommit=True) as connection, connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = off")  # the source's sessions are read-only
            for batch in batches:
                if batch.num_rows:
                    cursor.adbc_ingest(self.table, batch, mode="append", db_schema_name=self.schema)
                    rows += batch.num_rows
        yield pa.record_batch([pa.array([rows], pa.int64())], names=["rows"])


class PostgresTarget(Target):
    kind = "postgres"
    source: PostgresSource

    def _connect(self) -> psycopg.Connection[Any]:
        """A writing session: the source's own login and settings, without its read-only default."""
        connection = self.source._catalog()  # the source's login and session settings
        connection.execute("SET default_transaction_read_only = off")
        return connection

    def _failed(self, what: str, error: Exception) -> SourceError:
        import psycopg

        detail = ""
        if isinstance(error, psycopg.Error) and error.diag.message_detail:
            detail = f" ({error.diag.message_detail})"
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return SourceError(self.source.name, self.source.masked(f"{what}: {first}{detail}"))

    def create_table(self, schema: str, name: str, fields: list[Field]) -> bool:
        import psycopg

        columns = column_list(self.kind, fields, _quote)
        return self._ddl(f"CREATE TABLE {_table(schema, name)} ({columns})", psycopg.errors.DuplicateTable)

    def drop_table(self, schema: str, name: str) -> bool:
        import psycopg

        return self._ddl(f"DROP TABLE {_table(schema, name)}", psycopg.errors.UndefinedTable)

    def _ddl(self, statement: str, nothing_done: type[Exception]) -> bool:
        """Run one DDL statement; False when PostgreSQL answers ``nothing_done`` (the table
        exists, or does not), any other failure in the target's words."""
        import psycopg

        with self._connect() as connection:
            try:
                connection.execute(statement)
            except nothing_done:
                return False
            except psycopg.Error as error:
                raise self._failed(statement.split(" (", 1)[0], error) from None
        return True

    def write(self, frame: DataFrame, schema: str, name: str, mode: Mode) -> int:
        import psycopg
        from pyspark.sql import functions as F

        table = self.source.describe(schema, name)
        assert table.schema is not None
        what = f"{'INSERT OVERWRITE' if mode == 'overwrite' else 'INSERT INTO'} {table.schema}.{table.name}"
        staged_fields = fields(frame.schema.jsonValue())
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        with self._connect() as connection:
            _drop_leftovers(connection)
            connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (staging,))
            try:
                columns = column_list(self.kind, staged_fields, _quote, constraints=False)
                connection.execute(f"CREATE UNLOGGED TABLE {_table(table.schema, staging)} ({columns})")
                stager = Stager(self.source._libpq_url(), table.schema, staging)  # the tasks log in as the source does
                staged = frame.mapInArrow(stager, "rows long").agg(F.sum("rows")).collect()[0][0] or 0
                insert = _insert(table, staging, staged_fields)
                try:
                    with connection.transaction():
                        if mode == "overwrite":
                            connection.execute(f"TRUNCATE {_table(table.schema, table.name)}")
                        written = connection.execute(insert).rowcount
                except psycopg.Error as error:
                    raise self._failed(f"{what}: nothing was written", error) from None
                if written != staged:
                    raise SourceError(self.source.name, f"{what}: {staged} rows staged but {written} inserted")
                return written
            finally:
                try:
                    connection.execute(f"DROP TABLE IF EXISTS {_table(table.schema, staging)}")
                    connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (staging,))
                except psycopg.Error:  # the session is gone: the lock with it, and the next statement drops the table
                    pass


def _insert(table: TableSchema, staging: str, staged: list[Field]) -> str:
    """``INSERT INTO target (columns) SELECT ... FROM staging``, by position (Spark lined them up).

    A column Sluice reads as text (uuid, json, inet, ...) is cast back to its type explicitly:
    PostgreSQL has no assignment cast from text to them."""
    if len(staged) != len(table.columns):
        raise SourceError(
            table.source, f"{table.qualified_name} has {len(table.columns)} columns; the query gave {len(staged)}"
        )
    targets = ", ".join(_quote(c.name) for c in table.columns)
    values = ", ".join(
        f"CAST({_quote(f.name)} AS {c.remote_type})" if c.read_as_text else _quote(f.name)
        for f, c in zip(staged, table.columns, strict=True)
    )
    assert table.schema is not None
    return f"INSERT INTO {_table(table.schema, table.name)} ({targets}) SELECT {values} FROM {_table(table.schema, staging)}"


def _drop_leftovers(connection: psycopg.Connection[Any]) -> None:
    """Drop the staging tables of statements whose driver died: their advisory lock is free."""
    for schema, name in connection.execute(_LEFTOVERS).fetchall():
        if connection.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (name,)).fetchone()[0]:  # type: ignore[index]  # one row
            try:
                connection.execute(f"DROP TABLE IF EXISTS {_table(schema, name)}")
            finally:
                connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (name,))
