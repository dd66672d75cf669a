"""Aggregate pushdown: the same answer as Spark aggregating the rows itself, on every SQL source.

The class test crosses every grouping key of the edge table (and none) with every column under
COUNT(*), COUNT, COUNT(DISTINCT), MIN, MAX, SUM and AVG. Branches run in UNION ALL batches,
each branch its own scan with its own aggregate pushdown, every output as text so the branches
share a schema; a float's -0.0 is added to 0.0 first (Spark's own MIN of {0.0, -0.0} depends on
the order it meets them). A batch that differs is rerun one branch at a time to name it.

The traps each get a table of their own: case and trailing-space variants under MySQL's
case-insensitive collation, NULL and empty groups, sums that overflow bigint, decimal result types.
"""

from __future__ import annotations

import collections

import pytest

from sluice.sources import open_scan_source
from tests.edge_data import COLUMNS
from tests.sources import BY_NAME, EDGE_TABLES, MYSQL_URL, mariadb

pytestmark = pytest.mark.integration

#: the sources that answer aggregates (Flight: tests/integration/test_flight_aggregates.py)
SQL_SOURCES = sorted(
    name for name in EDGE_TABLES if BY_NAME[name].kind in ("postgres", "sqlite", "mysql", "duckdb", "iceberg")
)
_FLOATS = {"f", "r"}
_SUMMABLE = {"id", "i", "d"}  # b holds both bigint extremes: whether Spark's own sum overflows depends on row order
BATCH = 40


def _text(expression: str, column: str) -> str:
    return f"CAST(({expression}) + 0.0 AS STRING)" if column in _FLOATS else f"CAST({expression} AS STRING)"


def _branches(table: str) -> list[str]:
    columns = [c.strip() for c in COLUMNS.split(",")]
    branches = []
    for key in [None, *columns]:
        for column in columns:
            if column == key:
                continue
            outputs = [
                _text(key, key) if key else "'-'",
                "CAST(count(*) AS STRING)",
                f"CAST(count({column}) AS STRING)",
                _text(f"min({column})", column) if column != "flag" else "NULL",
                _text(f"max({column})", column) if column != "flag" else "NULL",
                f"CAST(count(DISTINCT {column}) AS STRING)" if column not in _FLOATS else "NULL",
                f"CAST(sum({column}) AS STRING)" if column in _SUMMABLE else "NULL",
                f"CAST(avg({column}) AS STRING)" if column in _SUMMABLE else "NULL",
            ]
            group = f" GROUP BY {key}" if key else ""
            branches.append(f"SELECT {{q}} AS q, {', '.join(outputs)} FROM {table}{group}")
    return branches


def _rows(fed, query: str, pushdown: bool) -> collections.Counter:
    return collections.Counter(tuple(row) for row in fed.sql(query, pushdown=pushdown).collect())


def _union(batch: list[tuple[int, str]]) -> str:
    return " UNION ALL ".join(branch.format(q=index) for index, branch in batch)


def _pushed(fed, query: str) -> bool:
    return any(scan.spec.aggregate is not None for scan in fed.plan(query).scans)


#: the share of sampled classes a source must answer itself; SQLite's edge table is not STRICT,
#: so only its COUNT(*) could be pushed there (the STRICT table below is pushed)
_MIN_PUSHED = {"lite": 0.0}


#: the main tier's sample of the classes: every 5th (5 is prime to the 12 columns per key, so
#: each column is aggregated under several keys and each key groups several columns)
SAMPLE_STRIDE = 5


@pytest.mark.parametrize("source", SQL_SOURCES)
def test_aggregates_equal_spark_aggregating_itself(fed, source: str) -> None:
    """A sample of the classes on every source (the slow tier runs them all, below)."""
    check_classes(fed, source, EDGE_TABLES[source], _MIN_PUSHED.get(source, 0.25), SAMPLE_STRIDE, share_of_all=True)


@pytest.mark.slow  # every class: the sample above keeps each source, key and column in make test
@pytest.mark.parametrize("source", SQL_SOURCES)
def test_every_aggregate_class_equals_spark_aggregating_itself(fed, source: str) -> None:
    check_classes(fed, source, EDGE_TABLES[source], _MIN_PUSHED.get(source, 0.25))


