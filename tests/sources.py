"""The real sources the integration suite runs against, one entry each.

A source joins the shared suites (contract, differential, query shapes) by adding an
entry here and a loader in ``tests/edge_data.py``. ``SLUICE_TEST_SOURCES=pg,lite`` runs
the suites against a subset (handy while a new source is being built); the default is all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

PG_URL = os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("SLUICE_MYSQL_URL", "mysql://root@127.0.0.1:3306/test")
_MYSQL = urlsplit(MYSQL_URL)
#: ``host:port`` of the test MariaDB server (MYSQL_URL's), for URLs naming another database or user on it
MYSQL_SERVER = f"{_MYSQL.hostname or '127.0.0.1'}:{_MYSQL.port or 3306}"


def mariadb(database: str | None = None, **options: Any) -> Any:
    """A connection to the test MariaDB server as MYSQL_URL's user (root), autocommit, utf8mb4.

    Tests make their own databases on that server; every connection goes through here so a
    run with SLUICE_MYSQL_URL pointing at another server stays on it."""
    import pymysql

    settings: dict[str, Any] = {"charset": "utf8mb4", "autocommit": True, **options}
    return pymysql.connect(
        host=_MYSQL.hostname or "127.0.0.1",
        port=_MYSQL.port or 3306,
        user=unquote(_MYSQL.username or "root"),
        password=unquote(_MYSQL.password or ""),
        database=database,
        **settings,
    )


def mariadb_execute(*statements: str) -> None:
    """Run ``statements`` in turn on one :func:`mariadb` connection (a test's tables)."""
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        connection.close()


@dataclass(frozen=True)
class TestSource:
    """An attached source name, the edge table's name in Sluice SQL, and how it is attached."""

    name: str
    edge_table: str
    kind: str  # the key of its loader in tests.edge_data.LOADERS
    scheme: str  # its URL scheme: the key of its Source class in sluice.sources.SCHEMES
    #: whether some edge column compares loosely enough that pushdown can only be INEXACT
    #: (DuckDB pushes every collation exactly through a binary collation; MySQL too, but its
    #: TINYINT(1) booleans are pushed as supersets that keep the rows holding other values)
    has_inexact: bool = True

    __test__ = False  # not a pytest test class


#: One entry per kind of source: the registry every harness follows (edge tables, fuzz loaders,
#: bench drivers, golden SQL, the pushdown matrix); tests/unit/test_source_registry.py fails,
#: naming what is missing, when a kind of source in sluice.sources.SCHEMES lacks a piece.
ALL = (
    TestSource("pg", "pg.sluice_test.edge", "postgres", "postgresql"),
    TestSource("lite", "lite.edge", "sqlite", "sqlite"),
    TestSource("my", "my.sluice_test.edge", "mysql", "mysql"),
    TestSource("duck", "duck.edge", "duckdb", "duckdb", has_inexact=False),
    TestSource("lake", "lake.sluice_test.edge", "iceberg", "iceberg+sqlite", has_inexact=False),
)


def selected() -> tuple[TestSource, ...]:
    wanted = os.environ.get("SLUICE_TEST_SOURCES")
    if not wanted:
        return ALL
    names = {name.strip() for name in wanted.split(",")}
    unknown = names - {s.name for s in ALL}
    if unknown:
        raise ValueError(f"SLUICE_TEST_SOURCES names unknown sources {sorted(unknown)}; known: {[s.name for s in ALL]}")
    return tuple(s for s in ALL if s.name in names)


#: source name -> edge table, for the selected sources (parametrize over its keys)
EDGE_TABLES = {s.name: s.edge_table for s in selected()}
#: source name -> its entry, for the selected sources
BY_NAME = {s.name: s for s in selected()}
