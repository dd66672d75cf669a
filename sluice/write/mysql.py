"""Writes to MariaDB and MySQL: Spark's tasks LOAD DATA into a staging table, the driver commits one INSERT.

Each statement creates a staging table ``sluice_stage_<hex>`` beside the target (InnoDB,
typed from Spark's schema by :mod:`sluice.write.typemap`, plus the Spark task attempt that
loaded each row) and holds the named lock ``GET_LOCK('sluice_stage_<hex>')`` on the driver's
session while the statement runs. Spark's tasks fill it with ``LOAD DATA LOCAL INFILE``
(the fastest path the server has: text built by Arrow's kernels, :mod:`sluice.write.load_data`),
each in parallel on its own session; a warning there (a date beyond the server's range) fails
the task, naming the column. Then one InnoDB transaction on the driver moves the rows of the
attempts Spark kept (a retried task's earlier rows stay behind: :mod:`sluice.write.attempts`): ``DELETE`` of every row for an
overwrite (``TRUNCATE`` would commit on its own) and ``INSERT INTO target SELECT ... FROM
staging``, in strict mode, where a warning (a decimal rounded to the column's scale, a string
cut) rolls back as an error does. A duplicate key, a NULL for a NOT NULL column, a value out
of range: the transaction rolls back and the target is as it was; readers see the old rows
until the commit (InnoDB's snapshots). Only transactional tables are written. The staging
table is dropped in every case; one left by a killed driver has no lock holder, and the next
statement's :func:`_drop_leftovers` removes it.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluice.dialects.mysql import Mysql8Dialect
from sluice.errors import SourceError
from sluice.sources.mysql import SQL_MODE, _session_class
from sluice.write import attempts, delta
from sluice.write.load_data import FORMAT, Unstorable, encode
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
from sluice.write.typemap import Field, column_list, declared

if TYPE_CHECKING:
    import pymysql
    from pyspark.sql import DataFrame

    from sluice.sources.base import Source
    from sluice.sources.mysql import MysqlSource
    from sluice.types import Column, TableSchema

#: the writing session: read-write, instants in UTC, the reader's sql_mode (so a DELETE's condition
#: means what it means to a read) with TRADITIONAL added: strict for every table, so an invalid,
#: too long or out-of-range value is an error, never a warning and a value cut or clipped, whatever
#: the server's own mode is
_SESSION = (
    "SET SESSION TRANSACTION READ WRITE",
    "SET time_zone = '+00:00'",
    f"SET SESSION sql_mode = CONCAT({SQL_MODE}, ',TRADITIONAL')",
)
#: (``!`` escapes: NO_BACKSLASH_ESCAPES leaves LIKE without an escape character)
_LEFTOVERS = (
    "SELECT TABLE_NAME FROM information_schema.TABLES "
    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME LIKE 'sluice!_stage!_%%' ESCAPE '!'"
)
_TRANSACTIONAL = """
SELECT t.TABLE_TYPE, t.ENGINE, e.TRANSACTIONS FROM information_schema.TABLES t
LEFT JOIN information_schema.ENGINES e ON e.ENGINE = t.ENGINE
WHERE t.TABLE_SCHEMA = %s AND t.TABLE_NAME = %s
"""
#: a task sends its rows in LOAD DATA files of about this size
_FILE_BYTES = 64 << 20
_TABLE_EXISTS, _NO_SUCH_TABLE = 1050, 1051


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _table(schema: str, name: str) -> str:
    return f"{_quote(schema)}.{_quote(name)}"


def _message(error: Exception) -> str:
    """The server's words for a PyMySQL error (its last argument), on one line."""
    args = getattr(error, "args", ())
    text = str(args[-1] if args else error).strip()
    return text.splitlines()[0] if text else type(error).__name__


#: the primary key's columns in key order
_PRIMARY_KEY = """
SELECT column_name FROM information_schema.key_column_usage
WHERE table_schema = %s AND table_name = %s AND constraint_name = 'PRIMARY' ORDER BY ordinal_position
"""


@dataclass(frozen=True)
class Login:
    """How a Spark task logs in: the source's server, user and password (never in a repr)."""

    host: str
    port: int
    user: str
    password: str = field(repr=False)
    connect_timeout: float
    #: the source's statement timeout, as a bound on every wait for the server
    statement_timeout: float


