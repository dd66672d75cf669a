"""Turn a plan into a Spark DataFrame: one temp view per scan, then Spark SQL on top.

Views are dropped as soon as Spark has analysed the query (the analysed plan holds the
scans, not the view names), so nothing leaks between queries. Result column names are
taken from the reference query (pushdown off), so no rewrite can rename a column.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from typing import Callable, Iterator

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from sluice.errors import QueryError
from sluice.scan import ScanSpec

_counter = itertools.count()


def scan_frame(spark: SparkSession, spec: ScanSpec, password: str | None) -> DataFrame:
    reader = spark.read.format("sluice").schema(spec.spark_ddl()).option("scan", spec.to_json())
    if password:
        reader = reader.option("password", password)
    return reader.load()


@contextmanager
def views(spark: SparkSession, frames: dict[str, DataFrame]) -> Iterator[None]:
    for name, frame in frames.items():
        frame.createOrReplaceTempView(name)
    try:
        yield
    finally:
        for name in frames:
            spark.catalog.dropTempView(name)


def run(spark: SparkSession, sql: str, frames: dict[str, DataFrame], names: list[str] | None = None,
        shown: Callable[[str], str] | None = None) -> DataFrame:
    """Spark SQL ``sql`` over ``frames`` registered as views; columns renamed to ``names``.

    Spark's analysis errors become :class:`QueryError`, with the views' and scans' internal
    names replaced by the user's (``shown``: see :mod:`sluice.display`).
    """
    with views(spark, frames):
        try:
            frame = spark.sql(sql)
        except AnalysisException as error:
            message = str(error).split("\n== SQL", 1)[0]
            raise QueryError(f"Spark rejected the query: {shown(message) if shown else message}") from None
    if names is None or frame.columns == names:  # reading the names (~1 ms) is cheaper than renaming (~5 ms)
        return frame
    return frame.toDF(*names)


def next_prefix() -> str:
    return f"sluice_q{next(_counter)}"
