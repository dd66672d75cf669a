"""Join pushdown: the same rows as Spark joining the tables itself, on PostgreSQL, MariaDB, SQLite, DuckDB.

Two edge tables per source (prefix ``hjn_``): NULL keys, case and trailing-space variants and
non-ASCII text in text keys, int / bigint / decimal keys with the int extremes, doubles with
-0.0. Every join shape runs with pushdown on and off (Spark reading both tables whole and
joining), and the rows must be equal; where the join should be pushed the plan must say so,
and where it must not (float keys) the scan must say why.
"""

from __future__ import annotations

import collections
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.sources import MYSQL_URL, PG_URL

pytestmark = pytest.mark.integration

#: (id, ik int, bk bigint, dk decimal, t text, f double, w int) of each side
LEFT = [
    (1, 1, 1, "1.00", "a", 1.0, 10),
    (2, 2, 2, "2.00", "A", 0.0, 20),
    (3, None, None, None, None, None, 30),
    (4, 2147483647, 2147483647, "2147483647.00", "a ", -0.0, 40),
    (5, -2147483648, -2147483648, "-2147483648.00", "", 2.5, 50),
    (6, 7, 7, "7.50", "é", 7.0, 60),
    (7, 8, 9223372036854775807, "8.00", "Straße", 8.0, 70),
]
RIGHT = [
    (1, 1, 1, "1.00", "a", 1.0, 100),
    (2, 2, 2, "2.00", "a", -0.0, 200),
    (3, None, None, None, None, None, 300),
    (4, 2147483647, 2147483647, "2147483647.00", "a", 0.0, 400),
    (6, -2147483648, -2147483648, "-2147483648.00", "", 2.5, 600),
    (8, 7, 7, "7.00", "e\u0301", 7.0, 800),
    (9, 8, 9223372036854775807, "8.00", "STRASSE", 8.0, 900),
    (10, None, None, None, "A", None, 1000),
]

#: (query template, whether a join-capable source should push it); {s} is the catalog
SHAPES: list[tuple[str, bool]] = [
    ("SELECT l.id, l.t, r.w FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.id = r.id", True),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l LEFT JOIN {s}.hjn_r r ON l.bk = r.bk", True),
    ("SELECT l.w, r.w AS rw FROM {s}.hjn_l l RIGHT JOIN {s}.hjn_r r ON l.bk = r.bk", True),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.id = r.id AND l.bk = r.bk", True),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.t <=> r.t", True),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l LEFT JOIN {s}.hjn_r r ON l.t = r.t", True),
    ("SELECT l.id, r.w FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.id = r.id WHERE l.w > 15 AND r.w < 700", True),
    ("SELECT l.bk, count(*) AS n, sum(r.w) AS s FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.id = r.id GROUP BY l.bk", True),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.ik = r.bk", False),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.ik = r.dk", False),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l JOIN {s}.hjn_r r ON l.f = r.f", False),
    ("SELECT l.id, r.id AS rid FROM {s}.hjn_l l FULL JOIN {s}.hjn_r r ON l.id = r.id", False),
    ("SELECT l.id FROM {s}.hjn_l l LEFT SEMI JOIN {s}.hjn_r r ON l.t = r.t", False),
    ("SELECT l.id FROM {s}.hjn_l l LEFT ANTI JOIN {s}.hjn_r r ON l.t = r.t", False),
]


def _pg(folder: Path) -> str:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as connection:
        for name, rows in (("hjn_l", LEFT), ("hjn_r", RIGHT)):
            connection.execute(f"DROP TABLE IF EXISTS {name}")
            connection.execute(
                f"CREATE TABLE {name} (id integer, ik integer, bk bigint, dk numeric(12,2), t text, "
                "f double precision, w integer)"
            )
            with connection.cursor() as cursor:
                cursor.executemany(f"INSERT INTO {name} VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
    return PG_URL


def _mysql_connection():  # pymysql is imported here only
    import pymysql

    parts = urlsplit(MYSQL_URL)  # the test server of tests/edge_data.py, in MYSQL_URL's database
    return pymysql.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or ""),
        database=parts.path.lstrip("/") or "test",
        charset="utf8mb4",
        autocommit=True,
    )