def make_strict_edge(path) -> None:
    """The edge rows in a STRICT SQLite table ``edge`` (whose columns SQLite aggregates as Spark would)."""
    import sqlite3

    from tests.edge_data import rows

    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE edge (id INTEGER PRIMARY KEY, i INTEGER, b INTEGER, f REAL, r REAL, d REAL, t TEXT, "
        "tc TEXT COLLATE NOCASE, ch TEXT COLLATE RTRIM, dt TEXT, ts TEXT, tn TEXT, flag INTEGER) STRICT"
    )
    connection.executemany(
        "INSERT INTO edge VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            tuple(None if v is None else v if isinstance(v, (int, float, str)) else str(v) for v in row)
            for row in rows()
        ],
    )
    connection.commit()
    connection.close()


def test_sqlite_strict_table_aggregates_equal_spark(spark, tmp_path) -> None:
    """The main tier's sample of the classes on a STRICT table (the slow tier runs them all, below)."""
    _check_strict(spark, tmp_path, SAMPLE_STRIDE)


@pytest.mark.slow  # every class: the sample above keeps each key and column of the STRICT table in make test
def test_every_aggregate_class_on_a_sqlite_strict_table_equals_spark(spark, tmp_path) -> None:
    _check_strict(spark, tmp_path, 1)


def _check_strict(spark, tmp_path, stride: int) -> None:
    from sluice import Federation

    path = tmp_path / "strict.db"
    make_strict_edge(path)
    fed = Federation(spark=spark)
    fed.attach("litestrict", f"sqlite:///{path}")
    try:
        check_classes(fed, "litestrict", "litestrict.edge", 0.25, stride, share_of_all=True)
    finally:
        fed.detach("litestrict")


def check_classes(fed, source: str, table: str, min_pushed: float, stride: int = 1, share_of_all: bool = False) -> None:
    """``stride``: every n-th class only (a sample: the main tier's, and Flight's, whose scans
    plan through the server). ``share_of_all``: the pushed share is sampled from every class,
    not only the checked ones (planning is cheap; the share's threshold is the full run's)."""
    every = list(enumerate(_branches(table)))
    branches = every[::stride]
    failures, pushed = [], 0
    for start in range(0, len(branches), BATCH):
        batch = branches[start : start + BATCH]
        if _rows(fed, _union(batch), True) == _rows(fed, _union(batch), False):
            continue
        for index, branch in batch:
            query = branch.format(q=index)
            expected, actual = _rows(fed, query, False), _rows(fed, query, True)
            if actual != expected:
                plan = fed.plan(query).scans[0]
                failures.append(
                    f"{query}\n  only pushed: {sorted((actual - expected).elements())}\n"
                    f"  only Spark: {sorted((expected - actual).elements())}\n  remote: {plan.remote_query}"
                )
    probed = (every if share_of_all else branches)[::7]  # sample: what share of the classes the source answers
    for index, branch in probed:
        pushed += _pushed(fed, branch.format(q=index))
    assert not failures, f"{len(failures)} aggregate queries differ on {source}:\n" + "\n".join(failures[:10])
    assert pushed >= min_pushed * len(probed), f"only {pushed} of {len(probed)} sampled aggregations pushed on {source}"


@pytest.mark.parametrize("source", SQL_SOURCES)
def test_count_star_and_grouped_count_are_pushed_with_reasons(fed, source: str) -> None:
    table = EDGE_TABLES[source]
    query = f"SELECT i, count(*) AS n FROM {table} WHERE id >= 0 GROUP BY i"
    if source == "lite":  # not a STRICT table: only COUNT(*) alone is the source's
        query = f"SELECT count(*) AS n FROM {table} WHERE id >= 0"
    scan = fed.plan(query).scans[0]
    assert scan.spec.aggregate is not None, scan.aggregates
    assert "COUNT(*)" in scan.remote_query and ("GROUP BY" in scan.remote_query or source == "lite")
    assert {v.level.value for v in scan.aggregates} == {"EXACT"}
    assert sorted(fed.sql(query).collect(), key=str) == sorted(fed.sql(query, pushdown=False).collect(), key=str)
    explained = fed.explain(query)
    assert "aggregates: pushed" in explained and "count(*)" in explained


