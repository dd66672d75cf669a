"""Classification of every operator, function and type, per dialect, with reasons."""

from __future__ import annotations

from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator
from tests.unit.tables import PG_TABLE, SQLITE_TABLE

E, I, U = Level.EXACT, Level.INEXACT, Level.UNSUPPORTED  # noqa: E741  # the levels' initials, for the tables below

# predicate, PostgreSQL level, SQLite level
CASES = [
    ("id = 1", E, E),
    ("id > 1.5", E, E),
    ("id = 92233720368547758070", E, U),  # no REAL keeps the order against integers
    ("id = 1.0D", E, E),  # column cast to double, as Spark does
    ("i IN (1, 2, NULL)", E, E),
    ("i IN (1, 2.5)", U, U),  # mixed constant types
    ("f = double('NaN')", E, U),  # SQLite cannot hold NaN
    ("f > double('inf')", E, E),
    ("f > 0.1", E, E),
    ("r = 0.1", E, None),  # float vs decimal: compared as doubles
    ("d = 1.005", E, None),
    ("name = 'a'", E, E),
    ("name < 'b'", E, E),  # PostgreSQL: COLLATE "C"; SQLite BINARY
    ("code < 'b'", E, E),
    ("ch = 'a'", I, I),  # blank-padded / RTRIM
    ("ch < 'b'", U, U),
    ("ch <> 'a'", U, U),
    ("ci = 'a'", I, I),  # case-insensitive
    ("ci IN ('a', 'b')", I, I),
    ("ci < 'b'", U, U),
    ("name LIKE 'a%'", E, E),
    ("name LIKE 'a\\\\%b'", E, E),
    ("name LIKE 'a\\\\b'", U, U),  # Spark rejects the escape
    ("ch LIKE 'a%'", U, E),  # GLOB ignores the RTRIM collation
    ("ci LIKE 'a%'", U, E),  # SQLite GLOB ignores the collation
    ("upper(name) = 'A'", U, U),
    ("lower(name) = 'a'", U, U),
    ("length(name) > 3", E, E),
    ("length(ch) > 3", U, E),
    ("substr(name, 1, 2) = 'ab'", E, E),
    ("substr(name, 0, 2) = 'a'", U, U),
    ("substr(name, -2) = 'ab'", U, U),
    ("coalesce(i, 0) = 5", E, E),
    ("abs(f) < 1", E, E),
    ("i + 1 > 5", E, U),
    ("i / 2 > 1", U, U),
    ("f + 1 > 2", U, U),
    ("i ^ 3 = 1", E, U),  # PostgreSQL '#'; SQLite has no XOR
    ("i & 1 = 1", E, E),
    ("i <=> NULL", E, E),
    ("dt = DATE '2020-01-01'", E, I),  # SQLite: with the rows holding no date
    ("dt > '2020-01-01'", E, I),
    ("ts > TIMESTAMP '2024-03-10 02:30:00'", E, U),
    ("tn > TIMESTAMP '2024-03-10 02:30:00'", U, None),  # NTZ vs LTZ in a DST zone
    ("tn > TIMESTAMP_NTZ '2024-03-10 02:30:00'", E, None),
    ("flag", E, I),  # SQLite: with the rows holding another value than 0 or 1 (the reader refuses them)
    ("flag = TRUE", E, I),
    ("n = 1", U, None),
    ("name ILIKE 'a%'", U, U),
    ("i = '5'", U, U),
]


def _classify(dialect, table, predicate: str) -> Level:
    translator = Translator(dialect, table, "America/New_York")
    return translator.predicate(cast(exp.Expression, sqlglot.parse_one(predicate, read="spark"))).level


@pytest.mark.parametrize("predicate,pg,_", [c for c in CASES if c[1] is not None])
def test_postgres(predicate: str, pg: Level, _: Level) -> None:
    assert _classify(PostgresDialect(), PG_TABLE, predicate) is pg


@pytest.mark.parametrize("predicate,_,lite", [c for c in CASES if c[2] is not None])
def test_sqlite(predicate: str, _: Level, lite: Level) -> None:
    assert _classify(SqliteDialect(), SQLITE_TABLE, predicate) is lite


def test_every_verdict_has_a_reason() -> None:
    for predicate, _, _ in CASES:
        translation = Translator(PostgresDialect(), PG_TABLE, "UTC").predicate(
            cast(exp.Expression, sqlglot.parse_one(predicate, read="spark"))
        )
        assert translation.reason.strip(), predicate


def test_reasons_name_the_deciding_column_property() -> None:
    translation = Translator(PostgresDialect(), PG_TABLE, "UTC").predicate(
        cast(exp.Expression, sqlglot.parse_one("ch = 'a'", read="spark"))
    )
    assert "character(5)" in translation.reason and "padded" in translation.reason
    translation = Translator(SqliteDialect(), SQLITE_TABLE, "UTC").predicate(
        cast(exp.Expression, sqlglot.parse_one("ci = 'a'", read="spark"))
    )
    assert "NOCASE" in translation.reason


def test_differently_collated_text_values_compare_as_bytes() -> None:
    """PostgreSQL refuses to compare text of two implicit collations (fuzzer find)."""
    translator = Translator(PostgresDialect(), PG_TABLE, "America/New_York")
    for predicate in ("code = ci", "coalesce(code, ci) = 'a'"):
        result = translator.predicate(cast(exp.Expression, sqlglot.parse_one(predicate, read="spark")))
        assert result.level is I and result.sql is not None
        assert PostgresDialect().render(result.sql).count('COLLATE "C"') == 2, predicate
