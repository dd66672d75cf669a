"""Substrait extended expressions, as pyarrow.substrait writes them, read as Spark predicates."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.substrait as ps
import pytest

from sluice.dialects.postgres import PostgresDialect
from sluice.flight import substrait
from sluice.flight.protocol import RequestError
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator
from sluice.types import TableSchema
from tests.unit.tables import column

TABLE = TableSchema(
    "pg",
    "public",
    "t",
    (
        column("x", "bigint", "bigint"),
        column("s", "string", "text", collation="C"),
        column("d", "decimal(10,2)", "numeric(10,2)"),
        column("ts", "timestamp", "timestamp with time zone"),
        column("dt", "date", "date"),
        column("f", "double", "double precision"),
    ),
)
#: the client's view of the table (names resolve through the message's own base schema)
SCHEMA = pa.schema(
    [
        ("x", pa.int64()),
        ("s", pa.string()),
        ("d", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("dt", pa.date32()),
        ("f", pa.float64()),
    ]
)


def _decode(*expressions: pc.Expression, schema: pa.Schema = SCHEMA) -> list:
    payload = bytes(ps.serialize_expressions(list(expressions), [f"e{i}" for i in range(len(expressions))], schema))
    return substrait.decode_filter(payload, TABLE)


@pytest.mark.parametrize(
    "expression,spark_sql",
    [
        (pc.field("x") == 5, "`x` = CAST(5 AS BIGINT)"),
        (pc.field("s").isin(["a", "b"]), "`s` IN ('a', 'b')"),
        (~(pc.field("x") > 3), "NOT (`x` > CAST(3 AS BIGINT))"),
        ((pc.field("x") > 1) & (pc.field("s") == "q"), "(`x` > CAST(1 AS BIGINT)) AND (`s` = 'q')"),
        ((pc.field("x") < 0) | pc.field("s").is_null(), "(`x` < CAST(0 AS BIGINT)) OR (`s` IS NULL)"),
        (pc.starts_with(pc.field("s"), pattern="ab"), "STARTSWITH(`s`, 'ab')"),
        (pc.field("d") >= pa.scalar(Decimal("1.50"), pa.decimal128(10, 2)), "`d` >= CAST('1.50' AS DECIMAL(10, 2))"),
        (
            pc.field("ts")
            < pa.scalar(dt.datetime(2024, 3, 10, 7, tzinfo=dt.timezone.utc), pa.timestamp("us", tz="UTC")),
            "`ts` < CAST('2024-03-10 07:00:00.000000Z' AS TIMESTAMP)",
        ),
        (pc.field("dt") == pa.scalar(dt.date(2024, 2, 29)), "`dt` = CAST('2024-02-29' AS DATE)"),
        (pc.add(pc.field("x"), 1) > 3, "(`x` + CAST(1 AS BIGINT)) > CAST(3 AS BIGINT)"),
    ],
)
def test_pyarrow_expressions_read_as_spark_predicates(expression: pc.Expression, spark_sql: str) -> None:
    [conjunct] = _decode(expression)
    assert conjunct.tree.sql(dialect="spark", identify=True) == spark_sql


def test_each_referred_expression_is_a_conjunct_and_classifies() -> None:
    conjuncts = _decode(pc.field("s") == "q", pc.field("x") > 3, pc.field("s").isin(["a"]))
    translator = Translator(PostgresDialect(), TABLE, "UTC")
    assert [translator.predicate(c.tree).level for c in conjuncts] == [Level.EXACT] * 3


def test_names_resolve_through_the_messages_own_schema() -> None:
    reordered = pa.schema([("f", pa.float64()), ("S", pa.string())])
    [conjunct] = _decode(pc.field("S") == "q", schema=reordered)
    assert conjunct.tree.sql(dialect="spark", identify=True) == "`s` = 'q'"


@pytest.mark.parametrize(
    "expression,reason",
    [
        (pc.field("f") > 1.0, "float comparison"),
        (pc.divide(pc.field("x"), 2) > 1, "divide"),
        (pc.starts_with(pc.field("s"), pattern="ab", ignore_case=True), "case_sensitivity"),
        (pc.field("s").cast(pa.int64(), safe=False) == 1, "casts"),
    ],
)
def test_what_the_server_will_not_risk_is_unsupported(expression: pc.Expression, reason: str) -> None:
    [conjunct] = _decode(expression)
    assert conjunct.tree is None and reason in (conjunct.reason or "")


def test_garbage_bytes_are_a_request_error() -> None:
    with pytest.raises(RequestError, match="not a valid ExtendedExpression"):
        substrait.decode_filter(b"\x0a\xff\xff\xff", TABLE)


def test_an_unknown_column_is_a_request_error() -> None:
    with pytest.raises(RequestError, match="unknown column 'nope'"):
        _decode(pc.field("nope") == 1, schema=pa.schema([("nope", pa.int64())]))