@dataclass(frozen=True)
class Stager:
    """What each Spark task runs: its Arrow batches loaded into the staging table by LOAD DATA
    LOCAL INFILE, in files of about :data:`_FILE_BYTES`; yields its attempt id and row count."""

    login: Login
    source: str
    what: str
    schema: str
    table: str
    columns: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        attempt, rows = attempts.current(), 0
        connection = _session_class()(
            host=self.login.host,
            port=self.login.port,
            user=self.login.user,
            password=self.login.password,
            charset="utf8mb4",
            connect_timeout=self.login.connect_timeout,
            read_timeout=self.login.statement_timeout,
            write_timeout=self.login.statement_timeout,
            autocommit=True,
            local_infile=True,
            program_name="sluice",
        )
        try:
            with tempfile.NamedTemporaryFile("wb", prefix="sluice-load-") as spool:
                for batch in batches:
                    try:
                        spool.write(encode(batch))
                    except Unstorable as error:
                        raise SourceError(self.source, f"{self.what}: {error}; nothing was written") from None
                    rows += batch.num_rows
                    if spool.tell() >= _FILE_BYTES:
                        self._load(connection, spool, attempt)
                self._load(connection, spool, attempt)
        finally:
            connection.close()
        yield attempts.result(attempt, rows)

    @staticmethod
    def statement(schema: str, table: str, columns: int, attempt: str) -> str:
        """A task's ``LOAD DATA`` of one spooled file (its name bound as ``%s``) into the staging table."""
        names = ", ".join(f"`c{i}`" for i in range(columns))
        return (
            f"LOAD DATA LOCAL INFILE %s INTO TABLE {_table(schema, table)} {FORMAT} "
            f"({names}) SET {_quote(attempts.COLUMN)} = {attempt}"
        )

    def _load(self, connection: pymysql.Connection[Any], spool: Any, attempt: int) -> None:
        """Load the spooled lines and empty the spool; any warning fails the task, naming it."""
        import pymysql

        if not spool.tell():
            return
        spool.flush()
        statement = self.statement(self.schema, self.table, self.columns, str(int(attempt)))
        with connection.cursor() as cursor:
            try:
                cursor.execute(statement, (spool.name,))
                warning = _first_warning(cursor)
            except pymysql.MySQLError as error:
                raise SourceError(self.source, f"{self.what}: {_message(error)}; nothing was written") from None
        if warning is not None:  # LOAD DATA LOCAL turns strict mode's errors into warnings
            raise SourceError(self.source, f"{self.what}: {warning}; nothing was written")
        spool.seek(0)
        spool.truncate()


