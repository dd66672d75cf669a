"""DuckDB files: types from ``duckdb_columns()``, collations from the DDL, Arrow reads by rowid.

Every connection is read-only: DuckDB lets any number of processes read a file together
(Spark's Python workers are separate processes) but none while a writer holds it, which
is reported as such. Each session pins the settings the dialect's facts depend on
(``TimeZone``, ``default_collation``, ``error_on_division_by_zero``): an instance shared
with other code in the same process may have changed their global values. DuckDB has no
statement timeout setting, so the reader interrupts its connection when
``statement_timeout_s`` runs out.

Partitions are ``rowid`` ranges: DuckDB filters them inside the scan (row groups outside
the range are skipped), so any table splits evenly whatever its keys.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from sluice.dialects.duckdb import UNKNOWN_COLLATION, WIDENED_TYPES, DuckdbDialect
from sluice.errors import SourceError, no_such_table
from sluice.sources.arrow import conform
from sluice.sources.base import ReadTask, SqlSource, absolute_file_url, ascii_folded, file_path, key_ranges
from sluice.types import Column, Kind, SparkType, TableSchema

if TYPE_CHECKING:
    import duckdb

_SIMPLE_TYPES = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INTEGER": "int",
    "BIGINT": "bigint",
    "FLOAT": "float",
    "DOUBLE": "double",
    "VARCHAR": "string",
    "DATE": "date",
    "TIMESTAMP": "timestamp_ntz",
    "TIMESTAMP WITH TIME ZONE": "timestamp",
    "BLOB": "binary",
}
_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file
#: settings every DuckDB session pins (the dialect's facts depend on them)
SESSION_SETTINGS = (
    "SET SESSION TimeZone = 'UTC'",
    "SET SESSION default_collation = ''",
    "SET SESSION error_on_division_by_zero = true",
)
_RELATION = """
SELECT table_name, 'table', estimated_size, sql, schema_name FROM duckdb_tables()
 WHERE database_name = current_database() AND lower(schema_name) = lower($1) AND lower(table_name) = lower($2)
UNION ALL
SELECT view_name, 'view', NULL, sql, schema_name FROM duckdb_views()
 WHERE NOT internal AND database_name = current_database() AND lower(schema_name) = lower($1) AND lower(view_name) = lower($2)
"""
_COLUMNS = """
SELECT schema_name, column_name, data_type, is_nullable FROM duckdb_columns()
 WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 ORDER BY column_index
