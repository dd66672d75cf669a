"""Synthetic spacecraft telemetry, computed by Spark on the executors.

Every column is a Spark SQL expression of the row number from ``spark.range``, drawn
with ``xxhash64(id, <salt>)``: no data passes through the driver, any row count scales
with the cluster, and the same ``rows`` always give the same rows (tests rely on that).

What the rows look like, and why:

- five missions with 2-8 payloads each (payload ids ``mission_id * 1000 + n``); every
  payload reports at the same rate, so missions with more payloads have more rows and the
  partitions are uneven, as real archives are;
- ``ts`` uniform over two weeks from 2025-03-01 00:00 UTC (the window holds the US
  daylight-saving change of 2025-03-09, which time-zone bugs trip over), ``day`` its UTC
  date;
- ``voltage`` around 28 V and ``temperature`` from -40 to 60 °C, each with about 1% NULL
  and a few NaN (sensor glitches): NaN is what makes min/max statistics treacherous;
- ``status`` mostly OK, 3% WARN, 0.2% FAULT; OK rows carry an empty message (or NULL),
  the others a message, some of them non-ASCII.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from sluice.lake.partitioning import utc_day

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: mission id -> number of payloads on board
MISSIONS = {101: 4, 102: 8, 205: 3, 311: 6, 412: 2}
SENSORS = (
    "bus_voltage",
    "battery_temp",
    "solar_array_current",
    "reaction_wheel_rpm",
    "star_tracker_temp",
    "magnetometer_x",
    "heater_zone_3",
    "radio_tx_power",
)
MESSAGES = (
    "battery temperature above limit",
    "bus undervoltage",
    "reaction wheel saturation",
    "star tracker lost lock",
    "Überspannung am Versorgungsbus",
    "température du panneau élevée",
    "сбой датчика",
    "電圧低下",
    "safe mode entered 🛰",
    "",
)
WINDOW_START = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
WINDOW_DAYS = 14


def telemetry(spark: SparkSession, rows: int) -> DataFrame:
    """``rows`` readings with the columns of :func:`sluice.lake.telemetry.schema`, in that order."""
    from pyspark.sql import functions as F

    def draw(salt: str, modulus: int) -> Column:
        """A reproducible pseudo-random integer in [0, modulus) for each row."""
        return F.pmod(F.xxhash64(F.col("id"), F.lit(salt)), F.lit(modulus))

    def pick(values: list[Any], index: Column) -> Column:
        return F.element_at(F.array(*(F.lit(value) for value in values)), (index + 1).cast("int"))

    payloads = [
        (mission, mission * 1000 + number) for mission, count in MISSIONS.items() for number in range(1, count + 1)
    ]
    payload = draw("payload", len(payloads))
    window_micros = WINDOW_DAYS * 86_400_000_000
    start_micros = int(WINDOW_START.timestamp()) * 1_000_000
    status_draw, voltage_draw, temperature_draw = draw("status", 1000), draw("v-quality", 1000), draw("t-quality", 1000)
    status = F.when(status_draw < 2, "FAULT").when(status_draw < 32, "WARN").otherwise("OK")

    def glitchy(quality: Column, value: Column) -> Column:
        """``value``, NULL for 1% of rows and NaN for 0.2%."""
        return F.when(quality < 10, F.lit(None)).when(quality < 12, F.lit(float("nan"))).otherwise(value)

    frame = spark.range(rows).select(
        pick([mission for mission, _ in payloads], payload).cast("int").alias("mission_id"),
        pick([payload_id for _, payload_id in payloads], payload).cast("bigint").alias("payload_id"),
        pick(list(SENSORS), draw("sensor", len(SENSORS))).alias("sensor"),
        F.timestamp_micros(F.lit(start_micros) + draw("ts", window_micros)).alias("ts"),
        glitchy(voltage_draw, (draw("voltage", 4001) + 26_000) / 1000.0).cast("double").alias("voltage"),
        glitchy(temperature_draw, (draw("temperature", 100_001) - 40_000) / 1000.0).cast("double").alias("temperature"),
        status.alias("status"),
        F.when(status != "OK", pick(list(MESSAGES), draw("message", len(MESSAGES))))
        .when(draw("silent", 10) == 0, F.lit(None))
        .otherwise(F.lit(""))
        .alias("message"),
    )
    return frame.select(
        "mission_id",
        "payload_id",
        "sensor",
        "ts",
        utc_day(F.col("ts")).alias("day"),
        "voltage",
        "temperature",
        "status",
        "message",
    )