class MysqlTarget(Target):
    source: MysqlSource

    def __init__(self, source: Source) -> None:
        super().__init__(source)
        self.kind = "mysql" if isinstance(source.dialect, Mysql8Dialect) else "mariadb"

    def _connect(self) -> pymysql.Connection[Any]:
        """A writing session: the source's own login, read-write, UTC, strict (:data:`_SESSION`)."""
        connection = self.source._catalog()  # the source's login and timeouts
        with connection.cursor() as cursor:
            for statement in _SESSION:
                cursor.execute(statement)
        return connection

    def _failed(self, what: str, error: Exception) -> SourceError:
        return SourceError(self.source.name, self.source.masked(f"{what}: {_message(error)}"))

    def create_table(self, schema: str, name: str, fields: list[Field]) -> bool:
        columns = column_list(self.kind, fields, _quote)
        return self._ddl(f"CREATE TABLE {_table(schema, name)} ({columns}) ENGINE=InnoDB", _TABLE_EXISTS)

    def drop_table(self, schema: str, name: str) -> bool:
        return self._ddl(f"DROP TABLE {_table(schema, name)}", _NO_SUCH_TABLE)

    def _ddl(self, statement: str, nothing_done: int) -> bool:
        """Run one DDL statement; False when the server answers ``nothing_done`` (the table
        exists, or does not), any other failure in the target's words."""
        import pymysql

        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute(statement)
        except pymysql.MySQLError as error:
            if error.args and error.args[0] == nothing_done:
                return False
            raise self._failed(statement.split(" (", 1)[0], error) from None
        finally:
            connection.close()
        return True

    def primary_key(self, schema: str, name: str) -> list[str]:
        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute(_PRIMARY_KEY, (schema, name))
                return [str(row[0]) for row in cursor.fetchall()]
        finally:
            connection.close()

    def apply_delta(self, frame: DataFrame, schema: str, name: str, row_id: list[str]) -> int:
        """Stage the delta as an INSERT's rows are (``c0`` the operation, then the new row, then
        the old key), then one transaction deletes, updates and inserts by the key."""
        import pymysql

        table = self.source.describe(schema, name)
        assert table.schema is not None
        what = delta.statement(table.schema, table.name)
        given = self.given_fields(frame, 1 + len(table.columns) + len(row_id), what)
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        stage = _table(table.schema, staging)
        moves = _delta_moves(table, row_id, staging)
        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                self._ensure_transactional(cursor, table.schema, table.name, what)
                _drop_leftovers(cursor, table.schema)
                cursor.execute("SELECT GET_LOCK(%s, 0)", (staging,))
                try:
                    cursor.execute(_create_stage(self.kind, table.schema, staging, given))
                    kept = self._stage(frame, table.schema, staging, what, len(given))
                    only = f"s.{attempts.only(kept, _quote)}"
                    try:
                        connection.begin()
                        cursor.execute(f"SELECT s.`c0`, count(*) FROM {stage} s WHERE {only} GROUP BY s.`c0`")
                        counts = {int(op): int(n) for op, n in cursor.fetchall()}
                        if sum(counts.values()) != sum(kept.values()):
                            raise delta.Miscounted(
                                f"{sum(kept.values())} delta rows staged but {sum(counts.values())} found"
                            )
                        cursor.execute(f"{moves.matched} AND {only}")
                        matched = cursor.fetchone()
                        if (matched[0] if matched else 0) != counts.get(delta.UPDATE, 0):
                            raise delta.Miscounted(f"{counts.get(delta.UPDATE, 0)} rows to update but {matched} found")
                        done = cursor.execute(f"{moves.delete} AND {only}")
                        if done != counts.get(delta.DELETE, 0):
                            raise delta.Miscounted(f"{counts.get(delta.DELETE, 0)} rows to delete but {done} deleted")
                        cursor.execute(f"{moves.update} AND {only}")
                        cursor.execute(f"{moves.insert} AND {only}")
                        warning = _first_warning(cursor)
                        if warning is not None:
                            raise _Rejected(warning)
                        connection.commit()
                    except (pymysql.MySQLError, _Rejected, delta.Miscounted) as error:
                        try:
                            connection.rollback()
                        except pymysql.MySQLError:  # the session is gone: the server rolled back with it
                            pass
                        raise self._failed(f"{what}: nothing was changed", error) from None
                    return sum(kept.values())
                finally:
                    self._clean(cursor, table.schema, staging)
        finally:
            connection.close()

    def write(self, frame: DataFrame, schema: str, name: str, mode: Mode) -> int:
        table = self.source.describe(schema, name)
        assert table.schema is not None
        target = _table(table.schema, table.name)
        what = statement(mode, table.schema, table.name)
        given = self.given_fields(frame, len(table.columns), what)
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                self._ensure_transactional(cursor, table.schema, table.name, what)
                _drop_leftovers(cursor, table.schema)
                cursor.execute("SELECT GET_LOCK(%s, 0)", (staging,))
                try:
                    cursor.execute(_create_stage(self.kind, table.schema, staging, given))
                    kept = self._stage(frame, table.schema, staging, what, len(given))
                    names = [c.name for c in table.columns]
                    return self._move(connection, target, _table(table.schema, staging), names, kept, mode, what)
                finally:
                    self._clean(cursor, table.schema, staging)
        finally:
            connection.close()

    def _ensure_transactional(self, cursor: Any, schema: str, name: str, what: str) -> None:
        """Refuse a view or a table of an engine without transactions (MyISAM, Aria): a failed
        statement there would leave the rows it had written."""
        cursor.execute(_TRANSACTIONAL, (schema, name))
        row = cursor.fetchone()
        if row is None or row[0] != "BASE TABLE" or row[2] != "YES":
            kind = (
                "a view"
                if row is not None and row[0] != "BASE TABLE"
                else f"a table of engine {row[1] if row else '?'}"
            )
            raise SourceError(
                self.source.name,
                f"{what}: the target is {kind}, without transactions; Sluice writes tables of a transactional "
                "engine (InnoDB), where a failed statement leaves nothing behind",
            )

    def _stage(self, frame: DataFrame, schema: str, staging: str, what: str, columns: int) -> dict[int, int]:
        """Spark's tasks load the rows; the attempts Spark kept (one a partition) and their rows."""
        parts = self.source.parsed
        login = Login(
            host=str(parts.host),
            port=int(parts.port or 3306),
            user=parts.username or "root",
            password=self.source.credential or "",
            connect_timeout=float(self.source.connect_timeout_s),
            statement_timeout=float(self.source.statement_timeout_s),
        )
        stager = Stager(login, self.source.name, what, schema, staging, columns)
        return attempts.kept(frame, stager)

    def _move(
        self,
        connection: pymysql.Connection[Any],
        target: str,
        staging: str,
        columns: list[str],
        kept: dict[int, int],
        mode: Mode,
        what: str,
        failed: str = "nothing was written",
    ) -> int:
        """One transaction: (for an overwrite) delete every row, insert the kept attempts' rows."""
        import pymysql

        staged = sum(kept.values())
        with connection.cursor() as cursor:
            try:
                connection.begin()
                if mode == "overwrite":
                    cursor.execute(f"DELETE FROM {target}")
                written = cursor.execute(f"{_insert(target, staging, columns)} WHERE {attempts.only(kept, _quote)}")
                warning = _first_warning(cursor)
                if warning is not None:  # a note too: a decimal rounded to the column's scale
                    raise _Rejected(warning)
                if written != staged:
                    raise _Rejected(f"{staged} rows staged but {written} inserted")
                connection.commit()
            except (pymysql.MySQLError, _Rejected) as error:
                try:
                    connection.rollback()
                except pymysql.MySQLError:  # the session is gone: the server rolled back with it
                    pass
                raise self._failed(f"{what}: {failed}", error) from None
        return written

    def replace(self, frame: DataFrame, schema: str, name: str, fields: list[Field]) -> int:
        """MariaDB's DDL commits on its own, so the new table is built beside the old one under a
        staging name (``sluice_stage_<hex>_new``), filled from the stage as an INSERT is, then
        swapped in by one ``RENAME TABLE`` (atomic: readers see the old table or the new one),
        and the old one, renamed ``sluice_stage_<hex>_old``, dropped. A failure before the rename
        leaves the old table as it was; a killed driver's ``_new`` or ``_old`` table is a
        leftover the next statement drops."""
        import pymysql

        what = replacing(schema, name)
        columns = column_list(self.kind, fields, _quote)
        self.given_fields(frame, len(fields), what)
        staging = STAGING_PREFIX + uuid.uuid4().hex[:16]
        target, new, old = _table(schema, name), _table(schema, f"{staging}_new"), _table(schema, f"{staging}_old")
        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute(_TRANSACTIONAL, (schema, name))
                found = cursor.fetchone()
                if found is not None and found[0] != "BASE TABLE":
                    raise SourceError(self.source.name, f"{what}: the target is a view; Sluice replaces tables")
                _drop_leftovers(cursor, schema)
                cursor.execute("SELECT GET_LOCK(%s, 0)", (staging,))
                try:
                    staged = ", ".join(f"`c{i}` {declared(self.kind, f)}" for i, f in enumerate(fields))
                    cursor.execute(
                        f"CREATE TABLE {_table(schema, staging)} ({staged}, {_quote(attempts.COLUMN)} BIGINT) ENGINE=InnoDB"
                    )
                    kept = self._stage(frame, schema, staging, what, len(fields))
                    try:
                        cursor.execute(f"CREATE TABLE {new} ({columns}) ENGINE=InnoDB")
                    except pymysql.MySQLError as error:
                        raise self._failed(f"{what}: {KEPT}", error) from None
                    names = [f.name for f in fields]
                    written = self._move(connection, new, _table(schema, staging), names, kept, "append", what, KEPT)
                    try:
                        swap = f"{target} TO {old}, {new} TO {target}" if found is not None else f"{new} TO {target}"
                        cursor.execute(f"RENAME TABLE {swap}")
                    except pymysql.MySQLError as error:
                        raise self._failed(f"{what}: {KEPT}", error) from None
                    return written
                finally:
                    for leftover in (new, old):
                        try:
                            cursor.execute(f"DROP TABLE IF EXISTS {leftover}")
                        except pymysql.MySQLError:  # the session is gone: the next statement drops it
                            pass
                    self._clean(cursor, schema, staging)
        finally:
            connection.close()

    def explain_write(self, table: TableSchema, mode: Mode) -> Plan:
        assert table.schema is not None
        target, stage = _table(table.schema, table.name), _table(table.schema, STAGING_SHOWN)
        load = Stager.statement(table.schema, STAGING_SHOWN, len(table.columns), "<the task attempt>")
        return Plan(
            "bulk load: Spark's tasks LOAD DATA LOCAL INFILE into a staging table, one InnoDB transaction "
            "moves the rows",
            "LOAD DATA is the fastest path the server has (about 4x multi-row INSERT), each task on its own "
            "session in parallel; the target changes only in the driver's one transaction, in strict mode with "
            "any warning an error, so a failed or killed job leaves it as it was",
            [
                _create_stage(self.kind, table.schema, STAGING_SHOWN, self.staged_fields(table)),
                f"{load.replace('%s', '<file>')} -- per Spark task",
                "BEGIN",
                *([f"DELETE FROM {target}"] if mode == "overwrite" else []),
                f"{_insert(target, stage, [c.name for c in table.columns])} WHERE {KEPT_SHOWN}",
                "COMMIT",
                f"DROP TABLE IF EXISTS {stage}",
            ],
        )

    def explain_delta(self, table: TableSchema, row_id: list[str]) -> Plan:
        assert table.schema is not None
        given = self.delta_fields(table, row_id)
        moves = _delta_moves(table, row_id, STAGING_SHOWN)
        load = Stager.statement(table.schema, STAGING_SHOWN, len(given), "<the task attempt>")
        only = f"s.{KEPT_SHOWN}"
        return Plan(
            "row-level delta: Spark computes the changed rows, its tasks LOAD DATA them into a staging table, "
            "one InnoDB transaction applies them by the primary key",
            "Spark evaluates every condition and SET expression itself; the source only deletes, updates and "
            "inserts by the key, each change checked to touch exactly its rows",
            [
                _create_stage(self.kind, table.schema, STAGING_SHOWN, given),
                f"{load.replace('%s', '<file>')} -- per Spark task",
                "BEGIN",
                f"{moves.delete} AND {only}",
                f"{moves.update} AND {only}",
                f"{moves.insert} AND {only}",
                "COMMIT",
                f"DROP TABLE IF EXISTS {_table(table.schema, STAGING_SHOWN)}",
            ],
        )

    def delete(self, table: TableSchema, where: str | None) -> int:
        """One InnoDB transaction, in strict mode with instants in UTC (the reader's zone); a
        warning or note the statement raises rolls it back as an error does (the condition then
        may not have meant what Spark's does). ``DELETE``, not ``TRUNCATE``, which commits on its own."""
        import pymysql

        assert table.schema is not None
        what = self.delete_failed(table)
        statement = self.delete_statement(table, where)
        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                self._ensure_transactional(cursor, table.schema, table.name, f"DELETE FROM {table.qualified_name}")
                try:
                    connection.begin()
                    deleted = cursor.execute(statement)
                    warning = _first_warning(cursor)
                    if warning is not None:
                        raise _Rejected(warning)
                    connection.commit()
                except (pymysql.MySQLError, _Rejected) as error:
                    try:
                        connection.rollback()
                    except pymysql.MySQLError:  # the session is gone: the server rolled back with it
                        pass
                    raise self._failed(what, error) from None
        finally:
            connection.close()
        return int(deleted)

    def _clean(self, cursor: Any, schema: str, staging: str) -> None:
        import pymysql

        try:
            cursor.execute(f"DROP TABLE IF EXISTS {_table(schema, staging)}")
            cursor.execute("SELECT RELEASE_LOCK(%s)", (staging,))
        except pymysql.MySQLError:  # the session is gone: the lock with it, and the next statement drops the table
            pass


