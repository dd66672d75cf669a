"""Hostile identifiers and literals, per dialect (PostgreSQL, SQLite, MariaDB, DuckDB, lake):
generated SQL parses back to the same value and never breaks out of its literal; where an
engine cannot receive a value (NUL for PostgreSQL and SQLite, lone surrogates anywhere) the
predicate is not pushed; and real SQLite and DuckDB engines answer with exactly the rows
Spark's comparison picks. (PostgreSQL and MariaDB: tests/integration/test_hostile_input.py.)"""

from __future__ import annotations

import sqlite3

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.dialects.duckdb import DuckdbDialect
from sluice.dialects.lake import LakeDialect
from sluice.dialects.mysql import MariadbDialect
from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import Translation
from sluice.pushdown.translator import Translator
from sluice.scan.spec import ScanSpec
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.sqlite import SqliteSource
from sluice.types import Column, SparkType, TableSchema

#: every kind of quote, backslashes (MySQL), comment starters, semicolons, NUL, line breaks,
#: Unicode look-alikes of the quote (U+2019, U+FF07, U+02BC), LIKE and GLOB metacharacters, 1 MB
HOSTILE = [
    "'",
    "''",
    "\\",
    "\\'",
    '"',
    "`",
    "``",
    "a'; DROP TABLE t; --",
    "x'); DELETE FROM t; --",
    "/* x */",
    "*/",
    "/*",
    "--",
    "-- x",
    "#",
    "# x",
    ";",
    "a;b",
    "$$",
    "$1",
    "$tag$",
    "\n",
    "\r\n",
    "\t",
    "\x00",
    "a\x00b",
    "\u2019",
    "\uff07",
    "\u02bc",
    "\u2028",
    "\ufeff",
    "\u00a0",
    "日本語",
    "😀",
    "%_",
    "[*?]",
    "\\%",
    "!%",
    "x" * 10_000,
    "O'Brien\\",
    "\\\\'",
    "' OR '1'='1",
    "N'x'",
    "E'\\x27'",
    "_utf8mb4'x'",
    "X'27'",
    "y" * 1_000_000,
]
HOSTILE_NAMES = [
    'we"ird',
    "sp ace",
    "semi;colon",
    "quote'name",
    "UPPER",
    "select",
    "ünï",
    "back\\slash",
    "dash--x",
    "back`tick",
    "hash#x",
    "slash/*x",
    "\u2019q",
]
DIALECTS = [PostgresDialect(), SqliteDialect(), MariadbDialect(), DuckdbDialect(), LakeDialect()]
NUL_REFUSED = {"PostgreSQL", "SQLite"}


def _table(name: str = "t", column: str = "v") -> TableSchema:
    return TableSchema(
        "s", None, name, (Column("id", SparkType("bigint"), "INTEGER"), Column(column, SparkType("string"), "TEXT"))
    )


def _translate(dialect: Dialect, predicate: exp.Expression, table: TableSchema | None = None) -> Translation:
    return Translator(dialect, table or _table(), "UTC").predicate(predicate)


def _text_of(node: exp.Expression) -> str:
    """The value of a parsed-back string literal: quoted, or MySQL's ``_utf8mb4 X'…'``."""
    if isinstance(node, exp.Introducer):
        return bytes.fromhex(node.expression.this).decode("utf-8")
    assert isinstance(node, exp.Literal) and node.is_string, node
    return node.this


