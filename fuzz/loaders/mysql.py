"""MariaDB/MySQL: database ``sluice_fuzz``; text under utf8mb4_general_ci, utf8mb4_bin,
utf8mb4_nopad_bin, utf8mb4_unicode_520_ci or as CHAR(n). No NaN or infinity (stored as
NULL), TIMESTAMP only from 1970 to 2038 (NULL outside), decimal scale at most 30."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any
from urllib.parse import unquote, urlsplit

from fuzz.loaders.base import ServerLoader
from fuzz.tables import ColumnSpec
from tests.sources import MYSQL_URL

DATABASE = "sluice_fuzz"
_TYPES = {
    "smallint": "SMALLINT",
    "int": "INT",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "real": "FLOAT",
    "date": "DATE",
    "timestamp": "TIMESTAMP(6) NULL",
    "timestamp_ntz": "DATETIME(6)",
    "boolean": "BOOLEAN",
}
_TEXT = {
    "general_ci": "VARCHAR({width}) COLLATE utf8mb4_general_ci",
    "bin": "VARCHAR({width}) COLLATE utf8mb4_bin",
    "nopad_bin": "VARCHAR({width}) COLLATE utf8mb4_nopad_bin",
    "unicode_520_ci": "VARCHAR({width}) COLLATE utf8mb4_unicode_520_ci",
    "char": "CHAR({width})",
    "char_bin": "CHAR({width}) COLLATE utf8mb4_bin",
}
_MAX_SCALE = 30
_TIMESTAMP_RANGE = (
    dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc),
    dt.datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=dt.timezone.utc),
)


class MysqlLoader(ServerLoader):
    source = "my"
    scheme = "mysql"
    text_variants = tuple(_TEXT)
    namespace = DATABASE
    placeholder = "%s"

    @property
    def url(self) -> str:
        return MYSQL_URL

    def column_type(self, column: ColumnSpec) -> str:
        if column.kind == "decimal":
            return f"DECIMAL({column.precision},{min(column.scale, _MAX_SCALE)})"
        if column.kind == "string":
            return _TEXT[column.text[self.source]].format(width=column.width + 8)
        return _TYPES[column.kind]

    def convert(self, value: Any, column: ColumnSpec) -> Any:
        if value is None:
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, Decimal) and column.scale > _MAX_SCALE:
            return value.quantize(Decimal(1).scaleb(-_MAX_SCALE))
        if column.kind == "timestamp":
            low, high = _TIMESTAMP_RANGE
            return value.astimezone(dt.timezone.utc).replace(tzinfo=None) if low <= value <= high else None
        return value

    def _connect(self):
        import pymysql

        parts = urlsplit(self.url)
        return pymysql.connect(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 3306,
            user=unquote(parts.username or "root"),
            password=unquote(parts.password or ""),
            charset="utf8mb4",
            autocommit=True,
            init_command="SET time_zone = '+00:00'",
        )

    def prepare(self) -> None:
        self.execute(
            [f"CREATE DATABASE IF NOT EXISTS {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"], None, []
        )

    def execute(self, statements: list[str], insert: str | None, rows: list[tuple[Any, ...]]) -> None:
        connection = self._connect()
        try:
            cursor = connection.cursor()
            for statement in statements:
                cursor.execute(statement)
            if insert and rows:
                cursor.executemany(insert, rows)
        finally:
            connection.close()
