"""Aggregates, top-N and LIMIT above a pushed same-source join: Spark's rows, from one remote query.

Spark 4.3 offers the joined scan builder the aggregate, top-N or LIMIT above the join when
nothing is left between them (sluice/planner/rules/push_aggregates.py, push_limit.py). The edge
tables of test_joins.py, plus NaN rows (MariaDB cannot store NaN: NULL there; SQLite stores NULL
itself), run with pushdown on and off on PostgreSQL, SQLite, DuckDB and MariaDB: the rows must be
equal (in order for a top-N whose keys leave no tie), and where the join is pushed the aggregate
or top-N must be pushed with it, or say why not.
"""

from __future__ import annotations

import collections
import math
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration import test_joins as edge
from tests.sources import MYSQL_URL, PG_URL

pytestmark = pytest.mark.integration

NAN = float("nan")
LEFT = [*edge.LEFT, (11, 11, 11, "11.00", "nan", NAN, 110)]
RIGHT = [*edge.RIGHT, (11, 11, 11, "11.00", "NaN", NAN, 1100), (12, 12, 12, "12.00", "z", NAN, 1200)]
TABLES = (("hja_l", LEFT), ("hja_r", RIGHT))

#: aggregates above a join, each pushed wherever its join is (the float key's refusal is separate)
AGGREGATES = [
    "SELECT l.bk, count(*) AS n, sum(r.w) AS s, min(r.f) AS lo, max(r.f) AS hi "
    "FROM {s}.hja_l l JOIN {s}.hja_r r ON l.id = r.id GROUP BY l.bk",
    "SELECT r.t, count(*) AS n, count(r.id) AS m, min(l.t) AS lo, max(l.t) AS hi "
    "FROM {s}.hja_l l LEFT JOIN {s}.hja_r r ON l.id = r.id GROUP BY r.t",
    "SELECT count(*) AS n, sum(l.w) AS s, max(r.t) AS m, min(l.t) AS lo FROM {s}.hja_l l JOIN {s}.hja_r r ON l.bk = r.bk",
    "SELECT l.t, count(DISTINCT r.w) AS d, sum(l.ik) AS s FROM {s}.hja_l l LEFT JOIN {s}.hja_r r ON l.t = r.t GROUP BY l.t",
]
#: top-N above a join, keys ending in a unique column: one right answer, in order
TOP_N = [
    "SELECT l.id, r.w FROM {s}.hja_l l JOIN {s}.hja_r r ON l.id = r.id ORDER BY r.w DESC LIMIT 3",
    "SELECT l.id, r.t FROM {s}.hja_l l LEFT JOIN {s}.hja_r r ON l.id = r.id ORDER BY r.t NULLS FIRST, l.id LIMIT 4",
    "SELECT l.id, l.t FROM {s}.hja_l l JOIN {s}.hja_r r ON l.id = r.id ORDER BY l.t DESC, l.id LIMIT 4",
    "SELECT l.id, l.dk FROM {s}.hja_l l LEFT JOIN {s}.hja_r r ON l.id = r.id ORDER BY l.dk DESC NULLS LAST, l.id LIMIT 3",
    "SELECT l.id, r.f FROM {s}.hja_l l JOIN {s}.hja_r r ON l.id = r.id ORDER BY r.f DESC NULLS LAST, l.id LIMIT 3",
]
LIMITED = "SELECT l.id, r.id AS rid FROM {s}.hja_l l JOIN {s}.hja_r r ON l.bk = r.bk LIMIT 2"
FLOAT_KEY = "SELECT l.f, count(*) AS n FROM {s}.hja_l l JOIN {s}.hja_r r ON l.id = r.id GROUP BY l.f"


def _pg(folder: Path) -> str:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as connection:
        for name, rows in TABLES:
            connection.execute(f"DROP TABLE IF EXISTS {name}")
            connection.execute(
                f"CREATE TABLE {name} (id integer, ik integer, bk bigint, dk numeric(12,2), t text, "
                "f double precision, w integer)"
            )
            with connection.cursor() as cursor:
                cursor.executemany(f"INSERT INTO {name} VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
    return PG_URL


def _mysql(folder: Path) -> str:
    connection = edge._mysql_connection()
    try:
        with connection.cursor() as cursor:
            for name, rows in TABLES:
                cursor.execute(f"DROP TABLE IF EXISTS {name}")
                cursor.execute(
                    f"CREATE TABLE {name} (id int, ik int, bk bigint, dk decimal(12,2), "
                    "t varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, f double, w int)"
                )
                cursor.executemany(
                    f"INSERT INTO {name} VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [(*row[:5], None if row[5] is not None and math.isnan(row[5]) else row[5], row[6]) for row in rows],
                )
    finally:
        connection.close()
    return MYSQL_URL


def _sqlite(folder: Path) -> str:
    path = folder / "join_aggregates.db"
    connection = sqlite3.connect(path)
    for name, rows in TABLES:
        connection.execute(
            f"CREATE TABLE {name} (id INTEGER, ik INTEGER, bk INTEGER, dk REAL, t TEXT, f REAL, w INTEGER) STRICT"
        )
        connection.executemany(
            f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(*row[:3], None if row[3] is None else float(row[3]), *row[4:]) for row in rows],
        )
    connection.commit()
    connection.close()
    return f"sqlite:///{path}"


