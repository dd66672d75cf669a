"""Writes to PostgreSQL: Spark's tasks COPY into a staging table, the driver commits one INSERT.

Each statement creates an UNLOGGED staging table ``sluice_stage_<hex>`` beside the target,
typed from Spark's schema (:mod:`sluice.write.typemap`, plus the Spark task attempt that
loaded each row), and holds a session advisory lock named after it on the driver's connection
while the statement runs. Spark's tasks fill it through ADBC's ``adbc_ingest`` (binary
``COPY`` per Arrow batch, each committed, every task in parallel on its own session); then one
transaction on the driver moves the rows of the attempts Spark kept (a retried task's earlier
rows stay behind: :mod:`sluice.write.attempts`): ``TRUNCATE`` (transactional in PostgreSQL;
readers wait for the commit and then see the new rows) for an overwrite, and ``INSERT INTO
target SELECT ... FROM staging``. Any failure (a duplicate key, a NOT NULL column given NULL,
a value too long, a row count other than the kept attempts loaded) rolls the transaction
back, so the target is as it was. The staging table is dropped in every case; one left by a
killed driver has no lock holder, and the next statement's :func:`_drop_leftovers` removes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluice.errors import SourceError
from sluice.types import Column, TableSchema
from sluice.write import attempts, delta
from sluice.write.target import (
    KEPT,
    KEPT_SHOWN,
    STAGING_PREFIX,
    STAGING_SHOWN,
    Mode,
    Plan,
    Target,
    replacing,
    statement,
)
from sluice.write.typemap import Field, column_list, declared, fields

if TYPE_CHECKING:
    import psycopg
    from pyspark.sql import DataFrame

    from sluice.sources.postgres import PostgresSource

#: the primary key's columns in key order (none when the table has no key)
_PRIMARY_KEY = """
SELECT a.attname FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = to_regclass(%s) AND i.indisprimary
ORDER BY array_position(i.indkey::int2[], a.attnum)
"""
_LEFTOVERS = r"""
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND c.relname LIKE 'sluice\_stage\_%'
"""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _table(schema: str, name: str) -> str:
    return f"{_quote(schema)}.{_quote(name)}"


def _staged(count: int) -> list[str]:
    """The staging table's value columns, by position (a Spark column may be named anything,
    :data:`attempts.COLUMN` included)."""
    return [f"c{i}" for i in range(count)]


@dataclass(frozen=True)
class Stager:
    """What each Spark task runs: its Arrow batches appended to the staging table by binary COPY,
    each row tagged with the task attempt; yields the attempt id and row count.

    Carries the login (as the reader tasks do); never shown in a repr."""

    url: str = field(repr=False)
    schema: str
    table: str
    #: the staging table's value columns, in the batches' order
    names: tuple[str, ...]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import adbc_driver_postgresql.dbapi as dbapi

        attempt, names, rows = attempts.current(), list(self.names), 0
        with dbapi.connect(self.url, autocommit=True) as connection, connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = off")  # the source's sessions are read-only
            for batch in batches:
                if batch.num_rows:
                    staged = attempts.tagged(batch, names, attempt)
                    cursor.adbc_ingest(self.table, staged, mode="append", db_schema_name=self.schema)
                    rows += batch.num_rows
        yield attempts.result(attempt, rows)


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

    def primary_key(self, schema: str, name: str) -> list[str]:
        with self._connect() as connection:
            found = connection.execute(_PRIMARY_KEY, (_table(schema, name),)).fetchall()
        return [str(row[0]) for row in found]

    def apply_delta(self, frame: DataFrame, schema: str, name: str, row_id: list[str]) -> int:
        """Stage the delta as an INSERT's rows are staged (Spark's tasks, binary COPY, the kept
        attempts only), then one transaction deletes, updates and inserts from the stage."""
        import psycopg

        table = self.source.describe(schema, name)
        assert table.schema is not None
        what = delta.statement(table.schema, table.name)
        given = fields(frame.schema.jsonValue())
        names = ["op", *_staged(len(table.columns)), *(f"k{i}" for i in range(len(row_id)))]
        if len(given) != len(names):
            raise SourceError(self.source.name, f"{what}: the delta has {len(given)} columns; expected {len(names)}")
        keys = [_column(table, k) for k in row_id]
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        stage = _table(table.schema, staging)
        with self._connect() as connection:
            _drop_leftovers(connection)
            connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (staging,))
            try:
                connection.execute(_create_stage(table.schema, staging, names, given))
                kept = attempts.kept(frame, Stager(self.source._libpq_url(), table.schema, staging, tuple(names)))
                only = attempts.only(kept, _quote)
                changes = _delta_changes(table, keys, staging)
                try:
                    with connection.transaction():
                        counts = dict(
                            connection.execute(f"SELECT op, count(*) FROM {stage} WHERE {only} GROUP BY op").fetchall()
                        )
                        if sum(counts.values()) != sum(kept.values()):
                            raise delta.Miscounted(
                                f"{sum(kept.values())} delta rows staged but {sum(counts.values())} found"
                            )
                        for op, sql in changes:
                            done = connection.execute(f"{sql} AND s.{only}").rowcount
                            if done != counts.get(op, 0):
                                raise delta.Miscounted(f"{counts.get(op, 0)} rows to change by key but {done} changed")
                        connection.execute(f"{_delta_insert(table, staging)} AND {only}")
                except (psycopg.Error, delta.Miscounted) as error:
                    raise self._failed(f"{what}: nothing was changed", error) from None
                return sum(kept.values())
            finally:
                try:
                    connection.execute(f"DROP TABLE IF EXISTS {stage}")
                    connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (staging,))
                except psycopg.Error:  # the session is gone: the lock with it, and the next statement drops the table
                    pass

    def write(self, frame: DataFrame, schema: str, name: str, mode: Mode) -> int:
        import psycopg

        table = self.source.describe(schema, name)
        assert table.schema is not None
        what = statement(mode, table.schema, table.name)
        given = fields(frame.schema.jsonValue())
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        insert = _insert(table, staging, len(given))  # refuses a column count other than the table's first
        with self._staged(frame, table.schema, staging, given) as (connection, kept):
            try:
                with connection.transaction():
                    if mode == "overwrite":
                        connection.execute(_truncate(table))
                    written = connection.execute(f"{insert} WHERE {attempts.only(kept, _quote)}").rowcount
                    if written != sum(kept.values()):
                        raise _Miscounted(f"{sum(kept.values())} rows staged but {written} inserted")
            except (psycopg.Error, _Miscounted) as error:
                raise self._failed(f"{what}: nothing was written", error) from None
        return written

    def replace(self, frame: DataFrame, schema: str, name: str, fields: list[Field]) -> int:
        """Stage the rows as an INSERT does, then DROP, CREATE and INSERT in one transaction:
        PostgreSQL's DDL is transactional, and readers wait on the old table until the commit."""
        import psycopg

        what = replacing(schema, name)
        columns = column_list(self.kind, fields, _quote)
        target = _table(schema, name)
        names = ", ".join(_quote(f.name) for f in fields)
        values = ", ".join(_quote(c) for c in _staged(len(fields)))
        self.given_fields(frame, len(fields), what)
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        with self._staged(frame, schema, staging, fields) as (connection, kept):
            try:
                with connection.transaction():
                    connection.execute(f"DROP TABLE IF EXISTS {target}")
                    connection.execute(f"CREATE TABLE {target} ({columns})")
                    written = connection.execute(
                        f"INSERT INTO {target} ({names}) SELECT {values} FROM {_table(schema, staging)} "
                        f"WHERE {attempts.only(kept, _quote)}"
                    ).rowcount
                    if written != sum(kept.values()):
                        raise _Miscounted(f"{sum(kept.values())} rows staged but {written} inserted")
            except (psycopg.Error, _Miscounted) as error:
                raise self._failed(f"{what}: {KEPT}", error) from None
        return written

    @contextmanager
    def _staged(
        self, frame: DataFrame, schema: str, staging: str, given: list[Field]
    ) -> Iterator[tuple[psycopg.Connection[Any], dict[int, int]]]:
        """Spark's tasks load ``frame`` into the new staging table ``staging`` in ``schema``: the
        driver's writing session (holding the staging table's advisory lock) and the attempts
        Spark kept. The staging table is dropped when the block ends, however it ends."""
        import psycopg

        with self._connect() as connection:
            _drop_leftovers(connection)
            connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (staging,))
            try:
                connection.execute(_create_stage(schema, staging, _staged(len(given)), given))
                stager = Stager(self.source._libpq_url(), schema, staging, tuple(_staged(len(given))))
                yield connection, attempts.kept(frame, stager)
            finally:
                try:
                    connection.execute(f"DROP TABLE IF EXISTS {_table(schema, staging)}")
                    connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (staging,))
                except psycopg.Error:  # the session is gone: the lock with it, and the next statement drops the table
                    pass

    def explain_write(self, table: TableSchema, mode: Mode) -> Plan:
        assert table.schema is not None
        given = self.staged_fields(table)
        return Plan(
            "bulk load: Spark's tasks COPY (binary) into a staging table, one transaction moves the rows",
            "binary COPY is PostgreSQL's fastest load, each task on its own session in parallel; the target "
            "changes only in the driver's one transaction, so a failed or killed job leaves it as it was",
            [
                _create_stage(table.schema, STAGING_SHOWN, _staged(len(given)), given),
                f"COPY {_table(table.schema, STAGING_SHOWN)} FROM STDIN (FORMAT binary) -- per Spark task",
                "BEGIN",
                *([_truncate(table)] if mode == "overwrite" else []),
                f"{_insert(table, STAGING_SHOWN, len(given))} WHERE {KEPT_SHOWN}",
                "COMMIT",
                f"DROP TABLE IF EXISTS {_table(table.schema, STAGING_SHOWN)}",
            ],
        )

    def explain_delta(self, table: TableSchema, row_id: list[str]) -> Plan:
        assert table.schema is not None
        given = self.delta_fields(table, row_id)
        names = ["op", *_staged(len(table.columns)), *(f"k{i}" for i in range(len(row_id)))]
        changes = _delta_changes(table, [_column(table, k) for k in row_id], STAGING_SHOWN)
        return Plan(
            "row-level delta: Spark computes the changed rows, its tasks COPY (binary) them into a staging "
            "table, one transaction applies them by the primary key",
            "Spark evaluates every condition and SET expression itself; the source only deletes, updates and "
            "inserts by the key, each change checked to touch exactly its rows",
            [
                _create_stage(table.schema, STAGING_SHOWN, names, given),
                f"COPY {_table(table.schema, STAGING_SHOWN)} FROM STDIN (FORMAT binary) -- per Spark task",
                "BEGIN",
                *(f"{sql} AND s.{KEPT_SHOWN}" for _, sql in changes),
                f"{_delta_insert(table, STAGING_SHOWN)} AND {KEPT_SHOWN}",
                "COMMIT",
                f"DROP TABLE IF EXISTS {_table(table.schema, STAGING_SHOWN)}",
            ],
        )

    def delete(self, table: TableSchema, where: str | None) -> int:
        """One transaction on a writing session with the reader's settings (UTC, standard strings,
        the statement timeout), so the condition means what it means to a read."""
        import psycopg

        statement = self.delete_statement(table, where)
        with self._connect() as connection:
            try:
                with connection.transaction():
                    return int(connection.execute(statement).rowcount)
            except psycopg.Error as error:
                raise self._failed(self.delete_failed(table), error) from None


