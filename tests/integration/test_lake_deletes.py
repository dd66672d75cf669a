"""Merge-on-read deletes: position and equality delete files applied as the Iceberg spec says.

Real delete files (Parquet, field ids, PyIceberg's statistics) committed through PyIceberg's
snapshot producer (tests/lake_deletes.py) onto tables whose data files PyIceberg wrote in
several row groups each. The expected rows of every snapshot are computed here, from the
appended rows and the deletes, with plain Python (by file and position, and by the spec's
sequence-number and partition rules); every query is compared with Spark evaluating it over
those rows, with pushdown on and off, for the current snapshot and through time travel.
PyIceberg's own reader (which applies position deletes, and refuses equality deletes) is a
second, independent oracle where it reads.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.manifest import ManifestContent
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType

from sluice.errors import SourceError
from sluice.lake.catalog import LakeLocation, open_catalog
from tests.lake_deletes import commit_deletes, data_files, equality_deletes, position_deletes

pytestmark = pytest.mark.integration

ARROW = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("x", pa.float64()),
        pa.field("s", pa.string()),
        pa.field("n", pa.int32()),
        pa.field("p", pa.string()),
    ]
)
SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "x", DoubleType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "n", IntegerType()),
    NestedField(5, "p", StringType()),
)
TEXTS = ["", "a ", "A", "Zürich", "naïve  ", "日本", None]
FLOATS = [float("nan"), -0.0, 0.0, 1.5, -2.25, float("inf"), None]
PARTS = ["a", "ü", None]


def _batch(first: int, count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        rows.append(
            {
                "id": None if i == 3 else first + i,
                "x": FLOATS[i % len(FLOATS)],
                "s": TEXTS[(i + seed) % len(TEXTS)],
                "n": rng.choice([None, -(2**31), 2**31 - 1, 0, 7]),
                "p": PARTS[i % len(PARTS)],
            }
        )
    return rows


class Lake:
    """A table and, per data file, its rows in file order and its data sequence number."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self.files: dict[str, tuple[int, list[dict[str, Any]]]] = {}
        self.positions: set[tuple[str, int]] = set()
        #: (sequence number, delete columns, deleted key tuples, partition value or "global")
        self.equality: list[tuple[int, tuple[str, ...], set[tuple[Any, ...]], Any]] = []
        self.snapshots: list[tuple[int, list[dict[str, Any]]]] = []

    def append(self, rows: list[dict[str, Any]]) -> None:
        before = {path for path, _ in data_files(self.table)}
        self.table.append(pa.Table.from_pylist(rows, schema=ARROW))
        sequence = self.table.current_snapshot().sequence_number
        for path, _ in data_files(self.table):
            if path in before:
                continue
            # the file's own rows, in file order (PyIceberg splits a partitioned append by partition)
            with self.table.io.new_input(path).open() as handle:
                written = pq.read_table(handle).to_pylist()
            self.files[path] = (sequence, [{k: r[k] for k in ARROW.names} for r in written])
        self.remember()

    def remember(self) -> None:
        self.snapshots.append((self.table.current_snapshot().snapshot_id, self.expected()))

    def expected(self) -> list[dict[str, Any]]:
        """The live rows, by the spec's rules, computed without Sluice."""
        live = []
        for path, (sequence, rows) in self.files.items():
            for position, row in enumerate(rows):
                if (path, position) in self.positions:
                    continue
                if any(
                    sequence < eq_sequence
                    and (scope == "global" or scope == row["p"])
                    and tuple(row[c] for c in columns) in keys
                    for eq_sequence, columns, keys, scope in self.equality
                ):
                    continue
                live.append(row)
        return live


def _new_table(folder: Path, name: str, partitioned: bool) -> tuple[str, Any]:
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    catalog = open_catalog(LakeLocation.from_url(url), create=True)
    if ("mor",) not in catalog.list_namespaces():
        catalog.create_namespace("mor")
    spec = PartitionSpec(PartitionField(5, 1000, IdentityTransform(), "p")) if partitioned else PartitionSpec()
    table = catalog.create_table(
        ("mor", name),
        schema=SCHEMA,
        partition_spec=spec,
        properties={"write.parquet.row-group-limit": "8", "format-version": "2"},
    )
    return url, table


