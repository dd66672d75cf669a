"""Passwords and tokens never show: not in errors, logs, EXPLAIN, plan JSON, nor anything
Spark records about a query (job and stage descriptions, SQL executions and their plans).

The secrets are real: a MariaDB user this module creates, the PostgreSQL role
``sluice_auth`` (scripts/services.sh makes it log in with a password; every other
loopback login is trust), and an in-process Flight server that takes a bearer token or a
user and password. Each is used right (queries that succeed and queries that fail at the
source) and wrong (refused logins), and every text captured on the way is searched for
every spelling of every secret: as given, percent-encoded, and inside a Basic header.
"""

from __future__ import annotations

import base64
import json
import logging
import sqlite3
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pyarrow.flight as flight
import pytest

from sluice import Federation, SourceError
from sluice.catalog import SourceConfig, open_sources
from sluice.flight.auth import Credentials
from sluice.serve.server import SluiceFlightServer
from tests.sources import MYSQL_SERVER, PG_URL, mariadb

pytestmark = pytest.mark.integration

MY_USER, MY_PASSWORD = "sluice_sec_user", "My-S3cr3t:@/%pw!"  # needs percent-encoding in a URL
PG_USER, PG_PASSWORD = "sluice_auth", "sluice-auth-test"  # scripts/services.sh
FL_TOKEN = "Fl-T0ken-8c1e0d9a"
FL_USER, FL_PASSWORD = "ada", "Fl-Basic-P4ss-92"
WRONG = {
    "my": "Wr0ng-My-Pass-4417",
    "pg": "Wr0ng-Pg-Pass-5521",
    "token": "Wr0ng-T0ken-7731",
    "basic": "Wr0ng-Basic-6610",
}
SECRETS = [MY_PASSWORD, PG_PASSWORD, FL_TOKEN, FL_PASSWORD, *WRONG.values()]


def spellings() -> dict[str, str]:
    """Every form a secret could leak in -> the secret it reveals."""
    forms = {}
    for secret in SECRETS:
        forms[secret] = secret
        forms[quote(secret, safe="")] = secret
    for password in (FL_PASSWORD, WRONG["basic"]):
        forms[base64.b64encode(f"{FL_USER}:{password}".encode()).decode()] = password
    return forms


def leaks(captured: dict[str, str]) -> list[str]:
    return [
        f"{where} shows {secret!r} (as {form!r})"
        for where, text in captured.items()
        for form, secret in spellings().items()
        if form in text
    ]


def exception_texts(error: BaseException) -> str:
    """str, repr and traceback of ``error`` and of every exception chained to it (even suppressed ones)."""
    texts: list[str] = []
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        texts += [str(current), repr(current), "".join(traceback.format_exception(current))]
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
    return "\n".join(texts)


# ---------------------------------------------------------------- the secured sources
def _my(*statements: str, args: tuple | None = None) -> None:
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement, args)
    finally:
        connection.close()


@pytest.fixture(scope="module")
def secured(tmp_path_factory) -> Iterator[dict[str, str]]:
    """Tables behind each secret, and the Flight server's location."""
    _my(
        "CREATE DATABASE IF NOT EXISTS sluice_sec",
        "DROP TABLE IF EXISTS sluice_sec.t, sluice_sec.gone",
        "CREATE TABLE sluice_sec.t (id INT PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO sluice_sec.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
        "CREATE TABLE sluice_sec.gone (id INT PRIMARY KEY)",
        "INSERT INTO sluice_sec.gone VALUES (1)",
        f"DROP USER IF EXISTS '{MY_USER}'@'%'",
    )
    _my(f"CREATE USER '{MY_USER}'@'%%' IDENTIFIED BY %s", args=(MY_PASSWORD,))
    _my(f"GRANT SELECT ON sluice_sec.* TO '{MY_USER}'@'%'")
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        for statement in (
            "DROP SCHEMA IF EXISTS sluice_sec CASCADE",
            "CREATE SCHEMA sluice_sec",
            "CREATE TABLE sluice_sec.t AS SELECT g AS id, 'pg' || g AS w FROM generate_series(1, 3) g",
            "CREATE VIEW sluice_sec.failing AS SELECT id, 10 / (id - 2) AS q FROM sluice_sec.t",
            f"GRANT USAGE ON SCHEMA sluice_sec TO {PG_USER}",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA sluice_sec TO {PG_USER}",
        ):
            connection.execute(statement)
    lite = tmp_path_factory.mktemp("secrets") / "served.db"
    with sqlite3.connect(lite) as connection:
        connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, z TEXT)")
        connection.executemany("INSERT INTO t VALUES (?, ?)", [(1, "fl1"), (2, "fl2"), (3, "fl3")])
        connection.execute("CREATE TABLE gone (id INTEGER PRIMARY KEY)")
    connection.close()
    server = SluiceFlightServer(
        open_sources([SourceConfig("lite", f"sqlite:///{lite}")]),
        credentials=Credentials(token=FL_TOKEN, user=FL_USER, password=FL_PASSWORD),
    )
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    yield {"flight": server.location, "lite": str(lite)}
    server.shutdown()
    thread.join(10)


