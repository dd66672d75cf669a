"""CREATE TABLE's type table (sluice/write/typemap.py), as docs/writes.md documents it, and the
registry of targets (sluice/write/__init__.py): no server.

The round trips that prove each mapping holds every value are the integration tests
(test_writes_sql.py, test_writes_mysql.py); this pins the table itself and the refusals.
"""

from __future__ import annotations

import re

import pytest

from sluice.errors import ConfigError
from sluice.sources import SCHEMES
from sluice.sources.flight import FlightSource
from sluice.sources.iceberg import IcebergSource
from sluice.write import TARGETS
from sluice.write.typemap import Field, column_list, declared

#: Spark type -> the column declared on each kind (None: refused), as in docs/writes.md
_TABLE = {
    "boolean": ("boolean", "BOOLEAN", "BOOLEAN", "BOOLEAN"),
    "tinyint": ("smallint", "TINYINT", "TINYINT", "TINYINT"),
    "int": ("integer", "INT", "INT4", "INTEGER"),
    "bigint": ("bigint", "BIGINT", "BIGINT", "BIGINT"),
    "float": ("real", "FLOAT", None, "FLOAT"),
    "double": ("double precision", "DOUBLE", "DOUBLE", "DOUBLE"),
    "decimal(38,10)": ("numeric(38,10)", "DECIMAL(38,10)", None, "DECIMAL(38,10)"),
    "decimal(15,4)": ("numeric(15,4)", "DECIMAL(15,4)", "DECIMAL(15,4)", "DECIMAL(15,4)"),
    "string": (
        "text",
        "LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
        "TEXT",
        "VARCHAR",
    ),
    "varchar(5)": ("varchar(5)", "VARCHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin", "TEXT", "VARCHAR"),
    "binary": ("bytea", "LONGBLOB", "BLOB", "BLOB"),
    "date": ("date", "DATE", "DATE", "DATE"),
    "timestamp": ("timestamptz", "DATETIME(6)", None, "TIMESTAMPTZ"),
    "timestamp_ntz": ("timestamp", "DATETIME(6)", "TIMESTAMP", "TIMESTAMP"),
    "array": (None, None, None, None),
}
_KINDS = ("postgres", "mariadb", "sqlite", "duckdb")


@pytest.mark.parametrize("spark_type", sorted(_TABLE))
@pytest.mark.parametrize("kind", _KINDS)
def test_each_spark_type_is_declared_as_documented_or_refused_naming_the_column(kind: str, spark_type: str) -> None:
    wanted = _TABLE[spark_type][_KINDS.index(kind)]
    field = Field("col x", spark_type, True)
    if wanted is None:
        with pytest.raises(
            ConfigError, match=re.escape(f"column 'col x' of Spark type {spark_type} cannot be created on {kind}")
        ):
            declared(kind, field)
    else:
        assert declared(kind, field) == wanted


def test_mysql_8_keeps_30_digits_after_the_point_and_its_own_binary_collation() -> None:
    assert declared("mysql", Field("s", "string", True)).endswith("COLLATE utf8mb4_0900_bin")
    assert declared("mysql", Field("d", "decimal(38,30)", True)) == "DECIMAL(38,30)"
    with pytest.raises(ConfigError, match="at most 30 digits after the point"):
        declared("mysql", Field("d", "decimal(38,31)", True))


def test_column_list_quotes_names_and_adds_not_null() -> None:
    fields = [Field('a"b', "int", False), Field("c", "string", True)]
    quote = lambda name: '"' + name.replace('"', '""') + '"'  # noqa: E731 - PostgreSQL's rule, inline
    assert column_list("postgres", fields, quote) == '"a""b" integer NOT NULL, "c" text'


def test_every_sql_source_has_a_target_and_lakes_and_flight_have_none() -> None:
    """One registry line per source class: every SQL scheme's class is written, by a target
    whose kind is in the type table; a lake has its own pipeline, Flight none."""
    for source_class in set(SCHEMES.values()) - {IcebergSource, FlightSource}:
        assert source_class in TARGETS, source_class.__name__
    assert IcebergSource not in TARGETS and FlightSource not in TARGETS
