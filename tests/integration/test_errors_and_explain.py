"""Clear errors that name the problem and never a secret; EXPLAIN in every form."""

from __future__ import annotations

import json
import re

import pytest

from sluice import BindError, Federation, QuerySyntaxError, SluiceError, SourceError
from sluice.errors import TimeTravelError
from tests.sources import EDGE_TABLES, mariadb

pytestmark = pytest.mark.integration
EXAMPLE = """SELECT t.i, count(*) AS n, sum(p.d) AS total
FROM pg.sluice_test.edge p JOIN lite.edge t ON p.id = t.id
WHERE p.ts >= TIMESTAMP '2024-01-01 00:00:00' AND (p.t = 'a' OR p.f > 1.5) AND upper(t.t) LIKE 'A%'
GROUP BY t.i"""


def test_unknown_source_table_and_column(fed) -> None:
    with pytest.raises(
        BindError, match="(?s)`nope`.`t` cannot be found.*SQLSTATE: 42P01 .attached sources: .*lite.*pg"
    ):
        fed.sql("SELECT * FROM nope.t")
    with pytest.raises(BindError, match="no table sluice_test.missing"):
        fed.sql("SELECT * FROM pg.sluice_test.missing")
    with pytest.raises(BindError, match="no table main.missing"):
        fed.sql("SELECT * FROM lite.missing")
    with pytest.raises(BindError, match="`nope` cannot be resolved"):
        fed.sql("SELECT nope FROM pg.sluice_test.edge")


def test_not_found_names_the_schema_asked_and_its_closest_tables_only(fed, pg_url) -> None:
    """A misspelt table names its schema and the close names in it; other schemas' and other
    databases' tables (here one whose name says it is secret) are nobody's business."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("CREATE SCHEMA IF NOT EXISTS ux_other")
        connection.execute("CREATE TABLE IF NOT EXISTS ux_other.edge_secret (x int)")
    with mariadb() as connection:
        connection.cursor().execute("CREATE DATABASE IF NOT EXISTS ux_other")
        connection.cursor().execute("CREATE TABLE IF NOT EXISTS ux_other.edge_secret (x int)")
    for name, table in EDGE_TABLES.items():
        schema = table.split(".")[1] if table.count(".") == 2 else "main"
        with pytest.raises(BindError) as missing:
            fed.sql(f"SELECT * FROM {name}.{schema}.edgee")
        message = str(missing.value)
        assert f"has no table {schema}.edgee (closest in {schema}: edge" in message, message
        assert "secret" not in message and "ux_other" not in message, message
        with pytest.raises(BindError, match="no table ux_nowhere.edge .no schema ux_nowhere, or it has no tables"):
            fed.sql(f"SELECT * FROM {name}.ux_nowhere.edge")


def test_refusals_and_read_failures_in_the_jvm_reach_python_as_sluice_errors(fed, pg_url) -> None:
    """Plain PySpark calls (no fed.sql to translate): a time travel, a write and a table gone
    before the read (read by the driver, then by a Python worker) raise Sluice's error classes
    with a one-line message, not a Py4JJavaError with the Java stack."""
    import psycopg

    spark = fed.spark
    failures: list[SluiceError] = []
    with pytest.raises(TimeTravelError, match="only for lake") as travel:
        spark.sql("SELECT * FROM lite.edge VERSION AS OF 3").collect()
    failures.append(travel.value)
    with pytest.raises(SluiceError, match="source 'lite' is read-only") as write:
        spark.sql("INSERT INTO lite.edge SELECT * FROM lite.edge")
    failures.append(write.value)
    for small_read_rows in ("10000", "0"):
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute("CREATE SCHEMA IF NOT EXISTS ux_gone")
            connection.execute("DROP TABLE IF EXISTS ux_gone.t")
            connection.execute("CREATE TABLE ux_gone.t AS SELECT 1 AS x")
        frame = fed.sql("SELECT x FROM pg.ux_gone.t")
        with psycopg.connect(pg_url, autocommit=True) as connection:
            connection.execute("DROP TABLE ux_gone.t")
        spark.conf.set("spark.sluice.smallReadRows", small_read_rows)
        try:
            with pytest.raises(SourceError, match="source 'pg'.*ux_gone") as gone:
                frame.collect()
        finally:
            spark.conf.unset("spark.sluice.smallReadRows")
        failures.append(gone.value)
    for failure in failures:
        assert "\n" not in str(failure) and "\tat " not in str(failure), str(failure)[:2000]


def test_broken_query(fed) -> None:
    with pytest.raises(QuerySyntaxError, match="cannot parse"):
        fed.sql("SELECT FROM WHERE (")


def test_unreachable_server_and_bad_credentials_name_the_problem_not_the_secret(spark) -> None:
    federation = Federation(spark=spark)
    with pytest.raises(SourceError) as unreachable:
        federation.attach("down", "postgresql://root:hunter2secret@127.0.0.1:1/test")
    assert "cannot connect" in str(unreachable.value) and "hunter2secret" not in str(unreachable.value)
    with pytest.raises(SourceError) as no_role:
        federation.attach("bad", "postgresql://no_such_user:topsecret42@127.0.0.1:5432/test")
    message = str(no_role.value)
    assert "no_such_user" in message and "topsecret42" not in message
    with pytest.raises(SourceError) as short_password:  # a one-letter password is masked as a token, not a letter
        federation.attach("bad", "postgresql://nosuchuser@127.0.0.1:5432/test", password="x")
    assert 'role "nosuchuser" does not exist' in str(short_password.value), str(short_password.value)
    with pytest.raises(SourceError, match="does not exist"):
        federation.attach("gone", "sqlite:////nonexistent/dir/file.db")


def test_explain_shows_levels_reasons_and_remote_sql(fed) -> None:
    text = fed.explain(EXAMPLE)
    assert "[EXACT]" in text and "[UNSUPPORTED]" in text and "reason:" in text
    assert 'remote query: SELECT "id", "d"::text FROM "sluice_test"."edge" WHERE' in text
    verbose = fed.explain(EXAMPLE, verbose=True)
    for rule in ("classify_filters", "push_projection", "push_limit"):
        assert f"-- after {rule}:" in verbose


def test_explain_formatted_prints_the_pushed_keys_one_a_line(fed) -> None:
    """EXPLAIN FORMATTED lists what each scan pushed under the keys Spark's JDBC scan uses (what
    people and tools grep for), keeps Sluice's reasons, and a pushed join names itself."""
    queries = {
        "SELECT id FROM pg.sluice_test.edge WHERE id > 2 AND f > 1.5 ORDER BY id LIMIT 3": [
            r"PushedFilters: \[.*`id` > 2.*\]",
            r"PushedTopN: ORDER BY \"edge\".\"id\" ASC NULLS FIRST LIMIT 3",  # keys qualified: never an output name
            r"RemoteQuery: SELECT .*",
            r"Sluice: .*\[EXACT\] `id` > 2 -- .*",
        ],
        "SELECT i, count(*) AS n, max(b) AS m FROM pg.sluice_test.edge WHERE id > 2 GROUP BY i": [
            r"PushedGroupBy: \[.*i.*\]",
            r"PushedAggregates: \[.*count.*, .*max.*b.*\]",
            r"RemoteQuery: SELECT .*GROUP BY.*",
        ],
        "SELECT a.id, b.i FROM pg.sluice_test.edge a JOIN pg.sluice_test.edge b ON a.id = b.id": [
            r"PushedJoin: .* ON .*id.*",
            r"RemoteQuery: SELECT .*JOIN.*",
        ],
    }
    for query, keys in queries.items():
        plan = fed.spark.sql(f"EXPLAIN FORMATTED {query}").first()[0]
        for key in keys:
            assert re.search(f"(?m)^{key}$", plan, flags=re.I), f"{key} not a line of:\n{plan}"