# ---------------------------------------------------------------- Spark's own records
def spark_records(spark) -> dict[str, str]:
    """What the Spark UI would show, read from the status stores (the test session runs without a UI)."""
    context, tracker = spark.sparkContext, spark.sparkContext.statusTracker()
    jobs = context._jsc.sc().statusStore().jobsList(None)
    jobs = [jobs.apply(i) for i in range(jobs.size())]
    stages = [
        tracker.getStageInfo(stage)
        for job in jobs
        if (info := tracker.getJobInfo(job.jobId())) is not None
        for stage in info.stageIds
    ]
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    records = {
        "Spark jobs": [f"{j.name()} {j.description()}" for j in jobs],
        "Spark stages": [stage.name for stage in stages if stage is not None],
        "Spark SQL executions": [
            f"{e.description()} {e.details()} {e.physicalPlanDescription()} {e.modifiedConfigs()}"
            for e in (executions.apply(i) for i in range(executions.size()))
        ],
        "Spark local properties": [
            str(context.getLocalProperty(k))
            for k in (
                "spark.job.description",
                "spark.jobGroup.id",
                "callSite.short",
                "callSite.long",
                "spark.sql.execution.id",
            )
        ],
        "Spark conf": [str(context.getConf().getAll()), str(spark.conf.getAll)],
    }
    assert records["Spark jobs"] and records["Spark SQL executions"], "Spark recorded nothing: the capture is broken"
    return {where: "\n".join(texts) for where, texts in records.items()}


@pytest.fixture()
def driver_log(spark, tmp_path: Path) -> Iterator[Path]:
    """The Spark driver's log at INFO, written to a file for the test's duration."""
    jvm, path = spark._jvm, tmp_path / "driver.log"
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    appender = (
        log4j.core.appender.FileAppender.newBuilder()
        .withFileName(str(path))
        .setName("sluice-secrets-test")
        .setLayout(log4j.core.layout.PatternLayout.createDefaultLayout(config))
        .setConfiguration(config)
        .build()
    )
    appender.start()
    config.getRootLogger().addAppender(appender, None, None)
    level = log4j.LogManager.getRootLogger().getLevel().toString()
    spark.sparkContext.setLogLevel("INFO")
    try:
        yield path
    finally:
        spark.sparkContext.setLogLevel(level)
        config.getRootLogger().removeAppender("sluice-secrets-test")
        context.updateLoggers()
        appender.stop()


def frame_plans(frame, capsys) -> str:
    """The DataFrame's plans as Spark prints them (extended and formatted)."""
    frame.explain(extended=True)
    frame.explain(mode="formatted")
    return frame._jdf.queryExecution().toString() + capsys.readouterr().out


# ---------------------------------------------------------------- the test
JOIN = (
    "SELECT a.id, a.v, b.w, c.z FROM my.sluice_sec.t a JOIN pg.sluice_sec.t b ON a.id = b.id "
    "JOIN fl.lite.t c ON c.id = a.id JOIN flb.lite.t d ON d.id = a.id WHERE a.v <> 'two' AND b.id < 10 AND c.z LIKE 'fl%'"
)


