"""DuckDB: one file per run; text plain (binary), COLLATE NOCASE, NOACCENT or both.
The file is written with the connection closed at once: Spark's readers open it too."""

from __future__ import annotations

from typing import Any

from fuzz.loaders.base import FileLoader
from fuzz.tables import ColumnSpec

_TYPES = {
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "real": "REAL",
    "date": "DATE",
    "timestamp": "TIMESTAMPTZ",
    "timestamp_ntz": "TIMESTAMP",
    "boolean": "BOOLEAN",
}
_TEXT = {
    "plain": "VARCHAR",
    "NOCASE": "VARCHAR COLLATE NOCASE",
    "NOACCENT": "VARCHAR COLLATE NOACCENT",
    "NOCASE.NOACCENT": "VARCHAR COLLATE NOCASE.NOACCENT",
}


class DuckdbLoader(FileLoader):
    source = "duck"
    scheme = "duckdb"
    text_variants = tuple(_TEXT)
    filename = "fuzz.duckdb"

    def column_type(self, column: ColumnSpec) -> str:
        if column.kind == "decimal":
            return f"DECIMAL({column.precision},{column.scale})"
        if column.kind == "string":
            return _TEXT[column.text[self.source]]
        return _TYPES[column.kind]

    def prepare(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.execute([], None, [])  # the file must exist before Sluice attaches it

    def execute(self, statements: list[str], insert: str | None, rows: list[tuple[Any, ...]]) -> None:
        import duckdb

        connection = duckdb.connect(self.path)
        try:
            for statement in statements:
                connection.execute(statement)
            if insert and rows:
                connection.executemany(insert, rows)
        finally:
            connection.close()