"""


class DuckdbSource(SqlSource):
    dialect = DuckdbDialect()
    default_schema = "main"

    def __init__(self, name: str, url: str, **options: Any) -> None:
        super().__init__(name, url, **options)
        self.path = file_path(name, url, "DuckDB", ".duckdb")

    @property
    def portable_url(self) -> str:
        return absolute_file_url(self.url, self.path)

    def name_key(self, name: str) -> str:
        """DuckDB matches identifiers, quoted or not, ignoring ASCII case only (``"Cs"`` and
        ``cs`` cannot both exist; ``"É"`` and ``"é"`` can)."""
        return ascii_folded(name)

    # ------------------------------------------------------------ connections
    def _connect(self) -> duckdb.DuckDBPyConnection:
        import duckdb

        if not os.path.isfile(self.path):
            raise SourceError(self.name, f"DuckDB file {self.path} does not exist")
        with open(self.path, "rb") as handle:  # checked first: DuckDB would try to load an extension for other formats
            if handle.read(12)[8:] != _MAGIC:
                raise SourceError(self.name, f"{self.path} is not a DuckDB database file")
        try:
            connection = duckdb.connect(self.path, read_only=True)
        except duckdb.Error as error:
            raise SourceError(self.name, self._open_failure(str(error))) from None
        try:
            for setting in SESSION_SETTINGS:
                connection.execute(setting)
        except duckdb.Error as error:
            connection.close()
            raise SourceError(
                self.name, f"cannot set up a read session on {self.path} (DuckDB 2.0 or newer is needed): {error}"
            ) from None
        return connection

    def _open_failure(self, message: str) -> str:
        if "Could not set lock" in message or "Conflicting lock" in message:
            return f"{self.path} is open for writing by another process; DuckDB admits readers only when no writer holds the file ({message})"
        if "different configuration" in message:
            return f"{self.path} is already open in this process for writing or with other settings ({message})"
        return f"cannot open {self.path}: {message}"

    def check(self) -> None:
        connection = self._connect()
        try:
            connection.execute("SELECT count(*) FROM duckdb_tables()").fetchone()
        finally:
            connection.close()

    # ------------------------------------------------------------ catalog
    def describe_query(self, sql: str) -> tuple[Column, ...]:
        """The result's columns as DuckDB's DESCRIBE of the query names their types (on the
        read-only connection), typed as :meth:`describe` types a table's; collations unknown."""
        import duckdb

        connection = self._connect()
        try:
            info = connection.execute(f"DESCRIBE SELECT * FROM ({sql}) AS sluice_query").fetchall()
        except duckdb.Error as error:
            raise SourceError(self.name, f"query failed: {self.masked(str(error)).strip()}") from None
        finally:
            connection.close()
        return tuple(
            _column(name, data_type, nullable != "NO", UNKNOWN_COLLATION) for name, data_type, nullable, *_ in info
        )

    def describe(self, schema: str | None, table: str) -> TableSchema:
        schema = schema or self.default_schema
        connection = self._connect()
        try:
            # lower() folds all of Unicode; DuckDB's names fold ASCII only: keep the one it means
            relation = next(
                (
                    r
                    for r in connection.execute(_RELATION, [schema, table]).fetchall()
                    if self.name_key(r[0]) == self.name_key(table) and self.name_key(r[4]) == self.name_key(schema)
                ),
                None,
            )
            if relation is None:
                names = connection.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                    "AND schema_name = $1 UNION ALL SELECT view_name FROM duckdb_views() "
                    "WHERE NOT internal AND database_name = current_database() AND schema_name = $1",
                    [schema],
                ).fetchall()
                raise no_such_table(self.name, schema, table, (r[0] for r in names))
            name, kind, rows, ddl, _ = relation
            info = connection.execute(_COLUMNS, [relation[4], name]).fetchall()
        finally:
            connection.close()
        # a view's columns carry the collations of their expressions, which no catalog shows
        collations = _collations(ddl) if kind == "table" else None
        columns = []
        for _, column_name, data_type, nullable in info:
            collation = UNKNOWN_COLLATION if collations is None else collations.get(column_name.lower())
            columns.append(_column(column_name, data_type, nullable, collation))
        splittable = kind == "table" and all(
            c.name.lower() != "rowid" for c in columns
        )  # a column named rowid hides the row id
        return TableSchema(
            self.name, info[0][0], name, tuple(columns), row_estimate=rows, split_column="rowid" if splittable else None
        )

    def select_expression(self, column_name: str, table: TableSchema) -> str:
        column = table.column(column_name)
        quoted = self.dialect.render_identifier(column.name)
        if column.read_as_text:
            return f"CAST({quoted} AS VARCHAR)"
        if column.remote_type in WIDENED_TYPES:
            return self.dialect.render(
                self.dialect.cast(exp.column(column.name, quoted=True), column.type, column.type)
            )
        return quoted

    # ------------------------------------------------------------ reading
    def split(self, table: TableSchema, count: int) -> list[str | None]:
        if count <= 1 or table.split_column != "rowid":
            return [None]
        connection = self._connect()
        try:
            row = connection.execute(
                f"SELECT min(rowid), max(rowid) FROM {self.dialect.quote_table(table.schema, table.name)}"
            ).fetchone()
            assert row is not None  # an aggregate returns one row
            low, high = row
        finally:
            connection.close()
        return key_ranges("rowid", low, high, count)

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        import duckdb

        connection = self._connect()
        expired = threading.Event()

        def interrupt() -> None:
            expired.set()
            connection.interrupt()

        timer = threading.Timer(self.statement_timeout_s, interrupt)
        timer.daemon = True
        timer.start()
        try:
            try:
                for batch in connection.sql(task.request).to_arrow_reader(self.batch_rows):
                    yield conform(self.checked(batch, task), task.schema, task.table)
            except (duckdb.Error, pa.ArrowException, OSError) as error:  # a failed stream surfaces as OSError
                if expired.is_set():
                    raise SourceError(
                        self.name, f"query interrupted after statement_timeout_s={self.statement_timeout_s:g}"
                    ) from None
                raise SourceError(self.name, f"query failed: {error}") from None
        finally:
            timer.cancel()
            connection.close()


def _column(name: str, data_type: str, nullable: bool, collation: str | None) -> Column:
    """The Spark view of one DuckDB column; types Spark cannot compare alike are read as text."""
    common: dict[str, Any] = {"name": name, "remote_type": data_type, "nullable": bool(nullable)}
    if data_type in _SIMPLE_TYPES:
        spark = SparkType(_SIMPLE_TYPES[data_type])
        return Column(type=spark, collation=collation if spark.kind is Kind.STRING else None, **common)
    if data_type in WIDENED_TYPES:
        return Column(type=SparkType(WIDENED_TYPES[data_type]), **common)
    if data_type.startswith("DECIMAL("):
        return Column(type=SparkType(data_type.lower().replace(" ", "")), **common)
    return Column(
        type=SparkType("string"),
        read_as_text=True,
        unpushable=f"{data_type} is read as its text form; DuckDB compares the typed value",
        **common,
    )


def _collations(ddl: str) -> dict[str, str] | None:
    """Column collations declared in DuckDB's ``CREATE TABLE`` text (lower-cased column names).

    None when the text cannot be read with certainty (it does not parse, or mentions
    COLLATE more often than the parse found): every text column is then of unknown collation.
    """
    try:
        tree = sqlglot.parse_one(ddl, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    found = {}
    for definition in tree.find_all(exp.ColumnDef):
        for constraint in definition.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.CollateColumnConstraint):
                found[definition.name.lower()] = kind.this.sql(dialect="duckdb").replace('"', "")
    return found if ddl.lower().count("collate") == len(found) else None
