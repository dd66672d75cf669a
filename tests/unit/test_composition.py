"""Composition rules (DESIGN.md §1): AND, OR, NOT over EXACT, INEXACT and UNSUPPORTED parts."""

from __future__ import annotations

from typing import cast

import sqlglot
from sqlglot import exp

from sluice.dialects.postgres import PostgresDialect
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator
from tests.unit.tables import PG_TABLE

EXACT, INEXACT, UNSUPPORTED = "i = 1", "ch = 'a'", "upper(name) = 'A'"


def classify(predicate: str):
    return Translator(PostgresDialect(), PG_TABLE, "UTC").predicate(
        cast(exp.Expression, sqlglot.parse_one(predicate, read="spark"))
    )


def test_leaves() -> None:
    assert classify(EXACT).level is Level.EXACT
    assert classify(INEXACT).level is Level.INEXACT
    assert classify(UNSUPPORTED).level is Level.UNSUPPORTED


def test_and_drops_an_unsupported_child_and_becomes_inexact() -> None:
    result = classify(f"({EXACT}) AND ({UNSUPPORTED})")
    assert result.level is Level.INEXACT
    assert PostgresDialect().render(result.sql) == '"i" = 1'


def test_and_of_exact_is_exact_and_of_inexact_is_inexact() -> None:
    assert classify(f"({EXACT}) AND ({EXACT})").level is Level.EXACT
    assert classify(f"({EXACT}) AND ({INEXACT})").level is Level.INEXACT


def test_or_needs_every_branch() -> None:
    assert classify(f"({EXACT}) OR ({EXACT})").level is Level.EXACT
    assert classify(f"({EXACT}) OR ({INEXACT})").level is Level.INEXACT
    assert classify(f"({EXACT}) OR ({UNSUPPORTED})").level is Level.UNSUPPORTED


def test_not_over_inexact_is_unsupported() -> None:
    """NOT over a superset is not a superset: the published sample classifier's bug."""
    result = classify(f"NOT ({INEXACT})")
    assert result.level is Level.UNSUPPORTED
    assert "NOT over a superset" in result.reason
    assert classify(f"NOT (({EXACT}) AND ({UNSUPPORTED}))").level is Level.UNSUPPORTED


def test_not_over_exact_is_exact() -> None:
    result = classify(f"NOT ({EXACT})")
    assert result.level is Level.EXACT
    assert PostgresDialect().render(result.sql) == 'NOT ("i" = 1)'


def test_or_parenthesised_inside_and() -> None:
    result = classify("(i = 1 OR f > 2) AND name = 'x'")
    assert PostgresDialect().render(result.sql).startswith('(("i" = 1) OR ("f" >')


def test_not_like_is_not_read_as_like() -> None:
    """sqlglot parses NOT LIKE as Like(negate=True): it must stay a negation."""
    result = classify("name NOT LIKE 'a%'")
    assert PostgresDialect().render(result.sql).startswith("NOT")
