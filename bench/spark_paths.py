"""End to end through Spark: Sluice with pushdown on and off, and Spark's own JDBC source.

All three write to Spark's ``noop`` sink, so the time is the read plus Spark's per-row
work, with nothing spent on output. One SparkSession serves every path, with the JDBC
drivers on its classpath: a Python process can hold only one SparkContext, and sharing
it keeps every path in the same JVM, interleaved in the same run.
"""

from __future__ import annotations

import os
from typing import Callable
from urllib.parse import urlsplit

from pyspark.sql import DataFrame, SparkSession

from bench.cases import Case, Shape
from bench.data import PG_SCHEMA, TABLE
from sluice import Federation
from sluice.spark.session import build_session

#: Debian's packages libpostgresql-jdbc-java and libxerial-sqlite-jdbc-java
JDBC_JARS = {"postgresql": "/usr/share/java/postgresql.jar", "sqlite": "/usr/share/java/sqlite-jdbc.jar"}
JDBC_DRIVERS = {"postgresql": "org.postgresql.Driver", "sqlite": "org.sqlite.JDBC"}
JDBC_INSTALL = "apt-get update && apt-get install -y libpostgresql-jdbc-java libxerial-sqlite-jdbc-java"


def available_jars() -> dict[str, str]:
    """The JDBC driver jars that are installed, by source kind."""
    return {kind: path for kind, path in JDBC_JARS.items() if os.path.exists(path)}


def start(jars: dict[str, str]) -> Federation:
    """A Federation on a local session whose classpath also holds the JDBC jars."""
    conf = {"spark.jars": ",".join(jars.values())} if jars else {}
    return Federation(spark=build_session(app_name="sluice-bench", conf=conf))


def attach(fed: Federation, pg_url: str, sqlite_path: str) -> None:
    """(Re-)attach both sources: attaching anew drops cached catalogs of regenerated data."""
    fed.attach("pg", pg_url)
    fed.attach("lite", "sqlite:///" + sqlite_path)


def table_name(kind: str) -> str:
    return f"pg.{PG_SCHEMA}.{TABLE}" if kind == "postgresql" else f"lite.{TABLE}"


def _noop(frame: DataFrame) -> None:
    frame.write.format("noop").mode("overwrite").save()


def sluice_partitions(fed: Federation, query: str) -> int:
    """How many partitions Sluice reads the (single) scan of ``query`` with."""
    spec = fed.plan(query).scans[0].spec
    return len(spec.tasks(spec.open(None)))


def jdbc_frame(spark: SparkSession, kind: str, pg_url: str, sqlite_path: str, shape: Shape, rows: int,
               partitions: int) -> DataFrame:
    """Spark's JDBC source over the table, split on ``id`` like a tuned user would split it.

    Spark pushes the shape's column pruning and its ``status = 'refunded'`` filter to the
    database itself (both are plain JDBC-pushable), so the comparison is pushdown to pushdown.
    """
    if kind == "postgresql":
        parts = urlsplit(pg_url)
        url = f"jdbc:postgresql://{parts.hostname}:{parts.port or 5432}{parts.path}"
        properties = {"user": parts.username or "", "password": parts.password or ""}
        table = f"{PG_SCHEMA}.{TABLE}"
    else:
        url, properties, table = f"jdbc:sqlite:{sqlite_path}", {}, TABLE
    properties["driver"] = JDBC_DRIVERS[kind]
    frame = spark.read.jdbc(url, table, column="id", lowerBound=1, upperBound=rows, numPartitions=partitions,
                            properties=properties)
    if shape.where:
        frame = frame.where(shape.where)
    return frame.select(*shape.columns)


def cases(fed: Federation, kind: str, pg_url: str, sqlite_path: str, shape: Shape, rows: int, jdbc: bool) -> list[Case]:
    """Sluice (pushdown on: the baseline), Sluice (pushdown off) and, if installed, JDBC."""
    query = shape.spark_sql(table_name(kind))
    scenario = f"{kind}-spark"
    partitions = sluice_partitions(fed, query)

    def case(path: str, run: Callable[[], None], note: str = "", baseline: bool = False) -> Case:
        return Case(scenario, shape.key, path, run, baseline=baseline, note=note, streams=partitions)

    found = [
        case("sluice fed.sql, pushdown on", lambda: _noop(fed.sql(query)), baseline=True,
             note=query),
        case("sluice fed.sql, pushdown=False", lambda: _noop(fed.sql(query, pushdown=False)),
             note="reads the whole table; Spark filters and projects"),
    ]
    if jdbc:
        found.append(case("Spark JDBC, partitionColumn=id",
                          lambda: _noop(jdbc_frame(fed.spark, kind, pg_url, sqlite_path, shape, rows, partitions)),
                          note=f"{JDBC_JARS[kind]}, default fetchsize"))
    return found


def transferred(fed: Federation, kind: str, shape: Shape) -> dict[str, dict[str, dict[str, int]]]:
    """Rows and bytes each scan read, with pushdown on and off (one extra run of each)."""
    query = shape.spark_sql(table_name(kind))
    return {"pushdown": fed.transferred(query), "no_pushdown": fed.transferred(query, pushdown=False)}