@pytest.fixture(scope="module")
def lakes(spark, tmp_path_factory):
    """Two tables (unpartitioned, partitioned by p) through appends, position and equality deletes."""
    folder = tmp_path_factory.mktemp("lakedeletes")
    url, flat = _new_table(folder, "flat", partitioned=False)
    _, parted = _new_table(folder, "parted", partitioned=True)
    built = {}
    for name, table in (("flat", flat), ("parted", parted)):
        lake = Lake(table)
        lake.append(_batch(0, 40, 1))
        lake.append(_batch(1000, 30, 2))
        first, second = list(lake.files)[:2]
        # positions in every row group, the first and last row, rows holding NaN and -0.0
        deleted = [(first, 0), (first, 5), (first, 9), (first, len(lake.files[first][1]) - 1), (second, 1)]
        deleted += [(second, i) for i, r in enumerate(lake.files[second][1]) if r["x"] == 0 and r["id"] is not None]
        deleted = sorted(set(deleted))
        by_partition: dict[Any, list[tuple[str, int]]] = {}
        for path, position in deleted:
            by_partition.setdefault(lake.files[path][1][0]["p"] if name == "parted" else "all", []).append(
                (path, position)
            )
        commit_deletes(
            table,
            [
                position_deletes(table, pairs, partition=Record(part) if name == "parted" else None)
                for part, pairs in by_partition.items()
            ],
        )
        lake.positions |= set(deleted)
        lake.remember()
        # equality deletes on s: '', non-ASCII, NULL (NULL deletes NULL); in the partitioned
        # table only in partition 'a' (the others keep those rows)
        keys = pa.table({"s": ["", "Zürich", None]})
        if name == "parted":
            commit_deletes(table, [equality_deletes(table, keys, ["s"], partition=Record("a"))])
            scope: Any = "a"
        else:
            commit_deletes(table, [equality_deletes(table, keys, ["s"])])
            scope = "global"
        sequence = table.current_snapshot().sequence_number
        lake.equality.append((sequence, ("s",), {("",), ("Zürich",), (None,)}, scope))
        lake.remember()
        # a later append: the equality delete's sequence number is lower, so its '' rows stay
        lake.append(_batch(2000, 20, 3))
        # two delete columns, NULL among the values (NULL matches NULL only)
        pairs = {(r["id"], r["n"]) for path in lake.files for r in lake.files[path][1] if r["id"] in (2005, 2006, 7)}
        pairs |= {(2007, 123456)}  # deletes nothing
        multi = pa.table(
            {"id": pa.array([i for i, _ in pairs], pa.int64()), "n": pa.array([n for _, n in pairs], pa.int32())}
        )
        if name == "flat":
            commit_deletes(table, [equality_deletes(table, multi, ["id", "n"])])
            lake.equality.append((table.current_snapshot().sequence_number, ("id", "n"), pairs, "global"))
        else:  # one file per partition in each append; this delete is for partition 'ü'
            commit_deletes(table, [equality_deletes(table, multi, ["id", "n"], partition=Record("ü"))])
            lake.equality.append((table.current_snapshot().sequence_number, ("id", "n"), pairs, "ü"))
        lake.remember()
        built[name] = lake

    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("mor", url)
    return fed, built


def _answer(frame) -> list[tuple]:
    """Rows in a comparable form (NaN equal to itself), sorted."""
    return sorted(
        (tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in frame.collect()),
        key=repr,
    )


QUERIES = [
    "SELECT * FROM {t}",
    "SELECT id, s FROM {t} WHERE id >= 1000",  # prunes the first file by its statistics
    "SELECT id, x FROM {t} WHERE id < 20",
    "SELECT id FROM {t} WHERE x = 0",
    "SELECT id, x FROM {t} WHERE isnan(x) OR x IS NULL",
    "SELECT id FROM {t} WHERE s = '' OR s = 'Zürich' OR s IS NULL",
    "SELECT id, s FROM {t} WHERE s > 'M'",
    "SELECT id FROM {t} WHERE p = 'a'",
    "SELECT count(*), min(id), max(id), min(n), max(n) FROM {t}",  # answered from footers without deletes
    "SELECT count(*) FROM {t} WHERE id >= 1000",  # strict evaluation clears whole files
    "SELECT count(*), max(id) FROM {t} WHERE p = 'ü'",
    "SELECT s, count(*) FROM {t} GROUP BY s",
    "SELECT id, s FROM {t} ORDER BY id NULLS FIRST LIMIT 7",
    "SELECT id FROM {t} WHERE n IS NULL LIMIT 1000",
]


