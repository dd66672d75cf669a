"""Sluice in a Spark without a Python driver: the ``spark-sql`` shell of the pyspark wheel (issue 28).

The shell runs with Sluice's jar and catalog settings only (``sluice.spark.session.session_conf``):
its catalogs plan in a planner process the JVM starts (sluice/spark/planner_process.py) and its
scans are read by the reader registered from that process. Every query's rows, printed by the
shell, equal what a classic PySpark session answers for the same query over the same data
(py4j planner), formatted by Spark's own ``HiveResult`` (what the shell prints with).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest

from sluice import Federation
from sluice.spark.session import session_conf
from tests import edge_data
from tests.conftest import SESSION_ZONE
from tests.sources import PG_URL

ROOT = Path(__file__).resolve().parents[2]
SHELL = Path(pyspark.__file__).resolve().parent / "bin" / "spark-sql"
MARKER = "sluice-statement-"
#: each statement's rows are compared with the classic session's; the shell's output is split by markers
QUERIES = [
    "SELECT * FROM shell_lite.edge ORDER BY id",
    "SELECT * FROM shell_pg.sluice_test.edge WHERE i > 0 OR t IS NULL ORDER BY id",
    "SELECT flag, count(*), sum(d), min(ts) FROM shell_pg.sluice_test.edge GROUP BY flag ORDER BY flag",
    "SELECT l.id, p.t, l.f FROM shell_lite.edge l JOIN shell_pg.sluice_test.edge p ON l.id = p.id WHERE l.id < 20 ORDER BY l.id",
]
#: read by Spark's Python workers rather than by the planner (a scan expecting few rows is read there)
WORKER_QUERY = "SELECT id, t, f, dt FROM shell_pg.sluice_test.edge WHERE f > 0 ORDER BY id"
EXPLAIN = "EXPLAIN FORMATTED SELECT id, t FROM shell_pg.sluice_test.edge WHERE i > 5"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("shell")
    edge_data.create_postgres(PG_URL)
    edge_data.create_sqlite(str(folder / "edge.db"))
    return {"shell_pg": PG_URL, "shell_lite": "sqlite:///" + str(folder / "edge.db")}


def shell(folder: Path, catalogs: dict[str, str], script: str, *extra: str) -> subprocess.Popen[str]:
    """The wheel's ``spark-sql`` running ``script`` with Sluice's settings (no Python driver)."""
    (folder / "script.sql").write_text(script)
    conf = {
        **session_conf(catalogs),
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": SESSION_ZONE,
        "spark.sql.shuffle.partitions": "4",
    }
    command = [str(SHELL), "--master", "local[2]", *extra]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.Popen(  # noqa: S603 - the wheel's own launcher
        [*command, "-f", str(folder / "script.sql")],
        cwd=folder,  # its metastore_db, derby.log and spark-warehouse
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def with_markers(statements: list[str]) -> str:
    return "".join(f"SELECT '{MARKER}{i}';\n{statement};\n" for i, statement in enumerate(statements))


def split(output: str) -> list[list[str]]:
    """The shell's output lines per statement (after each marker)."""
    parts: list[list[str]] = []
    for line in output.splitlines():
        if line.startswith(MARKER):
            parts.append([])
        elif parts:
            parts[-1].append(line)
    return parts


def printed(spark: Any, sql: str) -> list[str]:
    """``sql``'s rows in the classic session as the shell prints them (Spark's HiveResult)."""
    plan = spark.sql(sql)._jdf.queryExecution().executedPlan()
    lines = spark._jvm.org.apache.spark.sql.execution.HiveResult.hiveResultString(plan)
    return str(lines.mkString("\n")).splitlines()


@pytest.fixture(scope="module")
def classic(spark: Any, data: dict[str, str]) -> Iterator[Federation]:
    fed = Federation(spark=spark)
    for name, url in data.items():
        fed.attach(name, url)
    yield fed
    for name in data:
        fed.detach(name)


def test_spark_sql_shell_answers_spark_rows_and_explains_the_remote_query(
    tmp_path: Path, data: dict[str, str], classic: Federation, spark: Any
) -> None:
    script = with_markers([*QUERIES, "SET spark.sluice.smallReadRows=0", WORKER_QUERY, EXPLAIN])
    run = shell(tmp_path, data, script)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err[-3000:]
    parts = split(out)
    classic.activate()
    expected = [printed(spark, sql) for sql in QUERIES]
    assert parts[: len(QUERIES)] == expected
    assert len(expected[0]) == edge_data.ROWS
    spark.conf.set("spark.sluice.smallReadRows", "0")
    try:
        assert parts[len(QUERIES) + 1] == printed(spark, WORKER_QUERY)
    finally:
        spark.conf.unset("spark.sluice.smallReadRows")
    plan = "\n".join(parts[-1])
    assert "RemoteQuery" in plan and "sluice_test" in plan and "WHERE" in plan, plan
