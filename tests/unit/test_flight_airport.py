"""DuckDB Airport filter JSON: each filter reads as the Spark predicate DuckDB meant, and
classifies as that predicate would; what the server does not understand is UNSUPPORTED."""

from __future__ import annotations

import json
from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.flight import airport
from sluice.flight.protocol import Conjunct, RequestError
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator
from sluice.types import TableSchema
from tests.unit.tables import column

LITE = TableSchema(
    "lite",
    "main",
    "people",
    (
        column("id", "bigint", "INTEGER"),
        column("name", "string", "TEXT"),
        column("nick", "string", "TEXT", collation="NOCASE"),
        column("born", "date", "DATE"),
        column("score", "double", "REAL"),
    ),
)
PG = TableSchema(
    "pg",
    "public",
    "people",
    (
        column("id", "bigint", "bigint"),
        column("name", "string", "text", collation="en-US-x-icu"),
        column("nick", "string", "text", collation="C"),
        column("born", "date", "date"),
        column("score", "double", "double precision"),
        column("seen", "timestamp", "timestamp with time zone"),
        column("price", "decimal(10,2)", "numeric(10,2)"),
    ),
)
NOWHERE = 18446744073709552000  # query_location "none" (2**64-1) as a JavaScript serialiser rounds it


def _tree(conjunct: Conjunct) -> exp.Expression:
    """The conjunct's tree, which a read conjunct has (None: the server could not read it)."""
    assert conjunct.tree is not None, conjunct.reason
    return conjunct.tree


def _type(type_id: str, **info: object) -> dict:
    return {"id": type_id, "type_info": ({"type": "DECIMAL_TYPE_INFO", "alias": "", **info} if info else None)}


def ref(index: int, type_id: str = "VARCHAR", alias: str = "") -> dict:
    return {
        "expression_class": "BOUND_COLUMN_REF",
        "type": "BOUND_COLUMN_REF",
        "alias": alias,
        "query_location": NOWHERE,
        "return_type": _type(type_id),
        "binding": {"table_index": 0, "column_index": index},
        "depth": 0,
    }


def const(value: object, type_id: str = "VARCHAR", **info: object) -> dict:
    return {
        "expression_class": "BOUND_CONSTANT",
        "type": "VALUE_CONSTANT",
        "alias": "",
        "query_location": NOWHERE,
        "value": {"type": _type(type_id, **info), "is_null": value is None, "value": value},
    }


def compare(kind: str, left: dict, right: dict) -> dict:
    return {
        "expression_class": "BOUND_COMPARISON",
        "type": kind,
        "alias": "",
        "query_location": NOWHERE,
        "left": left,
        "right": right,
    }


def function(name: str, children: list, return_type: str = "BOOLEAN") -> dict:
    return {
        "expression_class": "BOUND_FUNCTION",
        "type": "BOUND_FUNCTION",
        "alias": "",
        "query_location": NOWHERE,
        "return_type": _type(return_type),
        "children": children,
        "name": name,
        "arguments": [c.get("return_type", {"id": "VARCHAR", "type_info": None}) for c in children],
        "original_arguments": [],
        "catalog_name": "system",
        "schema_name": "main",
        "has_serialize": False,
        "is_operator": False,
    }


def operator(kind: str, children: list) -> dict:
    return {
        "expression_class": "BOUND_OPERATOR",
        "type": kind,
        "alias": "",
        "query_location": 81,
        "return_type": _type("BOOLEAN"),
        "children": children,
    }


def document(*filters: dict, names: tuple[str, ...] = ("id", "name", "nick", "born", "score", "rowid")) -> str:
    """The JSON text Airport sends (compact, as DuckDB writes it)."""
    return json.dumps({"filters": list(filters), "column_binding_names_by_index": list(names)}, separators=(",", ":"))


