"""A Spark task retried after it staged rows lands each row once (sluice/write/attempts.py).

Each case runs ``tests/retried_write.py`` in a process of its own (``local[2,2]``: a failed
task is run again; the suite's session fails the job instead). The written query's task fails
on its first attempt after that attempt has staged rows, which the script reports; the retry
stages the partition again, and the table must then hold every row exactly once. Without the
attempt filter PostgreSQL landed 3,800 of these 2,000 rows. MariaDB's tasks send their rows in
LOAD DATA files of 64 MB, so its first attempt stages rows only past that: its case moves
about 100 MB twice and is slow; PostgreSQL's is the main tier's test of the same claim.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.sources import MYSQL_SERVER, mariadb

_ROOT = Path(__file__).resolve().parents[2]


def _run(kind: str, url: str, table: str, rows: int, pad: int, marker: Path, statement: str = "insert") -> dict:
    command = [sys.executable, str(_ROOT / "tests" / "retried_write.py"), "--kind", kind, "--url", url]
    command += ["--table", table, "--rows", str(rows), "--pad", str(pad), "--marker", str(marker)]
    command += ["--statement", statement]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_task_retried_after_staging_lands_its_rows_once_on_postgres(pg_url, tmp_path) -> None:
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.w_retried")
        connection.execute("CREATE TABLE public.w_retried (id bigint, pad text)")
    try:
        report = _run("postgres", pg_url, "public.w_retried", 2000, 1000, tmp_path / "staged")
        assert report["first_attempt_staged"], report  # the first attempt failed after staging rows
        assert report.get("written"), report
        with psycopg.connect(pg_url) as connection:
            counts = connection.execute("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM public.w_retried")
            assert counts.fetchone() == (2000, 2000, 0, 1999)
            staging = connection.execute(r"SELECT relname FROM pg_class WHERE relname LIKE 'sluice\_stage\_%'")
            assert staging.fetchall() == []
    finally:
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute("DROP TABLE IF EXISTS public.w_retried")


@pytest.mark.slow
def test_an_update_task_retried_after_staging_applies_its_rows_once_on_postgres(pg_url, tmp_path) -> None:
    """UPDATE (and MERGE: the same staging and the same kept-attempts filter, sluice/write/postgres.py)
    stages its delta rows as INSERT does: a task failing after staging some and retried must apply
    each once. The table holds ids 0..999 (``old``); the UPDATE sets every row's pad in the scan's
    task, which stages the delta. Applying the failed attempt's rows too would change a key twice,
    which fails the statement (the count of rows changed by key)."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS public.w_retried")
        connection.execute("CREATE TABLE public.w_retried (id bigint PRIMARY KEY, pad text)")
        connection.execute("INSERT INTO public.w_retried SELECT i, 'old' FROM generate_series(0, 999) i")
    try:
        report = _run("postgres", pg_url, "public.w_retried", 1000, 1000, tmp_path / "staged", "update")
        assert report["first_attempt_staged"], report  # the first attempt failed after staging rows
        assert report.get("written"), report
        with psycopg.connect(pg_url) as connection:
            counts = connection.execute(
                "SELECT count(*), count(DISTINCT id), min(id), max(id), "
                "count(*) FILTER (WHERE pad = repeat(CAST(id % 10 AS text), 1000)) FROM public.w_retried"
            )
            assert counts.fetchone() == (1000, 1000, 0, 999, 1000)
            staging = connection.execute(r"SELECT relname FROM pg_class WHERE relname LIKE 'sluice\_stage\_%'")
            assert staging.fetchall() == []
    finally:
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute("DROP TABLE IF EXISTS public.w_retried")


@pytest.mark.slow
def test_a_task_retried_after_staging_lands_its_rows_once_on_mariadb(tmp_path) -> None:
    database = "sluice_retried"
    with mariadb() as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {database}")
        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(f"CREATE TABLE {database}.w_retried (id bigint, pad longtext) ENGINE=InnoDB")
    try:
        url = f"mysql://root@{MYSQL_SERVER}/{database}"
        report = _run("mysql", url, f"{database}.w_retried", 1500, 65536, tmp_path / "staged")
        assert report["first_attempt_staged"], report
        assert report.get("written"), report
        with mariadb(database) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM w_retried")
            assert cursor.fetchone() == (1500, 1500, 0, 1499)
    finally:
        with mariadb() as connection, connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {database}")