def _create_stage(kind: str, schema: str, staging: str, given: list[Field]) -> str:
    """The staging table: the rows' columns by position, typed from Spark's (``kind``'s types), and the task attempt."""
    columns = ", ".join(f"`c{i}` {declared(kind, f)}" for i, f in enumerate(given))
    return f"CREATE TABLE {_table(schema, staging)} ({columns}, {_quote(attempts.COLUMN)} BIGINT) ENGINE=InnoDB"


def _insert(target: str, staging: str, columns: Sequence[str]) -> str:
    """``INSERT INTO target (columns) SELECT c0.. FROM staging``, by position (the kept attempts' condition follows)."""
    names = ", ".join(_quote(c) for c in columns)
    values = ", ".join(f"`c{i}`" for i in range(len(columns)))
    return f"INSERT INTO {target} ({names}) SELECT {values} FROM {staging}"


@dataclass(frozen=True)
class _DeltaMoves:
    """A delta's statements joined to the stage by the key (each followed by the kept attempts' condition)."""

    matched: str
    delete: str
    update: str
    insert: str


def _delta_moves(table: TableSchema, row_id: list[str], staging: str) -> _DeltaMoves:
    assert table.schema is not None
    target, stage = _table(table.schema, table.name), _table(table.schema, staging)
    count = len(table.columns)
    keys = [table.find(k) for k in row_id]
    by_key = " AND ".join(
        f"t.{_quote(c.name)} = {_keyed(f's.`c{1 + count + i}`', c)}" for i, c in enumerate(keys) if c is not None
    )
    assigned = ", ".join(f"t.{_quote(c.name)} = s.`c{1 + i}`" for i, c in enumerate(table.columns))
    joined = f"{target} t JOIN {stage} s ON {by_key}"
    names = ", ".join(_quote(c.name) for c in table.columns)
    values = ", ".join(f"s.`c{1 + i}`" for i in range(count))
    inserts = ", ".join(str(op) for op in delta.INSERTS)
    return _DeltaMoves(
        matched=f"SELECT count(*) FROM {joined} WHERE s.`c0` = {delta.UPDATE}",
        delete=f"DELETE t FROM {joined} WHERE s.`c0` = {delta.DELETE}",
        update=f"UPDATE {joined} SET {assigned} WHERE s.`c0` = {delta.UPDATE}",
        insert=f"INSERT INTO {target} ({names}) SELECT {values} FROM {stage} s WHERE s.`c0` IN ({inserts})",
    )


