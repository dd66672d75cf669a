"""Tables whose names differ only in case, on the real servers and files (issue 15, item 11).

Each source matches names its own way: PostgreSQL's quoted names are case-sensitive
(``"Cs"`` and ``cs`` are two tables), MariaDB's follow ``lower_case_table_names`` (0 on
this server: case-sensitive), SQLite and DuckDB ignore ASCII case only (``"É"`` and ``"é"``
are two tables). Every cache keyed by name (the Federation's descriptions, the Flight
server's) must key it the same way, or whichever table is described first is returned
for both: silently wrong rows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import psycopg
import pytest

from sluice import Federation
from sluice.catalog import SourceConfig
from sluice.serve.allowlist import AllowList
from sluice.serve.publish import PublishedTables
from sluice.serve.server import open_sources
from tests.sources import MYSQL_URL, PG_URL, mariadb

pytestmark = pytest.mark.integration

#: table name -> the one value its only row holds (and its column's name)
PAIR = {"Cs": "upper", "cs": "lower"}
UNICODE_PAIR = {"É": "upper", "é": "lower"}


@pytest.fixture(scope="module")
def pg_pair() -> str:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_case CASCADE")
        connection.execute("CREATE SCHEMA sluice_case")
        for name, value in PAIR.items():
            connection.execute(f'CREATE TABLE sluice_case."{name}" ({value}_col text)')
            connection.execute(f"INSERT INTO sluice_case.\"{name}\" VALUES ('{value}')")
    return PG_URL


@pytest.fixture(scope="module")
def my_pair() -> str:
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@lower_case_table_names")
            if cursor.fetchone()[0] != 0:
                pytest.skip("this MariaDB folds table names (lower_case_table_names != 0)")
            cursor.execute("DROP DATABASE IF EXISTS sluice_case")
            cursor.execute("CREATE DATABASE sluice_case")
            for name, value in PAIR.items():
                cursor.execute(f"CREATE TABLE sluice_case.`{name}` ({value}_col VARCHAR(10))")
                cursor.execute(f"INSERT INTO sluice_case.`{name}` VALUES ('{value}')")
    finally:
        connection.close()
    return MYSQL_URL


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("case")
    lite, duck = folder / "case.db", folder / "case.duckdb"
    with sqlite3.connect(lite) as connection:
        for name, value in UNICODE_PAIR.items():
            connection.execute(f'CREATE TABLE "{name}" ({value}_col TEXT)')
            connection.execute(f"INSERT INTO \"{name}\" VALUES ('{value}')")
    connection.close()
    with duckdb.connect(str(duck)) as connection:
        for name, value in UNICODE_PAIR.items():
            connection.execute(f'CREATE TABLE "{name}" ({value}_col VARCHAR)')
            connection.execute(f"INSERT INTO \"{name}\" VALUES ('{value}')")
    return {"lite": lite, "duck": duck}


def _read_both(spark, url: str, tables: dict[str, str], order: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each table of ``order`` read through one fresh Federation, in that order: (column, value) rows."""
    federation = Federation(spark=spark)
    federation.attach("src", url)
    found = {}
    for name in order:
        frame = federation.sql(f"SELECT * FROM src.{tables[name]}")
        found[name] = [(field, row[field]) for row in frame.collect() for field in frame.columns]
    return found


@pytest.mark.parametrize("order", [["Cs", "cs"], ["cs", "Cs"]])
def test_postgres_tables_differing_in_case_are_two_tables_in_either_order(
    spark, pg_pair: str, order: list[str]
) -> None:
    tables = {name: f"sluice_case.`{name}`" for name in PAIR}
    found = _read_both(spark, pg_pair, tables, order)
    assert found == {name: [(f"{value}_col", value)] for name, value in PAIR.items()}


@pytest.mark.parametrize("order", [["Cs", "cs"], ["cs", "Cs"]])
def test_mariadb_tables_differing_in_case_are_two_tables_in_either_order(spark, my_pair: str, order: list[str]) -> None:
    tables = {name: f"sluice_case.`{name}`" for name in PAIR}
    found = _read_both(spark, my_pair, tables, order)
    assert found == {name: [(f"{value}_col", value)] for name, value in PAIR.items()}


@pytest.mark.parametrize("kind", ["lite", "duck"])
@pytest.mark.parametrize("order", [["É", "é"], ["é", "É"]])
def test_sqlite_and_duckdb_fold_ascii_case_only(spark, files: dict[str, Path], kind: str, order: list[str]) -> None:
    scheme = {"lite": "sqlite", "duck": "duckdb"}[kind]
    url = f"{scheme}:///{files[kind]}"
    found = _read_both(spark, url, {name: f"`{name}`" for name in UNICODE_PAIR}, order)
    assert found == {name: [(f"{value}_col", value)] for name, value in UNICODE_PAIR.items()}
    # ASCII case is folded: another spelling names the same table, and shares its description
    federation = Federation(spark=spark)
    federation.attach("src", url)
    source = federation._sources["src"]
    assert source.table_key(None, "MAIN_TABLE") == source.table_key("main", "main_table")
    assert federation.table("src", None, "É") is not federation.table("src", None, "é")


def test_flight_publishing_keeps_the_two_postgres_tables_apart(pg_pair: str, my_pair: str) -> None:
    sources = open_sources([SourceConfig("pg", pg_pair), SourceConfig("my", my_pair)])
    published = PublishedTables(sources, AllowList.parse(["pg.sluice_case", "my.sluice_case"], [], "test"))
    for source, schema in (("pg", "sluice_case"), ("my", "sluice_case")):
        listed = sorted(path for path in published.paths([source, schema]))
        assert listed == [(source, schema, "Cs"), (source, schema, "cs")]
        for name in ["Cs", "cs"] if source == "pg" else ["cs", "Cs"]:
            _, table = published.resolve([source, schema, name])
            assert [c.name for c in table.columns] == [f"{PAIR[name]}_col"], (source, name)
    assert list(published.paths(["pg", "SLUICE_CASE"])) == []  # schema names are case-sensitive in PostgreSQL too
