"""``exact_delete`` (sluice/planner/deletes.py): the WHERE a SQL source's DELETE runs, or why not.

On a real SQLite file (no Spark): Spark's ``AlwaysTrue`` / ``AlwaysFalse`` (boolean literals
on the wire), an exact conjunct rendered as a read renders it, and a NOCASE equality refused
with the classifier's reason, naming the conjunct.
"""

from __future__ import annotations

import sqlite3

import pytest

from sluice.planner.deletes import exact_delete
from sluice.sources.sqlite import SqliteSource

pytestmark = pytest.mark.unit


def _ref(name: str) -> dict:
    return {"ref": [name]}


def _lit(value: str, kind: str) -> dict:
    return {"lit": value, "type": kind}


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "d.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, s TEXT)")
    connection.close()
    source = SqliteSource("lite", f"sqlite:///{path}")
    return source, source.describe("main", "t")


def test_always_true_deletes_every_row_and_always_false_none(table) -> None:
    source, described = table
    every = exact_delete(source, described, [_lit("true", "boolean")], "UTC")
    assert every.exact and every.where is None and not every.nothing
    none = exact_delete(
        source, described, [{"op": "<", "args": [_ref("id"), _lit("3", "bigint")]}, _lit("false", "boolean")], "UTC"
    )
    assert none.nothing


def test_exact_conjuncts_are_rendered_as_a_read_renders_them(table) -> None:
    source, described = table
    decision = exact_delete(
        source,
        described,
        [
            {"op": "<", "args": [_ref("id"), _lit("3", "bigint")]},
            {"op": "=", "args": [_ref("s"), _lit("a'b", "string")]},
        ],
        "UTC",
    )
    assert decision.exact
    assert decision.where == "(\"id\" < 3) AND (\"s\" = 'a''b')"


def test_a_nocase_equality_is_refused_naming_it_and_why(table) -> None:
    source, described = table
    decision = exact_delete(
        source,
        described,
        [
            {"op": "<", "args": [_ref("id"), _lit("3", "bigint")]},
            {"op": "=", "args": [_ref("name"), _lit("a", "string")]},
        ],
        "UTC",
    )
    assert not decision.exact and decision.where is None
    assert decision.refused is not None
    assert "`name` = 'a'" in decision.refused and "INEXACT" in decision.refused and "NOCASE" in decision.refused
    assert "`id`" not in decision.refused