def _ids(value: str) -> str:
    return f"{len(value)} chars: {value[:30]!r}"


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name.split()[0])
@pytest.mark.parametrize("value", HOSTILE, ids=_ids)
def test_literal_round_trips_or_is_not_pushed(dialect: Dialect, value: str) -> None:
    translation = _translate(dialect, exp.EQ(this=exp.column("v"), expression=exp.Literal.string(value)))
    if "\x00" in value and dialect.name in NUL_REFUSED:
        assert translation.level is Level.UNSUPPORTED and "NUL" in translation.reason
        return
    assert translation.sql is not None, translation.reason
    sql = dialect.render(translation.sql)
    [statement] = sqlglot.parse(f"SELECT 1 FROM t WHERE {sql}", read=dialect.sqlglot)
    assert statement is not None
    condition = statement.args["where"].this
    texts = [
        _text_of(node)
        for node in condition.find_all(exp.Literal, exp.Introducer)
        if isinstance(node, exp.Introducer) or (node.is_string and not isinstance(node.parent, exp.Introducer))
    ]
    assert texts and set(texts) == {value}, sql[:200]  # MariaDB compares twice (index, then binary)
    assert {column.name for column in condition.find_all(exp.Column)} == {"v"}


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name.split()[0])
def test_a_lone_surrogate_is_never_sent(dialect: Dialect) -> None:
    """No driver can encode it as UTF-8: the conjunct stays with Spark instead of failing the read."""
    translation = _translate(dialect, exp.EQ(this=exp.column("v"), expression=exp.Literal.string("a\ud800")))
    assert translation.level is Level.UNSUPPORTED and "surrogate" in translation.reason


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name.split()[0])
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_identifier_round_trips(dialect: Dialect, name: str) -> None:
    table = _table(name=name, column=name)
    translation = _translate(
        dialect, exp.EQ(this=exp.column(name, quoted=True), expression=exp.Literal.string("x")), table
    )
    assert translation.sql is not None, translation.reason
    sql = dialect.render(translation.sql)
    parsed = sqlglot.parse_one(sql, read=dialect.sqlglot)
    assert {column.name for column in parsed.find_all(exp.Column)} == {name}
    assert sqlglot.parse_one(dialect.quote_table(None, name), read=dialect.sqlglot, into=exp.Table).name == name


# ---------------------------------------------------------------- real engines, in process
ROWS = [v for v in HOSTILE if len(v) < 100_000] + ["plain", "Plain", "'x'", "y" * 1_000_000]
LIKE_PREFIXES = ["'", "\\", "%", "_", "!", "[", "*", "a'; DROP", "\u2019", "x\ny", "a\x00"]


def _predicates() -> list[tuple[str, exp.Expression, set[int]]]:
    """(label, Spark predicate over column v, ids Spark's binary comparison selects)."""
    column = exp.column("v", quoted=True)
    cases: list[tuple[str, exp.Expression, set[int]]] = []
    for index, value in enumerate(ROWS):
        literal = exp.Literal.string(value)
        cases.append((f"= {value[:20]!r}", exp.EQ(this=column.copy(), expression=literal), {index}))
        if index % 5 == 0:
            cases.append(
                (
                    f"<> {value[:20]!r}",
                    exp.NEQ(this=column.copy(), expression=literal.copy()),
                    {i for i, v in enumerate(ROWS) if v != value},
                )
            )
    for prefix in LIKE_PREFIXES:
        cases.append(
            (
                f"startswith {prefix!r}",
                exp.StartsWith(this=column.copy(), expression=exp.Literal.string(prefix)),
                {i for i, v in enumerate(ROWS) if v.startswith(prefix)},
            )
        )
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        cases.append(
            (
                f"LIKE {escaped!r}",
                exp.Like(this=column.copy(), expression=exp.Literal.string(escaped)),
                {i for i, v in enumerate(ROWS) if v.startswith(prefix)},
            )
        )
    chosen = ROWS[:6]
    cases.append(
        ("IN six", exp.In(this=column.copy(), expressions=[exp.Literal.string(v) for v in chosen]), set(range(6)))
    )
    return cases


def _sqlite_table(tmp_path) -> tuple[SqliteSource, TableSchema]:
    path = tmp_path / "hostile.db"
    connection = sqlite3.connect(path)
    connection.execute('CREATE TABLE "we""ird tab" ("id" INTEGER, "v" TEXT)')
    connection.executemany('INSERT INTO "we""ird tab" VALUES (?, ?)', list(enumerate(ROWS)))
    connection.commit()
    connection.close()
    source = SqliteSource("lite", f"sqlite:///{path}")
    return source, source.describe(None, 'we"ird tab')


