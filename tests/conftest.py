"""Shared fixtures: one Spark session for the whole run, real servers, edge tables.

Spark starts once (about 8 s) and every integration test shares it. The session time
zone is America/New_York on purpose: DST makes timestamp pushdown earn its tests.
The sources under test are listed in ``tests/sources.py``.
"""

from __future__ import annotations

import os

import pytest

from tests.sources import MYSQL_URL, PG_URL, selected

SESSION_ZONE = "America/New_York"

# Time per file and per tier at the end of each run (the suite's budget).
pytest_plugins = ["tests.budget"]

# The bench smoke test's tables (bench/data.py), apart from those of a benchmark run beside the
# suite: sharing one schema, each rebuilt the other's tables mid-run.
os.environ.setdefault("SLUICE_BENCH_SCHEMA", "sluice_bench_tests")


@pytest.fixture(scope="session")
def spark():
    from sluice.spark.session import build_session

    session = build_session(
        app_name="sluice-tests", conf={"spark.sql.session.timeZone": SESSION_ZONE, "spark.sql.shuffle.partitions": "4"}
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def pg_url() -> str:
    return PG_URL


@pytest.fixture(scope="session")
def mysql_url() -> str:
    return MYSQL_URL


@pytest.fixture(scope="session")
def fed(spark, edge_tables):
    """A Federation with every selected source attached under its test name."""
    from sluice import Federation

    federation = Federation(spark=spark)
    for source in selected():
        federation.attach(source.name, edge_tables["urls"][source.name])
    return federation


@pytest.fixture(autouse=True)
def _fed_owns_its_catalogs(request):
    """Catalog names belong to the Spark session; tests attach sources of their own under the
    shared names (pg, lite, ...): the shared federation takes its catalogs back before each test."""
    if "fed" in request.fixturenames:
        request.getfixturevalue("fed").activate()


@pytest.fixture(scope="session")
def edge_tables(tmp_path_factory):
    """Create the edge-value tables in every selected source (see tests/edge_data.py)."""
    from tests import edge_data

    folder = tmp_path_factory.mktemp("edge")
    urls = {source.name: edge_data.LOADERS[source.kind](folder) for source in selected()}
    return {"urls": urls, "sqlite_path": str(folder / "edge.db"), "duckdb_path": str(folder / "edge.duckdb")}