def _mysql(folder: Path) -> str:
    connection = _mysql_connection()
    try:
        with connection.cursor() as cursor:
            for name, rows in (("hjn_l", LEFT), ("hjn_r", RIGHT)):
                cursor.execute(f"DROP TABLE IF EXISTS {name}")
                cursor.execute(
                    f"CREATE TABLE {name} (id int, ik int, bk bigint, dk decimal(12,2), "
                    "t varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, f double, w int)"
                )
                cursor.executemany(f"INSERT INTO {name} VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
    finally:
        connection.close()
    return MYSQL_URL


def _sqlite(folder: Path) -> str:
    """STRICT tables (SQLite's INTEGER is 64-bit: ``ik`` is a bigint there too); ``dk`` is REAL (a
    SQLite decimal may hold what Spark's decimal cannot, so no join reading one is pushed)."""
    path = folder / "joins.db"
    connection = sqlite3.connect(path)
    for name, rows in (("hjn_l", LEFT), ("hjn_r", RIGHT)):
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

    path = folder / "joins.duckdb"
    connection = duckdb.connect(str(path))
    for name, rows in (("hjn_l", LEFT), ("hjn_r", RIGHT)):
        connection.execute(
            f"CREATE TABLE {name} (id INTEGER, ik INTEGER, bk BIGINT, dk DECIMAL(12,2), t VARCHAR, f DOUBLE, w INTEGER)"
        )
        connection.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    connection.close()
    return f"duckdb:///{path}"


LOADERS: dict[str, Callable[[Path], str]] = {"jpg": _pg, "jmy": _mysql, "jlite": _sqlite, "jduck": _duckdb}


@pytest.fixture(scope="module")
def joined(spark, tmp_path_factory):
    from sluice import Federation

    folder = tmp_path_factory.mktemp("joins")
    fed = Federation(spark=spark)
    for name, load in LOADERS.items():
        fed.attach(name, load(folder))
    yield fed
    for name in LOADERS:
        fed.detach(name)


def _counted(frame) -> collections.Counter:
    return collections.Counter(tuple(row) for row in frame.collect())


@pytest.mark.parametrize("source", sorted(LOADERS))
def test_joins_equal_spark_joining_itself(joined, source: str) -> None:
    failures, pushed = [], []
    for template, _ in SHAPES:
        query = template.format(s=source)
        expected = _counted(joined.sql(query, pushdown=False))
        actual = _counted(joined.sql(query))
        if actual != expected:
            failures.append(
                f"{query}\n  pushdown on:  {sorted(actual.items(), key=repr)}\n  Spark itself: {sorted(expected.items(), key=repr)}"
            )
        if any(scan.spec.join is not None for scan in joined.plan(query).scans):
            pushed.append(query)
    assert not failures, "\n".join(failures)
    # the shapes a faithful source pushes are pushed: the first one (int keys, inner) everywhere
    assert SHAPES[0][0].format(s=source) in pushed, pushed
    # and none that must stay with Spark (float keys; FULL/SEMI/ANTI are never offered by Spark 4.3)
    assert not [
        q for q in pushed if q in {t.format(s=source) for t, should in SHAPES if not should and "l.ik = r" not in t}
    ]


@pytest.mark.parametrize("source", sorted(LOADERS))
def test_pushed_join_is_one_remote_query_with_key_verdicts(joined, source: str) -> None:
    query = SHAPES[6][0].format(s=source)
    plan = joined.plan(query)
    (scan,) = plan.scans
    assert scan.spec.join is not None
    assert " JOIN " in scan.remote_query and "hjn_l" in scan.remote_query and "hjn_r" in scan.remote_query
    described = scan.to_dict()
    assert described["join_pushed"] and described["partitions"] == 1
    assert [v["level"] for v in described["join"]] == ["EXACT"]
    assert "[JOIN EXACT] left.id = right.id" in joined.explain(query)


@pytest.mark.parametrize("source", sorted(LOADERS))
def test_float_keys_stay_with_spark_with_the_reason(joined, source: str) -> None:
    query = f"SELECT l.id, r.id AS rid FROM {source}.hjn_l l JOIN {source}.hjn_r r ON l.f = r.f"
    plan = joined.plan(query)
    assert all(scan.spec.join is None for scan in plan.scans)
    reasons = [v.reason for scan in plan.scans for v in scan.joins]
    assert any("NaN" in reason and "-0.0" in reason for reason in reasons), reasons


def test_mariadb_case_insensitive_text_keys_join_as_spark_does(joined) -> None:
    """utf8mb4_general_ci matches 'a' with 'A' and 'a ': the pushed key compares binary, no pad."""
    query = "SELECT l.id, r.id AS rid FROM jmy.hjn_l l JOIN jmy.hjn_r r ON l.t = r.t"
    plan = joined.plan(query)
    (scan,) = plan.scans
    assert scan.spec.join is not None
    assert "nopad_bin" in scan.remote_query
    assert _counted(joined.sql(query)) == collections.Counter([(1, 1), (1, 2), (1, 4), (2, 10), (5, 6)])


def test_a_callers_session_keeps_its_join_setting(spark) -> None:
    """Sluice's own sessions turn join pushdown on; Federation(spark=theirs) changes no setting."""
    from sluice import Federation

    previous = spark.conf.get("spark.sql.optimizer.datasourceV2JoinPushdown")
    assert previous == "true"  # the test session is built by sluice.spark.session.build_session
    spark.conf.set("spark.sql.optimizer.datasourceV2JoinPushdown", "false")
    try:
        Federation(spark=spark)
        assert spark.conf.get("spark.sql.optimizer.datasourceV2JoinPushdown") == "false"
    finally:
        spark.conf.set("spark.sql.optimizer.datasourceV2JoinPushdown", previous)


def test_mariadb_keeps_a_large_join_with_spark_until_it_can_estimate_the_filter(spark) -> None:
    """The join cost rule (sluice/planner/join_cost.py) on the real server: 6,000 x 3,000 rows,
    a filter on a column with no index and no statistics -> Spark joins, with the reason; after
    ANALYZE TABLE ... PERSISTENT the join is pushed. Same rows every time."""
    from sluice import Federation

    connection = _mysql_connection()
    try:
        with connection.cursor() as cursor:
            for name in ("hjn_big_o", "hjn_big_c"):
                cursor.execute(f"DROP TABLE IF EXISTS {name}")
            cursor.execute("CREATE TABLE hjn_big_o (id int PRIMARY KEY, c int, status varchar(8), KEY (c))")
            cursor.execute(
                "INSERT INTO hjn_big_o SELECT seq, seq % 3000, IF(seq % 100 = 7, 'refunded', 'paid') FROM seq_1_to_6000"
            )
            cursor.execute("CREATE TABLE hjn_big_c (id int PRIMARY KEY, segment varchar(4))")
            cursor.execute("INSERT INTO hjn_big_c SELECT seq, CHAR(65 + seq % 5) FROM seq_0_to_2999")
            cursor.execute("ANALYZE TABLE hjn_big_o, hjn_big_c")
            cursor.execute("DELETE FROM mysql.column_stats WHERE table_name IN ('hjn_big_o', 'hjn_big_c')")
        fed = Federation(spark=spark)
        fed.attach("jbig", MYSQL_URL)
        query = "SELECT o.id, c.segment FROM jbig.hjn_big_o o JOIN jbig.hjn_big_c c ON o.c = c.id WHERE o.status = 'refunded'"
        try:
            expected = _counted(fed.sql(query, pushdown=False))
            assert sum(expected.values()) == 60
            (scan,) = [s for s in fed.plan(query).scans if s.join_note]
            assert scan.spec.join is None
            assert "no statistics for hjn_big_o.status" in (scan.join_note or "")
            assert "no statistics for hjn_big_o.status" in fed.explain(query)
            assert _counted(fed.sql(query)) == expected
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE TABLE hjn_big_o PERSISTENT FOR COLUMNS (status) INDEXES ()")
            (pushed,) = fed.plan(query).scans
            assert pushed.spec.join is not None, pushed.join_note
            assert _counted(fed.sql(query)) == expected
        finally:
            fed.detach("jbig")
    finally:
        connection.close()


def test_sqlite_join_over_a_loose_column_is_refused_as_documented(spark, tmp_path) -> None:
    """Outside a STRICT table a SQLite DATE column may hold text: Spark reading the table fails
    on the row holding 'garbage'; a pushed join skipped that unmatched row and answered. The join
    is refused (the reason in EXPLAIN), so both fail alike; a STRICT table's join is still pushed."""
    from sluice import Federation
    from tests.integration.test_aggregates import query_outcome

    path = tmp_path / "loose.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE ld (id INTEGER, dt DATE)")
        connection.execute("CREATE TABLE lr (id INTEGER, w INTEGER)")
        connection.executemany("INSERT INTO ld VALUES (?, ?)", [(1, "2024-01-02"), (2, "garbage")])
        connection.executemany("INSERT INTO lr VALUES (?, ?)", [(1, 10), (3, 30)])
        connection.execute("CREATE TABLE sd (id INTEGER, w INTEGER) STRICT")
        connection.execute("CREATE TABLE sr (id INTEGER, w INTEGER) STRICT")
        connection.executemany("INSERT INTO sd VALUES (?, ?)", [(1, 1), (2, 2)])
        connection.executemany("INSERT INTO sr VALUES (?, ?)", [(1, 10), (3, 30)])
    connection.close()
    fed = Federation(spark=spark)
    fed.attach("jloose", f"sqlite:///{path}")
    try:
        query = "SELECT l.id, l.dt, r.w FROM jloose.ld l JOIN jloose.lr r ON l.id = r.id"
        assert query_outcome(fed, query, True) == query_outcome(fed, query, False) == ("error", True)
        assert all(scan.spec.join is None for scan in fed.plan(query).scans)
        assert "outside a STRICT table" in fed.explain(query)
        strict = "SELECT l.id, l.w, r.w FROM jloose.sd l JOIN jloose.sr r ON l.id = r.id"
        assert any(scan.spec.join is not None for scan in fed.plan(strict).scans)
        assert query_outcome(fed, strict, True) == query_outcome(fed, strict, False)
    finally:
        fed.detach("jloose")
