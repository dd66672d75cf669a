"""Choosing a lake scan's reader, and what Spark's Parquet reader is handed (sluice/lake/vectorised.py)."""

from __future__ import annotations

from typing import cast

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sluice.lake.pyramid import FileLayout, FileRead, Pyramid, Tier
from sluice.lake.vectorised import Mode, Needed, _ranges, choose, same_type, vector_read
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.pushed import Pushed
from sluice.types import SparkType

LONG, TEXT = SparkType("bigint"), SparkType("string")
AUTO, FORCED = Mode("auto", 0.5, small_rows=0), Mode("vectorised", 0.5, small_rows=0)
NEEDED = [Needed("id", LONG, 1), Needed("label", TEXT, 2)]
#: three row groups: midpoints in [10, 11), [110, 111), [210, 211); 100 bytes each
LAYOUT = FileLayout(
    {1: ("id", pa.int64()), 2: ("label", pa.string())},
    frozenset({"id", "label"}),
    ((10, 11, 100), (110, 111, 100), (210, 211, 100)),
)
#: an older file: label held as "s", and no "id" at all (added later: NULL)
OLD = FileLayout({2: ("s", pa.large_string())}, frozenset({"s"}), ((4, 5, 50),))


def pyramid(reads: tuple[FileRead, ...], table_rows: int = 300) -> Pyramid:
    kept = sum(len(r.row_groups) for r in reads)
    tier = Tier("row groups", "row groups", 4, kept, sum(r.rows for r in reads), sum(r.bytes for r in reads))
    return Pyramid("lake.t", 1, table_rows, 1_000, (tier,), reads)


def test_a_scan_keeping_most_rows_is_vectorised_and_a_selective_one_is_not() -> None:
    full = pyramid((FileRead("a", (0, 1, 2), 300, 300, True, file_size=400),))
    choice = choose(full, {"a": LAYOUT}, NEEDED, mode=AUTO)
    assert choice.vectorised and "3 of 4 row groups (100.0% of the rows, 300 rows, >= 50%)" in choice.reason
    few = pyramid((FileRead("a", (1,), 100, 100, True, file_size=400),))
    choice = choose(few, {"a": LAYOUT}, NEEDED, mode=AUTO)
    assert not choice.vectorised and choice.reason.startswith("selective: pruning keeps 1 of 4 row groups, 33.3%")


def test_by_default_a_selective_scan_is_vectorised_too() -> None:
    few = pyramid((FileRead("a", (1,), 100, 100, True, file_size=400),))
    choice = choose(few, {"a": LAYOUT}, NEEDED, mode=Mode(small_rows=0))
    assert choice.vectorised and "1 of 4 row groups (33.3% of the rows, 100 rows)" in choice.reason


def test_a_small_scan_stays_with_the_python_reader_on_the_driver() -> None:
    full = pyramid((FileRead("a", (0, 1, 2), 300, 300, True, file_size=400),))
    choice = choose(full, {"a": LAYOUT}, NEEDED, mode=Mode("auto", 0.5, small_rows=300))
    assert not choice.vectorised and choice.reason.startswith("small: pruning keeps 300 rows")


def test_what_only_the_python_reader_answers_keeps_it_whatever_is_forced() -> None:
    full = pyramid((FileRead("a", (0, 1, 2), 300, 300, True, file_size=400),))
    exact = Verdict(
        "x > 1", Level.EXACT, "same", "x > 1", Pushed(tree=cast(exp.Expression, sqlglot.parse_one("x > 1")))
    )
    assert not choose(full, {"a": LAYOUT}, NEEDED, mode=FORCED, blocker="LIMIT 3").vectorised
    forced = choose(full, {"a": LAYOUT}, NEEDED, mode=FORCED, exact=[exact])
    assert not forced.vectorised and "EXACT" in forced.reason
    promoted = FileLayout({1: ("id", pa.int32())}, frozenset({"id"}), LAYOUT.row_groups)
    choice = choose(full, {"a": promoted}, NEEDED, mode=FORCED)
    assert not choice.vectorised and "holds id as int32, not bigint" in choice.reason


@pytest.mark.parametrize(
    ("held", "wanted", "same"),
    [
        (pa.timestamp("us", tz="+00:00"), pa.timestamp("us", tz="UTC"), True),
        (pa.timestamp("us"), pa.timestamp("us", tz="UTC"), False),
        (pa.timestamp("ns"), pa.timestamp("us"), False),  # INT96 and nanoseconds: the Python reader casts
        (pa.large_string(), pa.string(), True),
        (pa.dictionary(pa.int32(), pa.string()), pa.string(), True),
        (pa.decimal128(18, 4), pa.decimal128(18, 4), True),
        (pa.decimal128(10, 4), pa.decimal128(18, 4), False),
        (pa.float32(), pa.float64(), False),
    ],
)
def test_a_file_type_is_read_as_is_only_when_spark_reads_it_unchanged(held, wanted, same) -> None:
    assert same_type(held, wanted) is same


def test_row_groups_become_byte_ranges_holding_their_midpoints() -> None:
    assert _ranges(LAYOUT, (0, 2), 10_000, 400) == [(10, 11, 100), (210, 211, 100)]
    assert _ranges(LAYOUT, (0, 1, 2), 10_000, 400) == [(10, 211, 300)]  # consecutive: one range
    assert _ranges(LAYOUT, (0, 1, 2), 250, 400) == [(10, 111, 200), (210, 211, 100)]
    overlapping = FileLayout({}, frozenset(), ((0, 120, 10), (60, 61, 10), (100, 101, 10)))
    assert _ranges(overlapping, (0, 2), 10_000, 400) == [(0, 400, 20)]  # never a row group twice


def test_files_are_grouped_by_the_names_they_hold_each_field_under() -> None:
    reads = (
        FileRead("new", (0, 1, 2), 300, 300, True, file_size=400),
        FileRead("old", (0,), 10, 50, True, file_size=60),
    )
    read = vector_read(pyramid(reads), {"new": LAYOUT, "old": OLD}, NEEDED, 2)
    assert read["names"] == [["id", "label"], ["__sluice_absent_1", "s"]]
    assert {p["group"] for p in read["partitions"]} == {0, 1}
    files = [f for p in read["partitions"] for f in p["files"]]
    assert sorted(files) == [["new", 10, 201, 400], ["old", 4, 1, 60]]


def test_small_files_are_packed_as_spark_packs_a_file_scan() -> None:
    """Each file costs Spark's open cost (4 MiB) too: 20 small files over 2 cores make 2 partitions, not 20."""
    layout = FileLayout({1: ("id", pa.int64())}, frozenset({"id"}), ((4, 5, 100_000),))
    reads = tuple(FileRead(f"f{i}", (0,), 10, 100_000, True, file_size=100_100) for i in range(20))
    read = vector_read(pyramid(reads, 200), {r.path: layout for r in reads}, NEEDED[:1], 2)
    assert len(read["partitions"]) == 2
    assert sorted(f[0] for p in read["partitions"] for f in p["files"]) == sorted(r.path for r in reads)
