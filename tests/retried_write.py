"""One INSERT or UPDATE whose Spark task fails after staging rows on its first attempt and
succeeds on its retry; prints the statement's outcome and how many rows the first attempt had
staged when it failed, as JSON.

Run by ``tests/integration/test_writes_retried.py`` as a separate process: the test session's
Spark runs ``local[*]``, where a failed task fails its job; this one runs ``local[2,2]`` (a
task gets two attempts). The query's rows pass through a Python UDF, ``gate``, evaluated in
the same task as the writer's staging, upstream of it: on the task's first attempt, at the
partition's last row, it waits until the staging table holds rows of this attempt (the rows
before it, already sent on in batches of :data:`BATCH`) and then raises. Spark runs the task
again, which stages the whole partition again; the statement must land each row once. An
UPDATE sets every row's ``pad`` to the gate's value: the gate runs in the scan of the table, in
the task that stages the delta rows.

    python tests/retried_write.py --kind postgres --url postgresql://... --table public.w_retried --rows 2000 --pad 1000 --marker /tmp/m
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

#: rows per Arrow batch sent to the writer's tasks: the first attempt stages some before failing
BATCH = 100
#: how long the first attempt waits for its staged rows before failing anyway (then it reports 0)
WAIT_S = 60.0


#: the statements, on a table ``(id bigint, pad text)`` (with a primary key for UPDATE)
STATEMENTS = {
    "insert": "INSERT INTO {table} SELECT id, gate(id) FROM range(0, {rows}, 1, 1)",
    "update": "UPDATE {table} SET pad = gate(id)",
}


def staged_rows(kind: str, url: str, schema: str) -> int:
    """The rows in the statement's staging table(s) now, read from a session of our own."""
    if kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as connection:
            tables = connection.execute(
                r"SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'sluice\_stage\_%'"
            ).fetchall()
            return sum(
                connection.execute(f'SELECT count(*) FROM "{schema}"."{name}"').fetchone()[0]  # type: ignore[index]  # one row
                for (name,) in tables
            )
    from tests.sources import mariadb

    with mariadb(schema) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_NAME FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME LIKE 'sluice!_stage!_%%' ESCAPE '!'",
            (schema,),
        )
        total = 0
        for (name,) in cursor.fetchall():
            cursor.execute(f"SELECT count(*) FROM `{name}`")
            total += cursor.fetchone()[0]
        return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["postgres", "mysql"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--table", required=True, help="schema.table, created by the caller: (id bigint, pad text)")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--pad", type=int, required=True, help="characters of each row's text")
    parser.add_argument("--marker", required=True, help="a file the first attempt writes its staged row count to")
    parser.add_argument("--statement", choices=list(STATEMENTS), default="insert")
    args = parser.parse_args()

    from pyspark import TaskContext

    from sluice import Federation
    from sluice.spark.session import build_session

    spark = build_session(
        "local[2,2]",
        app_name="sluice-retried-write",
        conf={
            "spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH),
            "spark.sql.execution.python.udf.maxRecordsPerBatch": str(BATCH),
        },
    )
    kind, url, schema, last, pad = args.kind, args.url, args.table.split(".")[0], args.rows - 1, args.pad
    marker = Path(args.marker)

    def gate(i: int) -> str:
        context = TaskContext.get()
        if i == last and context is not None and context.attemptNumber() == 0:
            deadline, staged = time.monotonic() + WAIT_S, 0
            while not staged and time.monotonic() < deadline:
                staged = staged_rows(kind, url, schema)
                time.sleep(0.2)
            marker.write_text(str(staged))
            raise RuntimeError(f"sluice test: the first attempt fails with {staged} rows staged")
        return str(i % 10) * pad

    spark.udf.register("gate", gate, "string")
    fed = Federation(spark=spark)
    fed.attach("w", url, writable=True)
    report: dict[str, Any] = {}
    try:
        fed.sql(STATEMENTS[args.statement].format(table=f"w.{args.table}", rows=args.rows))
        report["written"] = True
    except Exception as error:  # noqa: BLE001 - reported to the test, which shows it
        report["error"] = str(error)
    report["first_attempt_staged"] = int(marker.read_text()) if marker.exists() else None
    print(json.dumps(report))
    spark.stop()


if __name__ == "__main__":
    main()