#: SELECT * FROM people WHERE name = 'Ada'
STRING_COMPARISON = document(compare("COMPARE_EQUAL", ref(1, alias="name"), const("Ada")))
#: SELECT * FROM people WHERE nick = 'ada' (a case-insensitive column in the SQLite table)
NICK_COMPARISON = document(compare("COMPARE_EQUAL", ref(2, alias="nick"), const("ada")))
#: SELECT * FROM people WHERE name IN ('Ada', 'Grace') OR id > 5
IN_OR_COMPARISON = document(
    {
        "expression_class": "BOUND_CONJUNCTION",
        "type": "CONJUNCTION_OR",
        "alias": "",
        "query_location": NOWHERE,
        "children": [
            operator("COMPARE_IN", [ref(1), const("Ada"), const("Grace")]),
            compare("COMPARE_GREATERTHAN", ref(0, "BIGINT"), const(5, "BIGINT")),
        ],
    }
)
#: SELECT * FROM people WHERE name LIKE 'Ad%' AND length(name) > 10 (DuckDB rewrites the LIKE to prefix())
LIKE_PREFIX_AND_LENGTH = document(
    function("prefix", [ref(1), const("Ad")]),
    compare("COMPARE_GREATERTHAN", function("length", [ref(1)], "BIGINT"), const(10, "BIGINT")),
)


@pytest.mark.parametrize(
    "fixture,spark_sql",
    [
        (STRING_COMPARISON, ["`name` = 'Ada'"]),
        (IN_OR_COMPARISON, ["(`name` IN ('Ada', 'Grace')) OR (`id` > CAST(5 AS BIGINT))"]),
        (LIKE_PREFIX_AND_LENGTH, ["STARTSWITH(`name`, 'Ad')", "LENGTH(`name`) > CAST(10 AS BIGINT)"]),
    ],
)
def test_airport_examples_read_as_the_predicates_duckdb_meant(fixture: str, spark_sql: list[str]) -> None:
    conjuncts = airport.decode_filter(json.loads(fixture), LITE)
    assert [_tree(c).sql(dialect="spark", identify=True) for c in conjuncts] == spark_sql


@pytest.mark.parametrize(
    "dialect,table,expected",
    [
        (SqliteDialect(), LITE, [Level.EXACT, Level.EXACT, Level.EXACT, Level.EXACT, Level.INEXACT]),  # nick: NOCASE
        (PostgresDialect(), PG, [Level.EXACT, Level.EXACT, Level.EXACT, Level.EXACT, Level.EXACT]),  # nick: COLLATE "C"
    ],
)
def test_airport_examples_classify_as_the_same_spark_predicates(dialect, table, expected) -> None:
    fixtures = [STRING_COMPARISON, IN_OR_COMPARISON, LIKE_PREFIX_AND_LENGTH, NICK_COMPARISON]
    equivalents = [
        "name = 'Ada'",
        "name IN ('Ada', 'Grace') OR id > 5L",
        "startswith(name, 'Ad')",
        "length(name) > 10L",
        "nick = 'ada'",
    ]
    conjuncts = [c for fixture in fixtures for c in airport.decode_filter(json.loads(fixture), table)]
    levels = []
    for conjunct, text in zip(conjuncts, equivalents):
        translator = Translator(dialect, table, "UTC")
        read, direct = (
            translator.predicate(_tree(conjunct)),
            translator.predicate(cast(exp.Expression, sqlglot.parse_one(text, read="spark"))),
        )
        assert (read.level, read.reason) == (direct.level, direct.reason), text
        assert dialect.render(read.sql) == dialect.render(direct.sql) if read.sql is not None else direct.sql is None
        levels.append(read.level)
    assert levels == expected


@pytest.mark.parametrize(
    "node,spark_sql",
    [
        (
            operator("COMPARE_NOT_IN", [ref(0, "BIGINT"), const(1, "BIGINT"), const(None, "BIGINT")]),
            "NOT (`id` IN (CAST(1 AS BIGINT), CAST(NULL AS BIGINT)))",
        ),
        (operator("OPERATOR_IS_NOT_NULL", [ref(3, "DATE")]), "NOT `born` IS NULL"),
        (
            {
                "expression_class": "BOUND_BETWEEN",
                "type": "COMPARE_BETWEEN",
                "input": ref(0, "BIGINT"),
                "lower": const(1, "INTEGER"),
                "upper": const(9, "INTEGER"),
                "lower_inclusive": True,
                "upper_inclusive": False,
            },
            "`id` >= 1 AND `id` < 9",
        ),
        (
            compare("COMPARE_GREATERTHANOREQUALTO", ref(3, "DATE"), const(19782, "DATE")),
            "`born` >= CAST('2024-02-29' AS DATE)",
        ),
        (compare("COMPARE_LESSTHAN", ref(4, "DOUBLE"), const("nan", "DOUBLE")), "`score` < CAST('NaN' AS DOUBLE)"),
        (compare("COMPARE_NOT_DISTINCT_FROM", ref(1), const(None)), "`name` IS NOT DISTINCT FROM CAST(NULL AS STRING)"),
        (
            function("~~", [ref(1), const("a\\%")]),
            r"`name` LIKE 'a\\\\%'",
        ),  # DuckDB's LIKE has no escape: the backslash is literal
        (function("!~~", [ref(1), const("a%")]), "NOT (`name` LIKE 'a%')"),
        (compare("COMPARE_EQUAL", ref(1), const({"base64": "w59i"})), "`name` = 'ßb'"),
    ],
)
def test_airport_shapes(node: dict, spark_sql: str) -> None:
    [conjunct] = airport.decode_filter(json.loads(document(node)), LITE)
    assert _tree(conjunct).sql(dialect="spark", identify=True) == spark_sql


