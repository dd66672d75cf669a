"""Sluice on a real standalone Spark cluster gives the answers of local mode.

A master and two one-core workers on loopback (:mod:`tools.cluster`) run the
executors in JVMs, Python workers and working directories of their own, so anything
Sluice ships to them that does not pickle, or that needs state only the driver has,
fails here. ``tests/cluster_driver.py`` attaches PostgreSQL, MariaDB, a SQLite and a
DuckDB file (by relative URLs), runs federated queries with pushdown on and off, ingests
a small lake and queries it; the test runs it on the cluster and in ``local[2]``, each
as a process of its own (this session already holds a SparkContext), and compares.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.sources import mariadb
from tools import cluster as loopback

pytestmark = [pytest.mark.integration, pytest.mark.timeout(540)]

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "tests" / "cluster_driver.py"
DRIVER_TIMEOUT_S = 420  # both drivers at once; generous, so that a loaded machine (load 20 on 2 cores) still passes
UTC = dt.timezone.utc
REGIONS = ["EU", "US", "APAC", "LATAM"]
NAMES = ["Carla", "Chloé", "Björn", "Ana", "Zoë", "Émile", "Çağla", "Li Wei", "Ólafur", "Nnamdi"]
STATUSES = ["open", "paid", "paid", "void"]
METHODS = ["card", "wire", "cash", "card", "voucher"]


def customers() -> list[tuple[Any, ...]]:
    return [(i, f"{NAMES[i % len(NAMES)]} {i}", REGIONS[(i * 7) % len(REGIONS)]) for i in range(1, 201)]


def orders() -> list[tuple[Any, ...]]:
    start = dt.datetime(2024, 1, 1, tzinfo=UTC)
    return [
        (
            i,
            1 + (i * 13) % 200,
            Decimal(f"{(i * 37) % 50000 / 100:.2f}"),
            STATUSES[(i * 3) % 4],
            start + dt.timedelta(minutes=97 * i),
        )
        for i in range(1, 6001)
    ]


def payments() -> list[tuple[Any, ...]]:
    return [
        (i, 1 + (i * 7) % 6000, METHODS[i % len(METHODS)], Decimal(f"{(i * 53) % 60000 / 100:.2f}"))
        for i in range(1, 5001)
    ]


def create_sources(folder: Path) -> None:
    """orders in PostgreSQL, payments in MariaDB, customers in SQLite, events and missions in DuckDB."""
    import duckdb

    with psycopg.connect(
        os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test"), autocommit=True
    ) as pg:
        pg.execute("DROP SCHEMA IF EXISTS sluice_cluster CASCADE")
        pg.execute("CREATE SCHEMA sluice_cluster")
        pg.execute(
            "CREATE TABLE sluice_cluster.orders (id int PRIMARY KEY, customer_id int, amount numeric(10,2), "
            "status text, placed_at timestamptz)"
        )
        with pg.cursor() as cursor, cursor.copy("COPY sluice_cluster.orders FROM STDIN") as copy:
            for row in orders():
                copy.write_row(row)
        pg.execute("ANALYZE sluice_cluster.orders")

    my = mariadb()
    try:
        cursor = my.cursor()
        cursor.execute("DROP DATABASE IF EXISTS sluice_cluster")
        cursor.execute("CREATE DATABASE sluice_cluster CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        cursor.execute(
            "CREATE TABLE sluice_cluster.payments (id INT PRIMARY KEY, order_id INT, method VARCHAR(10), "
            "amount DECIMAL(10,2))"
        )
        cursor.executemany("INSERT INTO sluice_cluster.payments VALUES (%s, %s, %s, %s)", payments())
    finally:
        my.close()

    lite = sqlite3.connect(folder / "shop.db")
    lite.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region TEXT)")
    lite.executemany("INSERT INTO customers VALUES (?, ?, ?)", customers())
    lite.commit()
    lite.close()

    duck = duckdb.connect(str(folder / "events.duckdb"))
    try:
        duck.execute(
            "CREATE TABLE events (id BIGINT PRIMARY KEY, customer_id INTEGER, kind VARCHAR, seen_at TIMESTAMP)"
        )
        duck.execute(
            "INSERT INTO events SELECT i, 1 + (i * 11) % 200, ['click', 'view', 'click', 'buy'][1 + i % 4], "
            "TIMESTAMP '2024-01-01' + INTERVAL (i * 131) MINUTE FROM range(1, 3001) t(i)"
        )
        duck.execute("CREATE TABLE missions (mission_id INTEGER, name VARCHAR)")
        duck.execute(
            "INSERT INTO missions VALUES (101, 'Aurora'), (102, 'Boreas'), (205, 'Cygnus'), (311, 'Draco'), "
            "(412, 'Eos')"
        )
    finally:
        duck.close()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cluster-run")
    create_sources(folder)
    return folder


class Driver:
    """``tests/cluster_driver.py`` running in a process group of its own (its JVM included)."""

    def __init__(self, workdir: Path, master: str, lake: str) -> None:
        self.master, self.out, self.log = master, workdir / f"{lake}.json", workdir / f"{lake}.log"
        # the repository root on the path: the driver imports tools.cluster (tools/ is not installed)
        path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "SLUICE_DRIVER_MEMORY": "1g", "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(DRIVER), "--master", master, "--lake", lake, "--out", str(self.out)],
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def result(self, deadline: float) -> dict[str, Any]:
        """The driver's JSON; past ``deadline`` (monotonic) its group is killed and the test fails."""
        try:
            self.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"driver on {self.master} did not finish in time:\n{self.tail()}")
        assert self.process.returncode == 0, f"driver on {self.master} failed:\n{self.tail()}"
        return json.loads(self.out.read_text(encoding="utf-8"))

    def tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-5000:]

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture(scope="module")
def local_driver(workdir: Path) -> Iterator[Driver]:
    """The local-mode run, started first so that it overlaps the cluster's start-up."""
    driver = Driver(workdir, "local[2]", "lake-local")
    try:
        yield driver
    finally:
        driver.kill()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[loopback.Cluster]:
    """Two one-core workers; stopped (every process group) even when the test fails."""
    started = loopback.start(tmp_path_factory.mktemp("spark-cluster"), workers=2, cores=1, memory="1g", timeout_s=90)
    try:
        yield started
    finally:
        started.stop()