def _duckdb(folder: Path) -> str:
    import duckdb

    path = folder / "join_aggregates.duckdb"
    connection = duckdb.connect(str(path))
    for name, rows in TABLES:
        connection.execute(
            f"CREATE TABLE {name} (id INTEGER, ik INTEGER, bk BIGINT, dk DECIMAL(12,2), t VARCHAR, f DOUBLE, w INTEGER)"
        )
        connection.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    connection.close()
    return f"duckdb:///{path}"


LOADERS: dict[str, Callable[[Path], str]] = {"apg": _pg, "amy": _mysql, "alite": _sqlite, "aduck": _duckdb}


@pytest.fixture(scope="module")
def fed(spark, tmp_path_factory):
    from sluice import Federation

    folder = tmp_path_factory.mktemp("join_aggregates")
    federation = Federation(spark=spark)
    for name, load in LOADERS.items():
        federation.attach(name, load(folder))
    yield federation
    for name in LOADERS:
        federation.detach(name)


def _value(value: Any) -> Any:
    """NaN as a marker (NaN != NaN would make equal rows differ); -0.0 as 0.0, as Spark compares them."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value + 0.0
    return value


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return [tuple(_value(v) for v in row) for row in frame.collect()]


def _joined_scan(fed: Any, query: str) -> Any:
    """The scan holding the pushed join, or None when Spark joins."""
    return next((scan for scan in fed.plan(query).scans if scan.spec.join is not None), None)


@pytest.mark.parametrize("source", sorted(LOADERS))
def test_aggregates_over_a_join_equal_spark_and_are_pushed_with_it(fed, source: str) -> None:
    failures, pushed = [], []
    for template in AGGREGATES:
        query = template.format(s=source)
        expected = collections.Counter(_rows(fed.sql(query, pushdown=False)))
        actual = collections.Counter(_rows(fed.sql(query)))
        if actual != expected:
            failures.append(
                f"{query}\n  pushdown on: {sorted(actual.items(), key=repr)}\n  Spark: {sorted(expected.items(), key=repr)}"
            )
        scan = _joined_scan(fed, query)
        if scan is not None:
            pushed.append(scan.spec.aggregate is not None)
            assert scan.spec.aggregate is not None, (query, [v.reason for v in scan.aggregates])
            assert "GROUP BY" in scan.remote_query or "group" not in query.lower()
    assert not failures, "\n".join(failures)
    if source in ("apg", "aduck"):  # every join here is pushed on these sources
        assert pushed == [True] * len(AGGREGATES)


@pytest.mark.parametrize("source", sorted(LOADERS))
def test_top_n_over_a_join_returns_sparks_rows_in_order(fed, source: str) -> None:
    failures = []
    for template in TOP_N:
        query = template.format(s=source)
        expected, actual = _rows(fed.sql(query, pushdown=False)), _rows(fed.sql(query))
        if actual != expected:
            failures.append(f"{query}\n  pushdown on: {actual}\n  Spark:       {expected}")
        scan = _joined_scan(fed, query)
        if scan is not None and source == "apg":
            assert scan.spec.limit is not None and scan.spec.order, (query, scan.to_dict()["limit"])
            assert " ORDER BY " in scan.remote_query and scan.remote_query.endswith(f"LIMIT {scan.spec.limit}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("source", sorted(LOADERS))
def test_a_limit_over_a_join_returns_some_of_sparks_rows(fed, source: str) -> None:
    query = LIMITED.format(s=source)
    every = collections.Counter(_rows(fed.sql(query.removesuffix(" LIMIT 2"), pushdown=False)))
    some = collections.Counter(_rows(fed.sql(query)))
    assert sum(some.values()) == 2 and not some - every, (some, every)
    scan = _joined_scan(fed, query)
    if scan is not None:
        assert scan.spec.limit == 2 and scan.remote_query.endswith("LIMIT 2")


def test_explain_shows_the_aggregate_and_top_n_pushed_above_the_join(fed) -> None:
    query = AGGREGATES[1].format(s="apg")
    scan = _joined_scan(fed, query)
    assert scan is not None and scan.spec.aggregate is not None
    assert scan.remote_query.startswith("SELECT ") and '"sluice_j" GROUP BY "t_1"' in scan.remote_query
    explained = fed.explain(query)
    assert "aggregates: pushed (the source returns the final groups)" in explained
    assert "[EXACT] max(t)" in explained and "orders t like Spark" in explained
    top = TOP_N[3].format(s="apg")  # numeric dk is selected as ::text; the key sorts the number
    scan = _joined_scan(fed, top)
    assert scan is not None and '::text AS "dk"' in scan.remote_query
    assert re.search(r'ORDER BY "sluice_l"\."sluice_l\d+" DESC NULLS LAST', scan.remote_query), scan.remote_query
    assert "limit: 3" in fed.explain(top)


def test_a_float_grouping_key_above_a_join_stays_with_spark_and_says_why(fed) -> None:
    query = FLOAT_KEY.format(s="apg")
    assert collections.Counter(_rows(fed.sql(query))) == collections.Counter(_rows(fed.sql(query, pushdown=False)))
    scan = _joined_scan(fed, query)
    assert scan is not None and scan.spec.aggregate is None  # the join is pushed, the grouping is not
    assert any("-0.0" in v.reason and "NaN" in v.reason for v in scan.aggregates), [v.reason for v in scan.aggregates]
    explained = fed.explain(query)
    assert "aggregates: computed by Spark" in explained and "Spark groups -0.0 with 0.0" in explained