def test_float_keys_and_sums_stay_with_spark_and_say_why(fed) -> None:
    table = EDGE_TABLES[SQL_SOURCES[0]]
    scan = fed.plan(f"SELECT f, count(*) FROM {table} GROUP BY f").scans[0]
    assert scan.spec.aggregate is None
    assert any("-0.0" in v.reason for v in scan.aggregates if v.level.value == "UNSUPPORTED")
    scan = fed.plan(f"SELECT sum(f) FROM {table}").scans[0]
    assert scan.spec.aggregate is None
    assert any("order of additions" in v.reason for v in scan.aggregates)


def test_inexact_filter_keeps_the_aggregate_with_spark(fed) -> None:
    """Spark only offers aggregates over a scan whose filters are all EXACT; = on PostgreSQL's
    blank-padded char(20) is INEXACT, so the rows are read and Spark aggregates them."""
    if "pg" not in SQL_SOURCES:
        pytest.skip("needs PostgreSQL")
    query = f"SELECT count(*) FROM {EDGE_TABLES['pg']} WHERE ch = 'a'"
    scan = fed.plan(query).scans[0]
    assert "INEXACT" in {v.level.value for v in scan.verdicts}
    assert scan.spec.aggregate is None
    assert fed.sql(query).collect() == fed.sql(query, pushdown=False).collect()


