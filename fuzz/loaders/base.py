"""What a loader does: store a logical table in one source, as that source can.

A loader knows its source's column types and text variants (collations, padding), turns
each value into what the source stores (NaN becomes NULL where there is no NaN, a
TIMESTAMP outside MySQL's range becomes NULL, ...) and names the table the way Sluice
SQL refers to it. The rows each source holds may therefore differ; what must not differ
is each source's answer with pushdown on and off.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Any, ClassVar

from fuzz.tables import ColumnSpec, Table


class Loader(abc.ABC):
    #: the attach name in the Federation (the name tests/sources.py uses too)
    source: ClassVar[str]
    #: the URL scheme Sluice must have registered for this source to run
    scheme: ClassVar[str]
    #: text variants a string column may take in this source (see :meth:`column_type`)
    text_variants: ClassVar[tuple[str, ...]]

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    # ------------------------------------------------------------- what differs per source
    @property
    @abc.abstractmethod
    def url(self) -> str:
        """The URL to attach."""

    @abc.abstractmethod
    def reference(self, name: str) -> str:
        """The table as Sluice SQL names it (``pg.sluice_fuzz.t1``)."""

    @abc.abstractmethod
    def column_type(self, column: ColumnSpec) -> str:
        """The column's type in this source's DDL, text variant included."""

    @abc.abstractmethod
    def qualified(self, name: str) -> str:
        """The table's name in this source's own SQL."""

    @abc.abstractmethod
    def execute(self, statements: list[str], insert: str | None, rows: list[tuple[Any, ...]]) -> None:
        """Run DDL ``statements``, then ``insert`` for every row, and release the connection."""

    def convert(self, value: Any, column: ColumnSpec) -> Any:
        """The value this source stores for ``value`` (identity unless the source lacks it)."""
        return value

    def problem(self) -> str | None:
        """Why this source cannot run here (``None`` when it can): Sluice or server missing."""
        from sluice.sources import SCHEMES

        if self.scheme not in SCHEMES:
            return f"Sluice has no {self.scheme!r} source registered (sluice/sources/__init__.py)"
        return None

    placeholder: ClassVar[str] = "?"

    def prepare(self) -> None:  # noqa: B027  # an optional hook: most loaders need nothing
        """Create what every table needs (a schema, a collation); safe to repeat."""

    # ------------------------------------------------------------- shared
    def ddl(self, table: Table) -> str:
        columns = ", ".join(["id BIGINT PRIMARY KEY", *(f"{c.name} {self.column_type(c)}" for c in table.columns)])
        return f"CREATE TABLE {self.qualified(table.name)} ({columns})"

    def stored_rows(self, table: Table) -> list[tuple[Any, ...]]:
        return [(row[0], *(self.convert(v, c) for v, c in zip(row[1:], table.columns))) for row in table.rows]

    def load(self, table: Table) -> None:
        """(Re)create ``table`` in this source with its rows."""
        marks = ", ".join([self.placeholder] * (1 + len(table.columns)))
        insert = f"INSERT INTO {self.qualified(table.name)} VALUES ({marks})"
        self.execute(
            [f"DROP TABLE IF EXISTS {self.qualified(table.name)}", self.ddl(table)], insert, self.stored_rows(table)
        )

    def drop(self, name: str) -> None:
        self.execute([f"DROP TABLE IF EXISTS {self.qualified(name)}"], None, [])


class FileLoader(Loader):
    """A source kept in one file of the campaign's folder, tables in its default schema."""

    filename: ClassVar[str]

    @property
    def path(self) -> str:
        return str(self.folder / self.filename)

    @property
    def url(self) -> str:
        return f"{self.scheme}:///{self.path}"

    def reference(self, name: str) -> str:
        return f"{self.source}.{name}"

    def qualified(self, name: str) -> str:
        return name


class ServerLoader(Loader):
    """A source on a server, tables in a schema (database) of the fuzzer's own."""

    namespace: ClassVar[str]

    def reference(self, name: str) -> str:
        return f"{self.source}.{self.namespace}.{name}"

    def qualified(self, name: str) -> str:
        return f"{self.namespace}.{name}"
