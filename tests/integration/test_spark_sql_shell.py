"""Sluice in a Spark without a Python driver: the ``spark-sql`` shell of the pyspark wheel (issue 28).

The shell runs with Sluice's jar and catalog settings only (``sluice.spark.session.session_conf``):
its catalogs plan in a planner process the JVM starts (sluice/spark/planner_process.py) and its
scans are read by the reader registered from that process. Every query's rows, printed by the
shell, equal what a classic PySpark session answers for the same query over the same data
(py4j planner), formatted by Spark's own ``HiveResult`` (what the shell prints with). The planner
process killed while it answers fails that query, saying so, and the shell's next query answers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
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
    return subprocess.Popen(  # the wheel's own launcher
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


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets ``pid`` holds open."""
    inodes = set()
    for fd in (Path("/proc") / str(pid) / "fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def local_ports(pid: int) -> set[int]:
    """The local TCP ports of ``pid``'s connections (its PostgreSQL sessions' client ports)."""
    inodes = socket_inodes(pid)
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in (Path("/proc") / str(pid) / "net" / table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def planner_processes(root: int) -> list[int]:
    """The planner processes in the shell's process tree (never another run's)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            pending.append(child)
            try:
                command = (Path("/proc") / str(child) / "cmdline").read_bytes()
            except OSError:
                continue
            if b"sluice.spark.planner_process" in command:
                found.append(child)
    return found


def kill_the_waiting_planner(run: subprocess.Popen[str], watch: psycopg.Connection[Any]) -> tuple[int, str]:
    """Kill the shell's planner process once its own session (matched by client port) waits on a
    lock; its pid and the query it waited in."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and run.poll() is None:
        waiting = watch.execute(
            "SELECT client_port, query FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchall()
        for pid in planner_processes(run.pid) if waiting else []:
            ports = local_ports(pid)
            for port, query in waiting:
                if port in ports:
                    os.kill(pid, signal.SIGKILL)
                    return pid, query
        time.sleep(0.2)
    raise AssertionError(f"the planner process never waited on the lock: {run.communicate(timeout=600)[1][-3000:]}")


def test_the_planner_process_killed_mid_query_fails_that_query_and_the_next_one_answers(
    tmp_path: Path, data: dict[str, str], classic: Federation, spark: Any
) -> None:
    """The planner is killed while its own plan-time query waits on PostgreSQL (its EXPLAIN of the
    pushed query, which sizes the read, blocked by a lock on the table): that query fails naming
    the dead process, and the next query of the same shell (same JVM) plans in a new one."""
    query = "SELECT id, t FROM shell_pg.sluice_test.edge WHERE id < 5 ORDER BY id"
    script = with_markers([query, query])
    # pg_stat_activity is read from another connection: a transaction sees the statistics of its first read
    with psycopg.connect(PG_URL) as lock, psycopg.connect(PG_URL, autocommit=True) as watch:
        lock.execute("LOCK TABLE sluice_test.edge IN ACCESS EXCLUSIVE MODE")
        run = shell(tmp_path, data, script, "--hiveconf", "hive.cli.errors.ignore=true")
        try:
            killed, waited_in = kill_the_waiting_planner(run, watch)
        finally:
            lock.rollback()  # the next query reads the table
        out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err[-3000:]
    assert waited_in.startswith("EXPLAIN (FORMAT JSON) SELECT"), waited_in  # only the planner runs it
    said = (
        f"the Sluice planner process ({sys.executable} -m sluice.spark.planner_process, pid {killed}) ended while"
        " answering 'read' (killed by signal 9): this query fails; the next query starts a new planner process"
    )
    assert said in err, err[-3000:]
    parts = split(out)
    classic.activate()
    assert parts[0] == []  # the killed query printed no row
    assert parts[1] == printed(spark, query)
    assert len(parts[1]) == 5  # ids 0 to 4
