"""Join pushdown decisions and the joined query, per dialect (no server, no Spark)."""

from __future__ import annotations

import typing
from dataclasses import replace
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from sluice.planner import join_cost, joins
from sluice.planner.rules import push_aggregates
from sluice.protocol.codec import decode
from sluice.protocol.scan import AggregateRequest, JoinRequest
from sluice.pushdown.levels import Level
from sluice.pushdown.pushed import Pushed
from sluice.scan.join import JoinRead, Output
from sluice.scan.query import OrderKey
from sluice.scan.spec import ScanSpec
from sluice.scan.statistics import TableStatistics
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.mysql import MysqlSource
from sluice.sources.postgres import PostgresSource
from sluice.sources.sqlite import SqliteSource
from sluice.types import Column, SparkType, TableSchema, table_to_dict


def _column(name: str, spark: str, remote: str, **extra: Any) -> Column:
    return Column(name=name, type=SparkType(spark), remote_type=remote, **extra)


PG = PostgresSource("pg", "postgresql://u@localhost/db")
MY = MysqlSource("my", "mysql://u@localhost/db")
LITE = SqliteSource("lite", "sqlite:///tmp/unit-joins.db")
DUCK = DuckdbSource("duck", "duckdb:///tmp/unit-joins.duckdb")

PG_A = TableSchema(
    "pg",
    "public",
    "a",
    (
        _column("id", "int", "integer"),
        _column("k", "bigint", "bigint"),
        _column("t", "string", "text", collation="en-US-x-icu"),
        _column("p", "string", "character(5)", collation="C", padded=True),
        _column("f", "double", "double precision"),
    ),
)
PG_B = TableSchema(
    "pg",
    "public",
    "b",
    (
        _column("id", "int", "integer"),
        _column("d", "decimal(10,2)", "numeric(10,2)"),
        _column("t", "string", "text", collation="C"),
        _column("f", "double", "double precision"),
    ),
)
MY_A = TableSchema(
    "my",
    "db",
    "a",
    (
        _column("id", "int", "int"),
        _column("s", "string", "varchar(10)", collation="utf8mb4_general_ci", padded=True, case_insensitive=True),
    ),
)
MY_B = TableSchema(
    "my",
    "db",
    "b",
    (
        _column("id", "int", "int"),
        _column("s", "string", "varchar(10)", collation="utf8mb4_general_ci", padded=True, case_insensitive=True),
    ),
)
LITE_LOOSE = TableSchema("lite", None, "a", (_column("id", "int", "INTEGER"),))
LITE_STRICT = TableSchema("lite", None, "a", (_column("id", "bigint", "INTEGER STRICT"),))
DUCK_A = TableSchema("duck", None, "a", (_column("id", "int", "INTEGER"), _column("t", "string", "VARCHAR")))
DUCK_B = TableSchema("duck", None, "b", (_column("id", "int", "INTEGER"), _column("t", "string", "VARCHAR")))


def ref(name: str) -> dict[str, Any]:
    return {"ref": [name]}


def eq(left: Any, right: Any, op: str = "=") -> dict[str, Any]:
    return {"op": op, "args": [left, right]}


def cast(node: Any, source: str, target: str) -> dict[str, Any]:
    return {"op": "CAST", "from": source, "to": target, "args": [node]}


def side(
    table: TableSchema, columns: list[tuple[str, str | None]], verdicts: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "catalog": table.source,
        "table": {"table": table_to_dict(table)},
        "verdicts": verdicts or [],
        "columns": [{"name": name, "alias": alias} for name, alias in columns],
    }


def offer(
    left: dict[str, Any], right: dict[str, Any], condition: Any, kind: str = "INNER_JOIN", same: bool = True
) -> dict[str, Any]:
    return {"left": left, "right": right, "join_type": kind, "condition": condition, "same_source": same}


def decide(source: Any, request: dict[str, Any]) -> joins.Decision:
    """The planner's decision on ``request`` as the bridge decodes it (sluice/protocol)."""
    return joins.decide(source, decode(JoinRequest, request, "the 'join' request"))


