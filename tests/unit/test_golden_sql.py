"""Golden files of generated SQL per dialect: tests/golden/<dialect>.txt.

Each line: ``predicate => LEVEL | remote SQL``. Regenerate after an intended change with
``SLUICE_UPDATE_GOLDEN=1 make unit`` and review the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.duckdb import DuckdbDialect
from sluice.dialects.mysql import MariadbDialect
from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.translator import Translator
from sluice.scan.spec import ScanSpec
from tests.unit.tables import DUCKDB_TABLE, MYSQL_TABLE, PG_TABLE, SQLITE_TABLE
from tests.unit.test_classification import CASES

GOLDEN = Path(__file__).parent.parent / "golden"
DIALECTS = {
    "postgres": (PostgresDialect(), PG_TABLE),
    "sqlite": (SqliteDialect(), SQLITE_TABLE),
    "mariadb": (MariadbDialect(), MYSQL_TABLE),
    "duckdb": (DuckdbDialect(), DUCKDB_TABLE),
}
EXTRA = [
    "name = 'o''brien'",
    "name = 'a\\\\b'",
    "name = 'x;DROP TABLE t;--'",
    "name = '日本'",
    "name LIKE '%[*?]%'",
    "NOT (i = 1 OR f > 2)",
    "i BETWEEN 1 AND 2",
    "ts = TIMESTAMP '2024-11-03 01:30:00'",
    "dt IN (DATE '0001-01-01')",
]


def render(name: str) -> str:
    dialect, table = DIALECTS[name]
    translator = Translator(dialect, table, "America/New_York")
    lines = []
    for predicate in [c[0] for c in CASES] + EXTRA:
        try:
            result = translator.predicate(cast(exp.Expression, sqlglot.parse_one(predicate, read="spark")))
        except Exception as error:  # noqa: BLE001 - a precondition failure is part of the record
            lines.append(f"{predicate} => ERROR {type(error).__name__}")
            continue
        # the tree as a scan carries it to the reader, rendered by the reader's own function
        carried = (
            ScanSpec("golden", "golden://", table, (), where=(Pushed(tree=result.sql),))
            if result.sql is not None
            else None
        )
        remote = ScanSpec.from_json(carried.to_json()).where_sql(dialect)[0] if carried is not None else "-"
        lines.append(f"{predicate} => {result.level.value} | {remote}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_golden(name: str) -> None:
    path = GOLDEN / f"{name}.txt"
    actual = render(name)
    if os.environ.get("SLUICE_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing {path}: run with SLUICE_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")
