"""End to end through Spark: Sluice with pushdown on and off, and Spark's own JDBC source.

All paths write to Spark's ``noop`` sink, so the time is the read plus Spark's per-row
work, with nothing spent on output. Spark's JDBC source is split on ``id`` into as many
partitions as Sluice uses, and Spark pushes the shape's filter, projection and (top-N)
limit to the database itself, so the comparison is pushdown to pushdown. DuckDB has no
JDBC driver in Debian: its Spark comparison is Sluice on against Sluice off.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from bench import data
from bench.cases import Case, Shape
from sluice import Federation
from sluice.sources import open_scan_source

#: Debian's packages libpostgresql-jdbc-java, libmariadb-java and libxerial-sqlite-jdbc-java
JDBC_JARS = {
    "postgresql": "/usr/share/java/postgresql.jar",
    "mariadb": "/usr/share/java/mariadb-java-client.jar",
    "sqlite": "/usr/share/java/sqlite-jdbc.jar",
}
JDBC_DRIVERS = {
    "postgresql": "org.postgresql.Driver",
    "mariadb": "org.mariadb.jdbc.Driver",
    "sqlite": "org.sqlite.JDBC",
}
JDBC_INSTALL = "apt-get update && apt-get install -y libpostgresql-jdbc-java libmariadb-java libxerial-sqlite-jdbc-java"
#: the name each engine's source is attached under
SOURCE_NAMES = {"postgresql": "pg", "mariadb": "my", "sqlite": "lite", "duckdb": "duck"}


def available_jars() -> dict[str, str]:
    """The JDBC driver jars that are installed, by engine."""
    return {kind: path for kind, path in JDBC_JARS.items() if os.path.exists(path)}


def attach(fed: Federation, pg_url: str, mysql_url: str, data_dir: str, rows: int) -> None:
    """(Re-)attach every engine's table at this scale: attaching anew drops cached catalogs."""
    fed.attach("pg", pg_url)
    fed.attach("my", mysql_url)
    fed.attach("lite", "sqlite:///" + data.sqlite_path(data_dir, rows))
    fed.attach("duck", "duckdb:///" + data.duckdb_path(data_dir, rows))


def table_name(engine: str) -> str:
    name = SOURCE_NAMES[engine]
    schema = {"postgresql": data.PG_SCHEMA, "mariadb": data.MYSQL_DATABASE}.get(engine)
    return f"{name}.{schema}.{data.TABLE}" if schema else f"{name}.{data.TABLE}"


def noop(frame: DataFrame) -> None:
    frame.write.format("noop").mode("overwrite").save()


def sluice_partitions(fed: Federation, query: str) -> int:
    """How many partitions Sluice reads the first scan of ``query`` with."""
    spec = fed.plan(query).scans[0].spec
    return len(open_scan_source(spec, None).tasks(spec))


def jdbc_frame(spark: SparkSession, engine: str, url: str, rows: int, partitions: int) -> DataFrame:
    """Spark's JDBC source over the whole table, split on ``id`` like a tuned user would split it."""
    parts = urlsplit(url)
    properties = {"driver": JDBC_DRIVERS[engine]}
    if engine == "sqlite":
        jdbc_url, table = f"jdbc:sqlite:{url}", data.TABLE
    else:
        # Spark picks its MySQL dialect (backquoted identifiers) by the jdbc:mysql: prefix,
        # which MariaDB's driver accepts with permitMysqlScheme
        scheme, port, schema = (
            ("postgresql", 5432, data.PG_SCHEMA) if engine == "postgresql" else ("mysql", 3306, data.MYSQL_DATABASE)
        )
        database = parts.path if engine == "postgresql" else f"/{data.MYSQL_DATABASE}?permitMysqlScheme"
        jdbc_url, table = f"jdbc:{scheme}://{parts.hostname}:{parts.port or port}{database}", f"{schema}.{data.TABLE}"
        properties.update(user=unquote(parts.username or ""), password=unquote(parts.password or ""))
        if engine == "mariadb":
            properties["sessionVariables"] = "time_zone='+00:00'"
    return spark.read.jdbc(
        jdbc_url, table, column="id", lowerBound=1, upperBound=rows, numPartitions=partitions, properties=properties
    )


