"""The ``sluice`` command in-process: ``explain --json``, ``sql``, and error exits.

Runs against a small SQLite file built in tmp_path and the shared ``spark`` session
(tests/conftest.py), passed to ``main(..., spark=spark)`` so no second session starts.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sluice.cli import main

pytestmark = pytest.mark.integration

PEOPLE = [
    (1, "Ann", "ann@example.com", "2001-02-03"),
    (2, "bob", "Bob@Example.com", None),
    (3, "Ærø", "ANN@EXAMPLE.COM", "1999-12-31"),
    (4, None, "", "2010-01-01"),
]


@pytest.fixture()
def lite(tmp_path: Path) -> str:
    """``--source`` value for a SQLite file with a NOCASE e-mail column (INEXACT equality)."""
    path = tmp_path / "people.db"
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, email TEXT COLLATE NOCASE, born DATE)"
        )
        connection.executemany("INSERT INTO people VALUES (?, ?, ?, ?)", PEOPLE)
    connection.close()
    return "lite=sqlite:///" + str(path)


def test_explain_json(spark, lite: str, capsys: pytest.CaptureFixture[str]) -> None:
    query = "SELECT id FROM lite.people WHERE email = 'ann@example.com' AND id > 1"
    assert main(["explain", query, "--source", lite, "--json"], spark=spark) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["query"] == query
    (scan,) = plan["scans"]
    assert scan["source"] == "lite" and scan["table"] == "lite.main.people"
    levels = {f["sql"]: f["level"] for f in scan["filters"]}  # Spark adds the implied IS NOT NULLs
    assert levels == {
        "`email` = 'ann@example.com'": "INEXACT",
        "`id` > 1": "EXACT",
        "NOT `email` IS NULL": "EXACT",
        "NOT `id` IS NULL": "EXACT",
    }
    assert '"email" =' in scan["remote_query"] and '"id" > 1' in scan["remote_query"]


def test_explain_text(spark, lite: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["explain", "SELECT name FROM lite.people WHERE upper(name) = 'ANN'", "--source", lite], spark=spark) == 0
    )
    out = capsys.readouterr().out
    assert "== Sluice plan ==" in out and "[UNSUPPORTED]" in out


@pytest.mark.parametrize("pushdown", [[], ["--no-pushdown"]])
def test_sql_prints_rows_from_a_catalog(
    spark, lite: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], pushdown: list[str]
) -> None:
    name, url = lite.split("=", 1)
    catalog = tmp_path / "sluice.toml"
    catalog.write_text(f'[sources.{name}]\nurl = "{url}"\npartitions = 2\n', encoding="utf-8")
    query = "SELECT id, name FROM lite.people WHERE email = 'ann@example.com' ORDER BY id"
    assert main(["sql", query, "--catalog", str(catalog), "--format", "table", *pushdown], spark=spark) == 0
    out = capsys.readouterr().out
    assert "Ann" in out and "1 row(s)" in out
    assert "Ærø" not in out  # 'ANN@EXAMPLE.COM' matches under NOCASE only: Spark re-checked it


def test_sql_max_rows(spark, lite: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "sql",
                "SELECT id, name FROM lite.people ORDER BY id",
                "--source",
                lite,
                "--max-rows",
                "2",
                "--format",
                "table",
            ],
            spark=spark,
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "first 2 rows" in out and "bob" in out and "Ærø" not in out


@pytest.mark.parametrize(
    "query, expected",
    [
        ("SELECT nope FROM lite.people", "nope"),
        ("SELECT * FROM lite.missing", "has no table main.missing"),
        ("SELEC * FRM lite.people", "cannot parse"),
    ],
)
def test_bad_query_exits_2_with_a_clear_message(
    spark, lite: str, capsys: pytest.CaptureFixture[str], query: str, expected: str
) -> None:
    assert main(["sql", query, "--source", lite], spark=spark) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and expected in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_connection_error_masks_the_password(spark, capsys: pytest.CaptureFixture[str]) -> None:
    source = "pg=postgresql://root:hunter2-secret@127.0.0.1:1/db"  # nothing listens on port 1
    assert main(["explain", "SELECT * FROM pg.t", "--source", source], spark=spark) == 2
    err = capsys.readouterr().err
    assert "hunter2-secret" not in err and "root:***@127.0.0.1:1" in err


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["sql", "SELECT 1", "--catalog", "/nonexistent/sluice.toml"], "file not found"),
        (["explain", "SELECT 1", "--json", "--analyze"], "--json prints the plan only"),
        (["sql", "SELECT 1", "--source", "pg=postgres:/u:hunter2-secret@h"], "must look like scheme://"),
        (["sql", "SELECT 1", "--max-rows", "0"], "positive integer"),
    ],
)
def test_argument_errors_fail_before_spark_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    def no_spark(*args: object, **kwargs: object) -> None:
        raise AssertionError("Federation was created before the arguments were validated")

    monkeypatch.setattr("sluice.federation.Federation.__init__", no_spark)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and "hunter2-secret" not in err


def test_unset_password_variable_fails_before_spark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sluice.federation.Federation.__init__", lambda *a, **k: pytest.fail("Spark started"))
    monkeypatch.delenv("SLUICE_CLI_TEST_PW", raising=False)
    catalog = tmp_path / "sluice.toml"
    catalog.write_text('[sources.pg]\nurl = "postgresql://root@h/db"\npassword_env = "SLUICE_CLI_TEST_PW"\n')
    assert main(["sql", "SELECT 1", "--catalog", str(catalog)]) == 2
    assert "SLUICE_CLI_TEST_PW" in capsys.readouterr().err


def test_a_query_spark_fails_at_run_time_is_a_clean_error(spark, tmp_path, capsys) -> None:
    import sqlite3

    from sluice.cli import main

    path = tmp_path / "div.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (x INTEGER)")
    connection.execute("INSERT INTO t VALUES (0)")
    connection.commit()
    connection.close()
    code = main(["sql", "SELECT 1 / x FROM lite.t", "--source", f"lite=sqlite:///{path}"], spark=spark)
    assert code == 2
    assert "DIVIDE_BY_ZERO" in capsys.readouterr().err