@pytest.mark.slow  # a master, two workers and two driver processes: minutes (make test-all)
def test_cluster_answers_like_local_mode(workdir: Path, local_driver: Driver, cluster: loopback.Cluster) -> None:
    deadline = time.monotonic() + DRIVER_TIMEOUT_S
    cluster_driver = Driver(workdir, cluster.master_url, "lake-cluster")
    try:
        on_cluster = cluster_driver.result(deadline)
    finally:
        cluster_driver.kill()
    state = cluster.state()
    local = local_driver.result(deadline)

    # the cluster run really ran on both workers' executors, with the venv's Python and this checkout
    assert on_cluster["master"] == cluster.master_url
    assert [w["state"] for w in state["workers"]] == ["ALIVE", "ALIVE"]
    assert on_cluster["block_managers"] == 3  # the driver and one executor per worker
    assert on_cluster["app_id"] in {app["id"] for app in state["completedapps"] + state["activeapps"]}
    task_dirs = {cwd for cwd, _, _ in on_cluster["probe"]}
    assert {str(Path(cwd).parents[1]) for cwd in task_dirs} == set(cluster.work_dirs), task_dirs
    assert {Path(cwd).parent.name for cwd in task_dirs} == {on_cluster["app_id"]}
    assert {(python, package) for _, python, package in on_cluster["probe"]} == {(sys.executable, str(REPO / "sluice"))}
    assert all(cwd == str(workdir) for cwd, _, _ in local["probe"])

    # the same rows, query by query, and pushdown changed nothing on either
    assert local["ingest"]["rows"] == 20_000 and local["ingest"]["committed"]
    assert on_cluster["ingest"] == local["ingest"]
    assert set(on_cluster["results"]) == set(local["results"])
    for name, expected in local["results"].items():
        assert expected, f"query {name} returned no rows: the comparison would prove nothing"
        assert on_cluster["results"][name] == expected, f"query {name}: cluster and local mode differ"
    for results in (on_cluster["results"], local["results"]):
        assert results["join"] == results["join_reference"]
        assert results["lake"] == results["lake_reference"]
        assert results["lake_join"] == results["lake_join_reference"]


def test_scan_specs_carry_absolute_file_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An executor opens a scan's source in its own working directory: a relative file URL
    must reach it resolved on the driver (the bug the cluster run found), while the URL the
    user wrote stays what is shown."""
    import duckdb

    from sluice.scan.spec import ScanSpec
    from sluice.sources import open_scan_source, open_source

    monkeypatch.chdir(tmp_path)
    lite = sqlite3.connect("shop.db")
    lite.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    lite.close()
    duckdb.connect("events.duckdb").execute("CREATE TABLE t (id BIGINT)").close()
    for url, absolute in (
        ("sqlite:///shop.db", f"sqlite:///{tmp_path}/shop.db"),
        ("duckdb:///events.duckdb", f"duckdb:///{tmp_path}/events.duckdb"),
    ):
        source = open_source("s", url)
        spec = ScanSpec.for_source(source, source.describe(None, "t"), ("id",))
        assert (spec.source_url, source.url) == (absolute, url)
        monkeypatch.chdir(tmp_path.parent)  # where an executor would be
        open_scan_source(spec, None).check()
        monkeypatch.chdir(tmp_path)
