"""Lake tables: DuckDB evaluates the pushed predicates over the Parquet rows that survive pruning.

An Iceberg data file has no query engine of its own. The lake reader hands the rows of the
row groups it keeps to an in-process DuckDB as Arrow and runs the pushed predicates there,
so the facts of :mod:`sluice.dialects.duckdb` (checked against Spark by the contract,
differential and fuzz suites) decide what is exact. Lake text has no collation: Parquet
strings are UTF-8 bytes, compared as bytes like Spark.
"""

from __future__ import annotations

from sluice.dialects.duckdb import DuckdbDialect


class LakeDialect(DuckdbDialect):
    name = "Iceberg lake (DuckDB over the kept Parquet rows)"
