"""Pushdown really moves work to the source: rows transferred equal the remote query's rows."""

from __future__ import annotations

import psycopg
import pytest

from tests.scalars import first_value

pytestmark = pytest.mark.integration


def _remote_count(fed, sql: str) -> int:
    with psycopg.connect(fed._sources["pg"]._libpq_url()) as connection:
        return first_value(connection.execute(f"SELECT count(*) FROM ({sql}) AS q").fetchone())


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM pg.sluice_test.edge WHERE i = 1 AND t < 'b'",
        "SELECT id, t FROM pg.sluice_test.edge WHERE f > 1.5 OR t LIKE 'a%'",
        "SELECT id FROM pg.sluice_test.edge WHERE ch = 'a'",
    ],
)
def test_rows_transferred_equal_the_remote_querys_rows(fed, query: str) -> None:
    plan = fed.plan(query)
    scan = plan.scans[0]
    expected = _remote_count(fed, scan.spec.query(fed._sources["pg"]))
    measured = fed.transferred(query)[scan.alias]["rows"]
    assert measured == expected
    assert measured < fed.transferred(query, pushdown=False)[scan.alias]["rows"] == 80


def test_limit_really_limits_remotely(fed) -> None:
    query = "SELECT id, i FROM pg.sluice_test.edge WHERE i > 0 ORDER BY i DESC NULLS LAST, id LIMIT 3"
    scan = fed.plan(query).scans[0]
    assert scan.spec.limit == 3 and "LIMIT 3" in scan.remote_query
    assert fed.transferred(query)[scan.alias]["rows"] == 3
    assert sorted(fed.sql(query).collect()) == sorted(fed.sql(query, pushdown=False).collect())


def test_projection_reads_fewer_bytes(fed) -> None:
    narrow = fed.transferred("SELECT id FROM pg.sluice_test.edge")
    wide = fed.transferred("SELECT * FROM pg.sluice_test.edge")
    assert next(iter(narrow.values()))["bytes"] < next(iter(wide.values()))["bytes"]


def test_sqlite_partitions_cover_every_row_once(spark, edge_tables) -> None:
    from sluice import Federation

    split = Federation(spark=spark)
    split.attach("lite", "sqlite:///" + edge_tables["sqlite_path"], partitions=4)
    scan = split.plan("SELECT id FROM lite.edge WHERE i > 0").scans[0]
    assert len(split._sources["lite"].tasks(scan.spec)) == 4
    rows = sorted(r.id for r in split.sql("SELECT id FROM lite.edge WHERE i > 0").collect())
    assert rows == sorted(r.id for r in split.sql("SELECT id FROM lite.edge WHERE i > 0", pushdown=False).collect())
    assert len(rows) == len(set(rows))


def test_postgres_block_ranges_cover_every_row_once(spark, pg_url) -> None:
    from sluice import Federation

    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS sluice_test.wide")
        connection.execute(
            "CREATE TABLE sluice_test.wide AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 40000) g"
        )
        connection.execute("DELETE FROM sluice_test.wide WHERE id % 7 = 0")  # holes in the blocks
    split = Federation(spark=spark)
    split.attach("pg", pg_url, partitions=4)
    query = "SELECT id FROM pg.sluice_test.wide WHERE v >= '8'"
    scan = split.plan(query).scans[0]
    tasks = split._sources["pg"].tasks(scan.spec)
    assert len(tasks) == 4 and all("ctid" in task.request for task in tasks)
    rows = [r.id for r in split.sql(query).collect()]
    with psycopg.connect(pg_url) as connection:
        expected = sorted(
            r[0] for r in connection.execute("SELECT id FROM sluice_test.wide WHERE v COLLATE \"C\" >= '8'")
        )
    assert sorted(rows) == expected and len(rows) == len(set(rows))
