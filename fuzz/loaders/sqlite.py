"""SQLite: one file per run; text under BINARY, NOCASE or RTRIM; no NaN (stored as NULL),
decimals as INTEGER or REAL (NULL where the REAL no longer reads as a decimal of the
column's type: SQLite cannot hold 99999999999999999999 exactly), dates and timestamps as
ISO text (instants as UTC readings)."""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from decimal import Decimal
from typing import Any

from fuzz.loaders.base import FileLoader
from fuzz.tables import ColumnSpec
from sluice.sources.sqlite_values import Unfit, decimal_value

_TYPES = {
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "double": "REAL",
    "real": "FLOAT",
    "date": "DATE",
    "timestamp": "DATETIME",
    "timestamp_ntz": "TIMESTAMP",
    "boolean": "BOOLEAN",
}


class SqliteLoader(FileLoader):
    source = "lite"
    scheme = "sqlite"
    text_variants = ("BINARY", "NOCASE", "RTRIM")
    filename = "fuzz.db"

    def column_type(self, column: ColumnSpec) -> str:
        if column.kind == "decimal":
            return f"DECIMAL({column.precision},{column.scale})"
        if column.kind == "string":
            return f"TEXT COLLATE {column.text[self.source]}"
        return _TYPES[column.kind]

    def convert(self, value: Any, column: ColumnSpec) -> Any:
        if value is None:
            return None
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, Decimal):
            if value == value.to_integral_value() and -(1 << 63) <= value < (1 << 63):
                return int(value)
            try:  # a REAL whose reading no longer fits the column (1e20 for 99999999999999999999) is NULL here
                decimal_value(float(value), column.precision, column.scale)
            except Unfit:
                return None
            return float(value)
        if isinstance(value, dt.datetime):
            utc = value.astimezone(dt.timezone.utc) if value.tzinfo else value
            return utc.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, bool):
            return int(value)
        return value

    def prepare(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        sqlite3.connect(self.path).close()  # the file must exist before Sluice attaches it

    def execute(self, statements: list[str], insert: str | None, rows: list[tuple[Any, ...]]) -> None:
        connection = sqlite3.connect(self.path)
        try:
            for statement in statements:
                connection.execute(statement)
            if insert and rows:
                connection.executemany(insert, rows)
            connection.commit()
        finally:
            connection.close()
