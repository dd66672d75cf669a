"""Rows moved by TPC-H-shaped queries over one PostgreSQL database: Sluice vs Spark's JDBC catalog.

Issue 29: an aggregate or top-N above a pushed same-source join used to stay in Spark (every
joined row moved). This measures, per query, the rows each path moves from PostgreSQL into
Spark and checks every path's answer against psycopg running the same SQL:

- Sluice's catalog, pushdown on (``fed.transferred``: the rows its readers returned);
- Sluice, pushdown off: nothing pushed, so every row of each table read (the tables' row counts,
  not run: reading 6M rows through Spark only to count them costs minutes on a shared machine);
- Spark's ``JDBCTableCatalog`` with ``spark.sql.optimizer.datasourceV2JoinPushdown=true`` (its
  BatchScan's ``numOutputRows``), when Debian's PostgreSQL JDBC jar is installed.

The tables are TPC-H's ``customer``, ``orders`` and ``lineitem`` at a scale factor's row counts
(sf1: 150,000 / 1,500,000 / about 6,000,000), TPC-H's column names and types, generated inside
PostgreSQL by ``generate_series`` (not dbgen: the values are shaped, not TPC-H's; ``CHAR(n)``
columns are ``varchar``, as DuckDB's dbgen makes them, since PostgreSQL's blank-padded
comparison is not Spark's). The queries are TPC-H's two-table shapes (Sluice pushes joins of two
tables at a time); ``q3`` is TPC-H Q3 whole, three tables, to show what stays with Spark.

Run: ``python -m bench.tpch_moved --pg-url postgresql://... --sf 1`` (under /work/bin/slot on a
shared machine); it prints a Markdown table (docs/benchmarks.md keeps the figures).
"""

from __future__ import annotations

import argparse
import os
import time
from decimal import Decimal
from typing import Any

import psycopg

from bench.scenarios.aggregates import _scan_rows
from bench.scenarios.catalog import JDBC_CATALOG, jdbc_options
from bench.spark_paths import JDBC_JARS

SLUICE, JDBC = "tpch", "tpch_jdbc"

#: name -> (what it is, SQL with {c} for the catalog prefix and {s} for the schema)
QUERIES: dict[str, tuple[str, str]] = {
    "q12": (
        "TPC-H Q12's join and grouping: orders x lineitem, 1 year of receipts by ship mode, grouped by "
        "ship mode and order priority",
        "SELECT l_shipmode, o_orderpriority, count(*) AS n, sum(l_quantity) AS qty "
        "FROM {c}{s}.orders JOIN {c}{s}.lineitem ON o_orderkey = l_orderkey "
        "WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate >= DATE '1994-01-01' "
        "AND l_receiptdate < DATE '1995-01-01' GROUP BY l_shipmode, o_orderpriority",
    ),
    "q3_two": (
        "TPC-H Q3 without customer: orders x lineitem grouped by order, revenue = sum(price x (1 - discount))",
        "SELECT l_orderkey, o_orderdate, o_shippriority, sum(l_extendedprice * (1 - l_discount)) AS revenue "
        "FROM {c}{s}.orders JOIN {c}{s}.lineitem ON l_orderkey = o_orderkey "
        "WHERE o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15' "
        "GROUP BY l_orderkey, o_orderdate, o_shippriority",
    ),
    "q10_two": (
        "TPC-H Q10 without lineitem and nation: customer x orders of one quarter, per customer",
        "SELECT c_custkey, c_name, c_acctbal, count(*) AS n, sum(o_totalprice) AS total "
        "FROM {c}{s}.customer JOIN {c}{s}.orders ON c_custkey = o_custkey "
        "WHERE o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1994-01-01' "
        "GROUP BY c_custkey, c_name, c_acctbal",
    ),
    "q13_inner": (
        "TPC-H Q13's inner aggregate: customer LEFT JOIN orders, orders per customer",
        "SELECT c_custkey, count(o_orderkey) AS c_count "
        "FROM {c}{s}.customer LEFT JOIN {c}{s}.orders ON c_custkey = o_custkey GROUP BY c_custkey",
    ),
    "global": (
        "one month's revenue over orders x lineitem (one row)",
        "SELECT count(*) AS n, sum(l_extendedprice * (1 - l_discount)) AS revenue "
        "FROM {c}{s}.orders JOIN {c}{s}.lineitem ON o_orderkey = l_orderkey "
        "WHERE l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'",
    ),
    "top_n": (
        "top-N over a join: the 10 dearest orders with their customer",
        "SELECT o_orderkey, o_totalprice, c_name FROM {c}{s}.orders JOIN {c}{s}.customer ON o_custkey = c_custkey "
        "ORDER BY o_totalprice DESC, o_orderkey LIMIT 10",
    ),
    "q3": (
        "TPC-H Q3 whole: customer x orders x lineitem (three tables: Sluice pushes two, Spark joins the third)",
        "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority "
        "FROM {c}{s}.customer JOIN {c}{s}.orders ON c_custkey = o_custkey JOIN {c}{s}.lineitem ON l_orderkey = o_orderkey "
        "WHERE c_mktsegment = 'BUILDING' AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15' "
        "GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10",
    ),
}

