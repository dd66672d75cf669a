"""The conformance matrix for lake partition transforms: pruning never drops a row at a type's extremes.

One lake table per transform (identity, bucket, truncate, years/months/days/hours), all holding
the same rows: the extremes of each column's type (int and bigint minimum and maximum and their
neighbours, truncate's width boundaries around zero, dates from year 1 to 9999, timestamps around
the epoch and the session zone's DST changes, empty and non-ASCII text) and NULLs. Every
comparison operator against every one of those values, IN and IS [NOT] NULL, over the partition
column, runs with pushdown on (the pruning pyramid, then the pushed filter) and in Spark over the
same rows read whole; the rows must be equal. Written through Spark SQL, so the partition values
are what Sluice's own writer stores. Catalog and table names start with ``lkmx``.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from typing import Any, cast

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.conformance import Case
from tests.matrix_runner import compare, reference_views

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc
COLUMNS = "id bigint, i int, b bigint, s string, dt date, ts timestamp"
INTS = [-(2**31), -(2**31) + 1, -(2**31) + 9, -11, -10, -9, -1, 0, 1, 9, 10, 2**31 - 10, 2**31 - 2, 2**31 - 1]
BIGINTS = [-(2**63), -(2**63) + 1, -(2**63) + 999, -1001, -1000, -1, 0, 999, 1000, 2**63 - 1000, 2**63 - 1]
TEXTS = ["", " ", "a", "a ", "ab", "abc", "A", "é", "éa", "日本", "😀x", "zz"]
DATES = [dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2024, 2, 29), dt.date(9999, 12, 31)]
INSTANTS = [
    dt.datetime(1900, 1, 1, tzinfo=UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(2024, 3, 10, 6, 59, 59, 999999, tzinfo=UTC),
    dt.datetime(2024, 3, 10, 7, 0, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC),
    dt.datetime(2024, 11, 3, 6, 30, tzinfo=UTC),
    dt.datetime(9999, 12, 30, tzinfo=UTC),
]
ROWS_PER_VALUE = 2


def rows() -> list[tuple]:
    """Every value of every column at least twice, spread over the rows, and a NULL every 7th row."""
    count = ROWS_PER_VALUE * max(len(INTS), len(BIGINTS), len(TEXTS), len(DATES), len(INSTANTS))

    def pick(values: list, index: int, stride: int):
        return None if (index * stride) % 7 == 3 else values[(index * stride) % len(values)]

    return [
        (k, pick(INTS, k, 1), pick(BIGINTS, k, 3), pick(TEXTS, k, 5), pick(DATES, k, 2), pick(INSTANTS, k, 3))
        for k in range(count)
    ]


#: table -> (PARTITIONED BY, the column the comparisons read)
TRANSFORMS: dict[str, tuple[str, str]] = {
    "identity_i": ("i", "i"),
    "identity_s": ("s", "s"),
    "identity_dt": ("identity(dt)", "dt"),
    "bucket_i": ("bucket(4, i)", "i"),
    "bucket_b": ("bucket(4, b)", "b"),
    "bucket_s": ("bucket(3, s)", "s"),
    "truncate_i": ("truncate(i, 10)", "i"),
    "truncate_b": ("truncate(b, 1000)", "b"),
    "truncate_s": ("truncate(s, 1)", "s"),
    "years_dt": ("years(dt)", "dt"),
    "months_dt": ("months(dt)", "dt"),
    "days_ts": ("days(ts)", "ts"),
    "hours_ts": ("hours(ts)", "ts"),
    "months_ts": ("months(ts)", "ts"),
}

#: table -> the bug its cases show today (a strict xfail: the fix flips it)
KNOWN: dict[str, str] = {}
#: a transform of each kind in the main suite (truncate at INT_MIN, months at a month's start);
#: the others are the slow tier
FAST = {"identity_i", "bucket_b", "truncate_i", "truncate_s", "days_ts", "months_ts"}


def _literal(column: str, value: object) -> str:
    if column == "s":
        return "'" + str(value).replace("'", "''") + "'"
    if column == "dt":
        return f"DATE '{value}'"
    if column == "ts":
        assert isinstance(value, dt.datetime)
        return f"TIMESTAMP '{value.strftime('%Y-%m-%d %H:%M:%S.%f')}Z'"
    return str(value)


def cases(column: str) -> list[Case]:
    """Every operator against every value of the column's type, IN, IS [NOT] NULL."""
    values = cast(
        list[Any], {"i": INTS, "b": BIGINTS, "s": TEXTS, "dt": DATES, "ts": INSTANTS}[column]
    )  # lists of unlike types join to object
    literals = [_literal(column, v) for v in values]
    predicates = [f"{column} {op} {lit}" for op, lit in itertools.product(("=", "<>", "<", "<=", ">", ">="), literals)]
    predicates += [f"{column} IN ({', '.join(literals[:3])})", f"{column} NOT IN ({', '.join(literals[-3:])})"]
    predicates += [f"{column} IS NULL", f"{column} IS NOT NULL", f"{column} <=> {literals[0]}"]
    return [
        Case(("lake transform", column), f"SELECT {{q}} AS q, CAST(id AS STRING) AS v FROM {{t}} WHERE {p}", p)
        for p in predicates
    ]


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory) -> Iterator[object]:
    """A new lake ``lkmx`` (namespace ``ns``) and the rows as view ``lkmx_rows``."""
    from sluice import Federation

    url = f"iceberg+sqlite:///{tmp_path_factory.mktemp('lkmx')}/catalog.db"
    open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lkmx", url)
    fed.sql("CREATE NAMESPACE lkmx.ns")
    spark.createDataFrame(rows(), COLUMNS).createOrReplaceTempView("lkmx_rows")
    yield fed
    spark.catalog.dropTempView("lkmx_rows")
    fed.detach("lkmx")


def _params() -> list[object]:
    marks = {
        table: [pytest.mark.xfail(strict=True, reason=KNOWN[table])] if table in KNOWN else [] for table in TRANSFORMS
    }
    return [
        pytest.param(table, marks=marks[table] + ([] if table in FAST else [pytest.mark.slow]), id=table)
        for table in TRANSFORMS
    ]


@pytest.mark.parametrize("table", _params())
def test_pruning_never_drops_a_row_at_the_extremes(lake, table: str) -> None:
    """The table written through Spark SQL (Sluice's own writer), every case pushdown on vs off."""
    fed = lake
    partition_by, column = TRANSFORMS[table]
    name = f"lkmx.ns.{table}"
    fed.sql(f"CREATE TABLE {name} ({COLUMNS}) PARTITIONED BY ({partition_by})")
    fed.sql(f"INSERT INTO {name} SELECT * FROM lkmx_rows")
    tagged = list(enumerate(cases(column)))
    with reference_views(fed, {table: (f"lkmx_ref_{table}", name)}) as views:
        assert fed.sql(f"SELECT * FROM {views[table]}").count() == len(rows())
        failures = compare(fed, name, views[table], tagged)
    assert not failures, f"{len(failures)} of {len(tagged)} predicates differ on {table}:\n" + "\n".join(failures[:20])
    # the cases prove something only where the filter reached the lake: pushed EXACT
    plan = fed.plan(tagged[0][1].branch(0, name))
    assert {v.level.value for s in plan.scans for v in s.verdicts} == {"EXACT"}, plan.scans
