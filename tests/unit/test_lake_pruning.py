"""Lake pruning without Spark: pushed SQL as Iceberg expressions, and row-group statistics.

The property that matters is one-sided: pruning may keep too much, never too little. So
every test here evaluates the predicate the way Spark does, row by row in Python (NaN
equal to NaN and above +Infinity, -0.0 equal to 0.0, NULL never satisfying a
comparison), and checks that no unit holding a matching row is pruned.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import operator
import random
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator, expression_evaluator
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType, TimestamptzType

from sluice.lake.expressions import conjunct_filter
from sluice.lake.stats import row_group_metrics

SCHEMA = Schema(
    NestedField(1, "x", DoubleType(), required=False),
    NestedField(2, "n", LongType(), required=False),
    NestedField(3, "s", StringType(), required=False),
    NestedField(4, "d", DateType(), required=False),
    NestedField(5, "ts", TimestamptzType(), required=False),
)
FLOATS = [math.nan, -math.inf, -1.5, -0.0, 0.0, 1.0, 5.0, 7.25, math.inf, None]
OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "=": operator.eq}


def _spark_key(value: float) -> tuple[int, float]:
    """Spark's total order on doubles: NaN above +Infinity, -0.0 equal to 0.0."""
    return (1, 0.0) if math.isnan(value) else (0, value + 0.0)


def _spark_holds(op: str, value: float | None, literal: float) -> bool:
    return value is not None and OPS[op](_spark_key(value), _spark_key(literal))


def _double(value: float) -> str:
    text = (
        "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity") if math.isinf(value) else repr(value)
    )
    return f"CAST('{text}' AS DOUBLE)"


@pytest.mark.parametrize(
    ("sql", "expected", "exact"),
    [
        ('"n" = 5', "EqualTo(term=Reference(name='n'), literal=LongLiteral(5))", True),
        ('5 < "n"', "GreaterThan(term=Reference(name='n'), literal=LongLiteral(5))", True),
        ('"n" IN (1, 2, NULL)', "In", True),
        ('"n" <> 5', "AlwaysTrue()", False),
        ('"n" < 9223372036854775808', "AlwaysTrue()", False),  # out of range: bound as AboveMax, true on NULL too
        ("\"n\" < CAST('1.5' AS DECIMAL(2, 1))", "AlwaysTrue()", False),  # would bind as n < 1 and lose n = 1
        ("\"x\" > CAST('5.0' AS DOUBLE)", "IsNaN", False),
        ("\"x\" = CAST('NaN' AS DOUBLE)", "IsNaN(term=Reference(name='x'))", False),
        ("\"s\" LIKE 'ab%' ESCAPE '\\'", "StartsWith(term=Reference(name='s'), literal=literal('ab'))", True),
        ("\"s\" LIKE 'a_c%' ESCAPE '\\'", "StartsWith(term=Reference(name='s'), literal=literal('a'))", False),
        ("\"s\" LIKE '%b' ESCAPE '\\'", "AlwaysTrue()", False),
        ('NOT ("s" IS NULL)', "NotNull(term=Reference(name='s'))", True),
        ('NOT ("n" = 5)', "AlwaysTrue()", False),
        ("\"d\" >= CAST('2024-02-29' AS DATE)", "DateLiteral", True),
        ("\"d\" >= CAST('2024-02-29 00:00:00' AS TIMESTAMP)", "AlwaysTrue()", False),
        ("\"ts\" < CAST('2024-03-10 07:00:00.000000+00:00' AS TIMESTAMPTZ)", "TimestampLiteral", True),
        ('"n" + 1 = 5', "AlwaysTrue()", False),
        ('"n" = "n"', "AlwaysTrue()", False),
        ('"n" = 1 OR "s" = \'a\'', "Or(", True),
        ('"n" = 1 OR "n" + 1 = 3', "AlwaysTrue()", False),
        ("this is not SQL (", "AlwaysTrue()", False),
    ],
)
def test_translation(sql: str, expected: str, exact: bool) -> None:
    result = conjunct_filter(sql, SCHEMA)
    assert expected in str(result.expression)
    assert result.exact is exact


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("literal", [v for v in FLOATS if v is not None])
def test_float_comparisons_keep_every_row_spark_keeps(op: str, literal: float) -> None:
    """Row level: the Iceberg form is true wherever Spark's predicate is (NaN, -0.0, ±Inf)."""
    translated = conjunct_filter(f'"x" {op} {_double(literal)}', SCHEMA)
    holds = expression_evaluator(SCHEMA, translated.expression, case_sensitive=True)
    for value in FLOATS:
        if _spark_holds(op, value, literal):
            assert holds(Record(value, None, None, None, None)), (op, literal, value, translated.expression)


def _write_groups(path: Path, groups: list[list[float | None]]) -> None:
    """One Parquet file, one row group per list (pyarrow's float statistics leave NaN out)."""
    with pq.ParquetWriter(path, pa.schema([("x", pa.float64())])) as writer:
        for values in groups:
            writer.write_table(pa.table({"x": pa.array(values, pa.float64())}))


