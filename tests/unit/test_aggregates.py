"""Aggregate classification and the SQL it generates, per dialect (no server, no Spark)."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.planner import aggregates
from sluice.pushdown.levels import Level, Verdict
from sluice.scan.aggregation import Decision
from sluice.scan.spec import ScanSpec
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.mysql import MysqlSource
from sluice.sources.postgres import PostgresSource
from sluice.sources.sqlite import SqliteSource
from sluice.types import Column, SparkType, TableSchema


def _column(name: str, spark: str, remote: str, **extra: Any) -> Column:
    return Column(name=name, type=SparkType(spark), remote_type=remote, **extra)


PG = PostgresSource("pg", "postgresql://u@localhost/db")
MY = MysqlSource("my", "mysql://u@localhost/db")
LITE = SqliteSource("lite", "sqlite:///tmp/unit-aggregates.db")
DUCK = DuckdbSource("duck", "duckdb:///tmp/unit-aggregates.duckdb")

PG_TABLE = TableSchema(
    "pg",
    "public",
    "t",
    (
        _column("id", "bigint", "bigint"),
        _column("i", "int", "integer"),
        _column("d", "decimal(10,2)", "numeric(10,2)"),
        _column("f", "double", "double precision"),
        _column("t", "string", "text", collation="en-US-x-icu"),
        _column("c", "string", "text", collation="C"),
        _column("p", "string", "character(5)", collation="C", padded=True),
        _column("flag", "boolean", "boolean"),
    ),
)
MY_TABLE = TableSchema(
    "my",
    "db",
    "t",
    (
        _column("id", "bigint", "bigint"),
        _column("s", "string", "varchar(10)", collation="utf8mb4_general_ci"),
        _column("flag", "boolean", "tinyint(1)"),
        _column("y", "int", "year(4)"),
    ),
)
LITE_LOOSE = TableSchema("lite", None, "t", (_column("id", "bigint", "INTEGER"), _column("i", "bigint", "INTEGER")))
LITE_STRICT = TableSchema(
    "lite", None, "t", (_column("id", "bigint", "INTEGER STRICT"), _column("i", "bigint", "INTEGER STRICT"))
)
DUCK_TABLE = TableSchema("duck", None, "t", (_column("u", "decimal(20,0)", "UBIGINT"), _column("i", "int", "INTEGER")))


def ref(name: str) -> dict[str, list[str]]:
    return {"ref": [name]}


def fn(name: str, *args: str, distinct: bool = False) -> dict[str, object]:
    return {"fn": name, "distinct": distinct, "args": [ref(a) for a in args]}


def decide(source, table, keys=(), functions=(), filters=(), ansi=True):
    offered = {"group_by": [ref(k) for k in keys], "aggregates": list(functions)}
    return aggregates.decide(source, table, offered, list(filters), ansi)


def test_grouped_count_and_sum_are_one_exact_query() -> None:
    decision = decide(PG, PG_TABLE, ["i"], [fn("COUNT_STAR"), fn("SUM", "d"), fn("MIN", "c"), fn("MAX", "t")])
    assert decision.complete, decision.verdicts
    assert [v.level for v in decision.verdicts] == [Level.EXACT] * 5
    spec = ScanSpec.for_source(PG, PG_TABLE, ("id",), aggregate=decision.aggregation)
    assert spec.query(PG) == (
        'SELECT "i" AS "sluice_0", COUNT(*) AS "sluice_1", SUM("d")::text AS "sluice_2", MIN("c") AS "sluice_3", '
        'MAX(("t" COLLATE "C")) AS "sluice_4" FROM "public"."t" GROUP BY "i"'
    )
    assert [o.type.name for o in decision.aggregation.outputs] == ["int", "bigint", "decimal(38,2)", "string", "string"]
    assert ScanSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize(
    "function, reason",
    [
        (fn("SUM", "f"), "order of additions"),
        (fn("COUNT", "f", distinct=True), "-0.0"),
        (fn("MIN", "flag"), "not pushed"),
        (fn("MAX", "p"), "blank-padded"),
        (fn("VAR_POP", "i"), "only COUNT, SUM, MIN, MAX"),
    ],
)
def test_unfaithful_aggregates_are_refused_with_a_reason(function: dict[str, object], reason: str) -> None:
    decision = decide(PG, PG_TABLE, [], [fn("COUNT_STAR"), function])
    assert not decision.complete and decision.aggregation is None
    assert decision.verdicts[1].level is Level.UNSUPPORTED and reason in decision.verdicts[1].reason


def test_float_grouping_keys_are_refused() -> None:
    decision = decide(PG, PG_TABLE, ["f"], [fn("COUNT_STAR")])
    assert not decision.complete and "NaN" in decision.verdicts[0].reason


def test_avg_is_left_for_spark_to_rewrite() -> None:
    decision = decide(PG, PG_TABLE, [], [fn("AVG", "i")])
    assert not decision.complete and "SUM and COUNT" in (decision.note or "")


def test_the_sum_spark_makes_of_an_avg_follows_avgs_double_sum() -> None:
    """Spark's rewrite of avg(x) is a plain SUM(x): the offer's ``averaged`` list tells it apart.
    Spark's AVG adds doubles, so the exact sum is pushed only where it equals that: decimals and
    integers of 16 bits or fewer; a user's SUM(i) beside no AVG is pushed as before."""
    table = TableSchema("pg", "public", "t", (*PG_TABLE.columns, _column("s", "smallint", "smallint")))

    def rewritten(column: str, distinct: bool = False) -> Decision:
        offered = {
            "group_by": [],
            "aggregates": [fn("SUM", column, distinct=distinct), fn("COUNT", column, distinct=distinct)],
            "averaged": [fn("AVG", column, distinct=distinct)],
        }
        return aggregates.decide(PG, table, offered, [], True)

    for refused in (rewritten("i"), rewritten("id"), rewritten("i", distinct=True)):
        assert not refused.complete
        assert "adds the values as doubles" in refused.verdicts[0].reason, refused.verdicts
    for pushed in (rewritten("s"), rewritten("d"), rewritten("s", distinct=True)):
        assert pushed.complete, pushed.verdicts
        assert "AVG's sum" in pushed.verdicts[0].reason
    assert decide(PG, table, [], [fn("SUM", "i"), fn("COUNT", "i")]).complete
    other = aggregates.decide(
        PG, table, {"group_by": [], "aggregates": [fn("SUM", "i")], "averaged": [fn("AVG", "s")]}, [], True
    )
    assert other.complete, other.verdicts


