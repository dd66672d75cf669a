"""The benchmark suite still runs: every scenario at a tiny scale, one round, and its report.

Benchmarks report rather than fail (docs/benchmarks.md); this only checks that every path
of every scenario runs, that raw paths return Sluice's rows, and that the page and its
plots render. It reuses the test session (so Spark's JDBC paths, which need jars on the
classpath, are skipped here) and regenerates the benchmark tables at 3,000 rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# slow: every scenario once is about five minutes on two quiet cores (make test-all runs it)
pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def ctx(spark, pg_url: str, mysql_url: str, tmp_path_factory):
    from bench.context import BenchContext
    from sluice import Federation

    return BenchContext(
        fed=Federation(spark=spark),
        scales=[3_000],
        runs=1,
        seed=1,
        quick=True,
        data_dir=str(tmp_path_factory.mktemp("bench")),
        pg_url=pg_url,
        mysql_url=mysql_url,
        shapes=["topn"],
    )


def _failures(record: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [
        (r["scenario"], r["shape"], r["path"], r["error"]) for s in record["scales"] for r in s["results"] if r["error"]
    ]


def test_sql_scenario_runs_every_path(ctx) -> None:
    from bench.scenarios import sql

    record = sql.run(ctx)
    (scale,) = record["scales"]
    assert scale["facts"]["same_data"], scale["facts"]["data"]
    assert not _failures(record)
    raw = [r for r in scale["results"] if r["scenario"].endswith("-raw") and not r["baseline"]]
    assert raw and all(r["check"] == "same" for r in raw), [(r["path"], r["check"]) for r in raw]
    groups = {r["scenario"] for r in scale["results"]}
    assert groups >= {f"{e}-{k}" for e in ("postgresql", "mariadb", "sqlite", "duckdb") for k in ("raw", "spark")}
    # top-N is pushed where the sort key orders alike (SQLite's timestamps are text: not pushed)
    topn = {
        r["scenario"]: r["rows"]
        for r in scale["results"]
        if r["shape"] == "topn" and r["scenario"].endswith("-raw") and r["baseline"]
    }
    assert topn == {"postgresql-raw": 10, "mariadb-raw": 10, "sqlite-raw": 3_000, "duckdb-raw": 10}
    _render(ctx, record, "sql")


@pytest.mark.parametrize(
    "key", ["lake", "flight", "planning", "catalog", "aggregates", "joins", "ingest", "writes", "lake-dml"]
)
def test_other_scenarios_run(ctx, key: str) -> None:
    import importlib

    record = importlib.import_module(f"bench.scenarios.{key.replace('-', '_')}").run(ctx)
    assert record["scales"] and not _failures(record)
    assert all(r.get("median_s") is not None for s in record["scales"] for r in s["results"])
    if key == "aggregates":  # every path's answer is the raw driver's; the GROUP BY pushed where the planner can
        assert all(r["check"] in ("same", "reference") for s in record["scales"] for r in s["results"])
        queries = record["scales"][0]["facts"]["queries"]
        assert {k: q["pushed"] for k, q in queries.items() if k.endswith("/group")} == {
            "postgresql/group": True,
            "mariadb/group": True,
            "sqlite/group": False,
            "sqlite-strict/group": True,
            "duckdb/group": True,
        }
    if key == "joins":
        # every answer is the raw driver's; every join pushed unless the join cost rule keeps it with
        # Spark (MariaDB without statistics for the filtered column, as on a fresh server); the star
        # join's runtime filter works
        from bench.scenarios.joins import KEPT_BY_COST

        assert all(r["check"] in ("same", "reference") for s in record["scales"] for r in s["results"])
        queries = record["scales"][0]["facts"]["queries"]
        assert all(q["pushed"] or KEPT_BY_COST in str(q["why"]) for q in queries.values()), queries
        assert all(q["pushed"] for name, q in queries.items() if not name.startswith("mariadb")), queries
        assert all(t["met"] is True for t in record["targets"]), record["targets"]
    if key == "ingest":  # both paths wrote every row; the small ingest wrote one file per partition
        assert all(r["check"] in ("same", "reference") for s in record["scales"] for r in s["results"])
        small = record["scales"][0]["facts"]["small_ingest"]
        assert small["rows"] == 2_000 and small["sluice_files"] == small["sluice_partitions"]
    if key == "writes":  # every path's table holds the raw driver's rows; the MERGE moved N/20 updates + N/20 inserts
        results = [r for s in record["scales"] for r in s["results"]]
        assert all(r["check"] in ("same", "reference") for r in results), [(r["path"], r["check"]) for r in results]
        engines = ("postgresql", "mariadb", "sqlite", "duckdb")
        groups = {f"{e}-insert" for e in engines} | {"postgresql-merge", "mariadb-merge"}
        assert {r["scenario"] for r in results} == groups
        assert record["scales"][0]["facts"]["changes"] == {"rows": 300, "updates": 150, "inserts": 150}
        assert all(r["rows"] == (3_000 if r["shape"] == "insert" else 3_150) for r in results)
        assert all(r["cpu_s"]["jvm"] > 0 for r in results if r["path"].startswith("Sluice"))
    if key == "lake-dml":  # a partition DELETE writes no file; every optimize beside the appends committed
        runs = record["scales"][0]["facts"]["runs"]
        assert [r["files_written"] for r in runs["partition"]] == [0.0] * len(runs["partition"])
        assert all(r["rows_deleted"] == 0 for r in runs["optimize"])
    _render(ctx, record, key)


def _render(ctx, record: dict[str, Any], key: str) -> None:
    from bench import report

    result = {
        "command": "test",
        "runs": 1,
        "wall_seconds": 1.0,
        "scenarios": [record],
        "machine": {
            "date": "-",
            "git_commit": "-",
            "cpu": "-",
            "cores": 2,
            "memory_gib": 1,
            "os": "-",
            "python": "-",
            "packages": {},
            "postgresql_server": "-",
            "postgresql_shared_buffers": "-",
            "sqlite_library": "-",
            "java": "-",
            "jdbc_jars": {},
        },
    }
    page = Path(ctx.data_dir) / f"{key}.md"
    report.write_markdown(result, "result.json", str(page))
    assert f"## {record['title']}" in page.read_text()
    if key not in ("planning", "lake-dml"):  # no baseline to plot against (one number; DML's own counts)
        assert (Path(ctx.data_dir) / f"{key}-plots" / f"{key}.png").stat().st_size > 1000
