"""``DELETE FROM`` on writable SQL sources (sluice/planner/deletes.py): pushed when exact, else by key or refused.

Differential, per source (PostgreSQL, MariaDB, SQLite, DuckDB), over a copy of the edge-value
table (tests/edge_data.py: NULL, NaN, ±0.0, '', trailing spaces, case variants, non-ASCII,
integer extremes, decimals, DST timestamps): for each generated condition the copy is
refilled, Sluice deletes, and the ids the source's own driver reads back must be the ids
of the rows Spark's own ``NOT cond OR cond IS NULL`` keeps over the rows read before (a
NULL condition keeps its row, as Spark's DELETE does). A condition with a conjunct the
source does not evaluate exactly runs through Spark's row-level rewrite (the copies have a
primary key) and must leave the same rows; on a keyless table it is refused, naming it, and
the table keeps its rows. Also: a read-only source is refused naming
``writable=true``, and a statement failing mid-way (a trigger) leaves the table as it was.
The full generated set is slow; the main tier runs one condition of each kind.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import psycopg
import pytest

from sluice.errors import SluiceError
from tests.sources import MYSQL_SERVER, PG_URL, mariadb

pytestmark = pytest.mark.integration
#: what the planner logs when a DELETE is left to Spark's row-level rewrite (the table has a key)
_BY_KEY = "row-level rewrite deletes by key"

_SCHEMA = "sluice_del"  # PostgreSQL schema and MariaDB database of the copies (the edge tables stay as they are)

# Literals per column, spelled as Spark SQL; each column gets comparisons, IN, IS NULL and NOT over them
_VALUES: dict[str, list[str]] = {
    "i": ["0", "-2147483648", "2147483647", "7"],
    "b": ["9223372036854775807", "-9223372036854775808", "9007199254740993", "42"],
    "f": ["0.0", "-0.0", "CAST('NaN' AS DOUBLE)", "1e308", "0.1"],
    "r": ["CAST(1.5 AS FLOAT)", "CAST(0.1 AS FLOAT)", "CAST('NaN' AS FLOAT)"],
    "d": ["1.5", "-0.0001", "12345678901234.5678", "0"],
    "t": ["'a'", "''", "'a '", "'ß'", "'日本'", "'A'"],
    "tc": ["'a'", "'B'", "'é'", "'trail  '"],
    "ch": ["'a'", "' '", "'MiXeD'", "'😀'"],
    "dt": ["DATE'2024-02-29'", "DATE'0001-01-01'", "DATE'9999-12-31'"],
    "ts": ["TIMESTAMP'2024-03-10 03:00:00'", "TIMESTAMP'2024-11-03 01:30:00'", "TIMESTAMP'1970-01-01 00:00:00Z'"],
    "tn": ["TIMESTAMP_NTZ'2024-03-10 02:30:00'", "TIMESTAMP_NTZ'2000-01-01 00:00:00'"],
}


def conditions() -> list[str]:
    """The generated conditions: per column, =, <>, <, >=, IN, IS NULL and NOT; per string
    column LIKE and startswith; boolean tests; AND/OR/NOT combinations across columns."""
    out: list[str] = []
    for column, values in _VALUES.items():
        first, second = values[0], values[1]
        out += [
            f"{column} = {first}",
            f"{column} <> {second}",
            f"{column} < {second}",
            f"{column} >= {values[-1]}",
            f"{column} IN ({', '.join(values)})",
            f"{column} IS NULL",
            f"NOT ({column} = {values[-1]})",
        ]
        if column in ("t", "tc", "ch"):
            out += [f"{column} LIKE 'a%'", f"startswith({column}, 'a')", f"{column} LIKE '%b'"]
    out += [
        "flag",
        "NOT flag",
        "flag IS NULL",
        "i > 0 AND f < 1.5",
        "i IS NULL OR b < 0",
        "NOT (d > 1 OR dt < DATE'2000-01-01')",
        "(t = 'a' OR tc = 'B') AND id < 60",
        "id >= 40 AND (f IS NULL OR NOT (f = 0.0))",
        "ts >= TIMESTAMP'2024-03-10 03:00:00' AND flag",
        "id % 3 = 0",
        "id < 0",  # deletes nothing
    ]
    return out


CONDITIONS = conditions()
#: the main tier's share (each a DELETE, a refill and a read back), one of each kind
QUICK = [
    "f <> -0.0",  # -0.0 = 0.0 and NaN = NaN in Spark
    "d IN (1.5, -0.0001, 12345678901234.5678, 0)",
    "t = 'a'",  # MariaDB: a _ci column
    "ch LIKE 'a%'",  # PostgreSQL: blank-padded char(20)
    "startswith(tc, 'a')",
    "ts < TIMESTAMP'2024-11-03 01:30:00'",  # the repeated hour of the session zone
    "NOT (d > 1 OR dt < DATE'2000-01-01')",
    "i IS NULL OR b < 0",
    "id < 0",  # deletes nothing
]
assert set(QUICK) <= set(CONDITIONS)


@dataclass(frozen=True)
class Copy:
    """A source's copy of the edge table: ``table`` (Spark's name) refilled from ``original``."""

    catalog: str
    original: str
    table: str
    refill: Callable[[], None]
    ids: Callable[[], list[int]]
    run: Callable[[str], None]  # a statement on the copy's database, by the source's own driver


def _pg(statement: str) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute(statement)


def _pg_ids() -> list[int]:
    with psycopg.connect(PG_URL) as connection:
        return sorted(r[0] for r in connection.execute(f"SELECT id FROM {_SCHEMA}.edge_del").fetchall())


def _my(statement: str) -> None:
    with mariadb(_SCHEMA) as connection, connection.cursor() as cursor:
        cursor.execute(statement)


def _my_ids() -> list[int]:
    with mariadb(_SCHEMA) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT id FROM edge_del")
        return sorted(r[0] for r in cursor.fetchall())


def _file_copy(path: Path, kind: str) -> tuple[Callable[[str], None], Callable[[], list[int]]]:
    """Run and read-ids functions on a SQLite or DuckDB file (each opens and closes the file:
    a DuckDB file takes one writer)."""

    def run(statement: str) -> None:
        if kind == "sqlite":
            with sqlite3.connect(path) as connection:
                connection.executescript(statement)
            connection.close()
        else:
            with duckdb.connect(str(path)) as connection:
                connection.execute(statement)

    def ids() -> list[int]:
        if kind == "sqlite":
            connection = sqlite3.connect(path)
            try:
                return sorted(r[0] for r in connection.execute("SELECT id FROM edge_del").fetchall())
            finally:
                connection.close()
        with duckdb.connect(str(path), read_only=True) as connection:
            return sorted(r[0] for r in connection.execute("SELECT id FROM edge_del").fetchall())

    return run, ids


@pytest.fixture(scope="module")
def copies(spark, edge_tables, tmp_path_factory):
    """Each SQL source attached writable (``dpg``, ``dmy``, ``dlite``, ``dduck``) with a copy
    ``edge_del`` of its edge table (the same column types and collations), and SQLite's also
    read-only (``rolite``)."""
    from sluice import Federation
    from tests import edge_data

    folder = tmp_path_factory.mktemp("deletes")
    lite, duck = folder / "edge.db", folder / "edge.duckdb"
    edge_data.create_sqlite(str(lite))
    edge_data.create_duckdb(str(duck))
    with sqlite3.connect(lite) as connection:
        (ddl,) = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'edge'").fetchone()
        connection.execute(re.sub(r"^CREATE TABLE \"?edge\"?", "CREATE TABLE edge_del", ddl))
    connection.close()
    with duckdb.connect(str(duck)) as connection:
        found_ddl = connection.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'edge'").fetchone()
        assert found_ddl is not None
        (ddl,) = found_ddl
        connection.execute(re.sub(r"^CREATE TABLE (main\.)?\"?edge\"?", "CREATE TABLE edge_del", ddl))
    _pg(f"DROP SCHEMA IF EXISTS {_SCHEMA} CASCADE")
    _pg(f"CREATE SCHEMA {_SCHEMA}")
    _pg(f"CREATE TABLE {_SCHEMA}.edge_del (LIKE sluice_test.edge INCLUDING ALL)")
    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_SCHEMA}")
        cursor.execute(f"CREATE DATABASE {_SCHEMA}")
        cursor.execute(f"CREATE TABLE {_SCHEMA}.edge_del LIKE sluice_test.edge")

    def _my_refill() -> None:
        _my("DELETE FROM edge_del")
        _my("INSERT INTO edge_del SELECT * FROM sluice_test.edge")

    lite_run, lite_ids = _file_copy(lite, "sqlite")
    duck_run, duck_ids = _file_copy(duck, "duckdb")
    found = {
        "pg": Copy(
            "dpg",
            "dpg.sluice_test.edge",
            f"dpg.{_SCHEMA}.edge_del",
            lambda: _pg(
                f"DELETE FROM {_SCHEMA}.edge_del; INSERT INTO {_SCHEMA}.edge_del SELECT * FROM sluice_test.edge"
            ),
            _pg_ids,
            _pg,
        ),
        "my": Copy(
            "dmy",
            "dmy.sluice_test.edge",
            f"dmy.{_SCHEMA}.edge_del",
            _my_refill,
            _my_ids,
            _my,
        ),
        "lite": Copy(
            "dlite",
            "dlite.main.edge",
            "dlite.main.edge_del",
            lambda: lite_run("DELETE FROM edge_del; INSERT INTO edge_del SELECT * FROM edge;"),
            lite_ids,
            lite_run,
        ),
        "duck": Copy(
            "dduck",
            "dduck.main.edge",
            "dduck.main.edge_del",
            lambda: duck_run("DELETE FROM edge_del; INSERT INTO edge_del SELECT * FROM edge"),
            duck_ids,
            duck_run,
        ),
    }
    fed = Federation(spark=spark)
    fed.attach("dpg", PG_URL, writable=True)
    fed.attach("dmy", f"mysql://root@{MYSQL_SERVER}/{_SCHEMA}", writable=True)
    fed.attach("dlite", f"sqlite:///{lite}", writable=True)
    fed.attach("dduck", f"duckdb:///{duck}", writable=True)
    fed.attach("rolite", f"sqlite:///{lite}")
    yield fed, found
    for name in ("dpg", "dmy", "dlite", "dduck", "rolite"):
        fed.detach(name)
    _pg(f"DROP SCHEMA IF EXISTS {_SCHEMA} CASCADE")
    _my(f"DROP DATABASE IF EXISTS {_SCHEMA}")


def _differential(spark, copies, source: str, chosen: list[str], caplog) -> None:
    """Each condition of ``chosen`` deleted by Sluice from the refilled copy (see the module docstring)."""
    fed, found = copies
    copy = found[source]
    before = fed.sql(f"SELECT * FROM {copy.original}").cache()
    every = sorted(r.id for r in before.select("id").collect())
    kept_columns = [f"NOT ({c}) OR ({c}) IS NULL" for c in chosen]
    truth = before.selectExpr("id", *(f"{k} AS k{n}" for n, k in enumerate(kept_columns))).collect()
    deleted, refused, wrong = 0, [], []
    for n, condition in enumerate(chosen):
        copy.refill()
        assert copy.ids() == every
        expected = sorted(row.id for row in truth if row[f"k{n}"])
        caplog.clear()
        try:
            with caplog.at_level(logging.INFO, logger="sluice.planner.deletes"):
                fed.sql(f"DELETE FROM {copy.table} WHERE {condition}")
        except Exception as error:  # noqa: BLE001 - a refusal: the copy must be unchanged
            message = str(error)
            assert "nothing was deleted" in message or "translate" in message, (condition, message)
            refused.append(condition)
            if copy.ids() != every:
                wrong.append((condition, "refused, yet rows were deleted"))
            continue
        left = copy.ids()
        if left != expected:
            wrong.append((condition, f"left {sorted(set(left) ^ set(expected))} differently"))
        messages = [r.getMessage() for r in caplog.records]
        if not any(_BY_KEY in m for m in messages):  # the source's own DELETE ran: it counted the rows
            said = [m for m in messages if "rows deleted" in m]
            assert said and said[-1].endswith(f": {len(every) - len(left)} rows deleted"), (condition, said)
        deleted += 1
    before.unpersist()
    assert wrong == []
    assert deleted >= len(chosen) // 3, f"only {deleted} of {len(chosen)} ran; refused: {refused}"


@pytest.mark.parametrize("source", ["pg", "my", "lite", "duck"])
def test_delete_leaves_the_rows_spark_keeps(spark, copies, source: str, caplog) -> None:
    _differential(spark, copies, source, QUICK, caplog)


@pytest.mark.slow
@pytest.mark.parametrize("source", ["pg", "my", "lite", "duck"])
def test_delete_leaves_the_rows_spark_keeps_every_condition(spark, copies, source: str, caplog) -> None:
    _differential(spark, copies, source, CONDITIONS, caplog)


_NOT_EXACT = [
    ("my", "flag", "tinyint"),  # MariaDB's BOOLEAN may hold 2, which Spark never reads as a boolean
    ("lite", "tc = 'a'", "NOCASE"),  # SQLite's NOCASE equality matches 'A' too, Spark's does not
]


@pytest.mark.parametrize(("source", "conjunct", "reason"), _NOT_EXACT)
def test_a_conjunct_that_is_not_exact_deletes_by_key_what_spark_selects(
    spark, copies, source: str, conjunct: str, reason: str, caplog
) -> None:
    """On a table with a primary key (the edge copies have one) a condition the source does not
    evaluate exactly is not pushed: Spark's row-level rewrite evaluates it and Sluice deletes
    the rows it selects by their key, leaving what Spark's own filter keeps. (A MariaDB ``_ci``
    equality is EXACT: the classifier compares in a NO PAD binary collation besides, and the
    differential above deletes by it.)"""
    _differential(spark, copies, source, [f"id < 40 AND {conjunct}"], caplog)
    said = [r.getMessage() for r in caplog.records if _BY_KEY in r.getMessage()]
    assert said and f"`{conjunct.split()[0]}`" in said[-1] and reason in said[-1], said


@pytest.mark.parametrize(("source", "conjunct", "reason"), _NOT_EXACT)
def test_a_conjunct_that_is_not_exact_is_refused_on_a_keyless_table(copies, source, conjunct, reason) -> None:
    """Without a key there is no row identity to delete by: the whole statement is refused,
    naming the conjunct and the classifier's reason, and the table keeps every row."""
    fed, found = copies
    copy = found[source]
    if source == "my":
        copy.run("DROP TABLE IF EXISTS keyless")
        copy.run("CREATE TABLE keyless (id INT, tc VARCHAR(10), flag BOOLEAN) ENGINE=InnoDB")
        copy.run("INSERT INTO keyless VALUES (1, 'a', 1), (2, 'A', 0), (3, NULL, NULL), (50, 'a', 1)")
    else:
        copy.run(
            "DROP TABLE IF EXISTS keyless; CREATE TABLE keyless (id INTEGER, tc TEXT COLLATE NOCASE, flag BOOLEAN); "
            "INSERT INTO keyless VALUES (1, 'a', 1), (2, 'A', 0), (3, NULL, NULL), (50, 'a', 1);"
        )
    table = copy.table.replace("edge_del", "keyless")
    with pytest.raises(Exception, match=r"(?s)not EXACT.*INEXACT.*nothing was deleted") as refused:
        fed.sql(f"DELETE FROM {table} WHERE id < 40 AND {conjunct}")
    message = str(refused.value)
    assert f"`{conjunct.split()[0]}`" in message and reason in message and "`id`" not in message
    assert sorted(r.id for r in fed.sql(f"SELECT id FROM {table}").collect()) == [1, 2, 3, 50]
    copy.run("DROP TABLE keyless")


