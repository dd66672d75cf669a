"""Lake tables: Apache Iceberg through PyIceberg, written by a Spark pipeline, read with pruning.

``catalog`` opens the catalog a URL names; ``telemetry`` is the demo's table layout;
``ingest`` is the Spark pipeline that appends to a table (its input from ``generate`` or
files, checked by ``conform``; partitions computed by ``partitioning``; files committed
by ``commit``); ``expressions``, ``stats`` and
``pyramid`` plan a read: Spark predicates as Iceberg expressions, Parquet row-group
statistics, and the pruning at every level with its counts.
"""
