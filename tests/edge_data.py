"""Tables full of edge values, the same rows in every source under test.

Column names are shared, so one predicate corpus runs against all of them. Where a
source cannot hold a value (SQLite and MySQL have no NaN, MySQL's TIMESTAMP stops in
2038), it holds what the source makes of it (NULL). Each loader returns the URL to attach.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import psycopg

from tests.sources import MYSQL_URL, PG_URL, mariadb

UTC = dt.timezone.utc
TEXTS = [
    "",
    " ",
    "a",
    "a ",
    "A",
    "ab",
    "aB",
    "Ab",
    "abc",
    "b",
    "B",
    "zebra",
    "Zebra",
    "ß",
    "SS",
    "é",
    "e\u0301",
    "%",
    "_",
    "\\",
    "'",
    "a%b",
    "a_b",
    "a\\b",
    "ab%",
    "日本",
    "😀",
    "Ærø",
    "Łukasz",
    "  lead",
    "trail  ",
    "NULL",
    "o'brien",
    "x;DROP TABLE t;--",
    "MiXeD",
    "mixed",
    "1",
    "10",
    "9",
]
INTS = [0, 1, -1, 2, 7, 42, 100, -100, 2147483647, -2147483648, 2147483646]
BIGS = [0, 1, -1, 9223372036854775807, -9223372036854775808, 9007199254740993, 3000000000, 42]
FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    1.5,
    2.5,
    100.0,
    1e308,
    -1e308,
    5e-324,
    math.inf,
    -math.inf,
    math.nan,
    3.0,
    0.30000000000000004,
]
REALS = [0.0, 1.5, 0.1, -2.25, 3.4e38, math.nan, 16777216.0]
DECIMALS = [
    Decimal("0"),
    Decimal("-0.0001"),
    Decimal("1.5"),
    Decimal("1.50"),
    Decimal("100"),
    Decimal("12345678901234.5678"),
    Decimal("-99.99"),
]
DATES = [
    dt.date(1, 1, 1),
    dt.date(9999, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(2024, 2, 29),
    dt.date(2024, 3, 10),
    dt.date(1900, 1, 1),
    dt.date(2024, 11, 3),
]
INSTANTS = [
    dt.datetime(2024, 3, 10, 6, 59, 59, 999999, UTC),
    dt.datetime(2024, 3, 10, 7, 0, tzinfo=UTC),
    dt.datetime(2024, 3, 10, 7, 30, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 6, 30, tzinfo=UTC),
    dt.datetime(1900, 1, 1, tzinfo=UTC),
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC),
]
WALLS = [
    dt.datetime(2024, 3, 10, 2, 30),
    dt.datetime(2024, 3, 10, 1, 59, 59),
    dt.datetime(2024, 11, 3, 1, 30),
    dt.datetime(2024, 11, 3, 0, 59),
    dt.datetime(2000, 1, 1),
    dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
]

ROWS = 80


def _pick(values: list, index: int, stride: int):
    """Deterministic spread of values over rows, with a NULL every 9th row."""
    if (index * stride) % 9 == 4:
        return None
    return values[(index * stride) % len(values)]


def rows() -> list[tuple]:
    out = []
    for i in range(ROWS):
        out.append(
            (
                i,
                _pick(INTS, i, 1),
                _pick(BIGS, i, 3),
                _pick(FLOATS, i, 1),
                _pick(REALS, i, 5),
                _pick(DECIMALS, i, 2),
                _pick(TEXTS, i, 1),
                _pick(TEXTS, i, 7),
                _pick(TEXTS, i, 3),
                _pick(DATES, i, 2),
                _pick(INSTANTS, i, 3),
                _pick(WALLS, i, 5),
                _pick([True, False], i, 1),
            )
        )
    return out


COLUMNS = "id, i, b, f, r, d, t, tc, ch, dt, ts, tn, flag"


def create_postgres(url: str) -> None:
    """Schema sluice_test: ``edge`` (ICU-collated t, C-collated tc, blank-padded ch)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_test CASCADE")
        connection.execute("CREATE SCHEMA sluice_test")
        connection.execute(
            "CREATE TABLE sluice_test.edge (id bigint PRIMARY KEY, i int, b bigint, f float8, r float4, d numeric(20,4), "
            't text COLLATE "en-US-x-icu", tc text COLLATE "C", ch char(20), dt date, ts timestamptz, tn timestamp, flag boolean)'
        )
        with connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO sluice_test.edge ({COLUMNS}) VALUES ({', '.join(['%s'] * 13)})", rows())
        connection.execute("ANALYZE sluice_test.edge")


def create_sqlite(path: str) -> None:
    """``edge``: BINARY t, NOCASE tc, RTRIM ch; dates and timestamps as ISO text."""
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE edge (id INTEGER PRIMARY KEY, i INTEGER, b BIGINT, f REAL, r REAL, d DECIMAL(20,4), t TEXT, "
        "tc TEXT COLLATE NOCASE, ch TEXT COLLATE RTRIM, dt DATE, ts DATETIME, tn TIMESTAMP, flag BOOLEAN)"
    )

    def convert(row: tuple) -> tuple:
        values = list(row)
        values[5] = None if values[5] is None else float(values[5])
        values[9] = None if values[9] is None else values[9].isoformat()
        values[10] = None if values[10] is None else values[10].strftime("%Y-%m-%d %H:%M:%S.%f")
        values[11] = None if values[11] is None else values[11].strftime("%Y-%m-%d %H:%M:%S.%f")
        return tuple(values)

    connection.executemany(
        f"INSERT INTO edge ({COLUMNS}) VALUES ({', '.join(['?'] * 13)})", [convert(r) for r in rows()]
    )
    connection.commit()
    connection.close()