def test_timestamps_and_decimals_are_decoded_by_their_duckdb_encoding() -> None:
    names = ("seen", "price")
    stamp = compare(
        "COMPARE_LESSTHAN", ref(0, "TIMESTAMP WITH TIME ZONE"), const(1710054000000000, "TIMESTAMP WITH TIME ZONE")
    )
    price = compare("COMPARE_EQUAL", ref(1, "DECIMAL"), const(12345, "DECIMAL", width=10, scale=2))
    big = compare("COMPARE_EQUAL", ref(1, "DECIMAL"), const({"upper": 0, "lower": 5}, "HUGEINT"))
    conjuncts = airport.decode_filter(json.loads(document(stamp, price, big, names=names)), PG)
    assert [_tree(c).sql(dialect="spark", identify=True) for c in conjuncts] == [
        "`seen` < CAST('2024-03-10 07:00:00.000000Z' AS TIMESTAMP)",
        "`price` = CAST('123.45' AS DECIMAL(10, 2))",
        "`price` = CAST('5' AS DECIMAL(38, 0))",
    ]


@pytest.mark.parametrize(
    "node,reason",
    [
        ({"expression_class": "BOUND_CASE", "type": "CASE_EXPR", "case_checks": [], "else_expr": None}, "BOUND_CASE"),
        (function("regexp_matches", [ref(1), const("^A")]), "regexp_matches"),
        (compare("COMPARE_EQUAL", function("lower", [ref(1)], "VARCHAR"), const("ada")), "lower"),
        (
            compare(
                "COMPARE_EQUAL",
                {
                    "expression_class": "BOUND_CAST",
                    "type": "CAST",
                    "child": ref(0, "BIGINT"),
                    "return_type": _type("VARCHAR"),
                    "try_cast": False,
                },
                const("1"),
            ),
            "casts",
        ),
        (compare("COMPARE_EQUAL", ref(1), const({"months": 1, "days": 0, "micros": 0}, "INTERVAL")), "INTERVAL"),
        (
            {
                "expression_class": "BOUND_CONJUNCTION",
                "type": "CONJUNCTION_OR",
                "children": [
                    compare("COMPARE_EQUAL", ref(1), const("a")),
                    {"expression_class": "BOUND_WINDOW", "type": "WINDOW_RANK"},
                ],
            },
            "BOUND_WINDOW",
        ),
    ],
)
def test_what_the_server_does_not_understand_is_unsupported_never_an_error(node: dict, reason: str) -> None:
    [conjunct] = airport.decode_filter(json.loads(document(node)), LITE)
    assert conjunct.tree is None and reason in (conjunct.reason or "")


@pytest.mark.parametrize(
    "doc,message",
    [
        ({"filters": "x", "column_binding_names_by_index": []}, "an airport filter is"),
        (json.loads(document(compare("COMPARE_EQUAL", ref(9), const("a")))), "column binding 9"),
        (json.loads(document(compare("COMPARE_EQUAL", ref(1), const("abc", "INTEGER")))), "'abc' is not a valid int"),
        (json.loads(document(compare("COMPARE_EQUAL", ref(5), const("a")))), "unknown column 'rowid'"),
        (json.loads(document({"no_class": True})), "expression_class"),
    ],
)
def test_malformed_airport_documents_are_request_errors(doc: dict, message: str) -> None:
    with pytest.raises(RequestError, match=message):
        airport.decode_filter(doc, LITE)
