"""Hand-built table schemas for unit tests: the properties catalogs would report."""

from __future__ import annotations

from typing import Any

from sluice.types import Column, SparkType, TableSchema


def column(name: str, spark: str, remote: str, **properties: Any) -> Column:
    return Column(name, SparkType(spark), remote, **properties)


PG_TABLE = TableSchema(
    "pg",
    "public",
    "t",
    (
        column("id", "bigint", "bigint"),
        column("i", "int", "integer"),
        column("f", "double", "double precision"),
        column("r", "float", "real"),
        column("d", "decimal(10,2)", "numeric(10,2)"),
        column("name", "string", "text", collation="en-US-x-icu"),
        column("code", "string", "text", collation="C"),
        column("ch", "string", "character(5)", collation="en-US-x-icu", padded=True),
        column("ci", "string", "text", collation="und-ci", case_insensitive=True),
        column("dt", "date", "date"),
        column("ts", "timestamp", "timestamp with time zone"),
        column("tn", "timestamp_ntz", "timestamp without time zone"),
        column("flag", "boolean", "boolean"),
        column("n", "decimal(38,10)", "numeric", unpushable="unconstrained numeric is read rounded"),
    ),
)

SQLITE_TABLE = TableSchema(
    "lite",
    "main",
    "t",
    (
        column("id", "bigint", "INTEGER"),
        column("i", "bigint", "INTEGER"),
        column("f", "double", "REAL"),
        column("name", "string", "TEXT"),
        column("code", "string", "TEXT"),
        column("ci", "string", "TEXT", collation="NOCASE"),
        column("ch", "string", "TEXT", collation="RTRIM"),
        column("dt", "date", "DATE"),
        column("ts", "timestamp_ntz", "DATETIME"),
        column("flag", "boolean", "BOOLEAN"),
    ),
)

MYSQL_TABLE = TableSchema(
    "my",
    "test",
    "t",
    (
        column("id", "bigint", "bigint(20)"),
        column("i", "int", "int(11)"),
        column("u", "bigint", "int(10) unsigned"),
        column("f", "double", "double"),
        column("r", "float", "float"),
        column("d", "decimal(10,2)", "decimal(10,2)"),
        column("name", "string", "varchar(40)", collation="utf8mb4_general_ci", case_insensitive=True),
        column("code", "string", "varchar(40)", collation="utf8mb4_nopad_bin"),
        column("ch", "string", "char(5)", collation="utf8mb4_bin"),
        column("ci", "string", "varchar(40)", collation="utf8mb4_unicode_ci", case_insensitive=True),
        column("dt", "date", "date"),
        column("ts", "timestamp", "timestamp(6)"),
        column("tn", "timestamp_ntz", "datetime(6)"),
        column("flag", "boolean", "tinyint(1)"),
    ),
)

DUCKDB_TABLE = TableSchema(
    "duck",
    "main",
    "t",
    (
        column("id", "bigint", "BIGINT"),
        column("i", "int", "INTEGER"),
        column("f", "double", "DOUBLE"),
        column("r", "float", "FLOAT"),
        column("d", "decimal(10,2)", "DECIMAL(10,2)"),
        column("name", "string", "VARCHAR"),
        column("code", "string", "VARCHAR", collation="C"),
        column("ch", "string", "VARCHAR", collation="NOACCENT"),
        column("ci", "string", "VARCHAR", collation="NOCASE"),
        column("dt", "date", "DATE"),
        column("ts", "timestamp", "TIMESTAMP WITH TIME ZONE"),
        column("tn", "timestamp_ntz", "TIMESTAMP"),
        column("flag", "boolean", "BOOLEAN"),
        column(
            "n", "string", "ENUM('a', 'b')", read_as_text=True, unpushable="ENUM('a', 'b') is read as its text form"
        ),
        column("ti", "tinyint", "TINYINT"),
        column("u", "smallint", "UTINYINT"),
        column("h", "decimal(38,0)", "HUGEINT"),
        column("vw", "string", "VARCHAR", collation="unknown"),
    ),
)
