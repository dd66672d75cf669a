"""The LOAD DATA text Sluice's MariaDB writer builds from Arrow (sluice/write/load_data.py)
reads back, through the server, as the very values it was built from: every byte value, the
quote, separator and line characters inside text, the word NULL as text, exact decimals in
every exponent, extreme doubles and floats, the calendar's ends. No Spark: the batches are
Arrow's, the reader is PyMySQL.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from decimal import Decimal
from urllib.parse import urlsplit

import pyarrow as pa
import pytest

from sluice.write.load_data import FORMAT, Unstorable, encode
from tests.sources import MYSQL_URL, mariadb

_UTC = dt.timezone.utc
_TEXTS = [
    '"',
    '""',
    '",',
    '"\n',
    ",",
    "\n",
    "\r\n",
    "\\",
    "\\N",
    "NULL",
    "null",
    "",
    " ",
    "trailing  ",
    "é 日本 😀",
    None,
]
_BYTES = [bytes(range(256)), b'"', b"", b"\\", b"NULL", None]
_DECIMALS = [
    "0.0000000001",
    "-1234567890123456789012345678.1234567891",
    "9999999999999999999999999999.9999999999",
    "0",
    None,
]
_DOUBLES = [1e-300, 5e-324, 1.7976931348623157e308, -2.2250738585072014e-308, 0.1, 1 / 3, None]
_FLOATS = [3.4028234663852886e38, 1.401298464324817e-45, 0.10000000149011612, -1.5, None]
#: instants (held in New York time, written as their UTC wall clock) and wall clocks at the calendar's ends
_STAMPS = [
    dt.datetime(1900, 1, 1, 4, 56, 2, tzinfo=_UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=_UTC),
    dt.datetime(2024, 3, 10, 7, 30, tzinfo=_UTC),
    None,
]
_WALL_CLOCKS = [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None]


def _column(values: list, kind: pa.DataType, rows: int) -> pa.Array:
    return pa.array([values[i % len(values)] for i in range(rows)], kind)


def test_load_data_text_reads_back_as_the_arrow_values() -> None:
    rows = len(_TEXTS)
    batch = pa.record_batch(
        {
            "s": _column(_TEXTS, pa.string(), rows),
            "bin": _column(_BYTES, pa.binary(), rows),
            "d": _column([None if v is None else Decimal(v) for v in _DECIMALS], pa.decimal128(38, 10), rows),
            "f": _column(_DOUBLES, pa.float64(), rows),
            "f2": _column(_FLOATS, pa.float32(), rows),
            "b": _column([True, False, None], pa.bool_(), rows),
            "day": _column([dt.date(1, 1, 1), dt.date(9999, 12, 31), None], pa.date32(), rows),
            "ts": _column(_STAMPS, pa.timestamp("us", "America/New_York"), rows),
            "ntz": _column(_WALL_CLOCKS, pa.timestamp("us"), rows),
            "i": _column([-(2**63), 2**63 - 1, None], pa.int64(), rows),
        }
    )
    with (
        mariadb(urlsplit(MYSQL_URL).path.strip("/") or "test", local_infile=True) as connection,
        connection.cursor() as cursor,
        tempfile.NamedTemporaryFile("wb") as spool,
    ):
        cursor.execute("DROP TEMPORARY TABLE IF EXISTS sluice_load_data")
        cursor.execute(
            "CREATE TEMPORARY TABLE sluice_load_data (n INT AUTO_INCREMENT PRIMARY KEY, "
            "s LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin, bin LONGBLOB, d DECIMAL(38,10), "
            "f DOUBLE, f2 FLOAT, b BOOLEAN, day DATE, ts DATETIME(6), ntz DATETIME(6), i BIGINT)"
        )
        spool.write(encode(batch))
        spool.flush()
        cursor.execute(
            f"LOAD DATA LOCAL INFILE %s INTO TABLE sluice_load_data {FORMAT} (s, bin, d, f, f2, b, day, ts, ntz, i)",
            (spool.name,),
        )
        cursor.execute("SHOW WARNINGS")
        assert cursor.fetchall() == ()
        cursor.execute("SELECT s, bin, d, f, CAST(f2 AS DOUBLE), b, day, ts, ntz, i FROM sluice_load_data ORDER BY n")
        stored = [
            tuple(bool(v) if i == 5 and v is not None else v for i, v in enumerate(row)) for row in cursor.fetchall()
        ]
    expected = [
        tuple(
            v.astimezone(_UTC).replace(tzinfo=None) if isinstance(v, dt.datetime) and v.tzinfo else v
            for v in (row[name] for name in batch.schema.names)
        )
        for row in batch.to_pylist()
    ]
    assert stored == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinity_are_refused_naming_the_column(value: float) -> None:
    with pytest.raises(Unstorable, match=r"column 'score' holds (NaN|Infinity|-Infinity): MariaDB and MySQL cannot"):
        encode(pa.record_batch({"score": pa.array([1.0, value, None], pa.float32())}))
