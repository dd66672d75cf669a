"""Shared fixtures: one Spark session for the whole run, real servers, edge tables.

Spark starts once (about 8 s) and every integration test shares it. The session time
zone is America/New_York on purpose: DST makes timestamp pushdown earn its tests.
"""

from __future__ import annotations

import os

import pytest

PG_URL = os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test")
SESSION_ZONE = "America/New_York"


@pytest.fixture(scope="session")
def spark():
    from sluice.spark.session import build_session

    session = build_session(app_name="sluice-tests", conf={"spark.sql.session.timeZone": SESSION_ZONE,
                                                           "spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def pg_url() -> str:
    return PG_URL


@pytest.fixture(scope="session")
def fed(spark, pg_url, edge_tables):
    """A Federation over the PostgreSQL edge schema and the SQLite edge file."""
    from sluice import Federation

    federation = Federation(spark=spark)
    federation.attach("pg", pg_url)
    federation.attach("lite", "sqlite:///" + edge_tables["sqlite_path"])
    return federation


@pytest.fixture(scope="session")
def edge_tables(tmp_path_factory, pg_url):
    """Create the edge-value tables in PostgreSQL and SQLite (see tests/edge_data.py)."""
    from tests import edge_data

    path = str(tmp_path_factory.mktemp("sqlite") / "edge.db")
    edge_data.create_sqlite(path)
    edge_data.create_postgres(pg_url)
    return {"sqlite_path": path}