def test_pg_inner_join_on_int_keys_is_pushed_with_both_filters() -> None:
    exact = {
        "sql": "id > 1",
        "level": "EXACT",
        "reason": "r",
        "remote_sql": '"id" > 1',
        "pushed": Pushed(tree=typing.cast(exp.Expression, sqlglot.parse_one('"id" > 1', read="postgres"))).to_dict(),
    }
    request = offer(
        side(PG_A, [("id", None), ("k", None)], [exact]),
        side(PG_B, [("id", "id_1"), ("d", None)], [exact]),
        eq(ref("id"), ref("id_1")),
    )
    decision = decide(PG, request)
    assert decision.pushed, decision
    assert [v.level for v in decision.verdicts] == [Level.EXACT]
    assert decision.verdicts[0].sql == "left.id = right.id"
    assert "sluice_" not in decision.verdicts[0].reason
    assert decision.join is not None
    spec = ScanSpec.for_source(PG, PG_A, ("id", "k", "id_1", "d"), join=decision.join)
    query = spec.query(PG)
    assert query == (
        'SELECT "sluice_l0" AS "id", "sluice_l1" AS "k", "sluice_r0" AS "id_1", "sluice_r1"::text AS "d" '
        'FROM (SELECT "id" AS "sluice_l0", "k" AS "sluice_l1" FROM "public"."a" WHERE ("id" > 1)) AS "sluice_l" '
        'INNER JOIN (SELECT "id" AS "sluice_r0", "d" AS "sluice_r1" FROM "public"."b" WHERE ("id" > 1)) AS "sluice_r" '
        'ON ("sluice_l0" = "sluice_r0")'
    )
    assert ScanSpec.from_json(spec.to_json()) == spec
    assert [f.name for f in spec.arrow_schema()] == ["id", "k", "id_1", "d"]


def test_right_join_is_read_as_the_mirrored_left_join() -> None:
    request = offer(
        side(DUCK_A, [("id", None)]), side(DUCK_B, [("id", "id_1")]), eq(ref("id"), ref("id_1")), "RIGHT_OUTER_JOIN"
    )
    decision = decide(DUCK, request)
    assert decision.join is not None
    query = decision.join.query(DUCK, ("id", "id_1"))
    assert query.index('FROM "b"') < query.index('FROM "a"')
    assert "LEFT OUTER JOIN" in query and "RIGHT" not in query


@pytest.mark.parametrize(
    ("source", "expected"),
    [(PG, "IS NOT DISTINCT FROM"), (DUCK, "IS NOT DISTINCT FROM")],
)
def test_null_safe_keys_are_spelled_per_dialect(source: Any, expected: str) -> None:
    left, right = (PG_A, PG_B) if source is PG else (DUCK_A, DUCK_B)
    request = offer(side(left, [("id", None)]), side(right, [("id", "id_1")]), eq(ref("id"), ref("id_1"), "<=>"))
    decision = decide(source, request)
    assert decision.pushed and decision.join is not None
    assert expected in decision.join.query(source, ("id", "id_1"))


def test_mysql_ci_pad_space_text_keys_compare_binary_no_pad() -> None:
    request = offer(side(MY_A, [("s", None)]), side(MY_B, [("s", "s_1")]), eq(ref("s"), ref("s_1"), "<=>"))
    decision = decide(MY, request)
    assert decision.pushed, decision
    assert decision.join is not None
    on = decision.join.query(MY, ("s", "s_1")).partition(" ON ")[2]
    assert "nopad_bin" in on and "<=>" in on


def test_pg_char_padding_key_is_refused() -> None:
    request = offer(side(PG_A, [("p", None)]), side(PG_B, [("t", None)]), eq(ref("p"), ref("t")))
    decision = decide(PG, request)
    assert not decision.pushed
    assert decision.verdicts[0].level is not Level.EXACT
    assert "pad" in decision.verdicts[0].reason.lower() or "character" in decision.verdicts[0].reason


def test_float_keys_are_refused_with_spark_normalising_nan_and_negative_zero() -> None:
    request = offer(side(PG_A, [("f", None)]), side(PG_B, [("f", "f_1")]), eq(ref("f"), ref("f_1")))
    decision = decide(PG, request)
    assert not decision.pushed
    assert decision.verdicts[0].level is Level.UNSUPPORTED
    assert "NaN" in decision.verdicts[0].reason