# ---------------------------------------------------------------- traps, one table each
@pytest.fixture(scope="module")
def mysql_variants(spark):

    from sluice import Federation

    connection = mariadb()
    try:
        cursor = connection.cursor()
        cursor.execute("CREATE DATABASE IF NOT EXISTS sluice_agg CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        cursor.execute("DROP TABLE IF EXISTS sluice_agg.v")
        cursor.execute("CREATE TABLE sluice_agg.v (id INT PRIMARY KEY, s VARCHAR(20), n BIGINT, d DECIMAL(38,2))")
        values = ["a", "A", "a ", "á", "b", None, "", " ", "B "]
        cursor.executemany(
            "INSERT INTO sluice_agg.v VALUES (%s, %s, %s, %s)",
            [
                (i, v, 9223372036854775807 if i < 2 else i, "999999999999999999999999999999999999.99" if i < 2 else i)
                for i, v in enumerate(values)
            ],
        )
    finally:
        connection.close()
    federation = Federation(spark=spark)
    federation.attach("myagg", MYSQL_URL.rsplit("/", 1)[0] + "/sluice_agg")
    yield federation
    federation.detach("myagg")


def test_mysql_case_and_space_variants_stay_separate_groups(mysql_variants) -> None:
    fed = mysql_variants
    query = (
        "SELECT s, count(*) AS n, min(s) AS lo, max(s) AS hi, count(DISTINCT s) AS k FROM myagg.sluice_agg.v GROUP BY s"
    )
    scan = fed.plan(query).scans[0]
    assert scan.spec.aggregate is not None, scan.aggregates
    assert "utf8mb4_nopad_bin" in scan.remote_query
    rows = sorted(fed.sql(query).collect(), key=str)
    assert rows == sorted(fed.sql(query, pushdown=False).collect(), key=str)
    assert len(rows) == 9  # a, A, 'a ', á, b, NULL, '', ' ', 'B ': nine groups, as Spark counts them


def test_sum_overflow_raises_as_spark_does(mysql_variants) -> None:
    fed = mysql_variants
    for query in ("SELECT sum(n) FROM myagg.sluice_agg.v", "SELECT sum(d) FROM myagg.sluice_agg.v"):
        assert fed.plan(query).scans[0].spec.aggregate is not None
        for pushdown in (False, True):
            with pytest.raises(
                Exception, match="(?i)overflow"
            ):  # Spark: ARITHMETIC_OVERFLOW; pushed: the read or the cast
                fed.sql(query, pushdown=pushdown).collect()


def test_empty_input_and_null_groups(fed) -> None:
    for source in SQL_SOURCES:
        table = EDGE_TABLES[source]
        for query in (
            f"SELECT count(*), count(i), sum(i), min(i), max(d), avg(d) FROM {table} WHERE id < 0",
            f"SELECT i, count(*) FROM {table} WHERE id < 0 GROUP BY i",
            f"SELECT i IS NULL AS missing, count(*) FROM {table} GROUP BY i IS NULL",
            f"SELECT dt, count(*), sum(id) FROM {table} GROUP BY dt",
        ):
            assert sorted(fed.sql(query).collect(), key=str) == sorted(
                fed.sql(query, pushdown=False).collect(), key=str
            ), (source, query)
        empty = fed.sql(f"SELECT count(*), sum(i) FROM {table} WHERE id < 0").collect()
        assert [tuple(r) for r in empty] == [(0, None)]


def test_result_types_are_sparks(fed) -> None:
    table = EDGE_TABLES[SQL_SOURCES[0]]
    frame = fed.sql(
        f"SELECT sum(i) AS si, sum(d) AS sd, avg(d) AS ad, avg(i) AS ai, count(*) AS c, min(d) AS md FROM {table}"
    )
    reference = fed.sql(
        f"SELECT sum(i) AS si, sum(d) AS sd, avg(d) AS ad, avg(i) AS ai, count(*) AS c, min(d) AS md FROM {table}",
        pushdown=False,
    )
    assert frame.schema == reference.schema
    assert [f.dataType.simpleString() for f in frame.schema] == [
        "bigint",
        "decimal(30,4)",
        "decimal(24,8)",
        "double",
        "bigint",
        "decimal(20,4)",
    ]
    assert frame.collect() == reference.collect()


def test_pg_text_min_max_under_a_locale_collation(fed) -> None:
    """PostgreSQL's ICU collation orders 'a' < 'B'; Spark orders code points ('B' < 'a'):
    MIN/MAX are computed under COLLATE "C"."""
    if "pg" not in SQL_SOURCES:
        pytest.skip("needs PostgreSQL")
    query = f"SELECT min(t), max(t), min(ch), max(ch) FROM {EDGE_TABLES['pg']}"
    scan = fed.plan(query).scans[0]
    assert fed.sql(query).collect() == fed.sql(query, pushdown=False).collect()
    assert 'COLLATE "C"' in scan.remote_query or scan.spec.aggregate is None


def test_lake_count_is_answered_from_file_metadata(fed) -> None:
    """COUNT(*) and integer/date MIN/MAX over a lake table read no data file: the kept row groups'
    statistics answer them; with a filter the statistics cannot prove, or text, DuckDB reads the rows."""
    if "lake" not in SQL_SOURCES:
        pytest.skip("needs the lake")
    table = EDGE_TABLES["lake"]
    for query, from_metadata in (
        (f"SELECT count(*) FROM {table}", True),
        (f"SELECT count(*), min(i), max(b), min(dt), max(id) FROM {table}", True),
        (f"SELECT count(*), min(i) FROM {table} WHERE id < 0", True),
        (f"SELECT count(*) FROM {table} WHERE i = 7", False),
        (f"SELECT min(t) FROM {table}", False),
    ):  # text bounds may be truncated: read
        spec = fed.plan(query).scans[0].spec
        assert spec.aggregate is not None
        tasks = open_scan_source(spec, None).tasks(spec)
        assert ("metadata_answer" in tasks[0].request and '"files": []' in tasks[0].request) == from_metadata, tasks[
            0
        ].request[:300]
        assert fed.sql(query).collect() == fed.sql(query, pushdown=False).collect(), query


def test_aggregates_move_only_the_groups(fed) -> None:
    if "pg" not in SQL_SOURCES:
        pytest.skip("needs PostgreSQL")
    query = f"SELECT flag, count(*), sum(i) FROM {EDGE_TABLES['pg']} GROUP BY flag"
    moved = fed.transferred(query)
    assert sum(m["rows"] for m in moved.values()) == 3  # TRUE, FALSE, NULL


# ---------------------------------------------------------------- expressions as keys and arguments
#: (query over {t}, whether some source must push it): keys and arguments that are expressions,
#: over the edge columns' extreme integers (i + i and abs(b) overflow: Spark raises, and so must
#: the source), NULLs, text variants; pushed where the filter classifier pushes the expression EXACT
EXPRESSION_QUERIES = [
    "SELECT i % 10 AS k, count(*) AS n, sum(id) AS s, min(t) AS lo FROM {t} GROUP BY i % 10",
    "SELECT id % 7 AS k, min(i) AS lo, max(i) AS hi, count(DISTINCT i) AS n FROM {t} GROUP BY id % 7",
    "SELECT i & 7 AS k, count(*) AS n, count(DISTINCT id & 3) AS m FROM {t} GROUP BY i & 7",
    "SELECT id | 1 AS k, sum(id & 12) AS s FROM {t} GROUP BY id | 1",
    "SELECT sum(id + 1) AS s, max(id * 2) AS m, count(i - 1) AS c FROM {t}",
    "SELECT sum(i + i) AS s FROM {t}",
    "SELECT abs(b) AS k, count(*) AS n FROM {t} GROUP BY abs(b)",
    "SELECT abs(id - 40) AS k, count(*) AS n FROM {t} GROUP BY abs(id - 40)",
    "SELECT length(t) AS k, count(*) AS n, min(t) AS lo FROM {t} GROUP BY length(t)",
    "SELECT coalesce(i, 0) AS k, count(*) AS n FROM {t} GROUP BY coalesce(i, 0)",
    "SELECT substring(t, 1, 1) AS k, count(*) AS n FROM {t} GROUP BY substring(t, 1, 1)",
    "SELECT upper(t) AS k, count(*) AS n, max(id % 10) AS m FROM {t} GROUP BY upper(t)",
    "SELECT i / 2 AS k, count(*) AS n FROM {t} GROUP BY i / 2",
    "SELECT i % 10 AS k, count(*) AS n FROM {t} WHERE id >= 10 AND i % 10 <> 3 GROUP BY i % 10",
]


def query_outcome(fed, query: str, pushdown: bool) -> tuple[str, object]:
    """Rows (as text, NaN equal to NaN) or the fact that the query failed."""
    try:
        return "rows", sorted(repr(tuple(row)) for row in fed.sql(query, pushdown=pushdown).collect())
    except Exception as error:  # noqa: BLE001 - an overflow raised by Spark or by the source
        return "error", type(error).__name__ != "AssertionError"


@pytest.fixture(scope="module")
def strict_fed(spark, tmp_path_factory):
    from sluice import Federation

    path = tmp_path_factory.mktemp("strict_expressions") / "strict.db"
    make_strict_edge(path)
    federation = Federation(spark=spark)
    federation.attach("litestrictx", f"sqlite:///{path}")
    yield federation
    federation.detach("litestrictx")


#: the lake (DuckDB reading the Iceberg table's files) pushes expressions under the same rules
_EXPRESSION_SOURCES = [s for s in ("pg", "my", "duck", "lake") if s in SQL_SOURCES] + ["strict"]


@pytest.mark.parametrize("source", _EXPRESSION_SOURCES)
def test_expression_keys_and_arguments_equal_spark(request, source: str) -> None:
    fed = request.getfixturevalue("strict_fed" if source == "strict" else "fed")
    table = "litestrictx.edge" if source == "strict" else EDGE_TABLES[source]
    failures, pushed = [], []
    for template in EXPRESSION_QUERIES:
        query = template.format(t=table)
        [scan] = fed.plan(query).scans
        if scan.spec.aggregate is not None:
            pushed.append(query)
            assert {v.level.value for v in scan.aggregates} == {"EXACT"}, scan.aggregates
        else:
            assert any(v.level.value == "UNSUPPORTED" for v in scan.aggregates) or scan.verdicts, scan.aggregates
        expected, actual = query_outcome(fed, query, False), query_outcome(fed, query, True)
        if expected != actual:
            failures.append(
                f"{query}\n  Spark: {str(expected)[:300]}\n  pushed: {str(actual)[:300]}\n  {scan.remote_query}"
            )
    assert not failures, f"{len(failures)} expression aggregates differ on {source}:\n" + "\n".join(failures)
    minimum = {"strict": 2}.get(source, 4)  # SQLite pushes & and | (its integer overflow becomes REAL)
    assert len(pushed) >= minimum, (source, pushed)


def test_an_expression_key_shows_its_verdict_and_reason(fed) -> None:
    table = EDGE_TABLES[SQL_SOURCES[0]]
    [scan] = fed.plan(f"SELECT i / 2, count(*) FROM {table} GROUP BY i / 2").scans
    assert scan.spec.aggregate is None
    [key] = [v for v in scan.aggregates if v.sql.startswith("GROUP BY")]
    assert key.level.value == "UNSUPPORTED" and "/" in key.sql and key.reason, key
