"""Lake tables partitioned by ``truncate`` of int and bigint columns at their extremes.

Iceberg's truncate is ``v - (((v % W) + W) % W)`` in the column's own integer type, so
Iceberg Java and PyIceberg's writer (pyiceberg-core) wrap at the minimum:
``truncate(10, -2147483648)`` is written as ``2147483646``. Every projection onto the
partition (pruning of manifests and files, files proven to match whole, the files an
overwrite by a filter replaces) must agree with what is written, with both readers and
with time travel. Expected rows are Spark's over the files read whole (pushdown off).
Catalog and table names start with ``lktx`` (other helpers share the machine).
"""

from __future__ import annotations

import collections

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from tests.integration.test_differential import differential_failures
from tests.integration.test_lake_history import READERS, lake_reader  # noqa: F401 - the fixture, used by name
from tests.integration.test_lake_sql import canonical

pytestmark = pytest.mark.integration

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
#: values around each extreme of the type, both sides of the first partition boundary above
#: its minimum (INT_MIN + 8 and LONG_MIN + 192 are multiples of the widths), and around zero
INTS = [
    *range(INT_MIN, INT_MIN + 12),
    *range(-100, 0, 7),
    *range(0, 12),
    *range(INT_MAX - 11, INT_MAX + 1),
]
LONGS = [
    *range(LONG_MIN, LONG_MIN + 4),
    *range(LONG_MIN + 190, LONG_MIN + 195),
    *range(-2500, 2500, 499),
    *range(LONG_MAX - 3, LONG_MAX + 1),
]
#: (table, column, partition clause, literals compared with)
TABLES = {
    "ints": (
        "i",
        "truncate(i, 10)",
        [
            INT_MIN,
            INT_MIN + 1,
            INT_MIN + 7,
            INT_MIN + 8,
            INT_MIN + 9,
            -2147483641,
            -11,
            -10,
            0,
            2147483640,
            2147483646,
            INT_MAX,
        ],
    ),
    "longs": (
        "big",
        "truncate(big, 1000)",
        [LONG_MIN, LONG_MIN + 1, LONG_MIN + 191, LONG_MIN + 192, -1000, -1, 0, 9223372036854775616, LONG_MAX],
    ),
}
OPERATORS = ("=", "<>", "<", "<=", ">", ">=")


def _sql(value: int | None) -> str:
    """A Spark SQL literal: bigint outside the int range (``L``, so it is not a decimal)."""
    if value is None:
        return "NULL"
    return str(value) if INT_MIN <= value <= INT_MAX else f"{value}L"


def _predicates(column: str, literals: list[int]) -> list[tuple[int, str]]:
    """Every comparison with every literal, IN / NOT IN / BETWEEN over the minimum's partition, NULL tests."""
    low, third, fourth = (_sql(literals[i]) for i in (0, 2, 3))
    predicates = [f"{column} {op} {_sql(value)}" for value in literals for op in OPERATORS]
    predicates += [
        f"{column} IN ({low}, {third}, 5)",
        f"{column} NOT IN ({low}, 5)",
        f"{column} BETWEEN {low} AND {fourth}",
        f"{column} < 0 AND {column} > {low}",
        f"{column} IS NULL",
        f"{column} IS NOT NULL",
    ]
    return list(enumerate(predicates))


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    """Tables ``ints`` (id, i int) and ``longs`` (id, big bigint), each written by two Spark SQL
    inserts (the extremes, then the rest and a NULL); yields the federation, the lake URL and,
    per table, the first insert's snapshot id."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("lktx")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    catalog = open_catalog(LakeLocation.from_url(url), create=True)
    fed = Federation(spark=spark)
    fed.attach("lktx", url)
    fed.sql("CREATE NAMESPACE lktx.ns")
    first: dict[str, int] = {}
    for table, values, kind in (("ints", INTS, "int"), ("longs", LONGS, "bigint")):
        column, partition, _ = TABLES[table]
        fed.sql(f"CREATE TABLE lktx.ns.{table} (id bigint, {column} {kind}) PARTITIONED BY ({partition})")
        extremes = [v for v in values if abs(v) > 2**30]
        for batch in (extremes, [v for v in values if v not in extremes] + [None]):
            rows = ", ".join(f"({-1 if v is None else values.index(v)}, CAST({_sql(v)} AS {kind}))" for v in batch)
            fed.sql(f"INSERT INTO lktx.ns.{table} VALUES {rows}")
            snapshot = catalog.load_table(("ns", table)).current_snapshot()
            assert snapshot is not None
            first.setdefault(table, snapshot.snapshot_id)
    return fed, url, first


@pytest.mark.parametrize("lake_reader", list(READERS), indirect=True)
@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_comparison_near_the_extremes_reads_as_spark(lake, lake_reader: str, table: str) -> None:  # noqa: F811 - the imported fixture
    fed, _, first = lake
    column, _, literals = TABLES[table]
    predicates = _predicates(column, literals)
    assert READERS[lake_reader] in fed.explain(f"SELECT id FROM lktx.ns.{table} WHERE {column} < 0")
    failures = differential_failures(fed, f"lktx.ns.{table}", predicates)
    failures += differential_failures(fed, f"lktx.ns.{table} VERSION AS OF {first[table]}", predicates)
    assert not failures, f"{len(failures)} predicate(s) differ on {table}:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("table", sorted(TABLES))
def test_aggregates_near_the_minimum_equal_spark(lake, table: str) -> None:
    """COUNT/MIN/MAX may be answered from metadata where pruning proves files match whole."""
    fed, _, _ = lake
    column, _, literals = TABLES[table]
    query = " UNION ALL ".join(
        f"SELECT {index} AS q, min({column}), max({column}), count(*) FROM lktx.ns.{table} WHERE {column} {op} {value}"
        for index, (op, value) in enumerate((op, _sql(v)) for v in literals for op in ("<", ">", "<=", ">="))
    )
    on = collections.Counter(tuple(r) for r in fed.sql(query).collect())
    assert on == collections.Counter(tuple(r) for r in fed.sql(query, pushdown=False).collect())


@pytest.mark.parametrize(("table", "cut"), [("ints", -10), ("longs", -1000)])
def test_overwrite_by_a_filter_replaces_the_minimum_partition_too(spark, lake, table: str, cut: int) -> None:
    """``writeTo(t).overwrite(column < cut)`` must replace the files of the wrapped partition
    (the minimum's rows), not commit with them still in the table."""
    from pyspark.sql import functions as F

    fed, _, _ = lake
    column, _, _ = TABLES[table]
    name = f"lktx.ns.{table}_ow"
    fed.sql(f"CREATE TABLE {name} PARTITIONED BY ({TABLES[table][1]}) AS SELECT * FROM lktx.ns.{table}")
    before = fed.sql(f"SELECT * FROM {name}", pushdown=False).collect()
    new = spark.createDataFrame([(1000, cut - 5)], f"id bigint, {column} {'int' if table == 'ints' else 'bigint'}")
    new.writeTo(name).overwrite(F.col(column) < F.lit(cut))
    expected = [tuple(r) for r in before if r[1] is None or r[1] >= cut] + [(1000, cut - 5)]
    assert canonical(fed.sql(f"SELECT * FROM {name}", pushdown=False).collect()) == canonical(expected)