def test_int_against_decimal_key_is_pushed_where_the_engine_compares_numbers_exactly() -> None:
    condition = eq(cast(ref("id"), "int", "decimal(12,2)"), cast(ref("d"), "decimal(10,2)", "decimal(12,2)"))
    decision = decide(PG, offer(side(PG_A, [("id", None)]), side(PG_B, [("d", None)]), condition))
    assert decision.pushed, decision


def test_mysql_pushes_an_int_key_spark_widens_and_refuses_a_cast_it_cannot_spell() -> None:
    """Spark widens an int key compared with a bigint one; MySQL computes integers as BIGINT, so the
    widened key is the column itself. A cast MySQL cannot spell as Spark does keeps the join with Spark."""
    big = TableSchema("my", "db", "b", (_column("id", "bigint", "bigint"),))
    widened = decide(
        MY,
        offer(
            side(MY_A, [("id", None)]), side(big, [("id", "id_1")]), eq(cast(ref("id"), "int", "bigint"), ref("id_1"))
        ),
    )
    assert widened.pushed, widened
    text = TableSchema("my", "db", "s", (_column("id", "string", "varchar(20)"),))
    as_text = eq(cast(ref("id"), "int", "string"), ref("id_1"))
    refused = decide(MY, offer(side(MY_A, [("id", None)]), side(text, [("id", "id_1")]), as_text))
    assert not refused.pushed
    assert "CAST(int AS string)" in refused.verdicts[0].reason


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        (
            offer(side(PG_A, [("id", None)]), side(PG_B, [("id", "id_1")]), eq(ref("id"), ref("id_1")), same=False),
            "different sources",
        ),
        (
            offer(
                side(PG_A, [("id", None)]), side(PG_B, [("id", "id_1")]), eq(ref("id"), ref("id_1")), "FULL_OUTER_JOIN"
            ),
            "join type",
        ),
        (
            offer(
                side(PG_A, [("id", None)]), side(PG_B, [("id", "id_1")]), {"op": "<", "args": [ref("id"), ref("id_1")]}
            ),
            "key equalities",
        ),
        (
            offer(side(PG_A, [("id", None), ("k", None)]), side(PG_B, [("id", "id_1")]), eq(ref("id"), ref("k"))),
            "each side",
        ),
        (
            offer(
                side(PG_A, [("id", None)], [{"sql": "t = 'a'", "level": "INEXACT", "reason": "r", "remote_sql": "x"}]),
                side(PG_B, [("id", "id_1")]),
                eq(ref("id"), ref("id_1")),
            ),
            "not EXACT",
        ),
        (offer(side(PG_A, [("id", None)]), side(PG_B, [("id", "id_1")]), None), "without a condition"),
    ],
)
def test_refusals_name_their_reason(request_: dict[str, Any], why: str) -> None:
    decision = decide(PG, request_)
    assert not decision.pushed
    assert decision.note is not None and why in decision.note


def test_sqlite_int_keys_are_refused_strict_bigint_keys_pushed() -> None:
    """An int column may hold what int cannot (SQLite integers are 64-bit): the reference read fails on such a row, a join could skip it."""
    other = TableSchema("lite", None, "b", LITE_STRICT.columns)
    loose = decide(
        LITE, offer(side(LITE_LOOSE, [("id", None)]), side(other, [("id", "id_1")]), eq(ref("id"), ref("id_1")))
    )
    assert not loose.pushed
    assert loose.note is not None and "int cannot" in loose.note
    strict = decide(
        LITE, offer(side(LITE_STRICT, [("id", None)]), side(other, [("id", "id_1")]), eq(ref("id"), ref("id_1")))
    )
    assert strict.pushed, strict
    assert strict.join is not None and 'ON ("sluice_l0" = "sluice_r0")' in strict.join.query(LITE, ("id", "id_1"))


