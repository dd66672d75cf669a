"""Sluice over Spark Connect (issue 28): ``sluice server start`` and a remote client.

The server is the pyspark wheel's own Connect server started by the real command (``python -m
sluice.cli server start --source cpg=URL --port P``) in a state directory of the test's own, on
loopback. A Spark Connect client's ``spark.sql`` over its PostgreSQL edge table returns exactly
the rows a classic Sluice session (py4j planner) returns for the same query, and the rows Spark
returns with pushdown off; its EXPLAIN shows the pushed remote query; two client processes
querying at once both get them; ``status`` and ``stop`` work. The server costs a JVM start (about
10 s quiet, more under load), so those tests are ``slow``; the main tier keeps the checks that
need no server: a Connect session handed to ``Federation`` is refused naming ``sluice server
start``, and ``start`` fails clearly on a port in use and when the server dies while starting.

In this process the Connect session is built with the Connect builder itself
(``pyspark.sql.connect.session.SparkSession.builder``): the generic ``SparkSession.builder.remote``
sets ``SPARK_CONNECT_MODE_ENABLED`` in the environment, which turns every later classic PySpark
call of the test run into a Connect one. The two concurrent clients are processes of their own
and use the generic ``SparkSession.builder.remote`` as a user does.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sluice import Federation, server
from sluice.cli import main
from sluice.connect_client import ConnectClient
from sluice.errors import ConfigError
from tests import edge_data
from tests.conftest import SESSION_ZONE
from tests.integration.test_spark_sql_shell import local_ports, planner_processes
from tests.sources import PG_URL

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
QUERIES = [
    "SELECT * FROM cpg.sluice_test.edge WHERE i > 0 OR t IS NULL ORDER BY id",
    "SELECT flag, count(*) AS n, sum(d) AS total, min(ts) AS first FROM cpg.sluice_test.edge GROUP BY flag ORDER BY flag",
    "SELECT id, t, f FROM cpg.sluice_test.edge WHERE f > 0 ORDER BY id LIMIT 10",
]
EXPLAIN = "EXPLAIN FORMATTED SELECT id, t FROM cpg.sluice_test.edge WHERE i > 5"
#: one client process: the generic builder, as a user writes it; prints its rows canonical
CLIENT = """
import json, sys
from pyspark.sql import SparkSession
from tests.integration.test_spark_connect import canonical
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
spark.conf.set("spark.sql.session.timeZone", sys.argv[2])
print(json.dumps([canonical(spark.sql(query).collect()) for query in json.loads(sys.argv[3])]))
"""


def canonical(rows: list[Any]) -> str:
    """The rows as text that compares equal when the values are (NaN included)."""
    return repr([tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows])


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # the project's own command
        [sys.executable, "-m", "sluice.cli", "server", *args], capture_output=True, text=True, env=env, timeout=600
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of this module's ``sluice server`` commands: a state directory of its own
    (also set in this process, for ``sluice.server`` calls)."""
    folder = str(tmp_path_factory.mktemp("connect-server"))
    before = os.environ.get(server.DIR_VARIABLE)
    os.environ[server.DIR_VARIABLE] = folder
    yield {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    if before is None:
        del os.environ[server.DIR_VARIABLE]
    else:
        os.environ[server.DIR_VARIABLE] = before


@pytest.fixture(scope="module")
def running(server_env: dict[str, str]) -> Iterator[server.ServerState]:
    """``sluice server start --source cpg=PG_URL`` (the real command), stopped at the end."""
    edge_data.create_postgres(PG_URL)
    started = time.monotonic()
    done = cli("start", "--source", f"cpg={PG_URL}", "--port", str(free_port()), env=server_env)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"server start: {time.monotonic() - started:.1f} s: {done.stdout.strip()}")
    state = server.read_state()
    assert state is not None and state.url in done.stdout
    yield state
    if server.read_state() is not None:
        server.stop()


@pytest.fixture(scope="module")
def connect(running: server.ServerState) -> Iterator[Any]:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(running.url).create()
    session.conf.set("spark.sql.session.timeZone", SESSION_ZONE)
    yield session
    session.client.close()  # the server is stopped by now (test_status_and_stop): no release call to retry


@pytest.fixture(scope="module")
def classic(spark: Any, running: server.ServerState) -> Iterator[Federation]:
    fed = Federation(spark=spark)
    fed.attach("cpg", PG_URL)
    yield fed
    fed.detach("cpg")


