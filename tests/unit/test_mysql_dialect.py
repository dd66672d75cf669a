"""MySQL/MariaDB traps: collations, literal spelling, unsigned and widening arithmetic."""

from __future__ import annotations

from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.mysql import MariadbDialect, Mysql8Dialect
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator
from sluice.sources.mysql import catalog_column
from tests.unit.tables import MYSQL_TABLE

E, U = Level.EXACT, Level.UNSUPPORTED


def translate(predicate: str, dialect: MariadbDialect | None = None) -> tuple[Level, str]:
    dialect = dialect or MariadbDialect()
    result = Translator(dialect, MYSQL_TABLE, "America/New_York").predicate(
        cast(exp.Expression, sqlglot.parse_one(predicate, read="spark"))
    )
    return result.level, dialect.render(result.sql) if result.sql is not None else result.reason


@pytest.mark.parametrize("predicate", ["name = 'a'", "ch = 'a'", "ci IN ('a', 'b')"])
def test_folding_collations_push_exact_equality_that_keeps_the_index(predicate: str) -> None:
    level, sql = translate(predicate)
    native, exact = sql.split(" AND ", 1)
    assert level is E
    assert "COLLATE" not in native and "COLLATE utf8mb4_nopad_bin" in exact


def test_nopad_binary_collation_is_native() -> None:
    assert translate("code < 'b'") == (E, "`code` < 'b'")
    assert translate("code = 'b'") == (E, "`code` = 'b'")


def test_ranges_and_like_on_folding_collations_compare_code_points() -> None:
    assert translate("name < 'b'")[1] == "(CAST(`name` AS CHAR CHARACTER SET utf8mb4) COLLATE utf8mb4_nopad_bin) < 'b'"
    assert "COLLATE utf8mb4_nopad_bin) LIKE 'a%' ESCAPE '!'" in translate("ci LIKE 'a%'")[1]


def test_mysql8_uses_its_own_no_pad_binary_collation() -> None:
    assert "COLLATE utf8mb4_0900_bin" in translate("name < 'b'", Mysql8Dialect())[1]


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("a\\b", "_utf8mb4 x'615C62'"),  # backslash: meaning depends on sql_mode, so hex
        ("it's", "_utf8mb4 x'69742773'"),
        ("日本", "_utf8mb4 x'E697A5E69CAC'"),
        ("plain text 1", "'plain text 1'"),
    ],
)
def test_text_literals_never_depend_on_sql_mode(text: str, spelled: str) -> None:
    dialect = MariadbDialect()
    assert dialect.render(dialect.text_literal(text)) == spelled


def test_like_escapes_its_own_escape_character() -> None:
    assert translate("code LIKE 'a!%'") == (E, "`code` LIKE 'a!!%' ESCAPE '!'")


@pytest.mark.parametrize(
    ("predicate", "level"),
    [
        ("id + 1 > 5", E),  # BIGINT overflow raises on both sides
        ("i + 1 > 5", U),  # Spark raises on INT overflow; MySQL computes BIGINT
        ("u - 5 > 0", U),  # unsigned subtraction raises below zero in MySQL
        ("i % 3 = 1", E),
        ("i % 0 = 1", U),  # NULL in MySQL, an error in ANSI Spark
        ("i / 2 > 1", U),
        ("abs(i) > 1", U),  # ABS(-2147483648) widens in MySQL
        ("abs(id) > 1", E),
        ("f + 1 > 2", U),  # DOUBLE overflow raises in MySQL, gives Infinity in Spark
    ],
)
def test_arithmetic_is_pushed_only_where_overflow_agrees(predicate: str, level: Level) -> None:
    assert translate(predicate)[0] is level


def test_bitwise_results_are_read_back_as_signed() -> None:
    assert translate("i | 1 = -1") == (E, "CAST(`i` | 1 AS SIGNED) = (-1)")


@pytest.mark.parametrize(
    ("row", "spark"),
    [
        (("a", "tinyint", "tinyint(1)"), "boolean"),
        (("a", "tinyint", "tinyint(4)"), "tinyint"),
        (("a", "int", "int(10) unsigned"), "bigint"),
        (("a", "bigint", "bigint(20) unsigned"), "decimal(20,0)"),
        (("a", "mediumint", "mediumint(9)"), "int"),
        (("a", "datetime", "datetime(6)"), "timestamp_ntz"),
        (("a", "timestamp", "timestamp"), "timestamp"),
    ],
)
def test_catalog_types(row: tuple[str, str, str], spark: str) -> None:
    assert catalog_column((*row, "YES", None, None, 10, 0)).type.name == spark


def test_enum_is_read_but_never_pushed() -> None:
    column = catalog_column(("e", "enum", "enum('b','a')", "YES", "utf8mb4", "utf8mb4_general_ci", None, None))
    assert column.unpushable and "member position" in column.unpushable