def test_sum_needs_ansi_mode() -> None:
    assert decide(PG, PG_TABLE, [], [fn("SUM", "i")], ansi=True).complete
    off = decide(PG, PG_TABLE, [], [fn("SUM", "i")], ansi=False)
    assert not off.complete and "ansi" in off.verdicts[0].reason


def test_an_inexact_filter_keeps_the_aggregate_with_spark() -> None:
    inexact = Verdict("p = 'a'", Level.INEXACT, "padded", "\"p\" = 'a'")
    decision = decide(PG, PG_TABLE, [], [fn("COUNT_STAR")], filters=[inexact])
    assert not decision.complete and "not EXACT" in (decision.note or "")


def test_mysql_groups_and_orders_text_under_its_binary_no_pad_collation() -> None:
    decision = decide(MY, MY_TABLE, ["s"], [fn("COUNT", "s", distinct=True), fn("MIN", "s")])
    assert decision.complete, decision.verdicts
    spec = ScanSpec.for_source(MY, MY_TABLE, ("id",), aggregate=decision.aggregation)
    assert spec.query(MY).count("utf8mb4_nopad_bin") == 4  # key, its GROUP BY, COUNT(DISTINCT), MIN


def test_mysql_boolean_and_year_columns_are_refused() -> None:
    assert not decide(MY, MY_TABLE, ["flag"], [fn("COUNT_STAR")]).complete
    decision = decide(MY, MY_TABLE, [], [fn("MAX", "y")])
    assert not decision.complete and "year" in decision.verdicts[0].reason


def test_sqlite_aggregates_only_strict_tables_columns() -> None:
    assert decide(LITE, LITE_LOOSE, [], [fn("COUNT_STAR")]).complete
    loose = decide(LITE, LITE_LOOSE, ["i"], [fn("COUNT_STAR")])
    assert not loose.complete and "STRICT" in loose.verdicts[0].reason
    assert decide(LITE, LITE_STRICT, ["i"], [fn("COUNT_STAR"), fn("SUM", "id"), fn("MAX", "i")]).complete