def create_mysql(url: str) -> None:
    """Database sluice_test: ``edge`` (t in the default *_general_ci, tc utf8mb4_bin, ch CHAR(20))."""
    connection = mariadb(init_command="SET time_zone = '+00:00'")
    try:
        cursor = connection.cursor()
        cursor.execute("DROP DATABASE IF EXISTS sluice_test")
        cursor.execute("CREATE DATABASE sluice_test CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        cursor.execute(
            "CREATE TABLE sluice_test.edge (id BIGINT PRIMARY KEY, i INT, b BIGINT, f DOUBLE, r FLOAT, d DECIMAL(20,4), "
            "t VARCHAR(40), tc VARCHAR(40) COLLATE utf8mb4_bin, ch CHAR(20), dt DATE, ts TIMESTAMP(6) NULL, "
            "tn DATETIME(6), flag BOOLEAN)"
        )
        lowest, highest = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC), dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC)

        def convert(row: tuple) -> tuple:
            values = list(row)
            for index in (3, 4):  # MySQL stores no NaN or infinity
                if values[index] is not None and not math.isfinite(values[index]):
                    values[index] = None
            ts = values[10]
            values[10] = None if ts is None or not lowest <= ts <= highest else ts.astimezone(UTC).replace(tzinfo=None)
            return tuple(values)

        cursor.executemany(
            f"INSERT INTO sluice_test.edge ({COLUMNS}) VALUES ({', '.join(['%s'] * 13)})", [convert(r) for r in rows()]
        )
        cursor.execute("ANALYZE TABLE sluice_test.edge")
    finally:
        connection.close()


def create_duckdb(path: str) -> None:
    """``edge``: plain VARCHAR t (binary), tc COLLATE NOCASE, ch COLLATE NOACCENT."""
    import duckdb

    connection = duckdb.connect(path)
    try:
        connection.execute(
            "CREATE TABLE edge (id BIGINT PRIMARY KEY, i INTEGER, b BIGINT, f DOUBLE, r REAL, d DECIMAL(20,4), t VARCHAR, "
            "tc VARCHAR COLLATE NOCASE, ch VARCHAR COLLATE NOACCENT, dt DATE, ts TIMESTAMPTZ, tn TIMESTAMP, flag BOOLEAN)"
        )
        connection.executemany(f"INSERT INTO edge ({COLUMNS}) VALUES ({', '.join(['?'] * 13)})", rows())
    finally:
        connection.close()


def create_iceberg(folder: Path) -> str:
    """Lake table ``sluice_test.edge``: partitioned by identity(flag) and bucket(2, b), rows
    sorted by f within each file and three rows per row group, so every pruning level acts
    (and float statistics meet NaN, -0.0 and infinities). Returns the lake URL."""
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, IdentityTransform
    from pyiceberg.types import (
        BooleanType,
        DateType,
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        NestedField,
        StringType,
        TimestampType,
        TimestamptzType,
    )

    from sluice.lake.catalog import LakeLocation, open_catalog

    types = [
        ("id", LongType()),
        ("i", IntegerType()),
        ("b", LongType()),
        ("f", DoubleType()),
        ("r", FloatType()),
        ("d", DecimalType(20, 4)),
        ("t", StringType()),
        ("tc", StringType()),
        ("ch", StringType()),
        ("dt", DateType()),
        ("ts", TimestamptzType()),
        ("tn", TimestampType()),
        ("flag", BooleanType()),
    ]
    schema = Schema(*(NestedField(index + 1, name, kind, required=False) for index, (name, kind) in enumerate(types)))
    spec = PartitionSpec(
        PartitionField(13, 1000, IdentityTransform(), "flag"), PartitionField(3, 1001, BucketTransform(2), "b_bucket")
    )
    location = LakeLocation.from_url(f"iceberg+sqlite:///{folder}/lake/catalog.db")
    catalog = open_catalog(location, create=True)
    catalog.create_namespace_if_not_exists("sluice_test")
    if catalog.table_exists(("sluice_test", "edge")):
        catalog.drop_table(("sluice_test", "edge"))
    table = catalog.create_table(
        ("sluice_test", "edge"), schema=schema, partition_spec=spec, properties={"write.parquet.row-group-limit": "3"}
    )
    columns = list(zip(*rows()))
    arrow = pa.table(
        {name: pa.array(values, schema.as_arrow().field(name).type) for (name, _), values in zip(types, columns)},
        schema=schema.as_arrow(),
    )
    table.append(arrow.sort_by([("f", "ascending")]))
    return location.url


def _postgres(folder: Path) -> str:
    create_postgres(PG_URL)
    return PG_URL


def _sqlite(folder: Path) -> str:
    create_sqlite(str(folder / "edge.db"))
    return "sqlite:///" + str(folder / "edge.db")


def _mysql(folder: Path) -> str:
    create_mysql(MYSQL_URL)
    return MYSQL_URL


def _duckdb(folder: Path) -> str:
    create_duckdb(str(folder / "edge.duckdb"))
    return "duckdb:///" + str(folder / "edge.duckdb")


#: loader per source kind (see tests/sources.py): creates the edge table, returns the URL
LOADERS: dict[str, Callable[[Path], str]] = {
    "postgres": _postgres,
    "sqlite": _sqlite,
    "mysql": _mysql,
    "duckdb": _duckdb,
    "iceberg": create_iceberg,
}