#: the tables each query reads (pushdown off reads each whole)
TABLES = {
    "q12": ("orders", "lineitem"),
    "q3_two": ("orders", "lineitem"),
    "q10_two": ("customer", "orders"),
    "q13_inner": ("customer", "orders"),
    "global": ("orders", "lineitem"),
    "top_n": ("orders", "customer"),
    "q3": ("customer", "orders", "lineitem"),
}

_DDL = """
CREATE TABLE {s}.customer (c_custkey integer PRIMARY KEY, c_name varchar(25), c_address varchar(40),
  c_nationkey integer, c_phone varchar(15), c_acctbal numeric(15,2), c_mktsegment varchar(10), c_comment varchar(117));
INSERT INTO {s}.customer SELECT i, 'Customer#' || lpad(i::text, 9, '0'), md5(i::text), i % 25,
  (10 + i % 25) || '-' || (100 + i % 900), round(((i * 7919) % 1099999 - 99999) / 100.0, 2),
  (ARRAY['AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'])[1 + (i * 31) % 5], md5((i * 3)::text)
  FROM generate_series(1, {customers}) AS i;
CREATE TABLE {s}.orders (o_orderkey bigint PRIMARY KEY, o_custkey integer, o_orderstatus varchar(1),
  o_totalprice numeric(15,2), o_orderdate date, o_orderpriority varchar(15), o_clerk varchar(15),
  o_shippriority integer, o_comment varchar(79));
INSERT INTO {s}.orders SELECT i, 1 + (i * 7) % {customers}, (ARRAY['F','O','P'])[1 + i % 3],
  round(((i * 104729) % 50000000) / 100.0 + 900, 2), DATE '1992-01-01' + ((i * 13) % 2405)::int,
  (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[1 + (i * 17) % 5],
  'Clerk#' || lpad((i % 1000)::text, 9, '0'), 0, md5(i::text) FROM generate_series(1::bigint, {orders}) AS i;
CREATE TABLE {s}.lineitem (l_orderkey bigint, l_linenumber integer, l_quantity numeric(15,2),
  l_extendedprice numeric(15,2), l_discount numeric(15,2), l_tax numeric(15,2), l_returnflag varchar(1),
  l_linestatus varchar(1), l_shipdate date, l_commitdate date, l_receiptdate date, l_shipmode varchar(10),
  PRIMARY KEY (l_orderkey, l_linenumber));
INSERT INTO {s}.lineitem SELECT o_orderkey, n, 1 + (o_orderkey * n * 11) % 50,
  round(((o_orderkey * n * 7727) % 10000000) / 100.0 + 900, 2), ((o_orderkey + n) % 11) / 100.0,
  ((o_orderkey * n) % 9) / 100.0, (ARRAY['A','N','R'])[1 + (o_orderkey + n) % 3], (ARRAY['F','O'])[1 + n % 2],
  o_orderdate + (1 + (o_orderkey * n) % 121)::int, o_orderdate + (30 + (o_orderkey + n) % 61)::int,
  o_orderdate + (2 + (o_orderkey * n) % 150)::int,
  (ARRAY['AIR','FOB','MAIL','RAIL','REG AIR','SHIP','TRUCK'])[1 + (o_orderkey * 3 + n) % 7]
  FROM {s}.orders, generate_series(1, 1 + (o_orderkey * 5) % 7) AS n;
CREATE INDEX ON {s}.orders (o_custkey);
VACUUM (FREEZE, ANALYZE) {s}.customer;
VACUUM (FREEZE, ANALYZE) {s}.orders;
VACUUM (FREEZE, ANALYZE) {s}.lineitem;
"""