def test_duckdb_widened_types_are_refused() -> None:
    decision = decide(DUCK, DUCK_TABLE, [], [fn("SUM", "u")])
    assert not decision.complete and "UBIGINT" in decision.verdicts[0].reason
    assert decide(DUCK, DUCK_TABLE, ["i"], [fn("SUM", "i")]).complete


def test_an_expression_key_is_pushed_where_the_classifier_pushes_it() -> None:
    offered = {
        "group_by": [{"op": "+", "args": [ref("i"), {"lit": "1", "type": "int"}]}],
        "aggregates": [fn("COUNT_STAR")],
    }
    decision = aggregates.decide(PG, PG_TABLE, offered, [], True)
    assert decision.complete, decision.verdicts
    assert decision.verdicts[0].remote_sql == 'GROUP BY ("i" + CAST(1 AS INT))'


# ---------------------------------------------------------------- expressions as keys and arguments
def _mod(name: str, by: int, kind: str = "integer") -> dict[str, object]:
    return {"op": "%", "args": [ref(name), {"lit": str(by), "type": kind}]}


def _plus(left: str, right: str) -> dict[str, object]:
    return {"op": "+", "args": [ref(left), ref(right)]}


def _expression_decision(source, table, key, argument, ansi=True):
    offered = {
        "group_by": [key],
        "aggregates": [{"fn": "SUM", "distinct": False, "args": [argument]}, {"fn": "COUNT_STAR", "args": []}],
    }
    return aggregates.decide(source, table, offered, [], ansi)


def test_an_expression_the_classifier_pushes_exact_is_a_grouping_key_and_an_argument() -> None:
    decision = _expression_decision(PG, PG_TABLE, _mod("i", 10), _plus("i", "i"))
    assert decision.complete, decision.verdicts
    key, total, _ = decision.verdicts
    assert key.sql == "GROUP BY `i` % 10" and "computed by the source exactly as Spark" in key.reason
    assert total.sql == "sum(`i` + `i`)"
    spec = ScanSpec.for_source(PG, PG_TABLE, ("id",), aggregate=decision.aggregation)
    assert spec.query(PG) == (
        'SELECT ("i" % CAST(10 AS INT)) AS "sluice_0", SUM(("i" + "i"))::text AS "sluice_1", COUNT(*) AS "sluice_2" '
        'FROM "public"."t" GROUP BY ("i" % CAST(10 AS INT))'
    )
    assert decision.aggregation is not None and decision.aggregation.outputs[1].column is None


def test_an_expression_the_classifier_leaves_to_spark_stays_with_spark_with_its_reason() -> None:
    # SQLite pushes no % (its integer overflow becomes REAL); division is never pushed
    decision = _expression_decision(LITE, LITE_STRICT, _mod("i", 10, "bigint"), ref("i"))
    assert not decision.complete and decision.verdicts[0].level is Level.UNSUPPORTED
    assert "%" in decision.verdicts[0].sql, decision.verdicts[0]
    divided = {"op": "/", "args": [ref("i"), {"lit": "2", "type": "int"}]}
    decision = _expression_decision(PG, PG_TABLE, divided, ref("i"))
    assert not decision.complete and decision.verdicts[0].level is Level.UNSUPPORTED
    # a float expression is no key; text of a locale collation no MIN through an expression
    floats = _expression_decision(PG, PG_TABLE, {"op": "ABS", "args": [ref("f")]}, ref("i"))
    assert not floats.complete


def test_expressions_are_not_pushed_without_ansi() -> None:
    decision = _expression_decision(DUCK, DUCK_TABLE, _mod("i", 10), ref("i"), ansi=False)
    assert not decision.complete
    assert "ansi" in decision.verdicts[0].reason


def test_a_constant_is_never_a_pushed_key() -> None:
    """GROUP BY 1 names the first output in SQL: a key that reads no column stays with Spark."""
    for source, table in ((PG, PG_TABLE), (MY, MY_TABLE), (DUCK, DUCK_TABLE)):
        decision = _expression_decision(
            source, table, {"lit": "1", "type": "int"}, ref("i" if source is not MY else "id")
        )
        assert not decision.complete and "constant" in decision.verdicts[0].reason, decision.verdicts
