"""Hostile identifiers and literals: generated SQL parses back to the same tree, never breaks
out of its literal, and a real SQLite file answers with exactly the hostile values."""

from __future__ import annotations

import sqlite3

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.duckdb import DuckdbDialect
from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.pushdown.translator import Translator
from sluice.scan import ScanSpec
from sluice.sources.sqlite import SqliteSource
from sluice.types import Column, SparkType, TableSchema

HOSTILE = ["'", "''", "\\", "\\'", '"', "a'; DROP TABLE t; --", "/* x */", "*/", "--", "$$", "$1", "\n", "\r\n", "\t",
           "ʼ", "＇", "日本語", "😀", "%_", "[*?]", "x" * 10_000, "O'Brien\\", "\\\\'", "' OR '1'='1"]
HOSTILE_NAMES = ['we"ird', "sp ace", "semi;colon", "quote'name", "UPPER", "select", "ünï", "back\\slash", "dash--x"]
DIALECTS = [PostgresDialect(), SqliteDialect(), DuckdbDialect()]


def _table(name: str = "t", column: str = "v") -> TableSchema:
    return TableSchema("s", None, name, (Column(column, SparkType("string"), "TEXT"),))


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_literal_round_trips(dialect, value: str) -> None:  # type: ignore[no-untyped-def]
    predicate = exp.EQ(this=exp.column("v"), expression=exp.Literal.string(value))
    sql = dialect.render(Translator(dialect, _table(), "UTC").predicate(predicate).sql)
    parsed = sqlglot.parse_one(sql, read=dialect.sqlglot)
    assert isinstance(parsed, exp.EQ), sql
    assert isinstance(parsed.expression, exp.Literal) and parsed.expression.this == value


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_identifier_round_trips(dialect, name: str) -> None:  # type: ignore[no-untyped-def]
    table = _table(name=name, column=name)
    predicate = exp.EQ(this=exp.column(name, quoted=True), expression=exp.Literal.string("x"))
    sql = dialect.render(Translator(dialect, table, "UTC").predicate(predicate).sql)
    parsed = sqlglot.parse_one(sql, read=dialect.sqlglot)
    assert parsed.this.name == name
    assert sqlglot.parse_one(dialect.quote_table(None, name), read=dialect.sqlglot, into=exp.Table).name == name


def test_sqlite_file_returns_the_hostile_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same literals and names against a real SQLite file: exactly the matching row."""
    path = tmp_path / "hostile.db"
    connection = sqlite3.connect(path)
    connection.execute('CREATE TABLE "we""ird tab" ("sp ace" TEXT, "quote\'name" INTEGER)')
    connection.executemany('INSERT INTO "we""ird tab" VALUES (?, ?)', [(v, i) for i, v in enumerate(HOSTILE)])
    connection.commit()
    connection.close()
    source = SqliteSource("lite", f"sqlite:///{path}")
    table = source.describe(None, 'we"ird tab')
    for index, value in enumerate(HOSTILE):
        predicate = exp.EQ(this=exp.column("sp ace", quoted=True), expression=exp.Literal.string(value))
        translation = Translator(source.dialect, table, "UTC").predicate(predicate)
        spec = ScanSpec.for_source(source, table, ("quote'name",), where=(source.dialect.render(translation.sql),))
        ids = [v for task in spec.tasks(source) for batch in source.read(task) for v in batch.column(0).to_pylist()]
        assert ids == [index], value
    assert sqlite3.connect(path).execute('SELECT count(*) FROM "we""ird tab"').fetchone()[0] == len(HOSTILE)
