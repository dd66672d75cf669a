"""DuckDB's classification traps: collations, literal typing, XOR, casts that round differently.

Each case pins a fact from the docstring of ``sluice/dialects/duckdb.py``: the level and,
where the spelling is the point, the remote SQL itself.
"""

from __future__ import annotations

from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.duckdb import DuckdbDialect
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import Translation
from sluice.pushdown.translator import Translator
from tests.unit.tables import DUCKDB_TABLE

E, U = Level.EXACT, Level.UNSUPPORTED
DIALECT = DuckdbDialect()


def _translate(predicate: str) -> Translation:
    return Translator(DIALECT, DUCKDB_TABLE, "America/New_York").predicate(
        cast(exp.Expression, sqlglot.parse_one(predicate, read="spark"))
    )


def _sql(predicate: str) -> str:
    translation = _translate(predicate)
    assert translation.sql is not None, translation.reason
    return DIALECT.render(translation.sql)


# predicate, level, a fragment the remote SQL must contain (None: not pushed)
CASES = [
    # collated text: every comparison forced to byte order, so exact (not a superset)
    ("ci = 'a'", E, '("ci" COLLATE "binary") = '),
    ("ci <> 'a'", E, '("ci" COLLATE "binary") <> '),
    ("ci IN ('a', 'b')", E, '("ci" COLLATE "binary") IN '),
    ("ci < 'b'", E, '("ci" COLLATE "binary") < '),
    ("ch <=> 'e'", E, '("ch" COLLATE "binary") IS NOT DISTINCT FROM '),
    ("ci LIKE 'a%'", E, '("ci" COLLATE "binary") LIKE \'a%\' ESCAPE'),
    ("startswith(ch, 'e')", E, '("ch" COLLATE "binary") LIKE \'e%\''),
    ("substr(ci, 1, 1) = 'a'", E, '(SUBSTRING("ci", 1, 1) COLLATE "binary") = '),
    (
        "coalesce(ci, name) = 'a'",
        E,
        '(COALESCE(("ci" COLLATE "binary"), ("name" COLLATE "binary")) COLLATE "binary") = ',
    ),  # differently collated parts compare as bytes
    ("name = ci", E, '("name" COLLATE "binary") = ("ci" COLLATE "binary")'),
    ("vw = 'a'", E, '("vw" COLLATE "binary") = '),  # a view column: collation unknown
    ("ci < NULL", E, '("ci" COLLATE "binary") < NULL'),  # DuckDB cannot collate an untyped NULL
    ("NOT (ci = 'a')", E, "NOT"),
    # byte-order text needs nothing
    ("name < 'b'", E, "\"name\" < 'b'"),
    ("code < 'b'", E, "\"code\" < 'b'"),  # COLLATE C is byte order
    ("name LIKE 'a\\\\%b'", E, "\"name\" LIKE 'a\\%b' ESCAPE '\\'"),
    ("upper(name) = 'A'", U, None),
    ("name ILIKE 'a%'", U, None),
    # integer arithmetic: ^ is XOR (DuckDB's ^ is power); literals typed, or DuckDB computes in the column's width
    ("i ^ 3 = 1", E, 'XOR("i", CAST(3 AS INT))'),
    ("ti + 1 > 5", E, 'ADD(CAST("ti" AS INT), CAST(1 AS INT)) > 5'),  # add(): MoveConstantsRule rewrites +
    ("u + 1 > 5", E, 'ADD(CAST("u" AS INT), CAST(1 AS INT))'),  # UTINYINT read as smallint
    ("id - 3 = i", E, 'SUBTRACT("id", CAST(3 AS BIGINT))'),
    ("i % 2 = 0", E, '"i" % CAST(2 AS INT)'),
    ("(i + 1) * 2 > 4", E, 'MULTIPLY(ADD("i", CAST(1 AS INT)), CAST(2 AS INT))'),
    ("length(name) + 1 > 3", E, 'ADD(CAST(LENGTH("name") AS INT), CAST(1 AS INT))'),  # DuckDB's length is BIGINT
    ("i / 2 > 1", U, None),  # Infinity on a zero divisor where ANSI Spark raises
    # float arithmetic: float with an integer is double in Spark, float with float stays float
    ("f + 1 > 2", E, 'ADD("f", CAST(1 AS DOUBLE))'),
    ("r * r > 2", E, 'MULTIPLY("r", "r")'),
    ("r + 1 > 2", E, 'ADD(CAST("r" AS DOUBLE), CAST(1 AS DOUBLE))'),
    ("f % 2 = 1", U, None),
    ("d + 1 > 2", U, None),
    # literals spelled with their type; decimals reach doubles through text (correct rounding)
    ("f = double('NaN')", E, "CAST('NaN' AS DOUBLE)"),
    ("f < double('-inf')", E, "CAST('-Infinity' AS DOUBLE)"),
    ("r = CAST(0.1 AS FLOAT)", E, "CAST('0.10000000149011612' AS REAL)"),
    ("d = 1.5", E, "CAST('1.5' AS DECIMAL(2, 1))"),
    ("d = 1.5D", E, 'CAST(CAST("d" AS TEXT) AS DOUBLE)'),
    ("h = 5", E, "\"h\" = CAST('5' AS DECIMAL(38, 0))"),
    ("h > 1.5D", E, 'CAST(CAST("h" AS TEXT) AS DOUBLE)'),
    ("ts > TIMESTAMP '2024-03-10 02:30:00'", E, "CAST('2024-03-10 07:30:00.000000+00:00' AS TIMESTAMPTZ)"),
    ("tn = TIMESTAMP_NTZ '0001-01-01 00:00:00'", E, "CAST('0001-01-01 00:00:00.000000' AS TIMESTAMP)"),
    ("tn > TIMESTAMP '2024-03-10 02:30:00'", U, None),  # NTZ against an instant in a DST zone
    ("n = 'a'", U, None),  # ENUM read as text: DuckDB orders and compares the enum
]


@pytest.mark.parametrize("predicate,level,fragment", CASES)
def test_duckdb_classification(predicate: str, level: Level, fragment: str | None) -> None:
    translation = _translate(predicate)
    assert translation.level is level, translation.reason
    if fragment is not None:
        assert fragment in _sql(predicate)


def test_reasons_name_the_collation() -> None:
    assert "NOCASE" in _translate("ci = 'a'").reason
    assert "catalog does not tell" in _translate("vw < 'b'").reason


def test_every_pushed_predicate_runs_in_duckdb() -> None:
    """Every rendered predicate binds and runs in a real DuckDB over the table's remote types."""
    import duckdb

    connection = duckdb.connect()
    columns = ", ".join(
        f'"{c.name}" {c.remote_type}' + (f" COLLATE {c.collation}" if c.collation not in (None, "unknown") else "")
        for c in DUCKDB_TABLE.columns
    )
    connection.execute(f"CREATE TABLE t ({columns})")
    connection.execute(
        "INSERT INTO t (id, i, ti, u, name, ci, ch, f, r, d, h) VALUES (1, 2, 3, 4, 'a', 'A', 'é', 0.5, 1.5, 2.5, 7)"
    )
    for predicate, level, _ in CASES:
        if level is E:
            connection.execute(f"SELECT count(*) FROM t WHERE {_sql(predicate)}").fetchall()
