"""EXPLAIN of a write, planned without Spark (sluice/planner/write_explain.py) on real SQLite and DuckDB files.

The planner's answer must name the path and list the statements the write would run, built by
the same functions the write runs them with, and answering must leave the file as it was.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import duckdb
import pytest

from sluice.planner.write_explain import explain_write
from sluice.protocol.catalog import ExplainWriteRequest
from sluice.sources import open_source

_WRITABLE = {"writable": "true"}
_QTY_ABOVE_2 = {"op": ">", "args": [{"ref": ["qty"]}, {"lit": "2", "type": "int"}]}


@pytest.fixture
def lite(tmp_path: Path) -> Path:
    path = tmp_path / "w.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE stock (sku TEXT NOT NULL PRIMARY KEY, qty INT NOT NULL, note TEXT)")
        db.execute("CREATE TABLE tags (name TEXT COLLATE NOCASE)")
        db.execute("INSERT INTO stock VALUES ('a', 5, NULL), ('b', 0, 'x')")
    return path


def _explain(url: str, table: str, namespace: str = "main", **asked: object) -> str:
    source = open_source("w", url)
    request = ExplainWriteRequest(catalog="w", options=dict(_WRITABLE), namespace=[namespace], name=table, **asked)  # type: ignore[arg-type]  # the modes' own keys
    return explain_write(source, request).description


def test_sqlite_paths_and_statements(lite: Path) -> None:
    before = hashlib.sha256(lite.read_bytes()).hexdigest()
    url = f"sqlite:///{lite}"
    insert = _explain(url, "stock", mode="append")
    assert "SluiceWrite INSERT INTO main.stock on w" in insert
    assert "Path: one SQLite transaction" in insert
    assert (
        'Remote: BEGIN IMMEDIATE | Remote: INSERT INTO main."stock" ("sku", "qty", "note") VALUES (?, ?, ?)' in insert
    )
    assert "DELETE FROM" not in insert
    overwrite = _explain(url, "stock", mode="overwrite")
    assert 'Remote: DELETE FROM main."stock" | Remote: INSERT INTO' in overwrite
    pushed = _explain(url, "stock", mode="delete", predicates=[_QTY_ABOVE_2])
    assert "Path: pushed DELETE" in pushed and "Remote: DELETE FROM" in pushed and "[EXACT]" in pushed
    merge = _explain(url, "stock", mode="delta", command="MERGE", row_id=["sku"], not_pushed="")
    assert "SluiceWrite MERGE" in merge and "Path: row-level delta" in merge
    assert 'Remote: DELETE FROM main."stock" WHERE "sku" = ?' in merge
    assert 'Remote: UPDATE main."stock" SET "sku" = ?, "qty" = ?, "note" = ? WHERE "sku" = ?' in merge
    nocase = {"op": "=", "args": [{"ref": ["name"]}, {"lit": "a", "type": "string"}]}
    refused = _explain(url, "tags", mode="delete", predicates=[nocase])
    assert "Path: refused" in refused and "not EXACT" in refused
    read_only = explain_write(
        open_source("r", url), ExplainWriteRequest(catalog="r", namespace=["main"], name="stock", mode="append")
    ).description
    assert "Path: refused" in read_only and "writable=true" in read_only
    assert hashlib.sha256(lite.read_bytes()).hexdigest() == before


def test_duckdb_arrow_append(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR)")
    text = _explain(f"duckdb:///{path}", "t", mode="overwrite")
    assert "Path: DuckDB Arrow append" in text
    assert (
        'Remote: DELETE FROM "main"."t" | Remote: INSERT INTO "main"."t" ("id", "v") SELECT c0, c1 FROM sluice_rows'
        in text
    )
    delta = _explain(f"duckdb:///{path}", "t", mode="delta", command="UPDATE", row_id=["id"])
    assert 'UPDATE "main"."t" AS t SET "id" = s.c0, "v" = s.c1 FROM sluice_delta AS s WHERE t."id" = s.k0' in delta