def ensure_tables(url: str, schema: str, sf: float) -> dict[str, int]:
    """The three tables at ``sf``'s row counts in ``schema`` (generated once); their row counts."""
    customers, orders = int(150_000 * sf), int(1_500_000 * sf)
    with psycopg.connect(url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchone()
        have = found[0] if found else 0
        if have == 3:
            counted = connection.execute(f"SELECT count(*) FROM {schema}.orders").fetchone()
            have = 3 if counted and counted[0] == orders else 0
        if have != 3:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            connection.execute(f"CREATE SCHEMA {schema}")
            for statement in _DDL.format(s=schema, customers=customers, orders=orders).split(";\n"):
                if statement.strip():
                    connection.execute(statement)
        return {
            table: int(row[0])
            for table in ("customer", "orders", "lineitem")
            if (row := connection.execute(f"SELECT count(*) FROM {schema}.{table}").fetchone()) is not None
        }


def _normal(rows: list[Any]) -> list[tuple[Any, ...]]:
    """Rows as comparable tuples (decimals and floats as floats rounded to cents), sorted."""
    found = [tuple(round(float(v), 2) if isinstance(v, (Decimal, float)) else v for v in row) for row in rows]
    return sorted(found, key=repr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pg-url", default=os.environ.get("SLUICE_PG_URL", "postgresql://root@127.0.0.1:5432/test"))
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--only", nargs="*", default=list(QUERIES))
    args = parser.parse_args()
    schema = f"tpch_sf{str(args.sf).replace('.', '_').removesuffix('_0')}"
    started = time.perf_counter()
    counts = ensure_tables(args.pg_url, schema, args.sf)
    print(f"tables in {schema}: {counts} ({time.perf_counter() - started:.0f} s)", flush=True)

    from sluice import Federation
    from sluice.spark.session import build_session

    jar = JDBC_JARS["postgresql"]
    conf = {"spark.jars": jar} if os.path.exists(jar) else {}
    fed = Federation(spark=build_session(app_name="sluice-tpch-moved", conf=conf))
    spark = fed.spark
    fed.attach(SLUICE, args.pg_url)
    if conf:
        spark.conf.set(f"spark.sql.catalog.{JDBC}", JDBC_CATALOG)
        for option, value in jdbc_options("postgresql", args.pg_url).items():
            spark.conf.set(f"spark.sql.catalog.{JDBC}.{option}", value)
    spark.conf.set("spark.sql.optimizer.datasourceV2JoinPushdown", "true")
    print(
        "| query | answer rows | Sluice, pushdown on | Sluice, pushdown off | Spark JDBCTableCatalog | pushed by Sluice |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for name in args.only:
        title, template = QUERIES[name]
        with psycopg.connect(args.pg_url) as connection:
            reference = _normal(connection.execute(template.format(c="", s=schema)).fetchall())
        text = template.format(c=f"{SLUICE}.", s=schema)
        plan = fed.plan(text)
        pushed = "; ".join(
            ("join" if scan.spec.join is not None else scan.table)
            + (" + aggregates" if scan.spec.aggregate is not None else "")
            + (f" + LIMIT {scan.spec.limit}" if scan.spec.limit is not None else "")
            for scan in plan.scans
        )
        clock = time.perf_counter()
        answer = _normal(spark.sql(text).collect())
        sluice_s = time.perf_counter() - clock
        moved = sum(scan["rows"] for scan in fed.transferred(text).values())
        same = "same" if answer == reference else "DIFFERENT"
        off = sum(counts[table] for table in TABLES[name])
        jdbc = "—"
        if conf:
            jdbc_text = template.format(c=f"{JDBC}.", s=schema)
            clock = time.perf_counter()
            frame = spark.sql(jdbc_text)
            jdbc_answer = _normal(frame.collect())
            jdbc_s = time.perf_counter() - clock
            scanned = _scan_rows(frame)
            jdbc_same = "same" if jdbc_answer == reference else "DIFFERENT"
            jdbc = f"{scanned:,} ({jdbc_s:.1f} s, {jdbc_same})" if scanned is not None else f"? ({jdbc_same})"
        print(
            f"| {name}: {title} | {len(reference):,} | {moved:,} ({sluice_s:.1f} s, {same}) | {off:,} | {jdbc} | {pushed} |",
            flush=True,
        )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; sf {args.sf}; {args.pg_url.split('@')[-1]}")


if __name__ == "__main__":
    main()