def _cost_join(kind: str = "INNER", rows: tuple[int, int] = (1_000_000, 100_000)) -> JoinRead:
    """bench's shape: orders (1% filter on status) joined with customers on customer_id = id."""
    orders = TableSchema(
        "my",
        "db",
        "orders",
        (
            _column("id", "bigint", "bigint"),
            _column("customer_id", "int", "int"),
            _column("status", "string", "varchar(16)"),
        ),
        row_estimate=rows[0],
    )
    customers = TableSchema(
        "my",
        "db",
        "customers",
        (_column("id", "int", "int"), _column("segment", "string", "varchar(4)")),
        row_estimate=rows[1],
    )
    status = Pushed(tree=typing.cast(exp.Expression, sqlglot.parse_one("`status` = 'refunded'", read="mysql")))
    outputs = (Output("id", "left", "id"), Output("id_1", "right", "id"))
    return JoinRead(kind, orders, customers, (status,), (), ("id", "customer_id"), ("id",), (), outputs)


KEYS: dict[str, tuple[str, ...]] = {"left": ("customer_id",), "right": ("id",)}


def _stats(indexed: set[str], histograms: tuple[str, ...] = ()) -> TableStatistics:
    return TableStatistics(
        frozenset(indexed),
        frozenset(histograms),
        "`ANALYZE TABLE db.{table} PERSISTENT FOR COLUMNS ({columns}) INDEXES ()`",
    )


def test_a_filter_the_source_cannot_estimate_keeps_a_large_join_with_spark() -> None:
    """bench joins, MariaDB: no statistics for status, so MariaDB drove the join from customers (12.3 s vs Spark's 5.0 s)."""
    why = join_cost.decide(_cost_join(), _stats({"id", "customer_id"}), _stats({"id"}), KEYS)
    assert why is not None
    assert "no statistics for orders.status" in why and "Spark joins" in why
    assert "ANALYZE TABLE db.orders PERSISTENT FOR COLUMNS (status) INDEXES ()" in why
    # a histogram (or an index starting with the column) lets the source estimate the filter: pushed
    assert join_cost.decide(_cost_join(), _stats({"id", "customer_id"}, ("status",)), _stats({"id"}), KEYS) is None
    assert join_cost.decide(_cost_join(), _stats({"id", "customer_id", "status"}), _stats({"id"}), KEYS) is None


def test_a_join_without_an_index_the_source_can_probe_stays_with_spark() -> None:
    estimated = ("status",)
    assert "no index on the join key" in str(
        join_cost.decide(_cost_join(), _stats(set(), estimated), _stats(set()), KEYS)
    )
    # INNER: either side's index will do
    assert join_cost.decide(_cost_join(), _stats({"customer_id"}, estimated), _stats(set()), KEYS) is None
    # LEFT: only the right side is probed; RIGHT (read as the mirrored LEFT): only the left
    left = join_cost.decide(_cost_join("LEFT"), _stats({"customer_id"}, estimated), _stats(set()), KEYS)
    assert left is not None and "customers(id)" in left
    assert join_cost.decide(_cost_join("RIGHT"), _stats({"customer_id"}, estimated), _stats(set()), KEYS) is None


def test_small_joins_are_pushed_whatever_the_statistics() -> None:
    """Below SMALL_JOIN_PAIRS row pairs any plan is quick: the rule asks the source nothing (no estimate: nothing to weigh)."""
    small = _cost_join(rows=(2_000, 5_000))
    assert join_cost.decide(small, _stats(set()), _stats(set()), KEYS) is None
    assert join_cost.slower_at_source(MY, small, KEYS) is None  # MY has no server: it is not asked
    assert join_cost.slower_at_source(MY, replace(small, left=replace(small.left, row_estimate=None)), KEYS) is None


def test_sources_whose_planner_needs_no_check_push_large_joins() -> None:
    assert PG.statistics(PG_A) is None and LITE.statistics(LITE_STRICT) is None and DUCK.statistics(DUCK_A) is None


# ---------------------------------------------------------------- above a pushed join
def _pg_join() -> JoinRead:
    """``a JOIN b ON a.id = b.id`` on PostgreSQL, reading a.id, a.t (ICU text), b.id as id_1, b.d (numeric), b.t as t_1."""
    decision = decide(
        PG,
        offer(
            side(PG_A, [("id", None), ("t", None)]),
            side(PG_B, [("id", "id_1"), ("d", None), ("t", "t_1")]),
            eq(ref("id"), ref("id_1")),
        ),
    )
    assert decision.join is not None, decision
    return decision.join


