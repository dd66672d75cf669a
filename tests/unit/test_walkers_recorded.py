"""The predicate walkers answer as recorded (the guard of their move onto one visitor base).

``data/walkers_corpus.json`` holds 586 seeded predicates over edge values (NULL, NaN, -0.0,
'', trailing spaces, mixed case, non-ASCII, int and bigint extremes, decimals, dates and
timestamps at the calendar's ends; AND/OR/NOT up to four deep, BETWEEN, IN, LIKE) with the
answers of the translator (five dialects), the Flight JSON encoder (with and without casts)
and the lake expression converter, recorded from the isinstance-chain walkers before they
moved onto the base.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
import sqlglot
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)
from sqlglot import exp

from fuzz.parsers.tables import DIALECTS, TABLES
from sluice.flight import filter_json
from sluice.lake import expressions
from sluice.pushdown.terms import Unsupported
from sluice.pushdown.translator import classify_conjuncts

pytestmark = pytest.mark.unit

CORPUS = json.loads((Path(__file__).parent / "data" / "walkers_corpus.json").read_text())
ZONE = "America/New_York"
LAKE_SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "f", DoubleType()),
    NestedField(4, "r", FloatType()),
    NestedField(5, "d", DecimalType(10, 2)),
    NestedField(6, "s", StringType()),
    NestedField(7, "c", StringType()),
    NestedField(8, "dt", DateType()),
    NestedField(9, "ts", TimestamptzType()),
    NestedField(10, "tn", TimestampType()),
    NestedField(11, "b", BooleanType()),
)


def _json(node: exp.Expression, casts: Any) -> Any:
    try:
        return filter_json.encode_conjunct(node, ZONE, casts)
    except Unsupported as reason:
        return {"unsupported": str(reason)}
    except Exception as error:  # noqa: BLE001 - the recorded answer of an escaping error is its type (see the report in docs)
        return {"raises": type(error).__name__}


def _lake(sql: str) -> Any:
    try:
        found = expressions.conjunct_filter(sql, LAKE_SCHEMA)
    except Exception as error:  # noqa: BLE001 - as above: the error's type is the recorded answer
        return {"raises": type(error).__name__}
    return [str(found.expression), found.exact]


@pytest.mark.parametrize("source", list(DIALECTS))
def test_the_translator_answers_as_before(source: str) -> None:
    for entry in CORPUS:
        node = cast(exp.Expression, sqlglot.parse_one(entry["predicate"], read="spark"))
        [verdict] = classify_conjuncts(DIALECTS[source], TABLES[source], [node], ZONE)
        assert [verdict.level.name, verdict.reason, verdict.sql] == entry[source], entry["predicate"]


def test_the_flight_json_encoder_answers_as_before() -> None:
    for entry in CORPUS:
        node = cast(exp.Expression, sqlglot.parse_one(entry["predicate"], read="spark"))
        assert _json(node, None) == entry["json"], entry["predicate"]
        assert _json(node, TABLES["pg"]) == entry["json_casts"], entry["predicate"]


def test_the_lake_converter_answers_as_before() -> None:
    for entry in CORPUS:
        assert _lake(entry["predicate"]) == entry["iceberg"], entry["predicate"]
