"""Spark's V2 expressions (as the catalog layer sends them) become the classifier's trees:
constants of exactly Spark's type, casts pushed only where they cannot change a value."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pytest

from sluice.dialects.postgres import PostgresDialect
from sluice.planner.catalog import CatalogPlanner
from sluice.protocol.codec import decode
from sluice.protocol.scan import FiltersRequest
from sluice.pushdown import constants
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import Unsupported
from sluice.pushdown.translator import classify_conjuncts
from sluice.scan import v2
from sluice.sources.postgres import PostgresSource
from sluice.types import table_to_dict
from tests.unit.tables import PG_TABLE

pytestmark = pytest.mark.unit


def ref(name: str) -> dict:
    return {"ref": [name]}


def lit(value: str | None, kind: str) -> dict:
    return {"lit": value, "type": kind}


def op(name: str, *args: dict, **extra: str) -> dict:
    return {"op": name, "args": list(args), **extra}


@pytest.mark.parametrize(
    "text,kind,value,spark",
    [
        ("5", "integer", 5, "int"),
        ("-9223372036854775808", "long", -9223372036854775808, "bigint"),
        ("7", "byte", 7, "tinyint"),
        ("0.1", "float", constants.float32(0.1), "float"),
        ("-0.0", "double", -0.0, "double"),
        ("1.50", "decimal(3,2)", Decimal("1.50"), "decimal(3,2)"),
        ("a'b", "string", "a'b", "string"),
        ("19782", "date", dt.date(2024, 2, 29), "date"),
        ("0", "timestamp", dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), "timestamp"),
        ("1500000", "timestamp_ntz", dt.datetime(1970, 1, 1, 0, 0, 1, 500000), "timestamp_ntz"),
        ("true", "boolean", True, "boolean"),
        (None, "integer", None, "int"),
    ],
)
def test_literals_keep_sparks_exact_type(text: str | None, kind: str, value: object, spark: str) -> None:
    constant = constants.evaluate(v2.literal(text, kind), "UTC")
    assert constant is not None and constant.type.name == spark and constant.value == value
    if isinstance(value, float):
        assert math.copysign(1, constant.value) == math.copysign(1, value)


def test_nan_and_infinity_literals() -> None:
    nan, minus_infinity = (constants.evaluate(v2.literal(t, "double"), "UTC") for t in ("NaN", "-Infinity"))
    assert nan is not None and math.isnan(nan.value)
    assert minus_infinity is not None and minus_infinity.value == -math.inf


@pytest.mark.parametrize(
    "node,message",
    [
        (lit("100000000000", "date"), "outside what Sluice represents"),
        (op("UPPERCASE_SOMETHING", ref("name")), "UPPERCASE_SOMETHING is evaluated by Spark"),
        (op("TOO_DEEP", text="a predicate nested more than 100 levels deep"), "nested more than 100 levels"),
        ({"ref": ["s", "field"]}, "nested field s.field"),
        (lit("x", "string collate UTF8_LCASE"), "compared by Spark"),
    ],
)
def test_what_has_no_tree_is_unsupported_with_why(node: dict, message: str) -> None:
    with pytest.raises(Unsupported, match=message):
        v2.to_tree(node)


def classify(node: dict) -> tuple[Level, str | None]:
    [verdict] = classify_conjuncts(PostgresDialect(), PG_TABLE, [v2.to_tree(node)], "UTC")
    return verdict.level, verdict.remote_sql


@pytest.mark.parametrize(
    "node,level,remote",
    [
        (op("=", ref("i"), lit("1", "integer")), Level.EXACT, '"i" = 1'),
        # Spark's own cast for int_col = 1.5: decimal widening keeps the column as it is
        (
            op("=", op("CAST", ref("i"), **{"from": "int", "to": "decimal(11,1)"}), lit("1.5", "decimal(11,1)")),
            Level.EXACT,
            None,
        ),
        # float to double: the dialect's cast, as Spark compares
        (op(">", op("CAST", ref("r"), **{"from": "float", "to": "double"}), lit("0.1", "double")), Level.EXACT, None),
        # a narrowing cast may fail in Spark (ANSI): left to Spark
        (
            op("=", op("CAST", ref("id"), **{"from": "bigint", "to": "int"}), lit("1", "integer")),
            Level.UNSUPPORTED,
            None,
        ),
        (
            op(
                "OR",
                op("=", ref("i"), lit("1", "integer")),
                op("=", ref("i"), lit("2", "integer")),
                op("IS_NULL", ref("i")),
            ),
            Level.EXACT,
            None,
        ),
        (op("IN", ref("i"), lit("1", "integer"), lit(None, "integer")), Level.EXACT, None),
        (op("STARTS_WITH", ref("code"), lit("a%", "string")), Level.EXACT, None),
    ],
)
def test_v2_conjuncts_classify(node: dict, level: Level, remote: str | None) -> None:
    got, sql = classify(node)
    assert got is level, sql
    if remote is not None:
        assert sql == remote


def test_a_flat_chain_of_thousands_is_rebuilt_balanced() -> None:
    node = op("OR", *[op("=", ref("i"), lit(str(k), "integer")) for k in range(3000)])
    level, sql = classify(node)
    assert level is Level.EXACT and sql is not None and sql.count("(") < 20_000


def test_the_planner_answers_one_verdict_per_offered_conjunct() -> None:
    request: dict[str, Any] = {
        "catalog": "pg",
        "options": {"url": "postgresql://root@127.0.0.1:1/test"},
        "session_zone": "UTC",
        "table": {"table": table_to_dict(PG_TABLE)},
        "predicates": [
            op("=", ref("i"), lit("1", "integer")),
            op("WEIRD", ref("i")),
            op("=", ref("ch"), lit("a", "string")),
        ],
    }
    planner = CatalogPlanner()
    # classifying opens no connection: the real source, never checked, answers as in Spark
    planner.remember("pg", request["options"], PostgresSource("pg", request["options"]["url"]))
    answer = planner.filters(decode(FiltersRequest, request, "the 'filters' request"))
    levels = [v["level"] for v in answer.verdicts]
    assert levels == ["EXACT", "UNSUPPORTED", "INEXACT"]