class _Miscounted(Exception):
    """The INSERT moved another number of rows than the kept attempts loaded: rolled back."""


def _column(table: TableSchema, name: str) -> Column:
    found = table.find(name)
    if found is None:
        raise SourceError(table.source, f"{table.qualified_name} has no column {name!r} (its primary key)")
    return found


def _create_stage(schema: str, staging: str, names: list[str], given: list[Field]) -> str:
    """The staging table: the rows' columns by position, typed from Spark's, and the task attempt."""
    columns = ", ".join(f"{_quote(c)} {declared('postgres', f)}" for c, f in zip(names, given, strict=True))
    return f"CREATE UNLOGGED TABLE {_table(schema, staging)} ({columns}, {_quote(attempts.COLUMN)} bigint)"


def _truncate(table: TableSchema) -> str:
    """An overwrite's first statement (transactional in PostgreSQL: readers see the new rows at the commit)."""
    assert table.schema is not None
    return f"TRUNCATE {_table(table.schema, table.name)}"


def _delta_changes(table: TableSchema, keys: list[Column], staging: str) -> list[tuple[int, str]]:
    """A delta's delete and update, each joined to the stage by the key (the kept attempts' condition follows)."""
    assert table.schema is not None
    target, stage = _table(table.schema, table.name), _table(table.schema, staging)
    by_key = " AND ".join(
        f"t.{_quote(c.name)} = CAST(s.{_quote(f'k{i}')} AS {c.remote_type})" for i, c in enumerate(keys)
    )
    assigned = ", ".join(
        f"{_quote(c.name)} = " + (f"CAST(s.{_quote(v)} AS {c.remote_type})" if c.read_as_text else f"s.{_quote(v)}")
        for v, c in zip(_staged(len(table.columns)), table.columns, strict=True)
    )
    return [
        (delta.DELETE, f"DELETE FROM {target} AS t USING {stage} AS s WHERE {by_key} AND s.op = {delta.DELETE}"),
        (
            delta.UPDATE,
            f"UPDATE {target} AS t SET {assigned} FROM {stage} AS s WHERE {by_key} AND s.op = {delta.UPDATE}",
        ),
    ]


def _delta_insert(table: TableSchema, staging: str) -> str:
    """A delta's inserts from the stage (the kept attempts' condition follows)."""
    inserts = ", ".join(str(op) for op in delta.INSERTS)
    return f"{_insert(table, staging, len(table.columns))} WHERE op IN ({inserts})"


def _insert(table: TableSchema, staging: str, given: int) -> str:
    """``INSERT INTO target (columns) SELECT ... FROM staging``, by position (Spark lined them up).

    A column Sluice reads as text (uuid, json, inet, ...) is cast back to its type explicitly:
    PostgreSQL has no assignment cast from text to them."""
    if given != len(table.columns):
        raise SourceError(
            table.source, f"{table.qualified_name} has {len(table.columns)} columns; the query gave {given}"
        )
    targets = ", ".join(_quote(c.name) for c in table.columns)
    values = ", ".join(
        f"CAST({_quote(s)} AS {c.remote_type})" if c.read_as_text else _quote(s)
        for s, c in zip(_staged(given), table.columns, strict=True)
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
