"""Sluice's JSON filter format: lossless for what the core classifies, strict about the rest."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.flight import filter_json
from sluice.flight.protocol import RequestError
from sluice.pushdown.terms import Unsupported
from sluice.pushdown.translator import Translator
from sluice.types import TableSchema
from tests import corpus
from tests.unit.tables import column

ZONE = "America/New_York"
SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "flight-filter.schema.json"

#: the edge tables' columns, with the remote properties PostgreSQL and SQLite report
PG_EDGE = TableSchema(
    "pg",
    "sluice_test",
    "edge",
    (
        column("id", "bigint", "bigint"),
        column("i", "int", "integer"),
        column("b", "bigint", "bigint"),
        column("f", "double", "double precision"),
        column("r", "float", "real"),
        column("d", "decimal(20,4)", "numeric(20,4)"),
        column("t", "string", "text", collation="en-US-x-icu"),
        column("tc", "string", "text", collation="C"),
        column("ch", "string", "character(20)", collation="en-US-x-icu", padded=True),
        column("dt", "date", "date"),
        column("ts", "timestamp", "timestamp with time zone"),
        column("tn", "timestamp_ntz", "timestamp without time zone"),
        column("flag", "boolean", "boolean"),
    ),
)
LITE_EDGE = TableSchema(
    "lite",
    "main",
    "edge",
    (
        column("id", "bigint", "INTEGER"),
        column("i", "bigint", "INTEGER"),
        column("b", "bigint", "INTEGER"),
        column("f", "double", "REAL"),
        column("r", "double", "REAL"),
        column("d", "double", "NUMERIC"),
        column("t", "string", "TEXT"),
        column("tc", "string", "TEXT", collation="NOCASE"),
        column("ch", "string", "TEXT", collation="RTRIM"),
        column("dt", "date", "DATE"),
        column("ts", "timestamp_ntz", "DATETIME"),
        column("tn", "timestamp_ntz", "DATETIME"),
        column("flag", "boolean", "BOOLEAN"),
    ),
)
CASES = [(PostgresDialect(), PG_EDGE), (SqliteDialect(), LITE_EDGE)]


def _predicate(text: str) -> exp.Expression:
    return typing.cast(exp.Expression, sqlglot.parse_one(text, read="spark"))


def _round_trip(node: exp.Expression, table: TableSchema) -> exp.Expression:
    """What the server decodes from what the client sends (through real JSON text)."""
    return filter_json.decode(json.loads(json.dumps(filter_json.encode_conjunct(node, ZONE))), table)


@pytest.mark.parametrize("dialect,table", CASES, ids=["postgres", "sqlite"])
def test_every_corpus_predicate_classifies_the_same_after_the_round_trip(dialect, table) -> None:
    encoded = 0
    for text in corpus.corpus():
        node = _predicate(text)
        direct = Translator(dialect, table, ZONE).predicate(node)
        try:
            decoded = _round_trip(node, table)
        except Unsupported:  # the format cannot spell it: the client keeps it, so the core must not push it
            assert not direct.level.pushed, text
            continue
        encoded += 1
        again = Translator(dialect, table, ZONE).predicate(decoded)
        assert again.level == direct.level, text
        if filter_json.OPAQUE_FUNCTION not in decoded.sql("spark"):  # an opaque part words its reason differently
            assert again.reason == direct.reason, text
        rendered = [dialect.render(t.sql) if t.sql is not None else None for t in (again, direct)]
        assert rendered[0] == rendered[1], text
    assert encoded > 0.95 * len(corpus.corpus())


@pytest.mark.parametrize(
    "text,expected",
    [
        ("i = 1.50", {"op": "=", "args": [{"column": "i"}, {"literal": "1.50", "type": "decimal(3,2)"}]}),
        (
            "r = CAST(0.1 AS FLOAT)",
            {"op": "=", "args": [{"column": "r"}, {"literal": 0.10000000149011612, "type": "float"}]},
        ),
        ("f <> double('NaN')", {"op": "<>", "args": [{"column": "f"}, {"literal": "NaN", "type": "double"}]}),
        (
            "ts < TIMESTAMP '2024-03-10 02:30:00'",
            {"op": "<", "args": [{"column": "ts"}, {"literal": "2024-03-10T07:30:00.000000Z", "type": "timestamp"}]},
        ),
        (
            "t NOT LIKE 'a!%%' ESCAPE '!'",
            {
                "op": "not",
                "args": [
                    {
                        "op": "like",
                        "args": [{"column": "t"}, {"literal": "a!%%", "type": "string"}],
                        "escape": {"literal": "!", "type": "string"},
                    }
                ],
            },
        ),
        (
            "i NOT IN (1, NULL)",
            {
                "op": "not",
                "args": [
                    {
                        "op": "in",
                        "args": [{"column": "i"}, {"literal": 1, "type": "int"}, {"literal": None, "type": "null"}],
                    }
                ],
            },
        ),
    ],
)
def test_constants_carry_their_spark_type(text: str, expected: dict) -> None:
    """A DST-gap wall clock in the session zone becomes the instant Spark would use."""
    assert filter_json.encode(_predicate(text), ZONE) == expected


def test_what_the_format_cannot_spell_stays_with_spark() -> None:
    with pytest.raises(Unsupported, match="no spelling"):
        filter_json.encode_conjunct(_predicate("t = 'a' 'b'"), ZONE)
    with pytest.raises(Unsupported):
        filter_json.encode_conjunct(_predicate("-i > 1 OR i = 2"), ZONE)


def test_an_unspellable_part_of_an_and_travels_opaque_so_the_rest_is_still_pushed() -> None:
    node = _predicate("i = 1 AND t = 'a' 'b'")
    encoded = filter_json.encode_conjunct(node, ZONE)
    assert encoded["args"][1] == {
        "op": "opaque",
        "args": [],
        "sql": "t = CONCAT('a', 'b')",
        "reason": encoded["args"][1]["reason"],
    }
    translation = Translator(PostgresDialect(), PG_EDGE, ZONE).predicate(filter_json.decode(encoded, PG_EDGE))
    assert translation.level.value == "INEXACT" and translation.sql is not None
    assert PostgresDialect().render(translation.sql) == '"i" = 1'


@pytest.mark.parametrize(
    "node,message",
    [
        ({"op": "frobnicate", "args": []}, 'unknown op "frobnicate"'),
        ({"op": "=", "args": [{"column": "i"}]}, "takes 2 argument"),
        (
            {"op": "=", "args": [{"column": "nope"}, {"literal": 1, "type": "int"}]},
            "unknown column 'nope'.*columns: id, i",
        ),
        ({"literal": "abc", "type": "int"}, "'abc' is not a valid int"),
        ({"literal": 1.5, "type": "bigint"}, "not a valid bigint"),
        ({"literal": 2147483648, "type": "int"}, "out of range for int"),
        ({"literal": "1.234", "type": "decimal(5,2)"}, "does not fit decimal\\(5,2\\)"),
        ({"literal": "2024-03-10T07:00:00", "type": "timestamp"}, "has no zone offset"),
        ({"literal": "2024-02-30", "type": "date"}, "not a valid date"),
        ({"literal": 1, "type": "integer"}, "not a Spark type"),
        ({"literal": True, "type": "string"}, "not a valid string"),
        ({"colum": "i"}, "an expression is"),
        ({"column": "i", "extra": 1}, "unknown key"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_malformed_expressions_say_what_is_wrong(node, message: str) -> None:
    with pytest.raises(RequestError, match=message):
        filter_json.decode(node, PG_EDGE)


def test_deep_nesting_is_refused() -> None:
    node: dict = {"column": "flag"}
    for _ in range(100):
        node = {"op": "not", "args": [node]}
    with pytest.raises(RequestError, match="nested deeper"):
        filter_json.decode(node, PG_EDGE)


def test_a_filter_names_the_conjunct_that_is_wrong() -> None:
    body = {"version": 1, "conjuncts": [{"op": "is_null", "args": [{"column": "i"}]}, {"literal": "x", "type": "date"}]}
    with pytest.raises(RequestError, match="conjunct 1: literal 'x' is not a valid date"):
        filter_json.decode_filter(body, PG_EDGE)
    with pytest.raises(RequestError, match="version 2"):
        filter_json.decode_filter({"version": 2, "conjuncts": []}, PG_EDGE)


def test_a_binary_constant_is_valid_but_not_pushed() -> None:
    conjuncts = filter_json.decode_filter(
        {"conjuncts": [{"op": "=", "args": [{"column": "t"}, {"literal": "AA==", "type": "binary"}]}]}, PG_EDGE
    )
    assert conjuncts[0].tree is None and "binary" in (conjuncts[0].reason or "")


def test_the_json_schema_documents_every_op() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$id"].endswith("v1.json")
    assert sorted(schema["$defs"]["operation"]["properties"]["op"]["enum"]) == sorted(filter_json.OPS)


# ---------------------------------------------------------------- casts (op "cast")
def _with_casts(text: str) -> exp.Expression:
    """A predicate with Spark's own casts: the catalog layer hands the core ``exp.Cast``
    (sqlglot reads Spark SQL's CAST as a TRY_CAST)."""
    node = _predicate(text)
    for cast in list(node.find_all(exp.TryCast)):
        cast.replace(exp.Cast(this=cast.this, to=cast.to))
    return node


#: the widening casts Spark makes explicit, with and without other parts around them
WIDENING = [
    "CAST(i AS BIGINT) = b",
    "CAST(i AS DOUBLE) = f",
    "CAST(r AS DOUBLE) > 1.5",
    "CAST(i AS DECIMAL(20,4)) < d",
    "CAST(d AS DOUBLE) <> f",
    "CAST(i AS BIGINT) + b > 0",
    "CAST(i + 1 AS BIGINT) = b",
    "CAST(length(t) AS BIGINT) = b",
    "CAST(i AS BIGINT) IN (5, 7)",
    "NOT (CAST(i AS DOUBLE) <=> f)",
    "CAST(i AS BIGINT) = b OR i IS NULL",
    "CAST(abs(i) AS DOUBLE) >= f",
    "CAST(CAST(i AS BIGINT) AS DOUBLE) = f",
]
#: casts the core leaves to Spark: the client does not send them
NARROWING = [
    "CAST(b AS INT) = 1",
    "CAST(t AS INT) = 1",
    "CAST(i AS STRING) = 'a'",
    "CAST(f AS BIGINT) = b",
    "CAST(d AS DECIMAL(10,2)) = 1",
    "CAST(i AS DECIMAL(5,0)) = 1",
    "CAST(f AS FLOAT) = r",
    "CAST(dt AS TIMESTAMP) = ts",
    "CAST(upper(t) AS INT) = 1",
]


@pytest.mark.parametrize("dialect,table", CASES, ids=["postgres", "sqlite"])
@pytest.mark.parametrize("text", WIDENING + NARROWING)
def test_a_cast_classifies_the_same_after_the_round_trip(dialect, table, text: str) -> None:
    node = _with_casts(text)
    direct = Translator(dialect, table, ZONE).predicate(node)
    try:
        encoded = filter_json.encode_conjunct(node, ZONE, table)
    except Unsupported:
        assert not direct.level.pushed, text
        return
    again = Translator(dialect, table, ZONE).predicate(filter_json.decode(json.loads(json.dumps(encoded)), table))
    assert (again.level, again.reason) == (direct.level, direct.reason), text
    rendered = [dialect.render(t.sql) if t.sql is not None else None for t in (again, direct)]
    assert rendered[0] == rendered[1], text


@pytest.mark.parametrize("text", WIDENING)
def test_widening_casts_are_sent_and_pushed(text: str) -> None:
    encoded = filter_json.encode_conjunct(_with_casts(text), ZONE, PG_EDGE)
    assert '"op": "cast"' in json.dumps(encoded)
    assert Translator(PostgresDialect(), PG_EDGE, ZONE).predicate(filter_json.decode(encoded, PG_EDGE)).level.pushed, (
        text
    )


def test_a_cast_spells_its_target_type() -> None:
    assert filter_json.encode(_with_casts("CAST(i AS DECIMAL(20,4)) < d"), ZONE, PG_EDGE) == {
        "op": "<",
        "args": [{"op": "cast", "args": [{"column": "i"}], "type": "decimal(20,4)"}, {"column": "d"}],
    }


@pytest.mark.parametrize("text", NARROWING)
def test_other_casts_stay_with_spark_and_say_why(text: str) -> None:
    with pytest.raises(Unsupported, match=r"Spark evaluates it"):
        filter_json.encode_conjunct(_with_casts(text), ZONE, PG_EDGE)


def test_a_server_without_casts_is_never_sent_one() -> None:
    """``casts=None``: the server's capabilities list no ``cast`` op (a server before it refuses the op)."""
    with pytest.raises(Unsupported, match="takes no casts"):
        filter_json.encode_conjunct(_with_casts("CAST(i AS BIGINT) = b"), ZONE)
    encoded = filter_json.encode_conjunct(_with_casts("i = 1 AND CAST(i AS BIGINT) = b"), ZONE)
    assert encoded["args"][1]["op"] == "opaque" and "takes no casts" in encoded["args"][1]["reason"]


def _cast(argument: dict, type_name: object) -> dict:
    return {"op": "=", "args": [{"op": "cast", "args": [argument], "type": type_name}, {"column": "b"}]}


@pytest.mark.parametrize(
    "node,message",
    [
        (_cast({"column": "b"}, "int"), r"CAST\(bigint AS int\) is not a widening cast"),
        (_cast({"column": "f"}, "bigint"), r"CAST\(double AS bigint\) is not a widening cast"),
        (_cast({"column": "f"}, "float"), r"CAST\(double AS float\) is not a widening cast"),
        (_cast({"column": "i"}, "decimal(9,0)"), r"CAST\(int AS decimal\(9,0\)\) is not a widening cast"),
        (_cast({"column": "d"}, "decimal(20,3)"), r"CAST\(decimal\(20,4\) AS decimal\(20,3\)\) is not a widening cast"),
        (_cast({"column": "d"}, "decimal(19,4)"), r"CAST\(decimal\(20,4\) AS decimal\(19,4\)\) is not a widening cast"),
        (_cast({"column": "t"}, "double"), r"CAST\(string AS double\) is not a widening cast"),
        (_cast({"literal": 1, "type": "bigint"}, "int"), r"CAST\(bigint AS int\)"),
        (_cast({"column": "i"}, "string"), r"needs \"type\": the Spark type it casts to.*not \"string\""),
        (_cast({"column": "i"}, "integer"), r"needs \"type\".*not \"integer\""),
        (_cast({"column": "i"}, None), r"needs \"type\".*not null"),
        (_cast({"column": "i"}, "decimal(40,0)"), r"not a Spark decimal type"),
        (
            _cast({"op": "coalesce", "args": [{"column": "i"}]}, "bigint"),
            r"type of the cast's argument .* is not one the format can tell",
        ),
        (_cast({"op": "+", "args": [{"column": "i"}, {"column": "b"}]}, "bigint"), r"type of the cast's argument"),
        (_cast({"column": "nope"}, "bigint"), r"unknown column 'nope'"),
        ({"op": "cast", "args": [{"column": "i"}, {"column": "b"}], "type": "bigint"}, r"op 'cast' takes 1 argument"),
        ({"op": "cast", "args": [{"column": "i"}], "type": "bigint", "to": "x"}, r"unknown key\(s\) to"),
    ],
)
def test_the_server_refuses_every_cast_it_would_not_push(node, message: str) -> None:
    with pytest.raises(RequestError, match=message):
        filter_json.decode(node, PG_EDGE)


def test_the_format_widens_exactly_where_the_core_does() -> None:
    """:func:`filter_json.widens` is the translator's ``widen`` rule, over every numeric pair."""
    from sluice.pushdown.terms import Value
    from sluice.types import SparkType

    names = [
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "float",
        "double",
        "decimal(3,0)",
        "decimal(5,0)",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "decimal(11,1)",
        "decimal(20,4)",
        "decimal(38,18)",
        "decimal(38,0)",
        "decimal(2,2)",
        "string",
        "date",
        "boolean",
    ]
    translator = Translator(PostgresDialect(), PG_EDGE, ZONE)
    for source in map(SparkType, names):
        for target in map(SparkType, names):
            try:
                translator.widen(Value(exp.column("x"), source), target)
                core = True
            except Unsupported:
                core = False
            assert filter_json.widens(source, target) is core, (source, target)