def test_a_read_only_source_is_refused(copies) -> None:
    fed, found = copies
    copy = found["lite"]
    copy.refill()
    every = copy.ids()
    with pytest.raises(Exception, match="read-only.*DELETE FROM needs it attached with writable=true"):
        fed.sql("DELETE FROM rolite.main.edge_del WHERE id < 10")
    assert copy.ids() == every


def test_delete_without_where_and_truncate_empty_the_table(copies) -> None:
    fed, found = copies
    for source, statement in (("pg", "DELETE FROM {}"), ("my", "TRUNCATE TABLE {}"), ("duck", "TRUNCATE TABLE {}")):
        copy = found[source]
        copy.refill()
        fed.sql(statement.format(copy.table))
        assert copy.ids() == [], source


#: per source: a trigger failing the statement when it reaches row 70, after deleting others
_FAILING = {
    "pg": (
        f"CREATE FUNCTION {_SCHEMA}.refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$BEGIN IF OLD.id = 70 THEN RAISE EXCEPTION 'row 70 refused'; END IF; RETURN OLD; END$$; "
        f"CREATE TRIGGER refuse BEFORE DELETE ON {_SCHEMA}.edge_del FOR EACH ROW EXECUTE FUNCTION {_SCHEMA}.refuse()",
        f"DROP TRIGGER refuse ON {_SCHEMA}.edge_del; DROP FUNCTION {_SCHEMA}.refuse()",
    ),
    "my": (
        "CREATE TRIGGER refuse BEFORE DELETE ON edge_del FOR EACH ROW IF OLD.id = 70 THEN "
        "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row 70 refused'; END IF",
        "DROP TRIGGER refuse",
    ),
    "lite": (
        "CREATE TRIGGER refuse BEFORE DELETE ON edge_del WHEN old.id = 70 BEGIN SELECT RAISE(ABORT, 'row 70 refused'); END;",
        "DROP TRIGGER refuse;",
    ),
    "duck": (
        "CREATE TABLE child (parent BIGINT REFERENCES edge_del (id)); INSERT INTO child VALUES (70)",
        "DROP TABLE child",
    ),
}