def _duckdb_table(tmp_path) -> tuple[DuckdbSource, TableSchema]:
    path = tmp_path / "hostile.duckdb"
    connection = duckdb.connect(str(path))
    connection.execute('CREATE TABLE "we""ird tab" ("id" BIGINT, "v" VARCHAR)')
    connection.executemany('INSERT INTO "we""ird tab" VALUES (?, ?)', list(enumerate(ROWS)))
    connection.close()
    source = DuckdbSource("duck", f"duckdb:///{path}")
    return source, source.describe(None, 'we"ird tab')


@pytest.mark.parametrize("make", [_sqlite_table, _duckdb_table], ids=["SQLite", "DuckDB"])
def test_real_engines_return_exactly_the_rows_spark_selects(tmp_path, make) -> None:
    source, table = make(tmp_path)
    cases = _predicates()
    verdicts = source.classify(table, [predicate for _, predicate, _ in cases], "UTC")
    pushed = 0
    for (label, _, expected), verdict in zip(cases, verdicts):
        if not verdict.level.pushed:
            assert "NUL" in verdict.reason or "surrogate" in verdict.reason, (label, verdict.reason)
            continue
        spec = ScanSpec.for_source(source, table, ("id",), where=(verdict.pushed,))
        ids = {v for task in source.tasks(spec) for batch in source.read(task) for v in batch.column(0).to_pylist()}
        if verdict.level is Level.EXACT:
            assert ids == expected, (label, verdict.remote_sql[:200])
        else:
            assert ids >= expected, (label, verdict.remote_sql[:200])
        pushed += 1
    assert pushed > len(cases) * 0.9
    whole = ScanSpec.for_source(source, table, ("id",))
    assert sum(batch.num_rows for task in source.tasks(whole) for batch in source.read(task)) == len(
        ROWS
    )  # table intact


def test_the_lake_engine_returns_exactly_the_rows_spark_selects() -> None:
    """Lake predicates run in an in-process DuckDB over the Arrow rows the reader kept."""
    dialect = LakeDialect()
    rows = pa.table({"id": pa.array(range(len(ROWS)), pa.int64()), "v": pa.array(ROWS, pa.string())})
    connection = duckdb.connect()
    connection.register("kept", rows)
    table = TableSchema(
        "lake", "db", "t", (Column("id", SparkType("bigint"), "long"), Column("v", SparkType("string"), "string"))
    )
    for label, predicate, expected in _predicates():
        translation = Translator(dialect, table, "UTC").predicate(predicate)
        assert translation.level is Level.EXACT, (label, translation.reason)
        assert translation.sql is not None
        ids = {
            r[0] for r in connection.execute(f"SELECT id FROM kept WHERE {dialect.render(translation.sql)}").fetchall()
        }
        assert ids == expected, label


def test_sqlite_file_returns_the_hostile_rows_through_hostile_names(tmp_path) -> None:
    """Hostile table and column names against a real SQLite file: exactly the matching row."""
    path = tmp_path / "names.db"
    connection = sqlite3.connect(path)
    names = [n for n in HOSTILE_NAMES if n.lower() not in ("upper",)]
    columns = ", ".join(f'"{n.replace(chr(34), chr(34) * 2)}" TEXT' for n in names)
    connection.execute(f'CREATE TABLE "we""ird; tab" ("id" INTEGER, {columns})')
    connection.executemany(
        f'INSERT INTO "we""ird; tab" VALUES ({", ".join(["?"] * (len(names) + 1))})',
        [(i, *[f"{n}={i}" for n in names]) for i in range(3)],
    )
    connection.commit()
    connection.close()
    source = SqliteSource("lite", f"sqlite:///{path}")
    table = source.describe(None, 'we"ird; tab')
    for name in names:
        predicate = exp.EQ(this=exp.column(name, quoted=True), expression=exp.Literal.string(f"{name}=1"))
        [verdict] = source.classify(table, [predicate], "UTC")
        spec = ScanSpec.for_source(source, table, ("id", name), where=(verdict.pushed,))
        ids = [v for task in source.tasks(spec) for batch in source.read(task) for v in batch.column(0).to_pylist()]
        assert ids == [1], name
    assert sqlite3.connect(path).execute('SELECT count(*) FROM "we""ird; tab"').fetchone()[0] == 3
