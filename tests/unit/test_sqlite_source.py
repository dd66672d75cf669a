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
    assert len(parts) == 4 and all(part is not None and "_rowid_" in part for part in parts)
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


def _sparse(path: Path) -> None:
    """100 rows whose integer keys run up to 99,000 (the key is the row id)."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE dim (k INTEGER PRIMARY KEY, name TEXT)")
        connection.executemany("INSERT INTO dim VALUES (?, ?)", [(k * 1000, f"d{k}") for k in range(100)])


def test_the_row_estimate_counts_rows_not_the_largest_key(tmp_path: Path) -> None:
    _sparse(tmp_path / "dims.db")
    source = SqliteSource("lite", f"sqlite:///{tmp_path / 'dims.db'}")
    assert source.describe(None, "dim").row_estimate == 100


def test_a_large_file_takes_analyzes_count_else_the_row_id_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the counted size, counting would read the whole table at every planning."""
    from sluice.sources import sqlite

    monkeypatch.setattr(sqlite, "COUNTED_BYTES", 0)  # every file is "large"
    path = tmp_path / "dims.db"
    _sparse(path)
    source = SqliteSource("lite", f"sqlite:///{path}")
    assert source.describe(None, "dim").row_estimate == 99_001  # an upper bound: keys 0 to 99,000
    with sqlite3.connect(path) as connection:
        connection.execute("ANALYZE")
    assert source.describe(None, "dim").row_estimate == 100
