"""The conformance matrix covers every claim the dialects declare (tests/conformance.py).

A claim without a differential case is where wrong rows hide: a new matrix row, a function a
dialect starts translating, a new column family, each must come with its cases, or this fails.
"""

from __future__ import annotations

from typing import cast

import sqlglot
from sqlglot import exp

from sluice.dialects.lake import LakeDialect
from tests import conformance, sources
from tools import matrix


def test_every_claim_has_a_case() -> None:
    missing = conformance.claims() - conformance.covered(conformance.all_cases())
    assert not missing, f"claims without a differential case (add a matrix row using them): {sorted(missing)}"


def test_every_function_a_dialect_translates_is_a_claim() -> None:
    """The claims read each dialect's own table: a function added to one is a claim at once."""
    for dialect in [*(p.dialect for p in matrix.PROFILES), LakeDialect()]:
        for node in dialect.functions:
            assert ("function", node.__name__) in conformance.claims(), (dialect.name, node.__name__)


def test_a_new_function_without_a_case_is_reported() -> None:
    """The coverage check can fail: a claim no case uses is missing."""
    cases = [c for c in conformance.all_cases() if not any(isinstance(n, exp.Abs) for n in _nodes(c))]
    assert ("function", "Abs") in conformance.claims() - conformance.covered(cases)


def _nodes(case: conformance.Case) -> list[exp.Expression]:
    return cast(list[exp.Expression], list(sqlglot.parse_one(case.sql.format(q=0, t="edge"), read="spark").walk()))


def test_every_column_family_has_edge_columns_and_every_order() -> None:
    assert set(conformance.VARIANTS) == set(matrix.COLUMNS)
    orders = {c.claim for c in conformance.topn_cases()}
    assert len(orders) == 4 * len(matrix.COLUMNS)


def test_every_profile_dialect_runs_on_a_test_source() -> None:
    """A claim is only tested where its dialect runs: each profile's dialect has a test source."""
    kinds = {
        "PostgresDialect": "postgres",
        "SqliteDialect": "sqlite",
        "MariadbDialect": "mysql",
        "DuckdbDialect": "duckdb",
    }
    for profile in matrix.PROFILES:
        assert kinds[type(profile.dialect).__name__] in {s.kind for s in sources.ALL}, profile.name


def test_cases_are_unique_and_use_only_edge_columns() -> None:
    from tests.edge_data import COLUMNS

    edge = {c.strip() for c in COLUMNS.split(",")}
    cases = conformance.all_cases(sweep=True)
    assert len({(c.claim, c.sql) for c in cases}) == len(cases)
    for case in cases:
        used = {c.name for c in sqlglot.parse_one(case.sql.format(q=0, t="edge"), read="spark").find_all(exp.Column)}
        assert used <= edge | {"v"}, (case.text, used - edge)


def test_renaming_keeps_the_predicates_spelling() -> None:
    renamed = conformance.substitute("s < substr(s, 2) AND f = double('NaN') AND s = 's'", {"s": "tc", "f": "r"})
    assert renamed == "tc < substr(tc, 2) AND r = double('NaN') AND tc = 's'"
