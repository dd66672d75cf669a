"""Optimizer rules on bound queries (no Spark): placement, outer joins, subqueries, limits."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import sluice.planner.rules as rules_package
from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.errors import BindError, QuerySyntaxError
from sluice.planner.binder import bind
from sluice.planner.optimizer import RULES, optimize, rule_name
from sluice.planner.state import PlanState
from sluice.pushdown.levels import Level
from tests.unit.tables import PG_TABLE, SQLITE_TABLE


def plan(sql: str, trace: bool = True):  # type: ignore[no-untyped-def]
    def resolve(source: str, schema, table: str):  # type: ignore[no-untyped-def]
        return PG_TABLE if source == "pg" else SQLITE_TABLE

    bound = bind(sql, resolve, ["lite", "pg"], "q")
    state = PlanState(bound.qualified, bound.scans, "UTC", {"pg": PostgresDialect(), "lite": SqliteDialect()})
    return optimize(state, trace)


def placed(state, index: int) -> list[str]:  # type: ignore[no-untyped-def]
    return [v.sql for v in state.scans[index].verdicts]


@pytest.mark.parametrize("module", [m.name for m in pkgutil.iter_modules(rules_package.__path__)])
def test_rule_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(f"sluice.planner.rules.{module}"))
    assert result.failed == 0


def test_rules_tuple_lists_every_rule_module_once() -> None:
    assert sorted(rule_name(r) for r in RULES) == sorted(m.name for m in pkgutil.iter_modules(rules_package.__path__))


def test_where_on_the_null_supplying_side_stays_in_spark() -> None:
    state, _ = plan("SELECT * FROM pg.t a LEFT JOIN lite.t b ON a.id = b.id WHERE b.i IS NULL AND a.i = 1")
    assert placed(state, 0) == ["a__s0.i = 1"]
    assert placed(state, 1) == []
    assert "IS NULL" in state.tree.sql(dialect="spark")


def test_on_conditions_of_a_left_join_pre_filter_the_right_side_only() -> None:
    state, _ = plan("SELECT * FROM pg.t a LEFT JOIN lite.t b ON a.id = b.id AND b.i = 2 AND a.i = 3")
    assert placed(state, 1) == ["b__s1.i = 2"]
    assert placed(state, 0) == []  # a.i = 3 in ON does not filter the preserved side


def test_full_join_places_nothing() -> None:
    state, _ = plan("SELECT * FROM pg.t a FULL JOIN lite.t b ON a.id = b.id WHERE a.i = 1 AND b.i = 2")
    assert placed(state, 0) == [] and placed(state, 1) == []


def test_inner_join_places_both_sides_and_keeps_the_join_condition() -> None:
    state, _ = plan("SELECT * FROM pg.t a JOIN lite.t b ON a.id = b.id WHERE a.i = 1 AND b.i = 2")
    assert placed(state, 0) == ["a__s0.i = 1"] and placed(state, 1) == ["b__s1.i = 2"]
    assert "a__s0.id = b__s1.id" in state.tree.sql(dialect="spark")


def test_filter_moves_into_a_plain_subquery() -> None:
    state, _ = plan("SELECT * FROM (SELECT id, i + 1 AS j FROM pg.t) s WHERE s.j > 5")
    assert [v.remote_sql for v in state.scans[0].verdicts] == ['("i" + CAST(1 AS INT)) > 5']


def test_filter_stays_above_an_aggregating_subquery() -> None:
    state, _ = plan("SELECT * FROM (SELECT i, count(*) AS n FROM pg.t GROUP BY i) s WHERE s.n > 5")
    assert placed(state, 0) == []


def test_between_in_a_projection_is_not_rewritten() -> None:
    state, _ = plan("SELECT i BETWEEN 1 AND 2 AS x FROM pg.t WHERE i BETWEEN 1 AND 2")
    assert "BETWEEN" in state.tree.sql(dialect="spark").split("FROM")[0]
    assert placed(state, 0) == ["t__s0.i >= 1", "t__s0.i <= 2"]


def test_exact_filters_leave_spark_and_inexact_stay() -> None:
    state, _ = plan("SELECT id FROM pg.t WHERE i = 1 AND ch = 'a' AND upper(name) = 'A'")
    levels = [v.level for v in state.scans[0].verdicts]
    assert levels == [Level.EXACT, Level.INEXACT, Level.UNSUPPORTED]
    residual = state.tree.sql(dialect="spark")
    assert "i = 1" not in residual and "ch = 'a'" in residual and "UPPER" in residual


def test_limit_pushed_only_when_every_filter_is_exact() -> None:
    state, _ = plan("SELECT id FROM pg.t WHERE i = 1 LIMIT 5")
    assert state.scans[0].limit == 5
    state, _ = plan("SELECT id FROM pg.t WHERE ch = 'a' LIMIT 5")
    assert state.scans[0].limit is None
    state, _ = plan("SELECT a.id FROM pg.t a JOIN pg.t b ON a.id = b.id LIMIT 5")
    assert all(s.limit is None for s in state.scans)
    state, _ = plan("SELECT DISTINCT i FROM pg.t LIMIT 5")
    assert state.scans[0].limit is None
    state, _ = plan("SELECT count(*) FROM pg.t LIMIT 5")
    assert state.scans[0].limit is None


def test_top_n_needs_an_identical_ordering() -> None:
    state, _ = plan("SELECT id, name FROM pg.t ORDER BY name DESC LIMIT 3")
    scan = state.scans[0]
    assert scan.limit == 3 and scan.order[0].descending and not scan.order[0].nulls_first
    state, _ = plan("SELECT id FROM pg.t ORDER BY ch LIMIT 3")
    assert state.scans[0].limit is None  # blank-padded text sorts differently
    state, _ = plan("SELECT id FROM lite.t ORDER BY ts LIMIT 3")
    assert state.scans[0].limit is None  # SQLite timestamps are free-form text
    state, _ = plan("SELECT id FROM pg.t ORDER BY upper(name) LIMIT 3")
    assert state.scans[0].limit is None


def test_trace_names_every_rule() -> None:
    _, trace = plan("SELECT id FROM pg.t WHERE NOT (i BETWEEN 1 AND 2)")
    assert [step.rule for step in trace] == ["bind"] + [rule_name(r) for r in RULES]
    assert any(step.text == "same as above" for step in trace)


def test_plain_planning_records_no_trace_and_plans_alike() -> None:
    query = "SELECT id FROM pg.t WHERE NOT (i BETWEEN 1 AND 2) AND name = 'x'"
    (traced, steps), (plain, none) = plan(query), plan(query, trace=False)
    assert steps and none == ()
    assert plain.render() == traced.render()


def test_projection_reads_only_what_spark_needs() -> None:
    state, _ = plan("SELECT name FROM pg.t WHERE i = 1 AND ch = 'a'")
    assert state.scans[0].columns == ("name", "ch")  # i is filtered remotely, exactly
    state, _ = plan("SELECT count(*) FROM pg.t")
    assert state.scans[0].columns == ("id",)


def test_bind_errors_name_the_problem() -> None:
    with pytest.raises(BindError, match="unknown source 'nope'"):
        plan("SELECT * FROM nope.t")
    with pytest.raises(BindError, match="missing_col"):
        plan("SELECT missing_col FROM pg.t")
    with pytest.raises(BindError, match="source.table"):
        plan("SELECT * FROM t")
    with pytest.raises(QuerySyntaxError):
        plan("SELEC id FRM pg.t")
    with pytest.raises(QuerySyntaxError, match="only queries"):
        plan("DROP TABLE pg.t")


def test_qualified_stars_expand_under_their_own_alias() -> None:
    """``t.*`` once failed with sqlglot's "Unknown table: t" (its alias canonicalization)."""
    state, _ = plan("SELECT a.*, b.id AS bid FROM pg.t a JOIN lite.t b ON a.id = b.id WHERE a.i = 1")
    projections = [p.sql(dialect="spark") for p in state.tree.expressions]
    assert projections == [f"a__s0.{c.name} AS {c.name}" for c in PG_TABLE.columns] + ["b__s1.id AS bid"]
    assert placed(state, 0) == ["a__s0.i = 1"]
