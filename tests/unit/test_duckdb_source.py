"""The DuckDB source against real files (no Spark): catalog, reads, partitions, locks, errors."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import cast

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sluice.errors import BindError, ConfigError, SourceError
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.translator import Translator
from sluice.scan.query import OrderKey
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from sluice.sources.base import ReadTask
from sluice.sources.duckdb import DuckdbSource
from tests.edge_data import TEXTS

ROOT = Path(__file__).resolve().parents[2]


def _file(path: Path, *statements: str) -> str:
    connection = duckdb.connect(str(path))
    try:
        for statement in statements:
            connection.execute(statement)
    finally:
        connection.close()
    return f"duckdb:///{path}"


def _ids(source: DuckdbSource, spec: ScanSpec) -> list[int]:
    return [v for task in source.tasks(spec) for batch in source.read(task) for v in batch.column(0).to_pylist()]


def test_urls(tmp_path: Path) -> None:
    assert DuckdbSource("d", f"duckdb:///{tmp_path}/x.duckdb").path == str(tmp_path / "x.duckdb")
    assert DuckdbSource("d", "duckdb:///rel.duckdb").path == str(Path("rel.duckdb").resolve())
    assert isinstance(open_source("d", "duckdb:///rel.duckdb"), DuckdbSource)
    with pytest.raises(ConfigError, match="duckdb:///relative.duckdb"):
        DuckdbSource("d", "duckdb://host/x.duckdb")


def test_missing_and_foreign_files(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        DuckdbSource("d", f"duckdb:///{tmp_path}/missing.duckdb").check()
    (tmp_path / "notes.txt").write_text("not a database at all")
    with pytest.raises(SourceError, match="not a DuckDB database file"):
        DuckdbSource("d", f"duckdb:///{tmp_path}/notes.txt").check()
    import sqlite3  # DuckDB itself would try to download its sqlite extension for this one

    sqlite3.connect(tmp_path / "lite.db").execute("CREATE TABLE a (x)").connection.commit()
    with pytest.raises(SourceError, match="not a DuckDB database file"):
        DuckdbSource("d", f"duckdb:///{tmp_path}/lite.db").check()


def test_a_writer_in_another_process_is_reported(tmp_path: Path) -> None:
    url = _file(tmp_path / "w.duckdb", "CREATE TABLE t (id BIGINT)")
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(tmp_path / 'w.duckdb')!r}); print('open', flush=True); sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "open"
        with pytest.raises(SourceError, match="open for writing by another process"):
            DuckdbSource("d", url).check()
    finally:
        writer.communicate("done\n", timeout=30)
    DuckdbSource("d", url).check()  # the lock is gone with the writer


def test_a_writer_in_this_process_is_reported(tmp_path: Path) -> None:
    url = _file(tmp_path / "w.duckdb", "CREATE TABLE t (id BIGINT)")
    writer = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        with pytest.raises(SourceError, match="already open in this process"):
            DuckdbSource("d", url).check()
    finally:
        writer.close()


_READER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from sluice.scan.spec import ScanSpec
    from sluice.sources.duckdb import DuckdbSource
    source = DuckdbSource("d", {url!r})
    source.batch_rows = 1000
    table = source.describe(None, "t")
    (task,) = source.tasks(ScanSpec.for_source(source, table, ("id",)))
    batches = source.read(task)
    rows = next(batches).num_rows
    print("reading", flush=True)
    sys.stdin.readline()
    print(rows + sum(batch.num_rows for batch in batches), flush=True)
""")


