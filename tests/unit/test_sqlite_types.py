"""SQLite declared types read as the other sources read them, on real files (issue 15, item 4).

``DECIMAL(p,s)`` is Spark's decimal(p,s) (a money column sums as a decimal, not a double),
the narrow integers are Spark's narrow integers, and a stored value the type cannot hold
is an error naming table, column and row, never a rounded or wrapped value. Both SQLite
readers (the ADBC fast path and the row reader) are run on every file and must agree,
batch for batch and message for message.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from sluice.errors import SourceError
from sluice.scan.spec import ScanSpec
from sluice.sources.sqlite import SqliteSource
from sluice.sources.sqlite_values import spark_type_for

#: declared type -> Spark type: the table docs/pushdown.md shows
DECLARED = {
    "DECIMAL(10,2)": "decimal(10,2)",
    "NUMERIC(38, 10)": "decimal(38,10)",
    "decimal(5)": "decimal(5,0)",
    "DECIMAL(40,2)": "double",
    "NUMERIC": "double",
    "DECIMAL": "double",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INT2": "smallint",
    "MEDIUMINT": "int",
    "INT4": "int",
    "TINYINT UNSIGNED": "smallint",
    "SMALLINT UNSIGNED": "int",
    "INT": "bigint",
    "INTEGER": "bigint",
    "BIGINT": "bigint",
    "INT8": "bigint",
    "UNSIGNED BIG INT": "bigint",
    "FLOAT": "double",
    "REAL": "double",
    "DOUBLE": "double",
    "DOUBLE PRECISION": "double",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "DATETIME": "timestamp_ntz",
    "TIMESTAMP": "timestamp_ntz",
    "CHAR(3)": "string",
    "VARCHAR(255)": "string",
    "NVARCHAR(10)": "string",
    "TEXT": "string",
    "CLOB": "string",
    "BLOB": "binary",
    "": "string",
}


@pytest.mark.parametrize(("declared", "spark"), DECLARED.items())
def test_declared_types_map_to_the_spark_types_other_sources_give(declared: str, spark: str) -> None:
    assert spark_type_for(declared).name == spark


DDL = "CREATE TABLE t (m DECIMAL(10,2), w NUMERIC(38,18), s SMALLINT, y TINYINT, k MEDIUMINT)"
GOOD: list[tuple[object, ...]] = [
    (None, None, None, None, None),
    (12.34, 0.1, -32768, -128, -(2**31)),
    (5, 12345678901234567, 32767, 127, 2**31 - 1),
    (-0.0, -1e-10, 0, 0, 0),
    (99999999.99, 0.30000000000000004, 1, 1, 1),
    (-7, 1234567890123456789, None, None, None),
]
EXPECTED = {
    "m": [None, Decimal("12.34"), Decimal("5.00"), Decimal("0.00"), Decimal("99999999.99"), Decimal("-7.00")],
    "w": [
        None,
        Decimal("0.1"),
        Decimal("12345678901234567"),
        Decimal("-1E-10"),
        Decimal("0.30000000000000004"),
        Decimal("1234567890123456789"),
    ],
}
#: (column, stored value, what the message must say): refused by both readers
BAD = [
    ("m", 1.005, "REAL 1.005 has more than 2 decimal places"),
    ("m", 100000000, "INTEGER 100000000 has more than 8 digits before the decimal point"),
    ("m", "abc", "TEXT 'abc' is not a decimal number"),
    ("m", b"\x01", "BLOB"),
    ("m", float("inf"), "REAL inf is not a finite number"),
    ("w", 1e30, "more than 20 digits before the decimal point"),
    ("s", 40000, "INTEGER 40000 is outside the range of int16"),
    ("y", 200, "INTEGER 200 is outside the range of int8"),
    ("k", 2**31, "INTEGER 2147483648 is outside the range of int32"),
    ("s", 1.5, "REAL"),
]


class TinyBatches(SqliteSource):
    batch_rows = 2


def _source(path: Path, rows: list[tuple]) -> SqliteSource:
    with sqlite3.connect(path) as connection:
        connection.execute(DDL)
        connection.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    connection.close()
    return TinyBatches("lite", f"sqlite:///{path}")


def _both(source: SqliteSource):
    """The whole-table read as the fast path plans it, and the same tasks for the row reader."""
    table = source.describe(None, "t")
    tasks = source.tasks(ScanSpec.for_source(source, table, tuple(c.name for c in table.columns)))
    assert all(task.fast_request for task in tasks), "the fast path declined the table"
    return tasks, [dataclasses.replace(task, fast_request=None) for task in tasks]


def _read(source: SqliteSource, tasks) -> pa.Table:
    return pa.Table.from_batches([batch for task in tasks for batch in source.read(task)], schema=tasks[0].schema)


def test_decimals_and_narrow_integers_read_exactly_by_both_readers(tmp_path: Path) -> None:
    source = _source(tmp_path / "good.db", GOOD)
    fast, rows = _both(source)
    read = _read(source, fast)
    assert read.equals(_read(source, rows))
    assert [str(f.type) for f in read.schema] == ["decimal128(10, 2)", "decimal128(38, 18)", "int16", "int8", "int32"]
    assert read.column("m").to_pylist() == EXPECTED["m"]
    assert read.column("w").to_pylist() == EXPECTED["w"]


@pytest.mark.parametrize("first", [True, False], ids=["in-the-first-batch", "in-a-later-batch"])
@pytest.mark.parametrize(("column", "value", "what"), BAD, ids=[f"{c}-{v!r}" for c, v, _ in BAD])
def test_a_value_the_type_cannot_hold_names_table_column_and_row(
    tmp_path: Path, column: str, value: object, what: str, first: bool
) -> None:
    names = ["m", "w", "s", "y", "k"]
    bad = tuple(value if name == column else GOOD[1][index] for index, name in enumerate(names))
    rows = [bad] + GOOD if first else GOOD + [bad] + GOOD
    source = _source(tmp_path / "bad.db", rows)
    rowid = 1 if first else len(GOOD) + 1
    messages = []
    for tasks in _both(source):
        with pytest.raises(SourceError) as raised:
            _read(source, tasks)
        messages.append(str(raised.value))
    assert messages[0] == messages[1], "the two readers must say the same"
    assert f"column '{column}' holds a value that is not" in messages[0]
    assert what in messages[0]
    assert "table lite.main.t" in messages[0]
    if not isinstance(value, (bytes, float)) or value == 1.005:  # found again by its value
        assert f"row with rowid {rowid}" in messages[0]