def _keyed(staged: str, column: Column) -> str:
    """A staged key value compared in the key column's own collation (two implicit collations
    of one character set are an error in MariaDB and MySQL)."""
    if column.collation is None:
        return staged
    charset = column.collation.split("_", 1)[0]
    return f"CONVERT({staged} USING {charset}) COLLATE {column.collation}"


class _Rejected(Exception):
    """The INSERT ran but is not what was asked (a warning, a row count): rolled back."""


def _first_warning(cursor: Any) -> str | None:
    """The first warning or note of the statement just run, in the server's words."""
    cursor.execute("SHOW WARNINGS LIMIT 1")
    row = cursor.fetchone()
    return None if row is None else str(row[2])


def _drop_leftovers(cursor: Any, schema: str) -> None:
    """Drop the staging tables in ``schema`` of statements whose driver died: their lock is free
    (a replace's ``_new`` and ``_old`` tables are under the lock of the staging table they extend)."""
    cursor.execute(_LEFTOVERS, (schema,))
    for (name,) in cursor.fetchall():
        lock = name[: len(STAGING_PREFIX) + 16]
        cursor.execute("SELECT GET_LOCK(%s, 0)", (lock,))
        if cursor.fetchone()[0] == 1:
            try:
                cursor.execute(f"DROP TABLE IF EXISTS {_table(schema, name)}")
            finally:
                cursor.execute("SELECT RELEASE_LOCK(%s)", (lock,))
