"""SQLite reads on real files: partitions must cover every row exactly once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from sluice.errors import SourceError
from sluice.sources.base import ReadTask
from sluice.sources.sqlite import SqliteSource


def test_a_column_named_rowid_does_not_hide_rows_from_partitions(tmp_path: Path) -> None:
    path = tmp_path / "shadow.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (rowid INT, v INT)")  # NULLs and repeats: useless as a key
        connection.executemany(
            "INSERT INTO t VALUES (?, ?)", [(None if i % 10 == 0 else i % 50, i) for i in range(1000)]
        )
    source = SqliteSource("lite", f"sqlite:///{path}")
    table = source.describe(None, "t")
    parts = source.split(table, 4)
    assert len(parts) == 4 and all("_rowid_" in part for part in parts)  # type: ignore[operator]
    schema = pa.schema([("v", pa.int64())])
    values = [
        v
        for part in parts
        for batch in source.read(ReadTask(f"SELECT v FROM t WHERE {part}", schema))
        for v in batch.column(0).to_pylist()
    ]
    assert sorted(values) == list(range(1000))


def test_large_integers_in_a_real_column_are_read_when_a_double_holds_them(tmp_path: Path) -> None:
    path = tmp_path / "affinity.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (d DECIMAL(20,4))")  # NUMERIC affinity keeps integers as integers
        connection.execute("INSERT INTO t VALUES (-10000000000000000), (9007199254740993)")
    source = SqliteSource("lite", f"sqlite:///{path}")
    schema = pa.schema([("d", pa.float64())])
    batch = next(source.read(ReadTask("SELECT d FROM t WHERE rowid = 1", schema)))
    assert batch.column(0).to_pylist() == [-1e16]
    with pytest.raises(SourceError, match="'d'"):  # 2**53 + 1 has no double: loud, not rounded
        next(source.read(ReadTask("SELECT d FROM t WHERE rowid = 2", schema)))