def test_explain_analyze_reports_transfer(fed) -> None:
    text = fed.explain(EXAMPLE, analyze=True)
    assert text.count("transferred:") == 2


def test_plan_to_dict_is_json(fed) -> None:
    data = json.loads(json.dumps(fed.plan(EXAMPLE).to_dict()))
    scan = data["scans"][0]
    assert {"source", "table", "remote_query", "filters", "columns", "limit"} <= set(scan)
    assert {"sql", "level", "reason"} <= set(scan["filters"][0])


def test_example_query_same_rows_both_ways(fed) -> None:
    assert sorted(fed.sql(EXAMPLE).collect()) == sorted(fed.sql(EXAMPLE, pushdown=False).collect())


def test_password_never_reaches_explain_or_sparks_plan(spark, pg_url) -> None:
    federation = Federation(spark=spark)
    secret_url = pg_url.replace("root@", "root:Sup3rS3cret@")  # trust auth ignores the password
    federation.attach("pg", secret_url)
    query = "SELECT id FROM pg.sluice_test.edge WHERE i = 1"
    frame = federation.sql(query)
    texts = [
        federation.explain(query),
        json.dumps(federation.plan(query).to_dict()),
        frame._jdf.queryExecution().toString(),
        repr(federation.sources),
    ]
    assert all("Sup3rS3cret" not in text for text in texts)
    assert frame.count() == federation.sql(query, pushdown=False).count()


def test_spark_analysis_errors_name_the_users_tables(fed) -> None:
    from sluice import QueryError

    with pytest.raises(QueryError) as error:
        fed.sql("SELECT no_such_function(t) FROM lite.edge")
    assert "no_such_function" in str(error.value).lower() and "sluice_q" not in str(error.value)


