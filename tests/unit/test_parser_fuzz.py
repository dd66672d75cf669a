"""Hostile and oversized input to every parser of outside input: the SQL front end, the
Flight request decoders (Sluice JSON, Airport JSON, Substrait) and the catalog file.

A bounded, seeded slice of ``python -m fuzz.parsers`` (no Spark, no server), then the
inputs that broke a parser once, each pinned to the clean error it gives now.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sqlglot import exp

from fuzz.parsers import runner
from fuzz.parsers.oracles import Violation, check_remote
from fuzz.parsers.seeds import substrait_request
from fuzz.parsers.tables import DIALECTS, HOSTILE_NAMES, TABLES, resolve
from fuzz.parsers.targets import TARGETS, run_flight, run_sql
from sluice.catalog import load_catalog
from sluice.errors import ConfigError, QuerySyntaxError
from sluice.flight import filter_json
from sluice.flight.protocol import RequestError, parse_request
from sluice.masking import mask_text
from sluice.planner.binder import MAX_NESTING, bind
from sluice.planner.optimizer import optimize
from sluice.planner.remote import build_query
from sluice.planner.state import PlanState
from sluice.pushdown import nesting
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import classify_conjuncts, paren

pytestmark = pytest.mark.unit

#: cases per target: together about 10 s on an idle machine
CASES = {"sql": 120, "flight-json": 600, "airport": 600, "substrait": 600, "catalog": 600}


@pytest.mark.parametrize("name", list(TARGETS))
def test_every_seed_is_accepted(name: str) -> None:
    """Mutants must fail in the code under test, not because their seed was broken."""
    for seed in TARGETS[name].seeds():
        TARGETS[name].run(seed)


@pytest.mark.parametrize("name", list(TARGETS))
def test_mutated_input_gives_a_result_or_a_typed_error(name: str) -> None:
    summary = runner.run(name, CASES[name], seed=20260522, time_limit=20.0)
    assert summary.cases == CASES[name]
    assert summary.refused > 0  # the mutations do reach the error paths
    report = "\n".join(f"case {f.index}: {f.error[:300]} at {f.where}" for f in summary.failures)
    assert not summary.failures, f"replay with: python -m fuzz.parsers --target {name} --seed 20260522 --case N\n{report}"


# ---------------------------------------------------------------- SQL front end
def plan(sql: str):  # type: ignore[no-untyped-def]
    bound = bind(sql, resolve, sorted(TABLES), "q")
    return optimize(PlanState(bound.qualified, bound.scans, "UTC", dict(DIALECTS)))[0]


@pytest.mark.parametrize("sql,message", [
    ("SELECT * FROM pg.t WHERE s = 'open", "cannot parse"),  # sqlglot's TokenError escaped as itself
    ("SELECT * FROM pg.t WHERE i = 1 /* open", "cannot parse"),
    ("SELECT * FROM pg.t WHERE s = X'zz'", "cannot parse"),
    ("SELECT * FROM pg.t WHERE " + "(" * 1000 + "i = 1" + ")" * 1000, "nested too deeply: 1000 levels"),
    ("SELECT * FROM pg.t WHERE " + "NOT " * 1000 + "i = 1", "nested too deeply"),
    ("SELECT * FROM pg.t WHERE " + "(i = 1 AND " * 1000 + "b" + ")" * 1000, "nested too deeply"),
    ("SELECT * FROM pg.t WHERE i = " + "abs(" * 1000 + "i" + ")" * 1000, "nested too deeply"),
    ("SELECT * FROM pg.t WHERE i = " + "CASE WHEN b THEN " * 1000 + "1" + " END" * 1000, "nested too deeply"),
    ("SELECT * FROM pg.t WHERE i = " + " + ".join(["1"] * 1000), "expression tree is [0-9]+ levels deep"),
    ("SELECT * FROM pg.t WHERE s = '\ud800'", "not valid Unicode: a lone surrogate U\\+D800"),
    ("SELECT * FROM pg.t WHERE i = 1; DROP TABLE t", "expected one SQL query, found 2"),
    # found by the 20,000-case campaign (seed 1): sqlglot's own errors, and a type it cannot write back
    ("SELECT * FROM lite.t WHERE id IN MAP((SELECT id FROM lite.t) AND-9 EXISTS (SELECT 1 FROM lite.t)", "IndexError in sqlglot"),
    ("SELECT * FROM pg.t WHERE d = 999999-1e99999999.99BD", "InvalidOperation in sqlglot"),
    ("SELECT * FROM lake.t WHERE -1e999999f ('NaN') OR f = double('-Infinity')", "type FLOAT with parameters"),
])
def test_hostile_queries_are_refused_with_a_query_syntax_error(sql: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError, match=message):
        plan(sql)


@pytest.mark.parametrize("predicate", ["i = 1e308-9223372036854775808L", "i < 1e", "r = -1e3090.0",
                                       "d = CAST(NULL AS DECIMAL(99, 2))", "d = CAST('1' AS DECIMAL(5, 9))"])
def test_numbers_and_types_spark_would_not_read_so_are_left_to_it(predicate: str) -> None:
    """sqlglot reads ``1e308-9223372036854775808`` as one number (ValueError in the typing of
    constants); such a conjunct is not typed here, so Spark evaluates (or rejects) it."""
    verdicts = plan(f"SELECT * FROM duck.t WHERE {predicate}").scans[0].verdicts
    assert verdicts and all(v.level is Level.UNSUPPORTED for v in verdicts)


def test_an_escaped_lone_surrogate_reads_as_a_question_mark_as_in_spark() -> None:
    """Spark encodes the Java string ``\\uD800`` to UTF-8 as ``?``; the pushed literal says the same."""
    [verdict] = plan("SELECT * FROM pg.t WHERE c = '\\uD800'").scans[0].verdicts
    assert verdict.remote_sql == '"c" = \'?\''


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_columns_with_hostile_names_bind_and_push(name: str) -> None:
    """sqlglot read schema keys as SQL: ``semi;colon`` and ``dash--x`` could not be queried at all."""
    spark_name = "`" + name.replace("`", "``") + "`"
    state = plan(f"SELECT {spark_name} FROM pg.t WHERE {spark_name} = 'x'")
    assert state.scans[0].columns == (name,) and state.scans[0].verdicts[0].level is Level.EXACT


def test_the_nesting_limit_itself_is_planned() -> None:
    """MAX_NESTING levels plan (sqlglot needs ~20 frames a level, inside the default 1,000)."""
    state = plan("SELECT * FROM lite.t WHERE " + "(" * MAX_NESTING + "i = 1" + ")" * MAX_NESTING)
    assert [v.level for v in state.scans[0].verdicts] == [Level.EXACT]


@pytest.mark.parametrize("connector", ["OR", "AND"])
def test_thousands_of_flat_terms_are_planned_and_sent_as_shallow_sql(connector: str) -> None:
    """2,000 ORs (one conjunct) or ANDs (2,000 conjuncts): regrouped balanced, the pushed
    SQL nests a dozen levels, and SQLite (1,000 levels at most) runs it."""
    sql = "SELECT * FROM lite.t WHERE " + f" {connector} ".join(f"i = {k}" for k in range(2000))
    scan = plan(sql).scans[0]
    pushed = [v.remote_sql for v in scan.verdicts if v.level.pushed]
    assert len(pushed) == (1 if connector == "OR" else 2000)
    query = check_remote("lite", TABLES["lite"], pushed)  # executes in an in-memory SQLite
    assert query.count("(") < 20_000


def test_a_long_union_all_is_not_deep() -> None:
    """Generated queries chain hundreds of UNION ALLs; sqlglot and the planner walk them without recursion."""
    state = plan(" UNION ALL ".join(f"SELECT id FROM lite.t WHERE i = {k}" for k in range(300)))
    assert len(state.scans) == 300 and all(s.verdicts[0].level is Level.EXACT for s in state.scans)


def test_long_chains_regroup_balanced_and_in_order() -> None:
    parts = [exp.column(f"c{k}") for k in range(1000)]
    tree = nesting.chain(exp.Or, parts, paren)
    assert nesting.depth(tree) <= 2 * 10 + 2  # ten levels of OR and parentheses, then column and name
    assert tree.sql().replace("(", "").replace(")", "") == " OR ".join(f"c{k}" for k in range(1000))
    short = nesting.chain(exp.And, parts[:3], paren)
    assert short.sql() == "(c0 AND c1) AND c2"  # short chains keep the shape they were written in


def test_the_pushed_text_of_a_scan_is_bounded() -> None:
    """A conjunct whose SQL would take the scan past MAX_PUSHED_CHARS stays with Spark, with why."""
    wide = "'" + "x" * 1_000_000 + "'"
    state = plan(f"SELECT * FROM pg.t WHERE s IN ({', '.join([wide] * 5)}) AND i = 1")
    verdicts = state.scans[0].verdicts
    assert verdicts[0].level is Level.UNSUPPORTED and "a scan pushes" in verdicts[0].reason
    assert verdicts[1].level is Level.EXACT


def test_predicates_deeper_than_engines_parse_stay_with_spark() -> None:
    tree = exp.column("i")
    for _ in range(nesting.MAX_PUSH_DEPTH):
        tree = exp.Paren(this=tree)
    [verdict] = classify_conjuncts(DIALECTS["pg"], TABLES["pg"], [exp.EQ(this=tree, expression=exp.Literal.number(1))], "UTC")
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


def test_a_plan_with_a_1_mb_literal_is_masked_in_linear_time() -> None:
    """Every plan masks its remote queries; the URL pattern rescanned long letter runs (quadratic: minutes)."""
    with runner.deadline(20.0):
        run_sql(b"SELECT * FROM my.t WHERE s = '" + b"x" * 1_000_000 + b"' OR c = '" + "\u00e9".encode() * 300_000 + b"'")
        assert mask_text("postgresql://u:secret@h/d " + "y" * 1_000_000).startswith("postgresql://u:***@h/d")


def test_a_huge_coalesce_is_not_pushed() -> None:
    state = plan("SELECT * FROM lite.t WHERE coalesce(" + ", ".join(["i"] * 200) + ") = 1")
    assert state.scans[0].verdicts[0].level is Level.UNSUPPORTED
    assert "coalesce() with 200 arguments" in state.scans[0].verdicts[0].reason


# ---------------------------------------------------------------- Flight requests
def _request(body: object, **extra: object) -> bytes:
    return json.dumps({"table": ["pg", "public", "t"], "filter": body, **extra}).encode()


def _sluice(*conjuncts: object) -> bytes:
    return _request({"format": "sluice", "conjuncts": list(conjuncts)})


def _airport(*filters: object) -> bytes:
    return _request({"format": "airport", "filters": list(filters), "column_binding_names_by_index": ["id", "i", "s"]})


_CONSTANT = {"expression_class": "BOUND_CONSTANT", "value": {"type": {"id": "INTEGER"}, "is_null": False, "value": 1}}
_COLUMN = {"expression_class": "BOUND_COLUMN_REF", "binding": {"column_index": 1}}


@pytest.mark.parametrize("payload,message", [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),  # json's C parser: RecursionError
    (b'{"table": ["pg", "t"], "limit": ' + b"9" * 5000 + b"}", "number too long"),  # int() digit limit: ValueError
    (b"path:pg\x00\xff\xfe", "must be UTF-8"),  # the server decoded path names unchecked
    (_sluice({"op": "=", "args": [{"column": "f"}, {"literal": 10**400, "type": "double"}]}), "not a valid double"),
    # found by the 20,000-case campaign (seed 1): decimal.Overflow typing a constant of a 999,999,999-digit decimal
    (_sluice({"op": "in", "args": [{"column": "id"}, {"literal": 1, "type": "decimal(999999999,2)"}]}), "not a Spark decimal type"),
    (_airport({"expression_class": "BOUND_COMPARISON", "type": {"x": 1}, "left": _COLUMN, "right": _CONSTANT}),
     "'type' must be a string"),
    (_airport({"expression_class": "BOUND_FUNCTION", "name": ["~~"], "children": [_COLUMN]}), "'name' must be a string"),
    (_airport({"expression_class": "BOUND_COMPARISON", "type": "COMPARE_EQUAL", "left": _COLUMN,
               "right": {"expression_class": "BOUND_CONSTANT",
                         "value": {"type": {"id": "DECIMAL", "type_info": [10, 2]}, "is_null": False, "value": 1}}}),
     "type_info is an object or null"),
    # a Substrait double literal (field 11) holding 4 bytes instead of 8: struct.error escaped
    (substrait_request(bytes.fromhex("1a0a0a080a065a0400000000")), "malformed: field 11 holds 4 bytes"),
])
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
@pytest.mark.parametrize("text,message", [
    ('[sources.a]\nurl = "sqlite:///a.db"\nx = ' + "[" * 5000 + "]" * 5000, "nested too deeply"),  # tomllib recursion
    ("[sources.a]\nurl = \"sqlite:///a.db\"\npartitions = " + "9" * 5000, "number too long"),
    ('[sources.a]\nurl = "postgresql://u:s3cret@[::1/d"', "malformed IPv6 host"),  # urlsplit: Invalid IPv6 URL
    ('[sources.a]\nurl = "postgresql://u:s3c/ret@h:5432/d"', "must be percent-encoded"),  # urlsplit read 's3c' as the port
])
def test_malformed_catalogs_are_config_errors_without_secrets(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "sluice.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        load_catalog(path)
    assert "s3c" not in str(caught.value) and str(path) in str(caught.value)


def test_run_sql_checks_remote_sql_in_the_real_engines() -> None:
    """The oracle itself: pushed text that SQLite cannot run is a violation, not a pass."""
    with pytest.raises(Violation, match="fails in SQLite"):
        check_remote("lite", TABLES["lite"], ['"i" = ABS('])
    run_sql(b"SELECT * FROM lite.t WHERE s = 'x\\'; DROP TABLE t; --'")