def test_nan_polluted_and_null_row_groups_are_never_pruned(tmp_path: Path) -> None:
    """The issue's cases: ``x > 5`` keeps a group of {1.0, NaN} (its max says 1.0), ``x IS
    NULL`` keeps a group with a NULL; and every group is pruned only when no row matches."""
    random.seed(7)
    groups: list[list[float | None]] = [
        [1.0, math.nan],
        [None, 2.0],
        [math.nan],
        [None],
        [-0.0, 0.0],
        [math.inf, 3.0],
        [6.0, 8.0],
        [-math.inf],
    ]
    groups += [[random.choice(FLOATS) for _ in range(4)] for _ in range(40)]
    path = tmp_path / "groups.parquet"
    _write_groups(path, groups)
    schema = Schema(NestedField(1, "x", DoubleType(), required=False))
    metrics = row_group_metrics(pq.read_metadata(path), schema)
    assert len(metrics) == len(groups)
    predicates: list[tuple[str, Callable[..., bool]]] = [
        (f'"x" {op} {_double(v)}', lambda x, op=op, v=v: _spark_holds(op, x, v))
        for op, v in itertools.product(OPS, [v for v in FLOATS if v is not None])
    ]
    predicates += [
        ('"x" IS NULL', lambda x: x is None),
        ('NOT ("x" IS NULL)', lambda x: x is not None),
        (
            f'"x" IN ({_double(math.nan)}, {_double(-0.0)})',
            lambda x: x is not None and (_spark_key(x) in {_spark_key(math.nan), _spark_key(0.0)}),
        ),
    ]
    pruned = 0
    for sql, spark_holds in predicates:
        evaluator = _InclusiveMetricsEvaluator(
            schema, conjunct_filter(sql, schema).expression, include_empty_files=True
        )
        for values, group in zip(groups, metrics):
            if any(spark_holds(v) for v in values):
                assert evaluator.eval(group), f"{sql} pruned row group {values} holding a matching row"  # type: ignore[arg-type]  # the evaluator reads the metrics fields of a DataFile, which RowGroupMetrics has
            elif not evaluator.eval(group):  # type: ignore[arg-type]  # the evaluator reads the metrics fields of a DataFile, which RowGroupMetrics has
                pruned += 1
    assert pruned > 100  # the statistics do prune where they can


def test_statistics_that_cannot_be_trusted_give_no_bounds(tmp_path: Path) -> None:
    path = tmp_path / "odd.parquet"
    table = pa.table(
        {
            "x": pa.array([math.nan, math.nan]),
            "s": pa.array(["b", "a"]),
            "n": pa.array([None, None], pa.int64()),
            "ts": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("ns", tz="UTC")),
        }
    )
    pq.write_table(table, path)
    (group,) = row_group_metrics(pq.read_metadata(path), SCHEMA)
    assert 1 not in group.lower_bounds  # only NaN: no min/max at all
    assert group.lower_bounds[3] == b"a" and group.upper_bounds[3] == b"b"
    assert group.null_value_counts[2] == 2 and 2 not in group.lower_bounds
    assert 5 not in group.lower_bounds  # nanosecond timestamps: no bounds
    assert group.nan_value_counts == {}  # never claimed


def test_zero_bounds_are_widened_to_both_signs(tmp_path: Path) -> None:
    path = tmp_path / "zero.parquet"
    _write_groups(path, [[0.0, 0.0]])
    (group,) = row_group_metrics(pq.read_metadata(path), Schema(NestedField(1, "x", DoubleType(), required=False)))
    assert math.copysign(1, __import__("struct").unpack("<d", group.lower_bounds[1])[0]) == -1


@pytest.mark.parametrize(
    ("where", "spark", "narrow"),
    [
        (('"n" >= 40', '"n" <= 44'), lambda n: 40 <= n <= 44, True),
        (('"n" > 39', '"n" < 45'), lambda n: 39 < n < 45, True),
        (('("n" >= 7) AND ("n" <= 8)',), lambda n: 7 <= n <= 8, True),
        (('"n" >= 0', '"n" <= 200'), lambda n: 0 <= n <= 200, False),  # more values than MAX_RANGE_AS_SET
        (('("n" >= 7) OR ("n" <= 8)',), lambda n: True, False),  # bounds under an OR bound nothing
    ],
)
def test_narrow_integer_ranges_prune_bucket_partitions(
    tmp_path: Path, where: tuple[str, ...], spark, narrow: bool
) -> None:
    """A range projects through no bucket transform; the set of its values does. Files of
    buckets none of the values hash to are dropped, never a file holding a matching row."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import BucketTransform

    from sluice.lake.pyramid import plan_pyramid

    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("ns")
    schema = Schema(NestedField(1, "n", LongType(), required=False))
    table = catalog.create_table(
        ("ns", "t"),
        schema=schema,
        partition_spec=PartitionSpec(PartitionField(1, 1000, BucketTransform(8), "n_bucket")),
    )
    table.append(pa.table({"n": pa.array([*range(0, 120), None], pa.int64())}))  # 8 buckets and the NULL partition
    pyramid = plan_pyramid(table, "ns.t", where, ("n",))
    files = {
        task.file.file_path: pq.read_table(task.file.file_path.removeprefix("file://"))["n"].to_pylist()
        for task in table.scan().plan_files()
    }
    matching = {path for path, values in files.items() if any(v is not None and spark(v) for v in values)}
    assert matching <= {read.path for read in pyramid.reads}
    partitions = pyramid.tiers[1]
    assert partitions.total == len(files) == 9
    if narrow:  # at most one bucket per value of the range
        assert partitions.kept <= 5 and partitions.kept == len(matching), partitions
    else:  # a range projects through no bucket: every partition is kept
        assert partitions.kept == 9, partitions


def test_decimal_38_literals_prune_instead_of_failing() -> None:
    """A decimal(38,1) IN list quantized in Python's 28-digit default context raised
    InvalidOperation and failed the query (fuzz seed 20261125, lake)."""
    from pyiceberg.types import DecimalType

    schema = Schema(NestedField(1, "d5", DecimalType(38, 1), required=False))
    result = conjunct_filter(
        "\"d5\" IN (CAST('-1.5' AS DECIMAL(38, 1)), CAST('9999999999999999999999999999999999999.9' AS DECIMAL(38, 1)))",
        schema,
    )
    assert "In(" in str(result.expression) and "9999999999999999999999999999999999999.9" in str(result.expression)