def _differential(spark, fed, table: str, expected: list[dict[str, Any]], queries: list[str] = QUERIES) -> None:
    spark.createDataFrame(pa.Table.from_pylist(expected, schema=ARROW)).createOrReplaceTempView("mor_expected")
    for query in queries:
        want = _answer(spark.sql(query.format(t="mor_expected")))
        assert _answer(fed.sql(query.format(t=table))) == want, f"{query} over {table}"
        assert _answer(fed.sql(query.format(t=table), pushdown=False)) == want, f"{query} over {table} (reference)"


@pytest.mark.parametrize("name", ["flat", "parted"])
def test_every_snapshot_reads_as_spark_over_the_live_rows(spark, lakes, name: str) -> None:
    fed, built = lakes
    lake = built[name]
    assert len(lake.snapshots) == 6
    for index, (snapshot_id, expected) in enumerate(lake.snapshots):
        # every query after each kind of delete; the snapshots before them (no delete file) and
        # the last (read as the current table below) with a few
        queries = QUERIES if index in (2, 3, 4) else [QUERIES[0], QUERIES[8], QUERIES[9]]
        _differential(spark, fed, f"mor.mor.{name} VERSION AS OF {snapshot_id}", expected, queries)
    _differential(spark, fed, f"mor.mor.{name}", lake.snapshots[-1][1])


@pytest.mark.parametrize("name", ["flat", "parted"])
def test_deletes_delete_rows(lakes, name: str) -> None:
    """The fixture's deletes remove rows of each kind, in files of several row groups: the
    comparisons above are not vacuous."""
    _, built = lakes
    lake = built[name]
    counts = [len(rows) for _, rows in lake.snapshots]
    before, positional, equality, appended, multi = counts[1:]
    assert positional < before and equality < positional and appended > equality and multi < appended
    first = next(iter(lake.files))
    with lake.table.io.new_input(first).open() as handle:
        groups = pq.read_metadata(handle).num_row_groups
    assert groups > 1 and max(pos for path, pos in lake.positions if path == first) >= 8  # past the first group


@pytest.mark.parametrize("name", ["flat", "parted"])
def test_pyiceberg_reads_the_position_deletes_alike(lakes, name: str) -> None:
    """PyIceberg applies position deletes (not equality ones): the snapshot with only those
    reads the same live rows there."""
    _, built = lakes
    lake = built[name]
    snapshot_id, expected = lake.snapshots[2]
    rows = lake.table.scan(snapshot_id=snapshot_id).to_arrow().to_pylist()
    key = lambda r: repr(sorted((k, repr(v)) for k, v in r.items()))  # noqa: E731
    assert sorted(map(key, rows)) == sorted(map(key, expected))


def test_explain_counts_the_delete_files_applied(lakes) -> None:
    fed, built = lakes
    text = fed.explain("SELECT id FROM mor.mor.flat WHERE id >= 2000")
    # only the last file holds ids >= 2000: the (id, n) delete applies to it, the older ones do not
    assert "row-level deletes: 1 of 3 delete files applied (0 position, 1 equality) to 1 of 1 files read" in text
    (pyramid,) = fed.pruning("SELECT count(*) FROM mor.mor.flat").values()
    assert pyramid.to_dict()["delete_files"] == {
        "in_snapshot": 3,
        "applied": 3,
        "position": 1,
        "equality": 2,
        "files_with_deletes": 3,
    }
    before = built["flat"].snapshots[0][0]
    assert "row-level deletes" not in fed.explain(f"SELECT id FROM mor.mor.flat VERSION AS OF {before}")


def test_count_is_not_answered_from_footers_when_deletes_apply(lakes) -> None:
    fed, built = lakes
    live = len(built["flat"].snapshots[-1][1])
    assert fed.sql("SELECT count(*) FROM mor.mor.flat").collect()[0][0] == live
    assert fed.sql("SELECT count(*) FROM mor.mor.flat", pushdown=False).collect()[0][0] == live  # no column read
    assert fed.sql("SELECT 1 FROM mor.mor.flat").count() == live
    (pyramid,) = fed.pruning("SELECT count(*) FROM mor.mor.flat").values()
    assert pyramid.tiers[-1].rows_kept > live  # the footers count the deleted rows too


def test_equality_deletes_on_a_double_column_are_refused(spark, tmp_path: Path) -> None:
    url, table = _new_table(tmp_path, "floats", partitioned=False)
    table.append(pa.Table.from_pylist(_batch(0, 20, 1), schema=ARROW))
    commit_deletes(table, [equality_deletes(table, pa.table({"x": [1.5]}), ["x"])])
    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("morf", url)
    refusal = r"equality delete file .*eq-deletes-.* deletes by the double column x, which the Iceberg spec forbids"
    with pytest.raises(SourceError, match=refusal):
        fed.pruning("SELECT * FROM morf.mor.floats")
    with pytest.raises(Exception, match=refusal):
        fed.sql("SELECT * FROM morf.mor.floats").collect()


