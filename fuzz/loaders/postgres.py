"""PostgreSQL: schema ``sluice_fuzz``; text as the database default, ``COLLATE "C"``, ICU,
a nondeterministic (case-insensitive) ICU collation, ``varchar(n)`` and ``char(n)``."""

from __future__ import annotations

from typing import Any

from fuzz.loaders.base import ServerLoader
from fuzz.tables import ColumnSpec
from tests.sources import PG_URL

SCHEMA = "sluice_fuzz"
_TYPES = {
    "smallint": "smallint",
    "int": "int",
    "bigint": "bigint",
    "double": "float8",
    "real": "float4",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
    "boolean": "boolean",
}
_TEXT = {
    "default": "text",
    "C": 'text COLLATE "C"',
    "icu": 'text COLLATE "en-US-x-icu"',
    "nd_ci": f"text COLLATE {SCHEMA}.nd_ci",
    "varchar": "varchar({width})",
    "char": "char({width})",
}


class PostgresLoader(ServerLoader):
    source = "pg"
    scheme = "postgresql"
    text_variants = tuple(_TEXT)
    namespace = SCHEMA
    placeholder = "%s"

    @property
    def url(self) -> str:
        return PG_URL

    def column_type(self, column: ColumnSpec) -> str:
        if column.kind == "decimal":
            return f"numeric({column.precision},{column.scale})"
        if column.kind == "string":
            return _TEXT[column.text[self.source]].format(width=column.width)
        return _TYPES[column.kind]

    def prepare(self) -> None:
        import psycopg

        statements = [
            f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
            f"CREATE COLLATION IF NOT EXISTS {SCHEMA}.nd_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
        ]
        with psycopg.connect(self.url, autocommit=True) as connection:
            for statement in statements:
                try:
                    connection.execute(statement)
                except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateObject):
                    pass  # a concurrent run created it between IF NOT EXISTS and the insert

    def execute(self, statements: list[str], insert: str | None, rows: list[tuple[Any, ...]]) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement)
            if insert and rows:
                with connection.cursor() as cursor:
                    cursor.executemany(insert, rows)
