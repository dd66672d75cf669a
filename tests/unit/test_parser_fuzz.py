"""Hostile and oversized input to every parser of outside input: the predicates Spark hands
the planner (V2 expressions), the Flight request decoders (Sluice JSON, Airport JSON,
Substrait) and the catalog file. Spark parses user SQL itself; what reaches Sluice is the
classifier's input, tested here directly.

A bounded, seeded slice of ``python -m fuzz.parsers`` (no Spark, no server), then the
inputs that broke a parser once, each pinned to the clean error it gives now.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest
import sqlglot
from sqlglot import exp

from fuzz.parsers import runner
from fuzz.parsers.oracles import Violation, check_remote
from fuzz.parsers.seeds import substrait_request
from fuzz.parsers.tables import DIALECTS, TABLES
from fuzz.parsers.targets import TARGETS, filters, run_flight, run_v2
from sluice.catalog import load_catalog
from sluice.errors import ConfigError
from sluice.flight import filter_json
from sluice.flight.protocol import RequestError, parse_request
from sluice.masking import mask_text
from sluice.pushdown import nesting
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.terms import paren
from sluice.pushdown.translator import MAX_PUSHED_CHARS, classify_conjuncts
from sluice.scan.query import build_query

pytestmark = pytest.mark.unit

#: cases per target in the slow tier: together 30-60 s, most of it v2 (each of its cases is
#: classified for five dialects); the main tier runs the first third of the same seeded cases
CASES = {"v2": 600, "flight-json": 600, "airport": 600, "substrait": 600, "catalog": 600}
MAIN_SHARE = 3


@pytest.mark.parametrize("name", list(TARGETS))
def test_every_seed_is_accepted(name: str) -> None:
    """Mutants must fail in the code under test, not because their seed was broken."""
    for seed in TARGETS[name].seeds():
        TARGETS[name].run(seed)


@pytest.mark.parametrize("name", list(TARGETS))
def test_mutated_input_gives_a_result_or_a_typed_error(name: str) -> None:
    """The first third of the seeded cases (the same seed: each case is the slow tier's too)."""
    check_mutants(name, CASES[name] // MAIN_SHARE)


@pytest.mark.slow  # every case: the first third above reaches every target's error paths in make test
@pytest.mark.parametrize("name", list(TARGETS))
def test_every_mutated_input_gives_a_result_or_a_typed_error(name: str) -> None:
    check_mutants(name, CASES[name])


def check_mutants(name: str, cases: int) -> None:
    # The limit catches a hang or a blow-up, not a slow machine: the largest v2 mutant (case 145, a
    # 134 KB predicate of 2,000 conjuncts, classified for five dialects) took 12.9 s at load 5 on two
    # cores, most of it sqlglot rendering the conjunct's text; 20 s failed under heavier load.
    summary = runner.run(name, cases, seed=20260522, time_limit=60.0)
    assert summary.cases == cases
    assert summary.refused > 0  # the mutations do reach the error paths
    report = "\n".join(f"case {f.index}: {f.error[:300]} at {f.where}" for f in summary.failures)
    assert not summary.failures, (
        f"replay with: python -m fuzz.parsers --target {name} --seed 20260522 --case N\n{report}"
    )


# ---------------------------------------------------------------- what the classifier is handed
def classify(source: str, predicate: str | exp.Expression) -> tuple[Verdict, ...]:
    """The verdict on one conjunct (Spark SQL text, or a tree) for ``source``'s table."""
    tree = cast(exp.Expression, sqlglot.parse_one(predicate, read="spark")) if isinstance(predicate, str) else predicate
    return classify_conjuncts(DIALECTS[source], TABLES[source], [tree], "UTC")


@pytest.mark.parametrize(
    "predicate",
    [
        "i = 1e308-9223372036854775808L",
        "i < 1e",
        "r = -1e3090.0",
        "d = CAST(NULL AS DECIMAL(99, 2))",
        "d = CAST('1' AS DECIMAL(5, 9))",
    ],
)
def test_numbers_and_types_spark_would_not_read_are_left_to_it(predicate: str) -> None:
    """sqlglot reads ``1e308-9223372036854775808`` as one number (ValueError in the typing of
    constants); such a conjunct is not typed here, so Spark evaluates (or rejects) it."""
    [verdict] = classify("duck", predicate)
    assert verdict.level is Level.UNSUPPORTED


@pytest.mark.parametrize("connector,term", [(exp.Or, "i = {k}"), (exp.And, "i <> {k}")])
def test_thousands_of_flat_terms_are_classified_and_sent_as_shallow_sql(
    connector: type[exp.And] | type[exp.Or], term: str
) -> None:
    """2,000 terms of one connective, grouped balanced as sluice.scan.v2 groups the flat
    chains Spark's V2 expressions carry: the pushed SQL nests a dozen levels, and SQLite
    (which refuses 1,000 levels of AND) runs it."""
    terms = [cast(exp.Expression, sqlglot.parse_one(term.format(k=k), read="spark")) for k in range(2000)]
    [verdict] = classify("lite", nesting.chain(connector, terms, paren))
    assert verdict.level is Level.EXACT and verdict.remote_sql is not None
    query = check_remote("lite", TABLES["lite"], [verdict.remote_sql])  # executes in an in-memory SQLite
    assert query.count("(") < 20_000


def test_long_chains_regroup_balanced_and_in_order() -> None:
    parts: list[exp.Expression] = [exp.column(f"c{k}") for k in range(1000)]
    tree = nesting.chain(exp.Or, parts, paren)
    assert nesting.depth(tree) <= 2 * 10 + 2  # ten levels of OR and parentheses, then column and name
    assert tree.sql().replace("(", "").replace(")", "") == " OR ".join(f"c{k}" for k in range(1000))
    short = nesting.chain(exp.And, parts[:3], paren)
    assert short.sql() == "(c0 AND c1) AND c2"  # short chains keep the shape they were written in


def test_the_pushed_text_of_a_scan_is_bounded() -> None:
    """A conjunct whose SQL would take the scan past MAX_PUSHED_CHARS stays with Spark, with why."""
    wide = exp.In(this=exp.column("s"), expressions=[exp.Literal.string("x" * 1_000_000) for _ in range(5)])
    narrow = cast(exp.Expression, sqlglot.parse_one("i = 1", read="spark"))
    verdicts = classify_conjuncts(DIALECTS["pg"], TABLES["pg"], [wide, narrow], "UTC")
    assert (
        verdicts[0].level is Level.UNSUPPORTED and f"a scan pushes at most {MAX_PUSHED_CHARS:,}" in verdicts[0].reason
    )
    assert verdicts[1].level is Level.EXACT


def test_predicates_deeper_than_engines_parse_stay_with_spark() -> None:
    tree = exp.column("i")
    for _ in range(nesting.MAX_PUSH_DEPTH):
        tree = exp.Paren(this=tree)
    [verdict] = classify("pg", exp.EQ(this=tree, expression=exp.Literal.number(1)))
    assert verdict.level is Level.UNSUPPORTED and "nested" in verdict.reason


def test_long_conjunct_lists_reach_sqlite_grouped() -> None:
    """SQLite nests ``a AND b AND ...`` one level per AND and refuses 1,000 levels."""
    where = [f'"i" <> {k}' for k in range(3000)]
    query = build_query(['"i"'], '"main"."t"', where, None, None)
    connection = sqlite3.connect(":memory:")
    connection.execute('CREATE TABLE "main"."t" ("i" INTEGER)')
    connection.execute('INSERT INTO "main"."t" VALUES (5000)')
    assert connection.execute(query).fetchall() == [(5000,)]
    assert build_query(['"i"'], "t", ["a", "b", "c"], None, None) == 'SELECT "i" FROM t WHERE (a) AND (b) AND (c)'


def test_a_remote_query_with_a_1_mb_literal_is_masked_in_linear_time() -> None:
    """Every plan masks its remote queries; the URL pattern rescanned long letter runs (quadratic: minutes)."""
    with runner.deadline(20.0):
        [verdict] = classify("pg", "s = '" + "x" * 1_000_000 + "' OR c = '" + "\u00e9" * 300_000 + "'")
        assert verdict.level is Level.EXACT and verdict.remote_sql is not None
        check_remote("pg", TABLES["pg"], [verdict.remote_sql])  # builds the query and masks it
        assert mask_text("postgresql://u:secret@h/d " + "y" * 1_000_000).startswith("postgresql://u:***@h/d")


def test_a_huge_coalesce_is_not_pushed() -> None:
    [verdict] = classify("lite", "coalesce(" + ", ".join(["i"] * 200) + ") = 1")
    assert verdict.level is Level.UNSUPPORTED and "coalesce() with 200 arguments" in verdict.reason


# ---------------------------------------------------------------- Spark's V2 predicates
def _ref(name: str) -> dict[str, Any]:
    return {"ref": [name]}


def _lit(text: str | None, catalog_string: str) -> dict[str, Any]:
    return {"lit": text, "type": catalog_string}


def _op(name: str, *args: dict[str, Any]) -> dict[str, Any]:
    return {"op": name, "args": list(args)}


def _verdicts(source: str, *predicates: dict[str, Any]) -> list[dict[str, Any]]:
    """``CatalogPlanner.filters``' verdicts, after the whole v2 target's checks for every dialect pass."""
    run_v2(json.dumps(list(predicates)).encode())
    return filters(source, list(predicates))["verdicts"]


def test_a_predicate_cut_at_spark_s_depth_limit_is_left_to_spark() -> None:
    """io.sluice.spark.Expressions writes anything more than 100 levels down as TOO_DEEP."""
    [verdict] = _verdicts("pg", {"op": "TOO_DEEP", "text": "a predicate nested more than 100 levels deep"})
    assert verdict["level"] == "UNSUPPORTED" and "nested more than 100 levels deep" in verdict["reason"]


def test_a_flat_or_of_2000_operands_is_pushed_shallow() -> None:
    """Expressions sends a chain of one connective flat; v2 regroups it balanced, SQLite runs it."""
    [verdict] = _verdicts("lite", _op("OR", *(_op("=", _ref("i"), _lit(str(k), "int")) for k in range(2000))))
    assert verdict["level"] == "EXACT" and verdict["remote_sql"].count("(") < 20_000


def test_a_decimal_of_precision_39_is_never_sent_as_a_type_the_engine_refuses() -> None:
    """Spark's decimals stop at precision 38, as DuckDB's do: a wider one is no type to push."""
    [verdict] = _verdicts("duck", _op("=", _ref("d"), _lit("1", "decimal(39,0)")))
    assert verdict["level"] == "UNSUPPORTED" or "DECIMAL(39" not in verdict["remote_sql"]


def test_a_date_10_to_the_9_days_out_is_left_to_spark() -> None:
    """Spark's dates are days in an int (up to year 5,881,580); Python's stop at 9999."""
    [verdict] = _verdicts("pg", _op("=", _ref("dt"), _lit(str(10**9), "date")))
    assert verdict["level"] == "UNSUPPORTED" and "outside what Sluice represents" in verdict["reason"]


def test_an_in_list_with_a_null_keeps_spark_s_three_valued_meaning() -> None:
    [verdict] = _verdicts("pg", _op("IN", _ref("id"), _lit("1", "bigint"), _lit(None, "bigint")))
    assert verdict["level"] == "EXACT" and verdict["remote_sql"] == '"id" IN (1, NULL)'


@pytest.mark.parametrize(
    "predicate",
    [
        _op("=", _ref("i")),
        _op("OR"),
        _op("=", _ref("d"), _lit("NaN", "decimal(10,2)")),  # Python's Decimal reads NaN; Spark's decimals have none
        _op(
            "=", _ref("d"), _lit("1e999999999", "decimal(10,2)")
        ),  # far past decimal(10,2): a 5 s stall, then decimal.Overflow
    ],
    ids=["an operand short", "a connective without operands", "a NaN decimal", "a decimal past its precision"],
)
def test_malformed_v2_predicates_are_left_to_spark(predicate: dict[str, Any]) -> None:
    """Shapes Spark does not send, which the planner still answers: UNSUPPORTED, never an exception."""
    [verdict] = _verdicts("lite", predicate)
    assert verdict["level"] == "UNSUPPORTED"


# ---------------------------------------------------------------- Flight requests
def _request(body: object, **extra: object) -> bytes:
    return json.dumps({"table": ["pg", "public", "t"], "filter": body, **extra}).encode()


def _sluice(*conjuncts: object) -> bytes:
    return _request({"format": "sluice", "conjuncts": list(conjuncts)})


def _airport(*filters: object) -> bytes:
    return _request({"format": "airport", "filters": list(filters), "column_binding_names_by_index": ["id", "i", "s"]})


_CONSTANT = {"expression_class": "BOUND_CONSTANT", "value": {"type": {"id": "INTEGER"}, "is_null": False, "value": 1}}
_COLUMN = {"expression_class": "BOUND_COLUMN_REF", "binding": {"column_index": 1}}


@pytest.mark.parametrize(
    "payload,message",
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),  # json's C parser: RecursionError
        (b'{"table": ["pg", "t"], "limit": ' + b"9" * 5000 + b"}", "number too long"),  # int() digit limit: ValueError
        (b"path:pg\x00\xff\xfe", "must be UTF-8"),  # the server decoded path names unchecked
        # flight-json seed 77123 case 1160: ZoneInfo resolves one package per "/" part, RecursionError
        (
            _request(None, session_zone="America" + "/Neca" * 1000),
            "session_zone 'America/Neca/.*'... is not a time zone name",
        ),
        (_sluice({"op": "=", "args": [{"column": "f"}, {"literal": 10**400, "type": "double"}]}), "not a valid double"),
        # found by the 20,000-case campaign (seed 1): decimal.Overflow typing a constant of a 999,999,999-digit decimal
        (
            _sluice({"op": "in", "args": [{"column": "id"}, {"literal": 1, "type": "decimal(999999999,2)"}]}),
            "not a Spark decimal type",
        ),
        (
            _airport({"expression_class": "BOUND_COMPARISON", "type": {"x": 1}, "left": _COLUMN, "right": _CONSTANT}),
            "'type' must be a string",
        ),
        (
            _airport({"expression_class": "BOUND_FUNCTION", "name": ["~~"], "children": [_COLUMN]}),
            "'name' must be a string",
        ),
        (
            _airport(
                {
                    "expression_class": "BOUND_COMPARISON",
                    "type": "COMPARE_EQUAL",
                    "left": _COLUMN,
                    "right": {
                        "expression_class": "BOUND_CONSTANT",
                        "value": {"type": {"id": "DECIMAL", "type_info": [10, 2]}, "is_null": False, "value": 1},
                    },
                }
            ),
            "type_info is an object or null",
        ),
        # a Substrait double literal (field 11) holding 4 bytes instead of 8: struct.error escaped
        (substrait_request(bytes.fromhex("1a0a0a080a065a0400000000")), "malformed: field 11 holds 4 bytes"),
    ],
)
def test_malformed_flight_requests_are_request_errors(payload: bytes, message: str) -> None:
    with pytest.raises(RequestError, match=message):
        run_flight(payload)