def test_result_names_do_not_change_with_pushdown(fed) -> None:
    query = (
        "SELECT i BETWEEN 1 AND 2, count(*), sum(d), NOT (i = 1), T.t FROM pg.sluice_test.edge T "
        "WHERE i BETWEEN -5 AND 5 AND NOT (t = 'a') GROUP BY 1, 4, T.t"
    )
    pushed, reference = fed.sql(query), fed.sql(query, pushdown=False)
    assert pushed.columns == reference.columns
    assert sorted(map(repr, pushed.collect())) == sorted(map(repr, reference.collect()))


def test_wrong_password_is_named_and_the_right_one_reaches_the_readers(spark, pg_url) -> None:
    """Role sluice_auth needs a password (scripts/services.sh sets it up)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS sluice_test.auth_t AS SELECT 1 AS x")
        connection.execute("GRANT USAGE ON SCHEMA sluice_test TO sluice_auth")
        connection.execute("GRANT SELECT ON sluice_test.auth_t TO sluice_auth")
    url = pg_url.replace("root@", "sluice_auth@", 1)  # the suite's own server and database
    federation = Federation(spark=spark)
    for attempt in (
        {"url": url, "password": "not-the-password-42"},
        {"url": url.replace("sluice_auth@", "sluice_auth:wrong-in-url-77@")},
    ):
        with pytest.raises(SourceError) as error:
            federation.attach("auth", **attempt)
        assert "password authentication failed" in str(error.value)
        assert "not-the-password-42" not in str(error.value) and "wrong-in-url-77" not in str(error.value)
    federation.attach("auth", url, password="sluice-auth-test")
    frame = federation.sql("SELECT x FROM auth.sluice_test.auth_t WHERE x = 1")
    assert frame.collect()[0].x == 1
    assert "sluice-auth-test" not in frame._jdf.queryExecution().toString() + federation.explain(
        "SELECT x FROM auth.sluice_test.auth_t"
    )


#: what only the planner writes: Spark views, scan aliases, sqlglot's result aliases
INTERNAL = re.compile(r"sluice_q\d+|\w+__s\d+\b|\b_col_\d+\b")


def test_explain_plan_json_and_errors_speak_the_users_names(fed) -> None:
    """EXAMPLE aliases p and t; an unnamed sum and a subquery over the same table add a
    generated result alias and a repeated table name."""
    from sluice import QueryError

    query = EXAMPLE.replace(
        "GROUP BY t.i", "AND t.id IN (SELECT id FROM lite.edge WHERE i > 0) AND t.t <> 'p__s0' GROUP BY t.i"
    ).replace("sum(p.d) AS total", "sum(p.d)")
    texts = {
        "explain": fed.explain(query),
        "verbose": fed.explain(query, verbose=True),
        "json": json.dumps(fed.plan(query).to_dict()),
    }
    for name, text in texts.items():
        assert not INTERNAL.findall(text.replace("'p__s0'", "")), (name, INTERNAL.findall(text))
    explained = texts["explain"]
    assert "Scan pg.sluice_test.edge on pg" in explained and "Scan lite.main.edge#2" in explained
    assert "p__s0" in explained  # a literal is the user's text, untouched
    plan = fed.plan(query).to_dict()
    aliases = {s["alias"] for s in plan["scans"]}  # Spark may scan lite.edge more than twice (the IN subquery)
    assert {"lite.main.edge", "lite.main.edge#2", "pg.sluice_test.edge"} <= aliases
    with pytest.raises(QueryError) as error:
        fed.sql("SELECT t.t, count(*) FROM lite.edge t JOIN pg.sluice_test.edge p ON p.id = t.id GROUP BY t.i")
    assert "MISSING_AGGREGATION" in str(error.value) and not INTERNAL.findall(str(error.value)), str(error.value)


def test_pruning_plot_titles_name_the_users_scans(fed, tmp_path) -> None:
    """The pyramid plot of a lake scan is titled with the user's alias, not the scan's internal one."""
    from sluice.lake.plot import pyramid_figure
    from tests.sources import selected

    if "lake" not in {s.name for s in selected()}:
        pytest.skip("no lake source selected")
    (lake,) = [s for s in selected() if s.name == "lake"]
    pyramids = fed.pruning(f"SELECT r.i FROM {lake.edge_table} r JOIN {lake.edge_table} ON r.i = 1")
    figure = pyramid_figure(pyramids)
    titles = [axis.get_title(loc="left") for axis in figure.axes]
    table = "lake." + lake.edge_table.split(".", 1)[1]
    assert sorted(pyramids) == [table, table + "#2"] and all(title.startswith(table) for title in titles), titles
    assert not any(INTERNAL.findall(title) for title in titles), titles
