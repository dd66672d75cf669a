"""Types read faithfully, or refused naming table, column and value (issue 15, item 12).

On the real MariaDB and PostgreSQL servers and a plain pyarrow Flight server: MySQL
``BIT(n)`` and ``YEAR`` are the numbers they hold; PostgreSQL values Spark's types cannot
hold (an unconstrained ``numeric`` with more digits than decimal(38,10), NaN, Infinity;
``infinity`` and BC dates and timestamps) fail the read with a message naming the table,
the column and the value, pushdown on and off; a Flight ``timestamp[ns]`` column is read
when its values are whole microseconds, refused by name otherwise, and never stops a query
that does not read it.
"""

from __future__ import annotations

import threading
from decimal import Decimal

import psycopg
import pyarrow as pa
import pyarrow.flight as flight
import pytest

from sluice import Federation
from tests.sources import MYSQL_URL, PG_URL, mariadb

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def my_types(spark):
    connection = mariadb()
    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE DATABASE IF NOT EXISTS sluice_types")
            cursor.execute("DROP TABLE IF EXISTS sluice_types.bits")
            cursor.execute("CREATE TABLE sluice_types.bits (id INT PRIMARY KEY, b8 BIT(8), b64 BIT(64), y YEAR)")
            cursor.execute(
                "INSERT INTO sluice_types.bits VALUES (1, b'10000001', b'" + "1" * 64 + "', 2024), "
                "(2, b'0', b'1', 1901), (3, NULL, NULL, NULL)"
            )
    finally:
        connection.close()
    federation = Federation(spark=spark)
    federation.attach("my", MYSQL_URL)
    return federation


def test_mysql_bit_and_year_are_the_numbers_they_hold(my_types: Federation) -> None:
    for pushdown in (True, False):
        rows = my_types.sql("SELECT id, b8, b64, y FROM my.sluice_types.bits ORDER BY id", pushdown=pushdown).collect()
        assert [tuple(r) for r in rows] == [
            (1, 129, Decimal(2**64 - 1), 2024),
            (2, 0, Decimal(1), 1901),
            (3, None, None, None),
        ]
    frame = my_types.sql("SELECT b8, b64, y FROM my.sluice_types.bits")
    assert [f.dataType.simpleString() for f in frame.schema] == ["bigint", "decimal(20,0)", "int"]
    assert my_types.sql("SELECT id FROM my.sluice_types.bits WHERE b8 = 129").collect()[0].id == 1  # compared by Spark


#: (column, SQL type, stored value, what the message says)
PG_UNREADABLE = [
    ("n", "numeric", "'NaN'", "'NaN'"),
    ("n", "numeric", "1e50", "'1" + "0" * 50 + "'"),
    ("n", "numeric", "0.12345678901", "'0.12345678901'"),
    ("d", "date", "'infinity'", "'infinity',"),
    ("d", "date", "'-infinity'", "'-infinity',"),
    ("d", "date", "'0044-03-15 BC'", "-043-03-15"),
    ("ts", "timestamp", "'infinity'", "'infinity',"),
    ("ts", "timestamp", "'10000-01-01'", "10000-01-01T00:00:00"),
    ("tz", "timestamptz", "'0001-01-01 00:00+00 BC'", "0000-01-01T00:00:00"),
]


@pytest.fixture(scope="module")
def pg_types(spark):
    with psycopg.connect(PG_URL, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS sluice_types CASCADE")
        connection.execute("CREATE SCHEMA sluice_types")
        for index, (column, kind, value, _) in enumerate(PG_UNREADABLE):
            connection.execute(f"CREATE TABLE sluice_types.t{index} (id int, {column} {kind})")
            connection.execute(f"INSERT INTO sluice_types.t{index} VALUES (1, NULL), (2, {value})")
    federation = Federation(spark=spark)
    federation.attach("pg", PG_URL)
    return federation


@pytest.mark.parametrize("index", range(len(PG_UNREADABLE)), ids=[f"{c}-{v}" for c, _, v, _ in PG_UNREADABLE])
def test_postgres_values_spark_cannot_hold_name_table_column_and_value(pg_types: Federation, index: int) -> None:
    column, _, _, shown = PG_UNREADABLE[index]
    query = f"SELECT id, {column} FROM pg.sluice_types.t{index} WHERE id > 0"
    for pushdown in (True, False):
        with pytest.raises(Exception) as raised:
            pg_types.sql(query, pushdown=pushdown).collect()
        message = str(raised.value)
        assert f"pg.sluice_types.t{index}: column '{column}' holds {shown}" in message, message[:2000]


@pytest.fixture(scope="module")
def plain_flight(spark):
    """A plain pyarrow Flight server (no Sluice protocol): two tables with a timestamp[ns] column."""
    tables = {
        "whole": pa.table({"id": [1, 2], "ts": pa.array([1_000_000_000, 2_000_000_000], pa.timestamp("ns"))}),
        "nanos": pa.table({"id": [1, 2], "ts": pa.array([1_000_000_000, 2_000_000_001], pa.timestamp("ns"))}),
    }

    class Plain(flight.FlightServerBase):
        def _info(self, name: str) -> flight.FlightInfo:
            table = tables[name]
            return flight.FlightInfo(
                table.schema,
                flight.FlightDescriptor.for_path(name),
                [flight.FlightEndpoint(name.encode(), [])],
                table.num_rows,
                -1,
            )

        def list_flights(self, context, criteria):
            return iter([self._info(name) for name in tables])

        def get_flight_info(self, context, descriptor):
            return self._info(descriptor.path[0].decode())

        def do_get(self, context, ticket):
            return flight.RecordBatchStream(tables[ticket.ticket.decode()])

    server = Plain("grpc://127.0.0.1:0")
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    federation = Federation(spark=spark)
    federation.attach("fl", f"grpc://127.0.0.1:{server.port}")
    yield federation
    server.shutdown()
    thread.join(10)


def test_flight_nanosecond_timestamps(plain_flight: Federation) -> None:
    for table in ("whole", "nanos"):  # a query that does not read the column is not stopped by it
        assert sorted(r.id for r in plain_flight.sql(f"SELECT id FROM fl.{table} WHERE id > 0").collect()) == [1, 2]
    seconds = [r.ts.second for r in plain_flight.sql("SELECT ts FROM fl.whole ORDER BY ts").collect()]
    assert seconds == [1, 2]
    for pushdown in (True, False):
        with pytest.raises(Exception, match=r"fl.nanos: column 'ts' holds .*02\.000000001.*cannot hold exactly"):
            plain_flight.sql("SELECT id, ts FROM fl.nanos", pushdown=pushdown).collect()
