"""The Spark session Sluice runs on: the caller's, or a local one built with what we need."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from sluice.spark.bridge import install
from sluice.spark.jvm import ensure_jar

#: settings Sluice needs in every session it uses
REQUIRED_CONF = {
    # Spark's own Parquet reader is not NaN-safe with filter pushdown (DESIGN.md §2).
    "spark.sql.parquet.filterPushdown": "false",
    # Nor is its in-memory cache: batch min/max leave NaN out, so `f = NaN` over a cached
    # DataFrame prunes every batch and returns no rows (seen in Spark 4.3; see tests).
    "spark.sql.inMemoryColumnarStorage.partitionPruning": "false",
}


def build_session(master: str | None = None, app_name: str = "sluice", conf: dict[str, str] | None = None) -> SparkSession:
    """A local session (``local[*]`` unless ``SLUICE_SPARK_MASTER`` or ``master`` says otherwise)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local mode stays on loopback
    builder = (
        SparkSession.builder.master(master or os.environ.get("SLUICE_SPARK_MASTER", "local[*]"))
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", os.environ.get("SLUICE_SHUFFLE_PARTITIONS", "8"))
        .config("spark.driver.memory", os.environ.get("SLUICE_DRIVER_MEMORY", "4g"))
        .config("spark.python.worker.reuse", "true")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraClassPath", str(ensure_jar()))  # the catalog layer (sluice/spark/jvm.py)
    )
    for key, value in {**REQUIRED_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def prepare(session: SparkSession) -> SparkSession:
    """Apply Sluice's required settings to a caller's session and install the catalog planner."""
    install(session)
    for key, value in REQUIRED_CONF.items():
        session.conf.set(key, value)
    return session