def test_a_missing_delete_file_fails_the_query_naming_it(spark, tmp_path: Path) -> None:
    url, table = _new_table(tmp_path, "gone", partitioned=False)
    table.append(pa.Table.from_pylist(_batch(0, 20, 1), schema=ARROW))
    ((path, _),) = data_files(table)
    delete = position_deletes(table, [(path, 2)])
    commit_deletes(table, [delete])
    Path(delete.file_path.removeprefix("file://")).unlink()
    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("morg", url)
    with pytest.raises(Exception, match=r"delete file .*pos-deletes-.*\.parquet is missing"):
        fed.sql("SELECT * FROM morg.mor.gone").collect()


@pytest.mark.parametrize("name", ["flat", "parted"])
def test_optimize_leaves_the_files_deletes_apply_to(lakes, name: str) -> None:
    """``DELETE FROM`` refuses to rewrite a file that delete files apply to, and optimize folds
    them in: both must see exactly which files they apply to, by the same rules as the expected rows."""
    from sluice.lake.maintenance import data_entries

    _, built = lakes
    lake = built[name]
    found = {entry.data_file.file_path: flag for entry, flag in data_entries(lake.table, f"mor.{name}")}

    def has_deletes(path: str) -> bool:
        sequence, rows = lake.files[path]
        partition = rows[0]["p"]
        return any(p == path for p, _ in lake.positions) or any(
            sequence < eq_sequence and scope in ("global", partition) for eq_sequence, _, _, scope in lake.equality
        )

    assert found == {path: has_deletes(path) for path in lake.files}
    assert False in found.values() if name == "parted" else all(found.values())


@pytest.mark.parametrize("name", ["flat", "parted"])
def test_deletes_keep_the_python_reader_even_when_sparks_reader_is_forced(spark, lakes, name: str) -> None:
    """Spark's vectorised Parquet reader knows nothing of delete files: a scan over a file they
    apply to is read by the Python reader, whatever spark.sluice.lakeReader says, and EXPLAIN says why."""
    fed, built = lakes
    lake = built[name]
    spark.conf.set("spark.sluice.lakeReader", "vectorised")
    try:
        _differential(spark, fed, f"mor.mor.{name}", lake.snapshots[-1][1], QUERIES[:8])
        explained = fed.explain(f"SELECT * FROM mor.mor.{name}")
        assert "row-level delete files: the Python reader applies them" in explained, explained
        before = lake.snapshots[1][0]  # no delete file yet: the forced reader is Spark's
        assert "Spark's vectorised Parquet reader" in fed.explain(
            f"SELECT * FROM mor.mor.{name} VERSION AS OF {before}"
        )
    finally:
        spark.conf.unset("spark.sluice.lakeReader")


@pytest.mark.parametrize("name", ["flat", "parted"])
def test_optimize_folds_every_delete_file_in(spark, lakes, name: str) -> None:
    """Last in the module (it compacts the tables): every file has deletes or shares its
    partition, so all are rewritten with the deletes applied (NaN and -0.0 positions, global and
    partition equality deletes, NULL keys) and no delete file is left; the rows read as before."""
    from sluice.lake.maintenance import optimize

    fed, built = lakes
    lake = built[name]
    table = lake.table
    url = f"iceberg+sqlite:///{Path(table.location().removeprefix('file://')).parents[2]}/catalog.db"
    assert optimize(spark, url, "mor", name, report=lambda _: None) is not None
    table.refresh()
    snapshot = table.current_snapshot()
    assert snapshot.summary.operation.value == "replace"
    live_deletes = [
        e
        for m in snapshot.manifests(table.io)
        if m.content == ManifestContent.DELETES
        for e in m.fetch_manifest_entry(table.io, discard_deleted=True)
    ]
    assert live_deletes == []
    _differential(spark, fed, f"mor.mor.{name}", lake.snapshots[-1][1], QUERIES[:7])
    # PyIceberg's reader, a second reader: the table has no delete file left for it to refuse

    def canonical(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(
            (
                tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in (r[k] for k in ARROW.names))
                for r in rows
            ),
            key=repr,
        )

    assert canonical(table.scan().to_arrow().to_pylist()) == canonical(lake.snapshots[-1][1])
