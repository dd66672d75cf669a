"""The planner's named rules: each decides one thing about a scan and says so under its name
(EXPLAIN VERBOSE), reading what the rules before it decided (no server, no Spark)."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.planner import rules
from sluice.planner.rules.base import Draft, Rule, Step
from sluice.planner.rules.classify_filters import classify
from sluice.protocol.codec import decode
from sluice.protocol.scan import PlanRequest
from sluice.pushdown.levels import Level
from sluice.sources.postgres import PostgresSource
from sluice.types import table_to_dict
from tests.unit.tables import PG_TABLE

pytestmark = pytest.mark.unit

PG = PostgresSource("pg", "postgresql://u@localhost/db")


def ref(name: str) -> dict[str, Any]:
    return {"ref": [name]}


def lit(value: str, kind: str) -> dict[str, Any]:
    return {"lit": value, "type": kind}


def op(name: str, *args: dict[str, Any]) -> dict[str, Any]:
    return {"op": name, "args": list(args)}


def order(column: str, descending: bool = False) -> dict[str, Any]:
    return {"expr": ref(column), "descending": descending, "nulls_first": not descending}


def planned(predicates: list[dict[str, Any]], **request: Any) -> tuple[Draft, dict[str, Step]]:
    """The rules run over a request carrying the verdicts ``filters`` gave ``predicates``."""
    verdicts = classify(PG, PG_TABLE, predicates, "UTC")
    full = {"table": {"table": table_to_dict(PG_TABLE)}, "verdicts": [v.to_dict() for v in verdicts], **request}
    draft, steps = rules.run(Draft(decode(PlanRequest, full, "the 'plan' request"), PG, PG_TABLE))
    return draft, {step.rule: step for step in steps}


def test_every_rule_runs_in_order_and_names_its_step() -> None:
    _, steps = planned([])
    assert list(steps) == [rule.name for rule in rules.RULES]
    assert list(steps) == ["classify_filters", "runtime_filters", "push_aggregates", "push_projection", "push_limit"]


def test_a_rule_that_does_not_decide_cannot_be_made() -> None:
    class Undecided(Rule):
        name = "undecided"

    with pytest.raises(TypeError):
        Undecided()  # type: ignore[abstract]  # the point: apply is abstract


def test_limit_and_order_pushed_over_exact_filters() -> None:
    draft, steps = planned([op("=", ref("id"), lit("5", "long"))], limit=10, order=[order("i", descending=True)])
    assert [v.level for v in draft.verdicts] == [Level.EXACT]
    assert draft.limit == 10 and [(k.column, k.descending, k.nulls_first) for k in draft.order] == [("i", True, False)]
    assert steps["push_limit"].text == "LIMIT 10 ORDER BY i DESC NULLS LAST" and steps["push_limit"].changed
    assert steps["classify_filters"].changed and steps["classify_filters"].text.startswith("EXACT ")


def test_limit_stays_with_spark_over_a_filter_that_is_not_exact() -> None:
    # upper() is never pushed (Spark's Java case mapping), so the filter is UNSUPPORTED
    draft, steps = planned([op("=", op("UPPER", ref("name")), lit("A", "string"))], limit=3)
    assert draft.verdicts[0].level is Level.UNSUPPORTED
    assert draft.limit is None and draft.limit_note == "LIMIT 3 not pushed: a filter is not EXACT"
    assert steps["push_limit"].text == draft.limit_note


def test_limit_stays_with_spark_when_the_source_orders_text_differently() -> None:
    draft, _ = planned([], limit=3, order=[order("ch")])  # char(n): padded, so it cannot order as Spark
    assert draft.limit is None and "orders" in (draft.limit_note or ""), draft.limit_note
    draft, _ = planned([], limit=3, order=[order("name")])  # a locale collation, ordered under COLLATE "C"
    assert draft.limit == 3


def test_projection_reads_what_spark_asks_or_the_narrowest_column() -> None:
    draft, steps = planned([], columns=["name", "id"])
    assert draft.columns == ("name", "id") and steps["push_projection"].text == "read name, id"
    draft, steps = planned([])
    assert draft.columns == ("flag",)  # a boolean: one byte a row
    assert steps["push_projection"].text == "read flag (Spark needs no column: count only)"


def test_no_offer_changes_nothing() -> None:
    draft, steps = planned([])
    assert draft.limit is None and draft.aggregation is None and draft.runtime == ()
    for name in ("runtime_filters", "push_aggregates", "push_limit"):
        assert not steps[name].changed, steps[name]


def test_join_keys_found_at_run_time_are_classified_like_filters() -> None:
    keys = {"op": "IN", "args": [ref("id"), lit("1", "long"), lit("2", "long")]}
    draft, steps = planned([], runtime=[keys])
    assert [v.level for v in draft.runtime] == [Level.EXACT]
    assert steps["runtime_filters"].changed and "EXACT" in steps["runtime_filters"].text


def test_an_expression_spark_sends_that_sluice_cannot_read_is_unsupported_not_an_error() -> None:
    (verdict,) = classify(PG, PG_TABLE, [op("SOMETHING_NEW", ref("id"))], "UTC")
    assert verdict.level is Level.UNSUPPORTED and verdict.sql == "SOMETHING_NEW(id)"
