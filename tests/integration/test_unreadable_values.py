"""A value Spark cannot hold: pushdown on and off agree (issue 23, items 2-4).

Without pushdown Spark reads every row of the columns a query uses, so a PostgreSQL
``infinity`` date or a SQLite DATE column holding ``'garbage'`` fails the query whenever it
uses that column, and only then (the reference read prunes columns like a pushed one). A
pushed filter, aggregate or top-N that skips the row, or that only tests or counts the
column, must fail the same way: each query below has one outcome, pushed or not.
"""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from sluice import Federation
from tests.sources import PG_URL

pytestmark = pytest.mark.integration

#: PostgreSQL tables: one column ``v`` of a type, rows (1, a value Spark holds), (2, another),
#: (3, NULL), (4, a value it cannot hold); what the error says that value is
PG_TABLES = {
    "inf_date": ("date", "'2024-06-01'", "'2023-01-01'", "'infinity'", "holds 'infinity',"),
    "minus_inf_tz": (
        "timestamptz",
        "'2024-06-01 00:00+00'",
        "'2023-01-01 00:00+00'",
        "'-infinity'",
        "holds '-infinity',",
    ),
    "far_ts": ("timestamp", "'2024-06-01'", "'2023-01-01'", "'294276-12-31 23:59:59'", "holds 294276-12-31T23:59:59"),
    "nan_numeric": ("numeric", "2.5", "1.5", "'NaN'", "holds 'NaN'"),
}
#: (query over ``{t}``, whether it uses ``v``): pushed filters, aggregates and top-N that skip
#: or merely count row 4, and queries that never read ``v``
QUERIES = [
    ("SELECT id FROM {t} WHERE v > {low}", True),
    ("SELECT count(*) FROM {t} WHERE v IS NOT NULL", True),
    ("SELECT count(v) FROM {t}", True),
    ("SELECT id, v FROM {t} WHERE id = 1", True),
    ("SELECT id, v FROM {t} ORDER BY v ASC NULLS FIRST, id LIMIT 2", True),
    ("SELECT id FROM {t} WHERE id < 3", False),
    ("SELECT count(*) FROM {t} WHERE id > 1", False),
    ("SELECT count(*) FROM {t}", False),  # reads one column without pushdown: not v
]
LOWS = {
    "date": "DATE '2024-01-01'",
    "timestamptz": "TIMESTAMP '2024-01-01 00:00:00'",
    "timestamp": "TIMESTAMP_NTZ '2024-01-01 00:00:00'",
    "numeric": "2",
}


@pytest.fixture(scope="module")
def unreadable(spark, tmp_path_factory):
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_unreadable CASCADE")
        connection.execute("CREATE SCHEMA sluice_unreadable")
        for name, (kind, first, second, bad, _) in PG_TABLES.items():
            connection.execute(f"CREATE TABLE sluice_unreadable.{name} (id int, v {kind})")
            connection.execute(
                f"INSERT INTO sluice_unreadable.{name} VALUES (1, {first}), (2, {second}), (3, NULL), (4, {bad})"
            )
        connection.execute("CREATE TABLE sluice_unreadable.ids (id int)")  # joined with inf_date
        connection.execute("INSERT INTO sluice_unreadable.ids VALUES (1), (2)")
    path = tmp_path_factory.mktemp("unreadable") / "loose.db"
    lite = sqlite3.connect(path)
    lite.execute("CREATE TABLE loose (id INTEGER PRIMARY KEY, v DATE)")
    lite.executemany(
        "INSERT INTO loose VALUES (?, ?)", [(1, "2024-06-01"), (2, "2023-01-01"), (3, None), (4, "garbage")]
    )
    lite.commit()
    lite.close()
    federation = Federation(spark=spark)
    federation.attach("pg", PG_URL)
    federation.attach("lite", f"sqlite:///{path}")
    return federation


def _outcome(federation: Federation, query: str, pushdown: bool) -> tuple[str, object]:
    """The rows as a sorted list, or the error's message."""
    try:
        return "rows", sorted(tuple(r) for r in federation.sql(query, pushdown=pushdown).collect())
    except Exception as error:  # noqa: BLE001 - whatever Spark wraps the source's error in
        return "error", str(error)


def _check(federation: Federation, table: str, low: str, holds: str) -> list[str]:
    """Each query's outcome pushed and not: the same kind, and a failure names the column and value."""
    failures = []
    for template, uses in QUERIES:
        query = template.format(t=table, low=low)
        pushed, reference = (_outcome(federation, query, pushdown) for pushdown in (True, False))
        expected = "error" if uses else "rows"
        if (pushed[0], reference[0]) != (expected, expected):
            failures.append(f"{query}: pushed {str(pushed)[:300]}; reference {str(reference)[:300]}")
        elif uses and not all(f"column 'v' {holds}" in str(o[1]) for o in (pushed, reference)):
            failures.append(f"{query}: the error does not say column 'v' {holds}: {str(pushed[1])[:500]}")
    return failures


@pytest.mark.parametrize("name", PG_TABLES)
def test_postgres_values_spark_cannot_hold_fail_pushed_as_unpushed(unreadable, name: str) -> None:
    kind, _, _, _, holds = PG_TABLES[name]
    failures = _check(unreadable, f"pg.sluice_unreadable.{name}", LOWS[kind], holds)
    assert not failures, "\n".join(failures)


def test_sqlite_date_column_holding_text_fails_pushed_as_unpushed(unreadable) -> None:
    failures = _check(unreadable, "lite.loose", "DATE '2024-01-01'", "holds")
    assert not failures, "\n".join(failures)


def test_postgres_check_is_shown_in_explain(unreadable) -> None:
    frame = unreadable.sql("SELECT id FROM pg.sluice_unreadable.inf_date WHERE v > DATE '2024-01-01'")
    text = frame._jdf.queryExecution().executedPlan().toString()  # the scan's description, as EXPLAIN shows it
    assert "Checked first" in text and 'NOT ("v" BETWEEN' in text, text


#: pushed joins of two PostgreSQL tables (one holding ``infinity`` in ``v``): the joined query
#: returns only rows 1 and 2, the reference read reads every row of each side's columns
JOINS = [
    "SELECT a.id, b.v FROM {t} a JOIN {t} b ON a.id = b.id WHERE a.id < 3",
    "SELECT a.id, b.v FROM {u} a JOIN {t} b ON a.id = b.id",
    "SELECT a.id FROM {u} a LEFT JOIN {t} b ON a.id = b.id WHERE b.v > DATE '2020-01-01'",
]


@pytest.mark.parametrize("template", JOINS)
def test_postgres_pushed_join_over_a_value_spark_cannot_hold_fails_as_unpushed(unreadable, template: str) -> None:
    query = template.format(t="pg.sluice_unreadable.inf_date", u="pg.sluice_unreadable.ids")
    scans = unreadable.plan(query).scans
    assert any(scan.spec.join is not None for scan in scans), [scan.join_note for scan in scans]  # the join is pushed
    pushed, reference = (_outcome(unreadable, query, pushdown) for pushdown in (True, False))
    assert pushed[0] == reference[0] == "error", (pushed, reference)
    assert "column 'v' holds 'infinity'," in str(pushed[1]), pushed
