"""What a writable SQL source does for a statement: the interface every source's target implements.

A target is built per statement from the attached source. It creates and drops tables
(types from :mod:`sluice.write.typemap`), writes Spark's rows into an existing table as
one transaction of the source (``append`` adds them, ``overwrite`` replaces every row), and
deletes the rows a condition in the source's own SQL selects (:mod:`sluice.planner.deletes`
decides that the condition is exact). How
the rows travel (a staging table filled by Spark's tasks, or the driver's own transaction)
is the target's; what it promises is the same everywhere: the rows land exactly or the
table is left as it was.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sluice.errors import ConfigError, SourceError
from sluice.write.typemap import Field, fields

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluice.sources.base import Source
    from sluice.types import TableSchema

Mode = Literal["append", "overwrite"]


def statement(mode: Mode, schema: str, name: str) -> str:
    """How a write's errors name it: ``INSERT INTO s.t`` or ``INSERT OVERWRITE s.t``."""
    return f"{'INSERT OVERWRITE' if mode == 'overwrite' else 'INSERT INTO'} {schema}.{name}"


def replacing(schema: str, name: str) -> str:
    """How a replace's errors name it (REPLACE TABLE [AS SELECT], CREATE OR REPLACE, createOrReplace)."""
    return f"REPLACE TABLE {schema}.{name}"


#: how a failed replace ends its error: the old table is untouched
KEPT = "the table was left as it was"

#: the prefix of every staging table's name: a later statement drops the leftovers of a killed one
STAGING_PREFIX = "sluice_stage_"
#: how EXPLAIN names a statement's staging table (the hex is drawn when the statement runs)
STAGING_SHOWN = STAGING_PREFIX + "<hex>"
#: how EXPLAIN shows the condition selecting the rows of the task attempts Spark kept (known when the tasks end)
KEPT_SHOWN = "<the kept task attempts>"


@dataclass(frozen=True)
class Plan:
    """What a write does on the source, for EXPLAIN: the path, why, and the statements in order."""

    path: str
    reason: str
    statements: list[str]


class Target(abc.ABC):
    """Writes to one attached SQL source (see the module docstring)."""

    #: the key of the source's column-type table in :mod:`sluice.write.typemap`
    kind: str

    def __init__(self, source: Source) -> None:
        self.source = source

    def schema_of(self, namespace: list[str], what: str) -> str:
        """The source's schema a Spark namespace names (none: the source's default schema)."""
        if not namespace:
            return str(self.source.default_schema)
        if len(namespace) != 1:
            raise ConfigError(
                f"{what}: tables of source {self.source.name!r} are named <catalog>.<schema>.<table>, "
                f"not {'.'.join(namespace)!r}"
            )
        return namespace[0]

    def given_fields(self, frame: DataFrame, columns: int, what: str) -> list[Field]:
        """``frame``'s fields, refused naming ``what`` when Spark gave another count than the table's ``columns``."""
        given = fields(frame.schema.jsonValue())
        if len(given) != columns:
            raise SourceError(self.source.name, f"{what}: the table has {columns} columns; the query gave {len(given)}")
        return given

    @abc.abstractmethod
    def create_table(self, schema: str, name: str, fields: list[Field]) -> bool:
        """Create the table; False when it exists already."""

    @abc.abstractmethod
    def drop_table(self, schema: str, name: str) -> bool:
        """Drop the table; False when it does not exist."""

    @abc.abstractmethod
    def primary_key(self, schema: str, name: str) -> list[str]:
        """The table's primary key columns in key order (none: no key, or one a NULL may hold)."""

    @abc.abstractmethod
    def apply_delta(self, frame: DataFrame, schema: str, name: str, row_id: list[str]) -> int:
        """Apply an UPDATE's or MERGE's delta rows (:mod:`sluice.write.delta`) in one transaction;
        the number of delta rows applied."""

    @abc.abstractmethod
    def write(self, frame: DataFrame, schema: str, name: str, mode: Mode) -> int:
        """Land ``frame``'s rows (Spark has lined its columns up with the table's) in one
        transaction; the number of rows written."""

    @abc.abstractmethod
    def replace(self, frame: DataFrame, schema: str, name: str, fields: list[Field]) -> int:
        """Drop the table (when it exists), create it with ``fields`` and land ``frame``'s rows, as
        one step readers see whole: the old table and rows, or the new ones, never no table; a
        failure leaves the old table as it was and no other table behind. The rows written."""

    @abc.abstractmethod
    def explain_write(self, table: TableSchema, mode: Mode) -> Plan:
        """What :meth:`write` would run for ``table`` (EXPLAIN): reads nothing, writes nothing."""

    @abc.abstractmethod
    def explain_delta(self, table: TableSchema, row_id: list[str]) -> Plan:
        """What :meth:`apply_delta` would run for ``table`` (EXPLAIN): reads nothing, writes nothing."""

    def staged_fields(self, table: TableSchema) -> list[Field]:
        """The table's columns as the Spark fields a write's query carries (Spark cast them to the table's types)."""
        return [Field(c.name, c.type.name, c.nullable) for c in table.columns]

    def delta_fields(self, table: TableSchema, row_id: list[str]) -> list[Field]:
        """The fields of a delta's rows (:mod:`sluice.write.delta`): the operation, the table's columns,
        then the old value of each row-id column (``k0..``), as EXPLAIN shows the delta's stage."""
        keys = [table.find(k) for k in row_id]
        olds = [Field(f"k{i}", c.type.name, False) for i, c in enumerate(keys) if c is not None]
        return [Field("op", "int", False), *self.staged_fields(table), *olds]

    @abc.abstractmethod
    def delete(self, table: TableSchema, where: str | None) -> int:
        """``DELETE FROM table WHERE where`` (None: every row) in one transaction of the source,
        rolled back on any failure; the number of rows deleted."""

    def delete_statement(self, table: TableSchema, where: str | None) -> str:
        """The statement :meth:`delete` runs: the table named as a read names it."""
        name = self.source.dialect.quote_table(table.schema, table.name)
        return f"DELETE FROM {name}" + (f" WHERE {where}" if where is not None else "")

    def delete_failed(self, table: TableSchema) -> str:
        """How a failed delete's error starts: the table, and that nothing was deleted."""
        return f"DELETE FROM {table.qualified_name}: nothing was deleted"