def test_two_processes_read_at_once(tmp_path: Path) -> None:
    """Spark's Python workers are processes: read-only connections must not exclude each other."""
    url = _file(tmp_path / "r.duckdb", "CREATE TABLE t AS SELECT range AS id FROM range(50000)")
    code = _READER.format(root=str(ROOT), url=url)
    readers = [
        subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        for reader in readers:  # both hold an open connection in the middle of a read
            assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    finally:
        counts = [reader.communicate("go\n", timeout=60)[0].strip() for reader in readers]
    assert counts == ["50000", "50000"]


def test_statement_timeout_interrupts(tmp_path: Path) -> None:
    url = _file(tmp_path / "s.duckdb", "CREATE TABLE t (id BIGINT)")
    source = DuckdbSource("d", url, statement_timeout_s=0.3)
    task = ReadTask("SELECT count(*) AS id FROM range(1000000000000)", pa.schema([("id", pa.int64())]))
    with pytest.raises(SourceError, match="statement_timeout_s=0.3"):
        list(source.read(task))


def test_catalog_types_and_reads(tmp_path: Path) -> None:
    url = _file(
        tmp_path / "types.duckdb",
        "CREATE TYPE mood AS ENUM ('sad', 'ok')",
        'CREATE TABLE "Ty pes" (bo BOOLEAN NOT NULL, ti TINYINT, si SMALLINT, i INTEGER, b BIGINT, h HUGEINT, '
        "ut UTINYINT, us USMALLINT, ui UINTEGER, ub UBIGINT, uh UHUGEINT, r REAL, f DOUBLE, d DECIMAL(20,4), "
        "v VARCHAR, c CHAR(3), dt DATE, tn TIMESTAMP, ts TIMESTAMPTZ, bl BLOB, m mood, iv INTERVAL, tsn TIMESTAMP_NS)",
        'INSERT INTO "Ty pes" VALUES (true, -128, -32768, -2147483648, -9223372036854775808, 99999999999999999999999999999999999999, '
        "255, 65535, 4294967295, 18446744073709551615, 5, 1.5, 'NaN', 12345678901234.5678, 'ß😀', 'a', DATE '0001-01-01', "
        "TIMESTAMP '2024-03-10 02:30:00.123456', TIMESTAMPTZ '2024-03-10 07:00:00+00', '\\x00\\xff'::BLOB, 'ok', INTERVAL 1 DAY, "
        "TIMESTAMP_NS '2024-01-01 00:00:00.123456789')",
    )
    source = DuckdbSource("d", url)
    table = source.describe("MAIN", "ty pes")
    assert (table.schema, table.name, table.row_estimate, table.split_column) == ("main", "Ty pes", 1, "rowid")
    types = {c.name: c.type.name for c in table.columns}
    assert types == {
        "bo": "boolean",
        "ti": "tinyint",
        "si": "smallint",
        "i": "int",
        "b": "bigint",
        "h": "decimal(38,0)",
        "ut": "smallint",
        "us": "int",
        "ui": "bigint",
        "ub": "decimal(20,0)",
        "uh": "decimal(38,0)",
        "r": "float",
        "f": "double",
        "d": "decimal(20,4)",
        "v": "string",
        "c": "string",
        "dt": "date",
        "tn": "timestamp_ntz",
        "ts": "timestamp",
        "bl": "binary",
        "m": "string",
        "iv": "string",
        "tsn": "string",
    }
    assert not table.column("bo").nullable and table.column("i").nullable
    assert {c.name for c in table.columns if c.unpushable} == {"m", "iv", "tsn"}
    spec = ScanSpec.for_source(source, table, tuple(types))
    (row,) = [r for task in source.tasks(spec) for batch in source.read(task) for r in batch.to_pylist()]
    assert row["h"] == Decimal("99999999999999999999999999999999999999") and row["ub"] == Decimal(18446744073709551615)
    assert (row["ut"], row["us"], row["ui"], row["uh"]) == (255, 65535, 4294967295, Decimal(5))
    assert row["d"] == Decimal("12345678901234.5678") and row["v"] == "ß😀" and row["c"] == "a"
    assert row["ts"] == dt.datetime(2024, 3, 10, 7, tzinfo=dt.timezone.utc)
    assert row["tn"] == dt.datetime(2024, 3, 10, 2, 30, 0, 123456) and row["dt"] == dt.date(1, 1, 1)
    assert row["bl"] == b"\x00\xff" and row["m"] == "ok" and row["iv"] == "1 day"


def test_integers_spark_cannot_hold_fail_the_read(tmp_path: Path) -> None:
    """UHUGEINT 2**128-1 leaves DuckDB's Arrow export as -1: the reader's cast must refuse it."""
    url = _file(
        tmp_path / "big.duckdb",
        "CREATE TABLE t (uh UHUGEINT)",
        "INSERT INTO t VALUES (340282366920938463463374607431768211455)",
    )
    source = DuckdbSource("d", url)
    spec = ScanSpec.for_source(source, source.describe(None, "t"), ("uh",))
    with pytest.raises(SourceError, match="query failed"):
        _ids(source, spec)


def test_missing_table_names_its_schema_and_the_closest_tables_and_views(tmp_path: Path) -> None:
    url = _file(
        tmp_path / "m.duckdb",
        "CREATE TABLE present (x INT)",
        "CREATE VIEW shown AS SELECT x FROM present",
        "CREATE SCHEMA other",
        "CREATE TABLE other.shawn (x INT)",
    )
    with pytest.raises(BindError, match=r"^source 'd' has no table main\.shwn \(closest in main: shown\)$"):
        DuckdbSource("d", url).describe(None, "shwn")
    with pytest.raises(BindError, match=r"no table main\.zzz \(none of the 2 table\(s\) in main is close\)$"):
        DuckdbSource("d", url).describe(None, "zzz")


def test_collations_come_from_the_ddl(tmp_path: Path) -> None:
    url = _file(
        tmp_path / "c.duckdb",
        'CREATE TABLE t (plain VARCHAR, "We""ird" VARCHAR COLLATE nocase.noaccent, b VARCHAR COLLATE "binary", '
        "c VARCHAR COLLATE C, de VARCHAR COLLATE de, n VARCHAR COLLATE NFC, x INT DEFAULT 0)",
        'CREATE VIEW v AS SELECT plain, "We""ird" AS w FROM t',
    )
    source = DuckdbSource("d", url)
    collations = {c.name: c.collation for c in source.describe(None, "t").columns}
    assert collations == {
        "plain": None,
        'We"ird': "nocase.noaccent",
        "b": "binary",
        "c": "C",
        "de": "de",
        "n": "NFC",
        "x": None,
    }
    view = source.describe(None, "v")
    assert [c.collation for c in view.columns] == ["unknown", "unknown"] and view.split_column is None


@pytest.mark.parametrize("collation", ["NOCASE", "NOACCENT", "nocase.noaccent", "NFC", "de", "en_us"])
def test_collated_text_is_pushed_exactly(tmp_path: Path, collation: str) -> None:
    """Every text comparison over a collated column returns exactly the byte-order answer."""
    url = _file(tmp_path / "x.duckdb", f"CREATE TABLE t (id BIGINT, s VARCHAR COLLATE {collation})")
    connection = duckdb.connect(url.removeprefix("duckdb:///"))
    connection.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(TEXTS)))
    connection.close()
    source = DuckdbSource("d", url)
    table = source.describe(None, "t")
    checks = {
        "s = 'a'": lambda s: s == "a",
        "s <> 'ss'": lambda s: s != "ss",
        "s < 'b'": lambda s: s < "b",
        "s >= 'é'": lambda s: s >= "é",
        "s IN ('A', 'e\u0301')": lambda s: s in ("A", "e\u0301"),
        "s LIKE 'a%'": lambda s: s.startswith("a"),
        "endswith(s, 'ß')": lambda s: s.endswith("ß"),
        "substr(s, 1, 1) = 'z'": lambda s: s[:1] == "z",
        "coalesce(s, 'x') > 'Z'": lambda s: s > "Z",
    }
    for predicate, expected in checks.items():
        translation = Translator(source.dialect, table, "UTC").predicate(
            cast(exp.Expression, sqlglot.parse_one(predicate, read="spark"))
        )
        spec = ScanSpec.for_source(source, table, ("id",), where=(Pushed(tree=translation.sql),))
        assert sorted(_ids(source, spec)) == [i for i, s in enumerate(TEXTS) if expected(s)], predicate
    ordered = ScanSpec.for_source(
        source,
        table,
        ("s",),
        order=(OrderKey("s", descending=False, nulls_first=True),),
    )
    assert [v for task in source.tasks(ordered) for b in source.read(task) for v in b.column(0).to_pylist()] == sorted(
        TEXTS, key=str.encode
    )


