"""Sluice inside Spark: the session, the catalog layer's jar and planner bridge, the reader.

``install(spark)`` readies a session for Sluice catalogs, ``configure(builder)`` adds what a
session needs to a ``SparkSession.builder``; both are imported on first use,
because Spark's Python workers import this package for the reader alone.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "install":
        from sluice.spark.bridge import install

        return install
    if name == "configure":
        from sluice.spark.session import configure

        return configure
    raise AttributeError(f"module 'sluice.spark' has no attribute {name!r}")