def test_a_limit_past_bigint_is_sent_as_bigints_maximum() -> None:
    """Every engine would fail the read on a LIMIT literal past BIGINT; no table holds more rows."""
    assert parse_request(b'{"table": ["pg", "t"], "limit": ' + b"9" * 40 + b"}").limit == 2**63 - 1


def test_a_wide_flight_connector_decodes_balanced_and_classifies() -> None:
    leaf = {"op": "=", "args": [{"column": "i"}, {"literal": 1, "type": "int"}]}
    [conjunct] = filter_json.decode_filter({"conjuncts": [{"op": "or", "args": [leaf] * 2000}]}, TABLES["pg"])
    assert conjunct.tree is not None and nesting.depth(conjunct.tree) < 50
    run_flight(_sluice({"op": "or", "args": [leaf] * 2000}))  # classified by three dialects, SQLite runs it


# ---------------------------------------------------------------- catalog
@pytest.mark.parametrize(
    "text,message",
    [
        (
            '[sources.a]\nurl = "sqlite:///a.db"\nx = ' + "[" * 5000 + "]" * 5000,
            "nested too deeply",
        ),  # tomllib recursion
        ('[sources.a]\nurl = "sqlite:///a.db"\npartitions = ' + "9" * 5000, "number too long"),
        ('[sources.a]\nurl = "postgresql://u:s3cret@[::1/d"', "malformed IPv6 host"),  # urlsplit: Invalid IPv6 URL
        (
            '[sources.a]\nurl = "postgresql://u:s3c/ret@h:5432/d"',
            "must be percent-encoded",
        ),  # urlsplit read 's3c' as the port
    ],
)
def test_malformed_catalogs_are_config_errors_without_secrets(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "sluice.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        load_catalog(path)
    assert "s3c" not in str(caught.value) and str(path) in str(caught.value)


def test_the_oracle_checks_remote_sql_in_the_real_engines() -> None:
    """The oracle itself: pushed text that SQLite cannot run is a violation, not a pass."""
    with pytest.raises(Violation, match="fails in SQLite"):
        check_remote("lite", TABLES["lite"], ['"i" = ABS('])
    run_v2(json.dumps([_op("=", _ref("s"), _lit("x\\'; DROP TABLE t; --", "string"))]).encode())