@pytest.mark.slow
def test_a_connect_client_gets_the_rows_of_a_classic_session_and_of_spark_without_pushdown(
    connect: Any, classic: Federation
) -> None:
    for query in QUERIES:
        started = time.monotonic()
        remote = canonical(connect.sql(query).collect())
        took = time.monotonic() - started
        assert remote == canonical(classic.sql(query).collect()), query
        assert remote == canonical(classic.sql(query, pushdown=False).collect()), query
        print(f"{took:.2f} s over Connect: {query}")
    connect.conf.set("spark.sluice.pushdown", "false")
    try:
        assert canonical(connect.sql(QUERIES[0]).collect()) == canonical(classic.sql(QUERIES[0]).collect())
    finally:
        connect.conf.unset("spark.sluice.pushdown")
    assert len(connect.sql(QUERIES[0]).collect()) > 0


@pytest.mark.slow
def test_explain_over_connect_shows_the_pushed_remote_query(connect: Any) -> None:
    plan = connect.sql(EXPLAIN).collect()[0][0]
    assert 'RemoteQuery: SELECT "id", "t" FROM "sluice_test"."edge" WHERE' in plan, plan
    assert "[EXACT]" in plan and '"i" > 5' in plan, plan
    connect.conf.set("spark.sluice.pushdown", "false")
    try:
        plan = connect.sql(EXPLAIN).collect()[0][0]
    finally:
        connect.conf.unset("spark.sluice.pushdown")
    assert "RemoteQuery" in plan and '"i" > 5' not in plan, plan


