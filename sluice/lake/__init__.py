"""Lake tables: Apache Iceberg through PyIceberg, written by a Spark pipeline, read with pruning.

``catalog`` opens the catalog a URL names; ``telemetry`` is the demo's table layout;
``layout`` parses a new table's partitioning and sort order; ``ingest`` is the Spark
pipeline that creates, appends to or overwrites a table (its input from ``generate``,
files or a DataFrame, checked and evolved by ``conform``, bad files explained by
``bad_input``; partitions computed by ``partitioning``; files committed by ``commit``);
``maintenance`` compacts small files and expires snapshots; ``expressions``, ``stats`` and
``pyramid`` plan a read: Spark predicates as Iceberg expressions, Parquet row-group
statistics, and the pruning at every level with its counts; ``snapshots`` picks the
snapshot a read sees (time travel) and its schema, and ``fields`` finds each column in a
data file by field id (schema evolution); ``vectorised`` chooses the reader of a scan
(Spark's vectorised Parquet reader for scans that keep most rows, else the Python reader).
"""
