"""Spark types as the column types ``CREATE TABLE`` declares on each SQL source.

One table per source (documented in docs/writes.md): a Spark type maps to the source type
that holds every value of it exactly and that Sluice reads back as the same Spark type (or,
for ``tinyint`` on PostgreSQL, a wider integer). A type with no such column is refused,
naming the column and why, before anything is created: the table never holds less than
Spark did.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sluice.errors import ConfigError

#: Spark's JSON type names (``StructType.json()``) as Sluice's DDL names (sluice.types.SparkType)
_JSON_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_VARCHAR = re.compile(r"(?:var)?char\((\d+)\)")

POSTGRES = {
    "boolean": "boolean",
    "tinyint": "smallint",
    "smallint": "smallint",
    "int": "integer",
    "bigint": "bigint",
    "float": "real",
    "double": "double precision",
    "string": "text",
    "binary": "bytea",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
}
#: MariaDB and MySQL 8 (text and decimals: :func:`_mysql`). A Spark ``timestamp`` is an instant;
#: MariaDB's instant type (TIMESTAMP) ends in 2038, so it is created as DATETIME(6), which
#: Sluice reads as ``timestamp_ntz``: Spark casts the rows to it in the session time zone
#: (its own ``CAST(ts AS TIMESTAMP_NTZ)``; docs/writes.md)
MYSQL = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INT",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "binary": "LONGBLOB",
    "date": "DATE",
    "timestamp": "DATETIME(6)",
    "timestamp_ntz": "DATETIME(6)",
}
#: DuckDB holds every Spark value as it is (its default collation, pinned by the reader, is binary)
DUCKDB = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "VARCHAR",
    "binary": "BLOB",
    "date": "DATE",
    "timestamp": "TIMESTAMPTZ",
    "timestamp_ntz": "TIMESTAMP",
}
#: SQLite keeps each value's storage class; the declared name decides how Sluice reads it back
#: (sluice.sources.sqlite_values.spark_type_for): dates and timestamps are ISO text
SQLITE = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INT4",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "string": "TEXT",
    "binary": "BLOB",
    "date": "DATE",
    "timestamp_ntz": "TIMESTAMP",
}
#: why a Spark type has no column on a source (the rest: "no column type holds it")
SQLITE_REFUSED = {
    "float": "SQLite stores every REAL in 8 bytes and reads it back as double; cast to double",
    "timestamp": "SQLite has no time-zone-aware type; cast to timestamp_ntz (wall-clock time) first",
}
#: SQLite's NUMERIC affinity keeps at most 15 significant digits of a number given as text
SQLITE_DECIMAL_DIGITS = 15


@dataclass(frozen=True)
class Field:
    """One column of Spark's schema: its name, Sluice's DDL type name and nullability."""

    name: str
    type: str
    nullable: bool


def fields(schema: dict[str, Any]) -> list[Field]:
    """Spark's JSON schema as fields; a nested type (array, map, struct) keeps its JSON text."""
    out = []
    for field in schema["fields"]:
        raw = field["type"]
        name = _JSON_NAMES.get(raw, raw) if isinstance(raw, str) else str(raw.get("type", raw))
        out.append(Field(str(field["name"]), name, bool(field.get("nullable", True))))
    return out


def declared(source_kind: str, field: Field) -> str:
    """The column type ``field`` is created as on ``source_kind`` (a key of :data:`_DECLARE`)."""
    found = _DECLARE[source_kind](field, _DECIMAL.fullmatch(field.type))
    if found is None:
        raise _refused(source_kind, field, "no column type of the source holds every value of it")
    return found


def _postgres(field: Field, decimal: re.Match[str] | None) -> str | None:
    if decimal:
        return f"numeric({decimal[1]},{decimal[2]})"
    if _VARCHAR.fullmatch(field.type):
        return field.type
    return POSTGRES.get(field.type)


def _sqlite(field: Field, decimal: re.Match[str] | None) -> str | None:
    if decimal:
        if int(decimal[1]) > SQLITE_DECIMAL_DIGITS:
            raise _refused(
                "sqlite",
                field,
                f"SQLite's NUMERIC affinity keeps {SQLITE_DECIMAL_DIGITS} significant digits, "
                f"not {decimal[1]}; use decimal(15,s) or less, or cast to string",
            )
        return f"DECIMAL({decimal[1]},{decimal[2]})"
    if field.type in SQLITE_REFUSED:
        raise _refused("sqlite", field, SQLITE_REFUSED[field.type])
    if _VARCHAR.fullmatch(field.type):
        return "TEXT"
    return SQLITE.get(field.type)


def _mysql(collation: str, max_scale: int) -> Callable[[Field, re.Match[str] | None], str | None]:
    """MariaDB's or MySQL 8's types: text in the server's NO PAD code-point collation."""

    def declare(field: Field, decimal: re.Match[str] | None) -> str | None:
        if decimal:
            if int(decimal[2]) > max_scale:
                raise _refused("mysql", field, f"MySQL's DECIMAL keeps at most {max_scale} digits after the point")
            return f"DECIMAL({decimal[1]},{decimal[2]})"
        text = f"CHARACTER SET utf8mb4 COLLATE {collation}"
        varchar = _VARCHAR.fullmatch(field.type)
        if varchar:
            return f"VARCHAR({varchar[1]}) {text}"
        if field.type == "string":
            return f"LONGTEXT {text}"
        return MYSQL.get(field.type)

    return declare


def _duckdb(field: Field, decimal: re.Match[str] | None) -> str | None:
    if decimal:
        return f"DECIMAL({decimal[1]},{decimal[2]})"
    if _VARCHAR.fullmatch(field.type):
        return "VARCHAR"  # DuckDB keeps no length; Spark checked it
    return DUCKDB.get(field.type)


#: source kind -> its column types (None: no type holds the Spark type)
_DECLARE: dict[str, Callable[[Field, re.Match[str] | None], str | None]] = {
    "postgres": _postgres,
    "sqlite": _sqlite,
    "duckdb": _duckdb,
    "mariadb": _mysql("utf8mb4_nopad_bin", 38),
    "mysql": _mysql("utf8mb4_0900_bin", 30),
}


def column_list(source_kind: str, fields: list[Field], quote: Callable[[str], str]) -> str:
    """The columns of a ``CREATE TABLE`` on ``source_kind``: ``name type [NOT NULL], ...``, names
    quoted by the source's rule."""
    return ", ".join(f"{quote(f.name)} {declared(source_kind, f)}{'' if f.nullable else ' NOT NULL'}" for f in fields)


def _refused(source_kind: str, field: Field, why: str) -> ConfigError:
    return ConfigError(
        f"CREATE TABLE: column {field.name!r} of Spark type {field.type} cannot be created on {source_kind}: {why}"
    )