def _aggregate_over(join: JoinRead, offered: dict[str, Any]) -> Any:
    request = decode(
        AggregateRequest,
        {"table": {"table": table_to_dict(PG_A)}, "join": join.to_dict(), "aggregation": offered},
        "the 'aggregate' request",
    )
    return push_aggregates.decide(PG, request, offered)


def test_a_grouped_aggregate_over_a_pushed_join_groups_the_joined_rows_at_the_source() -> None:
    join = _pg_join()
    offered = {
        "group_by": [ref("t_1")],
        "aggregates": [
            {"fn": "COUNT_STAR", "args": []},
            {"fn": "SUM", "args": [ref("d")]},
            {"fn": "MAX", "args": [ref("t")]},
        ],
    }
    decision = _aggregate_over(join, offered)
    assert decision.complete, decision
    spec = ScanSpec.for_source(
        PG, PG_A, tuple(o.name for o in join.outputs), join=join, aggregate=decision.aggregation, partitions=1
    )
    assert spec.query(PG) == (
        'SELECT "t_1" AS "sluice_0", COUNT(*) AS "sluice_1", SUM("d")::text AS "sluice_2", '
        'MAX(("t" COLLATE "C")) AS "sluice_3" '
        'FROM (SELECT "sluice_l"."sluice_l0" AS "id", "sluice_l"."sluice_l1" AS "t", "sluice_r"."sluice_r0" AS "id_1", '
        '"sluice_r"."sluice_r1" AS "d", "sluice_r"."sluice_r2" AS "t_1" '
        'FROM (SELECT "id" AS "sluice_l0", "t" AS "sluice_l1" FROM "public"."a") AS "sluice_l" '
        'INNER JOIN (SELECT "id" AS "sluice_r0", "d" AS "sluice_r1", "t" AS "sluice_r2" FROM "public"."b") AS "sluice_r" '
        'ON ("sluice_l0" = "sluice_r0")) AS "sluice_j" GROUP BY "t_1"'
    )
    assert [f.name for f in spec.arrow_schema()] == ["sluice_0", "sluice_1", "sluice_2", "sluice_3"]


def test_an_aggregate_over_a_pushed_join_is_refused_where_it_is_refused_on_one_table() -> None:
    join = _pg_join()
    floating = _aggregate_over(
        join, {"group_by": [], "aggregates": [{"fn": "SUM", "args": [ref("id")]}, {"fn": "MIN", "args": [ref("t")]}]}
    )
    assert floating.complete  # int SUM and text MIN (under COLLATE "C") are exact
    padded = decide(
        PG, offer(side(PG_A, [("id", None), ("p", None)]), side(PG_B, [("id", "id_1")]), eq(ref("id"), ref("id_1")))
    )
    assert padded.join is not None
    refused = _aggregate_over(padded.join, {"group_by": [ref("p")], "aggregates": [{"fn": "COUNT_STAR", "args": []}]})
    assert not refused.complete
    assert "blank-padded" in refused.verdicts[0].reason


def test_avg_over_a_join_with_aliased_columns_stays_with_spark() -> None:
    """Spark names the SUM/COUNT it makes of a declined AVG by the tables' own names: ``t`` could be either side's."""
    join = _pg_join()
    averaged = [{"fn": "AVG", "args": [ref("id_1")]}]
    offered = {"group_by": [ref("t")], "aggregates": [{"fn": "SUM", "args": [ref("id")]}], "averaged": averaged}
    decision = _aggregate_over(join, offered)
    assert not decision.complete
    assert decision.note is not None and "right.id as id_1" in decision.note


def test_a_top_n_over_a_pushed_join_orders_by_the_subqueries_columns() -> None:
    """``d`` is selected as ``"sluice_r1"::text AS "d"``: a bare ORDER BY "d" would sort its text."""
    join = _pg_join()
    order = (OrderKey("d", True, False), OrderKey("t", False, True))
    spec = ScanSpec.for_source(PG, PG_A, ("id", "d", "t"), join=join, order=order, limit=5, partitions=1)
    query = spec.query(PG)
    assert query.endswith(
        'ORDER BY "sluice_r"."sluice_r1" DESC NULLS LAST, ("sluice_l"."sluice_l1" COLLATE "C") ASC NULLS FIRST LIMIT 5'
    )
    assert '"sluice_r1"::text AS "d"' in query