def test_rowid_ranges_cover_every_row_once(tmp_path: Path) -> None:
    url = _file(
        tmp_path / "p.duckdb",
        "CREATE TABLE t AS SELECT range AS id FROM range(10000)",
        "DELETE FROM t WHERE id % 7 = 0 OR id BETWEEN 3000 AND 5000",
    )
    source = DuckdbSource("d", url)
    table = source.describe(None, "t")
    spec = ScanSpec.for_source(source, table, ("id",), partitions=4)
    assert len(source.tasks(spec)) == 4
    ids = _ids(source, spec)
    assert sorted(ids) == [i for i in range(10000) if i % 7 and not 3000 <= i <= 5000]


def test_a_column_named_rowid_is_never_split_on(tmp_path: Path) -> None:
    url = _file(tmp_path / "r.duckdb", "CREATE TABLE t AS SELECT range AS id, NULL::INT AS rowid FROM range(1000)")
    source = DuckdbSource("d", url)
    table = source.describe(None, "t")
    assert table.split_column is None and source.split(table, 4) == [None]


def test_duckdb_file_returns_the_hostile_rows(tmp_path: Path) -> None:
    """Hostile literals and names (tests/unit/test_escaping.py) against a real DuckDB file."""
    from tests.unit.test_escaping import HOSTILE

    url = _file(
        tmp_path / "h.duckdb", 'CREATE TABLE "we""ird tab" ("sp ace" VARCHAR COLLATE NOCASE, "quote\'name" INTEGER)'
    )
    connection = duckdb.connect(url.removeprefix("duckdb:///"))
    connection.executemany('INSERT INTO "we""ird tab" VALUES (?, ?)', [(v, i) for i, v in enumerate(HOSTILE)])
    connection.close()
    source = DuckdbSource("d", url)
    table = source.describe(None, 'we"ird tab')
    for index, value in enumerate(HOSTILE):
        predicate = sqlglot.exp.EQ(
            this=sqlglot.exp.column("sp ace", quoted=True), expression=sqlglot.exp.Literal.string(value)
        )
        translation = Translator(source.dialect, table, "UTC").predicate(predicate)
        spec = ScanSpec.for_source(source, table, ("quote'name",), where=(Pushed(tree=translation.sql),))
        assert _ids(source, spec) == [index], value