def _shaped(frame: DataFrame, shape: Shape) -> DataFrame:
    if shape.where:
        frame = frame.where(shape.where)
    frame = frame.select(*shape.columns)
    if shape.order:
        frame = frame.sort(_order(shape.order))
    if shape.limit is not None:
        frame = frame.limit(shape.limit)
    return frame


def _order(text: str) -> Column:
    """``placed_at DESC`` as a Spark sort key."""
    column, _, direction = text.partition(" ")
    return F.col(column).desc() if direction.upper() == "DESC" else F.col(column).asc()


def cases(fed: Federation, engine: str, jdbc_url: str | None, shape: Shape, rows: int) -> list[Case]:
    """Sluice (pushdown on: the baseline), Sluice (pushdown off) and, where a jar exists, JDBC."""
    query = shape.spark_sql(table_name(engine))
    scenario = f"{engine}-spark"
    partitions = sluice_partitions(fed, query)

    def case(path: str, run: Callable[[], None], note: str = "", baseline: bool = False) -> Case:
        return Case(scenario, shape.key, path, run, baseline=baseline, note=note, streams=partitions)

    found = [
        case("sluice fed.sql, pushdown on", lambda: noop(fed.sql(query)), baseline=True, note=query),
        case(
            "sluice fed.sql, pushdown=False",
            lambda: noop(fed.sql(query, pushdown=False)),
            note="reads the whole table; Spark filters and projects",
        ),
    ]
    if jdbc_url is not None:
        found.append(
            case(
                "Spark JDBC, partitionColumn=id",
                lambda: noop(_shaped(jdbc_frame(fed.spark, engine, jdbc_url, rows, partitions), shape)),
                note=f"{os.path.basename(JDBC_JARS[engine])}, default fetch size",
            )
        )
    return found


#: a cross-source join: PostgreSQL orders against the same orders in MariaDB, filtered on both sides
JOIN_SQL = (
    f"SELECT p.status, count(*) AS orders, sum(p.amount) AS amount "
    f"FROM {table_name('postgresql')} p JOIN {table_name('mariadb')} m ON p.id = m.id "
    f"WHERE p.customer_id < 1000 AND m.score < 0.5 GROUP BY p.status"
)
JOIN_TITLE = "join PostgreSQL x MariaDB on id, 1% x 50% filters, GROUP BY"


def join_cases(fed: Federation, pg_url: str, mysql_url: str, rows: int, jdbc: dict[str, str]) -> list[Case]:
    """The cross-source join through Sluice (on, off) and through two JDBC sources."""
    partitions = sluice_partitions(fed, JOIN_SQL)

    def case(path: str, run: Callable[[], None], note: str = "", baseline: bool = False) -> Case:
        return Case("join-spark", "join", path, run, baseline=baseline, note=note, streams=partitions)

    found = [
        case("sluice fed.sql, pushdown on", lambda: noop(fed.sql(JOIN_SQL)), baseline=True, note=JOIN_SQL),
        case("sluice fed.sql, pushdown=False", lambda: noop(fed.sql(JOIN_SQL, pushdown=False))),
    ]
    if {"postgresql", "mariadb"} <= set(jdbc):

        def run() -> None:
            spark = fed.spark
            left = jdbc_frame(spark, "postgresql", pg_url, rows, partitions).where("customer_id < 1000").alias("p")
            right = jdbc_frame(spark, "mariadb", mysql_url, rows, partitions).where("score < 0.5").alias("m")
            joined = left.join(right, F.col("p.id") == F.col("m.id"))
            noop(joined.groupBy("p.status").agg(F.count("*").alias("orders"), F.sum("p.amount").alias("amount")))

        found.append(case("Spark JDBC x2, partitionColumn=id", run))
    return found


def transferred(fed: Federation, query: str) -> dict[str, dict[str, dict[str, int]]]:
    """Rows and bytes each scan read, with pushdown on and off (one extra run of each)."""
    return {"pushdown": fed.transferred(query), "no_pushdown": fed.transferred(query, pushdown=False)}
