"""Lake tables whose partition values are NULL, for every partition transform.

An OR over two partition columns keeps a file whose first partition value is NULL through
its second, and PyIceberg's residual visitor then compared the NULL with ``>`` and crashed
the query (``TypeError: '>' not supported between 'NoneType' and 'int'``). Here every
transform, under AND/OR/NOT shapes, is read through the lake source (pruning, then DuckDB)
and must return exactly the rows DuckDB selects from the whole table with the same
predicate. ``tests/integration/test_lake_pruning.py`` runs the same tables through Spark.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.pushdown.pushed import Pushed
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from tests.null_partitions import TRANSFORMS, rows, write_tables
from tests.pyramids import pyramid_of

T = "CAST('2026-03-03 05:00:00.000000+00:00' AS TIMESTAMPTZ)"
D = "CAST('2026-03-04' AS DATE)"
#: pushed conjuncts (lake dialect) of AND/OR/NOT shapes; NOT also as the planner pushes it down
PREDICATES = [
    '"a" > 5 OR "b" = 3',
    '"a" < 5 OR "b" = 3',
    '"a" >= 17 OR "b" IS NULL',
    '"a" <= 4 OR "b" > 2',
    '("a" > 5 OR "b" = 3) AND "b" < 6',
    '"a" IS NULL OR "b" < 2',
    'NOT ("a" IS NULL) AND ("a" < 9 OR "b" = 1)',
    '"a" IN (1, 2, 7) OR "b" = 3',
    '"a" = 7 OR "b" = 3',
    'NOT ("a" > 5)',
    '"a" <= 5 AND "b" <> 3',
    '"s" > \'v3\' OR "b" = 3',
    '"s" < \'v2\' OR "b" IS NULL',
    "\"s\" LIKE 'v1%' ESCAPE '\\' OR \"b\" = 0",
    f'"ts" > {T} OR "b" = 3',
    f'"ts" <= {T} OR "b" IS NULL',
    f'"ts" >= {T} AND ("a" > 5 OR "b" = 3)',
    'NOT ("ts" IS NULL) OR "b" = 3',
    f'"d" < {D} OR "b" = 3',
    f'"d" >= {D} OR "a" < 3',
]


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> str:
    folder: Path = tmp_path_factory.mktemp("null-partitions")
    location = LakeLocation.from_url(f"iceberg+sqlite:///{folder}/catalog.db")
    write_tables(open_catalog(location, create=True), "np")
    return location.url


def _expected(predicate: str) -> list[int]:
    whole = rows()  # noqa: F841 - read by DuckDB's replacement scan
    return sorted(
        r[0] for r in cast(duckdb.DuckDBPyRelation, duckdb.sql(f"SELECT id FROM whole WHERE {predicate}")).fetchall()
    )


@pytest.mark.parametrize("table", sorted(TRANSFORMS))
def test_null_partition_values_prune_without_dropping_or_crashing(lake: str, table: str) -> None:
    source = open_source("lake", lake)
    described = source.describe("np", table)
    kept_files = []
    for predicate in PREDICATES:
        spec = ScanSpec.for_source(
            source,
            described,
            ("id",),
            where=(Pushed(tree=cast(exp.Expression, sqlglot.parse_one(predicate, read="duckdb"))),),
        )
        got = sorted(
            i for task in source.tasks(spec) for batch in source.read(task) for i in batch.column(0).to_pylist()
        )
        assert got == _expected(predicate), predicate
        kept_files.append(pyramid_of(source, spec).tiers[1].kept)
    total = pyramid_of(source, ScanSpec.for_source(source, described, ("id",))).tiers[1].kept
    assert min(kept_files) < total  # partitions are pruned, NULL ones included, not merely all read