def test_no_secret_in_errors_logs_explain_plans_or_spark(spark, secured, caplog, capsys, driver_log) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, py4j's included
    captured: dict[str, str] = {}
    federation = Federation(spark=spark)

    refused = {  # wrong secrets: each attach must fail, saying why
        "mysql, wrong password": ("my", f"mysql://{MY_USER}@{MYSQL_SERVER}/sluice_sec", WRONG["my"], "Access denied"),
        "mysql, wrong password in the URL": (
            "my",
            f"mysql://{MY_USER}:{quote(WRONG['my'], safe='')}@{MYSQL_SERVER}/sluice_sec",
            None,
            "Access denied",
        ),
        "postgres, wrong password": (
            "pg",
            f"postgresql://{PG_USER}@127.0.0.1:5432/test",
            WRONG["pg"],
            "password authentication failed",
        ),
        "flight, wrong token": ("fl", secured["flight"], WRONG["token"], "refused the credentials"),
        "flight, wrong basic password": (
            "flb",
            secured["flight"].replace("://", f"://{FL_USER}@"),
            WRONG["basic"],
            "refused the credentials",
        ),
    }
    for what, (name, url, password, says) in refused.items():
        with pytest.raises(SourceError, match=says) as error:
            federation.attach(name, url, password=password)
        captured[f"error ({what})"] = exception_texts(error.value)

    federation.attach(
        "my", f"mysql://{MY_USER}:{quote(MY_PASSWORD, safe='')}@{MYSQL_SERVER}/sluice_sec"
    )  # encoded in the URL
    federation.attach("pg", f"postgresql://{PG_USER}@127.0.0.1:5432/test", password=PG_PASSWORD)
    federation.attach("fl", secured["flight"], password=FL_TOKEN)
    federation.attach("flb", secured["flight"].replace("://", f"://{FL_USER}@"), password=FL_PASSWORD)

    frame = federation.sql(JOIN)
    assert sorted(tuple(r) for r in frame.collect()) == [(1, "one", "pg1", "fl1"), (3, "three", "pg3", "fl3")]
    captured["EXPLAIN"] = federation.explain(JOIN, verbose=True) + federation.explain(
        "SELECT v FROM my.sluice_sec.t", analyze=True
    )
    captured["plan JSON"] = json.dumps(federation.plan(JOIN).to_dict())
    captured["Spark plans of the result"] = frame_plans(frame, capsys)
    captured["attached sources"] = repr(federation.sources) + repr(list(federation._sources.values()))

    # the DataFrame API: a password in the URL option, and one in the password option
    by_url = (
        spark.read.format("sluice")
        .option("url", f"mysql://{MY_USER}:{quote(MY_PASSWORD, safe='')}@{MYSQL_SERVER}/sluice_sec")
        .option("table", "sluice_sec.t")
        .load()
    )
    by_option = (
        spark.read.format("sluice")
        .option("url", f"postgresql://{PG_USER}@127.0.0.1:5432/test")
        .option("password", PG_PASSWORD)
        .option("table", "sluice_sec.t")
        .load()
    )
    assert by_url.count() == 3 and by_option.filter("id = 2").collect()[0].w == "pg2"
    captured["Spark plans of DataFrame API reads"] = frame_plans(by_url, capsys) + frame_plans(by_option, capsys)

    failing = {  # right secrets, but the read fails at the source
        "postgres": "SELECT q FROM pg.sluice_sec.failing",  # division by zero in the view
        "mysql": "SELECT id FROM my.sluice_sec.gone",  # dropped after planning
        "flight": "SELECT id FROM fl.lite.gone",  # dropped on the server after planning
    }
    frames = {what: federation.sql(query) for what, query in failing.items()}
    _my("DROP TABLE sluice_sec.gone")
    with sqlite3.connect(secured["lite"]) as connection:
        connection.execute("DROP TABLE gone")
    connection.close()
    for what, failed_frame in frames.items():
        captured[f"Spark plans of the {what} failure"] = frame_plans(failed_frame, capsys)
        with pytest.raises(Exception) as error:
            failed_frame.collect()
        captured[f"error ({what} read)"] = exception_texts(error.value)
        assert "SourceError" in captured[f"error ({what} read)"], captured[f"error ({what} read)"][:3000]

    captured.update(spark_records(spark))
    assert any(record.name.startswith("py4j") for record in caplog.records), "py4j's DEBUG log was not captured"
    captured["Python logging"] = caplog.text + "\n".join(f"{r.getMessage()} {r.args}" for r in caplog.records)
    captured["stdout and stderr"] = "".join(capsys.readouterr())
    captured["Spark driver log"] = driver_log.read_text()
    # the haystacks hold what surrounds each secret (user names, URLs), so a leak would be seen
    assert MY_USER in captured["Python logging"] and PG_USER in captured["EXPLAIN"] and FL_USER in captured["plan JSON"]
    assert "BatchScan sluice" in captured["Spark SQL executions"]
    assert "SourceError: source 'pg'" in captured["Spark driver log"]  # the failed task, as Spark logged it
    found = leaks(captured)
    assert not found, "\n".join(found)


# ---------------------------------------------------------------- the Flight server's door
def test_the_flight_server_refuses_wrong_or_missing_credentials(secured) -> None:
    def call(*headers: tuple[bytes, bytes]) -> list[str]:
        with flight.connect(secured["flight"]) as client:
            return [
                i.descriptor.path[-1]
                for i in client.list_flights(b"", flight.FlightCallOptions(timeout=10, headers=list(headers)))
            ]

    def basic(user: str, password: str) -> tuple[bytes, bytes]:
        return b"authorization", b"Basic " + base64.b64encode(f"{user}:{password}".encode())

    assert call((b"authorization", f"Bearer {FL_TOKEN}".encode())) and call(basic(FL_USER, FL_PASSWORD))
    refused = [
        (),
        ((b"authorization", f"Bearer {WRONG['token']}".encode()),),
        (basic(FL_USER, WRONG["basic"]),),
        (basic("grace", FL_PASSWORD),),
        ((b"authorization", f"Basic {FL_PASSWORD}".encode()),),
        ((b"authorization", f"Bearer {FL_PASSWORD}".encode()),),
        ((b"authorization", f"Token {FL_TOKEN}".encode()),),
    ]
    for headers in refused:
        with pytest.raises(flight.FlightUnauthenticatedError, match="unauthenticated") as error:
            call(*headers)
        assert not leaks({f"refusal of {headers}": exception_texts(error.value)})