@pytest.mark.parametrize("source", ["pg", "my", "lite", "duck"])
def test_a_statement_failing_midway_leaves_the_table_as_it_was(copies, source: str) -> None:
    fed, found = copies
    copy = found[source]
    copy.refill()
    every = copy.ids()
    create, drop = _FAILING[source]
    copy.run(create)
    try:
        with pytest.raises(Exception, match="(?i)nothing was deleted.*(row 70|foreign key|constraint)"):
            fed.sql(f"DELETE FROM {copy.table} WHERE id >= 10")
        assert copy.ids() == every
    finally:
        copy.run(drop)


def test_a_condition_on_a_value_spark_cannot_read_is_refused(copies) -> None:
    """PostgreSQL's ``infinity`` dates have no Spark value: a pushed DELETE testing such a column
    (``d < DATE'2000-01-01'``, which PostgreSQL holds TRUE for ``-infinity``) fails as a read of
    the row fails, naming column and value, and deletes nothing; a condition on other columns
    deletes as usual, a row holding ``infinity`` included."""
    fed = copies[0]
    table = f"{_SCHEMA}.inf_del"
    _pg(f"DROP TABLE IF EXISTS {table}")
    _pg(f"CREATE TABLE {table} (id int PRIMARY KEY, d date)")
    _pg(f"INSERT INTO {table} VALUES (1, '-infinity'), (2, '1999-01-01'), (3, '2024-01-01'), (4, 'infinity')")

    def ids() -> list[int]:
        with psycopg.connect(PG_URL) as connection:
            return sorted(r[0] for r in connection.execute(f"SELECT id FROM {table}").fetchall())

    for condition in ("d < DATE'2000-01-01'", "d IS NULL OR id = 3", "d > DATE'2000-01-01' AND id > 0"):
        with pytest.raises(SluiceError, match=r"column 'd' holds '-?infinity'"):
            fed.sql(f"DELETE FROM dpg.{table} WHERE {condition}")
        assert ids() == [1, 2, 3, 4], condition
    fed.sql(f"DELETE FROM dpg.{table} WHERE id IN (2, 4)")
    assert ids() == [1, 3]
    _pg(f"DROP TABLE {table}")
