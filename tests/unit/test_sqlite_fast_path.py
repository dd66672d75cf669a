"""SQLite's ADBC read path (sluice/sources/sqlite_arrow.py) against the row reader.

The fast path must return exactly the row reader's batches and refuse exactly the values
the row reader refuses, in the first batch or a later one (``batch_rows`` is tiny here, so
the bad value arrives after the types were inferred).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import cast

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sluice.errors import SourceError
from sluice.pushdown.pushed import Pushed
from sluice.scan.query import OrderKey
from sluice.scan.spec import ScanSpec
from sluice.sources.sqlite import SqliteSource

DDL = "CREATE TABLE t (i INTEGER, b BOOLEAN, r REAL, n NUMERIC, s TEXT, d DATE, ts DATETIME, bl BLOB, a)"
GOOD: list[tuple[object, ...]] = [
    (None, None, None, None, None, None, None, None, None),  # a first batch of NULLs: types still right
    (None, None, None, None, None, None, None, None, None),
    (None, None, None, None, None, None, None, None, None),
    (1, 1, 1.5, 2, "x", "2024-01-02", "2024-01-02 03:04:05.123", b"\x00\xff", "any"),
    (-(2**63), 0, -0.0, 10**16, "", "1970-01-01", "1969-12-31 23:59:59", "text in a blob column", ""),
    (2**63 - 1, None, float("inf"), 1.25, "é€𝄞", None, None, b"", None),
    (3, 1, 1e308, -9007199254740992, b"valid utf-8 blob", "2024-02-29", "2024-02-29", None, "z"),
]
#: (column, stored value): the row reader refuses each; so must the fast path
BAD = [
    ("i", 10.5),
    ("i", "12a"),
    ("i", b"\x01"),
    ("b", 2),
    ("b", 0.5),
    ("r", "abc"),
    ("r", b"\x01"),
    ("n", 9007199254740993),
    ("n", 2**63 - 1),
    ("n", "text"),
    ("s", b"\xff\xfe"),
    ("a", 1.5),
    ("d", 20240101),
    ("d", "not a date"),
    ("ts", 1.5),
    ("bl", 7),
    ("bl", 1.5),
    ("a", 5),
]


class TinyBatches(SqliteSource):
    batch_rows = 3


def _file(path: Path, rows: list[tuple]) -> str:
    with sqlite3.connect(path) as connection:
        connection.execute(DDL)
        connection.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    connection.close()
    return f"sqlite:///{path}"


def _tasks(source: SqliteSource, **spec: object):
    table = source.describe(None, "t")
    tasks = source.tasks(ScanSpec.for_source(source, table, tuple(c.name for c in table.columns), **spec))
    return tasks, [dataclasses.replace(task, fast_request=None) for task in tasks]


def _read(source: SqliteSource, tasks) -> pa.Table:
    return pa.Table.from_batches([batch for task in tasks for batch in source.read(task)], schema=tasks[0].schema)


@pytest.mark.parametrize("partitions", [1, 3])
def test_the_fast_path_returns_the_row_readers_batches(tmp_path: Path, partitions: int) -> None:
    source = TinyBatches("lite", _file(tmp_path / "good.db", GOOD * 5))
    fast, rows = _tasks(source, partitions=partitions)
    assert all(task.fast_request for task in fast)
    assert _read(source, fast).equals(_read(source, rows))
    assert _read(source, fast).num_rows == len(GOOD) * 5


@pytest.mark.parametrize("first", [True, False], ids=["in-the-first-batch", "in-a-later-batch"])
@pytest.mark.parametrize(("column", "value"), BAD, ids=[f"{c}-{v!r}" for c, v in BAD])
def test_the_fast_path_refuses_what_the_row_reader_refuses(
    tmp_path: Path, column: str, value: object, first: bool
) -> None:
    names = ["i", "b", "r", "n", "s", "d", "ts", "bl", "a"]
    bad = tuple(value if name == column else GOOD[3][index] for index, name in enumerate(names))
    rows = [bad] + GOOD if first else GOOD + [bad] + GOOD
    source = TinyBatches("lite", _file(tmp_path / "bad.db", rows))
    fast, rows = _tasks(source)
    with pytest.raises(SourceError, match=f"column '{column}' holds a value that is not"):
        _read(source, rows)
    with pytest.raises(SourceError, match=f"source 'lite': column '{column}' holds a value that is not"):
        _read(source, fast)


@pytest.mark.parametrize("first", [True, False], ids=["in-the-first-batch", "in-a-later-batch"])
def test_a_real_in_an_integer_column_is_named_as_such(tmp_path: Path, first: bool) -> None:
    bad = (10.5,) + (None,) * 8
    source = TinyBatches("lite", _file(tmp_path / "real.db", [bad] + GOOD if first else GOOD + [bad]))
    with pytest.raises(SourceError, match=r"column 'i' holds a value that is not int64.*REAL"):
        _read(source, _tasks(source)[0])


def test_filtered_sorted_and_view_scans_keep_the_row_reader(tmp_path: Path) -> None:
    """ADBC cannot interrupt a statement: only scans that return every row they scan go fast."""
    url = _file(tmp_path / "shapes.db", GOOD)
    with sqlite3.connect(tmp_path / "shapes.db") as connection:
        connection.execute("CREATE VIEW v AS SELECT * FROM t WHERE i > 0")
    connection.close()
    source = SqliteSource("lite", url)
    assert all(
        task.fast_request is None
        for task in _tasks(
            source, where=(Pushed(tree=cast(exp.Expression, sqlglot.parse_one('"i" > 0', read="sqlite"))),)
        )[0]
    )
    assert all(
        task.fast_request is None
        for task in _tasks(source, order=(OrderKey("i", descending=False, nulls_first=True),), limit=2)[0]
    )
    view = source.describe(None, "v")
    assert all(task.fast_request is None for task in source.tasks(ScanSpec.for_source(source, view, ("i",))))
    assert all(task.fast_request for task in _tasks(source, limit=2)[0])


def test_a_utf16_file_is_read_by_the_row_reader(tmp_path: Path) -> None:
    path = tmp_path / "utf16.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA encoding = 'UTF-16le'")
        connection.execute(DDL)
        connection.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", GOOD)
    connection.close()
    source = SqliteSource("lite", f"sqlite:///{path}")
    fast, rows = _tasks(source)
    assert fast[0].fast_request is not None  # decided when reading: the planner does not open the file's header
    assert _read(source, fast).equals(_read(source, rows))