@pytest.mark.slow
def test_two_clients_at_once_get_the_same_rows(
    running: server.ServerState, server_env: dict[str, str], classic: Federation
) -> None:
    expected = [canonical(classic.sql(query).collect()) for query in QUERIES]
    clients = [
        subprocess.Popen(  # this Python
            [sys.executable, "-c", CLIENT, running.url, SESSION_ZONE, json.dumps(QUERIES)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=server_env,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    for client in clients:
        out, err = client.communicate(timeout=600)
        assert client.returncode == 0, err[-3000:]
        assert json.loads(out) == expected


def sluice(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice.cli", *args], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT
    )


@pytest.mark.slow
def test_sluice_sql_on_the_running_server_prints_what_the_local_path_prints(
    running: server.ServerState,
    server_env: dict[str, str],
    spark: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``sluice sql`` finds the server from its state file and prints, byte for byte, what the
    command prints running Spark itself (the test's session, at the server's UTC): the server's
    own catalog, a source the server lacks (attached to the command's Connect session), pushdown
    off, every format, a cut at --max-rows. The command runs with a Spark master that cannot
    start: falling back to a local Spark would fail it."""
    lite = tmp_path / "edge.db"
    edge_data.create_sqlite(str(lite))
    cpg, sqlite = f"cpg={PG_URL}", f"lite=sqlite:///{lite}"
    cases = [
        ([], QUERIES[0], "csv"),  # the server's catalog, no --source
        (["--source", cpg], QUERIES[1], "json"),  # given, and the server has it as given
        (["--source", cpg, "--max-rows", "3"], QUERIES[2], "table"),
        (["--source", cpg, "--no-pushdown"], QUERIES[0], "json"),
        (["--source", sqlite], "SELECT * FROM lite.edge WHERE i > 0 OR t IS NULL ORDER BY id", "csv"),
        (["--source", sqlite, "--max-rows", "2"], "SELECT id, t, dt FROM lite.edge ORDER BY id", "csv"),
    ]
    env = {**server_env, "COLUMNS": "200", "SLUICE_SPARK_MASTER": "no-such-master"}
    monkeypatch.setenv("COLUMNS", "200")
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")  # the server's (sluice.spark.session.local_conf)
    try:
        for extra, query, fmt in cases:
            started = time.monotonic()
            remote = sluice("sql", query, "--format", fmt, *extra, env=env)
            took = time.monotonic() - started
            assert remote.returncode == 0, remote.stderr[-3000:]
            local_extra = extra if "--source" in extra else ["--source", cpg, *extra]
            capsys.readouterr()
            assert main(["sql", query, "--format", fmt, "--local", *local_extra], spark=spark) == 0
            local = capsys.readouterr()
            assert remote.stdout == local.out, (extra, query)
            assert remote.stderr == local.err, (extra, query)
            assert remote.stdout.count("\n") > 2, remote.stdout
            print(f"{took:.2f} s on the server: sluice sql --format {fmt} {' '.join(extra)}")
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


@pytest.mark.slow
def test_sluice_sql_on_the_server_refuses_what_it_cannot_attach(
    running: server.ServerState, server_env: dict[str, str]
) -> None:
    """A source with a password the server was not started with: its planner reads passwords
    from its own environment, so the command says so instead of attaching it. A query error
    is the one line the local path prints."""
    env = {**server_env, "SLUICE_TEST_PW": "secret"}
    missing = PG_URL.rsplit("/", 1)[0] + "/no_such_database_h"
    done = sluice("sql", "SELECT 1", "--source", f"other={missing}", env=env)
    # a source the server lacks is checked here before it is attached, as the local path checks it
    assert done.returncode == 2 and done.stderr.startswith("error: source 'other'"), done.stderr
    assert "no_such_database_h" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    refused = sluice(
        "sql", "SELECT 1", "--catalog", str(_catalog_with_password(Path(env[server.DIR_VARIABLE]))), env=env
    )
    assert refused.returncode == 2, refused
    assert "error: source 'secured' needs a password and the server at sc://127.0.0.1:" in refused.stderr, (
        refused.stderr
    )
    assert "has no such catalog" in refused.stderr and "secret" not in refused.stderr, refused.stderr
    bad = sluice("sql", "SELECT * FROM cpg.sluice_test.no_such_table", env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1, bad.stderr
    assert "TABLE_OR_VIEW_NOT_FOUND" in bad.stderr, bad.stderr


def _catalog_with_password(folder: Path) -> Path:
    catalog = folder / "secured.toml"
    catalog.write_text('[sources.secured]\nurl = "postgresql://u@127.0.0.1:5432/x"\npassword_env = "SLUICE_TEST_PW"\n')
    return catalog


@pytest.mark.slow
def test_a_federation_on_a_connect_session_attaches_through_spark_conf(
    connect: Any, classic: Federation, tmp_path: Path
) -> None:
    """A source the server was not started with, attached by ``Federation(spark=connect)``:
    the rows of a classic session, pushdown on and off; detached, the catalog is gone."""
    lite = tmp_path / "edge.db"
    edge_data.create_sqlite(str(lite))
    query = "SELECT * FROM clite.edge WHERE i > 0 OR t IS NULL ORDER BY id"
    fed = Federation(spark=connect)
    fed.attach("clite", f"sqlite:///{lite}")
    classic.attach("clite", f"sqlite:///{lite}")
    try:
        expected = canonical(classic.sql(query).collect())
        assert canonical(fed.sql(query).collect()) == expected
        assert canonical(fed.sql(query, pushdown=False).collect()) == expected
        assert len(fed.sql(query).collect()) > 1
    finally:
        classic.detach("clite")
        fed.detach("clite")
    with pytest.raises(Exception, match="clite"):
        connect.sql(query).collect()


def same_ids(text: str) -> str:
    """``text`` with the ids one session's plan gives and another's does not (expression ids
    ``#12``, scan ids) replaced by one placeholder each."""
    text = re.sub(r"#\d+L?", "#N", text)
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "SCAN", text)


def lake_table(folder: Path) -> str:
    """A lake with one partitioned table of 3 files (its URL): a scan of it has a pruning pyramid."""
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField

    from sluice.lake.catalog import LakeLocation, open_catalog

    location = LakeLocation.from_url(f"iceberg+sqlite:///{folder}/catalog.db")
    catalog = open_catalog(location, create=True)
    catalog.create_namespace_if_not_exists("ns")
    table = catalog.create_table(
        ("ns", "parts"),
        schema=Schema(
            NestedField(1, "id", LongType(), required=False), NestedField(2, "p", LongType(), required=False)
        ),
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p")),
    )
    table.append(
        pa.table({"id": pa.array(range(30), pa.int64()), "p": pa.array([i % 3 for i in range(30)], pa.int64())})
    )
    return location.url


@pytest.mark.slow
def test_sluice_explain_on_the_running_server_prints_what_the_local_path_prints(
    running: server.ServerState,
    server_env: dict[str, str],
    spark: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``sluice explain`` finds the server as ``sluice sql`` does and prints what the command
    prints running Spark itself: remote queries, verdicts and reasons, the rules (--verbose),
    JSON, transfers (--analyze), a lake scan's pruning pyramid (a source the server lacks), ids
    aside (each session numbers its expressions and scans). An impossible master catches a
    silent local fall-back."""
    lake = f"lk={lake_table(tmp_path)}"
    cpg = f"cpg={PG_URL}"
    cases = [
        ([], "SELECT id, t FROM cpg.sluice_test.edge WHERE i > 5 AND t LIKE 'a%'"),
        (["--source", cpg, "--verbose"], QUERIES[1]),
        (["--source", cpg, "--json"], QUERIES[2]),
        (["--source", cpg, "--analyze"], "SELECT id FROM cpg.sluice_test.edge WHERE i > 0"),
        (["--source", lake], "SELECT id FROM lk.ns.parts WHERE p = 1"),
        (["--source", lake, "--analyze"], "SELECT count(*) FROM lk.ns.parts WHERE p = 2 AND id > 3"),
    ]
    env = {**server_env, "SLUICE_SPARK_MASTER": "no-such-master"}
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")  # the server's (sluice.spark.session.local_conf)
    try:
        for extra, query in cases:
            started = time.monotonic()
            remote = sluice("explain", query, *extra, env=env)
            took = time.monotonic() - started
            assert remote.returncode == 0, remote.stderr[-3000:]
            local_extra = extra if "--source" in extra else ["--source", cpg, *extra]
            capsys.readouterr()
            assert main(["explain", query, "--local", *local_extra], spark=spark) == 0
            local = capsys.readouterr().out
            assert same_ids(remote.stdout) == same_ids(local), (extra, query)
            assert "remote query" in remote.stdout or '"remote_query"' in remote.stdout, remote.stdout
            if "--analyze" in extra:
                assert "transferred: 0 rows" not in remote.stdout, remote.stdout
            if lake in extra:
                assert "files" in remote.stdout.lower(), remote.stdout  # the pyramid
            print(f"{took:.2f} s on the server: sluice explain {' '.join(extra)}")
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    refused = sluice("explain", "SELECT 1", "--server", running.url.replace("127.0.0.1", "localhost"), env=env)
    assert refused.returncode == 0, refused.stderr  # a loopback name is this machine too


@pytest.mark.slow
def test_a_federation_on_a_connect_session_explains_as_a_classic_one(connect: Any, classic: Federation) -> None:
    """``fed.plan`` and ``fed.explain`` over Connect read the server's plan (the catalog's
    ``system.plan`` procedure): the same text as the classic session's, ids aside."""
    fed = Federation(spark=connect)
    for query in (QUERIES[0], QUERIES[1]):
        assert same_ids(fed.explain(query)) == same_ids(classic.explain(query))
        assert [scan.remote_query for scan in fed.plan(query).scans] == [
            scan.remote_query for scan in classic.plan(query).scans
        ]
    with pytest.raises(ConfigError, match=r"fed.transferred and fed.explain\(analyze=True\)"):
        fed.explain(QUERIES[0], analyze=True)


def waiting_planner(server_pid: int, watch: psycopg.Connection[Any]) -> tuple[int, str]:
    """The server's planner process whose own PostgreSQL session waits on a lock (matched by its
    client port), and the query it waits in."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        waiting = watch.execute(
            "SELECT client_port, query FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchall()
        for pid in planner_processes(server_pid) if waiting else []:
            ports = local_ports(pid)
            for port, query in waiting:
                if port in ports:
                    return pid, query
        time.sleep(0.2)
    raise AssertionError("the server's planner process never waited on the lock")


@pytest.mark.slow
def test_the_servers_planner_killed_mid_query_fails_that_query_and_the_next_one_answers(
    running: server.ServerState, connect: Any
) -> None:
    """The server's planner process is killed while a Connect client's query waits in it (its
    plan-time EXPLAIN blocked by a lock on the table): that client gets an error naming the dead
    process; its next query, and another client's, plan in a new one."""
    query = "SELECT id, t FROM cpg.sluice_test.edge WHERE id < 5 ORDER BY id"
    with (
        psycopg.connect(PG_URL) as lock,
        psycopg.connect(PG_URL, autocommit=True) as watch,
        ThreadPoolExecutor(1) as pool,
    ):
        lock.execute("LOCK TABLE sluice_test.edge IN ACCESS EXCLUSIVE MODE")
        answer = pool.submit(lambda: connect.sql(query).collect())
        try:
            killed, waited_in = waiting_planner(running.pid, watch)
            os.kill(killed, signal.SIGKILL)
        finally:
            lock.rollback()  # the next query reads the table
        with pytest.raises(Exception) as failure:  # whatever PySpark names it: the message is what is checked
            answer.result(timeout=600)
    assert waited_in.startswith("EXPLAIN (FORMAT JSON) SELECT"), waited_in  # only the planner runs it
    said = str(failure.value)
    assert f"the Sluice planner process ({sys.executable} -m sluice.spark.planner_process, pid {killed}) ended" in said
    assert "(killed by signal 9): this query fails; the next query starts a new planner process" in said, said
    assert [row.id for row in connect.sql(query).collect()] == [0, 1, 2, 3, 4]
    assert killed not in planner_processes(running.pid)
    with ConnectClient(running.url) as other:
        assert [row[0] for row in other.sql(query).rows] == [0, 1, 2, 3, 4]


@pytest.mark.slow
def test_status_and_stop(running: server.ServerState, server_env: dict[str, str], connect: Any) -> None:
    status = cli("status", env=server_env)
    assert status.returncode == 0 and f"running: {running.url} (pid {running.pid}" in status.stdout, status
    again = cli("start", "--port", str(free_port()), env=server_env)
    assert again.returncode == 2 and f"a Sluice server already runs (pid {running.pid}" in again.stderr, again
    stopped = cli("stop", env=server_env)
    assert stopped.returncode == 0 and f"stopped: {running.url}" in stopped.stdout, stopped
    assert not server.answers(running.port, timeout_s=1.0)
    assert not Path(f"/proc/{running.pid}").exists() or "Z" in Path(f"/proc/{running.pid}/stat").read_text()
    status = cli("status", env=server_env)
    assert status.returncode == 1 and "no Sluice server" in status.stdout, status
    stop_again = cli("stop", env=server_env)
    assert stop_again.returncode == 2 and "no Sluice server to stop" in stop_again.stderr, stop_again


# ---------------------------------------------------------------- main tier: no server
def test_sluice_sql_names_a_server_that_does_not_answer(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert main(["sql", "SELECT 1", "--server", f"sc://127.0.0.1:{port}"]) == 2
    assert capsys.readouterr().err == (
        f"error: no Spark Connect server answers at sc://127.0.0.1:{port} (start one: `sluice server start`)\n"
    )
    assert main(["sql", "SELECT 1", "--server", "127.0.0.1:15002"]) == 2
    assert "expected sc://HOST:PORT" in capsys.readouterr().err


def test_a_connect_federation_refuses_passwords_and_plans_without_a_server() -> None:
    """What a Connect session cannot do is said before any call to the server (nothing listens)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(f"sc://127.0.0.1:{free_port()}").create()  # connects lazily
    try:
        fed = Federation(spark=session)
        with pytest.raises(ConfigError, match=r"source 'x' needs a password: over Spark Connect .*sluice server start"):
            fed.attach("x", "postgresql://u:pw@127.0.0.1:1/x")
        with pytest.raises(ConfigError, match=r"source 'y' needs a password"):
            fed.attach("y", "postgresql://u@127.0.0.1:1/x", password="pw")
        with pytest.raises(ConfigError, match=r"a folder of the driver's machine.*sluice explain --analyze"):
            fed.transferred("SELECT 1")
        with pytest.raises(ConfigError, match=r"a folder of the driver's machine"):
            fed.explain("SELECT 1", analyze=True)
    finally:
        session.client.close()  # nothing listens: the client's exit hook would retry its cleanup call for minutes


def test_start_refuses_a_port_in_use(server_env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli("start", "--port", str(port), env=server_env)
    assert done.returncode == 2, done
    assert f"error: port {port} on 127.0.0.1 is in use: choose another with --port" in done.stderr, done.stderr


def test_a_server_dying_while_starting_is_said_with_its_log(server_env: dict[str, str]) -> None:
    started = time.monotonic()
    with pytest.raises(server.ServerError) as raised:
        server.start([], free_port(), extra={"spark.driver.memory": "not-a-size"})
    said = str(raised.value)
    assert "the Spark Connect server exited while starting (exit code" in said, said
    assert "its log" in said and "server.log ends:" in said, said
    assert server.read_state() is None
    assert time.monotonic() - started < 60
