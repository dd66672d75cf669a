"""The real ``sluice`` command as a subprocess: what a person or a script sees.

Version, a query from a file or stdin, table/CSV/JSON output, one clean line on stderr for
a bad query or an unreachable source (no JVM banner, no Spark JSON log), and progress on a
terminal only. Each run that starts Spark costs 10-30 s on the shared machine, so the
cases are combined.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.sources import PG_URL

pytestmark = pytest.mark.integration

SLUICE = [sys.executable, "-m", "sluice.cli"]
ROWS = [(1, "Ann", 2.5), (2, None, None), (3, 'Ærø, "quoted"', -0.0)]


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("cli") / "people.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, score REAL)")
        connection.executemany("INSERT INTO people VALUES (?, ?, ?)", ROWS)
    connection.close()
    return f"lite=sqlite:///{path}"


def run(*arguments: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SLUICE, *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "120"},
    )


def test_version() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout == "sluice 0.1.0\n" and done.stderr == ""


@pytest.mark.slow  # starts Spark in a process of its own
def test_a_query_from_a_file_as_json(lite: str, tmp_path: Path) -> None:
    query = tmp_path / "q.sql"
    query.write_text("SELECT id, name, score\nFROM lite.people\nORDER BY id\n", encoding="utf-8")
    done = run("sql", "-f", str(query), "--source", lite, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        {"id": 1, "name": "Ann", "score": 2.5},
        {"id": 2, "name": None, "score": None},
        {"id": 3, "name": 'Ærø, "quoted"', "score": -0.0},
    ]
    assert done.stderr == ""  # nothing from Spark, no spinner off a terminal


@pytest.mark.slow  # starts Spark in a process of its own
def test_a_query_from_stdin_prints_csv_when_stdout_is_not_a_terminal(lite: str) -> None:
    done = run("sql", "-f", "-", "--source", lite, stdin="SELECT id, name FROM lite.people ORDER BY id")
    assert done.returncode == 0, done.stderr
    assert list(csv.reader(io.StringIO(done.stdout))) == [
        ["id", "name"],
        ["1", "Ann"],
        ["2", ""],
        ["3", 'Ærø, "quoted"'],
    ]
    assert done.stderr == ""


@pytest.mark.slow  # starts Spark in a process of its own
def test_a_table_on_request(lite: str) -> None:
    done = run(
        "sql", "SELECT id, name FROM lite.people ORDER BY id", "--source", lite, "--format", "table", "--max-rows", "2"
    )
    assert done.returncode == 0, done.stderr
    assert "id" in done.stdout and "name" in done.stdout and "│" in done.stdout  # a drawn table, not CSV
    assert "Ann" in done.stdout and "first 2 rows" in done.stdout and "Ærø" not in done.stdout
    assert "\x1b[" not in done.stdout  # no colour codes into a pipe


@pytest.mark.slow  # starts Spark in a process of its own
def test_a_bad_query_is_one_clean_line_on_stderr(lite: str) -> None:
    done = run("sql", "SELECT * FROM lite.people WHERE id = 'a'", "--source", lite)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: Spark: [CAST_INVALID_INPUT] The value 'a'"), done.stderr[:2000]
    assert done.stderr.count("\n") == 1 and len(done.stderr) < 1000, done.stderr[:2000]


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (
            ("sql", "SELECT 1 FROM pg.t", "--source", "pg=postgresql://root:Pw-91x@127.0.0.1:1/test"),
            "error: source 'pg': cannot connect to postgresql://root:***@127.0.0.1:1/test: connection failed:",
        ),
        (
            ("sql", "-f", "/nonexistent/q.sql", "--source", "pg=postgresql://root@127.0.0.1/test"),
            "error: cannot read the query file /nonexistent/q.sql: No such file or directory",
        ),
        (
            ("sql", "--source", "pg=postgresql://root@127.0.0.1/test"),
            "error: give the query as an argument or with -f FILE",
        ),
    ],
)
def test_errors_before_spark_are_one_line_and_fast(arguments: tuple[str, ...], expected: str) -> None:
    started = time.monotonic()
    done = run(*arguments, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr
    assert "Pw-91x" not in done.stderr
    assert time.monotonic() - started < 15  # Spark never started


@pytest.fixture(scope="module")
def slow_view() -> str:
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("CREATE SCHEMA IF NOT EXISTS sluice_cli")
        connection.execute(
            "CREATE OR REPLACE VIEW sluice_cli.slow AS SELECT g AS id FROM generate_series(1, 3) g "
            "CROSS JOIN pg_sleep(6)"
        )
    return "pg.sluice_cli.slow"


@pytest.mark.slow  # starts Spark in a process of its own
def test_progress_on_a_terminal_only(slow_view: str) -> None:
    """stderr a terminal: a line with elapsed time and task counts while the 6 s read runs, erased
    before the result; stderr a pipe: nothing but the rows on stdout."""
    query = f"SELECT count(*) AS n FROM {slow_view}"
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*SLUICE, "sql", query, "--source", f"pg={PG_URL}"], stdout=subprocess.PIPE, stderr=follower, text=True
    )
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 300)
        if not ready:
            process.kill()
            pytest.fail("no end of output within 300 s")
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert process.stdout is not None
    out = process.stdout.read()
    assert process.wait(timeout=30) == 0
    os.close(leader)
    shown = seen.decode("utf-8", "replace")
    assert "running " in shown and "tasks done" in shown, shown[-2000:]
    assert shown.rstrip().endswith("\x1b[K")  # the progress line is erased before the command ends
    assert out == "n\n3\n"
    quiet = run("sql", query, "--source", f"pg={PG_URL}")
    assert quiet.returncode == 0 and quiet.stdout == "n\n3\n" and quiet.stderr == ""
