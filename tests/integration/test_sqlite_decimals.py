"""SQLite DECIMAL(p,s) columns through Spark, pushdown on vs off (issue 15, item 4).

Money columns are Spark decimals now (sums and averages are decimals, not doubles), and
the pushed comparisons over them return exactly the reference rows: SQLite compares the
stored INTEGER and REAL values, Spark the decimals read from them, and a pushed
conjunct also returns every row whose value SQLite would compare differently or the
reader refuses, so a value the reference read fails on fails the pushed query too.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from sluice import Federation

pytestmark = pytest.mark.integration

MONEY = [
    (1, 12.34),
    (2, 5),
    (3, 0.1),
    (4, 99999999.99),
    (5, None),
    (6, -0.5),
    (7, 0.30000000000000004 - 0.00000000000000004),
    (8, 1234.5),
    (9, 0),
]
PREDICATES = [
    "d = 12.34",
    "d > 5",
    "d >= 5",
    "d < 0.1",
    "d <= 0.1",
    "d <> 0.5",
    "d IN (5, 12.34, 0.3)",
    "d IS NULL",
    "NOT (d IS NULL)",
    "d > 0.1D",
    "d = 12.340",
    "abs(d) > 1",
    "d BETWEEN -1 AND 1",
    "NOT (d = 5)",
    "d < 99999999.99",
    "d = 1234.50",
    "coalesce(d, 7) = 7",
    "d > 5 OR d < 0",
]


@pytest.fixture(scope="module")
def lite(spark, tmp_path_factory):
    path: Path = tmp_path_factory.mktemp("decimals") / "money.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE money (id INTEGER PRIMARY KEY, d DECIMAL(10,2))")
        connection.executemany("INSERT INTO money VALUES (?, ?)", MONEY)
        for name, value in (("fraction", 1.005), ("word", "abc"), ("wide", 10**9)):
            connection.execute(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, d DECIMAL(10,2))")
            connection.executemany(f"INSERT INTO {name} VALUES (?, ?)", MONEY + [(10, value)])
    connection.close()
    federation = Federation(spark=spark)
    federation.attach("lite", f"sqlite:///{path}")
    return federation


def _outcome(federation: Federation, query: str, pushdown: bool) -> object:
    try:
        return sorted(tuple(row) for row in federation.sql(query, pushdown=pushdown).collect())
    except Exception as error:  # noqa: BLE001 - both sides must fail, naming the same column
        return f"error: {'d' in str(error) and 'decimal' in str(error)}"


@pytest.mark.parametrize("predicate", PREDICATES)
def test_decimal_predicates_return_the_reference_rows(lite: Federation, predicate: str) -> None:
    query = f"SELECT id FROM lite.money WHERE {predicate}"
    verdicts = lite.plan(query).scans[0].verdicts
    assert all(v.level.value != "EXACT" for v in verdicts), "a decimal column may hold TEXT: never EXACT"
    assert _outcome(lite, query, True) == _outcome(lite, query, False)


def test_money_sums_and_averages_are_decimals(lite: Federation) -> None:
    row = lite.sql("SELECT sum(d) AS total, avg(d) AS mean FROM lite.money").collect()[0]
    assert row.total == Decimal("100001251.73")
    assert isinstance(row.mean, Decimal)
    assert lite.sql("SELECT d FROM lite.money WHERE id = 3").collect()[0].d == Decimal("0.10")


@pytest.mark.parametrize("table", ["fraction", "word", "wide"])
@pytest.mark.parametrize("predicate", ["d > 1000", "d = 5", "d IS NULL", "id < 10 AND d < 0"])
def test_a_pushed_filter_does_not_hide_a_value_the_reader_refuses(lite: Federation, table: str, predicate: str) -> None:
    query = f"SELECT id FROM lite.{table} WHERE {predicate}"
    with pytest.raises(Exception, match=r"column 'd' holds a value that is not decimal128\(10, 2\).*rowid 10"):
        lite.sql(query).collect()
    assert _outcome(lite, query, False) == "error: True"


def test_top_n_over_a_decimal_column_is_left_to_spark(lite: Federation) -> None:
    query = "SELECT id, d FROM lite.money ORDER BY d DESC NULLS LAST LIMIT 3"
    assert lite.plan(query).scans[0].spec.limit is None
    assert _outcome(lite, query, True) == _outcome(lite, query, False)
